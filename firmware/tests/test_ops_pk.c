/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The public-key and composite families beyond their self-tests: every key size and curve
 * preps and runs; from the same seed an op computes the same thing and run takes nothing
 * from the arena; a self-test between prep and run leaves the prepared op alone; an arena
 * too small is -ENOMEM. And the in-project primitives: the DH groups are safe primes of
 * their size, both sides of DH agree, DSA signs deterministically and rejects altered or
 * out-of-range signatures, and the helpers map errors and clamp X25519 scalars.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <mbedtls/ecp.h>
#include <mbedtls/rsa.h>

#include "er_drbg.h"
#include "er_op.h"
#include "er_registry.h"
#include "er_test.h"
#include "lib/er_dh.h"
#include "lib/er_dsa.h"
#include "lib/er_pk.h"

/* The ops these tests cover: the catalogue's public-key and composite families. */
static int covered(const struct er_op_s *op)
{
	return strcmp(op->family, "public-key") == 0 || strcmp(op->family, "composite") == 0;
}

static const struct er_op_s *op_named(const char *name)
{
	const struct er_op_s *op = er_registry_find(&er_catalogue, name, ER_BACKEND_SOFTWARE);

	ER_CHECK(op != NULL);
	return op;
}

#define PAYLOAD 100U

static uint8_t arena_mem[64U * 1024U];

/* Prep @p op and run it once; the byte folded into er_sink through @p folded. */
static int prep_and_run(const struct er_op_s *op, const struct er_params_s *params,
			struct er_arena_s *arena, uint32_t *folded)
{
	er_arena_reset(arena);
	er_drbg_seed(&er_drbg, params->seed);
	int ret = op->prep(params, arena);
	size_t used = arena->used;
	uint32_t before = er_sink;

	if (ret == 0) {
		ret = op->run();
		*folded = er_sink - before;
		ER_CHECK_INT(arena->used, used);
	}
	return ret;
}

static struct er_params_s params_of(const struct er_op_s *op, uint32_t key_bits,
				    enum er_curve curve)
{
	struct er_params_s p = {.key_bits = key_bits, .curve = curve, .seed = 42};

	if (op->spec.payload_max != 0) {
		p.payload_bytes = op->spec.payload_max < PAYLOAD ? op->spec.payload_max : PAYLOAD;
	}
	return p;
}

/* One op at one parameter set: prep and run succeed, and at the smallest key size (RSA
 * keys of 3072 and 4096 bits take seconds to make) a second prep from the same seed folds
 * the same result. */
static void exercise(const struct er_op_s *op, uint32_t key_bits, enum er_curve curve,
		     int twice, struct er_arena_s *arena)
{
	struct er_params_s p = params_of(op, key_bits, curve);
	uint32_t first = 0, second = 0;
	int ret = prep_and_run(op, &p, arena, &first);

	if (ret != 0) {
		fprintf(stderr, "%s key_bits=%u curve=%d: %d\n", op->name, key_bits, curve, ret);
	}
	ER_CHECK_INT(ret, 0);
	if (twice) {
		ER_CHECK_INT(prep_and_run(op, &p, arena, &second), 0);
		ER_CHECK_INT(second, first);
	}
	op->release();
}

static void test_every_parameter(void)
{
	struct er_arena_s arena;
	const struct er_op_s *op;
	size_t n = 0;

	er_arena_init(&arena, arena_mem, sizeof(arena_mem));
	for (size_t i = 0; (op = er_registry_at(&er_catalogue, i)) != NULL; i++) {
		const uint16_t *kb = op->spec.key_bits;
		const enum er_curve *cv = op->spec.curves;

		if (!covered(op)) {
			continue;
		}
		n++;
		ER_CHECK_INT(op->selftest(), 0);
		if (kb != NULL) {
			for (size_t k = 0; kb[k] != 0; k++) {
				exercise(op, kb[k], ER_CURVE_NONE, k == 0, &arena);
			}
		} else if (cv != NULL) {
			for (size_t c = 0; cv[c] != ER_CURVE_NONE; c++) {
				exercise(op, 0, cv[c], 1, &arena);
			}
		} else {
			exercise(op, 0, ER_CURVE_NONE, 1, &arena);
		}
	}
	/* rsa 5, dsa 2, dh 2, ecdsa 3, ecdh 2, iot-join 1 */
	ER_CHECK_INT(n, 15);
}

/* Every self-test of the families between prep and run changes neither er_drbg's stream
 * nor the prepared state: the run folds what it folds without them. */
static void test_selftest_between_prep_and_run(void)
{
	struct er_arena_s arena;
	const struct er_op_s *op = op_named("ecdsa-sign");
	const struct er_op_s *other;
	struct er_params_s p = params_of(op, 0, ER_CURVE_P256);
	uint32_t plain = 0, disturbed = 0;

	er_arena_init(&arena, arena_mem, sizeof(arena_mem));
	ER_CHECK_INT(prep_and_run(op, &p, &arena, &plain), 0);
	er_arena_reset(&arena);
	er_drbg_seed(&er_drbg, p.seed);
	ER_CHECK_INT(op->prep(&p, &arena), 0);
	for (size_t i = 0; (other = er_registry_at(&er_catalogue, i)) != NULL; i++) {
		if (covered(other)) {
			ER_CHECK_INT(other->selftest(), 0);
		}
	}
	uint32_t before = er_sink;

	ER_CHECK_INT(op->run(), 0);
	disturbed = er_sink - before;
	ER_CHECK_INT(disturbed, plain);
	op->release();
}

static void test_arena_too_small(void)
{
	static uint8_t tiny[16];
	struct er_arena_s arena;
	const struct er_op_s *ops[] = {op_named("rsa-sign"), op_named("dsa-sign"),
				       op_named("ecdsa-sign"), op_named("iot-join")};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		const struct er_op_s *op = ops[i];
		const uint16_t *kb = op->spec.key_bits;
		const enum er_curve *cv = op->spec.curves;
		struct er_params_s p = params_of(op, kb ? kb[0] : 0, cv ? cv[0] : ER_CURVE_NONE);

		er_arena_init(&arena, tiny, sizeof(tiny));
		er_drbg_seed(&er_drbg, 1);
		ER_CHECK_INT(op->prep(&p, &arena), -ENOMEM);
		op->release();
	}
}

/* Each group of the dh ops is a safe prime of its nominal size with generator 2. */
static void test_dh_groups(void)
{
	struct er_drbg_s rng;
	mbedtls_mpi half;

	er_drbg_seed(&rng, 3526U);
	mbedtls_mpi_init(&half);
	ER_CHECK_INT(er_dh_n_groups, 4);
	for (size_t i = 0; i < er_dh_n_groups; i++) {
		const struct er_dh_group_s *g = &er_dh_groups[i];
		struct er_dh_s dh;

		er_dh_init(&dh);
		ER_CHECK(er_dh_group(g->bits) == g);
		ER_CHECK_INT(er_dh_load(&dh, g->p, g->g), 0);
		ER_CHECK_INT(mbedtls_mpi_bitlen(&dh.p), g->bits);
		ER_CHECK_INT(mbedtls_mpi_cmp_int(&dh.g, 2), 0);
		ER_CHECK_INT(mbedtls_mpi_is_prime_ext(&dh.p, 20, er_drbg_random, &rng), 0);
		ER_CHECK_INT(mbedtls_mpi_sub_int(&half, &dh.p, 1), 0);
		ER_CHECK_INT(mbedtls_mpi_shift_r(&half, 1), 0);
		ER_CHECK_INT(mbedtls_mpi_is_prime_ext(&half, 20, er_drbg_random, &rng), 0);
		er_dh_free(&dh);
	}
	ER_CHECK(er_dh_group(1536) == NULL);
	mbedtls_mpi_free(&half);
}

/* Two parties in every group reach the same secret; peers 1, p - 1 and p are refused. */
static void test_dh_agreement(void)
{
	struct er_drbg_s rng;

	er_drbg_seed(&rng, 2409U);
	for (size_t i = 0; i < er_dh_n_groups; i++) {
		struct er_dh_s a, b;
		mbedtls_mpi za, zb, bad;

		er_dh_init(&a);
		er_dh_init(&b);
		mbedtls_mpi_init(&za);
		mbedtls_mpi_init(&zb);
		mbedtls_mpi_init(&bad);
		ER_CHECK_INT(er_dh_load(&a, er_dh_groups[i].p, er_dh_groups[i].g), 0);
		ER_CHECK_INT(er_dh_load(&b, er_dh_groups[i].p, er_dh_groups[i].g), 0);
		ER_CHECK_INT(er_dh_keygen(&a, er_drbg_random, &rng), 0);
		ER_CHECK_INT(er_dh_keygen(&b, er_drbg_random, &rng), 0);
		/* A full-size exponent: exactly bitlen(p) - 1 bits. */
		ER_CHECK_INT(mbedtls_mpi_bitlen(&a.x), er_dh_groups[i].bits - 1U);
		ER_CHECK(mbedtls_mpi_cmp_mpi(&a.x, &b.x) != 0);
		ER_CHECK_INT(er_dh_shared(&a, &b.y, &za), 0);
		ER_CHECK_INT(er_dh_shared(&b, &a.y, &zb), 0);
		ER_CHECK_INT(mbedtls_mpi_cmp_mpi(&za, &zb), 0);
		ER_CHECK_INT(mbedtls_mpi_lset(&bad, 1), 0);
		ER_CHECK_INT(er_dh_shared(&a, &bad, &za), -EINVAL);
		ER_CHECK_INT(mbedtls_mpi_sub_int(&bad, &a.p, 1), 0);
		ER_CHECK_INT(er_dh_shared(&a, &bad, &za), -EINVAL);
		ER_CHECK_INT(er_dh_shared(&a, &a.p, &za), -EINVAL);
		mbedtls_mpi_free(&bad);
		mbedtls_mpi_free(&zb);
		mbedtls_mpi_free(&za);
		er_dh_free(&b);
		er_dh_free(&a);
	}
}

/* RFC 6979 A.2.1's domain (the 1024-bit dsa op's). */
static const char *const dsa_p =
	"86F5CA03DCFEB225063FF830A0C769B9DD9D6153AD91D7CE27F787C43278B447"
	"E6533B86B18BED6E8A48B784A14C252C5BE0DBF60B86D6385BD2F12FB763ED88"
	"73ABFD3F5BA2E0A8C0A59082EAC056935E529DAF7C610467899C77ADEDFC846C"
	"881870B7B19B2B58F9BE0521A17002E3BDD6B86685EE90B3D9A1B02B782B1779";
static const char *const dsa_q = "996F967F6C8E388D9E28D01E205FBA957A5698B1";
static const char *const dsa_g =
	"07B0F92546150B62514BB771E2A0C0CE387F03BDA6C56B505209FF25FD3C133D"
	"89BBCD97E904E09114D9A7DEFDEADFC9078EA544D2E401AEECC40BB9FBBF78FD"
	"87995A10A1C27CB7789B594BA7EFB5C4326A9FE59A070E136DB77175464ADCA4"
	"17BE5DCE2F40D10A46A3A3943F26AB7FD9C0398FF8C76EE0A56826A8A88F1DBD";

/* A random key signs; the same digest gives the same signature (RFC 6979); the signature
 * verifies, and fails with r or s altered, zero or equal to q, or under another digest. */
static void test_dsa(void)
{
	struct er_drbg_s rng;
	struct er_dsa_s key;
	mbedtls_mpi r, s, r2, s2, bad;
	uint8_t h[32];

	er_drbg_seed(&rng, 1864U);
	er_drbg_random(&rng, h, sizeof(h));
	er_dsa_init(&key);
	mbedtls_mpi_init(&r);
	mbedtls_mpi_init(&s);
	mbedtls_mpi_init(&r2);
	mbedtls_mpi_init(&s2);
	mbedtls_mpi_init(&bad);
	ER_CHECK_INT(er_dsa_load_domain(&key, dsa_p, dsa_q, dsa_g), 0);
	ER_CHECK_INT(er_dsa_keygen(&key, er_drbg_random, &rng), 0);
	ER_CHECK(mbedtls_mpi_cmp_int(&key.x, 0) > 0 && mbedtls_mpi_cmp_mpi(&key.x, &key.q) < 0);
	ER_CHECK_INT(er_dsa_sign(&key, MBEDTLS_MD_SHA256, h, sizeof(h), &r, &s), 0);
	ER_CHECK_INT(er_dsa_sign(&key, MBEDTLS_MD_SHA256, h, sizeof(h), &r2, &s2), 0);
	ER_CHECK_INT(mbedtls_mpi_cmp_mpi(&r, &r2), 0);
	ER_CHECK_INT(mbedtls_mpi_cmp_mpi(&s, &s2), 0);
	ER_CHECK_INT(er_dsa_verify(&key, h, sizeof(h), &r, &s), 0);
	ER_CHECK_INT(er_dsa_verify(&key, h, sizeof(h), &s, &r), -EBADMSG);
	ER_CHECK_INT(mbedtls_mpi_add_int(&bad, &r, 1), 0);
	ER_CHECK_INT(er_dsa_verify(&key, h, sizeof(h), &bad, &s), -EBADMSG);
	ER_CHECK_INT(er_dsa_verify(&key, h, sizeof(h), &r, &bad), -EBADMSG);
	ER_CHECK_INT(mbedtls_mpi_lset(&bad, 0), 0);
	ER_CHECK_INT(er_dsa_verify(&key, h, sizeof(h), &bad, &s), -EBADMSG);
	ER_CHECK_INT(er_dsa_verify(&key, h, sizeof(h), &r, &key.q), -EBADMSG);
	/* Only the leftmost N = 160 bits of the digest count (FIPS 186-4 4.6). */
	h[31] ^= 0x80U;
	ER_CHECK_INT(er_dsa_verify(&key, h, sizeof(h), &r, &s), 0);
	h[0] ^= 0x80U;
	ER_CHECK_INT(er_dsa_verify(&key, h, sizeof(h), &r, &s), -EBADMSG);
	ER_CHECK_INT(er_dsa_sign(&key, MBEDTLS_MD_NONE, h, sizeof(h), &r, &s), -EINVAL);
	mbedtls_mpi_free(&bad);
	mbedtls_mpi_free(&s2);
	mbedtls_mpi_free(&r2);
	mbedtls_mpi_free(&s);
	mbedtls_mpi_free(&r);
	er_dsa_free(&key);
}

static void test_pk_helpers(void)
{
	static const uint8_t ones[ER_PK_X25519_BYTES] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	mbedtls_mpi x;

	ER_CHECK_INT(er_pk_err(0), 0);
	ER_CHECK_INT(er_pk_err(MBEDTLS_ERR_MPI_ALLOC_FAILED), -ENOMEM);
	ER_CHECK_INT(er_pk_err(MBEDTLS_ERR_RSA_PRIVATE_FAILED + MBEDTLS_ERR_MPI_ALLOC_FAILED),
		     -ENOMEM);
	ER_CHECK_INT(er_pk_err(MBEDTLS_ERR_ECP_ALLOC_FAILED), -ENOMEM);
	ER_CHECK_INT(er_pk_err(MBEDTLS_ERR_RSA_VERIFY_FAILED), -EBADMSG);
	ER_CHECK_INT(er_pk_err(MBEDTLS_ERR_ECP_VERIFY_FAILED), -EBADMSG);
	ER_CHECK_INT(er_pk_err(MBEDTLS_ERR_MPI_BAD_INPUT_DATA), -EIO);

	mbedtls_mpi_init(&x);
	ER_CHECK_INT(er_pk_mpi_hex(&x, "01 00"), 0);
	ER_CHECK_INT(mbedtls_mpi_cmp_int(&x, 256), 0);
	ER_CHECK_INT(er_pk_check_mpi(&x, "0100"), 0);
	ER_CHECK_INT(er_pk_check_mpi(&x, "0101"), -EIO);
	ER_CHECK_INT(er_pk_check_mpi(&x, "01x0"), -EIO);
	ER_CHECK_INT(er_pk_mpi_hex(&x, "abc"), -EINVAL);
	/* decodeScalar25519: bits 0, 1, 2 and 255 cleared, bit 254 set. */
	ER_CHECK_INT(er_pk_x25519_scalar(&x, ones), 0);
	ER_CHECK_INT(mbedtls_mpi_bitlen(&x), 255);
	ER_CHECK_INT(mbedtls_mpi_lsb(&x), 3);
	mbedtls_mpi_free(&x);
	ER_CHECK_INT(er_pk_x25519_selftest(), 0);
}

int main(void)
{
	ER_RUN(test_every_parameter);
	ER_RUN(test_selftest_between_prep_and_run);
	ER_RUN(test_arena_too_small);
	ER_RUN(test_dh_groups);
	ER_RUN(test_dh_agreement);
	ER_RUN(test_dsa);
	ER_RUN(test_pk_helpers);
	return er_test_summary();
}
