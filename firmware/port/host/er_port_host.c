/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Linux port: CLOCK_MONOTONIC as cycle counter (1 GHz), the trigger published on the
 * virtual trigger wire (TRIGGER_WIRE.md) with the family of the op in the window, a 4 MiB
 * static arena, and the batch run on a thread whose painted stack gives the high-water mark.
 */
#define _GNU_SOURCE
#include "er_port_host.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <mbedtls/version.h>

/*
 * Painting and scanning a thread's stack below its stack pointer is what memcheck reports as
 * invalid access; these requests (no-ops outside valgrind) tell it the accesses are meant.
 */
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#endif
#endif
#ifndef VALGRIND_MAKE_MEM_UNDEFINED
#define VALGRIND_MAKE_MEM_UNDEFINED(addr, len) ((void)(addr), (void)(len))
#define VALGRIND_MAKE_MEM_DEFINED(addr, len) ((void)(addr), (void)(len))
#endif

#include "er_op.h"
#include "er_port.h"
#include "er_ops_conditions.h"
#include "er_stack.h"

#define ER_HOST_ARENA_BYTES (4u * 1024u * 1024u)
#define ER_HOST_STACK_BYTES (1024u * 1024u)
#define ER_HOST_STACK_PAINT 0xa5u
#define ER_HOST_STACK_MARGIN 256u /* below paint_below_here's frame: its own locals */

static _Alignas(64) uint8_t arena_buf[ER_HOST_ARENA_BYTES];
static _Alignas(64) uint8_t stack_buf[ER_HOST_STACK_BYTES];

/* ER_C_FLAGS: the compiler flags of the build type (port/host/CMakeLists.txt). */
static const struct er_condition_s platform_conditions[] = {
	{"optimization", ER_C_FLAGS, 0},
	{"idle", "nanosleep", 0},
	{NULL, NULL, 0},
};

static struct er_port_info_s info = {
	.board = "host",
	.crypto_conditions = er_crypto_conditions,
	.platform_conditions = platform_conditions,
	.cycle_hz = 1000000000u,
	.crypto_backend = "mbedtls-" MBEDTLS_VERSION_STRING,
};

static int out_fd = 1;
static int link_lost;
static int wire_fd = -1;
static struct sockaddr_un wire_addr;
static uint32_t wire_seq;
static uint32_t wire_drops;
static const struct er_op_s *const *wire_op; /* the session's prepared-op slot, or NULL */
static int wire_in_batch;                     /* inside er_port_run_measured() */

/* The CPU's nominal clock in Hz from cpufreq or /proc/cpuinfo; 0 when neither says. */
static uint32_t read_cpu_hz(void)
{
	unsigned long khz = 0;
	double mhz = 0.0;
	char line[256];
	FILE *f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "r");

	if (f != NULL) {
		if (fscanf(f, "%lu", &khz) != 1) {
			khz = 0;
		}
		fclose(f);
		if (khz > 0 && khz <= UINT32_MAX / 1000u) {
			return (uint32_t)(khz * 1000u);
		}
	}
	f = fopen("/proc/cpuinfo", "r");
	if (f == NULL) {
		return 0;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "cpu MHz : %lf", &mhz) == 1) {
			break;
		}
	}
	fclose(f);
	return mhz > 0.0 && mhz * 1e6 <= (double)UINT32_MAX ? (uint32_t)(mhz * 1e6) : 0;
}

int er_port_host_init(const char *board, int fd, const char *wire_path)
{
	info.board = board;
	info.cpu_hz = read_cpu_hz();
	out_fd = fd;
	if (wire_path == NULL) {
		return 0;
	}
	if (strlen(wire_path) >= sizeof(wire_addr.sun_path)) {
		return -ENAMETOOLONG;
	}
	wire_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (wire_fd < 0) {
		return -errno;
	}
	wire_addr.sun_family = AF_UNIX;
	strcpy(wire_addr.sun_path, wire_path);
	return 0;
}

void er_port_host_watch_op(const struct er_op_s *const *prepared)
{
	wire_op = prepared;
}

int er_port_host_link_lost(void)
{
	return link_lost;
}

const struct er_port_info_s *er_port_info(void)
{
	return &info;
}

/* The host's CPU runs at whatever its governor chose: no levels in info, so not settable. */
int er_port_set_clock(uint32_t hz)
{
	(void)hz;
	return -ENOTSUP;
}

uint64_t er_port_time_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t er_port_cycles(void)
{
	return er_port_time_ns();
}

/* Wire id of the family of the op a batch is running (er_family_id); 0 outside a batch. */
static uint16_t wire_family(void)
{
	const struct er_op_s *op = wire_in_batch && wire_op != NULL ? *wire_op : NULL;

	return op != NULL ? er_family_id(op->family) : 0;
}

/* One clock, CLOCK_MONOTONIC in ns, behind both counters: one reading per stamp. */
void er_port_stamp(struct er_port_stamp_s *stamp)
{
	stamp->time = er_port_time_ns();
	stamp->cycles = stamp->time;
}

void er_port_span(const struct er_port_stamp_s *from, const struct er_port_stamp_s *to,
		  uint64_t *cycles, uint64_t *elapsed_ns)
{
	*cycles = to->cycles - from->cycles;
	*elapsed_ns = to->time - from->time;
}

/* One 16-byte little-endian edge record; a socket that cannot take it costs a drop. */
static void wire_send(uint64_t t_ns, int high, int accel, uint16_t family)
{
	uint8_t rec[16] = {0};

	for (int i = 0; i < 8; i++) {
		rec[i] = (uint8_t)(t_ns >> (8 * i));
	}
	rec[8] = (uint8_t)(high != 0);
	rec[9] = (uint8_t)(accel != 0);
	rec[10] = (uint8_t)family;
	rec[11] = (uint8_t)(family >> 8);
	for (int i = 0; i < 4; i++) {
		rec[12 + i] = (uint8_t)(wire_seq >> (8 * i));
	}
	wire_seq++;
	if (sendto(wire_fd, rec, sizeof(rec), MSG_DONTWAIT | MSG_NOSIGNAL,
		   (const struct sockaddr *)&wire_addr, sizeof(wire_addr)) != (ssize_t)sizeof(rec)) {
		wire_drops++;
	}
}

/* Sleeps until ER_HOST_RISE_SPIN_NS before @p t_ns, then spins to it (er_port_host.h). */
static void wait_for_edge(uint64_t t_ns)
{
	uint64_t wake = t_ns - ER_HOST_RISE_SPIN_NS;
	struct timespec at = {.tv_sec = (time_t)(wake / 1000000000u),
			      .tv_nsec = (long)(wake % 1000000000u)};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR) {
	}
	while (er_port_time_ns() < t_ns) {
	}
}

/*
 * The family is looked up before the edge's time is taken: outside the window. A rising
 * edge is stamped ER_HOST_RISE_LEAD_NS ahead and waited for (er_port_host.h).
 */
void er_port_trigger(int high, int accel)
{
	if (wire_fd >= 0) {
		uint16_t family = high ? wire_family() : 0;
		uint64_t t_ns = er_port_time_ns() + (high ? ER_HOST_RISE_LEAD_NS : 0u);

		wire_send(t_ns, high, accel, family);
		if (high) {
			wait_for_edge(t_ns);
		}
	}
}

uint32_t er_port_trigger_drops(void)
{
	return wire_drops;
}

/* A process cannot mask the host's interrupts or its scheduler: nothing to do. */
unsigned int er_port_quiet_begin(void)
{
	return 0;
}

void er_port_quiet_end(unsigned int key)
{
	(void)key;
}

void er_port_arena(uint8_t **base, size_t *size)
{
	*base = arena_buf;
	*size = sizeof(arena_buf);
}

void er_port_idle_ms(uint32_t ms)
{
	struct timespec left = {.tv_sec = ms / 1000u, .tv_nsec = (long)(ms % 1000u) * 1000000L};

	while (nanosleep(&left, &left) != 0 && errno == EINTR) {
	}
}

struct measured_s {
	int (*fn)(void *);
	void *arg;
	int ret;
	size_t used;
};

/*
 * Paints the stack below this function's frame (less a margin for its own locals). The
 * thread's start-up code may have run deeper than the frame that calls fn (a sanitizer's
 * does), so this is done again on the thread, by a plain loop that needs no deeper stack.
 * Not instrumented by ASan: writing below the stack pointer is the point.
 */
__attribute__((noinline, no_sanitize_address)) static void paint_below_here(void)
{
	uintptr_t limit = (uintptr_t)__builtin_frame_address(0) - ER_HOST_STACK_MARGIN;
	volatile uint8_t *paint = stack_buf;

	VALGRIND_MAKE_MEM_UNDEFINED(stack_buf, limit - (uintptr_t)stack_buf);
	while ((uintptr_t)paint < limit) {
		*paint++ = ER_HOST_STACK_PAINT;
	}
}

/*
 * What fn used is the distance from this frame down to the lowest byte written, found here
 * (a call would move the stack pointer over the paint) before the thread's exit handlers
 * run deeper still. The thread's TLS and descriptor (glibc puts them at the top of a given
 * stack) lie above and are left out; what this frame itself takes below its frame address
 * is measured once and subtracted by the stack meter (core/er_stack.h).
 */
__attribute__((no_sanitize_address)) static void *measured_thread(void *arg)
{
	struct measured_s *m = arg;
	uintptr_t entry = (uintptr_t)__builtin_frame_address(0);
	size_t untouched = 0;

	paint_below_here();
	m->ret = m->fn(m->arg);
	VALGRIND_MAKE_MEM_DEFINED(stack_buf, entry - (uintptr_t)stack_buf);
	while (stack_buf[untouched] == ER_HOST_STACK_PAINT && untouched < sizeof(stack_buf)) {
		untouched++;
	}
	m->used = entry - ((uintptr_t)stack_buf + untouched);
	return NULL;
}

/* Runs @p fn on the painted stack; *depth is what measured_thread saw below its frame. */
static int run_painted(int (*fn)(void *), void *arg, size_t *depth)
{
	struct measured_s m = {.fn = fn, .arg = arg};
	pthread_attr_t attr;
	pthread_t thread;

	/* The stack grows down from the end of stack_buf; paint all of it. */
	VALGRIND_MAKE_MEM_UNDEFINED(stack_buf, sizeof(stack_buf));
	memset(stack_buf, ER_HOST_STACK_PAINT, sizeof(stack_buf));
	if (pthread_attr_init(&attr) != 0 ||
	    pthread_attr_setstack(&attr, stack_buf, sizeof(stack_buf)) != 0 ||
	    pthread_create(&thread, &attr, measured_thread, &m) != 0) {
		/* No thread: run on this stack, depth unknown. */
		*depth = 0;
		return fn(arg);
	}
	pthread_join(thread, NULL);
	pthread_attr_destroy(&attr);
	*depth = m.used;
	return m.ret;
}

/* What measured_thread itself takes below its frame to call a function is not fn's. */
static struct er_stack_meter_s meter = ER_STACK_METER_INIT(run_painted);

/* Only batches run here (a mark window does not): their edges carry the op's family. */
int er_port_run_measured(int (*fn)(void *), void *arg, size_t *stack_used)
{
	wire_in_batch = 1;
	int ret = er_stack_run_measured(&meter, fn, arg, stack_used);

	wire_in_batch = 0;
	return ret;
}

void er_port_write(const char *buf, size_t len)
{
	while (len > 0 && !link_lost) {
		ssize_t n = write(out_fd, buf, len);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0 && errno == EAGAIN) {
			struct timespec wait = {.tv_nsec = 1000000L};

			nanosleep(&wait, NULL);
			continue;
		}
		if (n <= 0) {
			link_lost = 1;
			return;
		}
		buf += n;
		len -= (size_t)n;
	}
}
