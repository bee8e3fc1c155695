/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Linux port: trigger-wire records (TRIGGER_WIRE.md), their op family and drop counting,
 * the painted-stack high-water mark, reply writing, idle timing and the facts hello reports.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <mbedtls/version.h>

#include "er_port.h"
#include "er_port_host.h"
#include "er_test.h"

static char wire_dir[] = "/tmp/er-wire-XXXXXX";
static char wire_path[108];
static int wire_rx = -1;
static int out_pipe[2];

static uint64_t le(const uint8_t *b, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--) {
		v = (v << 8) | b[i];
	}
	return v;
}

static void setup(void)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};

	if (mkdtemp(wire_dir) == NULL || pipe(out_pipe) != 0) {
		perror("setup");
		exit(2);
	}
	snprintf(wire_path, sizeof(wire_path), "%s/wire", wire_dir);
	strcpy(addr.sun_path, wire_path);
	wire_rx = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (wire_rx < 0 || bind(wire_rx, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		perror("bind");
		exit(2);
	}
	ER_CHECK_INT(er_port_host_init("test-board", out_pipe[1], wire_path), 0);
}

static void test_info(void)
{
	const struct er_port_info_s *info = er_port_info();

	ER_CHECK_STR(info->board, "test-board");
	ER_CHECK_INT(info->cycle_hz, 1000000000);
	/* The mbedTLS the port was built against (2.28 from Debian, 3.6 in mbedtls36.sh). */
	ER_CHECK_STR(info->crypto_backend, "mbedtls-" MBEDTLS_VERSION_STRING);
	uint8_t *base;
	size_t size;

	er_port_arena(&base, &size);
	ER_CHECK_INT(size, 4u * 1024u * 1024u);
	ER_CHECK_INT((uintptr_t)base % 64u, 0);
}

static void test_wire_records(void)
{
	uint8_t rec[32];
	uint64_t t0 = er_port_time_ns();

	er_port_trigger(1, 1);
	er_port_trigger(0, 0);
	uint64_t t1 = er_port_time_ns();

	for (uint32_t seq = 0; seq < 2; seq++) {
		ssize_t n = recv(wire_rx, rec, sizeof(rec), MSG_DONTWAIT);

		ER_CHECK_INT(n, 16);
		ER_CHECK(le(rec, 8) >= t0 && le(rec, 8) <= t1);
		ER_CHECK_INT(rec[8], seq == 0 ? 1 : 0);
		ER_CHECK_INT(rec[9], seq == 0 ? 1 : 0);
		ER_CHECK_INT(le(rec + 10, 2), 0);
		ER_CHECK_INT(le(rec + 12, 4), seq);
	}
	ER_CHECK_INT(er_port_trigger_drops(), 0);
}

/*
 * A rising edge's lead is slept, and only its end spun (er_port_host.h): the thread's CPU
 * time across it stays well under the lead. CPU time, not the wall clock's: a loaded host
 * lengthens the wait, not the CPU it takes.
 */
static void test_lead_is_slept(void)
{
	struct timespec c0;
	struct timespec c1;
	uint64_t t0 = er_port_time_ns();

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	er_port_trigger(1, 0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	uint64_t waited = er_port_time_ns() - t0;
	uint64_t cpu = (uint64_t)(c1.tv_sec - c0.tv_sec) * 1000000000u + (uint64_t)c1.tv_nsec -
		       (uint64_t)c0.tv_nsec;

	er_port_trigger(0, 0);
	ER_CHECK(waited >= ER_HOST_RISE_LEAD_NS);
	ER_CHECK(cpu < ER_HOST_RISE_LEAD_NS / 2);
	printf("  a rising edge's lead: %.2f ms waited, %.2f ms of CPU\n", (double)waited / 1e6,
	       (double)cpu / 1e6);
	while (recv(wire_rx, (uint8_t[16]){0}, 16, MSG_DONTWAIT) == 16) {
	}
}

static int one_window(void *arg)
{
	(void)arg;
	er_port_trigger(1, 0);
	er_port_trigger(0, 0);
	return 0;
}

/* A batch's rising edge names the prepared op's family (hash: 2); a mark window's, 0. */
static void test_wire_family(void)
{
	static const struct er_op_s hash_op = {.name = "test-hash", .family = "hash"};
	static const uint16_t want[] = {2, 0, 0, 0};
	const struct er_op_s *prepared = &hash_op;
	uint8_t rec[16];
	size_t used;

	er_port_host_watch_op(&prepared);
	ER_CHECK_INT(er_port_run_measured(one_window, NULL, &used), 0);
	er_port_trigger(1, 0);
	er_port_trigger(0, 0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		ER_CHECK_INT(recv(wire_rx, rec, sizeof(rec), MSG_DONTWAIT), 16);
		ER_CHECK_INT(le(rec + 10, 2), want[i]);
	}
	er_port_host_watch_op(NULL);
}

/* A reader that does not keep up: edges are dropped and counted, never waited for. */
static void test_wire_never_blocks(void)
{
	uint8_t rec[16];
	const uint32_t edges = 5000;
	uint32_t received = 0;
	uint32_t last_seq = 1;
	uint64_t t0 = er_port_time_ns();

	for (uint32_t i = 0; i < edges; i++) {
		er_port_trigger((int)(i & 1), 0);
	}
	uint64_t spent = er_port_time_ns() - t0;

	while (recv(wire_rx, rec, sizeof(rec), MSG_DONTWAIT) == 16) {
		uint32_t seq = (uint32_t)le(rec + 12, 4);

		ER_CHECK(seq > last_seq); /* in order; gaps are the drops */
		last_seq = seq;
		received++;
	}
	ER_CHECK(er_port_trigger_drops() > 0);
	ER_CHECK_INT(received + er_port_trigger_drops(), edges);
	/* The reader is this thread, and it reads only after the loop: an edge that waited
	 * for the reader would never return, so the loop's end is the proof (ctest's timeout
	 * the backstop). How long the loop took is not: each rising edge waits out its lead
	 * (er_port_host.h), and a loaded machine stretches those waits without limit (at load
	 * 10 a bound of 1 s + the leads failed). */
	printf("  %u edges in %.1f ms: %u received, %u dropped\n", edges, (double)spent / 1e6,
	       received, er_port_trigger_drops());

	/* No listener at all: still no error, one more drop. */
	uint32_t before = er_port_trigger_drops();

	unlink(wire_path);
	er_port_trigger(1, 0);
	ER_CHECK_INT(er_port_trigger_drops(), before + 1);
}

static int small_fn(void *arg)
{
	return *(int *)arg;
}

static int deep_fn(void *arg)
{
	volatile uint8_t big[64 * 1024];

	for (size_t i = 0; i < sizeof(big); i++) {
		big[i] = (uint8_t)(i | 1u);
	}
	return big[(size_t)arg] + 1;
}

static void test_stack_high_water(void)
{
	size_t shallow = 0;
	size_t deep = 0;
	int value = 42;

	ER_CHECK_INT(er_port_run_measured(small_fn, &value, &shallow), 42);
	ER_CHECK(shallow < 1024);
	ER_CHECK_INT(er_port_run_measured(deep_fn, (void *)512, &deep), 2);
	/* Exact to the port's own frames: within 64 bytes below, a sanitizer's redzones above. */
	ER_CHECK(deep >= 64 * 1024 - 64);
	ER_CHECK(deep < 64 * 1024 + 1024);
	printf("  stack: small function %zu B, 64 KiB array %zu B\n", shallow, deep);
}

static void test_write_and_idle(void)
{
	char buf[64] = {0};

	er_port_write("{\"ok\":true}\n", 12);
	ER_CHECK_INT(read(out_pipe[0], buf, sizeof(buf) - 1), 12);
	ER_CHECK_STR(buf, "{\"ok\":true}\n");
	ER_CHECK_INT(er_port_host_link_lost(), 0);

	uint64_t t0 = er_port_time_ns();

	er_port_idle_ms(20);
	uint64_t spent = er_port_time_ns() - t0;

	ER_CHECK(spent >= 20000000u);

	/* The reader goes away: the port notices instead of dying of SIGPIPE. */
	close(out_pipe[0]);
	er_port_write("x\n", 2);
	ER_CHECK_INT(er_port_host_link_lost(), 1);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	setup();
	ER_RUN(test_info);
	ER_RUN(test_wire_records);
	ER_RUN(test_lead_is_slept);
	ER_RUN(test_wire_family);
	ER_RUN(test_wire_never_blocks);
	ER_RUN(test_stack_high_water);
	ER_RUN(test_write_and_idle);
	rmdir(wire_dir);
	return er_test_summary();
}
