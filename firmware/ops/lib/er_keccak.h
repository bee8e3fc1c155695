/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief Keccak-f[1600] and the SHA-3 hash functions of FIPS 202, checked against the
 * NIST FIPS 202 example values.
 *
 * Used where the crypto library lacks SHA-3: Debian's mbedTLS 2.28 on the host always,
 * mbedTLS 3.6 when it is built without MBEDTLS_SHA3_C (see er_mbedtls_compat.h).
 */
#ifndef ER_KECCAK_H_
#define ER_KECCAK_H_

#include <stddef.h>
#include <stdint.h>

/** Lanes of the 1600-bit state. */
#define ER_KECCAK_LANES 25U

/** @brief The permutation Keccak-f[1600] (24 rounds) on the state @p a, lane x+5y at a[x+5y]. */
void er_keccak_f1600(uint64_t a[ER_KECCAK_LANES]);

/**
 * @brief SHA3-224/256/384/512 of @p len bytes at @p in.
 * @param digest_bytes 28, 32, 48 or 64: selects the function
 * @param[out] out @p digest_bytes bytes
 * @retval 0 done
 * @retval -EINVAL @p digest_bytes names no SHA-3 function
 */
int er_keccak_sha3(size_t digest_bytes, const uint8_t *in, size_t len, uint8_t *out);

#endif /* ER_KECCAK_H_ */
