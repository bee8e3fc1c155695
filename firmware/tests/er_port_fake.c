/* SPDX-License-Identifier: Apache-2.0 */
#include "er_port_fake.h"

#include <errno.h>
#include <string.h>

#include "er_port.h"

struct er_fake_s er_fake;

static uint8_t arena_buf[ER_FAKE_ARENA_BYTES];

static const struct er_condition_s crypto_conditions[] = {
	{"mbedtls_ecp_nist_optim", "on", 0},
	{"mbedtls_mpi_window", NULL, 3},
	{NULL, NULL, 0},
};

static const uint32_t cpu_hz_levels[] = {16000000u, 64000000u, 0};

static struct er_port_info_s info = {
	.board = "fake",
	.cpu_hz = 64000000u,
	.cycle_hz = 64000000u,
	.cpu_hz_levels = cpu_hz_levels,
	.crypto_backend = "none",
	.crypto_conditions = crypto_conditions,
};

void er_fake_reset(void)
{
	memset(&er_fake, 0, sizeof(er_fake));
	er_fake.tick = 1000;
	er_fake.run_limit = UINT32_MAX;
	info.cpu_hz = info.cycle_hz = 64000000u;
	info.cpu_hz_levels = cpu_hz_levels;
}

int er_port_set_clock(uint32_t hz)
{
	if (er_fake.clock_status != 0) {
		return er_fake.clock_status;
	}
	info.cpu_hz = info.cycle_hz = hz;
	return 0;
}

void er_fake_fixed_clock(void)
{
	info.cpu_hz_levels = NULL;
}

const struct er_port_info_s *er_port_info(void)
{
	info.init_status = er_fake.init_status;
	return &info;
}

void er_port_trigger(int high, int accel)
{
	if (er_fake.n_edges < ER_FAKE_EDGES_MAX) {
		er_fake.edges[er_fake.n_edges++] =
			(struct er_fake_edge_s){.level = high, .accel = accel, .runs = er_fake.runs,
						.since_run = er_fake.now - er_fake.run_at,
						.quiet = er_fake.quiet > 0};
	}
}

unsigned int er_port_quiet_begin(void)
{
	return (unsigned int)er_fake.quiet++;
}

void er_port_quiet_end(unsigned int key)
{
	er_fake.quiet = (int)key;
}

uint64_t er_port_cycles(void)
{
	return er_fake.now += er_fake.tick;
}

uint64_t er_port_time_ns(void)
{
	return er_fake.now += er_fake.tick;
}

void er_port_stamp(struct er_port_stamp_s *stamp)
{
	stamp->time = er_fake.now += er_fake.tick;
	stamp->cycles = stamp->time;
}

void er_port_span(const struct er_port_stamp_s *from, const struct er_port_stamp_s *to,
		  uint64_t *cycles, uint64_t *elapsed_ns)
{
	*cycles = to->cycles - from->cycles;
	*elapsed_ns = to->time - from->time;
}

void er_port_arena(uint8_t **base, size_t *size)
{
	*base = arena_buf;
	*size = sizeof(arena_buf);
}

int er_port_run_measured(int (*fn)(void *), void *arg, size_t *stack_used)
{
	*stack_used = 4242; /* a marker the tests look for in the reply */
	return fn(arg);
}

void er_port_write(const char *buf, size_t len)
{
	size_t room = ER_FAKE_OUT_BYTES - er_fake.out_len;
	size_t n = len < room ? len : room;

	memcpy(er_fake.out + er_fake.out_len, buf, n);
	er_fake.out_len += n;
	er_fake.out[er_fake.out_len] = '\0';
}

void er_port_idle_ms(uint32_t ms)
{
	er_fake.quiet_idles += er_fake.quiet > 0;
	er_fake.now += (uint64_t)ms * 1000000u;
}

uint32_t er_port_trigger_drops(void)
{
	return 7;
}

/* ---- test ops ---- */

static struct er_arena_s *greedy_arena;
static uint8_t *payload;
static uint32_t payload_len;

static int selftest_pass(void)
{
	return 0;
}

static int selftest_fail(void)
{
	return -EIO;
}

static int prep_plain(const struct er_params_s *params, struct er_arena_s *arena)
{
	(void)params;
	(void)arena;
	er_fake.runs = 0;
	return 0;
}

static int prep_sized(const struct er_params_s *params, struct er_arena_s *arena)
{
	er_fake.runs = 0;
	payload_len = params->payload_bytes;
	payload = er_arena_alloc(arena, payload_len, 16);
	return payload == NULL ? -ENOMEM : 0;
}

static int prep_greedy(const struct er_params_s *params, struct er_arena_s *arena)
{
	greedy_arena = arena;
	return prep_plain(params, arena);
}

static int prep_no_memory(const struct er_params_s *params, struct er_arena_s *arena)
{
	(void)params;
	(void)arena;
	return -ENOMEM;
}

static int run_count(void)
{
	if (er_fake.runs >= er_fake.run_limit) {
		return -ECANCELED;
	}
	er_fake.runs++;
	er_fake.loud_runs += er_fake.quiet == 0;
	er_fake.run_at = er_fake.now;
	return 0;
}

static int run_sized(void)
{
	for (uint32_t i = 0; i < payload_len; i++) {
		payload[i] ^= (uint8_t)i;
	}
	er_sink ^= payload[0];
	return run_count();
}

static int run_fails_at_3(void)
{
	return er_fake.runs == 2 ? -EIO : run_count();
}

static int run_greedy(void)
{
	(void)er_arena_alloc(greedy_arena, 1, 1);
	return run_count();
}

static void release_count(void)
{
	er_fake.releases++;
}

static const uint16_t sized_key_bits[] = {128, 256, 0};
static const enum er_curve curvy_curves[] = {ER_CURVE_P256, ER_CURVE_X25519, ER_CURVE_NONE};

#define ER_FAKE_OP(op_name, op_family, op_backend, op_selftest, op_prep, op_run)               \
	{.name = op_name, .family = op_family, .backend = op_backend, .selftest = op_selftest, \
	 .prep = op_prep, .run = op_run, .release = release_count}

static const struct er_op_s fake_ops[] = {
	ER_FAKE_OP("count", "hash", ER_BACKEND_HARDWARE, selftest_pass, prep_plain, run_count),
	ER_FAKE_OP("count", "hash", ER_BACKEND_SOFTWARE, selftest_pass, prep_plain, run_count),
	ER_FAKE_OP("broken-selftest", "hash", ER_BACKEND_SOFTWARE, selftest_fail, prep_plain,
		   run_count),
	ER_FAKE_OP("fails-at-3", "hash", ER_BACKEND_SOFTWARE, selftest_pass, prep_plain,
		   run_fails_at_3),
	ER_FAKE_OP("greedy", "hash", ER_BACKEND_SOFTWARE, selftest_pass, prep_greedy, run_greedy),
	ER_FAKE_OP("no-memory", "hash", ER_BACKEND_SOFTWARE, selftest_pass, prep_no_memory,
		   run_count),
	{.name = "sized", .family = "symmetric", .backend = ER_BACKEND_SOFTWARE,
	 .spec = {.key_bits = sized_key_bits, .payload_min = 16, .payload_max = 1u << 20,
		  .payload_multiple = 16},
	 .selftest = selftest_pass, .prep = prep_sized, .run = run_sized, .release = release_count},
	{.name = "curvy", .family = "public-key", .backend = ER_BACKEND_SOFTWARE,
	 .spec = {.curves = curvy_curves}, .selftest = selftest_pass, .prep = prep_plain,
	 .run = run_count, .release = NULL},
};

/* The registry, with a hole (an op the build left out) before "sized", the 7th op. */
static const struct er_op_s *const fake_registry_ops[] = {
	&fake_ops[0], &fake_ops[1], &fake_ops[2], &fake_ops[3],
	&fake_ops[4], &fake_ops[5], NULL, &fake_ops[6], &fake_ops[7],
};

const struct er_registry_s er_fake_registry = {
	.ops = fake_registry_ops,
	.n_ops = sizeof(fake_registry_ops) / sizeof(fake_registry_ops[0]),
};
