/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `run n=N windows=R settle_ms=S` (issue 24 part 3): one warm-up run, then R times {S ms of
 * idle, trigger high, N runs, trigger low}, each window timed on its own; without windows=
 * the reply is protocol 1's one-window reply, byte for byte.
 */
#include <string.h>

#include "er_port_fake.h"
#include "er_proto.h"
#include "er_test.h"

static struct er_proto_s proto;

static const char *say(const char *line)
{
	er_fake.out_len = 0;
	er_fake.out[0] = '\0';
	er_proto_feed(&proto, (const uint8_t *)line, strlen(line));
	return er_fake.out;
}

static void fresh_session(const char *prep)
{
	er_fake_reset();
	er_proto_init(&proto, &er_fake_registry);
	ER_CHECK_HAS(say(prep), "\"ok\":true");
	er_fake.runs = 0;
	er_fake.n_edges = 0;
}

static void test_windows_each_timed_after_their_settle(void)
{
	fresh_session("prep sized key_bits=128 payload_bytes=64\n");
	ER_CHECK_STR(say("run n=3 windows=4 settle_ms=5\n"),
		     "{\"ok\":true,\"op\":\"sized\",\"n\":3,\"windows\":4,\"windows_done\":4,"
		     "\"n_done\":3,\"cycles\":[1000,1000,1000,1000],"
		     "\"elapsed_ns\":[1000,1000,1000,1000],\"status\":0,\"stack_bytes\":4242}\n");
	ER_CHECK_INT(er_fake.runs, 13); /* one warm-up run, not one per window */
	ER_CHECK_INT(er_fake.loud_runs, 0);
	ER_CHECK_INT(er_fake.quiet, 0);
	ER_CHECK_INT(er_fake.n_edges, 8);
	for (size_t k = 0; k < 4; k++) {
		const struct er_fake_edge_s *rise = &er_fake.edges[2 * k];
		const struct er_fake_edge_s *fall = &er_fake.edges[2 * k + 1];

		ER_CHECK_INT(rise->level, 1);
		ER_CHECK_INT(fall->level, 0);
		ER_CHECK_INT(rise->runs, 1 + 3 * k); /* the warm-up and the windows before */
		ER_CHECK_INT(fall->runs, 1 + 3 * (k + 1));
		/* each window's own baseline span: the settle idle right before its rise */
		ER_CHECK(rise->since_run >= 5u * 1000000u);
		ER_CHECK_INT(rise->quiet, 1);
		ER_CHECK_INT(fall->quiet, 1);
	}
}

static void test_one_window_keeps_protocol_1(void)
{
	fresh_session("prep sized key_bits=128 payload_bytes=64\n");
	/* no windows=: the reply of protocol 1, byte for byte */
	ER_CHECK_STR(say("run n=2 settle_ms=1\n"),
		     "{\"ok\":true,\"op\":\"sized\",\"n\":2,\"n_done\":2,\"cycles\":1000,"
		     "\"elapsed_ns\":1000,\"status\":0,\"stack_bytes\":4242}\n");
	ER_CHECK_INT(er_fake.n_edges, 2);
	/* windows=1 named: the many-window form, one window */
	ER_CHECK_STR(say("run n=2 windows=1\n"),
		     "{\"ok\":true,\"op\":\"sized\",\"n\":2,\"windows\":1,\"windows_done\":1,"
		     "\"n_done\":2,\"cycles\":[1000],\"elapsed_ns\":[1000],\"status\":0,"
		     "\"stack_bytes\":4242}\n");
	ER_CHECK_INT(er_fake.n_edges, 4);
}

static void test_window_count_checked(void)
{
	fresh_session("prep count\n");
	ER_CHECK_STR(say("run n=1 windows=0\n"),
		     "{\"ok\":false,\"error\":\"run: windows=0 out of range (allowed: 1..64)\"}\n");
	ER_CHECK_STR(say("run n=1 windows=65\n"),
		     "{\"ok\":false,\"error\":\"run: windows=65 out of range (allowed: 1..64)\"}\n");
	ER_CHECK_INT(er_fake.n_edges, 0);
	ER_CHECK_INT(er_fake.runs, 0);
	/* the most windows: every one opened and timed */
	ER_CHECK_HAS(say("run n=0 windows=32\n"), "\"windows_done\":32,");
	ER_CHECK_INT(er_fake.n_edges, 64);
}

static void test_failing_run_ends_the_batch_in_its_window(void)
{
	/* fails-at-3 fails on its third run: the warm-up, one in window 0, then in window 1 */
	fresh_session("prep fails-at-3\n");
	ER_CHECK_STR(say("run n=1 windows=5\n"),
		     "{\"ok\":false,\"op\":\"fails-at-3\",\"n\":1,\"windows\":5,\"windows_done\":1,"
		     "\"n_done\":0,\"cycles\":[1000,1000],\"elapsed_ns\":[1000,1000],"
		     "\"status\":-5,\"stack_bytes\":4242,\"error\":\"run: op failed: -5 (EIO)\"}\n");
	ER_CHECK_INT(er_fake.n_edges, 4); /* the failing window closed, none opened after it */
	ER_CHECK_INT(er_fake.quiet, 0);
}

int main(void)
{
	ER_RUN(test_windows_each_timed_after_their_settle);
	ER_RUN(test_one_window_keeps_protocol_1);
	ER_RUN(test_window_count_checked);
	ER_RUN(test_failing_run_ends_the_batch_in_its_window);
	return er_test_summary();
}
