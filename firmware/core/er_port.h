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

/** One condition of the measurements (hello's "conditions"): a name and a text or number. */
struct er_condition_s {
	const char *name;
	const char *text; /**< the value, or NULL for a number */
	uint64_t number;
};

/** Facts about the platform, reported by @c hello. */
struct er_port_info_s {
	const char *board;          /**< e.g. "nrf52840dk/nrf52840", "host" */
	uint32_t cpu_hz;            /**< CPU clock in Hz */
	uint32_t cycle_hz;          /**< frequency of er_port_cycles() in Hz */
	/** Clocks er_port_set_clock() takes, Hz, ending with 0; NULL when the port cannot set
	 * its clock (hello's cpu_hz_levels). */
	const uint32_t *cpu_hz_levels;
	const char *crypto_backend; /**< e.g. "mbedtls-3.6.4", "mbedtls-2.28.3" */
	/** The crypto library's speed options (er_ops_conditions.h), ending with a NULL name;
	 * NULL when there are none. */
	const struct er_condition_s *crypto_conditions;
	/** Optimisation, CPU clock source, regulator, caches, trace unit, idle state, ending
	 * with a NULL name; NULL when there are none. */
	const struct er_condition_s *platform_conditions;
	int init_status; /**< 0, or the negative errno of a start-up step of the port */
};

/** @brief Platform facts, read again on each call (clock source, caches, ... may change). */
const struct er_port_info_s *er_port_info(void);

/**
 * @brief Run the CPU at @p hz from now on, one of info's cpu_hz_levels (the core checks that
 * first). Afterwards er_port_info() reports the clock in force as cpu_hz, and cycle_hz is the
 * counter's rate at it. Called outside any window.
 * @return 0, or a negative errno: -ENOTSUP where the port cannot set its clock
 */
int er_port_set_clock(uint32_t hz);

/**
 * @brief Drive the trigger line. High marks the measured window.
 * @param high 1 for high, 0 for low
 * @param accel 1 when the op in the window uses a hardware accelerator (the simulated
 *        bench's power model reads it; a GPIO port ignores it)
 */
void er_port_trigger(int high, int accel);

/**
 * @brief Keep interrupts out of what follows until er_port_quiet_end(): no interrupt adds its
 * cycles, its energy or its exception frame (to the painted stack) to an op. The core brackets
 * each op run a batch holds with it: the warm-up run and the trigger window (er_runner.c); it
 * never sleeps or idles inside. A port whose counters need their interrupt to keep counting
 * through a window may leave interrupts on, and says so in its platform conditions.
 * @return the key to hand to er_port_quiet_end()
 */
unsigned int er_port_quiet_begin(void);

/** @brief End what er_port_quiet_begin() began; @p key is what it returned. */
void er_port_quiet_end(unsigned int key);

/** @brief Free-running cycle counter, widened to 64 bits (callers subtract as uint64_t). */
uint64_t er_port_cycles(void);

/**
 * Raw readings of the port's two counters: what a trigger window holds besides its ops.
 * The fields are the counters as read (a 32-bit counter is not widened); only
 * er_port_span() gives them meaning.
 */
struct er_port_stamp_s {
	uint64_t cycles; /**< the cycle counter behind er_port_cycles() */
	uint64_t time;   /**< the time counter behind er_port_time_ns(), in its own unit */
};

/**
 * @brief Read both counters and nothing else: no widening, no conversion, no lock.
 * Called right after the trigger rises and right before it falls.
 */
void er_port_stamp(struct er_port_stamp_s *stamp);

/**
 * @brief Convert two stamps, taken in this order, into what passed between them; called
 * outside the window.
 * @param[out] cycles cycles at cycle_hz (wraps of a 32-bit counter included)
 * @param[out] elapsed_ns nanoseconds
 */
void er_port_span(const struct er_port_stamp_s *from, const struct er_port_stamp_s *to,
		  uint64_t *cycles, uint64_t *elapsed_ns);

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
