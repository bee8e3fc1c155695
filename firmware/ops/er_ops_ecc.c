/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief ecdsa-keygen, ecdsa-sign, ecdsa-verify (curves p256, p384, secp256k1) and
 * ecdh-keygen, ecdh-shared (curves p256, x25519) with mbedTLS's ECP module.
 *
 * ECDSA signs the SHA-256 digest of a payload_bytes message with the deterministic nonce of
 * RFC 6979 (mbedtls_ecdsa_sign_det_ext), on every curve; verify checks a signature made in
 * prep. Key pairs and peers come from er_drbg in prep; the keygen ops make one new key pair
 * per run. prep does one point multiplication by the generator first, so the comb table
 * mbedTLS caches in the group is built outside the window.
 *
 * Self-tests: public keys from private keys and RFC 6979 signatures of "sample" (A.2.5 P-256,
 * A.2.6 P-384); for secp256k1 the Bitcoin wiki key ("Technical background of version 1
 * Bitcoin addresses") and the RFC 6979 vector of private key 1 and "Satoshi Nakamoto"
 * (bitcointalk topic 285142, published with s normalised to the lower of s and n - s);
 * ECDH: RFC 5903 section 8.1 for P-256, RFC 7748 section 6.1 for X25519.
 * mbedTLS allocates its bignum temporaries on its own heap inside every run: that is the
 * library's arithmetic, not the op's buffers.
 */
#include <errno.h>
#include <string.h>

#include <mbedtls/ecdh.h>
#include <mbedtls/ecdsa.h>

#include "er_drbg.h"
#include "er_mbedtls_compat.h"
#include "er_op.h"
#include "er_ops_util.h"
#include "lib/er_kat.h"
#include "lib/er_pk.h"

#define ECC_HASH_BYTES 32U
/* An uncompressed point of the largest curve here (P-384): 04 || X || Y. */
#define ECC_POINT_MAX (1U + 2U * 48U)

/** A key pair and an RFC 6979 signature (SHA-256) published for a curve. */
struct ecdsa_kat_s {
	enum er_curve curve;
	const char *key_d; /**< private key ... */
	const char *key_q; /**< ... and its public key, 04 || X || Y */
	const char *sig_d; /**< the signer's private key */
	const char *msg;   /**< the message, as text */
	const char *r, *s;
	int low_s; /**< the published s is min(s, n - s) */
};

static const struct ecdsa_kat_s ecdsa_kats[] = {
	{
		/* RFC 6979 A.2.5, NIST P-256; signature with SHA-256, message "sample". */
		.curve = ER_CURVE_P256,
		.key_d = "C9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721",
		.key_q = "04"
			 "60FED4BA255A9D31C961EB74C6356D68C049B8923B61FA6CE669622E60F29FB6"
			 "7903FE1008B8BC99A41AE9E95628BC64F2F1B20C2D7E9F5177A3C294D4462299",
		.sig_d = "C9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721",
		.msg = "sample",
		.r = "EFD48B2AACB6A8FD1140DD9CD45E81D69D2C877B56AAF991C34D0EA84EAF3716",
		.s = "F7CB1C942D657C41D436C7A1B6E29F65F3E900DBB9AFF4064DC4AB2F843ACDA8",
	},
#if defined(MBEDTLS_ECP_DP_SECP384R1_ENABLED)
	{
		/* RFC 6979 A.2.6, NIST P-384; signature with SHA-256, message "sample". */
		.curve = ER_CURVE_P384,
		.key_d = "6B9D3DAD2E1B8C1C05B19875B6659F4DE23C3B667BF297BA"
			 "9AA47740787137D896D5724E4C70A825F872C9EA60D2EDF5",
		.key_q = "04"
			 "EC3A4E415B4E19A4568618029F427FA5DA9A8BC4AE92E02E"
			 "06AAE5286B300C64DEF8F0EA9055866064A254515480BC13"
			 "8015D9B72D7D57244EA8EF9AC0C621896708A59367F9DFB9"
			 "F54CA84B3F1C9DB1288B231C3AE0D4FE7344FD2533264720",
		.sig_d = "6B9D3DAD2E1B8C1C05B19875B6659F4DE23C3B667BF297BA"
			 "9AA47740787137D896D5724E4C70A825F872C9EA60D2EDF5",
		.msg = "sample",
		.r = "21B13D1E013C7FA1392D03C5F99AF8B30C570C6F98D4EA8E"
		     "354B63A21D3DAA33BDE1E888E63355D92FA2B3C36D8FB2CD",
		.s = "F3AA443FB107745BF4BD77CB3891674632068A10CA67E3D4"
		     "5DB2266FA7D1FEEBEFDC63ECCD1AC42EC0CB8668A4FA0AB0",
	},
#endif
#if defined(MBEDTLS_ECP_DP_SECP256K1_ENABLED)
	{
		/* secp256k1: the Bitcoin wiki's key; RFC 6979 with SHA-256, private key 1,
		 * message "Satoshi Nakamoto" (bitcointalk topic 285142). */
		.curve = ER_CURVE_SECP256K1,
		.key_d = "18E14A7B6A307F426A94F8114701E7C8E774E7F9A47E2C2035DB29A206321725",
		.key_q = "04"
			 "50863AD64A87AE8A2FE83C1AF1A8403CB53F53E486D8511DAD8A04887E5B2352"
			 "2CD470243453A299FA9E77237716103ABC11A1DF38855ED6F2EE187E9C582BA6",
		.sig_d = "01",
		.msg = "Satoshi Nakamoto",
		.r = "934b1ea10a4b3c1757e2b0c017d0b6143ce3c9a7e6a4a49860d7a6ab210ee3d8",
		.s = "2442ce9d2b916064108014783e923ec36b49743e2ffa1c4496f01a512aafd9e5",
		.low_s = 1,
	},
#endif
};

#define ECDSA_N_KATS (sizeof(ecdsa_kats) / sizeof(ecdsa_kats[0]))

/* RFC 5903 section 8.1 (256-bit random ECP group): i and r are the two private keys,
 * g^i and g^r their public keys, girx the x-coordinate of the shared secret. */
static const char *const rfc5903_i =
	"C88F01F510D9AC3F70A292DAA2316DE544E9AAB8AFE84049C62A9C57862D1433";
static const char *const rfc5903_gi = "04"
				      "DAD0B65394221CF9B051E1FECA5787D098DFE637FC90B9EF945D0C3772581180"
				      "5271A0461CDB8252D61F1C456FA3E59AB1F45B33ACCF5F58389E0577B8990BB3";
static const char *const rfc5903_r =
	"C6EF9C5D78AE012A011164ACB397CE2088685D8F06BF9BE0B283AB46476BEE53";
static const char *const rfc5903_gr = "04"
				      "D12DFB5289C8D4F81208B70270398C342296970A0BCCB74C736FC7554494BF63"
				      "56FBF3CA366CC23E8157854C13C58D6AAC23F046ADA30F8353E74F33039872AB";
static const char *const rfc5903_girx =
	"D6840F6B42F6EDAFD13116E0E12565202FEF8E9ECE7DCE03812464D04B9442DE";

/* The prepared op. */
static struct {
	mbedtls_ecp_group grp;
	mbedtls_mpi d, r, s, z;
	mbedtls_ecp_point q, peer;
	uint8_t *msg;
	size_t len;
	int live;
} ecc;

static mbedtls_ecp_group_id ecc_group_id(enum er_curve curve)
{
	switch (curve) {
	case ER_CURVE_P256:
		return MBEDTLS_ECP_DP_SECP256R1;
	case ER_CURVE_P384:
		return MBEDTLS_ECP_DP_SECP384R1;
	case ER_CURVE_SECP256K1:
		return MBEDTLS_ECP_DP_SECP256K1;
	case ER_CURVE_X25519:
		return MBEDTLS_ECP_DP_CURVE25519;
	default:
		return MBEDTLS_ECP_DP_NONE;
	}
}

/* Self-test scratch: a group, a key pair, a point, a signature, and blinding randomness
 * apart from the measurement's er_drbg. */
struct ecc_kat_ctx_s {
	mbedtls_ecp_group grp;
	mbedtls_mpi d, r, s;
	mbedtls_ecp_point q;
	struct er_drbg_s blind;
};

static int kat_open(struct ecc_kat_ctx_s *c, enum er_curve curve)
{
	mbedtls_ecp_group_init(&c->grp);
	mbedtls_mpi_init(&c->d);
	mbedtls_mpi_init(&c->r);
	mbedtls_mpi_init(&c->s);
	mbedtls_ecp_point_init(&c->q);
	er_drbg_seed(&c->blind, 6979U);
	return er_pk_err(mbedtls_ecp_group_load(&c->grp, ecc_group_id(curve)));
}

static void kat_close(struct ecc_kat_ctx_s *c)
{
	mbedtls_ecp_point_free(&c->q);
	mbedtls_mpi_free(&c->s);
	mbedtls_mpi_free(&c->r);
	mbedtls_mpi_free(&c->d);
	mbedtls_ecp_group_free(&c->grp);
}

/* d from hex and q = d G. */
static int kat_key(struct ecc_kat_ctx_s *c, const char *d_hex)
{
	int ret = er_pk_mpi_hex(&c->d, d_hex);

	return ret == 0 ? er_pk_err(mbedtls_ecp_mul(&c->grp, &c->q, &c->d, &c->grp.G,
						    er_drbg_random, &c->blind))
			: ret;
}

/* Point @p p written uncompressed equals the hex vector @p want. */
static int point_check(const mbedtls_ecp_group *grp, const mbedtls_ecp_point *p,
		       const char *want)
{
	uint8_t buf[ECC_POINT_MAX];
	size_t olen = 0;

	if (mbedtls_ecp_point_write_binary(grp, p, MBEDTLS_ECP_PF_UNCOMPRESSED, &olen, buf,
					   sizeof(buf)) != 0) {
		return -EIO;
	}
	return er_kat_check(buf, olen, want);
}

static int hash_text(const char *text, uint8_t h[ECC_HASH_BYTES])
{
	return er_pk_err(er_mbedtls_sha256((const unsigned char *)text, strlen(text), h));
}

/* The published public key from its private key. */
static int ecdsa_kat_keygen(const struct ecdsa_kat_s *v, struct ecc_kat_ctx_s *c)
{
	int ret = kat_key(c, v->key_d);

	return ret == 0 ? point_check(&c->grp, &c->q, v->key_q) : ret;
}

/* The published (r, s) from the signer's key and the message. */
static int ecdsa_kat_sign(const struct ecdsa_kat_s *v, struct ecc_kat_ctx_s *c)
{
	uint8_t h[ECC_HASH_BYTES];
	int ret = er_pk_mpi_hex(&c->d, v->sig_d);

	if (ret == 0) {
		ret = hash_text(v->msg, h);
	}
	if (ret == 0) {
		ret = er_pk_err(mbedtls_ecdsa_sign_det_ext(&c->grp, &c->r, &c->s, &c->d, h,
							   sizeof(h), MBEDTLS_MD_SHA256,
							   er_drbg_random, &c->blind));
	}
	if (ret == 0 && v->low_s && er_pk_check_mpi(&c->s, v->s) != 0) {
		ret = er_pk_err(mbedtls_mpi_sub_mpi(&c->s, &c->grp.N, &c->s));
	}
	if (ret == 0) {
		ret = er_pk_check_mpi(&c->r, v->r) == 0 && er_pk_check_mpi(&c->s, v->s) == 0 ? 0
											    : -EIO;
	}
	return ret;
}

/* The published (r, s) verifies under the signer's public key, and not on another digest. */
static int ecdsa_kat_verify(const struct ecdsa_kat_s *v, struct ecc_kat_ctx_s *c)
{
	uint8_t h[ECC_HASH_BYTES];
	int ret = kat_key(c, v->sig_d);

	if (ret == 0) {
		ret = er_pk_mpi_hex(&c->r, v->r);
	}
	if (ret == 0) {
		ret = er_pk_mpi_hex(&c->s, v->s);
	}
	if (ret == 0) {
		ret = hash_text(v->msg, h);
	}
	if (ret == 0) {
		ret = er_pk_err(mbedtls_ecdsa_verify(&c->grp, h, sizeof(h), &c->q, &c->r, &c->s));
	}
	if (ret == 0) {
		h[0] ^= 0x01U;
		ret = mbedtls_ecdsa_verify(&c->grp, h, sizeof(h), &c->q, &c->r, &c->s) ==
				      MBEDTLS_ERR_ECP_VERIFY_FAILED
			      ? 0
			      : -EIO;
	}
	return ret;
}

/* Run @p check on every ECDSA vector in a fresh context. */
static int ecdsa_kat_all(int (*check)(const struct ecdsa_kat_s *, struct ecc_kat_ctx_s *))
{
	for (size_t i = 0; i < ECDSA_N_KATS; i++) {
		struct ecc_kat_ctx_s c;
		int ret = kat_open(&c, ecdsa_kats[i].curve);

		if (ret == 0) {
			ret = check(&ecdsa_kats[i], &c);
		}
		kat_close(&c);
		if (ret != 0) {
			return -EIO;
		}
	}
	return 0;
}

static int ecdsa_selftest_keygen(void)
{
	return ecdsa_kat_all(ecdsa_kat_keygen);
}

static int ecdsa_selftest_sign(void)
{
	return ecdsa_kat_all(ecdsa_kat_sign);
}

static int ecdsa_selftest_verify(void)
{
	return ecdsa_kat_all(ecdsa_kat_verify);
}

/* RFC 5903 8.1: both public keys; with @p shared also the shared secret from both sides. */
static int ecdh_kat_p256(int shared)
{
	struct ecc_kat_ctx_s c;
	mbedtls_ecp_point peer;
	int ret = kat_open(&c, ER_CURVE_P256);

	mbedtls_ecp_point_init(&peer);
	if (ret == 0) {
		ret = kat_key(&c, rfc5903_r);
	}
	if (ret == 0) {
		ret = point_check(&c.grp, &c.q, rfc5903_gr);
	}
	if (ret == 0) {
		ret = er_pk_err(mbedtls_ecp_copy(&peer, &c.q));
	}
	if (ret == 0) {
		ret = kat_key(&c, rfc5903_i);
	}
	if (ret == 0) {
		ret = point_check(&c.grp, &c.q, rfc5903_gi);
	}
	/* z = x(i g^r), then x(r g^i) */
	if (ret == 0 && shared) {
		ret = er_pk_err(mbedtls_ecdh_compute_shared(&c.grp, &c.r, &peer, &c.d,
							    er_drbg_random, &c.blind));
		ret = ret == 0 ? er_pk_check_mpi(&c.r, rfc5903_girx) : ret;
	}
	if (ret == 0 && shared) {
		ret = er_pk_mpi_hex(&c.d, rfc5903_r);
		ret = ret == 0 ? er_pk_err(mbedtls_ecdh_compute_shared(&c.grp, &c.r, &c.q, &c.d,
								       er_drbg_random, &c.blind))
			       : ret;
		ret = ret == 0 ? er_pk_check_mpi(&c.r, rfc5903_girx) : ret;
	}
	mbedtls_ecp_point_free(&peer);
	kat_close(&c);
	return ret == 0 ? 0 : -EIO;
}

static int ecdh_selftest_keygen(void)
{
	return ecdh_kat_p256(0) == 0 && er_pk_x25519_selftest() == 0 ? 0 : -EIO;
}

static int ecdh_selftest_shared(void)
{
	return ecdh_kat_p256(1) == 0 && er_pk_x25519_selftest() == 0 ? 0 : -EIO;
}

static void ecc_release(void)
{
	if (ecc.live) {
		mbedtls_ecp_point_free(&ecc.peer);
		mbedtls_ecp_point_free(&ecc.q);
		mbedtls_mpi_free(&ecc.z);
		mbedtls_mpi_free(&ecc.s);
		mbedtls_mpi_free(&ecc.r);
		mbedtls_mpi_free(&ecc.d);
		mbedtls_ecp_group_free(&ecc.grp);
		ecc.live = 0;
	}
}

/* The curve, the payload (if the op takes one) and a key pair from er_drbg, which also
 * builds the generator's comb table. */
static int ecc_prep(const struct er_params_s *params, struct er_arena_s *arena)
{
	int ret;

	ecc_release();
	mbedtls_ecp_group_init(&ecc.grp);
	mbedtls_mpi_init(&ecc.d);
	mbedtls_mpi_init(&ecc.r);
	mbedtls_mpi_init(&ecc.s);
	mbedtls_mpi_init(&ecc.z);
	mbedtls_ecp_point_init(&ecc.q);
	mbedtls_ecp_point_init(&ecc.peer);
	ecc.live = 1;
	ecc.len = params->payload_bytes;
	ret = er_pk_err(mbedtls_ecp_group_load(&ecc.grp, ecc_group_id(params->curve)));
	if (ret == 0 && ecc.len > 0) {
		ret = er_ops_random_buffer(arena, ecc.len, &ecc.msg);
	}
	if (ret == 0) {
		ret = er_pk_err(
			mbedtls_ecdh_gen_public(&ecc.grp, &ecc.d, &ecc.q, er_drbg_random, &er_drbg));
	}
	return ret;
}

/* One key pair: for ECDSA and ECDH alike (mbedtls_ecdh_gen_public is this call). */
static int ecc_run_keygen(void)
{
	int ret = er_pk_err(
		mbedtls_ecp_gen_keypair(&ecc.grp, &ecc.d, &ecc.q, er_drbg_random, &er_drbg));

	er_pk_sink_mpi(&ecc.d);
	return ret;
}

static int ecdsa_run_sign(void)
{
	uint8_t h[ECC_HASH_BYTES];
	int ret = er_pk_err(er_mbedtls_sha256(ecc.msg, ecc.len, h));

	if (ret == 0) {
		ret = er_pk_err(mbedtls_ecdsa_sign_det_ext(&ecc.grp, &ecc.r, &ecc.s, &ecc.d, h,
							   sizeof(h), MBEDTLS_MD_SHA256,
							   er_drbg_random, &er_drbg));
	}
	er_pk_sink_mpi(&ecc.s);
	return ret;
}

static int ecdsa_prep_verify(const struct er_params_s *params, struct er_arena_s *arena)
{
	int ret = ecc_prep(params, arena);

	return ret == 0 ? ecdsa_run_sign() : ret;
}

static int ecdsa_run_verify(void)
{
	uint8_t h[ECC_HASH_BYTES];
	int ret = er_pk_err(er_mbedtls_sha256(ecc.msg, ecc.len, h));

	if (ret == 0) {
		ret = er_pk_err(
			mbedtls_ecdsa_verify(&ecc.grp, h, sizeof(h), &ecc.q, &ecc.r, &ecc.s));
	}
	er_sink += (uint32_t)h[0] + (uint32_t)ret;
	return ret;
}

/* Our key pair (ecc_prep) and a peer's public key, made the same way. */
static int ecdh_prep_shared(const struct er_params_s *params, struct er_arena_s *arena)
{
	int ret = ecc_prep(params, arena);

	if (ret == 0) {
		ret = er_pk_err(mbedtls_ecdh_gen_public(&ecc.grp, &ecc.z, &ecc.peer, er_drbg_random,
							&er_drbg));
	}
	return ret;
}

static int ecdh_run_shared(void)
{
	int ret = er_pk_err(mbedtls_ecdh_compute_shared(&ecc.grp, &ecc.z, &ecc.peer, &ecc.d,
							er_drbg_random, &er_drbg));

	er_pk_sink_mpi(&ecc.z);
	return ret;
}

/* P-256 and Curve25519 are required; P-384 and secp256k1 are offered where the mbedTLS
 * build has them (a board's configuration may leave them out). */
static const enum er_curve ecdsa_curves[] = {
	ER_CURVE_P256,
#if defined(MBEDTLS_ECP_DP_SECP384R1_ENABLED)
	ER_CURVE_P384,
#endif
#if defined(MBEDTLS_ECP_DP_SECP256K1_ENABLED)
	ER_CURVE_SECP256K1,
#endif
	ER_CURVE_NONE,
};
static const enum er_curve ecdh_curves[] = {ER_CURVE_P256, ER_CURVE_X25519, ER_CURVE_NONE};

#define ECDSA_MSG_SPEC                                                                     \
	{                                                                                  \
		.curves = ecdsa_curves, .payload_min = 1, .payload_max = ER_OPS_PAYLOAD_MAX, \
		.payload_multiple = 1,                                                     \
	}

ER_OP(ecdsa_keygen) = {
	"ecdsa-keygen", "public-key", {.curves = ecdsa_curves}, ER_BACKEND_SOFTWARE,
	ecdsa_selftest_keygen, ecc_prep, ecc_run_keygen, ecc_release,
};
ER_OP(ecdsa_sign) = {
	"ecdsa-sign", "public-key", ECDSA_MSG_SPEC, ER_BACKEND_SOFTWARE, ecdsa_selftest_sign,
	ecc_prep, ecdsa_run_sign, ecc_release,
};
ER_OP(ecdsa_verify) = {
	"ecdsa-verify", "public-key", ECDSA_MSG_SPEC, ER_BACKEND_SOFTWARE, ecdsa_selftest_verify,
	ecdsa_prep_verify, ecdsa_run_verify, ecc_release,
};
ER_OP(ecdh_keygen) = {
	"ecdh-keygen", "public-key", {.curves = ecdh_curves}, ER_BACKEND_SOFTWARE,
	ecdh_selftest_keygen, ecc_prep, ecc_run_keygen, ecc_release,
};
ER_OP(ecdh_shared) = {
	"ecdh-shared", "public-key", {.curves = ecdh_curves}, ER_BACKEND_SOFTWARE,
	ecdh_selftest_shared, ecdh_prep_shared, ecdh_run_shared, ecc_release,
};
