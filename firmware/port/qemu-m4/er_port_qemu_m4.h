/* SPDX-License-Identifier: Apache-2.0 */
/** @file @brief What main.c needs from the MPS2 AN386 port beyond er_port.h. */
#ifndef ER_PORT_QEMU_M4_H_
#define ER_PORT_QEMU_M4_H_

#include <stddef.h>
#include <stdint.h>

#include "er_op.h"

/** @brief Set up the UARTs, the trigger pin, the counters and Mbed TLS's heap. */
void er_port_qemu_m4_init(void);

/** @brief The session's prepared-op slot, whose family a batch's rising edge carries. */
void er_port_qemu_m4_watch_op(const struct er_op_s *const *prepared);

/** @brief Wait for at least one byte from the host link; return the bytes read (>= 1). */
size_t er_port_qemu_m4_read(uint8_t *buf, size_t size);

#endif /* ER_PORT_QEMU_M4_H_ */
