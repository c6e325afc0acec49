/* SPDX-License-Identifier: BSD-3-Clause */
/* Binary protocol requests: the 24-byte header, every key-carrying opcode, quiet variants,
 * pipelines (GETKQ ... NOOP), and lengths that disagree with each other or the datagram. */
#include "mc_test.h"

static struct mc_requests r;
static uint8_t buf[70000];

/* Append one binary request at buf + at; returns its length. */
static size_t bin(size_t at, uint8_t opcode, const char *key, size_t extlen, const char *value,
		  uint32_t opaque)
{
	size_t kl = key ? strlen(key) : 0, vl = value ? strlen(value) : 0;
	uint32_t body = (uint32_t)(extlen + kl + vl);
	uint8_t *h = buf + at;

	memset(h, 0, MC_BIN_HDR_LEN + body);
	h[0] = 0x80;
	h[1] = opcode;
	h[2] = (uint8_t)(kl >> 8);
	h[3] = (uint8_t)kl;
	h[4] = (uint8_t)extlen;
	h[8] = (uint8_t)(body >> 24);
	h[9] = (uint8_t)(body >> 16);
	h[10] = (uint8_t)(body >> 8);
	h[11] = (uint8_t)body;
	h[12] = (uint8_t)(opaque >> 24);
	h[13] = (uint8_t)(opaque >> 16);
	h[14] = (uint8_t)(opaque >> 8);
	h[15] = (uint8_t)opaque;
	if (kl)
		memcpy(h + MC_BIN_HDR_LEN + extlen, key, kl);
	if (vl)
		memcpy(h + MC_BIN_HDR_LEN + extlen + kl, value, vl);
	return MC_BIN_HDR_LEN + body;
}

static void set_body_len(size_t at, uint32_t body)
{
	buf[at + 8] = (uint8_t)(body >> 24);
	buf[at + 9] = (uint8_t)(body >> 16);
	buf[at + 10] = (uint8_t)(body >> 8);
	buf[at + 11] = (uint8_t)body;
}

static void test_get(void **state)
{
	(void)state;
	size_t n = bin(0, MC_BIN_GET, "foo", 0, NULL, 0xa1b2c3d4);

	assert_int_equal(mc_parse_requests(buf, n, &r), MC_OK);
	assert_int_equal(r.proto, MC_PROTO_BINARY);
	assert_int_equal(r.nreq, 1);
	assert_int_equal(r.req[0].cmd, MC_CMD_GET);
	assert_int_equal(r.req[0].kind, MC_KIND_READ);
	assert_int_equal(r.req[0].opcode, MC_BIN_GET);
	assert_int_equal(r.req[0].opaque, 0xa1b2c3d4);
	assert_int_equal(r.req[0].flags, 0);
	assert_int_equal(r.req[0].len, 27);
	assert_int_equal(r.req[0].line_len, 27);
	assert_int_equal(r.keys[0].off, 24);
	assert_key(buf, &r, 0, "foo");
}

static enum mc_kind expected_kind(enum mc_cmd cmd)
{
	switch (cmd) {
	case MC_CMD_GET:
	case MC_CMD_GAT:
		return MC_KIND_READ;
	case MC_CMD_DELETE:
		return MC_KIND_DELETE;
	case MC_CMD_INCR:
	case MC_CMD_DECR:
		return MC_KIND_ARITH;
	case MC_CMD_TOUCH:
		return MC_KIND_TOUCH;
	default:
		return MC_KIND_WRITE;
	}
}

static void test_every_key_opcode(void **state)
{
	(void)state;
	static const struct {
		uint8_t op;
		enum mc_cmd cmd;
		size_t extlen;
		const char *value;
		uint8_t flags;
	} ops[] = {
		{MC_BIN_GET, MC_CMD_GET, 0, NULL, 0},
		{MC_BIN_GETQ, MC_CMD_GET, 0, NULL, MC_REQ_F_QUIET},
		{MC_BIN_GETK, MC_CMD_GET, 0, NULL, MC_REQ_F_KEY_IN_REPLY},
		{MC_BIN_GETKQ, MC_CMD_GET, 0, NULL, MC_REQ_F_QUIET | MC_REQ_F_KEY_IN_REPLY},
		{MC_BIN_SET, MC_CMD_SET, 8, "val", MC_REQ_F_VALUE},
		{MC_BIN_SETQ, MC_CMD_SET, 8, "val", MC_REQ_F_VALUE | MC_REQ_F_QUIET},
		{MC_BIN_ADD, MC_CMD_ADD, 8, "val", MC_REQ_F_VALUE},
		{MC_BIN_ADDQ, MC_CMD_ADD, 8, "val", MC_REQ_F_VALUE | MC_REQ_F_QUIET},
		{MC_BIN_REPLACE, MC_CMD_REPLACE, 8, "val", MC_REQ_F_VALUE},
		{MC_BIN_REPLACEQ, MC_CMD_REPLACE, 8, "val", MC_REQ_F_VALUE | MC_REQ_F_QUIET},
		{MC_BIN_APPEND, MC_CMD_APPEND, 0, "val", MC_REQ_F_VALUE},
		{MC_BIN_APPENDQ, MC_CMD_APPEND, 0, "val", MC_REQ_F_VALUE | MC_REQ_F_QUIET},
		{MC_BIN_PREPEND, MC_CMD_PREPEND, 0, "val", MC_REQ_F_VALUE},
		{MC_BIN_PREPENDQ, MC_CMD_PREPEND, 0, "val", MC_REQ_F_VALUE | MC_REQ_F_QUIET},
		{MC_BIN_DELETE, MC_CMD_DELETE, 0, NULL, 0},
		{MC_BIN_DELETEQ, MC_CMD_DELETE, 0, NULL, MC_REQ_F_QUIET},
		{MC_BIN_INCREMENT, MC_CMD_INCR, 20, NULL, 0},
		{MC_BIN_INCREMENTQ, MC_CMD_INCR, 20, NULL, MC_REQ_F_QUIET},
		{MC_BIN_DECREMENT, MC_CMD_DECR, 20, NULL, 0},
		{MC_BIN_DECREMENTQ, MC_CMD_DECR, 20, NULL, MC_REQ_F_QUIET},
		{MC_BIN_TOUCH, MC_CMD_TOUCH, 4, NULL, 0},
		{MC_BIN_GAT, MC_CMD_GAT, 4, NULL, 0},
		{MC_BIN_GATQ, MC_CMD_GAT, 4, NULL, MC_REQ_F_QUIET},
		{MC_BIN_GATK, MC_CMD_GAT, 4, NULL, MC_REQ_F_KEY_IN_REPLY},
		{MC_BIN_GATKQ, MC_CMD_GAT, 4, NULL, MC_REQ_F_QUIET | MC_REQ_F_KEY_IN_REPLY},
	};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		/* Binary keys may hold spaces and control characters. */
		size_t n = bin(0, ops[i].op, "k y\x01", ops[i].extlen, ops[i].value, (uint32_t)i);
		assert_int_equal(mc_parse_requests(buf, n, &r), MC_OK);
		assert_int_equal(r.req[0].cmd, ops[i].cmd);
		assert_int_equal(r.req[0].kind, expected_kind(ops[i].cmd));
		assert_int_equal(r.req[0].opcode, ops[i].op);
		assert_int_equal(r.req[0].flags, ops[i].flags);
		assert_int_equal(r.req[0].opaque, i);
		assert_int_equal(r.req[0].args_len, ops[i].extlen);
		assert_int_equal(r.req[0].args_off, 24);
		assert_int_equal(r.keys[0].off, 24 + ops[i].extlen);
		assert_key(buf, &r, 0, "k y\x01");
		if (ops[i].value) {
			assert_int_equal(r.req[0].data_len, 3);
			assert_memory_equal(buf + r.req[0].data_off, "val", 3);
		}
		/* The same request with no key is refused. */
		n = bin(0, ops[i].op, NULL, ops[i].extlen, ops[i].value, 0);
		assert_int_equal(mc_parse_requests(buf, n, &r), MC_E_KEY_MISSING);
		/* ... and with the wrong extras length. */
		n = bin(0, ops[i].op, "k", ops[i].extlen + 1, ops[i].value, 0);
		assert_int_equal(mc_parse_requests(buf, n, &r), MC_E_BIN_BAD_LENGTHS);
	}
	/* Kinds, spot-checked. */
	assert_int_equal(mc_parse_requests(buf, bin(0, MC_BIN_DELETE, "k", 0, NULL, 0), &r), MC_OK);
	assert_int_equal(r.req[0].kind, MC_KIND_DELETE);
	assert_int_equal(mc_parse_requests(buf, bin(0, MC_BIN_INCREMENT, "k", 20, NULL, 0), &r),
			 MC_OK);
	assert_int_equal(r.req[0].kind, MC_KIND_ARITH);
	assert_int_equal(mc_parse_requests(buf, bin(0, MC_BIN_TOUCH, "k", 4, NULL, 0), &r), MC_OK);
	assert_int_equal(r.req[0].kind, MC_KIND_TOUCH);
	assert_int_equal(mc_parse_requests(buf, bin(0, MC_BIN_APPEND, "k", 0, "v", 0), &r), MC_OK);
	assert_int_equal(r.req[0].kind, MC_KIND_WRITE);
}

static void test_keyless_opcodes(void **state)
{
	(void)state;
	static const struct {
		uint8_t op;
		enum mc_cmd cmd;
		size_t extlen;
		const char *key;
		const char *value;
	} ops[] = {
		{MC_BIN_NOOP, MC_CMD_NOOP, 0, NULL, NULL},
		{MC_BIN_VERSION, MC_CMD_VERSION, 0, NULL, NULL},
		{MC_BIN_QUIT, MC_CMD_QUIT, 0, NULL, NULL},
		{MC_BIN_QUITQ, MC_CMD_QUIT, 0, NULL, NULL},
		{MC_BIN_FLUSH, MC_CMD_FLUSH_ALL, 0, NULL, NULL},
		{MC_BIN_FLUSH, MC_CMD_FLUSH_ALL, 4, NULL, NULL},
		{MC_BIN_FLUSHQ, MC_CMD_FLUSH_ALL, 4, NULL, NULL},
		{MC_BIN_STAT, MC_CMD_STATS, 0, NULL, NULL},
		{MC_BIN_STAT, MC_CMD_STATS, 0, "items", NULL},
		{MC_BIN_VERBOSITY, MC_CMD_VERBOSITY, 4, NULL, NULL},
		{MC_BIN_SASL_LIST_MECHS, MC_CMD_SASL, 0, NULL, NULL},
		{MC_BIN_SASL_AUTH, MC_CMD_SASL, 0, "PLAIN", "\0u\0p"},
	};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		size_t n = bin(0, ops[i].op, ops[i].key, ops[i].extlen, ops[i].value, 0);
		assert_int_equal(mc_parse_requests(buf, n, &r), MC_OK);
		assert_int_equal(r.req[0].cmd, ops[i].cmd);
		assert_int_equal(r.req[0].kind, MC_KIND_KEYLESS);
		assert_int_equal(r.nkeys, 0);
	}
	/* Keys and values where the opcode has none. */
	assert_int_equal(mc_parse_requests(buf, bin(0, MC_BIN_NOOP, "k", 0, NULL, 0), &r),
			 MC_E_BIN_BAD_LENGTHS);
	assert_int_equal(mc_parse_requests(buf, bin(0, MC_BIN_GET, "k", 0, "v", 0), &r),
			 MC_E_BIN_BAD_LENGTHS);
	assert_int_equal(mc_parse_requests(buf, bin(0, MC_BIN_FLUSH, NULL, 8, NULL, 0), &r),
			 MC_E_BIN_BAD_LENGTHS);
	assert_int_equal(mc_parse_requests(buf, bin(0, MC_BIN_QUITQ, NULL, 0, NULL, 0), &r), MC_OK);
	assert_true(r.req[0].flags & MC_REQ_F_QUIET);
}

static void test_header_checks(void **state)
{
	(void)state;
	size_t n = bin(0, MC_BIN_GET, "foo", 0, NULL, 0);

	/* Every truncation of the header. */
	for (size_t i = 1; i < MC_BIN_HDR_LEN; i++)
		assert_int_equal(mc_parse_requests(buf, i, &r), MC_E_BIN_TRUNCATED_HEADER);
	/* Every truncation of the body. */
	for (size_t i = MC_BIN_HDR_LEN; i < n; i++)
		assert_int_equal(mc_parse_requests(buf, i, &r), MC_E_BIN_TRUNCATED_BODY);
	/* Body length larger than the datagram, up to 2^32 - 1. */
	set_body_len(0, 0xffffffff);
	assert_int_equal(mc_parse_requests(buf, n, &r), MC_E_BIN_TRUNCATED_BODY);
	/* Key longer than the body. */
	set_body_len(0, 2);
	assert_int_equal(mc_parse_requests(buf, n, &r), MC_E_BIN_BAD_LENGTHS);
	/* Body longer than key + extras on a GET: trailing bytes it cannot have. */
	n = bin(0, MC_BIN_GET, "foo", 0, NULL, 0);
	set_body_len(0, 4);
	buf[n] = 'x';
	assert_int_equal(mc_parse_requests(buf, n + 1, &r), MC_E_BIN_BAD_LENGTHS);
	/* Extras longer than the body. */
	n = bin(0, MC_BIN_SET, "k", 8, "v", 0);
	buf[4] = 200;
	assert_int_equal(mc_parse_requests(buf, n, &r), MC_E_BIN_BAD_LENGTHS);
	/* Unknown opcode, datatype, magic. */
	n = bin(0, 0x30, "k", 0, NULL, 0);
	assert_int_equal(mc_parse_requests(buf, n, &r), MC_E_BIN_BAD_OPCODE);
	n = bin(0, MC_BIN_GET, "k", 0, NULL, 0);
	buf[5] = 1;
	assert_int_equal(mc_parse_requests(buf, n, &r), MC_E_BIN_BAD_DATATYPE);
}

static void test_key_length(void **state)
{
	(void)state;
	char key[252];

	memset(key, 'k', sizeof(key));
	key[250] = '\0';
	size_t n = bin(0, MC_BIN_GET, key, 0, NULL, 0);
	assert_int_equal(mc_parse_requests(buf, n, &r), MC_OK);
	assert_int_equal(r.keys[0].len, 250);
	key[250] = 'k';
	key[251] = '\0';
	n = bin(0, MC_BIN_GET, key, 0, NULL, 0);
	assert_int_equal(mc_parse_requests(buf, n, &r), MC_E_KEY_TOO_LONG);
}

static void test_pipeline(void **state)
{
	(void)state;
	size_t n = 0;

	n += bin(n, MC_BIN_GETKQ, "a", 0, NULL, 1);
	n += bin(n, MC_BIN_GETKQ, "bb", 0, NULL, 2);
	n += bin(n, MC_BIN_SETQ, "c", 8, "xyz", 3);
	n += bin(n, MC_BIN_GETKQ, "ddd", 0, NULL, 4);
	n += bin(n, MC_BIN_NOOP, NULL, 0, NULL, 5);
	assert_int_equal(mc_parse_requests(buf, n, &r), MC_OK);
	assert_int_equal(r.nreq, 5);
	assert_int_equal(r.nkeys, 4);
	uint32_t pos = 0;
	for (int i = 0; i < 5; i++) {
		assert_int_equal(r.req[i].off, pos);
		assert_int_equal(r.req[i].opaque, (uint32_t)i + 1);
		pos += r.req[i].len;
	}
	assert_int_equal(pos, n);
	assert_key(buf, &r, 0, "a");
	assert_key(buf, &r, 1, "bb");
	assert_key(buf, &r, 2, "c");
	assert_key(buf, &r, 3, "ddd");
	assert_int_equal(r.keys[3].req, 3);
	assert_int_equal(r.req[4].cmd, MC_CMD_NOOP);
	assert_int_equal(r.req[2].data_len, 3);

	/* Cut anywhere inside the last request. */
	assert_int_equal(mc_parse_requests(buf, n - 1, &r), MC_E_BIN_TRUNCATED_HEADER);
	assert_int_equal(r.err_off, n - 24);
	/* Garbage after a request: a text byte after binary. */
	buf[n] = 'g';
	assert_int_equal(mc_parse_requests(buf, n + 1, &r), MC_E_MIXED_PROTOCOLS);
	/* A response magic inside a request pipeline. */
	buf[n - 24] = 0x81;
	assert_int_equal(mc_parse_requests(buf, n, &r), MC_E_MIXED_PROTOCOLS);

	/* More than MC_MAX_REQUESTS requests. */
	n = 0;
	for (int i = 0; i <= MC_MAX_REQUESTS; i++)
		n += bin(n, MC_BIN_NOOP, NULL, 0, NULL, 0);
	assert_int_equal(mc_parse_requests(buf, n - 24, &r), MC_OK);
	assert_int_equal(mc_parse_requests(buf, n, &r), MC_E_TOO_MANY_REQUESTS);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get),
		cmocka_unit_test(test_every_key_opcode),
		cmocka_unit_test(test_keyless_opcodes),
		cmocka_unit_test(test_header_checks),
		cmocka_unit_test(test_key_length),
		cmocka_unit_test(test_pipeline),
	};
	/* clang-format on */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
