/* SPDX-License-Identifier: Apache-2.0 */
#include "er_line.h"

void er_line_init(struct er_line_s *line)
{
	line->len = 0;
	line->too_long = false;
	line->invalid = false;
}

enum er_line_event er_line_feed(struct er_line_s *line, uint8_t byte)
{
	if (byte == '\n') {
		enum er_line_event ev = ER_LINE_READY;

		if (line->len > 0 && line->buf[line->len - 1] == '\r') {
			line->len--;
		}
		/* A '\r' kept in the line is not its last byte: invalid. */
		for (size_t i = 0; i < line->len && !line->invalid; i++) {
			line->invalid = line->buf[i] == '\r';
		}
		if (line->too_long || line->len > ER_LINE_MAX) {
			ev = ER_LINE_TOO_LONG;
		} else if (line->invalid) {
			ev = ER_LINE_INVALID;
		}
		line->buf[line->len] = '\0';
		line->len = 0;
		line->too_long = false;
		line->invalid = false;
		return ev;
	}
	if (byte != '\r' && (byte < 0x20 || byte > 0x7e)) {
		line->invalid = true;
		return ER_LINE_NONE;
	}
	/* Room for ER_LINE_MAX bytes and one trailing '\r'. */
	if (line->len == ER_LINE_MAX + 1) {
		line->too_long = true;
		return ER_LINE_NONE;
	}
	if (!line->too_long) {
		line->buf[line->len++] = (char)byte;
	}
	return ER_LINE_NONE;
}
