/* SPDX-License-Identifier: Apache-2.0 */
/* The op families (er_op.h): the one list of their names, in trigger-wire id order. */
#include <string.h>

#include "er_op.h"

const char *const er_families[] = {"symmetric", "hash", "public-key", "composite"};

const size_t er_n_families = sizeof(er_families) / sizeof(er_families[0]);

uint16_t er_family_id(const char *family)
{
	for (size_t i = 0; family != NULL && i < er_n_families; i++) {
		if (strcmp(family, er_families[i]) == 0) {
			return (uint16_t)(i + 1);
		}
	}
	return 0;
}
