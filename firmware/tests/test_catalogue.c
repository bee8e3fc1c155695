/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Every op of the generated catalogue: its known-answer self-test, then, through the
 * protocol as the rig drives it, prep at its smallest parameters and a batch of 3 on the
 * host port. Ops join this test as they are added to ops/ops.cmake.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "er_port_host.h"
#include "er_proto.h"
#include "er_str.h"
#include "er_test.h"

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

	int selftest = op->selftest();

	ER_CHECK_INT(selftest, 0);
	printf("%-26s %-8s self-test %s\n", op->name, er_backend_name(op->backend),
	       selftest == 0 ? "pass" : "FAILED");

	er_str_init(&line, text, sizeof(text));
	prep_line(op, &line);
	reply = request(text);
	ER_CHECK_HAS(reply, "{\"ok\":true,");
	printf("  %s\n  %s\n", text, reply);
	reply = request("run n=3");
	ER_CHECK_HAS(reply, "{\"ok\":true,");
	ER_CHECK_HAS(reply, "\"n_done\":3,");
	printf("  run n=3\n  %s\n", reply);
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
	for (size_t i = 0; (op = er_registry_at(&er_catalogue, i)) != NULL; i++) {
		exercise(op);
	}
	er_proto_release(&proto);
	printf("%zu ops in the catalogue\n", er_registry_count(&er_catalogue));
	fclose(replies);
	return er_test_summary();
}
