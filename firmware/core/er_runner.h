/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief The batch runner: exactly N runs of the prepared op inside one trigger window,
 * plus the baseline (idle) and timing-calibration (mark) windows.
 */
#ifndef ER_RUNNER_H_
#define ER_RUNNER_H_

#include <stddef.h>
#include <stdint.h>

#include "er_arena.h"
#include "er_op.h"

/** Most trigger windows one batch opens (`run windows=`). */
#define ER_WINDOWS_MAX 64

/** What one batch did: its windows, each of n runs. */
struct er_batch_s {
	uint32_t n_done;       /**< runs that returned 0 in the last window opened (n unless
				    one failed) */
	uint32_t windows_open; /**< windows opened: those done, and one that failed inside */
	uint32_t windows_done; /**< windows whose n runs all returned 0 */
	int status;            /**< 0, or the negative errno of the first failing run */
	uint64_t cycles[ER_WINDOWS_MAX];     /**< per window opened: cycles between its two
						  counter readings */
	uint64_t elapsed_ns[ER_WINDOWS_MAX]; /**< per window opened: nanoseconds between them */
	size_t stack_bytes; /**< stack high-water mark of the batch (op, loop, trigger calls) */
};

/**
 * @brief One unrecorded run of the op, then @p windows times: @p settle_ms of idle, trigger
 * high, counters read, @p n x op->run(), counters read, trigger low; on the port's measured
 * stack. @p n may be 0: a window then holds only the trigger and the two readings, the
 * overhead the host subtracts. Stops at the first failing run (no window after it); a
 * failing unrecorded run opens no window (n_done 0). Allocates nothing.
 * @param windows windows to open, 1 .. ER_WINDOWS_MAX
 * @param settle_ms idle before each window (the host's baseline span of that window)
 * @param arena the arena op->prep used; checked to be untouched by the window
 * @retval 0 the batch ran (see @p batch->status for the op's own result)
 * @retval -EFAULT the op allocated from the arena inside the window
 */
int er_runner_run(const struct er_op_s *op, uint32_t n, uint32_t windows, uint32_t settle_ms,
		  const struct er_arena_s *arena, struct er_batch_s *batch);

/**
 * @brief Trigger high for a busy loop of at least @p cycles cycles of er_port_cycles().
 * @param[out] measured cycles actually spent in the window
 * @param[out] elapsed_ns time spent in the window
 */
void er_runner_mark(uint64_t cycles, uint64_t *measured, uint64_t *elapsed_ns);

/**
 * @brief Stay trigger-low for @p ms milliseconds, as between requests.
 * @param[out] elapsed_ns time actually spent
 */
void er_runner_idle(uint32_t ms, uint64_t *elapsed_ns);

#endif /* ER_RUNNER_H_ */
