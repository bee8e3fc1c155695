/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief Bounded line reader: bytes in, complete request lines out (PROTOCOL.md, Framing).
 *
 * A line holds at most ER_LINE_MAX printable ASCII bytes before its '\n'; a '\r' right
 * before the '\n' is dropped. Longer lines are discarded up to their newline, lines with
 * any other byte are reported invalid. Memory is fixed; no input can make it grow or stall.
 */
#ifndef ER_LINE_H_
#define ER_LINE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ER_LINE_MAX 255

enum er_line_event {
	ER_LINE_NONE = 0,  /**< byte taken, no line yet */
	ER_LINE_READY,     /**< a complete line is in buf, NUL-terminated */
	ER_LINE_TOO_LONG,  /**< a line over ER_LINE_MAX bytes ended */
	ER_LINE_INVALID,   /**< a line holding a byte outside printable ASCII ended */
};

struct er_line_s {
	char buf[ER_LINE_MAX + 2]; /* the line, a pending '\r', the NUL */
	size_t len;
	bool too_long;
	bool invalid;
};

/** @brief Start with no pending bytes. */
void er_line_init(struct er_line_s *line);

/**
 * @brief Take one byte.
 * @return what the byte completed; after ER_LINE_READY the line is valid until the next call
 */
enum er_line_event er_line_feed(struct er_line_s *line, uint8_t byte);

#endif /* ER_LINE_H_ */
