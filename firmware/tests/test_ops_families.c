/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The symmetric, legacy and hash families beyond their self-tests: every key size at the
 * smallest, a middling and the largest payload; run allocates nothing and, from the same
 * seed, computes the same thing; an arena too small is -ENOMEM; a self-test between prep and
 * run does not disturb the prepared op.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "er_drbg.h"
#include "er_op.h"
#include "er_registry.h"
#include "er_test.h"

/* Two buffers of the largest payload and some slack. */
static uint8_t arena_mem[2U * 1024U * 1024U + 4096U];

/* Prep @p op with @p params and run it twice; return what the first run folded into er_sink,
 * or a negative errno from prep or run. */
static long prep_and_run(const struct er_op_s *op, const struct er_params_s *params,
			 struct er_arena_s *arena)
{
	er_arena_reset(arena);
	er_drbg_seed(&er_drbg, params->seed);
	int ret = op->prep(params, arena);
	size_t used = arena->used;
	uint32_t before = er_sink;
	long folded = 0;

	if (ret == 0) {
		ret = op->run();
		folded = (long)(uint32_t)(er_sink - before);
	}
	if (ret == 0) {
		ret = op->run();
	}
	ER_CHECK_INT(arena->used, used);
	if (op->release != NULL) {
		op->release();
	}
	return ret != 0 ? ret : folded;
}

static void exercise(const struct er_op_s *op, struct er_arena_s *arena)
{
	static const uint16_t no_key[] = {0, 0};
	const struct er_param_spec_s *spec = &op->spec;
	const uint16_t *keys = spec->key_bits != NULL ? spec->key_bits : no_key;
	uint32_t m = spec->payload_multiple > 1U ? spec->payload_multiple : 1U;
	uint32_t sizes[3] = {spec->payload_min, 1000U / m * m, spec->payload_max};

	for (size_t k = 0; k == 0 || keys[k] != 0; k++) {
		for (size_t s = 0; s < (spec->payload_max != 0 ? 3U : 1U); s++) {
			struct er_params_s params = {
				.key_bits = keys[k], .payload_bytes = sizes[s], .seed = 7};
			long first = prep_and_run(op, &params, arena);
			long again = prep_and_run(op, &params, arena);

			if (first < 0 || again != first) {
				printf("  %s key_bits=%u payload=%u: %ld then %ld\n", op->name,
				       keys[k], sizes[s], first, again);
			}
			ER_CHECK(first >= 0);
			ER_CHECK_INT(again, first);
		}
	}
}

/* Every op of the catalogue in @p family ("symmetric": also the legacy ciphers). */
static void check_family(const char *family)
{
	struct er_arena_s arena;
	struct er_arena_s tiny;
	const struct er_op_s *op;

	er_arena_init(&arena, arena_mem, sizeof(arena_mem));
	er_arena_init(&tiny, arena_mem, 8);
	for (size_t i = 0; (op = er_registry_at(&er_catalogue, i)) != NULL; i++) {
		if (strcmp(op->family, family) != 0) {
			continue;
		}
		ER_CHECK_INT(op->selftest(), 0);
		exercise(op, &arena);
		if (op->spec.payload_max != 0) {
			struct er_params_s params = {
				.key_bits = op->spec.key_bits != NULL ? op->spec.key_bits[0] : 0,
				.payload_bytes = 64,
				.seed = 1};

			er_arena_reset(&tiny);
			ER_CHECK_INT(op->prep(&params, &tiny), -ENOMEM);
			if (op->release != NULL) {
				op->release();
			}
		}
	}
}

/* A self-test run between prep and run leaves the prepared op as it was. */
static void test_selftest_between_prep_and_run(void)
{
	const struct er_op_s *const picks[] = {
		er_registry_find(&er_catalogue, "aes-ecb-encrypt", ER_BACKEND_SOFTWARE),
		er_registry_find(&er_catalogue, "aes-gcm-decrypt", ER_BACKEND_SOFTWARE),
		er_registry_find(&er_catalogue, "rc6-decrypt", ER_BACKEND_SOFTWARE),
		er_registry_find(&er_catalogue, "hmac-sha256", ER_BACKEND_SOFTWARE),
	};
	struct er_arena_s arena;

	er_arena_init(&arena, arena_mem, sizeof(arena_mem));
	for (size_t i = 0; i < sizeof(picks) / sizeof(picks[0]); i++) {
		const struct er_op_s *op = picks[i];

		ER_CHECK(op != NULL);
		if (op == NULL) {
			continue;
		}
		struct er_params_s params = {
			.key_bits = op->spec.key_bits != NULL ? op->spec.key_bits[2] : 0,
			.payload_bytes = 64,
			.seed = 3};

		er_drbg_seed(&er_drbg, params.seed);
		ER_CHECK_INT(op->prep(&params, &arena), 0);
		uint32_t before = er_sink;

		ER_CHECK_INT(op->run(), 0);
		uint32_t first = er_sink - before;

		ER_CHECK_INT(op->selftest(), 0);
		before = er_sink;
		ER_CHECK_INT(op->run(), 0);
		ER_CHECK_INT(er_sink - before, first);
		if (op->release != NULL) {
			op->release();
		}
		er_arena_reset(&arena);
	}
}

static void test_symmetric_and_legacy(void)
{
	check_family("symmetric");
}

static void test_hash(void)
{
	check_family("hash");
}

int main(void)
{
	ER_RUN(test_symmetric_and_legacy);
	ER_RUN(test_hash);
	ER_RUN(test_selftest_between_prep_and_run);
	return er_test_summary();
}
