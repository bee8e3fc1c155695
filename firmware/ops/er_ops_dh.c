/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief dh-keygen, dh-shared: finite-field Diffie-Hellman (lib/er_dh.c) in the published
 * groups of er_dh_groups: key_bits 512 (SKIP), 768 and 1024 (RFC 2409 Oakley groups 1
 * and 2), 2048 (RFC 3526 group 14), generator 2, full-size private exponents.
 *
 * dh-keygen draws a private exponent from er_drbg and computes the public value; dh-shared
 * computes the shared secret from a peer's public value made in prep. The self-test is the
 * test data of RFC 5114 appendix A.1 (its 1024-bit group with a 160-bit subgroup): both
 * public values from their private exponents and the shared secret from both sides.
 */
#include <errno.h>

#include "er_drbg.h"
#include "er_op.h"
#include "lib/er_dh.h"
#include "lib/er_pk.h"

/* RFC 5114 section 2.1 (the group) and appendix A.1 (the test data). */
static const char *const rfc5114_p =
	"B10B8F96A080E01DDE92DE5EAE5D54EC52C99FBCFB06A3C69A6A9DCA52D23B61"
	"6073E28675A23D189838EF1E2EE652C013ECB4AEA906112324975C3CD49B83BF"
	"ACCBDD7D90C4BD7098488E9C219A73724EFFD6FAE5644738FAA31A4FF55BCCC0"
	"A151AF5F0DC8B4BD45BF37DF365C1A65E68CFDA76D4DA708DF1FB2BC2E4A4371";
static const char *const rfc5114_g =
	"A4D1CBD5C3FD34126765A442EFB99905F8104DD258AC507FD6406CFF14266D31"
	"266FEA1E5C41564B777E690F5504F213160217B4B01B886A5E91547F9E2749F4"
	"D7FBD7D3B9A92EE1909D0D2263F80A76A6A24C087A091F531DBF0A0169B6A28A"
	"D662A4D18E73AFA32D779D5918D08BC8858F4DCEF97C2A24855E6EEB22B3B2E5";
static const char *const rfc5114_xa = "B9A3B3AE8FEFC1A2930496507086F8455D48943E";
static const char *const rfc5114_ya =
	"2A853B3D92197501B9015B2DEB3ED84F5E021DCC3E52F109D3273D2B7521281C"
	"BABE0E76FF5727FA8ACCE26956BA9A1FCA26F20228D8693FEB10841D84A73600"
	"54ECE5A7F5B7A61AD3DFB3C60D2E43106D8727DA37DF9CCE95B478755D06BCEA"
	"8F9D45965F75A5F3D1DF3701165FC9E50C4279CEB07F989540AE96D5D88ED776";
static const char *const rfc5114_xb = "9392C9F9EB6A7A6A9022F7D83E7223C6835BBDDA";
static const char *const rfc5114_yb =
	"717A6CB053371FF4A3B932941C1E5663F861A1D6AD34AE66576DFB98F6C6CBF9"
	"DDD5A56C7833F6BCFDFF095582AD868E440E8D09FD769E3CECCDC3D3B1E4CFA0"
	"57776CAAF9739B6A9FEE8E7411F8D6DAC09D6A4EDB46CC2B5D5203090EAE6126"
	"311E53FD2C14B574E6A3109A3DA1BE41BDCEAA186F5CE06716A2B6A07B3C33FE";
static const char *const rfc5114_z =
	"5C804F454D30D9C4DF85271F93528C91DF6B48AB5F80B3B59CAAC1B28F8ACBA9"
	"CD3E39F3CB614525D9521D2E644C53B807B810F340062F257D7D6FBFE8D5E8F0"
	"72E9B6E9AFDA9413EAFB2E8B0699B1FB5A0CACEDDEAEAD7E9CFBB36AE2B42083"
	"5BD83A19FB0B5E96BF8FA4D09E345525167ECD9155416F46F408ED31B63C6E6D";

/* The prepared op: our group and key pair, the peer's public value, the shared secret. */
static struct {
	struct er_dh_s self;
	mbedtls_mpi peer;
	mbedtls_mpi z;
	int live;
} dh;

/* One party of A.1: @p party's private exponent gives the published public value. */
static int dh_kat_party(struct er_dh_s *party, const char *x, const char *y)
{
	int ret = er_dh_load(party, rfc5114_p, rfc5114_g);

	if (ret == 0) {
		ret = er_pk_mpi_hex(&party->x, x);
	}
	if (ret == 0) {
		ret = er_dh_public(party);
	}
	return ret == 0 ? er_pk_check_mpi(&party->y, y) : ret;
}

static int dh_selftest(void)
{
	struct er_dh_s a, b;
	mbedtls_mpi z;
	int ret;

	er_dh_init(&a);
	er_dh_init(&b);
	mbedtls_mpi_init(&z);
	ret = dh_kat_party(&a, rfc5114_xa, rfc5114_ya);
	if (ret == 0) {
		ret = dh_kat_party(&b, rfc5114_xb, rfc5114_yb);
	}
	if (ret == 0) {
		ret = er_dh_shared(&a, &b.y, &z);
	}
	if (ret == 0) {
		ret = er_pk_check_mpi(&z, rfc5114_z);
	}
	if (ret == 0) {
		ret = er_dh_shared(&b, &a.y, &z);
	}
	if (ret == 0) {
		ret = er_pk_check_mpi(&z, rfc5114_z);
	}
	mbedtls_mpi_free(&z);
	er_dh_free(&b);
	er_dh_free(&a);
	return ret == 0 ? 0 : -EIO;
}

static void dh_release(void)
{
	if (dh.live) {
		mbedtls_mpi_free(&dh.z);
		mbedtls_mpi_free(&dh.peer);
		er_dh_free(&dh.self);
		dh.live = 0;
	}
}

/* Our group and a first key pair (which also fills the exponentiation cache). */
static int dh_prep_keygen(const struct er_params_s *params, struct er_arena_s *arena)
{
	const struct er_dh_group_s *group = er_dh_group(params->key_bits);
	int ret;

	(void)arena;
	if (group == NULL) {
		return -EINVAL;
	}
	dh_release();
	er_dh_init(&dh.self);
	mbedtls_mpi_init(&dh.peer);
	mbedtls_mpi_init(&dh.z);
	dh.live = 1;
	ret = er_dh_load(&dh.self, group->p, group->g);
	return ret == 0 ? er_dh_keygen(&dh.self, er_drbg_random, &er_drbg) : ret;
}

/* A new private exponent and its public value. mbedTLS allocates the exponentiation's
 * temporaries on its own heap: that is the library's arithmetic, not the op's buffers. */
static int dh_run_keygen(void)
{
	int ret = er_dh_keygen(&dh.self, er_drbg_random, &er_drbg);

	er_pk_sink_mpi(&dh.self.y);
	return ret;
}

/* Our key pair and the peer's public value (the peer's own key pair, in the same group). */
static int dh_prep_shared(const struct er_params_s *params, struct er_arena_s *arena)
{
	int ret = dh_prep_keygen(params, arena);
	const struct er_dh_group_s *group = er_dh_group(params->key_bits);
	struct er_dh_s peer;

	if (ret != 0) {
		return ret;
	}
	er_dh_init(&peer);
	ret = er_dh_load(&peer, group->p, group->g);
	if (ret == 0) {
		ret = er_dh_keygen(&peer, er_drbg_random, &er_drbg);
	}
	if (ret == 0) {
		ret = er_pk_err(mbedtls_mpi_copy(&dh.peer, &peer.y));
	}
	er_dh_free(&peer);
	return ret;
}

static int dh_run_shared(void)
{
	int ret = er_dh_shared(&dh.self, &dh.peer, &dh.z);

	er_pk_sink_mpi(&dh.z);
	return ret;
}

static const uint16_t dh_key_bits[] = {512, 768, 1024, 2048, 0};

ER_OP(dh_keygen) = {
	"dh-keygen", "public-key", {.key_bits = dh_key_bits}, ER_BACKEND_SOFTWARE, dh_selftest,
	dh_prep_keygen, dh_run_keygen, dh_release,
};
ER_OP(dh_shared) = {
	"dh-shared", "public-key", {.key_bits = dh_key_bits}, ER_BACKEND_SOFTWARE, dh_selftest,
	dh_prep_shared, dh_run_shared, dh_release,
};
