/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief What the core needs from a platform. Implemented by port/zephyr and port/host;
 * nothing else in the firmware may include a platform header.
 */
#ifndef ER_PORT_H_
#define ER_PORT_H_

#include <stddef.h>
#include <stdint.h>

/** Facts about the platform, reported by @c hello. */
struct er_port_info_s {
	const char *board;          /**< e.g. "nrf52840dk/nrf52840", "host" */
	uint32_t cpu_hz;            /**< CPU clock in Hz */
	uint32_t cycle_hz;          /**< frequency of er_port_cycles() in Hz */
	const char *crypto_backend; /**< e.g. "mbedtls-3.6.4", "mbedtls-2.28.3" */
};

/** @brief Platform facts; valid for the lifetime of the program. */
const struct er_port_info_s *er_port_info(void);

/**
 * @brief Drive the trigger line. High marks the measured window.
 * @param high 1 for high, 0 for low
 * @param accel 1 when the op in the window uses a hardware accelerator (the simulated
 *        bench's power model reads it; a GPIO port ignores it)
 */
void er_port_trigger(int high, int accel);

/** @brief Free-running cycle counter (wraps; callers subtract as uint64_t). */
uint64_t er_port_cycles(void);

/** @brief Monotonic time in nanoseconds. */
uint64_t er_port_time_ns(void);

/** @brief The static buffer that backs the arena. */
void er_port_arena(uint8_t **base, size_t *size);

/**
 * @brief Run @p fn on a stack whose unused depth can be measured.
 * @param[out] stack_used bytes of stack @p fn used (high-water mark), or 0 if unknown
 * @return what @p fn returned
 */
int er_port_run_measured(int (*fn)(void *), void *arg, size_t *stack_used);

/** @brief Write @p len bytes of a reply to the host link. */
void er_port_write(const char *buf, size_t len);

/**
 * @brief Wait @p ms milliseconds trigger-low, in the state the firmware is in while it waits
 * for a request (Zephyr: k_msleep; host: nanosleep). Used by @c idle for the baseline.
 */
void er_port_idle_ms(uint32_t ms);

/**
 * @brief Trigger edges the port could not publish (host: full trigger-wire socket).
 * @return the count since start; 0 on a port with a real GPIO
 */
uint32_t er_port_trigger_drops(void);

#endif /* ER_PORT_H_ */
