/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief A bounded string builder over a caller's buffer (error messages). Never overflows:
 * text past the capacity is dropped and the result stays NUL-terminated.
 */
#ifndef ER_STR_H_
#define ER_STR_H_

#include <stddef.h>
#include <stdint.h>

struct er_str_s {
	char *buf;
	size_t cap; /**< bytes at buf, including the terminating NUL */
	size_t len;
};

/** @brief Start an empty string over @p cap bytes (cap >= 1). */
void er_str_init(struct er_str_s *s, char *buf, size_t cap);

/** @brief Append a C string. */
void er_str_cat(struct er_str_s *s, const char *text);

/** @brief Append at most @p max bytes of @p text. */
void er_str_catn(struct er_str_s *s, const char *text, size_t max);

/** @brief Append an unsigned decimal number. */
void er_str_u64(struct er_str_s *s, uint64_t v);

/** @brief Append a signed decimal number. */
void er_str_i64(struct er_str_s *s, int64_t v);

/**
 * @brief Format @p v in decimal.
 * @param[out] out at least 21 bytes
 * @return the number of digits written (NUL-terminated)
 */
size_t er_u64_to_dec(uint64_t v, char *out);

/**
 * @brief Parse a decimal number without sign, spaces or leading '+'.
 * @retval 0 parsed into @p out
 * @retval -EINVAL not a decimal number
 * @retval -ERANGE larger than @p max
 */
int er_parse_u64(const char *text, uint64_t max, uint64_t *out);

#endif /* ER_STR_H_ */
