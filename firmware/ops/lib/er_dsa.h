/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief DSA (FIPS 186-4 section 4) over mbedTLS bignums, with the deterministic nonce of
 * RFC 6979 section 3.2, checked against RFC 6979 appendix A.2.
 *
 * Written in the project because mbedTLS has no DSA. The nonce k comes from HMAC_DRBG over
 * the private key and the message digest (RFC 6979), so a signature is a known answer.
 * The bignum temporaries are allocated by mbedTLS on its heap during every call.
 */
#ifndef ER_DSA_H_
#define ER_DSA_H_

#include <stddef.h>
#include <stdint.h>

#include <mbedtls/bignum.h>
#include <mbedtls/md.h>

/** Domain parameters (p, q, g) and a key pair (x, y). */
struct er_dsa_s {
	mbedtls_mpi p;
	mbedtls_mpi q;
	mbedtls_mpi g;
	mbedtls_mpi x; /**< private key, 0 < x < q */
	mbedtls_mpi y; /**< public key, g^x mod p */
	mbedtls_mpi rr; /**< mbedTLS's cache of R^2 mod p for modular exponentiation */
};

/** @brief Initialise every bignum of @p key to zero. */
void er_dsa_init(struct er_dsa_s *key);

/** @brief Free the bignums of @p key. */
void er_dsa_free(struct er_dsa_s *key);

/**
 * @brief Load domain parameters from big-endian hex (as published).
 * @retval 0 or a negative errno
 */
int er_dsa_load_domain(struct er_dsa_s *key, const char *p_hex, const char *q_hex,
		       const char *g_hex);

/**
 * @brief y = g^x mod p for the private key x already in @p key.
 * @retval 0 or a negative errno
 */
int er_dsa_public(struct er_dsa_s *key);

/**
 * @brief A fresh key pair: x uniform in [1, q-1] from @p f_rng, then y.
 * @retval 0 or a negative errno
 */
int er_dsa_keygen(struct er_dsa_s *key, int (*f_rng)(void *, unsigned char *, size_t),
		  void *p_rng);

/**
 * @brief Sign the digest @p hash (made with @p md) with k from RFC 6979.
 * @param[out] r,s the signature
 * @retval 0 signed
 * @retval -EINVAL @p md is not a hash mbedTLS has, or q is larger than 521 bits
 * @retval -ENOMEM the library's heap was exhausted
 */
int er_dsa_sign(struct er_dsa_s *key, mbedtls_md_type_t md, const uint8_t *hash,
		size_t hash_len, mbedtls_mpi *r, mbedtls_mpi *s);

/**
 * @brief Verify (r, s) on the digest @p hash with the public key y.
 * @retval 0 valid
 * @retval -EBADMSG not a valid signature
 * @retval -ENOMEM the library's heap was exhausted
 */
int er_dsa_verify(struct er_dsa_s *key, const uint8_t *hash, size_t hash_len,
		  const mbedtls_mpi *r, const mbedtls_mpi *s);

#endif /* ER_DSA_H_ */
