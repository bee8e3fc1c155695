/* SPDX-License-Identifier: Apache-2.0 */
#include "er_kat.h"

#include <errno.h>

/* What er_kat_next returns after the last byte. */
#define ER_KAT_END 256

static int er_kat_digit(char ch)
{
	if (ch >= '0' && ch <= '9') {
		return ch - '0';
	}
	if (ch >= 'a' && ch <= 'f') {
		return ch - 'a' + 10;
	}
	if (ch >= 'A' && ch <= 'F') {
		return ch - 'A' + 10;
	}
	return -EINVAL;
}

/* The next byte of @p *hex (two adjacent digits, spaces before them skipped), ER_KAT_END,
 * or -EINVAL. */
static int er_kat_next(const char **hex)
{
	const char *p = *hex;

	while (*p == ' ') {
		p++;
	}
	if (*p == '\0') {
		*hex = p;
		return ER_KAT_END;
	}
	int high = er_kat_digit(p[0]);
	int low = high < 0 ? -EINVAL : er_kat_digit(p[1]);

	if (low < 0) {
		return -EINVAL;
	}
	*hex = p + 2;
	return (high << 4) | low;
}

int er_kat_unhex(uint8_t *out, size_t cap, const char *hex)
{
	size_t len = 0;

	for (int byte = er_kat_next(&hex); byte != ER_KAT_END; byte = er_kat_next(&hex)) {
		if (byte < 0) {
			return byte;
		}
		if (len == cap) {
			return -ENOSPC;
		}
		out[len++] = (uint8_t)byte;
	}
	return (int)len;
}

int er_kat_check(const uint8_t *got, size_t len, const char *hex)
{
	size_t n = 0;

	for (int byte = er_kat_next(&hex); byte != ER_KAT_END; byte = er_kat_next(&hex)) {
		if (byte < 0 || n == len || got[n] != (uint8_t)byte) {
			return -EIO;
		}
		n++;
	}
	return n == len ? 0 : -EIO;
}
