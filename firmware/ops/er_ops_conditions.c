/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The crypto library's options that change how fast an op runs, as the ops were compiled
 * (the same configuration header the library was built with), for hello's "conditions".
 * Documented in firmware/README.md ("What hello says about the conditions").
 */
#include "er_ops_conditions.h"

#include <mbedtls/bignum.h>
#include <mbedtls/ecp.h>

#include "er_mbedtls_compat.h"

#define ER_ON_OFF(set) ((set) ? "on" : "off")

#if defined(MBEDTLS_ECP_NIST_OPTIM)
#define ER_NIST_OPTIM 1
#else
#define ER_NIST_OPTIM 0
#endif
#if defined(MBEDTLS_HAVE_ASM)
#define ER_HAVE_ASM 1
#else
#define ER_HAVE_ASM 0
#endif
#if defined(MBEDTLS_AES_ROM_TABLES)
#define ER_AES_WHERE "rom"
#else
#define ER_AES_WHERE "ram"
#endif
#if defined(MBEDTLS_AES_FEWER_TABLES)
#define ER_AES_TABLES "fewer-" ER_AES_WHERE
#else
#define ER_AES_TABLES "full-" ER_AES_WHERE
#endif
#if defined(MBEDTLS_AESNI_C)
#define ER_AES_INSTRUCTIONS "aesni"
#elif defined(MBEDTLS_AESCE_C)
#define ER_AES_INSTRUCTIONS "aesce"
#else
#define ER_AES_INSTRUCTIONS "none"
#endif
#if defined(MBEDTLS_SHA256_SMALLER)
#define ER_SHA256 "smaller"
#else
#define ER_SHA256 "full"
#endif

const struct er_condition_s er_crypto_conditions[] = {
	{"mbedtls_ecp_nist_optim", ER_ON_OFF(ER_NIST_OPTIM), 0},
	{"mbedtls_have_asm", ER_ON_OFF(ER_HAVE_ASM), 0},
	{"mbedtls_aes_tables", ER_AES_TABLES, 0},
	{"mbedtls_aes_instructions", ER_AES_INSTRUCTIONS, 0},
	{"mbedtls_sha256", ER_SHA256, 0},
	{"mbedtls_mpi_window", NULL, MBEDTLS_MPI_WINDOW_SIZE},
	{"mbedtls_ecp_window", NULL, MBEDTLS_ECP_WINDOW_SIZE},
	{"mbedtls_ecp_fixed_point", ER_ON_OFF(MBEDTLS_ECP_FIXED_POINT_OPTIM), 0},
	{"sha3_impl", ER_SHA3_IMPL, 0},
	{NULL, NULL, 0},
};
