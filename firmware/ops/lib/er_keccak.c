/* SPDX-License-Identifier: Apache-2.0 */
/* Keccak-f[1600] in the lane-oriented form of the Keccak reference (FIPS 202, section 3). */
#include "er_keccak.h"

#include <errno.h>

#define ER_KECCAK_ROUNDS 24U
#define ER_KECCAK_STATE_BYTES 200U
/* SHA-3 domain separation bits 01 followed by the first bit of pad10*1 (FIPS 202, B.2). */
#define ER_KECCAK_SHA3_PAD 0x06U

/* iota: round constants RC[ir]. */
static const uint64_t er_keccak_rc[ER_KECCAK_ROUNDS] = {
	0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL,
	0x8000000080008000ULL, 0x000000000000808bULL, 0x0000000080000001ULL,
	0x8000000080008081ULL, 0x8000000000008009ULL, 0x000000000000008aULL,
	0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000aULL,
	0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL,
	0x8000000000008003ULL, 0x8000000000008002ULL, 0x8000000000000080ULL,
	0x000000000000800aULL, 0x800000008000000aULL, 0x8000000080008081ULL,
	0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL,
};

/* rho and pi combined: walking the lanes in pi order, each is rotated by its rho offset. */
static const uint8_t er_keccak_rho[ER_KECCAK_ROUNDS] = {
	1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 2, 14, 27, 41, 56, 8, 25, 43, 62, 18, 39, 61, 20, 44,
};
static const uint8_t er_keccak_pi[ER_KECCAK_ROUNDS] = {
	10, 7, 11, 17, 18, 3, 5, 16, 8, 21, 24, 4, 15, 23, 19, 13, 12, 2, 20, 14, 22, 9, 6, 1,
};

static inline uint64_t er_keccak_rotl(uint64_t x, unsigned int n)
{
	return (x << n) | (x >> ((64U - n) & 63U));
}

void er_keccak_f1600(uint64_t a[ER_KECCAK_LANES])
{
	uint64_t c[5];

	for (unsigned int round = 0; round < ER_KECCAK_ROUNDS; round++) {
		/* theta */
		for (unsigned int x = 0; x < 5U; x++) {
			c[x] = a[x] ^ a[x + 5U] ^ a[x + 10U] ^ a[x + 15U] ^ a[x + 20U];
		}
		for (unsigned int x = 0; x < 5U; x++) {
			uint64_t d = c[(x + 4U) % 5U] ^ er_keccak_rotl(c[(x + 1U) % 5U], 1U);

			for (unsigned int y = 0; y < 25U; y += 5U) {
				a[y + x] ^= d;
			}
		}
		/* rho and pi */
		uint64_t carry = a[1];

		for (unsigned int n = 0; n < ER_KECCAK_ROUNDS; n++) {
			unsigned int to = er_keccak_pi[n];
			uint64_t next = a[to];

			a[to] = er_keccak_rotl(carry, er_keccak_rho[n]);
			carry = next;
		}
		/* chi */
		for (unsigned int y = 0; y < 25U; y += 5U) {
			for (unsigned int x = 0; x < 5U; x++) {
				c[x] = a[y + x];
			}
			for (unsigned int x = 0; x < 5U; x++) {
				a[y + x] = c[x] ^ (~c[(x + 1U) % 5U] & c[(x + 2U) % 5U]);
			}
		}
		/* iota */
		a[0] ^= er_keccak_rc[round];
	}
}

/* XOR @p len bytes into the state from byte @p pos on, lanes little-endian (FIPS 202, B.1). */
static void er_keccak_xor_bytes(uint64_t a[ER_KECCAK_LANES], size_t pos, const uint8_t *in,
				size_t len)
{
	for (size_t n = 0; n < len; n++, pos++) {
		a[pos / 8U] ^= (uint64_t)in[n] << (8U * (pos % 8U));
	}
}

/* XOR one full block of @p rate bytes (a multiple of 8) into the state, a lane at a time. */
static void er_keccak_xor_block(uint64_t a[ER_KECCAK_LANES], const uint8_t *in, size_t rate)
{
	for (size_t k = 0; k < rate / 8U; k++, in += 8) {
		uint64_t lane = 0;

		for (unsigned int b = 8; b-- > 0U;) {
			lane = (lane << 8) | in[b];
		}
		a[k] ^= lane;
	}
}

int er_keccak_sha3(size_t digest_bytes, const uint8_t *in, size_t len, uint8_t *out)
{
	if (digest_bytes != 28U && digest_bytes != 32U && digest_bytes != 48U &&
	    digest_bytes != 64U) {
		return -EINVAL;
	}
	/* capacity = 2 * digest length, rate = 1600 bits - capacity */
	const size_t rate = ER_KECCAK_STATE_BYTES - 2U * digest_bytes;
	uint64_t a[ER_KECCAK_LANES] = {0};

	for (; len >= rate; in += rate, len -= rate) {
		er_keccak_xor_block(a, in, rate);
		er_keccak_f1600(a);
	}
	er_keccak_xor_bytes(a, 0, in, len);
	const uint8_t pad_first = ER_KECCAK_SHA3_PAD;
	const uint8_t pad_last = 0x80U;

	er_keccak_xor_bytes(a, len, &pad_first, 1U);
	er_keccak_xor_bytes(a, rate - 1U, &pad_last, 1U);
	er_keccak_f1600(a);
	/* The digest is shorter than the rate: one squeeze. */
	for (size_t n = 0; n < digest_bytes; n++) {
		out[n] = (uint8_t)(a[n / 8U] >> (8U * (n % 8U)));
	}
	return 0;
}
