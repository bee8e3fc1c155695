/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: arbitrary bytes on the host link of a fresh session (line reader,
 * parser, registry checks, runner on the fake port's test ops). Besides the sanitizers'
 * checks, it asserts the protocol's promise: exactly one reply line per request line, each a
 * JSON object that starts with "ok".
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "er_port_fake.h"
#include "er_proto.h"

static struct er_proto_s proto;

static void check_replies(const uint8_t *data, size_t size)
{
	size_t requests = 0;
	size_t replies = 0;
	const char *line = er_fake.out;

	if (er_fake.out_len >= ER_FAKE_OUT_BYTES) {
		return; /* the capture buffer filled up: nothing to compare */
	}
	for (size_t i = 0; i < size; i++) {
		requests += data[i] == '\n';
	}
	for (const char *nl; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
		if (strncmp(line, "{\"ok\":", 6) != 0 || nl[-1] != '}') {
			abort();
		}
		for (const char *c = line; c < nl; c++) {
			if (*c < 0x20 || *c > 0x7e) {
				abort(); /* replies are printable ASCII */
			}
		}
		replies++;
	}
	if (replies != requests || *line != '\0') {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	er_fake_reset();
	er_fake.tick = 1u << 24; /* mark cycles=10^10 in a few hundred readings */
	er_fake.run_limit = 1000; /* run n=10^9 stops early with -ECANCELED */
	er_proto_init(&proto, &er_fake_registry);
	er_proto_feed(&proto, data, size);
	check_replies(data, size);
	er_proto_release(&proto);
	return 0;
}
