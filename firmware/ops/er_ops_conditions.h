/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief The crypto library's speed options as the ops were built, for a port's
 * er_port_info() (hello's "conditions").
 */
#ifndef ER_OPS_CONDITIONS_H_
#define ER_OPS_CONDITIONS_H_

#include "er_port.h"

/** NIST-curve reduction, assembly, AES tables, window sizes, SHA-3 implementation; ends
 * with a NULL name. */
extern const struct er_condition_s er_crypto_conditions[];

#endif /* ER_OPS_CONDITIONS_H_ */
