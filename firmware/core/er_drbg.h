/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief The deterministic generator behind every key, nonce and payload of a measurement.
 *
 * Same seed, same inputs: a measurement can be repeated bit for bit. The generator is
 * xoshiro256** seeded through splitmix64 — fast, portable and with no dependency on the
 * crypto library, but NOT a cryptographic DRBG: keys made from it are for measuring only.
 * Its signature is mbedTLS's f_rng, so ops pass (er_drbg_random, &er_drbg) to mbedTLS.
 */
#ifndef ER_DRBG_H_
#define ER_DRBG_H_

#include <stddef.h>
#include <stdint.h>

struct er_drbg_s {
	uint64_t s[4];
};

/** The generator the core seeds with a @c prep request's @c seed before op->prep. */
extern struct er_drbg_s er_drbg;

/** @brief Restart @p drbg from @p seed. */
void er_drbg_seed(struct er_drbg_s *drbg, uint32_t seed);

/**
 * @brief Fill @p out with @p len bytes (mbedTLS f_rng).
 * @param ctx a struct er_drbg_s
 * @retval 0 always
 */
int er_drbg_random(void *ctx, unsigned char *out, size_t len);

#endif /* ER_DRBG_H_ */
