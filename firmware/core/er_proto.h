/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief The request side of PROTOCOL.md: bytes from the host link in, one JSON reply line
 * per request out through er_port_write().
 *
 * All state is in struct er_proto_s (no heap); a port keeps one, feeds it whatever bytes
 * arrive and never has to look at their content.
 */
#ifndef ER_PROTO_H_
#define ER_PROTO_H_

#include <stddef.h>
#include <stdint.h>

#include "er_arena.h"
#include "er_line.h"
#include "er_op.h"
#include "er_registry.h"
#include "er_runner.h"

#define ER_PROTOCOL_VERSION 1

#ifndef ER_FIRMWARE_VERSION
#define ER_FIRMWARE_VERSION "0.1.0"
#endif

#ifndef ER_BUILD_ID
#define ER_BUILD_ID "unknown"
#endif

/** The compiler that built the firmware (er_toolchain() in core.cmake), for `hello`. */
#ifndef ER_TOOLCHAIN
#define ER_TOOLCHAIN "unknown"
#endif

/** Reply buffer; longer replies (the catalogue) stream out in pieces of this size. */
#define ER_PROTO_OUT 256

struct er_proto_s {
	const struct er_registry_s *reg;
	struct er_arena_s arena;
	struct er_line_s line;
	const struct er_op_s *op;  /**< the prepared op, or NULL */
	struct er_params_s params; /**< its parameters */
	uint32_t payload_cap;      /**< largest payload: arena size / 4 */
	struct er_batch_s batch;   /**< the last `run`'s windows (too large for a small stack) */
	char out[ER_PROTO_OUT];
};

/** @brief Start a session over @p reg with the port's arena and nothing prepared. */
void er_proto_init(struct er_proto_s *p, const struct er_registry_s *reg);

/** @brief Take bytes from the host link; replies to every complete line. */
void er_proto_feed(struct er_proto_s *p, const uint8_t *data, size_t len);

/**
 * @brief Answer one request line (printable ASCII, no newline). The line is modified.
 */
void er_proto_request(struct er_proto_s *p, char *line);

/** @brief Release the prepared op, if any. */
void er_proto_release(struct er_proto_s *p);

#endif /* ER_PROTO_H_ */
