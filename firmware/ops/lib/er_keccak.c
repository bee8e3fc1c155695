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
	for (unsigned int round = 0; round < ER_KECCAK_ROUNDS; round++) {
		/* theta: column parities c[x], then a[x, y] ^= c[x-1] ^ rot(c[x+1], 1) */
		uint64_t c0 = a[0] ^ a[5] ^ a[10] ^ a[15] ^ a[20];
		uint64_t c1 = a[1] ^ a[6] ^ a[11] ^ a[16] ^ a[21];
		uint64_t c2 = a[2] ^ a[7] ^ a[12] ^ a[17] ^ a[22];
		uint64_t c3 = a[3] ^ a[8] ^ a[13] ^ a[18] ^ a[23];
		uint64_t c4 = a[4] ^ a[9] ^ a[14] ^ a[19] ^ a[24];
		uint64_t d0 = c4 ^ er_keccak_rotl(c1, 1U);
		uint64_t d1 = c0 ^ er_keccak_rotl(c2, 1U);
		uint64_t d2 = c1 ^ er_keccak_rotl(c3, 1U);
		uint64_t d3 = c2 ^ er_keccak_rotl(c4, 1U);
		uint64_t d4 = c3 ^ er_keccak_rotl(c0, 1U);

		for (unsigned int y = 0; y < 25U; y += 5U) {
			a[y] ^= d0;
			a[y + 1U] ^= d1;
			a[y + 2U] ^= d2;
			a[y + 3U] ^= d3;
			a[y + 4U] ^= d4;
		}
		/* rho and pi */
		uint64_t carry = a[1];

		for (unsigned int n = 0; n < ER_KECCAK_ROUNDS; n++) {
			unsigned int to = er_keccak_pi[n];
			uint64_t next = a[to];

			a[to] = er_keccak_rotl(carry, er_keccak_rho[n]);
			carry = next;
		}
		/* chi: a[x] ^= ~a[x+1] & a[x+2] along each row */
		for (unsigned int y = 0; y < 25U; y += 5U) {
			uint64_t b0 = a[y];
			uint64_t b1 = a[y + 1U];
			uint64_t b2 = a[y + 2U];
			uint64_t b3 = a[y + 3U];
			uint64_t b4 = a[y + 4U];

			a[y] = b0 ^ (~b1 & b2);
			a[y + 1U] = b1 ^ (~b2 & b3);
			a[y + 2U] = b2 ^ (~b3 & b4);
			a[y + 3U] = b3 ^ (~b4 & b0);
			a[y + 4U] = b4 ^ (~b0 & b1);
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
