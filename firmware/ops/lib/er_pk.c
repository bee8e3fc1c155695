/* SPDX-License-Identifier: Apache-2.0 */
#include "er_pk.h"

#include <errno.h>

#include <mbedtls/ecp.h>
#include <mbedtls/rsa.h>

#include "er_drbg.h"
#include "er_kat.h"
#include "er_op.h"

int er_pk_mpi_hex(mbedtls_mpi *x, const char *hex)
{
	uint8_t buf[ER_PK_MAX_BYTES];
	int len = er_kat_unhex(buf, sizeof(buf), hex);

	if (len < 0) {
		return -EINVAL;
	}
	return er_pk_err(mbedtls_mpi_read_binary(x, buf, (size_t)len));
}

int er_pk_check_mpi(const mbedtls_mpi *x, const char *hex)
{
	mbedtls_mpi want;
	int ret;

	mbedtls_mpi_init(&want);
	ret = er_pk_mpi_hex(&want, hex);
	if (ret == 0 && mbedtls_mpi_cmp_mpi(x, &want) != 0) {
		ret = -EIO;
	}
	mbedtls_mpi_free(&want);
	return ret == 0 ? 0 : -EIO;
}

int er_pk_err(int ret)
{
	if (ret == 0) {
		return 0;
	}
	/* A high-level code may carry the bignum module's code in its low 7 bits. */
	if (((-ret) & 0x7F) == -MBEDTLS_ERR_MPI_ALLOC_FAILED ||
	    ret == MBEDTLS_ERR_ECP_ALLOC_FAILED) {
		return -ENOMEM;
	}
	if (ret == MBEDTLS_ERR_RSA_VERIFY_FAILED || ret == MBEDTLS_ERR_ECP_VERIFY_FAILED ||
	    ret == MBEDTLS_ERR_RSA_INVALID_PADDING) {
		return -EBADMSG;
	}
	return -EIO;
}

void er_pk_sink_mpi(const mbedtls_mpi *x)
{
	uint32_t low = 0;

	for (size_t i = 0; i < 8; i++) {
		low |= (uint32_t)mbedtls_mpi_get_bit(x, i) << i;
	}
	er_sink += low;
}

int er_pk_x25519_scalar(mbedtls_mpi *d, const uint8_t k[ER_PK_X25519_BYTES])
{
	int ret = mbedtls_mpi_read_binary_le(d, k, ER_PK_X25519_BYTES);

	/* Clear the three low bits and bit 255, set bit 254. */
	for (size_t bit = 0; ret == 0 && bit < 3; bit++) {
		ret = mbedtls_mpi_set_bit(d, bit, 0);
	}
	if (ret == 0) {
		ret = mbedtls_mpi_set_bit(d, 255, 0);
	}
	if (ret == 0) {
		ret = mbedtls_mpi_set_bit(d, 254, 1);
	}
	return er_pk_err(ret);
}

int er_pk_x25519(mbedtls_ecp_group *grp, const uint8_t k[ER_PK_X25519_BYTES],
		 const uint8_t u[ER_PK_X25519_BYTES], uint8_t out[ER_PK_X25519_BYTES])
{
	/* Blinding randomness for mbedtls_ecp_mul, kept apart from the measurement's er_drbg. */
	struct er_drbg_s blind;
	mbedtls_mpi d;
	mbedtls_ecp_point p, r;
	size_t olen = 0;
	int ret;

	er_drbg_seed(&blind, 7748U);
	mbedtls_mpi_init(&d);
	mbedtls_ecp_point_init(&p);
	mbedtls_ecp_point_init(&r);
	ret = er_pk_x25519_scalar(&d, k);
	if (ret == 0) {
		/* mbedTLS reads a Montgomery u-coordinate little-endian, top bit masked (5.). */
		ret = er_pk_err(mbedtls_ecp_point_read_binary(grp, &p, u, ER_PK_X25519_BYTES));
	}
	if (ret == 0) {
		ret = er_pk_err(mbedtls_ecp_mul(grp, &r, &d, &p, er_drbg_random, &blind));
	}
	if (ret == 0) {
		ret = er_pk_err(mbedtls_ecp_point_write_binary(grp, &r, MBEDTLS_ECP_PF_UNCOMPRESSED,
							       &olen, out, ER_PK_X25519_BYTES));
	}
	mbedtls_ecp_point_free(&r);
	mbedtls_ecp_point_free(&p);
	mbedtls_mpi_free(&d);
	return ret;
}

/* RFC 7748, section 6.1. */
static const char *const rfc7748_alice_priv =
	"77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a";
static const char *const rfc7748_alice_pub =
	"8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a";
static const char *const rfc7748_bob_priv =
	"5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb";
static const char *const rfc7748_bob_pub =
	"de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f";
static const char *const rfc7748_shared =
	"4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742";

/* Check X25519(k, u) == want for hex vectors; u NULL is the base point 9. */
static int x25519_check(mbedtls_ecp_group *grp, const char *k_hex, const char *u_hex,
			const char *want)
{
	uint8_t k[ER_PK_X25519_BYTES], u[ER_PK_X25519_BYTES] = {9}, out[ER_PK_X25519_BYTES];

	if (er_kat_unhex(k, sizeof(k), k_hex) != (int)sizeof(k) ||
	    (u_hex != NULL && er_kat_unhex(u, sizeof(u), u_hex) != (int)sizeof(u)) ||
	    er_pk_x25519(grp, k, u, out) != 0) {
		return -EIO;
	}
	return er_kat_check(out, sizeof(out), want);
}

int er_pk_x25519_selftest(void)
{
	mbedtls_ecp_group grp;
	int ret;

	mbedtls_ecp_group_init(&grp);
	ret = mbedtls_ecp_group_load(&grp, MBEDTLS_ECP_DP_CURVE25519) == 0 ? 0 : -EIO;
	if (ret == 0) {
		ret = x25519_check(&grp, rfc7748_alice_priv, NULL, rfc7748_alice_pub);
	}
	if (ret == 0) {
		ret = x25519_check(&grp, rfc7748_bob_priv, NULL, rfc7748_bob_pub);
	}
	if (ret == 0) {
		ret = x25519_check(&grp, rfc7748_alice_priv, rfc7748_bob_pub, rfc7748_shared);
	}
	if (ret == 0) {
		ret = x25519_check(&grp, rfc7748_bob_priv, rfc7748_alice_pub, rfc7748_shared);
	}
	mbedtls_ecp_group_free(&grp);
	return ret;
}
