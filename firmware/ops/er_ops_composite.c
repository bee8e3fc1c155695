/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief iot-join: the lightweight IoT join protocol of the ESP32/Arduino study, as one op.
 *
 * One run is the device's side of a join: a fresh X25519 key pair (RFC 7748) from er_drbg,
 * the shared secret with the gateway's public key (made in prep), SHA-3-256 (FIPS 202) of
 * the 32-byte secret as an AES-256 key, and one payload_bytes message encrypted with it in
 * AES-256-CTR (SP 800-38A) under a counter block drawn in prep. SHA-3 is mbedTLS's where it
 * has it, else the project's Keccak (er_mbedtls_compat.h).
 *
 * The self-test checks every step against its published vector: X25519 against RFC 7748
 * section 6.1, and the catalogue's own sha3-256 (FIPS 202) and aes-ctr-encrypt
 * (SP 800-38A F.5) self-tests. mbedTLS allocates its bignum temporaries on its own heap
 * inside every run: that is the library's arithmetic, not the op's buffers.
 */
#include <errno.h>
#include <string.h>

#include <mbedtls/aes.h>
#include <mbedtls/ecdh.h>

#include "er_drbg.h"
#include "er_mbedtls_compat.h"
#include "er_op.h"
#include "er_ops_util.h"
#include "lib/er_pk.h"

#define IOT_KEY_BYTES 32U
#define IOT_BLOCK 16U

/* The prepared join. */
static struct {
	mbedtls_ecp_group grp;
	mbedtls_mpi d, z;
	mbedtls_ecp_point q, gateway;
	mbedtls_aes_context aes;
	uint8_t nonce[IOT_BLOCK];
	uint8_t *msg, *out;
	size_t len;
	int live;
} iot;

/* The catalogue's ops whose self-tests check two of the join's steps: iot-join links them
 * itself, so it self-tests in a build whose catalogue holds nothing else. */
extern ER_OP(sha3_256);
extern ER_OP(aes_ctr_encrypt);

static int iot_selftest(void)
{
	if (er_pk_x25519_selftest() != 0 || er_op_sha3_256.selftest() != 0 ||
	    er_op_aes_ctr_encrypt.selftest() != 0) {
		return -EIO;
	}
	return 0;
}

static void iot_release(void)
{
	if (iot.live) {
		mbedtls_aes_free(&iot.aes);
		mbedtls_ecp_point_free(&iot.gateway);
		mbedtls_ecp_point_free(&iot.q);
		mbedtls_mpi_free(&iot.z);
		mbedtls_mpi_free(&iot.d);
		mbedtls_ecp_group_free(&iot.grp);
		iot.live = 0;
	}
}

/* Curve25519, the gateway's public key, the counter block and the message. */
static int iot_prep(const struct er_params_s *params, struct er_arena_s *arena)
{
	int ret;

	iot_release();
	mbedtls_ecp_group_init(&iot.grp);
	mbedtls_mpi_init(&iot.d);
	mbedtls_mpi_init(&iot.z);
	mbedtls_ecp_point_init(&iot.q);
	mbedtls_ecp_point_init(&iot.gateway);
	mbedtls_aes_init(&iot.aes);
	iot.live = 1;
	iot.len = params->payload_bytes;
	ret = er_pk_err(mbedtls_ecp_group_load(&iot.grp, MBEDTLS_ECP_DP_CURVE25519));
	if (ret == 0) {
		ret = er_pk_err(mbedtls_ecdh_gen_public(&iot.grp, &iot.z, &iot.gateway,
							er_drbg_random, &er_drbg));
	}
	if (ret == 0) {
		ret = er_drbg_random(&er_drbg, iot.nonce, sizeof(iot.nonce));
	}
	if (ret == 0) {
		ret = er_ops_cipher_buffers(arena, iot.len, &iot.msg, &iot.out);
	}
	return ret;
}

/* One join: key pair, shared secret, key derivation, one message. */
static int iot_run(void)
{
	uint8_t secret[ER_PK_X25519_BYTES], key[IOT_KEY_BYTES];
	uint8_t counter[IOT_BLOCK], stream[IOT_BLOCK];
	size_t off = 0;
	int ret = er_pk_err(
		mbedtls_ecdh_gen_public(&iot.grp, &iot.d, &iot.q, er_drbg_random, &er_drbg));

	if (ret == 0) {
		ret = er_pk_err(mbedtls_ecdh_compute_shared(&iot.grp, &iot.z, &iot.gateway, &iot.d,
							    er_drbg_random, &er_drbg));
	}
	if (ret == 0) {
		/* The shared secret as RFC 7748 encodes it: 32 bytes, little-endian. */
		ret = er_pk_err(mbedtls_mpi_write_binary_le(&iot.z, secret, sizeof(secret)));
	}
	if (ret == 0) {
		ret = er_pk_err(er_sha3(IOT_KEY_BYTES, secret, sizeof(secret), key));
	}
	if (ret == 0) {
		ret = er_pk_err(mbedtls_aes_setkey_enc(&iot.aes, key, IOT_KEY_BYTES * 8U));
	}
	if (ret == 0) {
		memcpy(counter, iot.nonce, sizeof(counter));
		ret = er_pk_err(mbedtls_aes_crypt_ctr(&iot.aes, iot.len, &off, counter, stream,
						      iot.msg, iot.out));
	}
	er_ops_fold(iot.out, iot.len);
	return ret;
}

ER_OP(iot_join) = {
	"iot-join",
	"composite",
	{.payload_min = IOT_BLOCK, .payload_max = ER_OPS_PAYLOAD_MAX, .payload_multiple = 1},
	ER_BACKEND_SOFTWARE,
	iot_selftest,
	iot_prep,
	iot_run,
	iot_release,
};
