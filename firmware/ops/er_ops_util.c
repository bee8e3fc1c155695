/* SPDX-License-Identifier: Apache-2.0 */
#include "er_ops_util.h"

#include <errno.h>

#include "er_drbg.h"
#include "lib/er_kat.h"

#include <mbedtls/version.h>
#if defined(MBEDTLS_GCM_C)
#include <mbedtls/gcm.h>
#endif
#if defined(MBEDTLS_CHACHAPOLY_C)
#include <mbedtls/chachapoly.h>
#endif

const uint16_t er_ops_key_bits_aes[] = {128, 192, 256, 0};

int er_ops_random_buffer(struct er_arena_s *arena, size_t len, uint8_t **buf)
{
	*buf = er_arena_alloc(arena, len, ER_OPS_ALIGN);
	if (*buf == NULL) {
		return -ENOMEM;
	}
	return er_drbg_random(&er_drbg, *buf, len);
}

int er_ops_cipher_buffers(struct er_arena_s *arena, size_t len, uint8_t **in, uint8_t **out)
{
	*out = er_arena_alloc(arena, len, ER_OPS_ALIGN);
	if (*out == NULL) {
		return -ENOMEM;
	}
	return er_ops_random_buffer(arena, len, in);
}

int er_ops_mbedtls_errno(int ret)
{
	if (ret == 0) {
		return 0;
	}
#if defined(MBEDTLS_GCM_C)
	if (ret == MBEDTLS_ERR_GCM_AUTH_FAILED) {
		return -EBADMSG;
	}
#endif
#if defined(MBEDTLS_CHACHAPOLY_C)
	if (ret == MBEDTLS_ERR_CHACHAPOLY_AUTH_FAILED) {
		return -EBADMSG;
	}
#endif
	return -EIO;
}

/* Decode an optional vector field; NULL decodes to nothing. */
static int er_kat_field(const char *hex, uint8_t *out, size_t cap, size_t *len)
{
	int n = hex == NULL ? 0 : er_kat_unhex(out, cap, hex);

	if (n < 0) {
		return -EINVAL;
	}
	*len = (size_t)n;
	return 0;
}

int er_cipher_kat_load(const struct er_cipher_kat_s *kat, int encrypt,
		       struct er_cipher_kat_buf_s *buf)
{
	size_t expect_len;

	if (er_kat_field(kat->key, buf->key, sizeof(buf->key), &buf->key_len) != 0 ||
	    er_kat_field(kat->iv, buf->iv, sizeof(buf->iv), &buf->iv_len) != 0 ||
	    er_kat_field(kat->aad, buf->aad, sizeof(buf->aad), &buf->aad_len) != 0 ||
	    er_kat_field(kat->tag, buf->tag, sizeof(buf->tag), &buf->tag_len) != 0 ||
	    er_kat_field(encrypt ? kat->pt : kat->ct, buf->in, sizeof(buf->in), &buf->len) != 0 ||
	    er_kat_field(encrypt ? kat->ct : kat->pt, buf->expect, sizeof(buf->expect),
			 &expect_len) != 0 ||
	    expect_len != buf->len) {
		return -EINVAL;
	}
	return 0;
}
