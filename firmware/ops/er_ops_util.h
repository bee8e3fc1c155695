/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief What the op families share: buffers from the arena filled by er_drbg, folding a
 * result into er_sink, mbedTLS error codes as errno, and known-answer vectors of ciphers.
 */
#ifndef ER_OPS_UTIL_H_
#define ER_OPS_UTIL_H_

#include <stddef.h>
#include <stdint.h>

#include "er_arena.h"
#include "er_op.h"

/** The catalogue's payload bound; the port lowers it to what its arena holds. */
#define ER_OPS_PAYLOAD_MAX (1024U * 1024U)

/** Alignment of every buffer an op takes from the arena. */
#define ER_OPS_ALIGN 16U

/** Key sizes of AES and RC6. */
extern const uint16_t er_ops_key_bits_aes[];

/**
 * @brief Take @p len bytes from @p arena and fill them from er_drbg.
 * @retval 0 done
 * @retval -ENOMEM the arena is exhausted
 */
int er_ops_random_buffer(struct er_arena_s *arena, size_t len, uint8_t **buf);

/**
 * @brief The two buffers of a cipher: @p in (@p len bytes from er_drbg) and @p out.
 * @retval 0 done
 * @retval -ENOMEM the arena is exhausted
 */
int er_ops_cipher_buffers(struct er_arena_s *arena, size_t len, uint8_t **in, uint8_t **out);

/** @brief Keep a result alive: fold its last byte into er_sink. */
static inline void er_ops_fold(const uint8_t *out, size_t len)
{
	er_sink += out[len - 1U];
}

/**
 * @brief An mbedTLS return code as a negative errno.
 * @retval 0 @p ret was 0
 * @retval -EBADMSG an AEAD tag did not verify
 * @retval -EIO any other mbedTLS error
 */
int er_ops_mbedtls_errno(int ret);

/** A published known-answer vector of a cipher, in hex as printed in its source. */
struct er_cipher_kat_s {
	const char *key;
	const char *iv;  /**< IV, nonce or initial counter block; NULL: none */
	const char *aad; /**< additional authenticated data; NULL: none */
	const char *pt;
	const char *ct;
	const char *tag; /**< NULL: not an AEAD */
};

/** Longest plaintext of a vector (RFC 8439 2.8.2 has 114 bytes). */
#define ER_KAT_TEXT_MAX 128U

/** A vector decoded for one direction: @c in is what the cipher gets, @c expect its answer. */
struct er_cipher_kat_buf_s {
	uint8_t key[32];
	uint8_t iv[16];
	uint8_t aad[32];
	uint8_t in[ER_KAT_TEXT_MAX];
	uint8_t expect[ER_KAT_TEXT_MAX];
	uint8_t out[ER_KAT_TEXT_MAX];
	uint8_t tag[16];
	size_t key_len;
	size_t iv_len;
	size_t aad_len;
	size_t len;
	size_t tag_len;
};

/**
 * @brief Decode @p kat for encryption (in = pt, expect = ct) or decryption (in = ct,
 * expect = pt). The tag, if any, is decoded in both directions.
 * @retval 0 decoded
 * @retval -EINVAL the vector does not fit the buffers or is not hex
 */
int er_cipher_kat_load(const struct er_cipher_kat_s *kat, int encrypt,
		       struct er_cipher_kat_buf_s *buf);

#endif /* ER_OPS_UTIL_H_ */
