/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief Known-answer helpers: vectors are written in hex exactly as published (spaces
 * allowed), so each one can be compared character by character with its source.
 */
#ifndef ER_KAT_H_
#define ER_KAT_H_

#include <stddef.h>
#include <stdint.h>

/**
 * @brief Decode @p hex into @p out: pairs of digits, spaces between bytes skipped.
 * @return the number of bytes written
 * @retval -EINVAL odd number of digits or a character that is neither a digit nor a space
 * @retval -ENOSPC more than @p cap bytes
 */
int er_kat_unhex(uint8_t *out, size_t cap, const char *hex);

/**
 * @brief Compare @p len bytes at @p got with the vector @p hex.
 * @retval 0 equal, and @p hex holds exactly @p len bytes
 * @retval -EIO anything else
 */
int er_kat_check(const uint8_t *got, size_t len, const char *hex);

#endif /* ER_KAT_H_ */
