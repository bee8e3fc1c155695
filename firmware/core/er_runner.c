/* SPDX-License-Identifier: Apache-2.0 */
#include "er_runner.h"

#include <errno.h>

#include "er_port.h"

volatile uint32_t er_sink;

struct batch_ctx_s {
	const struct er_op_s *op;
	uint32_t n;
	struct er_batch_s *batch;
};

/* The window itself: nothing but the counters, the trigger and the op. */
static int batch_window(void *arg)
{
	struct batch_ctx_s *ctx = arg;
	int (*run)(void) = ctx->op->run;
	uint32_t n = ctx->n;
	uint32_t i;
	int status = 0;

	er_port_trigger(1, ctx->op->backend == ER_BACKEND_HARDWARE);
	uint64_t c0 = er_port_cycles();
	uint64_t t0 = er_port_time_ns();

	for (i = 0; i < n; i++) {
		status = run();
		if (status != 0) {
			break;
		}
	}
	uint64_t c1 = er_port_cycles();
	uint64_t t1 = er_port_time_ns();

	er_port_trigger(0, 0);
	ctx->batch->cycles = c1 - c0;
	ctx->batch->elapsed_ns = t1 - t0;
	ctx->batch->n_done = i;
	ctx->batch->status = status;
	return status;
}

int er_runner_run(const struct er_op_s *op, uint32_t n, const struct er_arena_s *arena,
		  struct er_batch_s *batch)
{
	struct batch_ctx_s ctx = {.op = op, .n = n, .batch = batch};
	size_t used = arena->used;

	*batch = (struct er_batch_s){0};
	(void)er_port_run_measured(batch_window, &ctx, &batch->stack_bytes);
	return arena->used == used ? 0 : -EFAULT;
}

void er_runner_mark(uint64_t cycles, uint64_t *measured, uint64_t *elapsed_ns)
{
	er_port_trigger(1, 0);
	uint64_t c0 = er_port_cycles();
	uint64_t t0 = er_port_time_ns();
	uint64_t c1;

	do {
		c1 = er_port_cycles();
	} while (c1 - c0 < cycles);
	uint64_t t1 = er_port_time_ns();

	er_port_trigger(0, 0);
	*measured = c1 - c0;
	*elapsed_ns = t1 - t0;
}

void er_runner_idle(uint32_t ms, uint64_t *elapsed_ns)
{
	uint64_t t0 = er_port_time_ns();

	er_port_idle_ms(ms);
	*elapsed_ns = er_port_time_ns() - t0;
}
