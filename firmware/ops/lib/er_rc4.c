/* SPDX-License-Identifier: Apache-2.0 */
/* RC4 as specified by the ARCFOUR Internet-Draft and RFC 6229 (its test vectors). */
#include "er_rc4.h"

#include <errno.h>

int er_rc4_setkey(struct er_rc4_s *ctx, const uint8_t *key, size_t key_len)
{
	if (key_len == 0U || key_len > 256U) {
		return -EINVAL;
	}
	for (unsigned int n = 0; n < 256U; n++) {
		ctx->s[n] = (uint8_t)n;
	}
	uint8_t j = 0;
	for (unsigned int n = 0; n < 256U; n++) {
		uint8_t t = ctx->s[n];

		j = (uint8_t)(j + t + key[n % key_len]);
		ctx->s[n] = ctx->s[j];
		ctx->s[j] = t;
	}
	ctx->i = 0;
	ctx->j = 0;
	return 0;
}

void er_rc4_crypt(struct er_rc4_s *ctx, const uint8_t *in, uint8_t *out, size_t len)
{
	uint8_t i = ctx->i;
	uint8_t j = ctx->j;
	uint8_t *s = ctx->s;

	for (size_t n = 0; n < len; n++) {
		i = (uint8_t)(i + 1U);
		uint8_t si = s[i];

		j = (uint8_t)(j + si);
		uint8_t sj = s[j];

		s[i] = sj;
		s[j] = si;
		out[n] = in[n] ^ s[(uint8_t)(si + sj)];
	}
	ctx->i = i;
	ctx->j = j;
}
