/* SPDX-License-Identifier: Apache-2.0 */
#include "er_wire.h"

#include <string.h>

static const char *const families[] = {NULL, "symmetric", "hash", "public-key", "composite"};

uint16_t er_wire_family(const struct er_op_s *op)
{
	for (uint16_t id = 1; op != NULL && id < sizeof(families) / sizeof(families[0]); id++) {
		if (strcmp(op->family, families[id]) == 0) {
			return id;
		}
	}
	return 0;
}
