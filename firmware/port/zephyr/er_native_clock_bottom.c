/* SPDX-License-Identifier: Apache-2.0 */
/*
 * native_sim's runner side: built with the host's C library and headers, outside the
 * embedded image (target_sources(native_simulator INTERFACE ...), Zephyr's
 * arch/posix/CMakeLists.txt; the same split as drivers/entropy/fake_entropy_native_bottom.c).
 * The embedded side cannot read the host's clock itself, and its simulated time does not
 * pass while code runs.
 */
#include "er_native_clock_bottom.h"

#include <time.h>

uint64_t er_native_clock_ns(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
