/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief The ciphers mbedTLS does not have, written in this project (ops/lib/): rc4,
 * rc5-{encrypt,decrypt} (RC5-32/12 with a 16-byte key), rc6-{encrypt,decrypt} (RC6-32/20
 * with 128/192/256-bit keys).
 *
 * One run is one pass over the whole payload with the key prepared by prep: RC5 and RC6 in
 * ECB mode, block after block (as in the AES-vs-RC6 study); RC4 XORs the payload with the
 * next bytes of its keystream (the stream continues from run to run; the key schedule is
 * done once, in prep, as for every other cipher of the catalogue).
 *
 * Self-tests: RC4 against RFC 6229 (40- and 128-bit keys, offsets up to 4096), RC5 against
 * the five RC5-32/12/16 vectors of Rivest's paper, RC6 against the six vectors of the RC6
 * submission (two per key size).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "er_drbg.h"
#include "er_op.h"
#include "er_ops_util.h"
#include "lib/er_kat.h"
#include "lib/er_rc4.h"
#include "lib/er_rc5.h"
#include "lib/er_rc6.h"

#define ER_RC4_KEY_BYTES 16U
#define ER_RC5_KEY_BYTES 16U

static struct {
	union {
		struct er_rc4_s rc4;
		struct er_rc5_s rc5;
		struct er_rc6_s rc6;
	} ctx;
	uint8_t key[32];
	const uint8_t *in;
	uint8_t *out;
	size_t len;
} er_legacy;

/* Used by the self-tests only, so they never disturb a prepared op. */
static union {
	struct er_rc4_s rc4;
	struct er_rc5_s rc5;
	struct er_rc6_s rc6;
} er_legacy_kat_ctx;
static struct er_cipher_kat_buf_s er_legacy_kat_buf;

static int er_legacy_buffers(const struct er_params_s *params, struct er_arena_s *arena,
			     size_t key_len)
{
	uint8_t *in;
	uint8_t *out;
	int ret = er_ops_cipher_buffers(arena, params->payload_bytes, &in, &out);

	er_drbg_random(&er_drbg, er_legacy.key, key_len);
	er_legacy.in = in;
	er_legacy.out = out;
	er_legacy.len = params->payload_bytes;
	return ret;
}

/* rc4 */

/** RFC 6229 keystream block: 16 bytes at @c offset. */
struct er_rc4_kat_s {
	const char *key;
	uint16_t offset;
	const char *stream;
};

static int er_rc4_selftest(void)
{
	/* RFC 6229 section 2: "key: 0x0102030405" and "key: 0x0102030405060708090a0b0c0d0e0f10".
	 * Each key's blocks are listed by rising offset. */
	static const struct er_rc4_kat_s kats[] = {
		{"0102030405", 0, "b2 39 63 05  f0 3d c0 27   cc c3 52 4a  0a 11 18 a8"},
		{"0102030405", 16, "69 82 94 4f  18 fc 82 d5   89 c4 03 a4  7a 0d 09 19"},
		{"0102030405", 240, "28 cb 11 32  c9 6c e2 86   42 1d ca ad  b8 b6 9e ae"},
		{"0102030405", 256, "1c fc f6 2b  03 ed db 64   1d 77 df cf  7f 8d 8c 93"},
		{"0102030405060708090a0b0c0d0e0f10", 0,
		 "9a c7 cc 9a  60 9d 1e f7   b2 93 28 99  cd e4 1b 97"},
		{"0102030405060708090a0b0c0d0e0f10", 16,
		 "52 48 c4 95  90 14 12 6a   6e 8a 84 f1  1d 1a 9e 1c"},
		{"0102030405060708090a0b0c0d0e0f10", 4080,
		 "ff 38 26 5c  16 42 c1 ab   e8 d3 c2 fe  5e 57 2b f8"},
		{"0102030405060708090a0b0c0d0e0f10", 4096,
		 "a3 6a 4c 30  1a e8 ac 13   61 0c cb c1  22 56 ca cc"},
	};
	static const uint8_t zero[16];
	struct er_rc4_s *rc4 = &er_legacy_kat_ctx.rc4;
	uint8_t *block = er_legacy_kat_buf.out;
	const char *key = NULL;
	uint32_t at = 0;

	for (size_t i = 0; i < sizeof(kats) / sizeof(kats[0]); i++) {
		if (key == NULL || strcmp(kats[i].key, key) != 0) {
			int n = er_kat_unhex(er_legacy_kat_buf.key, sizeof(er_legacy_kat_buf.key),
					     kats[i].key);

			if (n < 0 || er_rc4_setkey(rc4, er_legacy_kat_buf.key, (size_t)n) != 0) {
				return -EIO;
			}
			key = kats[i].key;
			at = 0;
		}
		/* Keystream = encryption of zeros; skip to the block's offset. */
		for (; at <= kats[i].offset; at += sizeof(zero)) {
			er_rc4_crypt(rc4, zero, block, sizeof(zero));
		}
		if (er_kat_check(block, sizeof(zero), kats[i].stream) != 0) {
			return -EIO;
		}
	}
	return 0;
}

static int er_rc4_prep(const struct er_params_s *params, struct er_arena_s *arena)
{
	int ret = er_legacy_buffers(params, arena, ER_RC4_KEY_BYTES);

	return ret != 0 ? ret : er_rc4_setkey(&er_legacy.ctx.rc4, er_legacy.key, ER_RC4_KEY_BYTES);
}

static int er_rc4_run(void)
{
	er_rc4_crypt(&er_legacy.ctx.rc4, er_legacy.in, er_legacy.out, er_legacy.len);
	er_ops_fold(er_legacy.out, er_legacy.len);
	return 0;
}

/* rc5 and rc6: block ciphers in ECB */

/* Rivest, "The RC5 Encryption Algorithm", RC5-32/12/16 examples (bytes as printed). */
static const struct er_cipher_kat_s er_rc5_kats[] = {
	{.key = "00000000000000000000000000000000",
	 .pt = "0000000000000000",
	 .ct = "21A5DBEE154B8F6D"},
	{.key = "915F4619BE41B2516355A50110A9CE91",
	 .pt = "21A5DBEE154B8F6D",
	 .ct = "F7C013AC5B2B8952"},
	{.key = "783348E75AEB0F2FD7B169BB8DC16787",
	 .pt = "F7C013AC5B2B8952",
	 .ct = "2F42B3B70369FC92"},
	{.key = "DC49DB1375A5584F6485B413B5F12BAF",
	 .pt = "2F42B3B70369FC92",
	 .ct = "65C178B284D197CC"},
	{.key = "5269F149D41BA0152497574D7F153125",
	 .pt = "65C178B284D197CC",
	 .ct = "EB44E415DA319824"},
};

/* Rivest, Robshaw, Sidney, Yin, "The RC6 Block Cipher", appendix: test vectors. */
static const struct er_cipher_kat_s er_rc6_kats[] = {
	{.key = "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
	 .pt = "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
	 .ct = "8f c3 a5 36 56 b1 f7 78 c1 29 df 4e 98 48 a4 1e"},
	{.key = "01 23 45 67 89 ab cd ef 01 12 23 34 45 56 67 78",
	 .pt = "02 13 24 35 46 57 68 79 8a 9b ac bd ce df e0 f1",
	 .ct = "52 4e 19 2f 47 15 c6 23 1f 51 f6 36 7e a4 3f 18"},
	{.key = "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 "
		"00 00 00 00 00 00 00 00",
	 .pt = "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
	 .ct = "6c d6 1b cb 19 0b 30 38 4e 8a 3f 16 86 90 ae 82"},
	{.key = "01 23 45 67 89 ab cd ef 01 12 23 34 45 56 67 78 "
		"89 9a ab bc cd de ef f0",
	 .pt = "02 13 24 35 46 57 68 79 8a 9b ac bd ce df e0 f1",
	 .ct = "68 83 29 d0 19 e5 05 04 1e 52 e9 2a f9 52 91 d4"},
	{.key = "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 "
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
	 .pt = "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
	 .ct = "8f 5f bd 05 10 d1 5f a8 93 fa 3f da 6e 85 7e c2"},
	{.key = "01 23 45 67 89 ab cd ef 01 12 23 34 45 56 67 78 "
		"89 9a ab bc cd de ef f0 10 32 54 76 98 ba dc fe",
	 .pt = "02 13 24 35 46 57 68 79 8a 9b ac bd ce df e0 f1",
	 .ct = "c8 24 18 16 f0 d7 e4 89 20 ad 16 a1 67 4e 5d 48"},
};

/** A block cipher of ops/lib and its published vectors. */
struct er_block_alg_s {
	const struct er_block_cipher_s *cipher;
	const struct er_cipher_kat_s *kats;
	size_t n_kats;
};

static const struct er_block_alg_s er_rc5_alg = {
	.cipher = &er_rc5_block,
	.kats = er_rc5_kats,
	.n_kats = sizeof(er_rc5_kats) / sizeof(er_rc5_kats[0]),
};

static const struct er_block_alg_s er_rc6_alg = {
	.cipher = &er_rc6_block,
	.kats = er_rc6_kats,
	.n_kats = sizeof(er_rc6_kats) / sizeof(er_rc6_kats[0]),
};

/* ECB over len bytes: the measured loop, and the one the self-test runs. */
static inline void er_block_ecb(const struct er_block_alg_s *alg, bool encrypt,
				const void *ctx, const uint8_t *in, uint8_t *out, size_t len)
{
	const struct er_block_cipher_s *cipher = alg->cipher;
	void (*fn)(const void *, const uint8_t *, uint8_t *) =
		encrypt ? cipher->encrypt : cipher->decrypt;

	for (size_t off = 0; off < len; off += cipher->block) {
		fn(ctx, in + off, out + off);
	}
}

static int er_block_selftest(const struct er_block_alg_s *alg, bool encrypt)
{
	struct er_cipher_kat_buf_s *buf = &er_legacy_kat_buf;

	for (size_t i = 0; i < alg->n_kats; i++) {
		const struct er_cipher_kat_s *kat = &alg->kats[i];

		if (er_cipher_kat_load(kat, encrypt, buf) != 0 ||
		    alg->cipher->setkey(&er_legacy_kat_ctx, buf->key, buf->key_len) != 0) {
			return -EIO;
		}
		er_block_ecb(alg, encrypt, &er_legacy_kat_ctx, buf->in, buf->out, buf->len);
		if (er_kat_check(buf->out, buf->len, encrypt ? kat->ct : kat->pt) != 0) {
			return -EIO;
		}
	}
	return 0;
}

static int er_block_prep(const struct er_block_alg_s *alg, size_t key_len,
			 const struct er_params_s *params, struct er_arena_s *arena)
{
	int ret = er_legacy_buffers(params, arena, key_len);

	return ret != 0 ? ret : alg->cipher->setkey(&er_legacy.ctx, er_legacy.key, key_len);
}

static inline int er_block_run(const struct er_block_alg_s *alg, bool encrypt)
{
	er_block_ecb(alg, encrypt, &er_legacy.ctx, er_legacy.in, er_legacy.out, er_legacy.len);
	er_ops_fold(er_legacy.out, er_legacy.len);
	return 0;
}

/* One selftest/prep/run triple per op. */
#define ER_BLOCK_OP_FNS(id, alg, encrypt, key_len_expr)                                    \
	static int id##_selftest(void)                                                     \
	{                                                                                  \
		return er_block_selftest(&alg, encrypt);                                   \
	}                                                                                  \
	static int id##_prep(const struct er_params_s *params, struct er_arena_s *arena)   \
	{                                                                                  \
		return er_block_prep(&alg, key_len_expr, params, arena);                   \
	}                                                                                  \
	static int id##_run(void)                                                          \
	{                                                                                  \
		return er_block_run(&alg, encrypt);                                        \
	}

ER_BLOCK_OP_FNS(er_rc5_enc, er_rc5_alg, true, ER_RC5_KEY_BYTES)
ER_BLOCK_OP_FNS(er_rc5_dec, er_rc5_alg, false, ER_RC5_KEY_BYTES)
ER_BLOCK_OP_FNS(er_rc6_enc, er_rc6_alg, true, params->key_bits / 8U)
ER_BLOCK_OP_FNS(er_rc6_dec, er_rc6_alg, false, params->key_bits / 8U)

#define ER_LEGACY_OP(op_name, id, key_list, multiple)                                      \
	{                                                                                  \
		.name = op_name, .family = "symmetric",                                    \
		.spec = {.key_bits = key_list,                                             \
			 .payload_min = 16U,                                               \
			 .payload_max = ER_OPS_PAYLOAD_MAX,                                \
			 .payload_multiple = multiple},                                    \
		.backend = ER_BACKEND_SOFTWARE, .selftest = id##_selftest,                 \
		.prep = id##_prep, .run = id##_run, .release = NULL,                       \
	}

ER_OP(rc4) = ER_LEGACY_OP("rc4", er_rc4, NULL, 1U);
ER_OP(rc5_encrypt) = ER_LEGACY_OP("rc5-encrypt", er_rc5_enc, NULL, ER_RC5_BLOCK);
ER_OP(rc5_decrypt) = ER_LEGACY_OP("rc5-decrypt", er_rc5_dec, NULL, ER_RC5_BLOCK);
ER_OP(rc6_encrypt) = ER_LEGACY_OP("rc6-encrypt", er_rc6_enc, er_ops_key_bits_aes, ER_RC6_BLOCK);
ER_OP(rc6_decrypt) = ER_LEGACY_OP("rc6-decrypt", er_rc6_dec, er_ops_key_bits_aes, ER_RC6_BLOCK);
