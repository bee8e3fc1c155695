/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief Helpers shared by the public-key ops (RSA, DSA, DH, ECC, iot-join): published
 * vectors into bignums, mbedTLS errors into errno values, results into er_sink, and the
 * X25519 scalar and point encodings of RFC 7748 over mbedTLS's Curve25519 group.
 */
#ifndef ER_PK_H_
#define ER_PK_H_

#include <stddef.h>
#include <stdint.h>

#include <mbedtls/bignum.h>
#include <mbedtls/ecp.h>

/** Largest bignum a vector holds here: a 4096-bit RSA modulus. */
#define ER_PK_MAX_BYTES 512U

/** Bytes of an X25519 scalar, u-coordinate and shared secret (RFC 7748). */
#define ER_PK_X25519_BYTES 32U

/**
 * @brief Load the big-endian hex vector @p hex (spaces allowed) into @p x.
 * @retval 0 loaded
 * @retval -EINVAL not hex, or longer than ER_PK_MAX_BYTES
 * @retval -ENOMEM the bignum could not grow
 */
int er_pk_mpi_hex(mbedtls_mpi *x, const char *hex);

/**
 * @brief Compare @p x with the big-endian hex vector @p hex.
 * @retval 0 equal
 * @retval -EIO different, or @p hex unreadable
 */
int er_pk_check_mpi(const mbedtls_mpi *x, const char *hex);

/**
 * @brief An mbedTLS return code as a negative errno.
 * @retval 0 @p ret was 0
 * @retval -ENOMEM the library's heap was exhausted
 * @retval -EBADMSG a signature or padding did not verify
 * @retval -EIO any other failure
 */
int er_pk_err(int ret);

/** @brief Fold the low byte of @p x into er_sink. */
void er_pk_sink_mpi(const mbedtls_mpi *x);

/**
 * @brief decodeScalar25519 of RFC 7748 section 5: @p k little-endian, clamped, into @p d.
 * @retval 0 or a negative errno
 */
int er_pk_x25519_scalar(mbedtls_mpi *d, const uint8_t k[ER_PK_X25519_BYTES]);

/**
 * @brief X25519(@p k, @p u) of RFC 7748 with mbedTLS's Curve25519 group @p grp.
 * @param[out] out the u-coordinate of the result, little-endian
 * @retval 0 or a negative errno
 */
int er_pk_x25519(mbedtls_ecp_group *grp, const uint8_t k[ER_PK_X25519_BYTES],
		 const uint8_t u[ER_PK_X25519_BYTES], uint8_t out[ER_PK_X25519_BYTES]);

/**
 * @brief Known answer of RFC 7748 section 6.1: both public keys from their private keys
 * and the shared secret from both sides.
 * @retval 0 pass
 * @retval -EIO a value differs from the RFC
 */
int er_pk_x25519_selftest(void);

#endif /* ER_PK_H_ */
