/* SPDX-License-Identifier: Apache-2.0 */
#include "er_dh.h"

#include <errno.h>

#include "er_pk.h"

const struct er_dh_group_s er_dh_groups[] = {
	{
		.bits = 512,
		.source = "SKIP 512-bit modulus (Sun SKIP, skip.incog.com/spec/numbers.html; "
			  "the JDK's default 512-bit DH group)",
		.p = "F52AFF3CE1B1294018118D7C84A70A72D686C40319C807297ACA950CD9969FAB"
		     "D00A509B0246D3083D66A45D419F9C7CBD894B221926BAABA25EC355E92A055F",
		.g = "02",
	},
	{
		.bits = 768,
		.source = "RFC 2409 section 6.1, First Oakley Group",
		.p = "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74"
		     "020BBEA63B139B22514A08798E3404DDEF9519B3CD3A431B302B0A6DF25F1437"
		     "4FE1356D6D51C245E485B576625E7EC6F44C42E9A63A3620FFFFFFFFFFFFFFFF",
		.g = "02",
	},
	{
		.bits = 1024,
		.source = "RFC 2409 section 6.2, Second Oakley Group",
		.p = "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74"
		     "020BBEA63B139B22514A08798E3404DDEF9519B3CD3A431B302B0A6DF25F1437"
		     "4FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
		     "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF",
		.g = "02",
	},
	{
		.bits = 2048,
		.source = "RFC 3526 section 3, 2048-bit MODP Group 14",
		.p = "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74"
		     "020BBEA63B139B22514A08798E3404DDEF9519B3CD3A431B302B0A6DF25F1437"
		     "4FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
		     "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF05"
		     "98DA48361C55D39A69163FA8FD24CF5F83655D23DCA3AD961C62F356208552BB"
		     "9ED529077096966D670C354E4ABC9804F1746C08CA18217C32905E462E36CE3B"
		     "E39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF695581718"
		     "3995497CEA956AE515D2261898FA051015728E5A8AACAA68FFFFFFFFFFFFFFFF",
		.g = "02",
	},
};

const size_t er_dh_n_groups = sizeof(er_dh_groups) / sizeof(er_dh_groups[0]);

const struct er_dh_group_s *er_dh_group(uint32_t bits)
{
	for (size_t i = 0; i < er_dh_n_groups; i++) {
		if (er_dh_groups[i].bits == bits) {
			return &er_dh_groups[i];
		}
	}
	return NULL;
}

void er_dh_init(struct er_dh_s *dh)
{
	mbedtls_mpi_init(&dh->p);
	mbedtls_mpi_init(&dh->g);
	mbedtls_mpi_init(&dh->x);
	mbedtls_mpi_init(&dh->y);
	mbedtls_mpi_init(&dh->rr);
}

void er_dh_free(struct er_dh_s *dh)
{
	mbedtls_mpi_free(&dh->p);
	mbedtls_mpi_free(&dh->g);
	mbedtls_mpi_free(&dh->x);
	mbedtls_mpi_free(&dh->y);
	mbedtls_mpi_free(&dh->rr);
}

int er_dh_load(struct er_dh_s *dh, const char *p_hex, const char *g_hex)
{
	int ret = er_pk_mpi_hex(&dh->p, p_hex);

	if (ret == 0) {
		ret = er_pk_mpi_hex(&dh->g, g_hex);
	}
	mbedtls_mpi_free(&dh->rr); /* the cache belongs to the old p */
	return ret;
}

int er_dh_public(struct er_dh_s *dh)
{
	return er_pk_err(mbedtls_mpi_exp_mod(&dh->y, &dh->g, &dh->x, &dh->p, &dh->rr));
}

int er_dh_keygen(struct er_dh_s *dh, int (*f_rng)(void *, unsigned char *, size_t),
		 void *p_rng)
{
	size_t pbits = mbedtls_mpi_bitlen(&dh->p);
	size_t plen = (pbits + 7U) / 8U;
	/* plen bytes cut to pbits - 1 bits, top bit set: 2^(pbits-2) <= x < 2^(pbits-1) < p. */
	int ret = mbedtls_mpi_fill_random(&dh->x, plen, f_rng, p_rng);

	if (ret == 0) {
		ret = mbedtls_mpi_shift_r(&dh->x, plen * 8U - (pbits - 1U));
	}
	if (ret == 0) {
		ret = mbedtls_mpi_set_bit(&dh->x, pbits - 2U, 1);
	}
	return ret == 0 ? er_dh_public(dh) : er_pk_err(ret);
}

int er_dh_shared(struct er_dh_s *dh, const mbedtls_mpi *peer, mbedtls_mpi *z)
{
	mbedtls_mpi top;
	int ret;

	mbedtls_mpi_init(&top);
	ret = mbedtls_mpi_sub_int(&top, &dh->p, 2);
	if (ret == 0 && (mbedtls_mpi_cmp_int(peer, 2) < 0 || mbedtls_mpi_cmp_mpi(peer, &top) > 0)) {
		ret = -EINVAL;
	} else if (ret == 0) {
		ret = er_pk_err(mbedtls_mpi_exp_mod(z, peer, &dh->x, &dh->p, &dh->rr));
	} else {
		ret = er_pk_err(ret);
	}
	mbedtls_mpi_free(&top);
	return ret;
}
