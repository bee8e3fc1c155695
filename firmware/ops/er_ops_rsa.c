/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief rsa-keygen, rsa-encrypt, rsa-decrypt, rsa-sign, rsa-verify: mbedTLS RSA with
 * PKCS#1 v1.5 padding (RFC 8017 sections 7.2 and 8.2), public exponent 65537, key_bits
 * 1024, 2048, 3072 or 4096.
 *
 * - rsa-keygen: one mbedtls_rsa_gen_key from er_drbg (its time varies with the primes found).
 * - rsa-encrypt / rsa-decrypt: RSAES-PKCS1-v1_5 of a payload_bytes message, 1 .. 117 bytes
 *   (k - 11 of the smallest key). decrypt runs on a ciphertext made in prep.
 * - rsa-sign / rsa-verify: SHA-256 of a payload_bytes message, then RSASSA-PKCS1-v1_5 of the
 *   digest (CRT private operation, blinded); verify checks a signature made in prep.
 *
 * Self-tests: key derivation against Project Wycheproof rsa_pkcs1_2048_test.json (its key's
 * n, dP, dQ, qInv from p, q, e); encryption and decryption against its tcId 3 ("Test");
 * signatures against NIST CAVP 186-3 SigGen15_186-3.txt, [mod = 2048], SHAAlg = SHA256.
 * mbedTLS allocates its bignum temporaries on its own heap inside every run: that is the
 * library's arithmetic, not the op's buffers (which come from the arena).
 */
#include <errno.h>
#include <string.h>

#include "er_drbg.h"
#include "er_mbedtls_compat.h"
#include "er_op.h"
#include "er_ops_util.h"
#include "lib/er_kat.h"
#include "lib/er_pk.h"

#define RSA_EXPONENT 65537
#define RSA_HASH_BYTES 32U
/* PKCS#1 v1.5 encryption takes at most k - 11 bytes; this is it for k = 128 (1024 bits). */
#define RSA_MSG_MAX 117U
#define RSA_KAT_BYTES 256U

/* Project Wycheproof testvectors_v1/rsa_pkcs1_2048_test.json, the first test group's key
 * (modulus, prime1, prime2, exponent1, exponent2, coefficient; e = 65537) and tcId 3. */
static const char *const wp_n =
	"00b3510a2bcd4ce644c5b594ae5059e12b2f054b658d5da5959a2fdf1871b808"
	"bc3df3e628d2792e51aad5c124b43bda453dca5cde4bcf28e7bd4effba0cb4b7"
	"42bbb6d5a013cb63d1aa3a89e02627ef5398b52c0cfd97d208abeb8d7c9bce0b"
	"beb019a86ddb589beb29a5b74bf861075c677c81d430f030c265247af9d3c914"
	"0ccb65309d07e0adc1efd15cf17e7b055d7da3868e4648cc3a180f0ee7f8e1e7"
	"b18098a3391b4ce7161e98d57af8a947e201a463e2d6bbca8059e5706e9dfed8"
	"f4856465ffa712ed1aa18e888d12dc6aa09ce95ecfca83cc5b0b15db09c8647f"
	"5d524c0f2e7620a3416b9623cadc0f097af573261c98c8400aa12af38e43cad8"
	"4d";
static const char *const wp_p =
	"00ec125cf37e310a2ff46263b9b2e0629d6390005ec88913d4fb71bd4dd85612"
	"4498aaeba983d7ba2bd942e64d223feb7a23af4d605efeea6bd70d39afe99d35"
	"a3aa15e74a1768778093be0edd4a8d09b2def6dc9b67ff85764625c2e19236db"
	"4c401ce30a2572d3ecb4f969b7ad19c522c02d774465676e1a3776c54d624834"
	"8b";
static const char *const wp_q =
	"00c2742abcd9897bd4b0b671f973fc82a8f84abf5705ff88dd41948623afe9dc"
	"a60dc6543390767feaebeb539576ee8bfa61b5fcbca94a7cef75a09150c540fa"
	"9694dd8004ad23718c889049219369c99f4458d4afc148f6f07df87324a96d9c"
	"f7b385dd8622414a1832f9f29446f050c2d5a6407649dc41ab70e23b3dcc22c9"
	"87";
static const char *const wp_dp =
	"0096a9798d250263400bb6277342881627e07cecdf91187b01b89ff47314188a"
	"7c20fb24800156d2c85d5666e8df6ceff9f9804ddfad80ff5767de56ecc029c7"
	"2bf6c717df9f64daafc29acf9dc7908f9a0ad67e20e8949936ccba18d021a2c4"
	"febb04349a2b2047c4901385b6e5d0c691d118b33f81802b32ac272ef09e42fa"
	"d5";
static const char *const wp_dq =
	"0554f41b0b87f68a45722b3be0cf4ab1e165034c1a91002ab8f29e9ef9e2dab6"
	"fee7b2455bafb42037e9d2f7e533f348a147412fd72080be7c2633f5d802c91c"
	"39e6bcece3e675e59995033c55737020dad9e8b30d04b828adfb9304ad54a11a"
	"35a4f50709876ac5b118236ba76a4d7c9a291dd9607b169de1d182385691999f";
static const char *const wp_qinv =
	"1c640189d9bfe8c623833210a76c420c6f44e5d760e259916cec2ae2b1564569"
	"60fd95e2747660c389562250f055049cfab7e5c3039549384a7a2aaeb1c824d3"
	"af709482a8cf9b587022a00b1f0722db50f33cb26dc20dd2245d5265df61ee29"
	"83c938c2167dcee121fc4b4479c237e728cf633ab60a8c0ecd04fce7e3baa559";
static const char *const wp_ct =
	"4501b4d669e01b9ef2dc800aa1b06d49196f5a09fe8fbcd037323c60eaf027bf"
	"b98432be4e4a26c567ffec718bcbea977dd26812fa071c33808b4d5ebb742d98"
	"79806094b6fbeea63d25ea3141733b60e31c6912106e1b758a7fe0014f075193"
	"faa8b4622bfd5d3013f0a32190a95de61a3604711bc62945f95a6522bd4dfed0"
	"a994ef185b28c281f7b5e4c8ed41176d12d9fc1b837e6a0111d0132d08a6d6f0"
	"580de0c9eed8ed105531799482d1e466c68c23b0c222af7fc12ac279bc4ff57e"
	"7b4586d209371b38c4c1035edd418dc5f960441cb21ea2bedbfea86de0d7861e"
	"81021b650a1de51002c315f1e7c12debe4dcebf790caaa54a2f26b149cf9e77d";
static const char *const wp_msg = "54657374"; /* "Test" */

/* NIST CAVP 186-3rsatestvectors.zip, SigGen15_186-3.txt, [mod = 2048] (n, e = 0x260445,
 * d) and a SHAAlg = SHA256 record (Msg, S). */
static const char *const cavp_n =
	"cea80475324c1dc8347827818da58bac069d3419c614a6ea1ac6a3b510dcd72c"
	"c516954905e9fef908d45e13006adf27d467a7d83c111d1a5df15ef293771aef"
	"b920032a5bb989f8e4f5e1b05093d3f130f984c07a772a3683f4dc6fb28a9681"
	"5b32123ccdd13954f19d5b8b24a103e771a34c328755c65ed64e1924ffd04d30"
	"b2142cc262f6e0048fef6dbc652f21479ea1c4b1d66d28f4d46ef7185e390cbf"
	"a2e02380582f3188bb94ebbf05d31487a09aff01fcbb4cd4bfd1f0a833b38c11"
	"813c84360bb53c7d4481031c40bad8713bb6b835cb08098ed15ba31ee4ba728a"
	"8c8e10f7294e1b4163b7aee57277bfd881a6f9d43e02c6925aa3a043fb7fb78d";
static const char *const cavp_d =
	"0997634c477c1a039d44c810b2aaa3c7862b0b88d3708272e1e15f66fc938970"
	"9f8a11f3ea6a5af7effa2d01c189c50f0d5bcbe3fa272e56cfc4a4e1d388a9dc"
	"d65df8628902556c8b6bb6a641709b5a35dd2622c73d4640bfa1359d0e76e1f2"
	"19f8e33eb9bd0b59ec198eb2fccaae0346bd8b401e12e3c67cb629569c185a2e"
	"0f35a2f741644c1cca5ebb139d77a89a2953fc5e30048c0e619f07c8d21d1e56"
	"b8af07193d0fdf3f49cd49f2ef3138b5138862f1470bd2d16e34a2b9e7777a6c"
	"8c8d4cb94b4e8b5d616cd5393753e7b0f31cc7da559ba8e98d888914e334773b"
	"af498ad88d9631eb5fe32e53a4145bf0ba548bf2b0a50c63f67b14e398a34b0d";
static const char *const cavp_msg =
	"c43011f3ee88c9c9adcac8bf37221afa31769d347dec705e53aca98993e74606"
	"591867ccd289ba1b4f19365f983e0c578346da76c5e2228a07e4fc9b3d480716"
	"3371a52b68b66873201dc7d6b56616ac2e4cb522120787df7f15a5e8763a54c1"
	"79c635d65816bc19485de3eb35a52040591094fe0e6485a7e0c60e38e7c61551";
static const char *const cavp_s =
	"aa3a4e12eb87596c711c9a22bcabcb9dadffcabcecbd16228889e9bb457d5d22"
	"571a72f034be4783384f43ce6fffc60534b8331cdd5d7c77f49180bfd194b5fd"
	"43a508c66d786c558876735894e6a9300952de792f747045e74d87fd50980230"
	"707a34a4df013ce050bbff0d6f570885c9c7bf8dc499132caee071b41d81ff91"
	"b8ce21aa2f282cbf52389f239afe1490890be21f9d808b3d70b97efd59c0b60e"
	"466088bb42714f212bc90db7e942ebcee60e7b107fff44fb3564ff07d6d02850"
	"215fd357d897c4d32bef8661689f2d84ff897637fb6d5568a7270e783426b74b"
	"7037493e5155fd7cb3ddddfd36bd8a9c877d71d2a966057c08263d2939c84987";
static const char *const cavp_e = "260445";

/* The prepared op. */
static struct {
	mbedtls_rsa_context ctx;
	uint32_t bits;
	uint8_t *msg; /* payload */
	uint8_t *in;  /* ciphertext or signature made in prep */
	uint8_t *out; /* k bytes */
	size_t len;
	size_t k;
	int live;
} rsa;

/* A context holding the key given in hex; NULL parts are deduced by mbedtls_rsa_complete. */
static int rsa_import(mbedtls_rsa_context *ctx, const char *n, const char *p, const char *q,
		      const char *d, const char *e)
{
	const char *hex[5] = {n, p, q, d, e};
	mbedtls_mpi v[5];
	int ret = 0;

	for (size_t i = 0; i < 5; i++) {
		mbedtls_mpi_init(&v[i]);
		if (ret == 0 && hex[i] != NULL) {
			ret = er_pk_mpi_hex(&v[i], hex[i]);
		}
	}
	if (ret == 0) {
		ret = er_pk_err(mbedtls_rsa_import(ctx, n ? &v[0] : NULL, p ? &v[1] : NULL,
						   q ? &v[2] : NULL, d ? &v[3] : NULL, &v[4]));
	}
	if (ret == 0) {
		ret = er_pk_err(mbedtls_rsa_complete(ctx));
	}
	for (size_t i = 0; i < 5; i++) {
		mbedtls_mpi_free(&v[i]);
	}
	return ret;
}

/* Key generation's derived values: from Wycheproof's p, q and e, mbedTLS must derive the
 * published n and CRT values and a key that passes its own consistency check. */
static int rsa_selftest_keygen(void)
{
	mbedtls_rsa_context ctx;
	mbedtls_mpi n, dp, dq, qp;
	int ret;

	er_mbedtls_rsa_init(&ctx);
	mbedtls_mpi_init(&n);
	mbedtls_mpi_init(&dp);
	mbedtls_mpi_init(&dq);
	mbedtls_mpi_init(&qp);
	ret = rsa_import(&ctx, NULL, wp_p, wp_q, NULL, "010001");
	if (ret == 0) {
		ret = er_pk_err(mbedtls_rsa_export(&ctx, &n, NULL, NULL, NULL, NULL));
	}
	if (ret == 0) {
		ret = er_pk_err(mbedtls_rsa_export_crt(&ctx, &dp, &dq, &qp));
	}
	if (ret == 0 && (er_pk_check_mpi(&n, wp_n) != 0 || er_pk_check_mpi(&dp, wp_dp) != 0 ||
			 er_pk_check_mpi(&dq, wp_dq) != 0 || er_pk_check_mpi(&qp, wp_qinv) != 0 ||
			 mbedtls_rsa_check_privkey(&ctx) != 0)) {
		ret = -EIO;
	}
	mbedtls_mpi_free(&qp);
	mbedtls_mpi_free(&dq);
	mbedtls_mpi_free(&dp);
	mbedtls_mpi_free(&n);
	mbedtls_rsa_free(&ctx);
	return ret == 0 ? 0 : -EIO;
}

/* An f_rng that replays fixed bytes: the padding string of a published ciphertext. */
struct rsa_replay_s {
	const uint8_t *bytes;
	size_t left;
};

static int rsa_replay(void *ctx, unsigned char *out, size_t len)
{
	struct rsa_replay_s *r = ctx;

	if (len > r->left) {
		return MBEDTLS_ERR_RSA_RNG_FAILED;
	}
	memcpy(out, r->bytes, len);
	r->bytes += len;
	r->left -= len;
	return 0;
}

/* Wycheproof tcId 3: decryption gives "Test"; and encryption, fed the padding string PS of
 * that ciphertext (EM = 00 02 PS 00 M, read back with the raw private operation), gives the
 * published ciphertext byte for byte. */
static int rsa_selftest_crypt(void)
{
	struct er_drbg_s blind;
	mbedtls_rsa_context ctx;
	uint8_t ct[RSA_KAT_BYTES], em[RSA_KAT_BYTES], out[RSA_KAT_BYTES], msg[8];
	size_t olen = 0;
	int msg_len = er_kat_unhex(msg, sizeof(msg), wp_msg);
	int ret;

	er_drbg_seed(&blind, 8017U);
	er_mbedtls_rsa_init(&ctx);
	ret = rsa_import(&ctx, wp_n, wp_p, wp_q, NULL, "010001");
	if (ret == 0 && (er_kat_unhex(ct, sizeof(ct), wp_ct) != (int)sizeof(ct) || msg_len < 0)) {
		ret = -EIO;
	}
	if (ret == 0) {
		ret = er_pk_err(er_mbedtls_rsa_decrypt(&ctx, er_drbg_random, &blind, &olen, ct, out,
						       sizeof(out)));
	}
	if (ret == 0 && (olen != (size_t)msg_len || memcmp(out, msg, olen) != 0)) {
		ret = -EIO;
	}
	if (ret == 0) {
		ret = er_pk_err(mbedtls_rsa_private(&ctx, er_drbg_random, &blind, ct, em));
	}
	if (ret == 0) {
		struct rsa_replay_s ps = {em + 2, sizeof(em) - 3U - (size_t)msg_len};

		ret = er_pk_err(er_mbedtls_rsa_encrypt(&ctx, rsa_replay, &ps, (size_t)msg_len, msg,
						       out));
	}
	if (ret == 0) {
		ret = er_kat_check(out, sizeof(out), wp_ct);
	}
	mbedtls_rsa_free(&ctx);
	return ret == 0 ? 0 : -EIO;
}

/* CAVP SigGen15: the signature of SHA-256(Msg) is S; S verifies; S with one bit flipped
 * does not. */
static int rsa_selftest_sig(void)
{
	struct er_drbg_s blind;
	mbedtls_rsa_context ctx;
	uint8_t msg[RSA_KAT_BYTES / 2U], h[RSA_HASH_BYTES], sig[RSA_KAT_BYTES];
	int msg_len = er_kat_unhex(msg, sizeof(msg), cavp_msg);
	int ret;

	er_drbg_seed(&blind, 1863U);
	er_mbedtls_rsa_init(&ctx);
	ret = rsa_import(&ctx, cavp_n, NULL, NULL, cavp_d, cavp_e);
	if (ret == 0 && msg_len < 0) {
		ret = -EIO;
	}
	if (ret == 0) {
		ret = er_pk_err(er_mbedtls_sha256(msg, (size_t)msg_len, h));
	}
	if (ret == 0) {
		ret = er_pk_err(er_mbedtls_rsa_sign(&ctx, er_drbg_random, &blind, MBEDTLS_MD_SHA256,
						    sizeof(h), h, sig));
	}
	if (ret == 0) {
		ret = er_kat_check(sig, sizeof(sig), cavp_s);
	}
	if (ret == 0) {
		ret = er_pk_err(er_mbedtls_rsa_verify(&ctx, MBEDTLS_MD_SHA256, sizeof(h), h, sig));
	}
	if (ret == 0) {
		sig[sizeof(sig) / 2U] ^= 0x01U;
		ret = er_mbedtls_rsa_verify(&ctx, MBEDTLS_MD_SHA256, sizeof(h), h, sig) != 0 ? 0
											     : -EIO;
	}
	mbedtls_rsa_free(&ctx);
	return ret == 0 ? 0 : -EIO;
}

static void rsa_release(void)
{
	if (rsa.live) {
		mbedtls_rsa_free(&rsa.ctx);
		rsa.live = 0;
	}
}

/* A fresh context; with @p keygen, a key of params->key_bits from er_drbg; the payload (if
 * the op takes one) and two k-byte buffers from the arena. */
static int rsa_prep(const struct er_params_s *params, struct er_arena_s *arena, int keygen)
{
	int ret = 0;

	rsa_release();
	er_mbedtls_rsa_init(&rsa.ctx);
	rsa.live = 1;
	rsa.bits = params->key_bits;
	rsa.len = params->payload_bytes;
	rsa.k = params->key_bits / 8U;
	if (keygen) {
		ret = er_pk_err(mbedtls_rsa_gen_key(&rsa.ctx, er_drbg_random, &er_drbg,
						    params->key_bits, RSA_EXPONENT));
	}
	if (ret == 0 && rsa.len > 0) {
		ret = er_ops_random_buffer(arena, rsa.len, &rsa.msg);
	}
	if (ret == 0) {
		rsa.in = er_arena_alloc(arena, rsa.k, ER_OPS_ALIGN);
		rsa.out = er_arena_alloc(arena, rsa.k, ER_OPS_ALIGN);
		ret = rsa.in != NULL && rsa.out != NULL ? 0 : -ENOMEM;
	}
	return ret;
}

static int rsa_prep_keygen(const struct er_params_s *params, struct er_arena_s *arena)
{
	return rsa_prep(params, arena, 0);
}

/* One key pair. The context is emptied first so that every run starts alike. */
static int rsa_run_keygen(void)
{
	int ret;

	mbedtls_rsa_free(&rsa.ctx);
	er_mbedtls_rsa_init(&rsa.ctx);
	ret = er_pk_err(mbedtls_rsa_gen_key(&rsa.ctx, er_drbg_random, &er_drbg, rsa.bits,
					    RSA_EXPONENT));
	er_sink += (uint32_t)mbedtls_rsa_get_len(&rsa.ctx);
	return ret;
}

static int rsa_prep_encrypt(const struct er_params_s *params, struct er_arena_s *arena)
{
	return rsa_prep(params, arena, 1);
}

static int rsa_run_encrypt(void)
{
	int ret = er_pk_err(
		er_mbedtls_rsa_encrypt(&rsa.ctx, er_drbg_random, &er_drbg, rsa.len, rsa.msg, rsa.out));

	er_ops_fold(rsa.out, rsa.k);
	return ret;
}

/* A key, and the input of the measured op made by one run of @p make (encrypt, sign). */
static int rsa_prep_input(const struct er_params_s *params, struct er_arena_s *arena,
			  int (*make)(void))
{
	int ret = rsa_prep(params, arena, 1);

	if (ret == 0) {
		ret = make();
		memcpy(rsa.in, rsa.out, rsa.k);
	}
	return ret;
}

static int rsa_prep_decrypt(const struct er_params_s *params, struct er_arena_s *arena)
{
	return rsa_prep_input(params, arena, rsa_run_encrypt);
}

static int rsa_run_decrypt(void)
{
	size_t olen = 0;
	int ret = er_pk_err(er_mbedtls_rsa_decrypt(&rsa.ctx, er_drbg_random, &er_drbg, &olen,
						   rsa.in, rsa.out, rsa.k));

	er_ops_fold(rsa.out, olen > 0 ? olen : 1U);
	return ret;
}

static int rsa_run_sign(void)
{
	uint8_t h[RSA_HASH_BYTES];
	int ret = er_pk_err(er_mbedtls_sha256(rsa.msg, rsa.len, h));

	if (ret == 0) {
		ret = er_pk_err(er_mbedtls_rsa_sign(&rsa.ctx, er_drbg_random, &er_drbg,
						    MBEDTLS_MD_SHA256, sizeof(h), h, rsa.out));
	}
	er_ops_fold(rsa.out, rsa.k);
	return ret;
}

static int rsa_prep_sign(const struct er_params_s *params, struct er_arena_s *arena)
{
	return rsa_prep(params, arena, 1);
}

static int rsa_prep_verify(const struct er_params_s *params, struct er_arena_s *arena)
{
	return rsa_prep_input(params, arena, rsa_run_sign);
}

static int rsa_run_verify(void)
{
	uint8_t h[RSA_HASH_BYTES];
	int ret = er_pk_err(er_mbedtls_sha256(rsa.msg, rsa.len, h));

	if (ret == 0) {
		ret = er_pk_err(
			er_mbedtls_rsa_verify(&rsa.ctx, MBEDTLS_MD_SHA256, sizeof(h), h, rsa.in));
	}
	er_sink += (uint32_t)h[0] + (uint32_t)ret;
	return ret;
}

static const uint16_t rsa_key_bits[] = {1024, 2048, 3072, 4096, 0};

#define RSA_SPEC(min, max)                                                                 \
	{                                                                                  \
		.key_bits = rsa_key_bits, .payload_min = (min), .payload_max = (max),      \
		.payload_multiple = 1,                                                     \
	}

/* An op on a message of 1 .. max bytes: its self-test is rsa_selftest_<kat>, its prep and
 * run rsa_prep_<verb> and rsa_run_<verb>. */
#define RSA_MSG_OP(op_name, max, kat, verb)                                                \
	{                                                                                  \
		.name = op_name, .family = "public-key", .spec = RSA_SPEC(1, max),         \
		.backend = ER_BACKEND_SOFTWARE, .selftest = rsa_selftest_##kat,            \
		.prep = rsa_prep_##verb, .run = rsa_run_##verb, .release = rsa_release,    \
	}

ER_OP(rsa_keygen) = {
	"rsa-keygen", "public-key", {.key_bits = rsa_key_bits}, ER_BACKEND_SOFTWARE,
	rsa_selftest_keygen, rsa_prep_keygen, rsa_run_keygen, rsa_release,
};
ER_OP(rsa_encrypt) = RSA_MSG_OP("rsa-encrypt", RSA_MSG_MAX, crypt, encrypt);
ER_OP(rsa_decrypt) = RSA_MSG_OP("rsa-decrypt", RSA_MSG_MAX, crypt, decrypt);
ER_OP(rsa_sign) = RSA_MSG_OP("rsa-sign", ER_OPS_PAYLOAD_MAX, sig, sign);
ER_OP(rsa_verify) = RSA_MSG_OP("rsa-verify", ER_OPS_PAYLOAD_MAX, sig, verify);
