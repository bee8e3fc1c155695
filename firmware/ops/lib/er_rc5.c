/* SPDX-License-Identifier: Apache-2.0 */
#include "er_rc5.h"

#include "er_rc_key.h"

int er_rc5_setkey(struct er_rc5_s *ctx, const uint8_t *key, size_t key_len)
{
	return er_rc_key_expand(ctx->s, sizeof(ctx->s) / sizeof(ctx->s[0]), key, key_len);
}

void er_rc5_encrypt(const struct er_rc5_s *ctx, const uint8_t in[ER_RC5_BLOCK],
		    uint8_t out[ER_RC5_BLOCK])
{
	const uint32_t *s = ctx->s;
	uint32_t a = er_rc_load(in) + s[0];
	uint32_t b = er_rc_load(in + 4) + s[1];

	for (unsigned int r = 1; r <= ER_RC5_ROUNDS; r++) {
		a = er_rc_rotl(a ^ b, b) + s[2U * r];
		b = er_rc_rotl(b ^ a, a) + s[2U * r + 1U];
	}
	er_rc_store(out, a);
	er_rc_store(out + 4, b);
}

void er_rc5_decrypt(const struct er_rc5_s *ctx, const uint8_t in[ER_RC5_BLOCK],
		    uint8_t out[ER_RC5_BLOCK])
{
	const uint32_t *s = ctx->s;
	uint32_t a = er_rc_load(in);
	uint32_t b = er_rc_load(in + 4);

	for (unsigned int r = ER_RC5_ROUNDS; r >= 1U; r--) {
		b = er_rc_rotr(b - s[2U * r + 1U], a) ^ a;
		a = er_rc_rotr(a - s[2U * r], b) ^ b;
	}
	er_rc_store(out, a - s[0]);
	er_rc_store(out + 4, b - s[1]);
}

static int er_rc5_setkey_any(void *ctx, const uint8_t *key, size_t key_len)
{
	return er_rc5_setkey(ctx, key, key_len);
}

static void er_rc5_encrypt_any(const void *ctx, const uint8_t *in, uint8_t *out)
{
	er_rc5_encrypt(ctx, in, out);
}

static void er_rc5_decrypt_any(const void *ctx, const uint8_t *in, uint8_t *out)
{
	er_rc5_decrypt(ctx, in, out);
}

const struct er_block_cipher_s er_rc5_block = {
	.block = ER_RC5_BLOCK,
	.setkey = er_rc5_setkey_any,
	.encrypt = er_rc5_encrypt_any,
	.decrypt = er_rc5_decrypt_any,
};
