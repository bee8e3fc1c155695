/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief dsa-sign, dsa-verify: DSA of FIPS 186-4 with SHA-256, written in the project
 * (lib/er_dsa.c) because mbedTLS has none.
 *
 * key_bits selects the domain parameters published in RFC 6979 appendix A.2:
 * 1024 is (L, N) = (1024, 160) of A.2.1, 2048 is (2048, 256) of A.2.2. The key pair is
 * drawn from er_drbg in prep. One op hashes payload_bytes of message with SHA-256 and signs
 * (k from RFC 6979) or verifies the digest. The self-test signs "sample" with the RFC's
 * keys and compares r and s with the published values, and verifies them.
 */
#include <errno.h>
#include <string.h>

#include "er_drbg.h"
#include "er_mbedtls_compat.h"
#include "er_op.h"
#include "er_ops_util.h"
#include "lib/er_dsa.h"
#include "lib/er_pk.h"

#define DSA_HASH_BYTES 32U

/** A domain of RFC 6979 A.2 with its key pair and the SHA-256 signature of "sample". */
struct dsa_vector_s {
	uint16_t key_bits;
	const char *p, *q, *g, *x, *y, *r, *s;
};

static const struct dsa_vector_s dsa_vectors[] = {
	{
		/* RFC 6979 A.2.1: DSA, 1024 bits; signature with SHA-256, message "sample". */
		.key_bits = 1024,
		.p = "86F5CA03DCFEB225063FF830A0C769B9DD9D6153AD91D7CE27F787C43278B447"
		     "E6533B86B18BED6E8A48B784A14C252C5BE0DBF60B86D6385BD2F12FB763ED88"
		     "73ABFD3F5BA2E0A8C0A59082EAC056935E529DAF7C610467899C77ADEDFC846C"
		     "881870B7B19B2B58F9BE0521A17002E3BDD6B86685EE90B3D9A1B02B782B1779",
		.q = "996F967F6C8E388D9E28D01E205FBA957A5698B1",
		.g = "07B0F92546150B62514BB771E2A0C0CE387F03BDA6C56B505209FF25FD3C133D"
		     "89BBCD97E904E09114D9A7DEFDEADFC9078EA544D2E401AEECC40BB9FBBF78FD"
		     "87995A10A1C27CB7789B594BA7EFB5C4326A9FE59A070E136DB77175464ADCA4"
		     "17BE5DCE2F40D10A46A3A3943F26AB7FD9C0398FF8C76EE0A56826A8A88F1DBD",
		.x = "411602CB19A6CCC34494D79D98EF1E7ED5AF25F7",
		.y = "5DF5E01DED31D0297E274E1691C192FE5868FEF9E19A84776454B100CF16F653"
		     "92195A38B90523E2542EE61871C0440CB87C322FC4B4D2EC5E1E7EC766E1BE8D"
		     "4CE935437DC11C3C8FD426338933EBFE739CB3465F4D3668C5E473508253B1E6"
		     "82F65CBDC4FAE93C2EA212390E54905A86E2223170B44EAA7DA5DD9FFCFB7F3B",
		.r = "81F2F5850BE5BC123C43F71A3033E9384611C545",
		.s = "4CDD914B65EB6C66A8AAAD27299BEE6B035F5E89",
	},
	{
		/* RFC 6979 A.2.2: DSA, 2048 bits; signature with SHA-256, message "sample". */
		.key_bits = 2048,
		.p = "9DB6FB5951B66BB6FE1E140F1D2CE5502374161FD6538DF1648218642F0B5C48"
		     "C8F7A41AADFA187324B87674FA1822B00F1ECF8136943D7C55757264E5A1A44F"
		     "FE012E9936E00C1D3E9310B01C7D179805D3058B2A9F4BB6F9716BFE6117C6B5"
		     "B3CC4D9BE341104AD4A80AD6C94E005F4B993E14F091EB51743BF33050C38DE2"
		     "35567E1B34C3D6A5C0CEAA1A0F368213C3D19843D0B4B09DCB9FC72D39C8DE41"
		     "F1BF14D4BB4563CA28371621CAD3324B6A2D392145BEBFAC748805236F5CA2FE"
		     "92B871CD8F9C36D3292B5509CA8CAA77A2ADFC7BFD77DDA6F71125A7456FEA15"
		     "3E433256A2261C6A06ED3693797E7995FAD5AABBCFBE3EDA2741E375404AE25B",
		.q = "F2C3119374CE76C9356990B465374A17F23F9ED35089BD969F61C6DDE9998C1F",
		.g = "5C7FF6B06F8F143FE8288433493E4769C4D988ACE5BE25A0E24809670716C613"
		     "D7B0CEE6932F8FAA7C44D2CB24523DA53FBE4F6EC3595892D1AA58C4328A06C4"
		     "6A15662E7EAA703A1DECF8BBB2D05DBE2EB956C142A338661D10461C0D135472"
		     "085057F3494309FFA73C611F78B32ADBB5740C361C9F35BE90997DB2014E2EF5"
		     "AA61782F52ABEB8BD6432C4DD097BC5423B285DAFB60DC364E8161F4A2A35ACA"
		     "3A10B1C4D203CC76A470A33AFDCBDD92959859ABD8B56E1725252D78EAC66E71"
		     "BA9AE3F1DD2487199874393CD4D832186800654760E1E34C09E4D155179F9EC0"
		     "DC4473F996BDCE6EED1CABED8B6F116F7AD9CF505DF0F998E34AB27514B0FFE7",
		.x = "69C7548C21D0DFEA6B9A51C9EAD4E27C33D3B3F180316E5BCAB92C933F0E4DBC",
		.y = "667098C654426C78D7F8201EAC6C203EF030D43605032C2F1FA937E5237DBD94"
		     "9F34A0A2564FE126DC8B715C5141802CE0979C8246463C40E6B6BDAA2513FA61"
		     "1728716C2E4FD53BC95B89E69949D96512E873B9C8F8DFD499CC312882561ADE"
		     "CB31F658E934C0C197F2C4D96B05CBAD67381E7B768891E4DA3843D24D94CDFB"
		     "5126E9B8BF21E8358EE0E0A30EF13FD6A664C0DCE3731F7FB49A4845A4FD8254"
		     "687972A2D382599C9BAC4E0ED7998193078913032558134976410B89D2C171D1"
		     "23AC35FD977219597AA7D15C1A9A428E59194F75C721EBCBCFAE44696A499AFA"
		     "74E04299F132026601638CB87AB79190D4A0986315DA8EEC6561C938996BEADF",
		.r = "EACE8BDBBE353C432A795D9EC556C6D021F7A03F42C36E9BC87E4AC7932CC809",
		.s = "7081E175455F9247B812B74583E9E94F9EA79BD640DC962533B0680793A38D53",
	},
};

#define DSA_N_VECTORS (sizeof(dsa_vectors) / sizeof(dsa_vectors[0]))

/* The prepared op. */
static struct {
	struct er_dsa_s key;
	mbedtls_mpi r, s;
	uint8_t *msg;
	size_t len;
	int live; /* the bignums are initialised */
} dsa;

static int sha256_text(const char *text, uint8_t out[DSA_HASH_BYTES])
{
	return er_pk_err(er_mbedtls_sha256((const unsigned char *)text, strlen(text), out));
}

/* One vector: y from x, the signature of "sample", its verification, and the rejection of
 * the same signature on "test". */
static int dsa_kat(const struct dsa_vector_s *v)
{
	struct er_dsa_s key;
	mbedtls_mpi r, s;
	uint8_t h[DSA_HASH_BYTES];
	int ret;

	er_dsa_init(&key);
	mbedtls_mpi_init(&r);
	mbedtls_mpi_init(&s);
	ret = er_dsa_load_domain(&key, v->p, v->q, v->g);
	if (ret == 0) {
		ret = er_pk_mpi_hex(&key.x, v->x);
	}
	if (ret == 0) {
		ret = er_dsa_public(&key);
	}
	if (ret == 0) {
		ret = er_pk_check_mpi(&key.y, v->y);
	}
	if (ret == 0) {
		ret = sha256_text("sample", h);
	}
	if (ret == 0) {
		ret = er_dsa_sign(&key, MBEDTLS_MD_SHA256, h, sizeof(h), &r, &s);
	}
	if (ret == 0) {
		ret = er_pk_check_mpi(&r, v->r) == 0 && er_pk_check_mpi(&s, v->s) == 0 ? 0 : -EIO;
	}
	if (ret == 0) {
		ret = er_dsa_verify(&key, h, sizeof(h), &r, &s);
	}
	if (ret == 0) {
		ret = sha256_text("test", h);
	}
	if (ret == 0) {
		ret = er_dsa_verify(&key, h, sizeof(h), &r, &s) == -EBADMSG ? 0 : -EIO;
	}
	mbedtls_mpi_free(&s);
	mbedtls_mpi_free(&r);
	er_dsa_free(&key);
	return ret == 0 ? 0 : -EIO;
}

static int dsa_selftest(void)
{
	for (size_t i = 0; i < DSA_N_VECTORS; i++) {
		if (dsa_kat(&dsa_vectors[i]) != 0) {
			return -EIO;
		}
	}
	return 0;
}

static void dsa_release(void)
{
	if (dsa.live) {
		mbedtls_mpi_free(&dsa.s);
		mbedtls_mpi_free(&dsa.r);
		er_dsa_free(&dsa.key);
		dsa.live = 0;
	}
}

static int dsa_prep_sign(const struct er_params_s *params, struct er_arena_s *arena)
{
	const struct dsa_vector_s *v = NULL;
	int ret;

	for (size_t i = 0; i < DSA_N_VECTORS; i++) {
		if (dsa_vectors[i].key_bits == params->key_bits) {
			v = &dsa_vectors[i];
		}
	}
	if (v == NULL) {
		return -EINVAL;
	}
	dsa_release();
	er_dsa_init(&dsa.key);
	mbedtls_mpi_init(&dsa.r);
	mbedtls_mpi_init(&dsa.s);
	dsa.live = 1;
	dsa.len = params->payload_bytes;
	ret = er_ops_random_buffer(arena, dsa.len, &dsa.msg);
	if (ret == 0) {
		ret = er_dsa_load_domain(&dsa.key, v->p, v->q, v->g);
	}
	if (ret == 0) {
		ret = er_dsa_keygen(&dsa.key, er_drbg_random, &er_drbg);
	}
	return ret;
}

/* Sign: hash the message, sign the digest. mbedTLS allocates the bignum temporaries of
 * er_dsa_sign on its own heap: that is the library's arithmetic, not the op's buffers. */
static int dsa_run_sign(void)
{
	uint8_t h[DSA_HASH_BYTES];
	int ret = er_pk_err(er_mbedtls_sha256(dsa.msg, dsa.len, h));

	if (ret == 0) {
		ret = er_dsa_sign(&dsa.key, MBEDTLS_MD_SHA256, h, sizeof(h), &dsa.r, &dsa.s);
	}
	er_pk_sink_mpi(&dsa.s);
	return ret;
}

static int dsa_prep_verify(const struct er_params_s *params, struct er_arena_s *arena)
{
	int ret = dsa_prep_sign(params, arena);

	return ret == 0 ? dsa_run_sign() : ret;
}

static int dsa_run_verify(void)
{
	uint8_t h[DSA_HASH_BYTES];
	int ret = er_pk_err(er_mbedtls_sha256(dsa.msg, dsa.len, h));

	if (ret == 0) {
		ret = er_dsa_verify(&dsa.key, h, sizeof(h), &dsa.r, &dsa.s);
	}
	er_sink += (uint32_t)h[0] + (uint32_t)ret;
	return ret;
}

static const uint16_t dsa_key_bits[] = {1024, 2048, 0};

#define DSA_SPEC                                                                           \
	{                                                                                  \
		.key_bits = dsa_key_bits, .payload_min = 1, .payload_max = ER_OPS_PAYLOAD_MAX, \
		.payload_multiple = 1,                                                     \
	}

ER_OP(dsa_sign) = {
	"dsa-sign", "public-key", DSA_SPEC, ER_BACKEND_SOFTWARE, dsa_selftest, dsa_prep_sign,
	dsa_run_sign, dsa_release,
};
ER_OP(dsa_verify) = {
	"dsa-verify", "public-key", DSA_SPEC, ER_BACKEND_SOFTWARE, dsa_selftest, dsa_prep_verify,
	dsa_run_verify, dsa_release,
};
