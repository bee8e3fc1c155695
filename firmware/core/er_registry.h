/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief The op registry: the ops of the catalogue, lookup, and parameter checks.
 *
 * The firmware's catalogue (@ref er_catalogue) is generated at configure time from the ops
 * the family files of ops/ops.cmake define (ER_OP); tests build their own registries of
 * test ops.
 */
#ifndef ER_REGISTRY_H_
#define ER_REGISTRY_H_

#include <stddef.h>
#include <stdint.h>

#include "er_op.h"
#include "er_str.h"

/**
 * A list of ops. A NULL entry is an op the build left out (the catalogue refers to each op
 * weakly: a family leaves an op out when its mbedTLS module is not built); it is skipped.
 */
struct er_registry_s {
	const struct er_op_s *const *ops;
	size_t n_ops;
};

/** The firmware's catalogue (generated er_catalogue.c). */
extern const struct er_registry_s er_catalogue;

/** Which parameters a @c prep request named (bit set of these). */
enum er_param_bits {
	ER_PARAM_KEY_BITS = 1u << 0,
	ER_PARAM_PAYLOAD = 1u << 1,
	ER_PARAM_CURVE = 1u << 2,
	ER_PARAM_SEED = 1u << 3,
	ER_PARAM_BACKEND = 1u << 4,
};

/** @brief Number of ops in @p reg. */
size_t er_registry_count(const struct er_registry_s *reg);

/** @brief The @p index-th op (0 .. count-1), or NULL. */
const struct er_op_s *er_registry_at(const struct er_registry_s *reg, size_t index);

/**
 * @brief Find an op by name.
 * @param backend the backend wanted, or -1 for any (software preferred)
 * @return the op, or NULL
 */
const struct er_op_s *er_registry_find(const struct er_registry_s *reg, const char *name,
				       int backend);

/** @brief Largest payload @p op accepts on a port whose payloads are capped at @p cap. */
uint32_t er_registry_payload_max(const struct er_op_s *op, uint32_t cap);

/**
 * @brief Check @p params against @p op's spec.
 * @param present the er_param_bits of the parameters the request named
 * @param payload_cap the port's payload limit (arena size / 4)
 * @param[out] err on failure, a message naming the parameter and its allowed values
 * @retval 0 the parameters fit the op
 * @retval -EINVAL they do not
 */
int er_registry_check(const struct er_op_s *op, const struct er_params_s *params,
		      unsigned present, uint32_t payload_cap, struct er_str_s *err);

/** @brief "p256", "p384", "secp256k1", "x25519", or NULL for ER_CURVE_NONE. */
const char *er_curve_name(enum er_curve curve);

/**
 * @brief Curve from its name.
 * @retval 0 found
 * @retval -EINVAL unknown name
 */
int er_curve_parse(const char *name, enum er_curve *curve);

/** @brief "software" or "hardware". */
const char *er_backend_name(enum er_backend backend);

/**
 * @brief Backend from its name.
 * @retval 0 found
 * @retval -EINVAL unknown name
 */
int er_backend_parse(const char *name, enum er_backend *backend);

#endif /* ER_REGISTRY_H_ */
