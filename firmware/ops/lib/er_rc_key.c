/* SPDX-License-Identifier: Apache-2.0 */
#include "er_rc_key.h"

#include <errno.h>

#define ER_RC_P32 0xB7E15163U
#define ER_RC_Q32 0x9E3779B9U
#define ER_RC_TABLE_MAX 64U

int er_rc_key_expand(uint32_t *s, size_t t, const uint8_t *key, size_t key_len)
{
	uint32_t l[(ER_RC_KEY_MAX + 3U) / 4U] = {0};

	if (key_len > ER_RC_KEY_MAX || t == 0U || t > ER_RC_TABLE_MAX) {
		return -EINVAL;
	}
	/* Key bytes into words, little-endian; an empty key is one zero word. */
	size_t c = key_len == 0U ? 1U : (key_len + 3U) / 4U;

	for (size_t n = key_len; n-- > 0U;) {
		l[n / 4U] = (l[n / 4U] << 8) | key[n];
	}
	s[0] = ER_RC_P32;
	for (size_t n = 1; n < t; n++) {
		s[n] = s[n - 1U] + ER_RC_Q32;
	}
	uint32_t a = 0;
	uint32_t b = 0;
	size_t i = 0;
	size_t j = 0;
	size_t passes = 3U * (t > c ? t : c);

	for (size_t k = 0; k < passes; k++) {
		a = s[i] = er_rc_rotl(s[i] + a + b, 3U);
		b = l[j] = er_rc_rotl(l[j] + a + b, a + b);
		i = (i + 1U) % t;
		j = (j + 1U) % c;
	}
	return 0;
}
