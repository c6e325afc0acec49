/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mc_cap_ttl byte for byte: the writes a router sends to a stand-in node while the owner is
 * down expire within failover_ttl_s, in every protocol; nothing else in the datagram changes,
 * and what comes out parses as the same requests.
 */
#include "mc_test.h"

#define TTL 60

/* Cap @p in (a payload without frame header) and compare with @p want, then re-parse. */
static void check(const char *in, size_t in_len, const char *want, size_t want_len)
{
	struct mc_requests r, r2;
	uint8_t out[2048];
	size_t n;

	assert_int_equal(mc_parse_requests((const uint8_t *)in, in_len, &r), MC_OK);
	n = mc_cap_ttl((const uint8_t *)in, in_len, &r, TTL, out, sizeof(out));
	assert_int_equal(n, want_len);
	assert_memory_equal(out, want, want_len);
	assert_int_equal(mc_parse_requests(out, n, &r2), MC_OK);
	assert_int_equal(r2.nreq, r.nreq);
	assert_int_equal(r2.nkeys, r.nkeys);
	/* Capping twice changes nothing more. */
	uint8_t again[2048];

	assert_int_equal(mc_cap_ttl(out, n, &r2, TTL, again, sizeof(again)), n);
	assert_memory_equal(again, out, n);
}

#define CHECK(in, want) check(in, sizeof(in) - 1, want, sizeof(want) - 1)

static void test_ascii(void **state)
{
	(void)state;
	CHECK("set k 0 0 1\r\nx\r\n", "set k 0 60 1\r\nx\r\n");
	CHECK("set k 5 30 1\r\nx\r\n", "set k 5 30 1\r\nx\r\n");
	CHECK("set k 5 3600 1\r\nx\r\n", "set k 5 60 1\r\nx\r\n");
	CHECK("set k 5 -1 1\r\nx\r\n", "set k 5 -1 1\r\nx\r\n");
	CHECK("set k 5 1900000000 1\r\nx\r\n", "set k 5 60 1\r\nx\r\n"); /* absolute */
	CHECK("add k 1 0 2 noreply\r\nab\r\n", "add k 1 60 2 noreply\r\nab\r\n");
	CHECK("replace k 1 99999 2\r\nab\r\n", "replace k 1 60 2\r\nab\r\n");
	CHECK("cas k 1 0 2 77\r\nab\r\n", "cas k 1 60 2 77\r\nab\r\n");
	CHECK("set  k  1   0  2\r\nab\r\n", "set  k  1   60  2\r\nab\r\n"); /* extra spaces */
	CHECK("set k 0 0 1\nx\r\n", "set k 0 60 1\nx\r\n");		    /* bare \n */
	/* No expiry to cap: byte for byte the same. */
	CHECK("append k 0 0 1\r\nx\r\n", "append k 0 0 1\r\nx\r\n");
	CHECK("get a b\r\n", "get a b\r\n");
	CHECK("delete k\r\n", "delete k\r\n");
	CHECK("incr k 5\r\n", "incr k 5\r\n");
	/* A pipeline: each request on its own; the value bytes never change, even when they
	 * look like a command. */
	CHECK("set a 0 0 12\r\nset b 0 0 1x\r\nset b 0 7 1\r\ny\r\nget a\r\n",
	      "set a 0 60 12\r\nset b 0 0 1x\r\nset b 0 7 1\r\ny\r\nget a\r\n");
}

static void test_meta(void **state)
{
	(void)state;
	CHECK("ms k 1\r\nx\r\n", "ms k 1 T60\r\nx\r\n");
	CHECK("ms k 1 F5 q\r\nx\r\n", "ms k 1 F5 q T60\r\nx\r\n");
	CHECK("ms k 1 T0\r\nx\r\n", "ms k 1 T60\r\nx\r\n");
	CHECK("ms k 1 T30 O7\r\nx\r\n", "ms k 1 T30 O7\r\nx\r\n");
	CHECK("ms k 1 I T3600 O7\r\nx\r\n", "ms k 1 I T60 O7\r\nx\r\n");
	CHECK("ms k 1 T-1\r\nx\r\n", "ms k 1 T-1\r\nx\r\n");
	CHECK("mg k v T0\r\n", "mg k v T0\r\n"); /* reads: untouched */
	CHECK("md k q\r\nms k 2 T0 q\r\nab\r\nmn\r\n", "md k q\r\nms k 2 T60 q\r\nab\r\nmn\r\n");
}

/* A binary request: header (magic, opcode, key length, extras length, body, opaque),
 * extras (flags, expiration), key, value. */
static size_t bin_req(uint8_t *b, uint8_t op, uint32_t exp, const char *key, const char *val)
{
	size_t kl = strlen(key), vl = strlen(val), el = 8, body = el + kl + vl;

	memset(b, 0, 24);
	b[0] = 0x80;
	b[1] = op;
	b[2] = 0;
	b[3] = (uint8_t)kl;
	b[4] = (uint8_t)el;
	b[8] = (uint8_t)(body >> 24);
	b[9] = (uint8_t)(body >> 16);
	b[10] = (uint8_t)(body >> 8);
	b[11] = (uint8_t)body;
	b[12] = 0xde; /* opaque */
	b[15] = 0xef;
	memcpy(b + 24, "\x00\x00\x00\x2a", 4); /* flags 42 */
	b[28] = (uint8_t)(exp >> 24);
	b[29] = (uint8_t)(exp >> 16);
	b[30] = (uint8_t)(exp >> 8);
	b[31] = (uint8_t)exp;
	memcpy(b + 32, key, kl);
	memcpy(b + 32 + kl, val, vl);
	return 24 + body;
}

static void test_binary(void **state)
{
	static const struct {
		uint8_t op;
		uint32_t exp, want;
	} v[] = {
		{MC_BIN_SET, 0, TTL},	  {MC_BIN_SET, 30, 30},	     {MC_BIN_SET, 3600, TTL},
		{MC_BIN_ADD, 0, TTL},	  {MC_BIN_REPLACE, 61, TTL}, {MC_BIN_SETQ, 0, TTL},
		{MC_BIN_ADDQ, 9999, TTL}, {MC_BIN_REPLACEQ, 60, 60},
	};
	uint8_t in[128], want[128];

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		size_t n = bin_req(in, v[i].op, v[i].exp, "key", "val");

		bin_req(want, v[i].op, v[i].want, "key", "val");
		check((const char *)in, n, (const char *)want, n);
	}
	/* A pipeline with a GET and a NOOP around a SETQ: only the SETQ's expiry moves. */
	uint8_t p[256], w[256];
	size_t n = 0, m = 0;

	memset(p, 0, sizeof(p));
	p[0] = 0x80;
	p[1] = MC_BIN_GETQ;
	p[3] = 1;
	p[11] = 1;
	p[24] = 'a';
	n = 25;
	memcpy(w, p, n);
	n += bin_req(p + n, MC_BIN_SETQ, 0, "b", "v");
	m = n;
	bin_req(w + 25, MC_BIN_SETQ, TTL, "b", "v");
	memset(p + n, 0, 24);
	p[n] = 0x80;
	p[n + 1] = MC_BIN_NOOP;
	memcpy(w + m, p + n, 24);
	n += 24;
	check((const char *)p, n, (const char *)w, n);
}

/* With the frame header in front (as the worker calls it), and an output too small. */
static void test_datagram_and_room(void **state)
{
	static const char dg[] = "\x12\x34\x00\x00\x00\x01\x00\x00set k 0 0 1\r\nx\r\n";
	static const char want[] = "\x12\x34\x00\x00\x00\x01\x00\x00set k 0 60 1\r\nx\r\n";
	struct mc_requests r;
	uint8_t out[64];

	(void)state;
	assert_int_equal(mc_parse_datagram((const uint8_t *)dg, sizeof(dg) - 1, &r), MC_OK);
	assert_int_equal(mc_cap_ttl((const uint8_t *)dg, sizeof(dg) - 1, &r, TTL, out, sizeof(out)),
			 sizeof(want) - 1);
	assert_memory_equal(out, want, sizeof(want) - 1);
	assert_int_equal(
		mc_cap_ttl((const uint8_t *)dg, sizeof(dg) - 1, &r, TTL, out, sizeof(want) - 2), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ascii),
		cmocka_unit_test(test_meta),
		cmocka_unit_test(test_binary),
		cmocka_unit_test(test_datagram_and_room),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
