/* SPDX-License-Identifier: Apache-2.0 */
#include "er_str.h"

#include <errno.h>

void er_str_init(struct er_str_s *s, char *buf, size_t cap)
{
	s->buf = buf;
	s->cap = cap;
	s->len = 0;
	buf[0] = '\0';
}

void er_str_catn(struct er_str_s *s, const char *text, size_t max)
{
	for (size_t i = 0; i < max && text[i] != '\0' && s->len + 1 < s->cap; i++) {
		s->buf[s->len++] = text[i];
	}
	s->buf[s->len] = '\0';
}

void er_str_cat(struct er_str_s *s, const char *text)
{
	er_str_catn(s, text, SIZE_MAX);
}

size_t er_u64_to_dec(uint64_t v, char *out)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10u);
		v /= 10u;
	} while (v != 0);
	for (size_t i = 0; i < n; i++) {
		out[i] = tmp[n - 1 - i];
	}
	out[n] = '\0';
	return n;
}

void er_str_u64(struct er_str_s *s, uint64_t v)
{
	char dec[21];

	er_u64_to_dec(v, dec);
	er_str_cat(s, dec);
}

void er_str_i64(struct er_str_s *s, int64_t v)
{
	if (v < 0) {
		er_str_cat(s, "-");
		er_str_u64(s, (uint64_t)0 - (uint64_t)v);
	} else {
		er_str_u64(s, (uint64_t)v);
	}
}

int er_parse_u64(const char *text, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (text[0] == '\0') {
		return -EINVAL;
	}
	for (const char *c = text; *c != '\0'; c++) {
		if (*c < '0' || *c > '9') {
			return -EINVAL;
		}
		unsigned digit = (unsigned)(*c - '0');

		if (digit > max || v > (max - digit) / 10u) {
			return -ERANGE;
		}
		v = v * 10u + digit;
	}
	*out = v;
	return 0;
}
