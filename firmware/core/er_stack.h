/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief The stack high-water mark of a measured batch, shared by the ports.
 *
 * A port knows how to run a function on a freshly painted stack and how deep that stack was
 * written afterwards; part of that depth is the port's own entry frames, not the function's.
 * A meter measures that part once, with a function that uses no stack, and subtracts it from
 * every later run: er_port_run_measured() of a port is one call to er_stack_run_measured().
 */
#ifndef ER_STACK_H_
#define ER_STACK_H_

#include <stddef.h>
#include <stdint.h>

/**
 * @brief How a port runs @p fn on a freshly painted stack.
 * @param[out] depth bytes of that stack written during the run (entry frames included), or
 *             0 when the port could not tell
 * @return what @p fn returned
 */
typedef int (*er_stack_runner_t)(int (*fn)(void *), void *arg, size_t *depth);

/** A port's runner and the depth its own frames take (measured on first use). */
struct er_stack_meter_s {
	er_stack_runner_t run;
	size_t overhead; /**< SIZE_MAX until measured */
};

/** Static initializer of a meter for @p runner. */
#define ER_STACK_METER_INIT(runner) {.run = (runner), .overhead = SIZE_MAX}

/**
 * @brief Run @p fn through the meter's runner; the first call first measures the overhead.
 * @param[out] stack_used bytes of stack @p fn used beyond the runner's frames, or 0 if unknown
 * @return what @p fn returned
 */
int er_stack_run_measured(struct er_stack_meter_s *meter, int (*fn)(void *), void *arg,
			  size_t *stack_used);

#endif /* ER_STACK_H_ */
