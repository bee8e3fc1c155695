/* SPDX-License-Identifier: Apache-2.0 */
#include "er_rc6.h"

#include "er_rc_key.h"

/* f(x) = (x * (2x + 1)) <<< lg w, with lg w = 5 for 32-bit words. */
static inline uint32_t er_rc6_f(uint32_t x)
{
	return er_rc_rotl(x * (2U * x + 1U), 5U);
}

int er_rc6_setkey(struct er_rc6_s *ctx, const uint8_t *key, size_t key_len)
{
	return er_rc_key_expand(ctx->s, sizeof(ctx->s) / sizeof(ctx->s[0]), key, key_len);
}

void er_rc6_encrypt(const struct er_rc6_s *ctx, const uint8_t in[ER_RC6_BLOCK],
		    uint8_t out[ER_RC6_BLOCK])
{
	const uint32_t *s = ctx->s;
	uint32_t a = er_rc_load(in);
	uint32_t b = er_rc_load(in + 4) + s[0];
	uint32_t c = er_rc_load(in + 8);
	uint32_t d = er_rc_load(in + 12) + s[1];

	for (unsigned int r = 1; r <= ER_RC6_ROUNDS; r++) {
		uint32_t t = er_rc6_f(b);
		uint32_t u = er_rc6_f(d);
		uint32_t na = er_rc_rotl(a ^ t, u) + s[2U * r];
		uint32_t nc = er_rc_rotl(c ^ u, t) + s[2U * r + 1U];

		/* (A, B, C, D) = (B, C, D, A) */
		a = b;
		b = nc;
		c = d;
		d = na;
	}
	er_rc_store(out, a + s[2U * ER_RC6_ROUNDS + 2U]);
	er_rc_store(out + 4, b);
	er_rc_store(out + 8, c + s[2U * ER_RC6_ROUNDS + 3U]);
	er_rc_store(out + 12, d);
}

void er_rc6_decrypt(const struct er_rc6_s *ctx, const uint8_t in[ER_RC6_BLOCK],
		    uint8_t out[ER_RC6_BLOCK])
{
	const uint32_t *s = ctx->s;
	uint32_t a = er_rc_load(in) - s[2U * ER_RC6_ROUNDS + 2U];
	uint32_t b = er_rc_load(in + 4);
	uint32_t c = er_rc_load(in + 8) - s[2U * ER_RC6_ROUNDS + 3U];
	uint32_t d = er_rc_load(in + 12);

	for (unsigned int r = ER_RC6_ROUNDS; r >= 1U; r--) {
		/* (A, B, C, D) = (D, A, B, C) */
		uint32_t na = d;
		uint32_t nc = b;

		d = c;
		b = a;
		uint32_t u = er_rc6_f(d);
		uint32_t t = er_rc6_f(b);

		c = er_rc_rotr(nc - s[2U * r + 1U], t) ^ u;
		a = er_rc_rotr(na - s[2U * r], u) ^ t;
	}
	er_rc_store(out, a);
	er_rc_store(out + 4, b - s[0]);
	er_rc_store(out + 8, c);
	er_rc_store(out + 12, d - s[1]);
}

static int er_rc6_setkey_any(void *ctx, const uint8_t *key, size_t key_len)
{
	return er_rc6_setkey(ctx, key, key_len);
}

static void er_rc6_encrypt_any(const void *ctx, const uint8_t *in, uint8_t *out)
{
	er_rc6_encrypt(ctx, in, out);
}

static void er_rc6_decrypt_any(const void *ctx, const uint8_t *in, uint8_t *out)
{
	er_rc6_decrypt(ctx, in, out);
}

const struct er_block_cipher_s er_rc6_block = {
	.block = ER_RC6_BLOCK,
	.setkey = er_rc6_setkey_any,
	.encrypt = er_rc6_encrypt_any,
	.decrypt = er_rc6_decrypt_any,
};
