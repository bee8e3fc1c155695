/* SPDX-License-Identifier: Apache-2.0 */
#include "er_proto.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "er_drbg.h"
#include "er_json.h"
#include "er_port.h"
#include "er_runner.h"
#include "er_str.h"

#define ER_ARGS_MAX 8
#define ER_ERR_MAX 192
#define ER_ECHO_MAX 32 /* bytes of the host's words repeated in an error message */

struct er_req_s {
	struct er_proto_s *p;
	const char *cmd;
	const char *positional; /* the first word after the command without '=' */
	size_t n_args;
	char *key[ER_ARGS_MAX];
	char *val[ER_ARGS_MAX];
	bool taken[ER_ARGS_MAX];
	struct er_str_s err;
	struct er_json_s json;
};

struct er_cmd_s {
	const char *name;
	const char *usage;
	bool positional;
	int (*fn)(struct er_req_s *r, const struct er_cmd_s *cmd);
};

#define ER_N_COMMANDS 9 /* with the NULL entry at the end */
static const struct er_cmd_s commands[ER_N_COMMANDS];

/* ---- replies ---- */

static void reply_begin(struct er_req_s *r, bool ok)
{
	er_json_init(&r->json, r->p->out, sizeof(r->p->out), er_port_write);
	er_json_obj_begin(&r->json);
	er_json_kv_bool(&r->json, "ok", ok);
}

static void reply_end(struct er_req_s *r)
{
	er_json_obj_end(&r->json);
	(void)er_json_finish(&r->json);
}

static void reply_error(struct er_req_s *r)
{
	reply_begin(r, false);
	er_json_kv_str(&r->json, "error", r->err.buf);
	reply_end(r);
}

/* "<cmd>: <text>" into the error message; returns -EINVAL for the caller to pass up. */
static int fail(struct er_req_s *r, const char *text)
{
	if (r->cmd != NULL) {
		er_str_catn(&r->err, r->cmd, ER_ECHO_MAX);
		er_str_cat(&r->err, ": ");
	}
	er_str_cat(&r->err, text);
	return -EINVAL;
}

/* Adds "'<word>'" (truncated) to the error message. */
static void echo(struct er_req_s *r, const char *word)
{
	er_str_cat(&r->err, "'");
	er_str_catn(&r->err, word, ER_ECHO_MAX);
	er_str_cat(&r->err, strlen(word) > ER_ECHO_MAX ? "...'" : "'");
}

static const char *errno_name(int err)
{
	switch (err) {
	case -ENOMEM: return "ENOMEM";
	case -EINVAL: return "EINVAL";
	case -EIO: return "EIO";
	case -ENOTSUP: return "ENOTSUP";
	case -EFAULT: return "EFAULT";
	case -ERANGE: return "ERANGE";
	case -EBADMSG: return "EBADMSG";
	case -ENODEV: return "ENODEV";
	default: return NULL;
	}
}

static void append_errno(struct er_req_s *r, int err)
{
	const char *name = errno_name(err);

	er_str_i64(&r->err, err);
	if (name != NULL) {
		er_str_cat(&r->err, " (");
		er_str_cat(&r->err, name);
		er_str_cat(&r->err, ")");
	}
}

/* ---- arguments ---- */

static int split_args(struct er_req_s *r, char *rest, bool positional)
{
	char *save = rest;

	while (*save != '\0') {
		while (*save == ' ') {
			save++;
		}
		if (*save == '\0') {
			break;
		}
		char *word = save;

		while (*save != '\0' && *save != ' ') {
			save++;
		}
		if (*save == ' ') {
			*save++ = '\0';
		}
		char *eq = strchr(word, '=');

		if (eq == NULL) {
			if (positional && r->positional == NULL && r->n_args == 0) {
				r->positional = word;
				continue;
			}
			fail(r, "argument ");
			echo(r, word);
			er_str_cat(&r->err, " is not key=value");
			return -EINVAL;
		}
		*eq = '\0';
		if (word[0] == '\0') {
			return fail(r, "argument with an empty name");
		}
		for (size_t i = 0; i < r->n_args; i++) {
			if (strcmp(r->key[i], word) == 0) {
				fail(r, "parameter ");
				echo(r, word);
				er_str_cat(&r->err, " given twice");
				return -EINVAL;
			}
		}
		if (r->n_args == ER_ARGS_MAX) {
			return fail(r, "too many arguments");
		}
		r->key[r->n_args] = word;
		r->val[r->n_args] = eq + 1;
		r->taken[r->n_args] = false;
		r->n_args++;
	}
	return 0;
}

/* The value of @p key (marked as taken), or NULL when the request does not name it. */
static const char *arg_take(struct er_req_s *r, const char *key)
{
	for (size_t i = 0; i < r->n_args; i++) {
		if (strcmp(r->key[i], key) == 0) {
			r->taken[i] = true;
			return r->val[i];
		}
	}
	return NULL;
}

static void range_text(struct er_req_s *r, uint64_t min, uint64_t max)
{
	er_str_cat(&r->err, " (allowed: ");
	er_str_u64(&r->err, min);
	er_str_cat(&r->err, "..");
	er_str_u64(&r->err, max);
	er_str_cat(&r->err, ")");
}

/*
 * A number argument in [min, max]. Sets *present when the request names it.
 * A required argument that is missing is an error.
 */
static int arg_u64(struct er_req_s *r, const char *key, uint64_t min, uint64_t max,
		   bool required, bool *present, uint64_t *out)
{
	const char *text = arg_take(r, key);
	uint64_t v = 0;

	*present = text != NULL;
	if (text == NULL) {
		if (!required) {
			return 0;
		}
		fail(r, key);
		er_str_cat(&r->err, " required");
		range_text(r, min, max);
		return -EINVAL;
	}
	int ret = er_parse_u64(text, max, &v);

	if (ret == -EINVAL) {
		fail(r, key);
		er_str_cat(&r->err, "=");
		echo(r, text);
		er_str_cat(&r->err, " is not a decimal number");
		return ret;
	}
	if (ret == -ERANGE || v < min) {
		fail(r, key);
		er_str_cat(&r->err, "=");
		er_str_catn(&r->err, text, ER_ECHO_MAX);
		er_str_cat(&r->err, " out of range");
		range_text(r, min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* Every argument of the request was taken by the command, or an error naming the first. */
static int args_all_taken(struct er_req_s *r, const struct er_cmd_s *cmd)
{
	for (size_t i = 0; i < r->n_args; i++) {
		if (!r->taken[i]) {
			fail(r, "unknown parameter ");
			echo(r, r->key[i]);
			er_str_cat(&r->err, " (usage: ");
			er_str_cat(&r->err, cmd->usage);
			er_str_cat(&r->err, ")");
			return -EINVAL;
		}
	}
	if (r->positional != NULL && !cmd->positional) {
		return fail(r, "takes no positional argument");
	}
	return 0;
}

/* ---- commands ---- */

static void conditions_json(struct er_json_s *j, const struct er_condition_s *c)
{
	for (; c != NULL && c->name != NULL; c++) {
		if (c->text != NULL) {
			er_json_kv_str(j, c->name, c->text);
		} else {
			er_json_kv_u64(j, c->name, c->number);
		}
	}
}

static int cmd_hello(struct er_req_s *r, const struct er_cmd_s *cmd)
{
	const struct er_port_info_s *info = er_port_info();

	if (args_all_taken(r, cmd) != 0) {
		return -EINVAL;
	}
	reply_begin(r, true);
	er_json_kv_u64(&r->json, "protocol", ER_PROTOCOL_VERSION);
	er_json_kv_str(&r->json, "firmware", ER_FIRMWARE_VERSION);
	er_json_kv_str(&r->json, "build", ER_BUILD_ID);
	er_json_kv_str(&r->json, "toolchain", ER_TOOLCHAIN);
	er_json_kv_str(&r->json, "board", info->board);
	er_json_kv_u64(&r->json, "cpu_hz", info->cpu_hz);
	er_json_kv_u64(&r->json, "cycle_hz", info->cycle_hz);
	er_json_key(&r->json, "cpu_hz_levels");
	er_json_arr_begin(&r->json);
	for (const uint32_t *hz = info->cpu_hz_levels; hz != NULL && *hz != 0; hz++) {
		er_json_u64(&r->json, *hz);
	}
	er_json_arr_end(&r->json);
	er_json_kv_str(&r->json, "crypto", info->crypto_backend);
	er_json_kv_u64(&r->json, "arena_bytes", r->p->arena.size);
	er_json_kv_u64(&r->json, "payload_max", r->p->payload_cap);
	er_json_kv_u64(&r->json, "line_max", ER_LINE_MAX);
	er_json_kv_u64(&r->json, "n_ops", er_registry_count(r->p->reg));
	er_json_kv_u64(&r->json, "trigger_drops", er_port_trigger_drops());
	er_json_kv_i64(&r->json, "port_status", info->init_status);
	er_json_key(&r->json, "families");
	er_json_arr_begin(&r->json);
	for (size_t i = 0; i < er_n_families; i++) {
		er_json_str(&r->json, er_families[i]);
	}
	er_json_arr_end(&r->json);
	er_json_key(&r->json, "conditions");
	er_json_obj_begin(&r->json);
	conditions_json(&r->json, info->crypto_conditions);
	conditions_json(&r->json, info->platform_conditions);
	er_json_obj_end(&r->json);
	reply_end(r);
	return 0;
}

static void op_json(struct er_json_s *j, const struct er_op_s *op, uint32_t payload_cap)
{
	const struct er_param_spec_s *spec = &op->spec;

	er_json_obj_begin(j);
	er_json_kv_str(j, "name", op->name);
	er_json_kv_str(j, "family", op->family);
	er_json_kv_str(j, "backend", er_backend_name(op->backend));
	if (spec->key_bits != NULL) {
		er_json_key(j, "key_bits");
		er_json_arr_begin(j);
		for (size_t k = 0; spec->key_bits[k] != 0; k++) {
			er_json_u64(j, spec->key_bits[k]);
		}
		er_json_arr_end(j);
	}
	if (spec->curves != NULL) {
		er_json_key(j, "curves");
		er_json_arr_begin(j);
		for (size_t k = 0; spec->curves[k] != ER_CURVE_NONE; k++) {
			er_json_str(j, er_curve_name(spec->curves[k]));
		}
		er_json_arr_end(j);
	}
	if (spec->payload_min != 0 || spec->payload_max != 0) {
		er_json_key(j, "payload");
		er_json_obj_begin(j);
		er_json_kv_u64(j, "min", spec->payload_min);
		er_json_kv_u64(j, "max", er_registry_payload_max(op, payload_cap));
		er_json_kv_u64(j, "multiple",
			       spec->payload_multiple > 1 ? spec->payload_multiple : 1);
		er_json_obj_end(j);
	}
	er_json_obj_end(j);
}

static int cmd_ops(struct er_req_s *r, const struct er_cmd_s *cmd)
{
	const struct er_op_s *op;

	if (args_all_taken(r, cmd) != 0) {
		return -EINVAL;
	}
	reply_begin(r, true);
	er_json_key(&r->json, "ops");
	er_json_arr_begin(&r->json);
	for (size_t i = 0; (op = er_registry_at(r->p->reg, i)) != NULL; i++) {
		op_json(&r->json, op, r->p->payload_cap);
	}
	er_json_arr_end(&r->json);
	reply_end(r);
	return 0;
}

static int cmd_help(struct er_req_s *r, const struct er_cmd_s *cmd)
{
	if (args_all_taken(r, cmd) != 0) {
		return -EINVAL;
	}
	reply_begin(r, true);
	er_json_key(&r->json, "commands");
	er_json_arr_begin(&r->json);
	for (const struct er_cmd_s *c = commands; c->name != NULL; c++) {
		er_json_str(&r->json, c->usage);
	}
	er_json_arr_end(&r->json);
	reply_end(r);
	return 0;
}

/* The parameters of a prep request, parsed and checked against the op. */
static int prep_params(struct er_req_s *r, const struct er_cmd_s *cmd, const struct er_op_s **opp,
		       struct er_params_s *params)
{
	struct er_proto_s *p = r->p;
	unsigned present = 0;
	bool named;
	uint64_t v = 0;
	int backend = -1;
	const char *text;

	if (r->positional == NULL) {
		return fail(r, "op name required (list them with 'ops')");
	}
	*params = (struct er_params_s){.seed = 1};
	if (arg_u64(r, "key_bits", 1, UINT16_MAX, false, &named, &v) != 0) {
		return -EINVAL;
	}
	params->key_bits = (uint32_t)v;
	present |= named ? ER_PARAM_KEY_BITS : 0u;
	if (arg_u64(r, "payload_bytes", 1, UINT32_MAX, false, &named, &v) != 0) {
		return -EINVAL;
	}
	params->payload_bytes = (uint32_t)v;
	present |= named ? ER_PARAM_PAYLOAD : 0u;
	if (arg_u64(r, "seed", 0, UINT32_MAX, false, &named, &v) != 0) {
		return -EINVAL;
	}
	params->seed = named ? (uint32_t)v : params->seed;
	text = arg_take(r, "curve");
	if (text != NULL) {
		if (er_curve_parse(text, &params->curve) != 0) {
			fail(r, "curve=");
			echo(r, text);
			er_str_cat(&r->err, " unknown (allowed: p256, p384, secp256k1, x25519)");
			return -EINVAL;
		}
		present |= ER_PARAM_CURVE;
	}
	text = arg_take(r, "backend");
	if (text != NULL) {
		enum er_backend b;

		if (er_backend_parse(text, &b) != 0) {
			fail(r, "backend=");
			echo(r, text);
			er_str_cat(&r->err, " unknown (allowed: software, hardware)");
			return -EINVAL;
		}
		backend = (int)b;
	}
	if (args_all_taken(r, cmd) != 0) {
		return -EINVAL;
	}
	*opp = er_registry_find(p->reg, r->positional, backend);
	if (*opp == NULL) {
		bool other = er_registry_find(p->reg, r->positional, -1) != NULL;

		fail(r, other ? "no such backend for op " : "unknown op ");
		echo(r, r->positional);
		er_str_cat(&r->err, other ? "" : " (list them with 'ops')");
		return -EINVAL;
	}
	return er_registry_check(*opp, params, present, p->payload_cap, &r->err);
}

static int cmd_prep(struct er_req_s *r, const struct er_cmd_s *cmd)
{
	struct er_proto_s *p = r->p;
	const struct er_op_s *op = NULL;
	struct er_params_s params;

	if (prep_params(r, cmd, &op, &params) != 0) {
		return -EINVAL;
	}
	er_proto_release(p);
	uint64_t t0 = er_port_time_ns();

	if (op->selftest() != 0) {
		reply_begin(r, false);
		er_json_kv_str(&r->json, "op", op->name);
		er_json_kv_str(&r->json, "selftest", "fail");
		er_json_kv_str(&r->json, "error", "self-test failed");
		reply_end(r);
		return 0;
	}
	er_drbg_seed(&er_drbg, params.seed);
	int ret = op->prep(&params, &p->arena);

	if (ret != 0) {
		if (op->release != NULL) {
			op->release();
		}
		er_arena_reset(&p->arena);
		fail(r, "prep failed: ");
		append_errno(r, ret);
		return -EINVAL;
	}
	uint64_t prep_ns = er_port_time_ns() - t0;

	p->op = op;
	p->params = params;
	reply_begin(r, true);
	er_json_kv_str(&r->json, "op", op->name);
	er_json_key(&r->json, "key_bits");
	if (op->spec.key_bits != NULL) {
		er_json_u64(&r->json, params.key_bits);
	} else {
		er_json_null(&r->json);
	}
	er_json_key(&r->json, "payload_bytes");
	if (op->spec.payload_max != 0) {
		er_json_u64(&r->json, params.payload_bytes);
	} else {
		er_json_null(&r->json);
	}
	er_json_key(&r->json, "curve");
	if (op->spec.curves != NULL) {
		er_json_str(&r->json, er_curve_name(params.curve));
	} else {
		er_json_null(&r->json);
	}
	er_json_kv_u64(&r->json, "seed", params.seed);
	er_json_kv_str(&r->json, "backend", er_backend_name(op->backend));
	er_json_kv_str(&r->json, "selftest", "pass");
	er_json_kv_u64(&r->json, "prep_ns", prep_ns);
	er_json_kv_u64(&r->json, "arena_used", p->arena.used);
	reply_end(r);
	return 0;
}

/* A window needs the port's trigger and counters: refused when the port did not start. */
static int port_ready(struct er_req_s *r)
{
	int status = er_port_info()->init_status;

	if (status != 0) {
		fail(r, "the port did not start: ");
		append_errno(r, status);
		return -EINVAL;
	}
	return 0;
}

/* A key and, per window opened, one number of @p values: "key":[v0,v1,...]. */
static void kv_u64_list(struct er_json_s *j, const char *key, const uint64_t *values,
			uint32_t count)
{
	er_json_key(j, key);
	er_json_arr_begin(j);
	for (uint32_t k = 0; k < count; k++) {
		er_json_u64(j, values[k]);
	}
	er_json_arr_end(j);
}

static int cmd_run(struct er_req_s *r, const struct er_cmd_s *cmd)
{
	struct er_proto_s *p = r->p;
	struct er_batch_s *batch = &p->batch;
	bool named;
	bool several;
	uint64_t n = 0;
	uint64_t windows = 1;
	uint64_t settle_ms = 0;

	if (arg_u64(r, "n", 0, 1000000000u, true, &named, &n) != 0 ||
	    arg_u64(r, "windows", 1, ER_WINDOWS_MAX, false, &several, &windows) != 0 ||
	    arg_u64(r, "settle_ms", 0, 60000, false, &named, &settle_ms) != 0 ||
	    args_all_taken(r, cmd) != 0) {
		return -EINVAL;
	}
	if (p->op == NULL) {
		return fail(r, "no op prepared (use prep first)");
	}
	if (port_ready(r) != 0) {
		return -EINVAL;
	}
	if (er_runner_run(p->op, (uint32_t)n, (uint32_t)windows, (uint32_t)settle_ms, &p->arena,
			  batch) != 0) {
		return fail(r, "the op allocated from the arena inside the window");
	}
	/* Without windows= the reply is the one-window reply of protocol 1, byte for byte;
	 * with it, the windows done and, per window opened, its cycles and time. */
	several = several || windows > 1;
	reply_begin(r, batch->status == 0);
	er_json_kv_str(&r->json, "op", p->op->name);
	er_json_kv_u64(&r->json, "n", n);
	if (several) {
		er_json_kv_u64(&r->json, "windows", windows);
		er_json_kv_u64(&r->json, "windows_done", batch->windows_done);
	}
	er_json_kv_u64(&r->json, "n_done", batch->n_done);
	if (several) {
		kv_u64_list(&r->json, "cycles", batch->cycles, batch->windows_open);
		kv_u64_list(&r->json, "elapsed_ns", batch->elapsed_ns, batch->windows_open);
	} else {
		er_json_kv_u64(&r->json, "cycles", batch->cycles[0]);
		er_json_kv_u64(&r->json, "elapsed_ns", batch->elapsed_ns[0]);
	}
	er_json_kv_i64(&r->json, "status", batch->status);
	er_json_kv_u64(&r->json, "stack_bytes", batch->stack_bytes);
	if (batch->status != 0) {
		fail(r, "op failed: ");
		append_errno(r, batch->status);
		er_json_kv_str(&r->json, "error", r->err.buf);
	}
	reply_end(r);
	return 0;
}

static int cmd_idle(struct er_req_s *r, const struct er_cmd_s *cmd)
{
	bool named;
	uint64_t ms = 0;
	uint64_t ns;

	if (arg_u64(r, "ms", 1, 60000, true, &named, &ms) != 0 ||
	    args_all_taken(r, cmd) != 0) {
		return -EINVAL;
	}
	er_runner_idle((uint32_t)ms, &ns);
	reply_begin(r, true);
	er_json_kv_u64(&r->json, "idle_ns", ns);
	reply_end(r);
	return 0;
}

static int cmd_mark(struct er_req_s *r, const struct er_cmd_s *cmd)
{
	bool named;
	uint64_t cycles = 0;
	uint64_t measured;
	uint64_t ns;

	if (arg_u64(r, "cycles", 1, 10000000000u, true, &named, &cycles) != 0 ||
	    args_all_taken(r, cmd) != 0 || port_ready(r) != 0) {
		return -EINVAL;
	}
	er_runner_mark(cycles, &measured, &ns);
	reply_begin(r, true);
	er_json_kv_u64(&r->json, "cycles", measured);
	er_json_kv_u64(&r->json, "elapsed_ns", ns);
	reply_end(r);
	return 0;
}

/* Whether @p hz is one of the port's clock levels (NULL: none). */
static bool clock_offered(const uint32_t *levels, uint64_t hz)
{
	for (; levels != NULL && *levels != 0; levels++) {
		if (*levels == hz) {
			return true;
		}
	}
	return false;
}

static int cmd_clock(struct er_req_s *r, const struct er_cmd_s *cmd)
{
	const struct er_port_info_s *info = er_port_info();
	bool named;
	uint64_t hz = 0;

	if (arg_u64(r, "hz", 1, UINT32_MAX, true, &named, &hz) != 0 ||
	    args_all_taken(r, cmd) != 0) {
		return -EINVAL;
	}
	if (info->cpu_hz_levels == NULL || info->cpu_hz_levels[0] == 0) {
		fail(r, "this port cannot set its clock: ");
		append_errno(r, -ENOTSUP);
		return -EINVAL;
	}
	if (!clock_offered(info->cpu_hz_levels, hz)) {
		fail(r, "hz=");
		er_str_u64(&r->err, hz);
		er_str_cat(&r->err, " not offered (allowed:");
		for (const uint32_t *level = info->cpu_hz_levels; *level != 0; level++) {
			er_str_cat(&r->err, level == info->cpu_hz_levels ? " " : ", ");
			er_str_u64(&r->err, *level);
		}
		er_str_cat(&r->err, ")");
		return -EINVAL;
	}
	int ret = er_port_set_clock((uint32_t)hz);

	if (ret != 0) {
		fail(r, "the port could not set its clock: ");
		append_errno(r, ret);
		return -EINVAL;
	}
	info = er_port_info();
	reply_begin(r, true);
	er_json_kv_u64(&r->json, "cpu_hz", info->cpu_hz);
	er_json_kv_u64(&r->json, "cycle_hz", info->cycle_hz);
	reply_end(r);
	return 0;
}

static const struct er_cmd_s commands[ER_N_COMMANDS] = {
	{"hello", "hello", false, cmd_hello},
	{"ops", "ops", false, cmd_ops},
	{"help", "help", false, cmd_help},
	{"prep", "prep <op> [key_bits=K] [payload_bytes=P] [curve=C] [seed=S] [backend=B]", true,
	 cmd_prep},
	{"run", "run n=<0..1000000000> [windows=<1..64>] [settle_ms=<0..60000>]", false,
	 cmd_run},
	{"idle", "idle ms=<1..60000>", false, cmd_idle},
	{"mark", "mark cycles=<1..10000000000>", false, cmd_mark},
	{"clock", "clock hz=<1..4294967295>", false, cmd_clock},
	{NULL, NULL, false, NULL},
};

/* ---- session ---- */

void er_proto_init(struct er_proto_s *p, const struct er_registry_s *reg)
{
	uint8_t *base;
	size_t size;

	er_port_arena(&base, &size);
	p->reg = reg;
	er_arena_init(&p->arena, base, size);
	er_line_init(&p->line);
	p->op = NULL;
	uint64_t cap = size / 4;

	p->payload_cap = cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
}

void er_proto_release(struct er_proto_s *p)
{
	if (p->op != NULL && p->op->release != NULL) {
		p->op->release();
	}
	p->op = NULL;
	er_arena_reset(&p->arena);
}

static void request_init(struct er_req_s *r, struct er_proto_s *p, char *errbuf)
{
	r->p = p;
	r->cmd = NULL;
	r->positional = NULL;
	r->n_args = 0;
	er_str_init(&r->err, errbuf, ER_ERR_MAX);
}

/*
 * One reply per line: the request it holds, or the error for a line that was rejected
 * (@p rejected not NULL). The request and its error text live in this one frame, which
 * er_proto_feed's loop does not duplicate while a request runs.
 */
static void answer(struct er_proto_s *p, char *line, const char *rejected)
{
	struct er_req_s r;
	char errbuf[ER_ERR_MAX];
	char *rest = line;

	request_init(&r, p, errbuf);
	if (rejected != NULL) {
		fail(&r, rejected);
		reply_error(&r);
		return;
	}
	while (*rest == ' ') {
		rest++;
	}
	if (*rest == '\0') {
		fail(&r, "empty request (try 'help')");
		reply_error(&r);
		return;
	}
	char *word = rest;

	while (*rest != '\0' && *rest != ' ') {
		rest++;
	}
	if (*rest == ' ') {
		*rest++ = '\0';
	}
	for (const struct er_cmd_s *c = commands; c->name != NULL; c++) {
		if (strcmp(c->name, word) == 0) {
			r.cmd = c->name;
			if (split_args(&r, rest, c->positional) != 0 || c->fn(&r, c) != 0) {
				reply_error(&r);
			}
			return;
		}
	}
	fail(&r, "unknown command ");
	echo(&r, word);
	er_str_cat(&r.err, " (try 'help')");
	reply_error(&r);
}

void er_proto_request(struct er_proto_s *p, char *line)
{
	answer(p, line, NULL);
}

void er_proto_feed(struct er_proto_s *p, const uint8_t *data, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		switch (er_line_feed(&p->line, data[i])) {
		case ER_LINE_READY:
			answer(p, p->line.buf, NULL);
			break;
		case ER_LINE_TOO_LONG:
			answer(p, p->line.buf, "line too long");
			break;
		case ER_LINE_INVALID:
			answer(p, p->line.buf, "invalid byte");
			break;
		case ER_LINE_NONE:
			break;
		}
	}
}
