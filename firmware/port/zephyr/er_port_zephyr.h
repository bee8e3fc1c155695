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

/**
 * @brief Configure the trigger pin (low), the console UART's receive path and the cycle
 * counter.
 * @retval 0 ready
 * @retval -ENODEV the trigger's GPIO controller or the console UART is not ready
 * @retval -errno what gpio_pin_configure_dt() or the UART driver returned
 */
int er_port_zephyr_init(void);

/**
 * @brief Wait for bytes from the console UART, in the idle state of the board.
 * @return 1 to @p cap bytes written to @p buf
 */
size_t er_port_zephyr_read(uint8_t *buf, size_t cap);

#endif /* ER_PORT_ZEPHYR_H_ */
