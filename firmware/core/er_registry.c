/* SPDX-License-Identifier: Apache-2.0 */
#include "er_registry.h"

#include <errno.h>
#include <string.h>

static const char *const curve_names[] = {
	[ER_CURVE_P256] = "p256",
	[ER_CURVE_P384] = "p384",
	[ER_CURVE_SECP256K1] = "secp256k1",
	[ER_CURVE_X25519] = "x25519",
};

static const char *const backend_names[] = {
	[ER_BACKEND_SOFTWARE] = "software",
	[ER_BACKEND_HARDWARE] = "hardware",
};

#define ER_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Index of @p name in a table of names (NULL entries skipped), or -EINVAL. */
static int name_index(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (names[i] != NULL && strcmp(names[i], name) == 0) {
			return (int)i;
		}
	}
	return -EINVAL;
}

const char *er_curve_name(enum er_curve curve)
{
	return (size_t)curve < ER_ARRAY_LEN(curve_names) ? curve_names[curve] : NULL;
}

int er_curve_parse(const char *name, enum er_curve *curve)
{
	int i = name_index(curve_names, ER_ARRAY_LEN(curve_names), name);

	if (i < 0) {
		return i;
	}
	*curve = (enum er_curve)i;
	return 0;
}

const char *er_backend_name(enum er_backend backend)
{
	return (size_t)backend < ER_ARRAY_LEN(backend_names) ? backend_names[backend] : "unknown";
}

int er_backend_parse(const char *name, enum er_backend *backend)
{
	int i = name_index(backend_names, ER_ARRAY_LEN(backend_names), name);

	if (i < 0) {
		return i;
	}
	*backend = (enum er_backend)i;
	return 0;
}

size_t er_registry_count(const struct er_registry_s *reg)
{
	size_t n = 0;

	for (size_t i = 0; i < reg->n_ops; i++) {
		n += reg->ops[i] != NULL;
	}
	return n;
}

const struct er_op_s *er_registry_at(const struct er_registry_s *reg, size_t index)
{
	for (size_t i = 0; i < reg->n_ops; i++) {
		if (reg->ops[i] != NULL && index-- == 0) {
			return reg->ops[i];
		}
	}
	return NULL;
}

const struct er_op_s *er_registry_find(const struct er_registry_s *reg, const char *name,
				       int backend)
{
	const struct er_op_s *found = NULL;
	const struct er_op_s *op;

	for (size_t i = 0; (op = er_registry_at(reg, i)) != NULL; i++) {
		if (strcmp(op->name, name) != 0) {
			continue;
		}
		if ((int)op->backend == backend) {
			return op;
		}
		if (backend < 0 && (found == NULL || op->backend == ER_BACKEND_SOFTWARE)) {
			found = op;
		}
	}
	return found;
}

uint32_t er_registry_payload_max(const struct er_op_s *op, uint32_t cap)
{
	return op->spec.payload_max < cap ? op->spec.payload_max : cap;
}

static void allowed_key_bits(struct er_str_s *err, const uint16_t *list)
{
	er_str_cat(err, " (allowed: ");
	for (size_t i = 0; list[i] != 0; i++) {
		er_str_cat(err, i == 0 ? "" : ", ");
		er_str_u64(err, list[i]);
	}
	er_str_cat(err, ")");
}

static void allowed_curves(struct er_str_s *err, const enum er_curve *list)
{
	er_str_cat(err, " (allowed: ");
	for (size_t i = 0; list[i] != ER_CURVE_NONE; i++) {
		er_str_cat(err, i == 0 ? "" : ", ");
		er_str_cat(err, er_curve_name(list[i]));
	}
	er_str_cat(err, ")");
}

static void allowed_payload(struct er_str_s *err, const struct er_op_s *op, uint32_t cap)
{
	er_str_cat(err, " (allowed: ");
	er_str_u64(err, op->spec.payload_min);
	er_str_cat(err, "..");
	er_str_u64(err, er_registry_payload_max(op, cap));
	if (op->spec.payload_multiple > 1) {
		er_str_cat(err, ", multiple of ");
		er_str_u64(err, op->spec.payload_multiple);
	}
	er_str_cat(err, ")");
}

/* Starts the message for a parameter of @p op: "<op>: <param>". */
static int fail(struct er_str_s *err, const struct er_op_s *op, const char *text)
{
	er_str_cat(err, op->name);
	er_str_cat(err, ": ");
	er_str_cat(err, text);
	return -EINVAL;
}

static int check_key_bits(const struct er_op_s *op, const struct er_params_s *p,
			  unsigned present, struct er_str_s *err)
{
	const uint16_t *list = op->spec.key_bits;

	if (list == NULL) {
		return (present & ER_PARAM_KEY_BITS) ? fail(err, op, "takes no key_bits") : 0;
	}
	if (present & ER_PARAM_KEY_BITS) {
		for (size_t i = 0; list[i] != 0; i++) {
			if (list[i] == p->key_bits) {
				return 0;
			}
		}
		fail(err, op, "key_bits=");
		er_str_u64(err, p->key_bits);
		er_str_cat(err, " not allowed");
	} else {
		fail(err, op, "key_bits required");
	}
	allowed_key_bits(err, list);
	return -EINVAL;
}

static int check_curve(const struct er_op_s *op, const struct er_params_s *p, unsigned present,
		       struct er_str_s *err)
{
	const enum er_curve *list = op->spec.curves;

	if (list == NULL) {
		return (present & ER_PARAM_CURVE) ? fail(err, op, "takes no curve") : 0;
	}
	if (present & ER_PARAM_CURVE) {
		for (size_t i = 0; list[i] != ER_CURVE_NONE; i++) {
			if (list[i] == p->curve) {
				return 0;
			}
		}
		fail(err, op, "curve=");
		er_str_cat(err, er_curve_name(p->curve));
		er_str_cat(err, " not allowed");
	} else {
		fail(err, op, "curve required");
	}
	allowed_curves(err, list);
	return -EINVAL;
}

static int check_payload(const struct er_op_s *op, const struct er_params_s *p,
			 unsigned present, uint32_t cap, struct er_str_s *err)
{
	const struct er_param_spec_s *spec = &op->spec;
	uint32_t max = er_registry_payload_max(op, cap);
	uint32_t multiple = spec->payload_multiple > 1 ? spec->payload_multiple : 1;

	if (spec->payload_min == 0 && spec->payload_max == 0) {
		return (present & ER_PARAM_PAYLOAD) ? fail(err, op, "takes no payload_bytes") : 0;
	}
	if (!(present & ER_PARAM_PAYLOAD)) {
		fail(err, op, "payload_bytes required");
	} else if (p->payload_bytes < spec->payload_min || p->payload_bytes > max ||
		   p->payload_bytes % multiple != 0) {
		fail(err, op, "payload_bytes=");
		er_str_u64(err, p->payload_bytes);
		er_str_cat(err, " not allowed");
	} else {
		return 0;
	}
	allowed_payload(err, op, cap);
	return -EINVAL;
}

int er_registry_check(const struct er_op_s *op, const struct er_params_s *params,
		      unsigned present, uint32_t payload_cap, struct er_str_s *err)
{
	int ret = check_key_bits(op, params, present, err);

	if (ret == 0) {
		ret = check_curve(op, params, present, err);
	}
	if (ret == 0) {
		ret = check_payload(op, params, present, payload_cap, err);
	}
	return ret;
}
