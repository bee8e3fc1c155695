/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief A small JSON writer into a fixed buffer. With a flush function the buffer is
 * handed on whenever it fills (a reply longer than the buffer streams out); without one,
 * text past the capacity is dropped and the writer reports the overflow.
 */
#ifndef ER_JSON_H_
#define ER_JSON_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ER_JSON_DEPTH 8

struct er_json_s {
	char *buf;
	size_t cap;
	size_t len;
	void (*flush)(const char *buf, size_t len);
	uint8_t depth;
	bool after_key;
	bool overflow;
	bool first[ER_JSON_DEPTH];
};

/**
 * @brief Start a document.
 * @param flush called with full buffers and at er_json_finish, or NULL to keep the text
 */
void er_json_init(struct er_json_s *j, char *buf, size_t cap,
		  void (*flush)(const char *buf, size_t len));

void er_json_obj_begin(struct er_json_s *j);
void er_json_obj_end(struct er_json_s *j);
void er_json_arr_begin(struct er_json_s *j);
void er_json_arr_end(struct er_json_s *j);

/** @brief Emit an object key; the next call emits its value. */
void er_json_key(struct er_json_s *j, const char *key);

/** @brief A string value, escaped (output is pure ASCII). */
void er_json_str(struct er_json_s *j, const char *s);
void er_json_u64(struct er_json_s *j, uint64_t v);
void er_json_i64(struct er_json_s *j, int64_t v);
void er_json_bool(struct er_json_s *j, bool v);
void er_json_null(struct er_json_s *j);

/** @brief key and value in one call. */
void er_json_kv_str(struct er_json_s *j, const char *key, const char *v);
void er_json_kv_u64(struct er_json_s *j, const char *key, uint64_t v);
void er_json_kv_i64(struct er_json_s *j, const char *key, int64_t v);
void er_json_kv_bool(struct er_json_s *j, const char *key, bool v);

/**
 * @brief End the line with '\n' and flush it.
 * @retval 0 the document is complete
 * @retval -ENOSPC text was dropped (no flush function and the buffer was too small)
 * @retval -EINVAL objects or arrays left open
 */
int er_json_finish(struct er_json_s *j);

#endif /* ER_JSON_H_ */
