/* SPDX-License-Identifier: Apache-2.0 */
#include "er_dsa.h"

#include <errno.h>

#include <mbedtls/hmac_drbg.h>

#include "er_pk.h"

/* Largest q in bytes (RFC 6979 allows any; FIPS 186-4 stops at 256 bits). */
#define ER_DSA_Q_MAX_BYTES 66U
/* Nonces drawn before giving up; each is rejected with probability below 2^-31. */
#define ER_DSA_NONCE_TRIES 16

void er_dsa_init(struct er_dsa_s *key)
{
	mbedtls_mpi_init(&key->p);
	mbedtls_mpi_init(&key->q);
	mbedtls_mpi_init(&key->g);
	mbedtls_mpi_init(&key->x);
	mbedtls_mpi_init(&key->y);
	mbedtls_mpi_init(&key->rr);
}

void er_dsa_free(struct er_dsa_s *key)
{
	mbedtls_mpi_free(&key->p);
	mbedtls_mpi_free(&key->q);
	mbedtls_mpi_free(&key->g);
	mbedtls_mpi_free(&key->x);
	mbedtls_mpi_free(&key->y);
	mbedtls_mpi_free(&key->rr);
}

int er_dsa_load_domain(struct er_dsa_s *key, const char *p_hex, const char *q_hex,
		       const char *g_hex)
{
	int ret = er_pk_mpi_hex(&key->p, p_hex);

	if (ret == 0) {
		ret = er_pk_mpi_hex(&key->q, q_hex);
	}
	if (ret == 0) {
		ret = er_pk_mpi_hex(&key->g, g_hex);
	}
	mbedtls_mpi_free(&key->rr); /* the cache belongs to the old p */
	return ret;
}

int er_dsa_public(struct er_dsa_s *key)
{
	return er_pk_err(mbedtls_mpi_exp_mod(&key->y, &key->g, &key->x, &key->p, &key->rr));
}

/* bits2int of RFC 6979 section 2.3.2: the leftmost qbits bits of @p buf as an integer. */
static int bits2int(mbedtls_mpi *out, const uint8_t *buf, size_t len, size_t qbits)
{
	int ret = mbedtls_mpi_read_binary(out, buf, len);

	if (ret == 0 && len * 8U > qbits) {
		ret = mbedtls_mpi_shift_r(out, len * 8U - qbits);
	}
	return ret;
}

int er_dsa_keygen(struct er_dsa_s *key, int (*f_rng)(void *, unsigned char *, size_t),
		  void *p_rng)
{
	size_t qbits = mbedtls_mpi_bitlen(&key->q);
	size_t qlen = (qbits + 7U) / 8U;
	int ret;

	/* Rejection sampling: draw qbits bits until the value lies in [1, q-1]. */
	do {
		ret = mbedtls_mpi_fill_random(&key->x, qlen, f_rng, p_rng);
		if (ret == 0 && qlen * 8U > qbits) {
			ret = mbedtls_mpi_shift_r(&key->x, qlen * 8U - qbits);
		}
	} while (ret == 0 && (mbedtls_mpi_cmp_int(&key->x, 1) < 0 ||
			      mbedtls_mpi_cmp_mpi(&key->x, &key->q) >= 0));
	return ret == 0 ? er_dsa_public(key) : er_pk_err(ret);
}

/* Seed HMAC_DRBG with int2octets(x) || bits2octets(h1) (RFC 6979 section 3.2, steps a-g,
 * which are HMAC_DRBG's instantiate with that seed). */
static int nonce_seed(mbedtls_hmac_drbg_context *drbg, const struct er_dsa_s *key,
		      const mbedtls_md_info_t *md_info, const mbedtls_mpi *z, size_t qlen)
{
	uint8_t seed[2U * ER_DSA_Q_MAX_BYTES];
	mbedtls_mpi h;
	int ret;

	mbedtls_mpi_init(&h);
	ret = mbedtls_mpi_mod_mpi(&h, z, &key->q);
	if (ret == 0) {
		ret = mbedtls_mpi_write_binary(&key->x, seed, qlen);
	}
	if (ret == 0) {
		ret = mbedtls_mpi_write_binary(&h, seed + qlen, qlen);
	}
	if (ret == 0) {
		ret = mbedtls_hmac_drbg_seed_buf(drbg, md_info, seed, 2U * qlen);
	}
	mbedtls_mpi_free(&h);
	return ret;
}

int er_dsa_sign(struct er_dsa_s *key, mbedtls_md_type_t md, const uint8_t *hash,
		size_t hash_len, mbedtls_mpi *r, mbedtls_mpi *s)
{
	const mbedtls_md_info_t *md_info = mbedtls_md_info_from_type(md);
	size_t qbits = mbedtls_mpi_bitlen(&key->q);
	size_t qlen = (qbits + 7U) / 8U;
	uint8_t buf[ER_DSA_Q_MAX_BYTES];
	mbedtls_hmac_drbg_context drbg;
	mbedtls_mpi z, k, kinv, t;
	int done = 0;
	int ret;

	if (md_info == NULL || qlen > ER_DSA_Q_MAX_BYTES) {
		return -EINVAL;
	}
	mbedtls_hmac_drbg_init(&drbg);
	mbedtls_mpi_init(&z);
	mbedtls_mpi_init(&k);
	mbedtls_mpi_init(&kinv);
	mbedtls_mpi_init(&t);
	MBEDTLS_MPI_CHK(bits2int(&z, hash, hash_len, qbits));
	MBEDTLS_MPI_CHK(nonce_seed(&drbg, key, md_info, &z, qlen));
	for (int tries = 0; !done && tries < ER_DSA_NONCE_TRIES; tries++) {
		/* Step h: T from HMAC_DRBG (which updates K and V after every draw, as h.3
		 * asks), k = bits2int(T), retried unless 0 < k < q. */
		MBEDTLS_MPI_CHK(mbedtls_hmac_drbg_random(&drbg, buf, qlen));
		MBEDTLS_MPI_CHK(bits2int(&k, buf, qlen, qbits));
		if (mbedtls_mpi_cmp_int(&k, 0) == 0 || mbedtls_mpi_cmp_mpi(&k, &key->q) >= 0) {
			continue;
		}
		/* r = (g^k mod p) mod q; s = k^-1 (z + x r) mod q; both must be non-zero. */
		MBEDTLS_MPI_CHK(mbedtls_mpi_exp_mod(&t, &key->g, &k, &key->p, &key->rr));
		MBEDTLS_MPI_CHK(mbedtls_mpi_mod_mpi(r, &t, &key->q));
		MBEDTLS_MPI_CHK(mbedtls_mpi_mul_mpi(&t, &key->x, r));
		MBEDTLS_MPI_CHK(mbedtls_mpi_add_mpi(&t, &t, &z));
		MBEDTLS_MPI_CHK(mbedtls_mpi_mod_mpi(&t, &t, &key->q));
		MBEDTLS_MPI_CHK(mbedtls_mpi_inv_mod(&kinv, &k, &key->q));
		MBEDTLS_MPI_CHK(mbedtls_mpi_mul_mpi(&t, &t, &kinv));
		MBEDTLS_MPI_CHK(mbedtls_mpi_mod_mpi(s, &t, &key->q));
		done = mbedtls_mpi_cmp_int(r, 0) != 0 && mbedtls_mpi_cmp_int(s, 0) != 0;
	}
cleanup:
	mbedtls_mpi_free(&t);
	mbedtls_mpi_free(&kinv);
	mbedtls_mpi_free(&k);
	mbedtls_mpi_free(&z);
	mbedtls_hmac_drbg_free(&drbg);
	if (ret == 0 && !done) {
		return -EIO;
	}
	return er_pk_err(ret);
}

/* 0 < v < q */
static int in_range(const mbedtls_mpi *v, const mbedtls_mpi *q)
{
	return mbedtls_mpi_cmp_int(v, 0) > 0 && mbedtls_mpi_cmp_mpi(v, q) < 0;
}

int er_dsa_verify(struct er_dsa_s *key, const uint8_t *hash, size_t hash_len,
		  const mbedtls_mpi *r, const mbedtls_mpi *s)
{
	mbedtls_mpi w, z, u1, u2, v;
	int valid = 0;
	int ret;

	if (!in_range(r, &key->q) || !in_range(s, &key->q)) {
		return -EBADMSG;
	}
	mbedtls_mpi_init(&w);
	mbedtls_mpi_init(&z);
	mbedtls_mpi_init(&u1);
	mbedtls_mpi_init(&u2);
	mbedtls_mpi_init(&v);
	/* w = s^-1, u1 = z w, u2 = r w (mod q); v = (g^u1 y^u2 mod p) mod q. */
	MBEDTLS_MPI_CHK(mbedtls_mpi_inv_mod(&w, s, &key->q));
	MBEDTLS_MPI_CHK(bits2int(&z, hash, hash_len, mbedtls_mpi_bitlen(&key->q)));
	MBEDTLS_MPI_CHK(mbedtls_mpi_mul_mpi(&u1, &z, &w));
	MBEDTLS_MPI_CHK(mbedtls_mpi_mod_mpi(&u1, &u1, &key->q));
	MBEDTLS_MPI_CHK(mbedtls_mpi_mul_mpi(&u2, r, &w));
	MBEDTLS_MPI_CHK(mbedtls_mpi_mod_mpi(&u2, &u2, &key->q));
	/* Outputs apart from the exponents: mbedTLS 3.6's exp_mod corrupts its heap when it
	 * writes over its own exponent (2.28 does not). */
	MBEDTLS_MPI_CHK(mbedtls_mpi_exp_mod(&w, &key->g, &u1, &key->p, &key->rr));
	MBEDTLS_MPI_CHK(mbedtls_mpi_exp_mod(&z, &key->y, &u2, &key->p, &key->rr));
	MBEDTLS_MPI_CHK(mbedtls_mpi_mul_mpi(&v, &w, &z));
	MBEDTLS_MPI_CHK(mbedtls_mpi_mod_mpi(&v, &v, &key->p));
	MBEDTLS_MPI_CHK(mbedtls_mpi_mod_mpi(&v, &v, &key->q));
	valid = mbedtls_mpi_cmp_mpi(&v, r) == 0;
cleanup:
	mbedtls_mpi_free(&v);
	mbedtls_mpi_free(&u2);
	mbedtls_mpi_free(&u1);
	mbedtls_mpi_free(&z);
	mbedtls_mpi_free(&w);
	if (ret == 0 && !valid) {
		return -EBADMSG;
	}
	return er_pk_err(ret);
}
