/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief Symmetric ops on mbedTLS: AES in ECB, CBC, CTR and GCM (128/192/256-bit keys),
 * ChaCha20-Poly1305, and AES key generation.
 *
 * One run is one pass of the mode over the whole payload with the key prepared by prep:
 * - ecb: mbedtls_aes_crypt_ecb on every 16-byte block;
 * - cbc: one mbedtls_aes_crypt_cbc call; the IV carries over from run to run (chaining);
 * - ctr: one mbedtls_aes_crypt_ctr call; the counter carries over from run to run;
 * - gcm: one mbedtls_gcm_crypt_and_tag / mbedtls_gcm_auth_decrypt with a 12-byte IV, no
 *   AAD and a 16-byte tag; decrypt verifies the tag prep computed, so every run
 *   authenticates;
 * - chacha20poly1305-encrypt: one mbedtls_chachapoly_encrypt_and_tag, 12-byte nonce, no AAD.
 * The same IV or nonce serves every run: these keys only ever protect DRBG payloads.
 *
 * aes-keygen measures what making a fresh AES key costs the board: key_bits/8 bytes from
 * er_drbg (the core's xoshiro256** generator, not an entropy source) and the expansion of
 * the encryption key schedule (mbedtls_aes_setkey_enc).
 *
 * Self-tests: ECB, CBC and CTR against NIST SP 800-38A F.1, F.2 and F.5 (all three key
 * sizes, four blocks); GCM against the test cases of McGrew and Viega's GCM specification,
 * the vectors NIST SP 800-38D points to (cases 4, 10, 16: 60-byte text with 20 bytes of
 * AAD); ChaCha20-Poly1305 against RFC 8439 section 2.8.2; aes-keygen against FIPS-197
 * appendix C (the key schedule checked through one encryption).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <mbedtls/aes.h>
#include <mbedtls/version.h>
#if defined(MBEDTLS_GCM_C)
#include <mbedtls/gcm.h>
#endif
#if defined(MBEDTLS_CHACHAPOLY_C)
#include <mbedtls/chachapoly.h>
#endif

#include "er_drbg.h"
#include "er_op.h"
#include "er_ops_util.h"
#include "lib/er_kat.h"

#define ER_SYM_BLOCK 16U
#define ER_SYM_NONCE 12U
#define ER_SYM_TAG 16U

enum er_sym_mode {
	ER_SYM_ECB,
	ER_SYM_CBC,
	ER_SYM_CTR,
	ER_SYM_GCM,
	ER_SYM_CHACHAPOLY,
};

/** Everything one prepared cipher needs; the prepared op and the self-test have one each. */
struct er_sym_s {
	mbedtls_aes_context aes;
#if defined(MBEDTLS_GCM_C)
	mbedtls_gcm_context gcm;
#endif
#if defined(MBEDTLS_CHACHAPOLY_C)
	mbedtls_chachapoly_context chachapoly;
#endif
	uint8_t iv[ER_SYM_BLOCK];     /**< CBC IV, CTR counter block, GCM IV, ChaCha nonce */
	uint8_t stream[ER_SYM_BLOCK]; /**< CTR: keystream block left over */
	size_t stream_off;            /**< CTR: bytes of @c stream used */
	uint8_t tag[ER_SYM_TAG];      /**< AEAD tag: written by encrypt, checked by decrypt */
	uint8_t key[32];
	const uint8_t *aad;
	size_t aad_len;
	const uint8_t *in;
	uint8_t *out;
	size_t len;
};

static struct er_sym_s er_sym;     /* the prepared op */
static struct er_sym_s er_sym_kat; /* the self-test's, so a self-test never disturbs a prep */
static struct er_cipher_kat_buf_s er_sym_kat_buf;

static void er_sym_init(struct er_sym_s *st)
{
	mbedtls_aes_init(&st->aes);
#if defined(MBEDTLS_GCM_C)
	mbedtls_gcm_init(&st->gcm);
#endif
#if defined(MBEDTLS_CHACHAPOLY_C)
	mbedtls_chachapoly_init(&st->chachapoly);
#endif
	st->stream_off = 0;
	st->aad = NULL;
	st->aad_len = 0;
}

static void er_sym_free(struct er_sym_s *st)
{
	mbedtls_aes_free(&st->aes);
#if defined(MBEDTLS_GCM_C)
	mbedtls_gcm_free(&st->gcm);
#endif
#if defined(MBEDTLS_CHACHAPOLY_C)
	mbedtls_chachapoly_free(&st->chachapoly);
#endif
}

/* er_sym_setkey and er_sym_crypt return mbedTLS codes; callers map them to errno. */
#define ER_SYM_BAD_INPUT MBEDTLS_ERR_AES_BAD_INPUT_DATA

static int er_sym_setkey(struct er_sym_s *st, enum er_sym_mode mode, bool encrypt,
			 const uint8_t *key, unsigned int key_bits)
{
	int ret = ER_SYM_BAD_INPUT;

	switch (mode) {
	case ER_SYM_ECB:
	case ER_SYM_CBC:
		ret = encrypt ? mbedtls_aes_setkey_enc(&st->aes, key, key_bits)
			      : mbedtls_aes_setkey_dec(&st->aes, key, key_bits);
		break;
	case ER_SYM_CTR:
		ret = mbedtls_aes_setkey_enc(&st->aes, key, key_bits);
		break;
#if defined(MBEDTLS_GCM_C)
	case ER_SYM_GCM:
		ret = mbedtls_gcm_setkey(&st->gcm, MBEDTLS_CIPHER_ID_AES, key, key_bits);
		break;
#endif
#if defined(MBEDTLS_CHACHAPOLY_C)
	case ER_SYM_CHACHAPOLY:
		if (key_bits == 256U) {
			ret = mbedtls_chachapoly_setkey(&st->chachapoly, key);
		}
		break;
#endif
	default:
		break;
	}
	return ret;
}

/* One pass of @p mode over st->in. Inlined into each op's run with constant arguments. */
static inline int er_sym_crypt(struct er_sym_s *st, enum er_sym_mode mode, bool encrypt)
{
	const int aes_mode = encrypt ? MBEDTLS_AES_ENCRYPT : MBEDTLS_AES_DECRYPT;
	int ret = ER_SYM_BAD_INPUT;

	switch (mode) {
	case ER_SYM_ECB:
		ret = 0;
		for (size_t off = 0; off < st->len && ret == 0; off += ER_SYM_BLOCK) {
			ret = mbedtls_aes_crypt_ecb(&st->aes, aes_mode, st->in + off,
						    st->out + off);
		}
		break;
#if defined(MBEDTLS_CIPHER_MODE_CBC)
	case ER_SYM_CBC:
		ret = mbedtls_aes_crypt_cbc(&st->aes, aes_mode, st->len, st->iv, st->in,
					    st->out);
		break;
#endif
#if defined(MBEDTLS_CIPHER_MODE_CTR)
	case ER_SYM_CTR:
		ret = mbedtls_aes_crypt_ctr(&st->aes, st->len, &st->stream_off, st->iv,
					    st->stream, st->in, st->out);
		break;
#endif
#if defined(MBEDTLS_GCM_C)
	case ER_SYM_GCM:
		ret = encrypt ? mbedtls_gcm_crypt_and_tag(&st->gcm, MBEDTLS_GCM_ENCRYPT, st->len,
							  st->iv, ER_SYM_NONCE, st->aad,
							  st->aad_len, st->in, st->out,
							  ER_SYM_TAG, st->tag)
			      : mbedtls_gcm_auth_decrypt(&st->gcm, st->len, st->iv,
							 ER_SYM_NONCE, st->aad, st->aad_len,
							 st->tag, ER_SYM_TAG, st->in, st->out);
		break;
#endif
#if defined(MBEDTLS_CHACHAPOLY_C)
	case ER_SYM_CHACHAPOLY:
		ret = mbedtls_chachapoly_encrypt_and_tag(&st->chachapoly, st->len, st->iv,
							 st->aad, st->aad_len, st->in, st->out,
							 st->tag);
		break;
#endif
	default:
		break;
	}
	return ret;
}

/* Known-answer vectors, one table per mode; hex exactly as printed in the source. */
#define ER_SP800_38A_PT                                                                    \
	"6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51 "               \
	"30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710"
#define ER_SP800_38A_KEY128 "2b7e151628aed2a6abf7158809cf4f3c"
#define ER_SP800_38A_KEY192 "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b"
#define ER_SP800_38A_KEY256 "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4"
#define ER_SP800_38A_CBC_IV "000102030405060708090a0b0c0d0e0f"
#define ER_SP800_38A_CTR_IV "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"

/* SP 800-38A F.1.1, F.1.3, F.1.5 */
static const struct er_cipher_kat_s er_sym_kat_ecb[] = {
	{.key = ER_SP800_38A_KEY128,
	 .pt = ER_SP800_38A_PT,
	 .ct = "3ad77bb40d7a3660a89ecaf32466ef97 f5d3d58503b9699de785895a96fdbaaf "
	       "43b1cd7f598ece23881b00e3ed030688 7b0c785e27e8ad3f8223207104725dd4"},
	{.key = ER_SP800_38A_KEY192,
	 .pt = ER_SP800_38A_PT,
	 .ct = "bd334f1d6e45f25ff712a214571fa5cc 974104846d0ad3ad7734ecb3ecee4eef "
	       "ef7afd2270e2e60adce0ba2face6444e 9a4b41ba738d6c72fb16691603c18e0e"},
	{.key = ER_SP800_38A_KEY256,
	 .pt = ER_SP800_38A_PT,
	 .ct = "f3eed1bdb5d2a03c064b5a7e3db181f8 591ccb10d410ed26dc5ba74a31362870 "
	       "b6ed21b99ca6f4f9f153e7b1beafed1d 23304b7a39f9f3ff067d8d8f9e24ecc7"},
};

/* SP 800-38A F.2.1, F.2.3, F.2.5 */
static const struct er_cipher_kat_s er_sym_kat_cbc[] = {
	{.key = ER_SP800_38A_KEY128,
	 .iv = ER_SP800_38A_CBC_IV,
	 .pt = ER_SP800_38A_PT,
	 .ct = "7649abac8119b246cee98e9b12e9197d 5086cb9b507219ee95db113a917678b2 "
	       "73bed6b8e3c1743b7116e69e22229516 3ff1caa1681fac09120eca307586e1a7"},
	{.key = ER_SP800_38A_KEY192,
	 .iv = ER_SP800_38A_CBC_IV,
	 .pt = ER_SP800_38A_PT,
	 .ct = "4f021db243bc633d7178183a9fa071e8 b4d9ada9ad7dedf4e5e738763f69145a "
	       "571b242012fb7ae07fa9baac3df102e0 08b0e27988598881d920a9e64f5615cd"},
	{.key = ER_SP800_38A_KEY256,
	 .iv = ER_SP800_38A_CBC_IV,
	 .pt = ER_SP800_38A_PT,
	 .ct = "f58c4c04d6e5f1ba779eabfb5f7bfbd6 9cfc4e967edb808d679f777bc6702c7d "
	       "39f23369a9d9bacfa530e26304231461 b2eb05e2c39be9fcda6c19078c6a9d1b"},
};

/* SP 800-38A F.5.1, F.5.3, F.5.5 (the decrypt cases F.5.2/4/6 are the same vectors) */
static const struct er_cipher_kat_s er_sym_kat_ctr[] = {
	{.key = ER_SP800_38A_KEY128,
	 .iv = ER_SP800_38A_CTR_IV,
	 .pt = ER_SP800_38A_PT,
	 .ct = "874d6191b620e3261bef6864990db6ce 9806f66b7970fdff8617187bb9fffdff "
	       "5ae4df3edbd5d35e5b4f09020db03eab 1e031dda2fbe03d1792170a0f3009cee"},
	{.key = ER_SP800_38A_KEY192,
	 .iv = ER_SP800_38A_CTR_IV,
	 .pt = ER_SP800_38A_PT,
	 .ct = "1abc932417521ca24f2b0459fe7e6e0b 090339ec0aa6faefd5ccc2c6f4ce8e94 "
	       "1e36b26bd1ebc670d1bd1d665620abf7 4f78a7f6d29809585a97daec58c6b050"},
	{.key = ER_SP800_38A_KEY256,
	 .iv = ER_SP800_38A_CTR_IV,
	 .pt = ER_SP800_38A_PT,
	 .ct = "601ec313775789a5b7a7f504bbf3d228 f443e3ca4d62b59aca84e990cacaf5c5 "
	       "2b0930daa23de94ce87017ba2d84988d dfc9c58db67aada613c2dd08457941a6"},
};

/* McGrew and Viega, "The Galois/Counter Mode of Operation (GCM)", test cases 4, 10, 16 */
#define ER_GCM_PT                                                                          \
	"d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"                 \
	"1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39"
#define ER_GCM_AAD "feedfacedeadbeeffeedfacedeadbeefabaddad2"
#define ER_GCM_IV "cafebabefacedbaddecaf888"

static const struct er_cipher_kat_s er_sym_kat_gcm[] = {
	{.key = "feffe9928665731c6d6a8f9467308308",
	 .iv = ER_GCM_IV,
	 .aad = ER_GCM_AAD,
	 .pt = ER_GCM_PT,
	 .ct = "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
	       "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091",
	 .tag = "5bc94fbc3221a5db94fae95ae7121a47"},
	{.key = "feffe9928665731c6d6a8f9467308308feffe9928665731c",
	 .iv = ER_GCM_IV,
	 .aad = ER_GCM_AAD,
	 .pt = ER_GCM_PT,
	 .ct = "3980ca0b3c00e841eb06fac4872a2757859e1ceaa6efd984628593b40ca1e19c"
	       "7d773d00c144c525ac619d18c84a3f4718e2448b2fe324d9ccda2710",
	 .tag = "2519498e80f1478f37ba55bd6d27618c"},
	{.key = "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
	 .iv = ER_GCM_IV,
	 .aad = ER_GCM_AAD,
	 .pt = ER_GCM_PT,
	 .ct = "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
	       "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
	 .tag = "76fc6ece0f4e1768cddf8853bb2d551b"},
};

/* RFC 8439 section 2.8.2 ("Ladies and Gentlemen of the class of '99: ...") */
static const struct er_cipher_kat_s er_sym_kat_chachapoly[] = {
	{.key = "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f",
	 .iv = "070000004041424344454647",
	 .aad = "50515253c0c1c2c3c4c5c6c7",
	 .pt = "4c616469657320616e642047656e746c656d656e206f662074686520636c6173"
	       "73206f66202739393a204966204920636f756c64206f6666657220796f75206f"
	       "6e6c79206f6e652074697020666f7220746865206675747572652c2073756e73"
	       "637265656e20776f756c642062652069742e",
	 .ct = "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6"
	       "3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36"
	       "92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"
	       "3ff4def08e4b7a9de576d26586cec64b6116",
	 .tag = "1ae10b594f09e26a7e902ecbd0600691"},
};

struct er_sym_kats_s {
	const struct er_cipher_kat_s *kats;
	size_t n;
};

static const struct er_sym_kats_s er_sym_kats[] = {
	[ER_SYM_ECB] = {er_sym_kat_ecb, sizeof(er_sym_kat_ecb) / sizeof(er_sym_kat_ecb[0])},
	[ER_SYM_CBC] = {er_sym_kat_cbc, sizeof(er_sym_kat_cbc) / sizeof(er_sym_kat_cbc[0])},
	[ER_SYM_CTR] = {er_sym_kat_ctr, sizeof(er_sym_kat_ctr) / sizeof(er_sym_kat_ctr[0])},
	[ER_SYM_GCM] = {er_sym_kat_gcm, sizeof(er_sym_kat_gcm) / sizeof(er_sym_kat_gcm[0])},
	[ER_SYM_CHACHAPOLY] = {er_sym_kat_chachapoly,
			       sizeof(er_sym_kat_chachapoly) / sizeof(er_sym_kat_chachapoly[0])},
};

/* Run one vector through the same setkey and crypt as the measured op. */
static int er_sym_kat_one(const struct er_cipher_kat_s *kat, enum er_sym_mode mode,
			  bool encrypt)
{
	struct er_sym_s *st = &er_sym_kat;
	struct er_cipher_kat_buf_s *buf = &er_sym_kat_buf;
	int ret = er_cipher_kat_load(kat, encrypt, buf);

	if (ret != 0) {
		return -EIO;
	}
	er_sym_init(st);
	ret = er_sym_setkey(st, mode, encrypt, buf->key, (unsigned int)buf->key_len * 8U);
	if (ret == 0) {
		memcpy(st->iv, buf->iv, buf->iv_len);
		memcpy(st->tag, buf->tag, buf->tag_len);
		st->aad = buf->aad;
		st->aad_len = buf->aad_len;
		st->in = buf->in;
		st->out = buf->out;
		st->len = buf->len;
		ret = er_sym_crypt(st, mode, encrypt);
	}
	if (ret == 0) {
		ret = er_kat_check(buf->out, buf->len, encrypt ? kat->ct : kat->pt);
	}
	if (ret == 0 && encrypt && kat->tag != NULL) {
		ret = er_kat_check(st->tag, ER_SYM_TAG, kat->tag);
	}
	er_sym_free(st);
	return ret == 0 ? 0 : -EIO;
}

static int er_sym_kats_run(const struct er_sym_kats_s *set, enum er_sym_mode mode,
			   bool encrypt)
{
	for (size_t i = 0; i < set->n; i++) {
		if (er_sym_kat_one(&set->kats[i], mode, encrypt) != 0) {
			return -EIO;
		}
	}
	return 0;
}

static int er_sym_selftest(enum er_sym_mode mode, bool encrypt)
{
	return er_sym_kats_run(&er_sym_kats[mode], mode, encrypt);
}

static int er_sym_prep(enum er_sym_mode mode, bool encrypt, const struct er_params_s *params,
		       struct er_arena_s *arena)
{
	struct er_sym_s *st = &er_sym;
	unsigned int key_bits = mode == ER_SYM_CHACHAPOLY ? 256U : params->key_bits;
	uint8_t *out;
	uint8_t *in;
	int ret;

	er_sym_init(st);
	ret = er_ops_cipher_buffers(arena, params->payload_bytes, &in, &out);
	if (ret != 0) {
		return ret;
	}
	er_drbg_random(&er_drbg, st->key, key_bits / 8U);
	er_drbg_random(&er_drbg, st->iv, sizeof(st->iv));
	st->in = in;
	st->out = out;
	st->len = params->payload_bytes;
	if (mode == ER_SYM_GCM && !encrypt) {
		/* Decrypt needs a ciphertext whose tag verifies: encrypt the payload once. */
		ret = er_sym_setkey(st, mode, true, st->key, key_bits);
		if (ret == 0) {
			ret = er_sym_crypt(st, mode, true);
		}
		st->in = out;
		st->out = in;
	}
	if (ret == 0) {
		ret = er_sym_setkey(st, mode, encrypt, st->key, key_bits);
	}
	return er_ops_mbedtls_errno(ret);
}

static void er_sym_release(void)
{
	er_sym_free(&er_sym);
}

static inline int er_sym_run(enum er_sym_mode mode, bool encrypt)
{
	int ret = er_sym_crypt(&er_sym, mode, encrypt);

	er_ops_fold(er_sym.out, er_sym.len);
	return er_ops_mbedtls_errno(ret);
}

/* aes-keygen */
static int er_keygen_selftest(void)
{
	/* FIPS-197 appendix C.1, C.2, C.3 */
	static const struct er_cipher_kat_s kats[] = {
		{.key = "000102030405060708090a0b0c0d0e0f",
		 .pt = "00112233445566778899aabbccddeeff",
		 .ct = "69c4e0d86a7b0430d8cdb78070b4c55a"},
		{.key = "000102030405060708090a0b0c0d0e0f1011121314151617",
		 .pt = "00112233445566778899aabbccddeeff",
		 .ct = "dda97ca4864cdfe06eaf70a0ec0d7191"},
		{.key = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
		 .pt = "00112233445566778899aabbccddeeff",
		 .ct = "8ea2b7ca516745bfeafc49904b496089"},
	};
	static const struct er_sym_kats_s set = {kats, sizeof(kats) / sizeof(kats[0])};

	return er_sym_kats_run(&set, ER_SYM_ECB, true);
}

static unsigned int er_keygen_bits;

static int er_keygen_prep(const struct er_params_s *params, struct er_arena_s *arena)
{
	(void)arena;
	er_sym_init(&er_sym);
	er_keygen_bits = params->key_bits;
	return 0;
}

static int er_keygen_run(void)
{
	er_drbg_random(&er_drbg, er_sym.key, er_keygen_bits / 8U);
	int ret = mbedtls_aes_setkey_enc(&er_sym.aes, er_sym.key, er_keygen_bits);

	er_ops_fold(er_sym.key, er_keygen_bits / 8U);
	return er_ops_mbedtls_errno(ret);
}

/* One selftest/prep/run triple per op, all three inlining the shared code with constants. */
#define ER_SYM_OP_FNS(fn, mode, encrypt)                                                   \
	static int fn##_selftest(void)                                                     \
	{                                                                                  \
		return er_sym_selftest(mode, encrypt);                                     \
	}                                                                                  \
	static int fn##_prep(const struct er_params_s *params, struct er_arena_s *arena)   \
	{                                                                                  \
		return er_sym_prep(mode, encrypt, params, arena);                          \
	}                                                                                  \
	static int fn##_run(void)                                                          \
	{                                                                                  \
		return er_sym_run(mode, encrypt);                                          \
	}

#define ER_SYM_OP(op_name, fn, key_list, multiple)                                         \
	{                                                                                  \
		.name = op_name, .family = "symmetric",                                    \
		.spec = {.key_bits = key_list,                                             \
			 .payload_min = 16U,                                               \
			 .payload_max = ER_OPS_PAYLOAD_MAX,                                \
			 .payload_multiple = multiple},                                    \
		.backend = ER_BACKEND_SOFTWARE, .selftest = fn##_selftest,                 \
		.prep = fn##_prep, .run = fn##_run, .release = er_sym_release,             \
	}

ER_SYM_OP_FNS(er_aes_ecb_enc, ER_SYM_ECB, true)
ER_SYM_OP_FNS(er_aes_ecb_dec, ER_SYM_ECB, false)
#if defined(MBEDTLS_CIPHER_MODE_CBC)
ER_SYM_OP_FNS(er_aes_cbc_enc, ER_SYM_CBC, true)
ER_SYM_OP_FNS(er_aes_cbc_dec, ER_SYM_CBC, false)
#endif
#if defined(MBEDTLS_CIPHER_MODE_CTR)
ER_SYM_OP_FNS(er_aes_ctr_enc, ER_SYM_CTR, true)
ER_SYM_OP_FNS(er_aes_ctr_dec, ER_SYM_CTR, false)
#endif
#if defined(MBEDTLS_GCM_C)
ER_SYM_OP_FNS(er_aes_gcm_enc, ER_SYM_GCM, true)
ER_SYM_OP_FNS(er_aes_gcm_dec, ER_SYM_GCM, false)
#endif
#if defined(MBEDTLS_CHACHAPOLY_C)
ER_SYM_OP_FNS(er_chachapoly_enc, ER_SYM_CHACHAPOLY, true)
#endif

/* Ops whose mode mbedTLS was built without are left out of the catalogue. */
ER_OP(aes_ecb_encrypt) =
	ER_SYM_OP("aes-ecb-encrypt", er_aes_ecb_enc, er_ops_key_bits_aes, ER_SYM_BLOCK);
ER_OP(aes_ecb_decrypt) =
	ER_SYM_OP("aes-ecb-decrypt", er_aes_ecb_dec, er_ops_key_bits_aes, ER_SYM_BLOCK);
#if defined(MBEDTLS_CIPHER_MODE_CBC)
ER_OP(aes_cbc_encrypt) =
	ER_SYM_OP("aes-cbc-encrypt", er_aes_cbc_enc, er_ops_key_bits_aes, ER_SYM_BLOCK);
ER_OP(aes_cbc_decrypt) =
	ER_SYM_OP("aes-cbc-decrypt", er_aes_cbc_dec, er_ops_key_bits_aes, ER_SYM_BLOCK);
#endif
#if defined(MBEDTLS_CIPHER_MODE_CTR)
ER_OP(aes_ctr_encrypt) = ER_SYM_OP("aes-ctr-encrypt", er_aes_ctr_enc, er_ops_key_bits_aes, 1U);
ER_OP(aes_ctr_decrypt) = ER_SYM_OP("aes-ctr-decrypt", er_aes_ctr_dec, er_ops_key_bits_aes, 1U);
#endif
#if defined(MBEDTLS_GCM_C)
ER_OP(aes_gcm_encrypt) = ER_SYM_OP("aes-gcm-encrypt", er_aes_gcm_enc, er_ops_key_bits_aes, 1U);
ER_OP(aes_gcm_decrypt) = ER_SYM_OP("aes-gcm-decrypt", er_aes_gcm_dec, er_ops_key_bits_aes, 1U);
#endif
#if defined(MBEDTLS_CHACHAPOLY_C)
ER_OP(chacha20poly1305_encrypt) =
	ER_SYM_OP("chacha20poly1305-encrypt", er_chachapoly_enc, NULL, 1U);
#endif
ER_OP(aes_keygen) = {
	.name = "aes-keygen",
	.family = "symmetric",
	.spec = {.key_bits = er_ops_key_bits_aes},
	.backend = ER_BACKEND_SOFTWARE,
	.selftest = er_keygen_selftest,
	.prep = er_keygen_prep,
	.run = er_keygen_run,
	.release = er_sym_release,
};
