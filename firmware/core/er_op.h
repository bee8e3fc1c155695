/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief The operation interface: what every op of the catalogue provides.
 *
 * An op is prepared once (keys, buffers, self-test: outside any trigger window) and then
 * run N times inside one window by the batch runner. Ops keep their prepared state in
 * file-static storage: exactly one op is prepared at a time.
 */
#ifndef ER_OP_H_
#define ER_OP_H_

#include <stddef.h>
#include <stdint.h>

#include "er_arena.h"

/** Elliptic curves an op may take. */
enum er_curve {
	ER_CURVE_NONE = 0,
	ER_CURVE_P256,
	ER_CURVE_P384,
	ER_CURVE_SECP256K1,
	ER_CURVE_X25519,
};

/** Where the work is done. */
enum er_backend {
	ER_BACKEND_SOFTWARE = 0,
	ER_BACKEND_HARDWARE,
};

/** Parameters of a @c prep request. Fields an op does not take are 0 / ER_CURVE_NONE. */
struct er_params_s {
	uint32_t key_bits;
	uint32_t payload_bytes;
	enum er_curve curve;
	uint32_t seed; /**< seeds er_drbg for keys and payload; same seed, same inputs */
};

/** What an op accepts. Lists end with a 0 / ER_CURVE_NONE entry. */
struct er_param_spec_s {
	const uint16_t *key_bits;    /**< allowed key sizes, or NULL: no key_bits parameter */
	const enum er_curve *curves; /**< allowed curves, or NULL: no curve parameter */
	uint32_t payload_min;        /**< 0 with payload_max 0: no payload parameter */
	uint32_t payload_max;        /**< upper bound; the port may lower it to its arena size */
	uint32_t payload_multiple;   /**< payload must be a multiple of this (1: any size) */
};

/** One operation of the catalogue. */
struct er_op_s {
	const char *name;   /**< lowercase with hyphens, e.g. "aes-cbc-encrypt" */
	const char *family; /**< one of er_families: "symmetric", "hash", ... */
	struct er_param_spec_s spec;
	enum er_backend backend;

	/**
	 * @brief Known-answer test against a published vector (FIPS, RFC, original paper).
	 * @retval 0 the op computes the published answer
	 * @retval -EIO it does not
	 */
	int (*selftest)(void);

	/**
	 * @brief Allocate buffers from @p arena, derive keys and inputs from er_drbg.
	 * Called with parameters already checked against @c spec.
	 * @retval 0 ready to run
	 * @retval -ENOMEM the arena is too small for this payload
	 * @retval -errno any other failure of the crypto library
	 */
	int (*prep)(const struct er_params_s *params, struct er_arena_s *arena);

	/**
	 * @brief One operation on the prepared state. Must not allocate from the arena.
	 * Its result must reach memory (er_sink) so the compiler cannot drop the work.
	 * @retval 0 success
	 * @retval -errno failure (the batch stops and reports it)
	 */
	int (*run)(void);

	/** @brief Free anything prep took outside the arena (crypto contexts). May be NULL. */
	void (*release)(void);
};

/**
 * @brief Defines the op @c er_op_<id> of the catalogue: <tt>ER_OP(sha256) = {...};</tt>
 *
 * ops/ops.cmake finds every op of a family file by this macro at the start of a line and
 * lists it in the generated catalogue (ER_OPS_ONLY selects some). @p id is the op's name
 * with '_' for '-'; an op on a hardware backend adds @c _hw. Each op is its own object, so
 * a build whose catalogue leaves it out leaves out its code (--gc-sections). Declares the
 * op as well: <tt>extern ER_OP(sha3_256);</tt>
 */
#define ER_OP(id) const struct er_op_s er_op_##id

/**
 * The op families, declared once: every op names one of them in er_op_s.family. The index
 * + 1 is the family's id on the host port's trigger wire (TRIGGER_WIRE.md; 0 is no op), so
 * a new family is appended and none is removed. `hello` lists them (`families`), the
 * catalogue test checks every op names one, and the host keeps one data row per family
 * (src/energyrig/opfamilies.toml: the report's references, the simulated boards' currents).
 */
extern const char *const er_families[];
/** Number of entries of er_families. */
extern const size_t er_n_families;

/** @brief Wire id of @p family (index in er_families + 1), 0 when it is not declared. */
uint16_t er_family_id(const char *family);

/** Keeps a result alive: ops fold a byte of every output into it. */
extern volatile uint32_t er_sink;

#endif /* ER_OP_H_ */
