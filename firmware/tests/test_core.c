/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The portable core on the fake port: line reader, JSON writer, numbers, arena, DRBG,
 * registry and parameter checks, the protocol on good and hostile input, and the runner.
 */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "er_arena.h"
#include "er_drbg.h"
#include "er_json.h"
#include "er_line.h"
#include "er_port_fake.h"
#include "er_proto.h"
#include "er_registry.h"
#include "er_stack.h"
#include "er_str.h"
#include "er_test.h"

static struct er_proto_s proto;

/* Feeds @p input to a session and returns every reply it wrote. */
static const char *feed(const char *input, size_t len)
{
	er_fake.out_len = 0;
	er_fake.out[0] = '\0';
	er_proto_feed(&proto, (const uint8_t *)input, len);
	return er_fake.out;
}

static const char *say(const char *input)
{
	return feed(input, strlen(input));
}

static size_t count_char(const char *s, size_t len, char c)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		n += s[i] == c;
	}
	return n;
}

static void fresh_session(void)
{
	er_fake_reset();
	er_proto_init(&proto, &er_fake_registry);
}

/* ---- line reader ---- */

static enum er_line_event feed_line(struct er_line_s *l, const char *s, size_t len)
{
	enum er_line_event ev = ER_LINE_NONE;

	for (size_t i = 0; i < len; i++) {
		enum er_line_event e = er_line_feed(l, (uint8_t)s[i]);

		if (e != ER_LINE_NONE) {
			ev = e;
		}
	}
	return ev;
}

static void test_line_limits(void)
{
	struct er_line_s l;
	char buf[ER_LINE_MAX + 4];

	er_line_init(&l);
	memset(buf, 'a', sizeof(buf));
	buf[ER_LINE_MAX] = '\n';
	ER_CHECK_INT(feed_line(&l, buf, ER_LINE_MAX + 1), ER_LINE_READY);
	ER_CHECK_INT(strlen(l.buf), ER_LINE_MAX);

	buf[ER_LINE_MAX] = '\r';
	buf[ER_LINE_MAX + 1] = '\n';
	ER_CHECK_INT(feed_line(&l, buf, ER_LINE_MAX + 2), ER_LINE_READY);
	ER_CHECK_INT(strlen(l.buf), ER_LINE_MAX);

	buf[ER_LINE_MAX] = 'a';
	buf[ER_LINE_MAX + 1] = '\n';
	ER_CHECK_INT(feed_line(&l, buf, ER_LINE_MAX + 2), ER_LINE_TOO_LONG);
	/* The next line is read normally. */
	ER_CHECK_INT(feed_line(&l, "ok\n", 3), ER_LINE_READY);
	ER_CHECK_STR(l.buf, "ok");
}

static void test_line_hostile(void)
{
	struct er_line_s l;
	static char big[100000];

	er_line_init(&l);
	ER_CHECK_INT(feed_line(&l, "a\0b\n", 4), ER_LINE_INVALID);
	ER_CHECK_INT(feed_line(&l, "a\rb\n", 4), ER_LINE_INVALID);
	ER_CHECK_INT(feed_line(&l, "\xff\xfe\n", 3), ER_LINE_INVALID);
	ER_CHECK_INT(feed_line(&l, "tab\there\n", 9), ER_LINE_INVALID);
	ER_CHECK_INT(feed_line(&l, "\x7f\n", 2), ER_LINE_INVALID);
	/* A partial line waits for the rest. */
	ER_CHECK_INT(feed_line(&l, "hel", 3), ER_LINE_NONE);
	ER_CHECK_INT(feed_line(&l, "lo\n", 3), ER_LINE_READY);
	ER_CHECK_STR(l.buf, "hello");
	/* 100 kB without a newline: one error when it ends, nothing before. */
	memset(big, 'x', sizeof(big));
	ER_CHECK_INT(feed_line(&l, big, sizeof(big)), ER_LINE_NONE);
	ER_CHECK_INT(feed_line(&l, "\n", 1), ER_LINE_TOO_LONG);
	ER_CHECK_INT(feed_line(&l, "\n", 1), ER_LINE_READY);
	ER_CHECK_STR(l.buf, "");
}

/* ---- JSON writer ---- */

static void test_json_escaping(void)
{
	char buf[256];
	struct er_json_s j;

	er_json_init(&j, buf, sizeof(buf), NULL);
	er_json_obj_begin(&j);
	er_json_kv_str(&j, "q\"k", "a\"b\\c\nd\re\tf\x01g\x1f\x7f\xc3\xa9");
	er_json_obj_end(&j);
	ER_CHECK_INT(er_json_finish(&j), 0);
	buf[j.len] = '\0';
	ER_CHECK_STR(buf, "{\"q\\\"k\":\"a\\\"b\\\\c\\nd\\re\\tf\\u0001g\\u001f\\u007f\\u00c3\\u00a9\"}\n");
}

static void test_json_structure(void)
{
	char buf[256];
	struct er_json_s j;

	er_json_init(&j, buf, sizeof(buf), NULL);
	er_json_obj_begin(&j);
	er_json_kv_bool(&j, "ok", true);
	er_json_key(&j, "a");
	er_json_arr_begin(&j);
	er_json_u64(&j, 0);
	er_json_i64(&j, INT64_MIN);
	er_json_u64(&j, UINT64_MAX);
	er_json_null(&j);
	er_json_obj_begin(&j);
	er_json_obj_end(&j);
	er_json_arr_begin(&j);
	er_json_arr_end(&j);
	er_json_arr_end(&j);
	er_json_kv_i64(&j, "neg", -12);
	er_json_kv_u64(&j, "n", 5);
	er_json_obj_end(&j);
	ER_CHECK_INT(er_json_finish(&j), 0);
	buf[j.len] = '\0';
	ER_CHECK_STR(buf, "{\"ok\":true,\"a\":[0,-9223372036854775808,18446744073709551615,"
			  "null,{},[]],\"neg\":-12,\"n\":5}\n");

	/* Unbalanced and overflowing documents are reported. */
	er_json_init(&j, buf, sizeof(buf), NULL);
	er_json_obj_begin(&j);
	ER_CHECK_INT(er_json_finish(&j), -EINVAL);
	er_json_init(&j, buf, 8, NULL);
	er_json_obj_begin(&j);
	er_json_kv_str(&j, "key", "a value longer than the buffer");
	er_json_obj_end(&j);
	ER_CHECK_INT(er_json_finish(&j), -ENOSPC);
	ER_CHECK_INT(j.len, 8);
}

static char streamed[512];
static size_t streamed_len;

static void collect(const char *buf, size_t len)
{
	memcpy(streamed + streamed_len, buf, len);
	streamed_len += len;
}

static void test_json_streaming(void)
{
	char tiny[3];
	struct er_json_s j;

	er_json_init(&j, tiny, sizeof(tiny), collect);
	er_json_obj_begin(&j);
	er_json_kv_str(&j, "name", "streamed \"through\" a 3-byte buffer");
	er_json_kv_u64(&j, "n", 1234567);
	er_json_obj_end(&j);
	ER_CHECK_INT(er_json_finish(&j), 0);
	streamed[streamed_len] = '\0';
	ER_CHECK_STR(streamed, "{\"name\":\"streamed \\\"through\\\" a 3-byte buffer\",\"n\":1234567}\n");
}

/* ---- numbers, arena, DRBG ---- */

static void test_numbers(void)
{
	uint64_t v = 0;
	char dec[21];

	ER_CHECK_INT(er_parse_u64("0", 10, &v), 0);
	ER_CHECK_INT(v, 0);
	ER_CHECK_INT(er_parse_u64("18446744073709551615", UINT64_MAX, &v), 0);
	ER_CHECK(v == UINT64_MAX);
	ER_CHECK_INT(er_parse_u64("18446744073709551616", UINT64_MAX, &v), -ERANGE);
	ER_CHECK_INT(er_parse_u64("99999999999999999999999", UINT64_MAX, &v), -ERANGE);
	ER_CHECK_INT(er_parse_u64("7", 5, &v), -ERANGE);
	ER_CHECK_INT(er_parse_u64("", 5, &v), -EINVAL);
	ER_CHECK_INT(er_parse_u64("-1", 5, &v), -EINVAL);
	ER_CHECK_INT(er_parse_u64("+1", 5, &v), -EINVAL);
	ER_CHECK_INT(er_parse_u64("1x", 5, &v), -EINVAL);
	ER_CHECK_INT(er_u64_to_dec(UINT64_MAX, dec), 20);
	ER_CHECK_STR(dec, "18446744073709551615");
}

static void test_arena(void)
{
	static _Alignas(64) uint8_t mem[256];
	struct er_arena_s a;

	er_arena_init(&a, mem, sizeof(mem));
	uint8_t *p1 = er_arena_alloc(&a, 3, 1);
	uint8_t *p2 = er_arena_alloc(&a, 16, 16);

	ER_CHECK(p1 == mem);
	ER_CHECK(p2 == mem + 16);
	ER_CHECK_INT(a.used, 32);
	ER_CHECK(er_arena_alloc(&a, 8, 3) == NULL);        /* not a power of two */
	ER_CHECK(er_arena_alloc(&a, SIZE_MAX, 1) == NULL); /* no wrap-around */
	ER_CHECK(er_arena_alloc(&a, 225, 1) == NULL);
	ER_CHECK(er_arena_alloc(&a, 224, 1) == mem + 32);
	ER_CHECK(er_arena_alloc(&a, 1, 1) == NULL);
	ER_CHECK_INT(a.used, 256);
	er_arena_reset(&a);
	ER_CHECK(er_arena_alloc(&a, 256, 64) == mem);
}

static void hex(const uint8_t *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

static void test_drbg(void)
{
	struct er_drbg_s d;
	uint8_t a[16], b[16];
	char text[33];

	/* xoshiro256** seeded by splitmix64, checked against an independent implementation. */
	er_drbg_seed(&d, 1);
	ER_CHECK_INT(er_drbg_random(&d, a, sizeof(a)), 0);
	hex(a, sizeof(a), text);
	ER_CHECK_STR(text, "c510c70f6daff2b3ea4c364796553b85");
	er_drbg_seed(&d, 0);
	er_drbg_random(&d, a, sizeof(a));
	hex(a, sizeof(a), text);
	ER_CHECK_STR(text, "b4f275cb365fec992a455649781f6ebf");
	er_drbg_seed(&d, 0);
	er_drbg_random(&d, b, sizeof(b));
	ER_CHECK(memcmp(a, b, sizeof(a)) == 0);
	er_drbg_random(&d, b, sizeof(b));
	ER_CHECK(memcmp(a, b, sizeof(a)) != 0);
}

/* ---- stack meter ---- */

/* A port's runner: its own frames take 96 bytes, the function says how many it used. */
static int runner_calls;
static size_t fn_depth;
static size_t runner_frames = 96;

static int fake_runner(int (*fn)(void *), void *arg, size_t *depth)
{
	runner_calls++;
	fn_depth = 0;
	int ret = fn(arg);

	*depth = runner_frames == 0 ? 0 : runner_frames + fn_depth;
	return ret;
}

static int uses_stack(void *arg)
{
	fn_depth = *(size_t *)arg;
	return 7;
}

static void test_stack_meter(void)
{
	struct er_stack_meter_s meter = ER_STACK_METER_INIT(fake_runner);
	size_t want = 1000;
	size_t used = 1;

	/* The first run measures the runner's frames with an empty function, then runs fn. */
	ER_CHECK_INT(er_stack_run_measured(&meter, uses_stack, &want, &used), 7);
	ER_CHECK_INT(runner_calls, 2);
	ER_CHECK_INT(meter.overhead, 96);
	ER_CHECK_INT(used, 1000);
	/* Later runs reuse the measured overhead. */
	want = 24;
	ER_CHECK_INT(er_stack_run_measured(&meter, uses_stack, &want, &used), 7);
	ER_CHECK_INT(runner_calls, 3);
	ER_CHECK_INT(used, 24);
	want = 0;
	er_stack_run_measured(&meter, uses_stack, &want, &used);
	ER_CHECK_INT(used, 0);
	/* A runner that cannot tell (depth 0) gives 0, not a wrapped-around difference. */
	runner_frames = 0;
	want = 500;
	ER_CHECK_INT(er_stack_run_measured(&meter, uses_stack, &want, &used), 7);
	ER_CHECK_INT(used, 0);
	runner_frames = 96;
}

/* ---- registry ---- */

static void test_registry_lookup(void)
{
	const struct er_registry_s *reg = &er_fake_registry;

	ER_CHECK_INT(er_registry_count(reg), 8);
	ER_CHECK_STR(er_registry_at(reg, 6)->name, "sized");
	ER_CHECK(er_registry_at(reg, 8) == NULL);
	ER_CHECK_INT(er_registry_find(reg, "count", -1)->backend, ER_BACKEND_SOFTWARE);
	ER_CHECK_INT(er_registry_find(reg, "count", ER_BACKEND_HARDWARE)->backend,
		     ER_BACKEND_HARDWARE);
	ER_CHECK(er_registry_find(reg, "sized", ER_BACKEND_HARDWARE) == NULL);
	ER_CHECK(er_registry_find(reg, "nope", -1) == NULL);
	ER_CHECK(er_registry_find(reg, "", -1) == NULL);
}

/* The message of er_registry_check for @p op with @p params, or "" when they fit. */
static const char *check(const char *name, struct er_params_s params, unsigned present,
			 uint32_t cap)
{
	static char buf[192];
	struct er_str_s err;

	er_str_init(&err, buf, sizeof(buf));
	int ret = er_registry_check(er_registry_find(&er_fake_registry, name, -1), &params,
				    present, cap, &err);

	ER_CHECK_INT(ret, buf[0] == '\0' ? 0 : -EINVAL);
	return buf;
}

static void test_registry_params(void)
{
	const unsigned kp = ER_PARAM_KEY_BITS | ER_PARAM_PAYLOAD;
	const uint32_t cap = 1u << 20;

	ER_CHECK_STR(check("sized", (struct er_params_s){.key_bits = 128, .payload_bytes = 32},
			   kp, cap), "");
	ER_CHECK_STR(check("sized", (struct er_params_s){.key_bits = 100, .payload_bytes = 32},
			   kp, cap), "sized: key_bits=100 not allowed (allowed: 128, 256)");
	ER_CHECK_STR(check("sized", (struct er_params_s){.payload_bytes = 32}, ER_PARAM_PAYLOAD,
			   cap), "sized: key_bits required (allowed: 128, 256)");
	ER_CHECK_STR(check("sized", (struct er_params_s){.key_bits = 256, .payload_bytes = 17},
			   kp, cap),
		     "sized: payload_bytes=17 not allowed (allowed: 16..1048576, multiple of 16)");
	ER_CHECK_STR(check("sized", (struct er_params_s){.key_bits = 256}, ER_PARAM_KEY_BITS, cap),
		     "sized: payload_bytes required (allowed: 16..1048576, multiple of 16)");
	/* The port's cap lowers the op's maximum. */
	ER_CHECK_STR(check("sized", (struct er_params_s){.key_bits = 256, .payload_bytes = 4096},
			   kp, 2048),
		     "sized: payload_bytes=4096 not allowed (allowed: 16..2048, multiple of 16)");
	ER_CHECK_STR(check("sized",
			   (struct er_params_s){.key_bits = 128, .payload_bytes = 32,
						.curve = ER_CURVE_P256},
			   kp | ER_PARAM_CURVE, cap), "sized: takes no curve");
	ER_CHECK_STR(check("curvy", (struct er_params_s){.curve = ER_CURVE_X25519}, ER_PARAM_CURVE,
			   cap), "");
	ER_CHECK_STR(check("curvy", (struct er_params_s){.curve = ER_CURVE_P384}, ER_PARAM_CURVE,
			   cap), "curvy: curve=p384 not allowed (allowed: p256, x25519)");
	ER_CHECK_STR(check("curvy", (struct er_params_s){0}, 0, cap),
		     "curvy: curve required (allowed: p256, x25519)");
	ER_CHECK_STR(check("curvy", (struct er_params_s){.curve = ER_CURVE_P256, .key_bits = 128},
			   ER_PARAM_CURVE | ER_PARAM_KEY_BITS, cap), "curvy: takes no key_bits");
	ER_CHECK_STR(check("count", (struct er_params_s){.payload_bytes = 16}, ER_PARAM_PAYLOAD,
			   cap), "count: takes no payload_bytes");
}

/* ---- protocol ---- */

static void test_proto_hello_ops(void)
{
	fresh_session();
	ER_CHECK_STR(say("hello\n"),
		     "{\"ok\":true,\"protocol\":1,\"firmware\":\"" ER_FIRMWARE_VERSION
		     "\",\"build\":\"" ER_BUILD_ID "\",\"toolchain\":\"" ER_TOOLCHAIN
		     "\",\"board\":\"fake\",\"cpu_hz\":64000000,"
		     "\"cycle_hz\":64000000,\"cpu_hz_levels\":[16000000,64000000],"
		     "\"crypto\":\"none\",\"arena_bytes\":65536,"
		     "\"payload_max\":16384,\"line_max\":255,\"n_ops\":8,\"trigger_drops\":7,"
		     "\"port_status\":0,\"families\":[\"symmetric\",\"hash\",\"public-key\","
		     "\"composite\"],\"conditions\":{\"mbedtls_ecp_nist_optim\":\"on\","
		     "\"mbedtls_mpi_window\":3}}\n");
	const char *ops = say("ops\r\n");

	ER_CHECK_HAS(ops, "{\"ok\":true,\"ops\":[{\"name\":\"count\",\"family\":\"hash\","
			  "\"backend\":\"hardware\"},");
	ER_CHECK_HAS(ops, "{\"name\":\"sized\",\"family\":\"symmetric\",\"backend\":\"software\","
			  "\"key_bits\":[128,256],\"payload\":{\"min\":16,\"max\":16384,"
			  "\"multiple\":16}},{\"name\":\"curvy\",\"family\":\"public-key\","
			  "\"backend\":\"software\",\"curves\":[\"p256\",\"x25519\"]}]}\n");
	ER_CHECK_INT(count_char(ops, strlen(ops), '\n'), 1);
	ER_CHECK_HAS(say("help\n"),
		     "\"run n=<0..1000000000> [windows=<1..64>] [settle_ms=<0..60000>]\"");
}

/* Requests that must be refused, and the error each gets. */
static const struct {
	const char *request;
	const char *error; /* as it appears in the JSON reply, escaped */
} refused[] = {
	{"\n",
	 "empty request (try 'help')"},
	{"   \n",
	 "empty request (try 'help')"},
	{"launch missiles\n",
	 "unknown command 'launch' (try 'help')"},
	{"HELLO\n",
	 "unknown command 'HELLO' (try 'help')"},
	{"hello world\n",
	 "hello: argument 'world' is not key=value"},
	{"ops x=1\n",
	 "ops: unknown parameter 'x' (usage: ops)"},
	{"run\n",
	 "run: n required (allowed: 0..1000000000)"},
	{"run n=1000000001\n",
	 "run: n=1000000001 out of range (allowed: 0..1000000000)"},
	{"run n=-1\n",
	 "run: n='-1' is not a decimal number"},
	{"run n=5\n",
	 "run: no op prepared (use prep first)"},
	{"run n=1 n=2\n",
	 "run: parameter 'n' given twice"},
	{"run =3\n",
	 "run: argument with an empty name"},
	{"idle ms=60001\n",
	 "idle: ms=60001 out of range (allowed: 1..60000)"},
	{"mark\n",
	 "mark: cycles required (allowed: 1..10000000000)"},
	{"prep\n",
	 "prep: op name required (list them with 'ops')"},
	{"prep nope\n",
	 "prep: unknown op 'nope' (list them with 'ops')"},
	{"prep sized hardware\n",
	 "prep: argument 'hardware' is not key=value"},
	{"prep sized backend=hardware key_bits=128 payload_bytes=16\n",
	 "prep: no such backend for op 'sized'"},
	{"prep sized backend=quantum\n",
	 "prep: backend='quantum' unknown (allowed: software, hardware)"},
	{"prep curvy curve=p521\n",
	 "prep: curve='p521' unknown (allowed: p256, p384, secp256k1, x25519)"},
	{"prep sized key_bits=128 payload_bytes=16 colour=red\n",
	 "prep: unknown parameter 'colour' (usage: prep <op> [key_bits=K] [payload_bytes=P] "
	 "[curve=C] [seed=S] [backend=B])"},
	{"prep sized key_bits=99999999999999999999999\n",
	 "prep: key_bits=99999999999999999999999 out of range (allowed: 1..65535)"},
	{"prep sized key_bits=128 payload_bytes=20000\n",
	 "sized: payload_bytes=20000 not allowed (allowed: 16..16384, multiple of 16)"},
	{"a b c d e f g h i j k\n",
	 "unknown command 'a' (try 'help')"},
	{"run a=1 b=2 c=3 d=4 e=5 f=6 g=7 h=8 i=9\n",
	 "run: too many arguments"},
	{"prep \"quoted\\name-that-goes-on-and-on-and-on-and-on\n",
	 "prep: unknown op '\\\"quoted\\\\name-that-goes-on-and-on...' (list them with 'ops')"},
};

static void test_proto_errors(void)
{
	char expected[512];

	fresh_session();
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		snprintf(expected, sizeof(expected), "{\"ok\":false,\"error\":\"%s\"}\n",
			 refused[i].error);
		ER_CHECK_STR(say(refused[i].request), expected);
	}
}

static void test_proto_hostile_bytes(void)
{
	static char junk[5000];
	const char *out;

	fresh_session();
	ER_CHECK_STR(feed("hel\0lo\n", 7), "{\"ok\":false,\"error\":\"invalid byte\"}\n");
	ER_CHECK_STR(say("\x80\xff\x1b[2J\n"), "{\"ok\":false,\"error\":\"invalid byte\"}\n");
	memset(junk, 'z', sizeof(junk));
	junk[sizeof(junk) - 1] = '\n';
	ER_CHECK_STR(feed(junk, sizeof(junk)), "{\"ok\":false,\"error\":\"line too long\"}\n");
	/* Split requests across feeds: replies come when their lines end, one each. */
	ER_CHECK_STR(say("hel"), "");
	out = say("lo\nops\nnope\nhe");
	ER_CHECK_INT(count_char(out, strlen(out), '\n'), 3);
	ER_CHECK_HAS(out, "\"protocol\":1");
	ER_CHECK_HAS(out, "unknown command 'nope'");
	ER_CHECK_HAS(say("llo\n"), "\"protocol\":1");
	/* Every byte value in a stream: one reply per newline, nothing else. */
	for (size_t i = 0; i < sizeof(junk); i++) {
		junk[i] = (char)(i * 131u + 7u);
	}
	out = feed(junk, sizeof(junk));
	ER_CHECK_INT(count_char(out, strlen(out), '\n'), count_char(junk, sizeof(junk), '\n'));
}

static void test_proto_prep_run(void)
{
	const char *out;

	fresh_session();
	ER_CHECK_STR(say("prep sized key_bits=128 payload_bytes=1024 seed=9\n"),
		     "{\"ok\":true,\"op\":\"sized\",\"key_bits\":128,\"payload_bytes\":1024,"
		     "\"curve\":null,\"seed\":9,\"backend\":\"software\",\"selftest\":\"pass\","
		     "\"prep_ns\":1000,\"arena_used\":1024}\n");
	er_fake.n_edges = 0;
	out = say("run n=7\n");
	/* The fake clock advances one tick per reading; the window reads it twice (one stamp
	 * on each side of the loop) and converts nothing inside. */
	ER_CHECK_STR(out, "{\"ok\":true,\"op\":\"sized\",\"n\":7,\"n_done\":7,\"cycles\":1000,"
			  "\"elapsed_ns\":1000,\"status\":0,\"stack_bytes\":4242}\n");
	ER_CHECK_INT(er_fake.runs, 8);
	ER_CHECK_INT(er_fake.n_edges, 2);
	ER_CHECK_INT(er_fake.edges[0].level, 1);
	ER_CHECK_INT(er_fake.edges[0].runs, 1); /* only the unrecorded warm-up run before it */
	ER_CHECK_INT(er_fake.edges[0].accel, 0);
	ER_CHECK_INT(er_fake.edges[1].level, 0);
	ER_CHECK_INT(er_fake.edges[1].runs, 8); /* the 7 recorded ones before the falling edge */

	/* settle_ms: the warm-up run, then that much idle, then the rising edge, so the host's
	 * baseline span before the edge holds none of the warm-up run. */
	er_fake.n_edges = 0;
	ER_CHECK_HAS(say("run n=2 settle_ms=15\n"), "\"n_done\":2");
	ER_CHECK_INT(er_fake.n_edges, 2);
	ER_CHECK_INT(er_fake.edges[0].runs, 9); /* 8 before, then the warm-up run */
	ER_CHECK(er_fake.edges[0].since_run >= 15u * 1000000u);
	ER_CHECK_HAS(say("run n=1 settle_ms=60001\n"), "\"ok\":false");

	/* n=0: a window of the trigger and the two readings only, no warm-up run. */
	er_fake.n_edges = 0;
	ER_CHECK_STR(say("run n=0\n"),
		     "{\"ok\":true,\"op\":\"sized\",\"n\":0,\"n_done\":0,\"cycles\":1000,"
		     "\"elapsed_ns\":1000,\"status\":0,\"stack_bytes\":4242}\n");
	ER_CHECK_INT(er_fake.runs, 11);
	ER_CHECK_INT(er_fake.n_edges, 2);

	/* A failed prep keeps nothing; a bad request keeps the prepared op. */
	ER_CHECK_HAS(say("prep sized key_bits=7\n"), "key_bits=7 not allowed");
	ER_CHECK_HAS(say("run n=2\n"), "\"n_done\":2");

	ER_CHECK_STR(say("prep curvy curve=x25519\n"),
		     "{\"ok\":true,\"op\":\"curvy\",\"key_bits\":null,\"payload_bytes\":null,"
		     "\"curve\":\"x25519\",\"seed\":1,\"backend\":\"software\","
		     "\"selftest\":\"pass\",\"prep_ns\":1000,\"arena_used\":0}\n");
	ER_CHECK_INT(er_fake.releases, 1); /* sized was released */

	/* The hardware variant raises the accel bit on the wire. */
	er_fake.n_edges = 0;
	ER_CHECK_HAS(say("prep count backend=hardware\n"), "\"backend\":\"hardware\"");
	ER_CHECK_HAS(say("run n=1\n"), "\"ok\":true");
	ER_CHECK_INT(er_fake.edges[0].accel, 1);
	ER_CHECK_INT(er_fake.edges[1].accel, 0);
}

static void test_proto_failures(void)
{
	fresh_session();
	ER_CHECK_STR(say("prep broken-selftest\n"),
		     "{\"ok\":false,\"op\":\"broken-selftest\",\"selftest\":\"fail\","
		     "\"error\":\"self-test failed\"}\n");
	ER_CHECK_HAS(say("run n=1\n"), "no op prepared");
	ER_CHECK_STR(say("prep no-memory\n"),
		     "{\"ok\":false,\"error\":\"prep: prep failed: -12 (ENOMEM)\"}\n");
	ER_CHECK_HAS(say("run n=1\n"), "no op prepared");
	ER_CHECK_INT(proto.arena.used, 0);

	ER_CHECK_HAS(say("prep fails-at-3\n"), "\"ok\":true");
	/* The third run is the second recorded one (the first was the warm-up). */
	ER_CHECK_STR(say("run n=10\n"),
		     "{\"ok\":false,\"op\":\"fails-at-3\",\"n\":10,\"n_done\":1,\"cycles\":1000,"
		     "\"elapsed_ns\":1000,\"status\":-5,\"stack_bytes\":4242,"
		     "\"error\":\"run: op failed: -5 (EIO)\"}\n");

	/* An op that allocates inside the window is caught. */
	ER_CHECK_HAS(say("prep greedy\n"), "\"ok\":true");
	ER_CHECK_STR(say("run n=3\n"), "{\"ok\":false,\"error\":\"run: the op allocated from "
				       "the arena inside the window\"}\n");
	er_proto_release(&proto);
}

static void test_proto_port_not_started(void)
{
	fresh_session();
	er_fake.init_status = -ENODEV;
	ER_CHECK_HAS(say("hello\n"), "\"port_status\":-19,");
	ER_CHECK_HAS(say("prep count\n"), "\"ok\":true");
	ER_CHECK_STR(say("run n=1\n"),
		     "{\"ok\":false,\"error\":\"run: the port did not start: -19 (ENODEV)\"}\n");
	ER_CHECK_HAS(say("mark cycles=10\n"), "mark: the port did not start: -19 (ENODEV)");
	ER_CHECK_INT(er_fake.n_edges, 0);
	er_fake.init_status = 0;
	er_proto_release(&proto);
}

static void test_proto_idle_mark(void)
{
	fresh_session();
	er_fake.n_edges = 0;
	ER_CHECK_STR(say("idle ms=250\n"), "{\"ok\":true,\"idle_ns\":250001000}\n");
	ER_CHECK_INT(er_fake.n_edges, 0); /* idle stays low */
	ER_CHECK_STR(say("mark cycles=10500\n"),
		     "{\"ok\":true,\"cycles\":13000,\"elapsed_ns\":13000}\n");
	ER_CHECK_INT(er_fake.n_edges, 2);
	ER_CHECK_INT(er_fake.edges[0].level, 1);
	ER_CHECK_INT(er_fake.edges[1].level, 0);
}

/* The clock command: a level the port offers is set and hello reports it; any other, or a
 * port that offers none, is refused naming why; a port's own failure is passed up. */
static void test_proto_clock(void)
{
	fresh_session();
	ER_CHECK_STR(say("clock hz=16000000\n"),
		     "{\"ok\":true,\"cpu_hz\":16000000,\"cycle_hz\":16000000}\n");
	ER_CHECK_HAS(say("hello\n"), "\"cpu_hz\":16000000,\"cycle_hz\":16000000,");
	ER_CHECK_STR(say("clock hz=32000000\n"),
		     "{\"ok\":false,\"error\":\"clock: hz=32000000 not offered (allowed: "
		     "16000000, 64000000)\"}\n");
	ER_CHECK_STR(say("clock\n"), "{\"ok\":false,\"error\":\"clock: hz required "
				     "(allowed: 1..4294967295)\"}\n");
	er_fake.clock_status = -EIO;
	ER_CHECK_STR(say("clock hz=64000000\n"),
		     "{\"ok\":false,\"error\":\"clock: the port could not set its clock: "
		     "-5 (EIO)\"}\n");
	ER_CHECK_HAS(say("hello\n"), "\"cpu_hz\":16000000,"); /* the clock stays */
	er_fake.clock_status = 0;
	er_fake_fixed_clock();
	ER_CHECK_HAS(say("hello\n"), "\"cpu_hz_levels\":[],");
	ER_CHECK_STR(say("clock hz=16000000\n"),
		     "{\"ok\":false,\"error\":\"clock: this port cannot set its clock: "
		     "-95 (ENOTSUP)\"}\n");
	er_proto_release(&proto);
}

int main(void)
{
	ER_RUN(test_line_limits);
	ER_RUN(test_line_hostile);
	ER_RUN(test_json_escaping);
	ER_RUN(test_json_structure);
	ER_RUN(test_json_streaming);
	ER_RUN(test_numbers);
	ER_RUN(test_arena);
	ER_RUN(test_drbg);
	ER_RUN(test_stack_meter);
	ER_RUN(test_registry_lookup);
	ER_RUN(test_registry_params);
	ER_RUN(test_proto_hello_ops);
	ER_RUN(test_proto_errors);
	ER_RUN(test_proto_hostile_bytes);
	ER_RUN(test_proto_prep_run);
	ER_RUN(test_proto_failures);
	ER_RUN(test_proto_idle_mark);
	ER_RUN(test_proto_port_not_started);
	ER_RUN(test_proto_clock);
	return er_test_summary();
}
