/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief native_sim only: the host's clock, from the runner side of the native simulator
 * (er_native_clock_bottom.c), for the port's counters.
 */
#ifndef ER_NATIVE_CLOCK_BOTTOM_H_
#define ER_NATIVE_CLOCK_BOTTOM_H_

#include <stdint.h>

/** @brief The host's monotonic clock in nanoseconds (real time, not simulated time). */
uint64_t er_native_clock_ns(void);

#endif /* ER_NATIVE_CLOCK_BOTTOM_H_ */
