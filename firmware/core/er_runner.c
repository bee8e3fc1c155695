/* SPDX-License-Identifier: Apache-2.0 */
#include "er_runner.h"

#include <errno.h>

#include "er_port.h"

volatile uint32_t er_sink;

struct batch_ctx_s {
	const struct er_op_s *op;
	uint32_t n;
	uint32_t windows;
	uint32_t settle_ms;
	struct er_batch_s *batch;
};

/*
 * One trigger window: trigger high, raw counter reads around the loop, trigger low; the
 * readings are converted after the trigger falls. Quiet (er_port_quiet_begin) throughout.
 * Returns 0 or the first failing run's status; counts its runs in batch->n_done.
 */
static int one_window(const struct batch_ctx_s *ctx, uint32_t k)
{
	struct er_batch_s *batch = ctx->batch;
	int (*run)(void) = ctx->op->run;
	uint32_t n = ctx->n;
	struct er_port_stamp_s s0;
	struct er_port_stamp_s s1;
	uint32_t i = 0;
	int status = 0;
	unsigned int key = er_port_quiet_begin();

	er_port_trigger(1, ctx->op->backend == ER_BACKEND_HARDWARE);
	er_port_stamp(&s0);
	for (; i < n; i++) {
		status = run();
		if (status != 0) {
			break;
		}
	}
	er_port_stamp(&s1);
	er_port_trigger(0, 0);
	er_port_quiet_end(key);
	er_port_span(&s0, &s1, &batch->cycles[k], &batch->elapsed_ns[k]);
	batch->n_done = i;
	return status;
}

/*
 * One unrecorded run before the windows: state an op computes lazily on its first use (RSA
 * blinding values, Montgomery constants of each modulus) and the caches are warm when the
 * first recorded run starts, so every recorded run does the same work. Then, per window,
 * settle_ms of idle, so the span just before its rising edge, where the host takes that
 * window's idle baseline, holds no part of a run; then the window. The warm-up run and the
 * windows are quiet (er_port_quiet_begin): the idle between them is not, it sleeps.
 */
static int batch_windows(void *arg)
{
	struct batch_ctx_s *ctx = arg;
	struct er_batch_s *batch = ctx->batch;
	unsigned int key = er_port_quiet_begin();
	int status = ctx->n > 0 ? ctx->op->run() : 0;

	er_port_quiet_end(key);
	for (uint32_t k = 0; status == 0 && k < ctx->windows; k++) {
		if (ctx->settle_ms > 0) {
			er_port_idle_ms(ctx->settle_ms);
		}
		status = one_window(ctx, k);
		batch->windows_open = k + 1;
		batch->windows_done = status == 0 ? k + 1 : k;
	}
	batch->status = status;
	return status;
}

int er_runner_run(const struct er_op_s *op, uint32_t n, uint32_t windows, uint32_t settle_ms,
		  const struct er_arena_s *arena, struct er_batch_s *batch)
{
	struct batch_ctx_s ctx = {.op = op, .n = n, .windows = windows, .settle_ms = settle_ms,
				  .batch = batch};
	size_t used = arena->used;

	*batch = (struct er_batch_s){0};
	(void)er_port_run_measured(batch_windows, &ctx, &batch->stack_bytes);
	return arena->used == used ? 0 : -EFAULT;
}

void er_runner_mark(uint64_t cycles, uint64_t *measured, uint64_t *elapsed_ns)
{
	struct er_port_stamp_s s0;
	struct er_port_stamp_s s1;
	unsigned int key = er_port_quiet_begin();

	er_port_trigger(1, 0);
	er_port_stamp(&s0);
	uint64_t c0 = er_port_cycles();

	while (er_port_cycles() - c0 < cycles) {
	}
	er_port_stamp(&s1);
	er_port_trigger(0, 0);
	er_port_quiet_end(key);
	er_port_span(&s0, &s1, measured, elapsed_ns);
}

void er_runner_idle(uint32_t ms, uint64_t *elapsed_ns)
{
	uint64_t t0 = er_port_time_ns();

	er_port_idle_ms(ms);
	*elapsed_ns = er_port_time_ns() - t0;
}
