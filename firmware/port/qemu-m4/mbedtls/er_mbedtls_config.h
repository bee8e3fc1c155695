/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief Mbed TLS 3.6 configuration of the MPS2 AN386 port (MBEDTLS_CONFIG_FILE).
 *
 * What Zephyr's config-mbedtls.h makes of firmware/prj.conf's Mbed TLS options, written out
 * for a build without Zephyr; the rest comes from the same user config file the Zephyr
 * boards take (port/zephyr/mbedtls/er_mbedtls_user_config.h, MBEDTLS_USER_CONFIG_FILE).
 * So hello's conditions read as a board's: NIST reduction and the bignum assembly on, AES
 * tables full in RAM, full SHA-256, Mbed TLS's default windows.
 */
#ifndef ER_MBEDTLS_CONFIG_H_
#define ER_MBEDTLS_CONFIG_H_

/* CONFIG_MBEDTLS_HAVE_ASM, CONFIG_MBEDTLS_ECP_NIST_OPTIM */
#define MBEDTLS_HAVE_ASM
#define MBEDTLS_ECP_NIST_OPTIM

/* CONFIG_MBEDTLS_ENABLE_HEAP: Mbed TLS allocates from its own buffer */
#define MBEDTLS_PLATFORM_C
#define MBEDTLS_PLATFORM_MEMORY
#define MBEDTLS_MEMORY_BUFFER_ALLOC_C
#define MBEDTLS_NO_PLATFORM_ENTROPY

/* Symmetric: AES (ECB, CBC, CTR, GCM), ChaCha20-Poly1305 */
#define MBEDTLS_CIPHER_C
#define MBEDTLS_AES_C
#define MBEDTLS_CIPHER_MODE_CBC
#define MBEDTLS_CIPHER_MODE_CTR
#define MBEDTLS_GCM_C
#define MBEDTLS_CHACHA20_C
#define MBEDTLS_POLY1305_C
#define MBEDTLS_CHACHAPOLY_C

/* Hashes (CONFIG_MBEDTLS_SHA256_SMALLER=n: the full SHA-256) */
#define MBEDTLS_MD5_C
#define MBEDTLS_SHA1_C
#define MBEDTLS_SHA224_C
#define MBEDTLS_SHA256_C
#define MBEDTLS_SHA384_C
#define MBEDTLS_SHA512_C

/* Elliptic curves */
#define MBEDTLS_ASN1_WRITE_C
#define MBEDTLS_ECP_C
#define MBEDTLS_ECDSA_C
#define MBEDTLS_ECDSA_DETERMINISTIC
#define MBEDTLS_ECDH_C
#define MBEDTLS_ECP_DP_SECP256R1_ENABLED
#define MBEDTLS_ECP_DP_SECP384R1_ENABLED
#define MBEDTLS_ECP_DP_SECP256K1_ENABLED
#define MBEDTLS_ECP_DP_CURVE25519_ENABLED

#endif /* ER_MBEDTLS_CONFIG_H_ */
