/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief What main.c needs from the Zephyr port beyond core/er_port.h: start-up and the
 * console UART's receive side.
 */
#ifndef ER_PORT_ZEPHYR_H_
#define ER_PORT_ZEPHYR_H_

#include <stddef.h>
#include <stdint.h>

#include "er_port.h"

/**
 * @brief Configure the console UART's receive path, the counters and the trigger pin (low).
 * A trigger that cannot be configured does not fail this: its code is er_port_info()'s
 * init_status (hello's port_status), and the protocol refuses run and mark.
 * @retval 0 the console works
 * @retval -ENODEV the console UART is not ready
 * @retval -errno what the UART driver returned
 */
int er_port_zephyr_init(void);

/**
 * @brief Wait for bytes from the console UART, in the idle state of the board.
 * @return 1 to @p cap bytes written to @p buf
 */
size_t er_port_zephyr_read(uint8_t *buf, size_t cap);

/**
 * @brief hello's platform conditions (optimisation, CPU clock source, regulator, caches,
 * trace unit, idle state), read again on each call; ends with a NULL name.
 */
const struct er_condition_s *er_port_zephyr_conditions(void);

#endif /* ER_PORT_ZEPHYR_H_ */
