/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Benchmark: the primitives written in this project (firmware/ops/lib) side by side with a
 * reference implementation of the same algorithm on the host:
 *   er_rc4         vs mbedTLS 2.28's ARC4 (mbedtls_arc4_crypt)
 *   er_keccak SHA3 vs OpenSSL 3's EVP SHA3-256 / SHA3-512
 * and, for scale, RC5-32/12 and RC6-32/20 in ECB against mbedTLS AES-128-ECB.
 * Throughput is MB/s of CPU time of this process (CLOCK_PROCESS_CPUTIME_ID), best of 7, over
 * a 1 MiB payload and over a 64-byte one (per-call overhead). Also prints the state sizes.
 *
 * Build and run: benchmarks/ops_primitives.sh
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mbedtls/aes.h>
#include <mbedtls/arc4.h>
#include <openssl/evp.h>

#include "lib/er_keccak.h"
#include "lib/er_rc4.h"
#include "lib/er_rc5.h"
#include "lib/er_rc6.h"

#define BIG (1024U * 1024U)
#define SMALL 64U
#define REPEATS 7

static uint8_t in[BIG];
static uint8_t out[BIG];
static volatile uint8_t sink;

static struct er_rc4_s er_rc4;
static mbedtls_arc4_context mb_arc4;
static struct er_rc5_s er_rc5;
static struct er_rc6_s er_rc6;
static mbedtls_aes_context mb_aes;
static EVP_MD_CTX *evp;

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void run_er_rc4(size_t len)
{
	er_rc4_crypt(&er_rc4, in, out, len);
}

static void run_mb_arc4(size_t len)
{
	mbedtls_arc4_crypt(&mb_arc4, len, in, out);
}

static void run_er_sha3_256(size_t len)
{
	er_keccak_sha3(32, in, len, out);
}

static void run_er_sha3_512(size_t len)
{
	er_keccak_sha3(64, in, len, out);
}

static void run_evp(const EVP_MD *md, size_t len)
{
	unsigned int n;

	EVP_DigestInit_ex(evp, md, NULL);
	EVP_DigestUpdate(evp, in, len);
	EVP_DigestFinal_ex(evp, out, &n);
}

static void run_evp_sha3_256(size_t len)
{
	run_evp(EVP_sha3_256(), len);
}

static void run_evp_sha3_512(size_t len)
{
	run_evp(EVP_sha3_512(), len);
}

static void run_er_rc5(size_t len)
{
	for (size_t off = 0; off < len; off += ER_RC5_BLOCK) {
		er_rc5_encrypt(&er_rc5, in + off, out + off);
	}
}

static void run_er_rc6(size_t len)
{
	for (size_t off = 0; off < len; off += ER_RC6_BLOCK) {
		er_rc6_encrypt(&er_rc6, in + off, out + off);
	}
}

static void run_mb_aes(size_t len)
{
	for (size_t off = 0; off < len; off += 16U) {
		mbedtls_aes_crypt_ecb(&mb_aes, MBEDTLS_AES_ENCRYPT, in + off, out + off);
	}
}

/* Best-of-REPEATS throughput in MB/s over calls of @p len bytes, ~BIG bytes per repeat. */
static double mb_per_s(void (*fn)(size_t), size_t len)
{
	double best = 1e30;
	size_t calls = BIG / len;

	for (int r = 0; r < REPEATS; r++) {
		double t0 = cpu_s();

		for (size_t c = 0; c < calls; c++) {
			fn(len);
			sink ^= out[0];
		}
		double t = cpu_s() - t0;

		best = t < best ? t : best;
	}
	return (double)(calls * len) / best / 1e6;
}

struct row_s {
	const char *name;
	void (*ours)(size_t);
	const char *ref_name;
	void (*ref)(size_t);
};

int main(void)
{
	static const uint8_t key[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
	const struct row_s rows[] = {
		{"rc4 (er_rc4)", run_er_rc4, "mbedtls_arc4", run_mb_arc4},
		{"sha3-256 (er_keccak)", run_er_sha3_256, "openssl EVP_sha3_256", run_evp_sha3_256},
		{"sha3-512 (er_keccak)", run_er_sha3_512, "openssl EVP_sha3_512", run_evp_sha3_512},
		{"rc5-32/12 ecb (er_rc5)", run_er_rc5, "mbedtls aes-128 ecb", run_mb_aes},
		{"rc6-32/20 ecb (er_rc6)", run_er_rc6, "mbedtls aes-128 ecb", run_mb_aes},
	};

	for (size_t i = 0; i < BIG; i++) {
		in[i] = (uint8_t)(i * 131U + 7U);
	}
	er_rc4_setkey(&er_rc4, key, 16);
	mbedtls_arc4_init(&mb_arc4);
	mbedtls_arc4_setup(&mb_arc4, key, 16);
	er_rc5_setkey(&er_rc5, key, 16);
	er_rc6_setkey(&er_rc6, key, 16);
	mbedtls_aes_init(&mb_aes);
	mbedtls_aes_setkey_enc(&mb_aes, key, 128);
	evp = EVP_MD_CTX_new();

	printf("%-24s %10s %10s   %-22s %10s %10s\n", "ours", "1MiB MB/s", "64B MB/s", "reference",
	       "1MiB MB/s", "64B MB/s");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		printf("%-24s %10.1f %10.1f   %-22s %10.1f %10.1f\n", rows[i].name,
		       mb_per_s(rows[i].ours, BIG), mb_per_s(rows[i].ours, SMALL), rows[i].ref_name,
		       mb_per_s(rows[i].ref, BIG), mb_per_s(rows[i].ref, SMALL));
	}
	printf("state bytes: er_rc4 %zu, mbedtls_arc4 %zu, er_rc5 %zu, er_rc6 %zu, "
	       "er_keccak (on stack) %zu\n",
	       sizeof(struct er_rc4_s), sizeof(mbedtls_arc4_context), sizeof(struct er_rc5_s),
	       sizeof(struct er_rc6_s), (size_t)ER_KECCAK_LANES * 8U);
	EVP_MD_CTX_free(evp);
	mbedtls_arc4_free(&mb_arc4);
	mbedtls_aes_free(&mb_aes);
	return 0;
}
