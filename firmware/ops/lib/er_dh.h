/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief Finite-field Diffie-Hellman over mbedTLS bignums, with the published groups the
 * dh-* ops measure.
 *
 * Written in the project because mbedtls_dhm has no groups below 2048 bits and its API
 * changed between 2.28 and 3.6; the arithmetic is two modular exponentiations, the same as
 * mbedtls_dhm_make_public / mbedtls_dhm_calc_secret without their blinding.
 * The bignum temporaries are allocated by mbedTLS on its heap during every call.
 */
#ifndef ER_DH_H_
#define ER_DH_H_

#include <stddef.h>
#include <stdint.h>

#include <mbedtls/bignum.h>

/** A published group: prime modulus p and generator g, big-endian hex. */
struct er_dh_group_s {
	uint16_t bits;
	const char *source; /**< where it is published */
	const char *p;
	const char *g;
};

/** The groups of the dh-* ops: 512, 768, 1024 and 2048 bits. */
extern const struct er_dh_group_s er_dh_groups[];
extern const size_t er_dh_n_groups;

/** @brief The group of @p bits bits, or NULL. */
const struct er_dh_group_s *er_dh_group(uint32_t bits);

/** A group and one party's key pair. */
struct er_dh_s {
	mbedtls_mpi p;
	mbedtls_mpi g;
	mbedtls_mpi x;  /**< private exponent */
	mbedtls_mpi y;  /**< public value g^x mod p */
	mbedtls_mpi rr; /**< mbedTLS's cache of R^2 mod p for modular exponentiation */
};

/** @brief Initialise every bignum of @p dh to zero. */
void er_dh_init(struct er_dh_s *dh);

/** @brief Free the bignums of @p dh. */
void er_dh_free(struct er_dh_s *dh);

/**
 * @brief Load p and g from big-endian hex.
 * @retval 0 or a negative errno
 */
int er_dh_load(struct er_dh_s *dh, const char *p_hex, const char *g_hex);

/**
 * @brief y = g^x mod p for the private exponent x already in @p dh.
 * @retval 0 or a negative errno
 */
int er_dh_public(struct er_dh_s *dh);

/**
 * @brief A fresh key pair: x of exactly bitlen(p) - 1 bits from @p f_rng (the full-size
 * exponent mbedtls_dhm_make_public uses), then y.
 * @retval 0 or a negative errno
 */
int er_dh_keygen(struct er_dh_s *dh, int (*f_rng)(void *, unsigned char *, size_t),
		 void *p_rng);

/**
 * @brief The shared secret z = peer^x mod p.
 * @retval 0 computed
 * @retval -EINVAL @p peer is outside [2, p-2] (NIST SP 800-56A partial validation)
 * @retval -ENOMEM the library's heap was exhausted
 */
int er_dh_shared(struct er_dh_s *dh, const mbedtls_mpi *peer, mbedtls_mpi *z);

#endif /* ER_DH_H_ */
