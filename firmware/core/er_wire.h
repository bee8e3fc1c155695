/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief Wire ids of the op families (TRIGGER_WIRE.md), for the ports whose trigger edges
 * reach an emulated instrument (port/host's virtual trigger wire, port/qemu-m4's UART1).
 */
#ifndef ER_WIRE_H_
#define ER_WIRE_H_

#include <stdint.h>

#include "er_op.h"

/**
 * @brief The wire id of @p op's family; 0 for no op (a mark window) and for a family the
 * table lacks. Ids are stable: a new family takes the next id, none is ever reused
 * (energyrig.instruments.sim.wire.FAMILY_NAMES is the same table).
 */
uint16_t er_wire_family(const struct er_op_s *op);

#endif /* ER_WIRE_H_ */
