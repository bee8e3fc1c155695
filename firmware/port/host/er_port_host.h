/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief Set-up of the Linux port (the simulated DUT and the C tests); the rest of the port
 * is er_port.h.
 */
#ifndef ER_PORT_HOST_H_
#define ER_PORT_HOST_H_

#include "er_op.h"

/**
 * A rising edge is stamped this far ahead (ns), sent, and then waited for, so the wire send
 * (and a preemption while the emulator wakes up to read it) falls before the window rather
 * than inside it: the window holds the ops and the two counter reads, as on a board, not
 * the host's syscall. A send slower than the lead still lands inside (rare).
 */
#define ER_HOST_RISE_LEAD_NS 2000000u

/**
 * The lead is slept until this long (ns) before the edge and spun for the rest. A process
 * that spun the whole lead used up its share of the CPU there and was the likeliest to be
 * taken off it just before its edge, returning late, inside the window; one that slept
 * comes back with a sleeper's credit and is rarely taken off in the short spin left
 * (docs/performance.md, "The host DUT's lead: slept, then spun"). A wake-up later than
 * this on a quiet host is rare.
 */
#define ER_HOST_RISE_SPIN_NS 300000u

/**
 * @brief Configure the port before the first request.
 * @param board the board name reported by @c hello
 * @param out_fd where replies go
 * @param wire_path the trigger wire's UNIX datagram socket (TRIGGER_WIRE.md), or NULL
 * @retval 0 ready
 * @retval -errno the trigger wire socket could not be created
 */
int er_port_host_init(const char *board, int out_fd, const char *wire_path);

/**
 * @brief Where the session keeps its prepared op (er_proto_s.op), read at each batch's rising
 * edge: the trigger wire's @c family field names that op's family (TRIGGER_WIRE.md).
 * @param prepared the slot, or NULL: every edge carries family 0
 */
void er_port_host_watch_op(const struct er_op_s *const *prepared);

/** @brief 1 after a reply could not be written (the host link is gone), else 0. */
int er_port_host_link_lost(void);

#endif /* ER_PORT_HOST_H_ */
