/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Known-answer tests of the primitives written in this project (ops/lib/): RC4 against the
 * full tables of RFC 6229, RC5-32/12/16 against Rivest's paper, RC6-32/20 against the RC6
 * submission, Keccak-f[1600] against the Keccak team's intermediate values and SHA-3 against
 * the FIPS 202 examples; and the hex helpers the self-tests use.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "er_test.h"
#include "lib/er_kat.h"
#include "lib/er_keccak.h"
#include "lib/er_rc4.h"
#include "lib/er_rc5.h"
#include "lib/er_rc6.h"

static uint8_t unhexed[256];

/* Decode a vector field, or fail the test. */
static size_t hex(const char *text, uint8_t *out, size_t cap)
{
	int n = er_kat_unhex(out, cap, text);

	ER_CHECK(n >= 0);
	return n < 0 ? 0U : (size_t)n;
}

static void test_kat_helpers(void)
{
	uint8_t buf[4];

	ER_CHECK_INT(er_kat_unhex(buf, sizeof(buf), "01 aB ff"), 3);
	ER_CHECK(buf[0] == 0x01 && buf[1] == 0xab && buf[2] == 0xff);
	ER_CHECK_INT(er_kat_unhex(buf, sizeof(buf), ""), 0);
	ER_CHECK_INT(er_kat_unhex(buf, sizeof(buf), "0"), -EINVAL);
	ER_CHECK_INT(er_kat_unhex(buf, sizeof(buf), "0 1"), -EINVAL);
	ER_CHECK_INT(er_kat_unhex(buf, sizeof(buf), "0g"), -EINVAL);
	ER_CHECK_INT(er_kat_check(buf, 3, "01abff"), 0);
	ER_CHECK_INT(er_kat_check(buf, 3, "01abfe"), -EIO);  /* one bit off */
	ER_CHECK_INT(er_kat_check(buf, 3, "01ab"), -EIO);    /* vector shorter */
	ER_CHECK_INT(er_kat_check(buf, 2, "01abff"), -EIO);  /* vector longer */
	ER_CHECK_INT(er_kat_check(buf, 3, "01abfx"), -EIO);  /* not hex */
	ER_CHECK_INT(er_kat_unhex(buf, sizeof(buf), "0102030405"), -ENOSPC);
}

/* RFC 6229 section 2: keystream blocks at these offsets, for each key below. */
static const uint16_t rc4_offsets[18] = {
	0, 16, 240, 256, 496, 512, 752, 768, 1008, 1024, 1520, 1536, 2032, 2048, 3056, 3072,
	4080, 4096,
};

struct rc4_table_s {
	const char *key;
	const char *blocks[18];
};

static const struct rc4_table_s rc4_tables[] = {
	{"0102030405",
	 {"b2 39 63 05  f0 3d c0 27   cc c3 52 4a  0a 11 18 a8",
	  "69 82 94 4f  18 fc 82 d5   89 c4 03 a4  7a 0d 09 19",
	  "28 cb 11 32  c9 6c e2 86   42 1d ca ad  b8 b6 9e ae",
	  "1c fc f6 2b  03 ed db 64   1d 77 df cf  7f 8d 8c 93",
	  "42 b7 d0 cd  d9 18 a8 a3   3d d5 17 81  c8 1f 40 41",
	  "64 59 84 44  32 a7 da 92   3c fb 3e b4  98 06 61 f6",
	  "ec 10 32 7b  de 2b ee fd   18 f9 27 76  80 45 7e 22",
	  "eb 62 63 8d  4f 0b a1 fe   9f ca 20 e0  5b f8 ff 2b",
	  "45 12 90 48  e6 a0 ed 0b   56 b4 90 33  8f 07 8d a5",
	  "30 ab bc c7  c2 0b 01 60   9f 23 ee 2d  5f 6b b7 df",
	  "32 94 f7 44  d8 f9 79 05   07 e7 0f 62  e5 bb ce ea",
	  "d8 72 9d b4  18 82 25 9b   ee 4f 82 53  25 f5 a1 30",
	  "1e b1 4a 0c  13 b3 bf 47   fa 2a 0b a9  3a d4 5b 8b",
	  "cc 58 2f 8b  a9 f2 65 e2   b1 be 91 12  e9 75 d2 d7",
	  "f2 e3 0f 9b  d1 02 ec bf   75 aa ad e9  bc 35 c4 3c",
	  "ec 0e 11 c4  79 dc 32 9d   c8 da 79 68  fe 96 56 81",
	  "06 83 26 a2  11 84 16 d2   1f 9d 04 b2  cd 1c a0 50",
	  "ff 25 b5 89  95 99 67 07   e5 1f bd f0  8b 34 d8 75"}},
	{"0102030405060708090a0b0c0d0e0f10",
	 {"9a c7 cc 9a  60 9d 1e f7   b2 93 28 99  cd e4 1b 97",
	  "52 48 c4 95  90 14 12 6a   6e 8a 84 f1  1d 1a 9e 1c",
	  "06 59 02 e4  b6 20 f6 cc   36 c8 58 9f  66 43 2f 2b",
	  "d3 9d 56 6b  c6 bc e3 01   07 68 15 15  49 f3 87 3f",
	  "b6 d1 e6 c4  a5 e4 77 1c   ad 79 53 8d  f2 95 fb 11",
	  "c6 8c 1d 5c  55 9a 97 41   23 df 1d bc  52 a4 3b 89",
	  "c5 ec f8 8d  e8 97 fd 57   fe d3 01 70  1b 82 a2 59",
	  "ec cb e1 3d  e1 fc c9 1c   11 a0 b2 6c  0b c8 fa 4d",
	  "e7 a7 25 74  f8 78 2a e2   6a ab cf 9e  bc d6 60 65",
	  "bd f0 32 4e  60 83 dc c6   d3 ce dd 3c  a8 c5 3c 16",
	  "b4 01 10 c4  19 0b 56 22   a9 61 16 b0  01 7e d2 97",
	  "ff a0 b5 14  64 7e c0 4f   63 06 b8 92  ae 66 11 81",
	  "d0 3d 1b c0  3c d3 3d 70   df f9 fa 5d  71 96 3e bd",
	  "8a 44 12 64  11 ea a7 8b   d5 1e 8d 87  a8 87 9b f5",
	  "fa be b7 60  28 ad e2 d0   e4 87 22 e4  6c 46 15 a3",
	  "c0 5d 88 ab  d5 03 57 f9   35 a6 3c 59  ee 53 76 23",
	  "ff 38 26 5c  16 42 c1 ab   e8 d3 c2 fe  5e 57 2b f8",
	  "a3 6a 4c 30  1a e8 ac 13   61 0c cb c1  22 56 ca cc"}},
	{"0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20",
	 {"ea a6 bd 25  88 0b f9 3d   3f 5d 1e 4c  a2 61 1d 91",
	  "cf a4 5c 9f  7e 71 4b 54   bd fa 80 02  7c b1 43 80",
	  "11 4a e3 44  de d7 1b 35   f2 e6 0f eb  ad 72 7f d8",
	  "02 e1 e7 05  6b 0f 62 39   00 49 64 22  94 3e 97 b6",
	  "91 cb 93 c7  87 96 4e 10   d9 52 7d 99  9c 6f 93 6b",
	  "49 b1 8b 42  f8 e8 36 7c   be b5 ef 10  4b a1 c7 cd",
	  "87 08 4b 3b  a7 00 ba de   95 56 10 67  27 45 b3 74",
	  "e7 a7 b9 e9  ec 54 0d 5f   f4 3b db 12  79 2d 1b 35",
	  "c7 99 b5 96  73 8f 6b 01   8c 76 c7 4b  17 59 bd 90",
	  "7f ec 5b fd  9f 9b 89 ce   65 48 30 90  92 d7 e9 58",
	  "40 f2 50 b2  6d 1f 09 6a   4a fd 4c 34  0a 58 88 15",
	  "3e 34 13 5c  79 db 01 02   00 76 76 51  cf 26 30 73",
	  "f6 56 ab cc  f8 8d d8 27   02 7b 2c e9  17 d4 64 ec",
	  "18 b6 25 03  bf bc 07 7f   ba bb 98 f2  0d 98 ab 34",
	  "8a ed 95 ee  5b 0d cb fb   ef 4e b2 1d  3a 3f 52 f9",
	  "62 5a 1a b0  0e e3 9a 53   27 34 6b dd  b0 1a 9c 18",
	  "a1 3a 7c 79  c7 e1 19 b5   ab 02 96 ab  28 c3 00 b9",
	  "f3 e4 c0 a2  e0 2d 1d 01   f7 f0 a7 46  18 af 2b 48"}},
};

#define RC4_STREAM_BYTES (4096U + 16U)

static void test_rc4(void)
{
	static uint8_t zeros[RC4_STREAM_BYTES];
	static uint8_t stream[RC4_STREAM_BYTES];
	static uint8_t split[RC4_STREAM_BYTES];
	struct er_rc4_s rc4;

	for (size_t t = 0; t < sizeof(rc4_tables) / sizeof(rc4_tables[0]); t++) {
		size_t key_len = hex(rc4_tables[t].key, unhexed, sizeof(unhexed));

		ER_CHECK_INT(er_rc4_setkey(&rc4, unhexed, key_len), 0);
		er_rc4_crypt(&rc4, zeros, stream, sizeof(stream));
		for (size_t b = 0; b < 18; b++) {
			ER_CHECK_INT(er_kat_check(stream + rc4_offsets[b], 16, rc4_tables[t].blocks[b]),
				     0);
		}
		/* The keystream continues across calls of any length. */
		ER_CHECK_INT(er_rc4_setkey(&rc4, unhexed, key_len), 0);
		for (size_t off = 0, step = 1; off < sizeof(split); off += step, step = step * 3 % 97) {
			size_t n = off + step > sizeof(split) ? sizeof(split) - off : step;

			er_rc4_crypt(&rc4, zeros + off, split + off, n);
		}
		ER_CHECK(memcmp(stream, split, sizeof(stream)) == 0);
	}
	ER_CHECK_INT(er_rc4_setkey(&rc4, unhexed, 0), -EINVAL);
	ER_CHECK_INT(er_rc4_setkey(&rc4, zeros, 257), -EINVAL);
}

struct block_kat_s {
	const char *key;
	const char *pt;
	const char *ct;
};

/* Rivest, "The RC5 Encryption Algorithm": the RC5-32/12/16 examples, each plaintext the
 * previous ciphertext. */
static const struct block_kat_s rc5_kats[] = {
	{"00000000000000000000000000000000", "0000000000000000", "21A5DBEE154B8F6D"},
	{"915F4619BE41B2516355A50110A9CE91", "21A5DBEE154B8F6D", "F7C013AC5B2B8952"},
	{"783348E75AEB0F2FD7B169BB8DC16787", "F7C013AC5B2B8952", "2F42B3B70369FC92"},
	{"DC49DB1375A5584F6485B413B5F12BAF", "2F42B3B70369FC92", "65C178B284D197CC"},
	{"5269F149D41BA0152497574D7F153125", "65C178B284D197CC", "EB44E415DA319824"},
};

/* Each vector encrypts to its ciphertext, which decrypts in place to the plaintext. */
static void check_block_cipher(const struct er_block_cipher_s *cipher, void *ctx,
			       const struct block_kat_s *kats, size_t n)
{
	uint8_t pt[16];
	uint8_t block[16];

	for (size_t i = 0; i < n; i++) {
		size_t key_len = hex(kats[i].key, unhexed, sizeof(unhexed));

		ER_CHECK_INT(cipher->setkey(ctx, unhexed, key_len), 0);
		ER_CHECK_INT(hex(kats[i].pt, pt, sizeof(pt)), cipher->block);
		cipher->encrypt(ctx, pt, block);
		ER_CHECK_INT(er_kat_check(block, cipher->block, kats[i].ct), 0);
		cipher->decrypt(ctx, block, block);
		ER_CHECK(memcmp(block, pt, cipher->block) == 0);
	}
	ER_CHECK_INT(cipher->setkey(ctx, unhexed, 256), -EINVAL);
}

static void test_rc5(void)
{
	struct er_rc5_s rc5;

	check_block_cipher(&er_rc5_block, &rc5, rc5_kats, sizeof(rc5_kats) / sizeof(rc5_kats[0]));
}

/* Rivest, Robshaw, Sidney, Yin, "The RC6 Block Cipher", appendix A (test vectors). */
static const struct block_kat_s rc6_kats[] = {
	{"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
	 "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
	 "8f c3 a5 36 56 b1 f7 78 c1 29 df 4e 98 48 a4 1e"},
	{"01 23 45 67 89 ab cd ef 01 12 23 34 45 56 67 78",
	 "02 13 24 35 46 57 68 79 8a 9b ac bd ce df e0 f1",
	 "52 4e 19 2f 47 15 c6 23 1f 51 f6 36 7e a4 3f 18"},
	{"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
	 "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
	 "6c d6 1b cb 19 0b 30 38 4e 8a 3f 16 86 90 ae 82"},
	{"01 23 45 67 89 ab cd ef 01 12 23 34 45 56 67 78 89 9a ab bc cd de ef f0",
	 "02 13 24 35 46 57 68 79 8a 9b ac bd ce df e0 f1",
	 "68 83 29 d0 19 e5 05 04 1e 52 e9 2a f9 52 91 d4"},
	{"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 "
	 "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
	 "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
	 "8f 5f bd 05 10 d1 5f a8 93 fa 3f da 6e 85 7e c2"},
	{"01 23 45 67 89 ab cd ef 01 12 23 34 45 56 67 78 "
	 "89 9a ab bc cd de ef f0 10 32 54 76 98 ba dc fe",
	 "02 13 24 35 46 57 68 79 8a 9b ac bd ce df e0 f1",
	 "c8 24 18 16 f0 d7 e4 89 20 ad 16 a1 67 4e 5d 48"},
};

static void test_rc6(void)
{
	struct er_rc6_s rc6;

	check_block_cipher(&er_rc6_block, &rc6, rc6_kats, sizeof(rc6_kats) / sizeof(rc6_kats[0]));
}

static void test_keccak_f1600(void)
{
	/* KeccakF-1600-IntermediateValues.txt (Keccak team): the all-zero state after one
	 * permutation, lanes in order. */
	static const uint64_t zero_after_one[ER_KECCAK_LANES] = {
		0xF1258F7940E1DDE7ULL, 0x84D5CCF933C0478AULL, 0xD598261EA65AA9EEULL,
		0xBD1547306F80494DULL, 0x8B284E056253D057ULL, 0xFF97A42D7F8E6FD4ULL,
		0x90FEE5A0A44647C4ULL, 0x8C5BDA0CD6192E76ULL, 0xAD30A6F71B19059CULL,
		0x30935AB7D08FFC64ULL, 0xEB5AA93F2317D635ULL, 0xA9A6E6260D712103ULL,
		0x81A57C16DBCF555FULL, 0x43B831CD0347C826ULL, 0x01F22F1A11A5569FULL,
		0x05E5635A21D9AE61ULL, 0x64BEFEF28CC970F2ULL, 0x613670957BC46611ULL,
		0xB87C5A554FD00ECBULL, 0x8C3EE88A1CCF32C8ULL, 0x940C7922AE3A2614ULL,
		0x1841F924A2C509E4ULL, 0x16F53526E70465C2ULL, 0x75F644E97F30A13BULL,
		0xEAF1FF7B5CECA249ULL,
	};
	uint64_t a[ER_KECCAK_LANES] = {0};

	er_keccak_f1600(a);
	ER_CHECK(memcmp(a, zero_after_one, sizeof(a)) == 0);
}

struct sha3_kat_s {
	size_t digest_bytes;
	const char *msg;
	size_t repeat;
	const char *digest;
};

/* FIPS 202 examples (NIST CSRC, "Cryptographic Standards and Guidelines: Examples with
 * Intermediate Values"): the empty message, "abc", and 1600 bits of 0xa3 — longer than
 * every rate, so it takes two absorbing blocks. */
static const struct sha3_kat_s sha3_kats[] = {
	{28, "", 1, "6b4e03423667dbb73b6e15454f0eb1abd4597f9a1b078e3f5b5a6bc7"},
	{32, "", 1, "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a"},
	{48, "", 1,
	 "0c63a75b845e4f7d01107d852e4c2485c51a50aaaa94fc61995e71bbee983a2a"
	 "c3713831264adb47fb6bd1e058d5f004"},
	{64, "", 1,
	 "a69f73cca23a9ac5c8b567dc185a756e97c982164fe25859e0d1dcc1475c80a6"
	 "15b2123af1f5f94c11e3e9402c3ac558f500199d95b6d3e301758586281dcd26"},
	{28, "abc", 1, "e642824c3f8cf24ad09234ee7d3c766fc9a3a5168d0c94ad73b46fdf"},
	{32, "abc", 1, "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"},
	{48, "abc", 1,
	 "ec01498288516fc926459f58e2c6ad8df9b473cb0fc08c2596da7cf0e49be4b2"
	 "98d88cea927ac7f539f1edf228376d25"},
	{64, "abc", 1,
	 "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e"
	 "10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0"},
	{32, "\xa3", 200, "79f38adec5c20307a98ef76e8324afbfd46cfd81b22e3973c65fa1bd9de31787"},
	{64, "\xa3", 200,
	 "e76dfad22084a8b1467fcf2ffa58361bec7628edf5f3fdc0e4805dc48caeeca8"
	 "1b7c13c30adf52a3659584739a2df46be589c51ca1a4a8416df6545a1ce8ba00"},
};

static void test_sha3(void)
{
	uint8_t msg[200];
	uint8_t digest[64];

	for (size_t i = 0; i < sizeof(sha3_kats) / sizeof(sha3_kats[0]); i++) {
		const struct sha3_kat_s *kat = &sha3_kats[i];
		size_t part = strlen(kat->msg);

		for (size_t r = 0; r < kat->repeat; r++) {
			memcpy(msg + r * part, kat->msg, part);
		}
		ER_CHECK_INT(er_keccak_sha3(kat->digest_bytes, msg, part * kat->repeat, digest), 0);
		ER_CHECK_INT(er_kat_check(digest, kat->digest_bytes, kat->digest), 0);
	}
	ER_CHECK_INT(er_keccak_sha3(20, msg, 0, digest), -EINVAL);
}

int main(void)
{
	ER_RUN(test_kat_helpers);
	ER_RUN(test_rc4);
	ER_RUN(test_rc5);
	ER_RUN(test_rc6);
	ER_RUN(test_keccak_f1600);
	ER_RUN(test_sha3);
	return er_test_summary();
}
