/* SPDX-License-Identifier: Apache-2.0 */
#include "er_json.h"

#include <errno.h>

#include "er_str.h"

void er_json_init(struct er_json_s *j, char *buf, size_t cap,
		  void (*flush)(const char *buf, size_t len))
{
	j->buf = buf;
	j->cap = cap;
	j->len = 0;
	j->flush = flush;
	j->depth = 0;
	j->after_key = false;
	j->overflow = false;
}

static void put(struct er_json_s *j, char c)
{
	if (j->len == j->cap) {
		if (j->flush == NULL) {
			j->overflow = true;
			return;
		}
		j->flush(j->buf, j->len);
		j->len = 0;
	}
	j->buf[j->len++] = c;
}

static void puts_raw(struct er_json_s *j, const char *s)
{
	while (*s != '\0') {
		put(j, *s++);
	}
}

/* Comma before a value or key that is not the first of its container. */
static void separate(struct er_json_s *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->depth > 0 && j->depth <= ER_JSON_DEPTH) {
		if (!j->first[j->depth - 1]) {
			put(j, ',');
		}
		j->first[j->depth - 1] = false;
	}
}

static void container_open(struct er_json_s *j, char c)
{
	separate(j);
	put(j, c);
	if (j->depth < ER_JSON_DEPTH) {
		j->first[j->depth] = true;
	}
	j->depth++;
}

static void container_close(struct er_json_s *j, char c)
{
	if (j->depth > 0) {
		j->depth--;
	}
	put(j, c);
}

void er_json_obj_begin(struct er_json_s *j)
{
	container_open(j, '{');
}

void er_json_obj_end(struct er_json_s *j)
{
	container_close(j, '}');
}

void er_json_arr_begin(struct er_json_s *j)
{
	container_open(j, '[');
}

void er_json_arr_end(struct er_json_s *j)
{
	container_close(j, ']');
}

static void quoted(struct er_json_s *j, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	put(j, '"');
	for (const unsigned char *c = (const unsigned char *)s; *c != '\0'; c++) {
		switch (*c) {
		case '"':
			puts_raw(j, "\\\"");
			break;
		case '\\':
			puts_raw(j, "\\\\");
			break;
		case '\n':
			puts_raw(j, "\\n");
			break;
		case '\r':
			puts_raw(j, "\\r");
			break;
		case '\t':
			puts_raw(j, "\\t");
			break;
		default:
			if (*c < 0x20 || *c >= 0x7f) {
				puts_raw(j, "\\u00");
				put(j, hex[*c >> 4]);
				put(j, hex[*c & 0xf]);
			} else {
				put(j, (char)*c);
			}
		}
	}
	put(j, '"');
}

void er_json_key(struct er_json_s *j, const char *key)
{
	separate(j);
	quoted(j, key);
	put(j, ':');
	j->after_key = true;
}

void er_json_str(struct er_json_s *j, const char *s)
{
	separate(j);
	quoted(j, s);
}

void er_json_u64(struct er_json_s *j, uint64_t v)
{
	char dec[21];

	separate(j);
	er_u64_to_dec(v, dec);
	puts_raw(j, dec);
}

void er_json_i64(struct er_json_s *j, int64_t v)
{
	if (v < 0) {
		separate(j);
		put(j, '-');
		j->after_key = true; /* the digits follow without a separator */
		er_json_u64(j, (uint64_t)0 - (uint64_t)v);
	} else {
		er_json_u64(j, (uint64_t)v);
	}
}

void er_json_bool(struct er_json_s *j, bool v)
{
	separate(j);
	puts_raw(j, v ? "true" : "false");
}

void er_json_null(struct er_json_s *j)
{
	separate(j);
	puts_raw(j, "null");
}

void er_json_kv_str(struct er_json_s *j, const char *key, const char *v)
{
	er_json_key(j, key);
	er_json_str(j, v);
}

void er_json_kv_u64(struct er_json_s *j, const char *key, uint64_t v)
{
	er_json_key(j, key);
	er_json_u64(j, v);
}

void er_json_kv_i64(struct er_json_s *j, const char *key, int64_t v)
{
	er_json_key(j, key);
	er_json_i64(j, v);
}

void er_json_kv_bool(struct er_json_s *j, const char *key, bool v)
{
	er_json_key(j, key);
	er_json_bool(j, v);
}

int er_json_finish(struct er_json_s *j)
{
	put(j, '\n');
	if (j->flush != NULL) {
		j->flush(j->buf, j->len);
		j->len = 0;
	}
	if (j->overflow) {
		return -ENOSPC;
	}
	return j->depth == 0 ? 0 : -EINVAL;
}
