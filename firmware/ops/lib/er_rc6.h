/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief RC6-32/20/b block cipher (128-bit blocks, 20 rounds), as in Rivest, Robshaw,
 * Sidney, Yin, "The RC6 Block Cipher" (AES submission, 1998), checked against the paper's
 * vectors for 16-, 24- and 32-byte keys.
 */
#ifndef ER_RC6_H_
#define ER_RC6_H_

#include <stddef.h>
#include <stdint.h>

#include "er_block.h"

#define ER_RC6_ROUNDS 20U
#define ER_RC6_BLOCK 16U

/** Expanded key table S[0 .. 2r+3]. */
struct er_rc6_s {
	uint32_t s[2U * ER_RC6_ROUNDS + 4U];
};

/**
 * @brief Expand a key of @p key_len bytes (the catalogue uses 16, 24 and 32).
 * @retval 0 keyed
 * @retval -EINVAL @p key_len above 255
 */
int er_rc6_setkey(struct er_rc6_s *ctx, const uint8_t *key, size_t key_len);

/** @brief Encrypt one 16-byte block; @p out may equal @p in. */
void er_rc6_encrypt(const struct er_rc6_s *ctx, const uint8_t in[ER_RC6_BLOCK],
		    uint8_t out[ER_RC6_BLOCK]);

/** @brief Decrypt one 16-byte block; @p out may equal @p in. */
void er_rc6_decrypt(const struct er_rc6_s *ctx, const uint8_t in[ER_RC6_BLOCK],
		    uint8_t out[ER_RC6_BLOCK]);

/** The same cipher through er_block.h (context: struct er_rc6_s). */
extern const struct er_block_cipher_s er_rc6_block;

#endif /* ER_RC6_H_ */
