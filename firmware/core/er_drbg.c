/* SPDX-License-Identifier: Apache-2.0 */
#include "er_drbg.h"

struct er_drbg_s er_drbg;

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256** (Blackman and Vigna, 2018). */
static uint64_t next(struct er_drbg_s *d)
{
	uint64_t *s = d->s;
	uint64_t result = rotl(s[1] * 5u, 7) * 9u;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

void er_drbg_seed(struct er_drbg_s *drbg, uint32_t seed)
{
	uint64_t x = seed;

	for (int i = 0; i < 4; i++) {
		drbg->s[i] = splitmix64(&x);
	}
}

int er_drbg_random(void *ctx, unsigned char *out, size_t len)
{
	struct er_drbg_s *d = ctx;

	while (len > 0) {
		uint64_t v = next(d);

		for (int i = 0; i < 8 && len > 0; i++, len--) {
			*out++ = (unsigned char)(v >> (8 * i));
		}
	}
	return 0;
}
