/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief RC4 (ARCFOUR) stream cipher, checked against RFC 6229.
 *
 * Written in the project because mbedTLS 3.x dropped ARC4. Encryption and decryption are the
 * same operation: XOR with the keystream.
 */
#ifndef ER_RC4_H_
#define ER_RC4_H_

#include <stddef.h>
#include <stdint.h>

/** Keystream generator state. */
struct er_rc4_s {
	uint8_t s[256];
	uint8_t i;
	uint8_t j;
};

/**
 * @brief Key schedule (KSA).
 * @param key_len 1 .. 256 bytes
 * @retval 0 keyed
 * @retval -EINVAL @p key_len out of range
 */
int er_rc4_setkey(struct er_rc4_s *ctx, const uint8_t *key, size_t key_len);

/**
 * @brief XOR @p len bytes of keystream into @p in, writing @p out (may equal @p in).
 * The keystream continues across calls.
 */
void er_rc4_crypt(struct er_rc4_s *ctx, const uint8_t *in, uint8_t *out, size_t len);

#endif /* ER_RC4_H_ */
