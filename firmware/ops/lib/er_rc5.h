/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief RC5-32/12/b block cipher (64-bit blocks, 12 rounds), as in Rivest, "The RC5
 * Encryption Algorithm" (1994), checked against the paper's RC5-32/12/16 vectors.
 */
#ifndef ER_RC5_H_
#define ER_RC5_H_

#include <stddef.h>
#include <stdint.h>

#include "er_block.h"

#define ER_RC5_ROUNDS 12U
#define ER_RC5_BLOCK 8U

/** Expanded key table S[0 .. 2r+1]. */
struct er_rc5_s {
	uint32_t s[2U * ER_RC5_ROUNDS + 2U];
};

/**
 * @brief Expand a key of @p key_len bytes (the catalogue uses 16).
 * @retval 0 keyed
 * @retval -EINVAL @p key_len above 255
 */
int er_rc5_setkey(struct er_rc5_s *ctx, const uint8_t *key, size_t key_len);

/** @brief Encrypt one 8-byte block; @p out may equal @p in. */
void er_rc5_encrypt(const struct er_rc5_s *ctx, const uint8_t in[ER_RC5_BLOCK],
		    uint8_t out[ER_RC5_BLOCK]);

/** @brief Decrypt one 8-byte block; @p out may equal @p in. */
void er_rc5_decrypt(const struct er_rc5_s *ctx, const uint8_t in[ER_RC5_BLOCK],
		    uint8_t out[ER_RC5_BLOCK]);

/** The same cipher through er_block.h (context: struct er_rc5_s). */
extern const struct er_block_cipher_s er_rc5_block;

#endif /* ER_RC5_H_ */
