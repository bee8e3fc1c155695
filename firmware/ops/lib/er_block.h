/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief A block cipher of ops/lib seen through one untyped interface, so the ops and the
 * tests drive RC5 and RC6 with the same code.
 */
#ifndef ER_BLOCK_H_
#define ER_BLOCK_H_

#include <stddef.h>
#include <stdint.h>

struct er_block_cipher_s {
	size_t block; /**< block size in bytes */
	/**
	 * @brief Expand @p key into @p ctx (the cipher's own context type).
	 * @retval 0 keyed
	 * @retval -EINVAL key length not accepted
	 */
	int (*setkey)(void *ctx, const uint8_t *key, size_t key_len);
	/** @brief One block; @p out may equal @p in. */
	void (*encrypt)(const void *ctx, const uint8_t *in, uint8_t *out);
	/** @brief One block; @p out may equal @p in. */
	void (*decrypt)(const void *ctx, const uint8_t *in, uint8_t *out);
};

#endif /* ER_BLOCK_H_ */
