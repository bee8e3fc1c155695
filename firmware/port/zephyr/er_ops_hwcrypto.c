/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Family "hwcrypto" (Zephyr only): aes-ecb-encrypt with backend "hardware", run through
 * Zephyr's crypto API on the device named by the devicetree's /zephyr,user crypto-dev
 * (nRF52840: &ecb, the nRF ECB peripheral, which does AES-128 encryption of one block).
 * Registered by firmware/CMakeLists.txt when CONFIG_ER_HWCRYPTO is set.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <zephyr/crypto/crypto.h>
#include <zephyr/device.h>
#include <zephyr/devicetree.h>

#include "er_ops_util.h"
#include "lib/er_kat.h"

#if !DT_NODE_HAS_PROP(DT_PATH(zephyr_user), crypto_dev)
#error "CONFIG_ER_HWCRYPTO needs / { zephyr,user { crypto-dev = <&...>; }; } in the overlay"
#endif

#define HW_BLOCK 16U
#define HW_KEY_BYTES 16U

static const struct device *const hw_dev =
	DEVICE_DT_GET(DT_PROP(DT_PATH(zephyr_user), crypto_dev));

static const uint16_t hw_key_bits[] = {128, 0};

static struct {
	struct cipher_ctx ctx;
	bool open;
	uint8_t key[HW_KEY_BYTES];
	uint8_t *in;
	uint8_t *out;
	size_t len;
} hw;

/* An encryption session with @p key; the nRF ECB driver allows one session at a time. */
static int hw_open(const uint8_t *key)
{
	memcpy(hw.key, key, HW_KEY_BYTES);
	hw.ctx = (struct cipher_ctx){
		.key.bit_stream = hw.key,
		.keylen = HW_KEY_BYTES,
		.flags = CAP_RAW_KEY | CAP_SEPARATE_IO_BUFS | CAP_SYNC_OPS,
	};
	int ret = cipher_begin_session(hw_dev, &hw.ctx, CRYPTO_CIPHER_ALGO_AES,
				       CRYPTO_CIPHER_MODE_ECB, CRYPTO_CIPHER_OP_ENCRYPT);

	hw.open = ret == 0;
	return ret;
}

static void hw_release(void)
{
	if (hw.open) {
		(void)cipher_free_session(hw_dev, &hw.ctx);
		hw.open = false;
	}
}

/* ECB: the driver takes one block per call (cipher_block_op). */
static int hw_encrypt(const uint8_t *in, uint8_t *out, size_t len)
{
	for (size_t off = 0; off < len; off += HW_BLOCK) {
		struct cipher_pkt pkt = {
			.in_buf = (uint8_t *)&in[off],
			.in_len = HW_BLOCK,
			.out_buf = &out[off],
			.out_buf_max = HW_BLOCK,
		};
		int ret = cipher_block_op(&hw.ctx, &pkt);

		if (ret != 0) {
			return ret;
		}
	}
	return 0;
}

/* FIPS-197 appendix C.1 (AES-128). */
static int hw_selftest(void)
{
	uint8_t key[HW_KEY_BYTES];
	uint8_t pt[HW_BLOCK];
	uint8_t ct[HW_BLOCK];

	if (!device_is_ready(hw_dev) ||
	    er_kat_unhex(key, sizeof(key), "000102030405060708090a0b0c0d0e0f") != HW_KEY_BYTES ||
	    er_kat_unhex(pt, sizeof(pt), "00112233445566778899aabbccddeeff") != HW_BLOCK ||
	    hw_open(key) != 0) {
		return -EIO;
	}
	int ret = hw_encrypt(pt, ct, HW_BLOCK);

	hw_release();
	return ret == 0 && er_kat_check(ct, HW_BLOCK, "69c4e0d86a7b0430d8cdb78070b4c55a") == 0
		       ? 0
		       : -EIO;
}

static int hw_prep(const struct er_params_s *params, struct er_arena_s *arena)
{
	uint8_t *key;
	int ret = er_ops_random_buffer(arena, HW_KEY_BYTES, &key);

	if (ret == 0) {
		ret = er_ops_cipher_buffers(arena, params->payload_bytes, &hw.in, &hw.out);
	}
	if (ret == 0) {
		hw.len = params->payload_bytes;
		ret = hw_open(key);
	}
	return ret;
}

static int hw_run(void)
{
	int ret = hw_encrypt(hw.in, hw.out, hw.len);

	er_ops_fold(hw.out, hw.len);
	return ret;
}

ER_OP(aes_ecb_encrypt_hw) = {
	.name = "aes-ecb-encrypt",
	.family = "symmetric",
	.spec = {.key_bits = hw_key_bits,
		 .payload_min = HW_BLOCK,
		 .payload_max = ER_OPS_PAYLOAD_MAX,
		 .payload_multiple = HW_BLOCK},
	.backend = ER_BACKEND_HARDWARE,
	.selftest = hw_selftest,
	.prep = hw_prep,
	.run = hw_run,
	.release = hw_release,
};
