/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Every op of the generated catalogue: its known-answer self-test, then prep at its smallest
 * parameters and a batch of 3 on the host port, as the firmware does it. Ops join this test
 * as they are added to ops/ops.cmake.
 */
#include <stdio.h>
#include <string.h>

#include "er_drbg.h"
#include "er_port.h"
#include "er_port_host.h"
#include "er_registry.h"
#include "er_runner.h"
#include "er_test.h"

#define ER_BATCH 3

/* The smallest parameters @p op accepts. */
static struct er_params_s smallest(const struct er_op_s *op)
{
	const struct er_param_spec_s *spec = &op->spec;
	struct er_params_s p = {.seed = 1};

	p.key_bits = spec->key_bits != NULL ? spec->key_bits[0] : 0;
	p.curve = spec->curves != NULL ? spec->curves[0] : ER_CURVE_NONE;
	if (spec->payload_max != 0) {
		uint32_t m = spec->payload_multiple > 1 ? spec->payload_multiple : 1;

		p.payload_bytes = (spec->payload_min + m - 1) / m * m;
	}
	return p;
}

static int exercise(const struct er_op_s *op, struct er_arena_s *arena)
{
	struct er_params_s params = smallest(op);
	struct er_batch_s batch;

	if (op->selftest() != 0) {
		printf("%-28s %-8s self-test FAILED\n", op->name, er_backend_name(op->backend));
		return -1;
	}
	er_arena_reset(arena);
	er_drbg_seed(&er_drbg, params.seed);
	int ret = op->prep(&params, arena);

	if (ret == 0) {
		ret = er_runner_run(op, ER_BATCH, arena, &batch);
		ret = ret != 0 ? ret : batch.status;
	}
	if (op->release != NULL) {
		op->release();
	}
	if (ret != 0 || batch.n_done != ER_BATCH) {
		printf("%-28s %-8s self-test pass, prep/run FAILED (%d)\n", op->name,
		       er_backend_name(op->backend), ret);
		return -1;
	}
	printf("%-28s %-8s self-test pass, %u runs: %llu ns, stack %zu B\n", op->name,
	       er_backend_name(op->backend), ER_BATCH, (unsigned long long)batch.elapsed_ns,
	       batch.stack_bytes);
	return 0;
}

int main(void)
{
	struct er_arena_s arena;
	uint8_t *base;
	size_t size;
	const struct er_op_s *op;

	er_port_host_init("host", 1, NULL);
	er_port_arena(&base, &size);
	er_arena_init(&arena, base, size);
	for (size_t i = 0; (op = er_registry_at(&er_catalogue, i)) != NULL; i++) {
		ER_CHECK(op->name != NULL && op->family != NULL && op->selftest != NULL &&
			 op->prep != NULL && op->run != NULL);
		/* Names are lowercase with hyphens, and unique per backend. */
		ER_CHECK(strspn(op->name, "abcdefghijklmnopqrstuvwxyz0123456789-") ==
			 strlen(op->name));
		ER_CHECK(er_registry_find(&er_catalogue, op->name, (int)op->backend) == op);
		ER_CHECK_INT(exercise(op, &arena), 0);
	}
	printf("%zu ops in the catalogue\n", er_registry_count(&er_catalogue));
	return er_test_summary();
}
