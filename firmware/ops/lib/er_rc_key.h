/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief What RC5-32 and RC6-32 share: 32-bit word helpers and the key expansion.
 *
 * Rivest's RC5 paper (1994) and the RC6 AES submission (1998) use the same key schedule,
 * differing only in the size of the expanded table: 2r+2 words for RC5, 2r+4 for RC6.
 */
#ifndef ER_RC_KEY_H_
#define ER_RC_KEY_H_

#include <stddef.h>
#include <stdint.h>

/** Longest user key either cipher accepts, in bytes (the papers allow 0 .. 255). */
#define ER_RC_KEY_MAX 255U

static inline uint32_t er_rc_rotl(uint32_t x, uint32_t n)
{
	n &= 31U;
	return (x << n) | (x >> ((32U - n) & 31U));
}

static inline uint32_t er_rc_rotr(uint32_t x, uint32_t n)
{
	n &= 31U;
	return (x >> n) | (x << ((32U - n) & 31U));
}

/** Little-endian word load, the byte order both papers use. */
static inline uint32_t er_rc_load(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

static inline void er_rc_store(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/**
 * @brief Expand @p key into the table @p s of @p t words (magic constants P32, Q32; three
 * mixing passes over max(t, c) words).
 * @param t table size: 2r+2 (RC5) or 2r+4 (RC6), at most 64 words
 * @retval 0 expanded
 * @retval -EINVAL @p key_len above ER_RC_KEY_MAX or @p t above 64
 */
int er_rc_key_expand(uint32_t *s, size_t t, const uint8_t *key, size_t key_len);

#endif /* ER_RC_KEY_H_ */
