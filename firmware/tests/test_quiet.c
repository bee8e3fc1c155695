/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The core keeps every op run of a batch, and every trigger window, inside the port's quiet
 * span (er_port_quiet_begin/end: interrupts masked on Zephyr), and sleeps outside it.
 */
#include "er_port_fake.h"
#include "er_runner.h"
#include "er_test.h"

static uint8_t arena_buf[256];

/* A batch of the fake op @p name on a fresh fake port; returns er_runner_run's result. */
static int run_batch(const char *name, uint32_t n, uint32_t settle_ms, struct er_batch_s *batch)
{
	struct er_arena_s arena;

	er_fake_reset();
	er_arena_init(&arena, arena_buf, sizeof(arena_buf));
	return er_runner_run(er_registry_find(&er_fake_registry, name, -1), n, 1, settle_ms, &arena,
			     batch);
}

static void test_batch_runs_and_window_are_quiet(void)
{
	struct er_batch_s batch;

	ER_CHECK_INT(run_batch("count", 5, 3, &batch), 0);
	ER_CHECK_INT(batch.n_done, 5);
	ER_CHECK_INT(er_fake.runs, 6);      /* the warm-up run and the five recorded ones */
	ER_CHECK_INT(er_fake.loud_runs, 0); /* none of them with interrupts on */
	ER_CHECK_INT(er_fake.quiet_idles, 0); /* the settle idle sleeps: not in a quiet span */
	ER_CHECK_INT(er_fake.n_edges, 2);
	ER_CHECK_INT(er_fake.edges[0].quiet, 1); /* the span opens before the rising edge */
	ER_CHECK_INT(er_fake.edges[1].quiet, 1); /* and closes after the falling one */
	ER_CHECK_INT(er_fake.quiet, 0);          /* every span ended */
}

static void test_failed_batch_ends_its_span(void)
{
	struct er_batch_s batch;

	(void)run_batch("fails-at-3", 10, 0, &batch);
	ER_CHECK_INT(batch.status, -5);
	ER_CHECK_INT(er_fake.loud_runs, 0);
	ER_CHECK_INT(er_fake.quiet, 0);
}

static void test_mark_window_is_quiet(void)
{
	uint64_t measured = 0;
	uint64_t elapsed_ns = 0;

	er_fake_reset();
	er_runner_mark(5000, &measured, &elapsed_ns);
	ER_CHECK_INT(er_fake.n_edges, 2);
	ER_CHECK_INT(er_fake.edges[0].quiet, 1);
	ER_CHECK_INT(er_fake.edges[1].quiet, 1);
	ER_CHECK_INT(er_fake.quiet, 0);
}

int main(void)
{
	ER_RUN(test_batch_runs_and_window_are_quiet);
	ER_RUN(test_failed_batch_ends_its_span);
	ER_RUN(test_mark_window_is_quiet);
	return er_test_summary();
}
