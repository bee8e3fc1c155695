/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief Mbed TLS options the ops need that Zephyr's Kconfig does not switch on.
 *
 * Included at the end of Zephyr's config-mbedtls.h (CONFIG_MBEDTLS_USER_CONFIG_FILE), after
 * its automatic dependencies, so every prerequisite is named here explicitly. The Kconfig
 * side (prj.conf) enables AES, GCM, CBC, CTR, ChaCha20-Poly1305, MD5, SHA-1/256/512, ECP
 * with ECDSA/ECDH and the curves.
 */
#ifndef ER_MBEDTLS_USER_CONFIG_H_
#define ER_MBEDTLS_USER_CONFIG_H_

/* SHA3-256/512 (sha3-*, iot-join): Mbed TLS 3.5+ has them, Zephyr's Kconfig has no switch. */
#define MBEDTLS_SHA3_C

/*
 * RSA with PKCS#1 v1.5 and key generation (rsa-*), and the bignum layer the project's DSA
 * and finite-field DH are written on. Defined here rather than through Kconfig because
 * Zephyr's config-mbedtls.h of the 4.1 line enables RSA only as a side effect of TLS key
 * exchanges; RSA needs the OID table (PKCS#1 v1.5 signatures encode the hash's OID).
 */
#define MBEDTLS_BIGNUM_C
#define MBEDTLS_OID_C
#define MBEDTLS_RSA_C
#define MBEDTLS_PKCS1_V15
#define MBEDTLS_GENPRIME

/*
 * ASN.1 parsing (ECDSA signatures, RSA's OID checks). Zephyr before 4.1 turns it on with
 * ECDSA and has no Kconfig switch for it; 4.1 added CONFIG_MBEDTLS_ASN1_PARSE_C. Defined
 * here, prj.conf configures on both.
 */
#define MBEDTLS_ASN1_PARSE_C

/*
 * The message digest layer (HMAC, PKCS#1 v1.5 signatures) and HMAC_DRBG (RFC 6979 nonces of
 * ECDSA and the project's DSA). Zephyr 4.0 switches them with CONFIG_MBEDTLS_MD and
 * CONFIG_MBEDTLS_HMAC_DRBG_ENABLED, which 4.3 deprecates (Kconfig.deprecated) for
 * CONFIG_MBEDTLS_MD_C and CONFIG_MBEDTLS_HMAC_DRBG_C, absent from 4.0; a deprecated symbol
 * is a Kconfig warning, which aborts the build. Defined here, prj.conf configures on both.
 */
#define MBEDTLS_MD_C
#define MBEDTLS_HMAC_DRBG_C

#endif /* ER_MBEDTLS_USER_CONFIG_H_ */
