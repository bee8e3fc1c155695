/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Every op of the generated catalogue: its known-answer self-test, then, through the
 * protocol as the rig drives it, prep at its smallest parameters, three batches of 1, an
 * empty batch (n=0) and a batch of 3 on the host port. Ops join this test as they are
 * added to ops/ops.cmake.
 *
 * Under callgrind (test_window_work.sh) it also says what each window holds, in
 * instructions: collection is on only while the trigger is high (er_port_trigger is
 * wrapped at link time) and each batch of 1 and the empty batch is dumped under a label,
 * the batch of 3 is not labelled (nor instrumented):
 * "<op>/<backend> run=<k>" and "<op>/<backend> n=0". Outside valgrind the client requests
 * do nothing.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <valgrind/callgrind.h>

#include "er_port.h"
#include "er_port_host.h"
#include "er_proto.h"
#include "er_str.h"
#include "er_test.h"

#define SINGLE_RUNS 3

void __real_er_port_trigger(int high, int accel);
void __wrap_er_port_trigger(int high, int accel);

/* Whether the next windows are labelled: callgrind instruments only those (each start and
 * stop of instrumentation throws away valgrind's translations, and the unlabelled batch of 3
 * would be counted for nothing). */
static bool labelled;

void __wrap_er_port_trigger(int high, int accel)
{
	if (high) {
		__real_er_port_trigger(high, accel);
		if (labelled) {
			CALLGRIND_START_INSTRUMENTATION;
		}
	} else {
		if (labelled) {
			CALLGRIND_STOP_INSTRUMENTATION;
		}
		__real_er_port_trigger(high, accel);
	}
}

static struct er_proto_s proto;
static FILE *replies;

/* Sends one request and returns its reply line (without the newline). */
static const char *request(const char *line)
{
	static char reply[4096];
	char buf[ER_LINE_MAX + 1];
	long start = ftell(replies);

	snprintf(buf, sizeof(buf), "%s", line);
	er_proto_request(&proto, buf);
	fseek(replies, start, SEEK_SET);
	if (fgets(reply, sizeof(reply), replies) == NULL) {
		return "";
	}
	reply[strcspn(reply, "\n")] = '\0';
	return reply;
}

/* "prep <op>" with the smallest parameters the op accepts. */
static void prep_line(const struct er_op_s *op, struct er_str_s *line)
{
	const struct er_param_spec_s *spec = &op->spec;

	er_str_cat(line, "prep ");
	er_str_cat(line, op->name);
	er_str_cat(line, " backend=");
	er_str_cat(line, er_backend_name(op->backend));
	if (spec->key_bits != NULL) {
		er_str_cat(line, " key_bits=");
		er_str_u64(line, spec->key_bits[0]);
	}
	if (spec->curves != NULL) {
		er_str_cat(line, " curve=");
		er_str_cat(line, er_curve_name(spec->curves[0]));
	}
	if (spec->payload_max != 0) {
		uint32_t m = spec->payload_multiple > 1 ? spec->payload_multiple : 1;

		er_str_cat(line, " payload_bytes=");
		er_str_u64(line, (spec->payload_min + m - 1) / m * m);
	}
}

static void exercise(const struct er_op_s *op)
{
	char text[ER_LINE_MAX + 1];
	struct er_str_s line;
	const char *reply;

	ER_CHECK(op->name != NULL && op->family != NULL && op->selftest != NULL &&
		 op->prep != NULL && op->run != NULL);
	/* Names are lowercase with hyphens, and unique per backend. */
	ER_CHECK(strspn(op->name, "abcdefghijklmnopqrstuvwxyz0123456789-") == strlen(op->name));
	ER_CHECK(er_registry_find(&er_catalogue, op->name, (int)op->backend) == op);
	/* Its family is one of er_families (core/er_family.c), so the wire can name it. */
	ER_CHECK(er_family_id(op->family) != 0);

	int selftest = op->selftest();

	ER_CHECK_INT(selftest, 0);
	printf("%-26s %-8s self-test %s\n", op->name, er_backend_name(op->backend),
	       selftest == 0 ? "pass" : "FAILED");

	er_str_init(&line, text, sizeof(text));
	prep_line(op, &line);
	reply = request(text);
	ER_CHECK_HAS(reply, "{\"ok\":true,");
	printf("  %s\n  %s\n", text, reply);

	char label[96];

	/* The first batches after prep: the first recorded run must do what the later do.
	 * The previous op's batch of 3 is not one of the labelled windows. */
	labelled = true;
	CALLGRIND_ZERO_STATS;
	for (int k = 1; k <= SINGLE_RUNS; k++) {
		ER_CHECK_HAS(request("run n=1"), "\"n_done\":1,");
		snprintf(label, sizeof(label), "%s/%s run=%d", op->name,
			 er_backend_name(op->backend), k);
		CALLGRIND_DUMP_STATS_AT(label);
	}
	ER_CHECK_HAS(request("run n=0"), "{\"ok\":true,");
	snprintf(label, sizeof(label), "%s/%s n=0", op->name, er_backend_name(op->backend));
	CALLGRIND_DUMP_STATS_AT(label);
	labelled = false;
	reply = request("run n=3");
	ER_CHECK_HAS(reply, "{\"ok\":true,");
	ER_CHECK_HAS(reply, "\"n_done\":3,");
	printf("  run n=3\n  %s\n", reply);
}

static int feed_hello(void *arg)
{
	(void)arg;
	er_proto_feed(&proto, (const uint8_t *)"hello\n", 6);
	return 0;
}

static int request_hello(void *arg)
{
	char line[] = "hello";

	(void)arg;
	er_proto_request(&proto, line);
	return 0;
}

/* Bytes from the link reach a request without a second request frame below it (the line
 * reader's loop once kept its own 352-byte error frame, on an M4, under every request). */
static void check_feed_stack(void)
{
	size_t fed = 0;
	size_t direct = 0;

	(void)er_port_run_measured(feed_hello, NULL, &fed);
	(void)er_port_run_measured(request_hello, NULL, &direct);
	printf("stack of hello: %zu bytes fed, %zu bytes as a request\n", fed, direct);
	ER_CHECK(direct > 0 && fed <= direct + 64);
}

int main(void)
{
	const struct er_op_s *op;

	replies = tmpfile();
	if (replies == NULL || er_port_host_init("host", fileno(replies), NULL) != 0) {
		perror("test_catalogue");
		return 2;
	}
	er_proto_init(&proto, &er_catalogue);
	check_feed_stack();
	for (size_t i = 0; (op = er_registry_at(&er_catalogue, i)) != NULL; i++) {
		exercise(op);
	}
	er_proto_release(&proto);
	printf("%zu ops in the catalogue\n", er_registry_count(&er_catalogue));
	fclose(replies);
	return er_test_summary();
}
