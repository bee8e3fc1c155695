/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief Hash and MAC ops: md5, sha1, sha256, sha512, sha3-256, sha3-512, hmac-sha256.
 *
 * One run is one one-shot digest of the whole payload. One hmac-sha256 run is a whole HMAC
 * with a 32-byte key from er_drbg: mbedtls_md_hmac_starts (key schedule, inner and outer
 * pads), _update over the payload, _finish, on an md context set up in prep — mbedtls_md_hmac
 * itself would allocate the context on every call.
 *
 * Which implementation runs: mbedTLS for MD5, SHA-1, SHA-2 and HMAC; for SHA-3 the one
 * er_mbedtls_compat.h picks (ER_SHA3_IMPL): mbedTLS 3.5+ built with MBEDTLS_SHA3_C, else
 * the project's Keccak (ops/lib/er_keccak.c) — always the latter on the host, whose Debian
 * mbedTLS 2.28 has no SHA-3.
 *
 * Self-tests: MD5 against the RFC 1321 test suite, SHA-1 and SHA-2 against the FIPS 180
 * examples (NIST's "abc" and two-block messages), SHA-3 against the FIPS 202 examples
 * (the empty message and 1600 bits of 0xa3), HMAC-SHA256 against RFC 4231 test cases
 * 1, 2 and 6.
 */
#include <errno.h>
#include <string.h>

#include <mbedtls/md.h>

#include "er_drbg.h"
#include "er_mbedtls_compat.h"
#include "er_op.h"
#include "er_ops_util.h"
#include "lib/er_kat.h"

#define ER_HASH_DIGEST_MAX 64U
#define ER_HMAC_KEY_BYTES 32U

/* One-shot digest: 0, or nonzero on failure (an mbedTLS code or a negative errno). */
typedef int (*er_hash_fn)(const uint8_t *in, size_t len, uint8_t *out);

/** A published vector: @c msg repeated @c repeat times hashes to @c digest. */
struct er_hash_kat_s {
	const char *msg;
	uint16_t repeat;
	const char *digest;
};

struct er_hash_alg_s {
	er_hash_fn fn;
	size_t digest_len;
	const struct er_hash_kat_s *kats;
	size_t n_kats;
};

static struct {
	const uint8_t *in;
	size_t len;
	uint8_t key[ER_HMAC_KEY_BYTES];
	uint8_t digest[ER_HASH_DIGEST_MAX];
} er_hash;

/* Longest self-test message: 200 bytes (FIPS 202's 1600-bit example). */
static uint8_t er_hash_kat_msg[200];

#if defined(MBEDTLS_MD5_C)
static int er_hash_md5(const uint8_t *in, size_t len, uint8_t *out)
{
	return er_mbedtls_md5(in, len, out);
}

/* RFC 1321 appendix A.5 */
static const struct er_hash_kat_s er_hash_kat_md5[] = {
	{"", 1, "d41d8cd98f00b204e9800998ecf8427e"},
	{"a", 1, "0cc175b9c0f1b6a831c399e269772661"},
	{"abc", 1, "900150983cd24fb0d6963f7d28e17f72"},
	{"message digest", 1, "f96b697d7cb7938d525a2f31aaf161d0"},
	{"abcdefghijklmnopqrstuvwxyz", 1, "c3fcd3d76192e4007dfb496cca67e13b"},
	{"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", 1,
	 "d174ab98d277d9f5a5611c2c9f419d9f"},
	{"1234567890", 8, "57edf4a22be3c955ac49da2e2107b67a"},
};
#endif

#define ER_FIPS180_MSG2_448 "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
#define ER_FIPS180_MSG2_896                                                                \
	"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq" \
	"klmnopqrlmnopqrsmnopqrstnopqrstu"

#if defined(MBEDTLS_SHA1_C)
static int er_hash_sha1(const uint8_t *in, size_t len, uint8_t *out)
{
	return er_mbedtls_sha1(in, len, out);
}

/* FIPS 180 examples: SHA1 one-block and two-block messages */
static const struct er_hash_kat_s er_hash_kat_sha1[] = {
	{"abc", 1, "a9993e364706816aba3e25717850c26c9cd0d89d"},
	{ER_FIPS180_MSG2_448, 1, "84983e441c3bd26ebaae4aa1f95129e5e54670f1"},
};
#endif

#if defined(MBEDTLS_SHA256_C)
static int er_hash_sha256(const uint8_t *in, size_t len, uint8_t *out)
{
	return er_mbedtls_sha256(in, len, out);
}

/* FIPS 180 examples: SHA256 one-block and two-block messages */
static const struct er_hash_kat_s er_hash_kat_sha256[] = {
	{"abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	{ER_FIPS180_MSG2_448, 1,
	 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
};
#endif

#if defined(MBEDTLS_SHA512_C)
static int er_hash_sha512(const uint8_t *in, size_t len, uint8_t *out)
{
	return er_mbedtls_sha512(in, len, out);
}

/* FIPS 180 examples: SHA512 one-block and two-block messages */
static const struct er_hash_kat_s er_hash_kat_sha512[] = {
	{"abc", 1,
	 "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
	 "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"},
	{ER_FIPS180_MSG2_896, 1,
	 "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018"
	 "501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909"},
};
#endif

static int er_hash_sha3_256(const uint8_t *in, size_t len, uint8_t *out)
{
	return er_sha3(32U, in, len, out);
}

static int er_hash_sha3_512(const uint8_t *in, size_t len, uint8_t *out)
{
	return er_sha3(64U, in, len, out);
}

/* FIPS 202 examples (NIST CSRC "Examples with Intermediate Values"): 0-bit and 1600-bit
 * messages; "abc" from NIST's SHA-3 example values. */
static const struct er_hash_kat_s er_hash_kat_sha3_256[] = {
	{"", 1, "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a"},
	{"abc", 1, "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"},
	{"\xa3", 200, "79f38adec5c20307a98ef76e8324afbfd46cfd81b22e3973c65fa1bd9de31787"},
};

static const struct er_hash_kat_s er_hash_kat_sha3_512[] = {
	{"", 1,
	 "a69f73cca23a9ac5c8b567dc185a756e97c982164fe25859e0d1dcc1475c80a6"
	 "15b2123af1f5f94c11e3e9402c3ac558f500199d95b6d3e301758586281dcd26"},
	{"abc", 1,
	 "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e"
	 "10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0"},
	{"\xa3", 200,
	 "e76dfad22084a8b1467fcf2ffa58361bec7628edf5f3fdc0e4805dc48caeeca8"
	 "1b7c13c30adf52a3659584739a2df46be589c51ca1a4a8416df6545a1ce8ba00"},
};

/* Spread a vector's message (msg repeated) into er_hash_kat_msg. */
static int er_hash_kat_expand(const char *msg, uint16_t repeat, size_t *len)
{
	size_t part = strlen(msg);

	if (part * repeat > sizeof(er_hash_kat_msg)) {
		return -EINVAL;
	}
	for (uint16_t i = 0; i < repeat; i++) {
		memcpy(er_hash_kat_msg + i * part, msg, part);
	}
	*len = part * repeat;
	return 0;
}

static int er_hash_selftest(const struct er_hash_alg_s *alg)
{
	uint8_t digest[ER_HASH_DIGEST_MAX];

	for (size_t i = 0; i < alg->n_kats; i++) {
		const struct er_hash_kat_s *kat = &alg->kats[i];
		size_t len;

		if (er_hash_kat_expand(kat->msg, kat->repeat, &len) != 0 ||
		    alg->fn(er_hash_kat_msg, len, digest) != 0 ||
		    er_kat_check(digest, alg->digest_len, kat->digest) != 0) {
			return -EIO;
		}
	}
	return 0;
}

static int er_hash_prep(const struct er_params_s *params, struct er_arena_s *arena)
{
	uint8_t *in;
	int ret = er_ops_random_buffer(arena, params->payload_bytes, &in);

	er_hash.in = in;
	er_hash.len = params->payload_bytes;
	return ret;
}

static inline int er_hash_run(const struct er_hash_alg_s *alg)
{
	int ret = alg->fn(er_hash.in, er_hash.len, er_hash.digest);

	er_ops_fold(er_hash.digest, alg->digest_len);
	return er_ops_mbedtls_errno(ret);
}

/* hmac-sha256 */
#if defined(MBEDTLS_SHA256_C) && defined(MBEDTLS_MD_C)
/** RFC 4231 vector: the key is @c key_hex repeated @c key_repeat times. */
struct er_hmac_kat_s {
	const char *key_hex;
	uint16_t key_repeat;
	const char *msg;
	const char *mac;
};

/* The prepared op's HMAC context, set up (allocated by mbedTLS) in prep, not in run. */
static mbedtls_md_context_t er_hmac_ctx;

/* One HMAC on a set-up context: key schedule, inner and outer hash. */
static int er_hmac_sha256(mbedtls_md_context_t *ctx, const uint8_t *key, size_t key_len,
			  const uint8_t *in, size_t len, uint8_t *out)
{
	int ret = mbedtls_md_hmac_starts(ctx, key, key_len);

	if (ret == 0) {
		ret = mbedtls_md_hmac_update(ctx, in, len);
	}
	if (ret == 0) {
		ret = mbedtls_md_hmac_finish(ctx, out);
	}
	return ret;
}

static int er_hmac_setup(mbedtls_md_context_t *ctx)
{
	mbedtls_md_init(ctx);
	return mbedtls_md_setup(ctx, mbedtls_md_info_from_type(MBEDTLS_MD_SHA256), 1);
}

static int er_hmac_selftest(void)
{
	/* RFC 4231 section 4: test cases 1, 2 and 6 (a key longer than the block) */
	static const struct er_hmac_kat_s kats[] = {
		{"0b", 20, "Hi There",
		 "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
		{"4a656665", 1, "what do ya want for nothing?",
		 "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
		{"aa", 131, "Test Using Larger Than Block-Size Key - Hash Key First",
		 "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
	};
	uint8_t key[131];
	uint8_t mac[32];
	mbedtls_md_context_t ctx;
	int ret = er_hmac_setup(&ctx);

	for (size_t i = 0; ret == 0 && i < sizeof(kats) / sizeof(kats[0]); i++) {
		const struct er_hmac_kat_s *kat = &kats[i];
		size_t len = 0;

		for (uint16_t r = 0; r < kat->key_repeat; r++) {
			int n = er_kat_unhex(key + len, sizeof(key) - len, kat->key_hex);

			ret = n < 0 ? n : ret;
			len += n < 0 ? 0U : (size_t)n;
		}
		if (ret == 0) {
			ret = er_hmac_sha256(&ctx, key, len, (const uint8_t *)kat->msg,
					     strlen(kat->msg), mac);
		}
		if (ret == 0) {
			ret = er_kat_check(mac, sizeof(mac), kat->mac);
		}
	}
	mbedtls_md_free(&ctx);
	return ret == 0 ? 0 : -EIO;
}

static int er_hmac_prep(const struct er_params_s *params, struct er_arena_s *arena)
{
	int ret = er_ops_mbedtls_errno(er_hmac_setup(&er_hmac_ctx));

	er_drbg_random(&er_drbg, er_hash.key, sizeof(er_hash.key));
	return ret != 0 ? ret : er_hash_prep(params, arena);
}

static void er_hmac_release(void)
{
	mbedtls_md_free(&er_hmac_ctx);
}

static int er_hmac_run(void)
{
	int ret = er_hmac_sha256(&er_hmac_ctx, er_hash.key, sizeof(er_hash.key), er_hash.in,
				 er_hash.len, er_hash.digest);

	er_ops_fold(er_hash.digest, 32U);
	return er_ops_mbedtls_errno(ret);
}
#endif

#define ER_HASH_ALG(fn_, len_, kats_)                                                      \
	{                                                                                  \
		.fn = fn_, .digest_len = len_, .kats = kats_,                              \
		.n_kats = sizeof(kats_) / sizeof(kats_[0]),                                \
	}

/* Per op: its algorithm and a selftest/run pair bound to it. */
#define ER_HASH_OP_FNS(id, fn_, len_, kats_)                                               \
	static const struct er_hash_alg_s id##_alg = ER_HASH_ALG(fn_, len_, kats_);       \
	static int id##_selftest(void)                                                     \
	{                                                                                  \
		return er_hash_selftest(&id##_alg);                                        \
	}                                                                                  \
	static int id##_run(void)                                                          \
	{                                                                                  \
		return er_hash_run(&id##_alg);                                             \
	}

#define ER_HASH_SPEC                                                                       \
	{                                                                                  \
		.payload_min = 1U, .payload_max = ER_OPS_PAYLOAD_MAX, .payload_multiple = 1U \
	}

#define ER_HASH_OP(op_name, id, prep_, release_)                                           \
	{                                                                                  \
		.name = op_name, .family = "hash", .spec = ER_HASH_SPEC,                   \
		.backend = ER_BACKEND_SOFTWARE, .selftest = id##_selftest, .prep = prep_,  \
		.run = id##_run, .release = release_,                                      \
	}

#if defined(MBEDTLS_MD5_C)
ER_HASH_OP_FNS(er_md5, er_hash_md5, 16U, er_hash_kat_md5)
#endif
#if defined(MBEDTLS_SHA1_C)
ER_HASH_OP_FNS(er_sha1, er_hash_sha1, 20U, er_hash_kat_sha1)
#endif
#if defined(MBEDTLS_SHA256_C)
ER_HASH_OP_FNS(er_sha256, er_hash_sha256, 32U, er_hash_kat_sha256)
#endif
#if defined(MBEDTLS_SHA512_C)
ER_HASH_OP_FNS(er_sha512, er_hash_sha512, 64U, er_hash_kat_sha512)
#endif
ER_HASH_OP_FNS(er_sha3_256, er_hash_sha3_256, 32U, er_hash_kat_sha3_256)
ER_HASH_OP_FNS(er_sha3_512, er_hash_sha3_512, 64U, er_hash_kat_sha3_512)

/* Ops whose algorithm mbedTLS was built without are left out of the catalogue. */
#if defined(MBEDTLS_MD5_C)
ER_OP(md5) = ER_HASH_OP("md5", er_md5, er_hash_prep, NULL);
#endif
#if defined(MBEDTLS_SHA1_C)
ER_OP(sha1) = ER_HASH_OP("sha1", er_sha1, er_hash_prep, NULL);
#endif
#if defined(MBEDTLS_SHA256_C)
ER_OP(sha256) = ER_HASH_OP("sha256", er_sha256, er_hash_prep, NULL);
#endif
#if defined(MBEDTLS_SHA512_C)
ER_OP(sha512) = ER_HASH_OP("sha512", er_sha512, er_hash_prep, NULL);
#endif
ER_OP(sha3_256) = ER_HASH_OP("sha3-256", er_sha3_256, er_hash_prep, NULL);
ER_OP(sha3_512) = ER_HASH_OP("sha3-512", er_sha3_512, er_hash_prep, NULL);
#if defined(MBEDTLS_SHA256_C) && defined(MBEDTLS_MD_C)
ER_OP(hmac_sha256) = ER_HASH_OP("hmac-sha256", er_hmac, er_hmac_prep, er_hmac_release);
#endif
