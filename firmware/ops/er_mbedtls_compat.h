/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief The one place that absorbs the differences between the mbedTLS versions the ops
 * build against: Debian's 2.28 on the host and the 3.6 LTS of Zephyr's module.
 *
 * Ops call the @c er_mbedtls_* names below and the legacy mbedTLS API that is the same in
 * both (mbedtls_aes_*, mbedtls_gcm_*, mbedtls_chachapoly_*, mbedtls_md_*). Everything is
 * keyed on MBEDTLS_VERSION_NUMBER and on the library's own MBEDTLS_*_C switches, never on
 * the platform.
 */
#ifndef ER_MBEDTLS_COMPAT_H_
#define ER_MBEDTLS_COMPAT_H_

#include <stddef.h>
#include <stdint.h>

/* 2.28: version.h pulls in config.h; 3.x: it pulls in build_info.h. Either way the
 * MBEDTLS_*_C switches are defined after this include. */
#include <mbedtls/version.h>

#if MBEDTLS_VERSION_NUMBER < 0x021C0000
#error "the energyrig ops are written for mbedTLS 2.28 (host) and 3.6 (Zephyr)"
#endif

#if defined(MBEDTLS_MD5_C)
#include <mbedtls/md5.h>
#endif
#if defined(MBEDTLS_SHA1_C)
#include <mbedtls/sha1.h>
#endif
#if defined(MBEDTLS_SHA256_C)
#include <mbedtls/sha256.h>
#endif
#if defined(MBEDTLS_SHA512_C)
#include <mbedtls/sha512.h>
#endif

/*
 * One-shot hashes. 2.x names the int-returning forms *_ret (the plain names return void and
 * are deprecated); 3.0 dropped the suffix and made the plain names return int.
 * All return 0 or a negative mbedTLS error code.
 */
#if MBEDTLS_VERSION_NUMBER < 0x03000000
#define er_mbedtls_md5(in, len, out) mbedtls_md5_ret((in), (len), (out))
#define er_mbedtls_sha1(in, len, out) mbedtls_sha1_ret((in), (len), (out))
#define er_mbedtls_sha256(in, len, out) mbedtls_sha256_ret((in), (len), (out), 0)
#define er_mbedtls_sha512(in, len, out) mbedtls_sha512_ret((in), (len), (out), 0)
#else
#define er_mbedtls_md5(in, len, out) mbedtls_md5((in), (len), (out))
#define er_mbedtls_sha1(in, len, out) mbedtls_sha1((in), (len), (out))
#define er_mbedtls_sha256(in, len, out) mbedtls_sha256((in), (len), (out), 0)
#define er_mbedtls_sha512(in, len, out) mbedtls_sha512((in), (len), (out), 0)
#endif

/*
 * SHA-3. mbedTLS has it from 3.5 (mbedtls_sha3(), MBEDTLS_SHA3_C); Debian's 2.28 does not,
 * and Zephyr's Kconfig has no switch for it (it takes MBEDTLS_USER_CONFIG_FILE). Without it
 * the project's Keccak (ops/lib/er_keccak.c) computes the same FIPS 202 functions.
 * ER_SHA3_IMPL names the implementation that runs, for the catalogue and the reports.
 */
#if MBEDTLS_VERSION_NUMBER >= 0x03050000 && defined(MBEDTLS_SHA3_C)
#include <mbedtls/sha3.h>
#define ER_SHA3_IMPL "mbedtls"

static inline int er_sha3(size_t digest_bytes, const uint8_t *in, size_t len,
				  uint8_t *out)
{
	mbedtls_sha3_id id = digest_bytes == 28U   ? MBEDTLS_SHA3_224
			     : digest_bytes == 32U ? MBEDTLS_SHA3_256
			     : digest_bytes == 48U ? MBEDTLS_SHA3_384
			     : digest_bytes == 64U ? MBEDTLS_SHA3_512
						   : MBEDTLS_SHA3_NONE;

	return mbedtls_sha3(id, in, len, out, digest_bytes);
}
#else
#include "lib/er_keccak.h"
#define ER_SHA3_IMPL "er_keccak"

static inline int er_sha3(size_t digest_bytes, const uint8_t *in, size_t len,
				  uint8_t *out)
{
	return er_keccak_sha3(digest_bytes, in, len, out);
}
#endif

/*
 * RSA with PKCS#1 v1.5 (the public-key ops). 2.x takes the padding and hash in
 * mbedtls_rsa_init and a mode (MBEDTLS_RSA_PUBLIC / _PRIVATE) in every pkcs1 call; 3.0
 * dropped both (v1.5 is the default padding) and verify lost its f_rng. The f_rng of
 * decrypt and sign blinds the private operation in both.
 */
#if defined(MBEDTLS_RSA_C)
#include <mbedtls/rsa.h>
#if MBEDTLS_VERSION_NUMBER < 0x03000000
#define er_mbedtls_rsa_init(ctx) mbedtls_rsa_init((ctx), MBEDTLS_RSA_PKCS_V15, 0)
#define er_mbedtls_rsa_encrypt(ctx, f_rng, p_rng, ilen, in, out)                           \
	mbedtls_rsa_pkcs1_encrypt((ctx), (f_rng), (p_rng), MBEDTLS_RSA_PUBLIC, (ilen), (in), (out))
#define er_mbedtls_rsa_decrypt(ctx, f_rng, p_rng, olen, in, out, max)                      \
	mbedtls_rsa_pkcs1_decrypt((ctx), (f_rng), (p_rng), MBEDTLS_RSA_PRIVATE, (olen), (in),   \
				  (out), (max))
#define er_mbedtls_rsa_sign(ctx, f_rng, p_rng, md, hlen, hash, sig)                        \
	mbedtls_rsa_pkcs1_sign((ctx), (f_rng), (p_rng), MBEDTLS_RSA_PRIVATE, (md), (hlen),      \
			       (hash), (sig))
#define er_mbedtls_rsa_verify(ctx, md, hlen, hash, sig)                                    \
	mbedtls_rsa_pkcs1_verify((ctx), NULL, NULL, MBEDTLS_RSA_PUBLIC, (md), (hlen), (hash),   \
				 (sig))
#else
#define er_mbedtls_rsa_init(ctx) mbedtls_rsa_init(ctx)
#define er_mbedtls_rsa_encrypt(ctx, f_rng, p_rng, ilen, in, out)                           \
	mbedtls_rsa_pkcs1_encrypt((ctx), (f_rng), (p_rng), (ilen), (in), (out))
#define er_mbedtls_rsa_decrypt(ctx, f_rng, p_rng, olen, in, out, max)                      \
	mbedtls_rsa_pkcs1_decrypt((ctx), (f_rng), (p_rng), (olen), (in), (out), (max))
#define er_mbedtls_rsa_sign(ctx, f_rng, p_rng, md, hlen, hash, sig)                        \
	mbedtls_rsa_pkcs1_sign((ctx), (f_rng), (p_rng), (md), (hlen), (hash), (sig))
#define er_mbedtls_rsa_verify(ctx, md, hlen, hash, sig)                                    \
	mbedtls_rsa_pkcs1_verify((ctx), (md), (hlen), (hash), (sig))
#endif
#endif /* MBEDTLS_RSA_C */

#endif /* ER_MBEDTLS_COMPAT_H_ */
