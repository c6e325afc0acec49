/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Expiry times in memcached's terms (issue 27): the writer (relative up to 30 days, absolute
 * beyond), the reader of clients' exptimes (relative, absolute against a clock, negative,
 * refused), and mc_cap_ttl byte for byte: the writes a router sends to a stand-in node while
 * the owner is down expire within failover_ttl_s, in every protocol and for every command that
 * sets an expiry (touch, gat, mg/ma T and N too); nothing else in the datagram changes, and
 * what comes out parses as the same requests.
 */
#include <stdio.h>

#include "mc_test.h"

#define TTL 60
#define NOW 1800000000ull /* the router's Unix clock in these tests (2027) */

/* Cap @p in (a payload without frame header) and compare with @p want, then re-parse. */
static void check(const char *in, size_t in_len, const char *want, size_t want_len)
{
	struct mc_requests r, r2;
	uint8_t out[2048];
	size_t n;

	assert_int_equal(mc_parse_requests((const uint8_t *)in, in_len, &r), MC_OK);
	n = mc_cap_ttl((const uint8_t *)in, in_len, &r, TTL, NOW, out, sizeof(out));
	assert_int_equal(n, want_len);
	assert_memory_equal(out, want, want_len);
	assert_int_equal(mc_parse_requests(out, n, &r2), MC_OK);
	assert_int_equal(r2.nreq, r.nreq);
	assert_int_equal(r2.nkeys, r.nkeys);
	/* Capping twice changes nothing more. */
	uint8_t again[2048];

	assert_int_equal(mc_cap_ttl(out, n, &r2, TTL, NOW, again, sizeof(again)), n);
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
	CHECK("set k 5 1800000030 1\r\nx\r\n", "set k 5 1800000030 1\r\nx\r\n"); /* in 30 s */
	CHECK("set k 5 1800000061 1\r\nx\r\n", "set k 5 60 1\r\nx\r\n"); /* in 61 s */
	/* Absolute and already past by the router's clock: stored expired, not for 60 s. */
	CHECK("set k 5 1000000000 1\r\nx\r\n", "set k 5 -1 1\r\nx\r\n");
	CHECK("set k 5 2592001 1\r\nx\r\n", "set k 5 -1 1\r\nx\r\n");
	CHECK("set k 5 2592000 1\r\nx\r\n", "set k 5 60 1\r\nx\r\n"); /* 30 days, relative */
	/* Touches: touch and gat set an expiry on the stand-in's copy as well. */
	CHECK("touch k 3600\r\n", "touch k 60\r\n");
	CHECK("touch k 0 noreply\r\n", "touch k 60 noreply\r\n");
	CHECK("touch k 20\r\n", "touch k 20\r\n");
	CHECK("gat 0 a b\r\n", "gat 60 a b\r\n");
	CHECK("gats 86400 a\r\n", "gats 60 a\r\n");
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
	CHECK("mg k v\r\n", "mg k v\r\n");		/* reads that set no expiry: untouched */
	CHECK("mg k v T0\r\n", "mg k v T60\r\n");	/* a touch to no expiry */
	CHECK("mg k v T3600 N0\r\n", "mg k v T60 N60\r\n"); /* ... and a vivify */
	CHECK("mg k v T30\r\n", "mg k v T30\r\n");
	CHECK("ma k N0 J5\r\n", "ma k N60 J5\r\n");
	CHECK("ma k D2\r\n", "ma k D2\r\n");
	CHECK("ms k 1 T1000000000\r\nx\r\n", "ms k 1 T-1\r\nx\r\n"); /* absolute, past */
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
		/* absolute: in 30 s stays, in an hour capped, past is stored expired */
		{MC_BIN_SET, (uint32_t)NOW + 30, (uint32_t)NOW + 30},
		{MC_BIN_SET, (uint32_t)NOW + 3600, TTL},
		{MC_BIN_SET, 1000000000u, MC_EXPTIME_PAST},
		{MC_BIN_SET, MC_EXPTIME_REL_MAX, TTL},
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

/* Binary TOUCH / GAT: extras are the expiration alone. */
static size_t bin_touch(uint8_t *b, uint8_t op, uint32_t exp, const char *key)
{
	size_t kl = strlen(key), body = 4 + kl;

	memset(b, 0, 24);
	b[0] = 0x80;
	b[1] = op;
	b[3] = (uint8_t)kl;
	b[4] = 4;
	b[11] = (uint8_t)body;
	b[24] = (uint8_t)(exp >> 24);
	b[25] = (uint8_t)(exp >> 16);
	b[26] = (uint8_t)(exp >> 8);
	b[27] = (uint8_t)exp;
	memcpy(b + 28, key, kl);
	return 24 + body;
}

static void test_binary_touch(void **state)
{
	static const uint8_t ops[] = {MC_BIN_TOUCH, MC_BIN_GAT, MC_BIN_GATQ, MC_BIN_GATK,
				      MC_BIN_GATKQ};
	uint8_t in[64], want[64];

	(void)state;
	for (size_t i = 0; i < sizeof(ops); i++) {
		size_t n = bin_touch(in, ops[i], 0, "key");

		bin_touch(want, ops[i], TTL, "key");
		check((const char *)in, n, (const char *)want, n);
		n = bin_touch(in, ops[i], 5, "key");
		check((const char *)in, n, (const char *)in, n);
	}
}

/* The writer at memcached's 30-day boundary: relative up to 2,592,000 s, absolute beyond. */
static void test_exptime_write(void **state)
{
	(void)state;
	assert_int_equal(mc_exptime_write(1, NOW), 1);
	assert_int_equal(mc_exptime_write(2591999, NOW), 2591999);
	assert_int_equal(mc_exptime_write(2592000, NOW), 2592000);
	assert_int_equal(mc_exptime_write(2592001, NOW), NOW + 2592001);
	assert_int_equal(mc_exptime_write(40u * 86400, NOW), NOW + 40u * 86400);
	/* No clock: never an exptime memcached would read as 1970 (expired). */
	assert_int_equal(mc_exptime_write(2592001, 0), 2592000);
	/* Past 2038: the most memcached's text parser takes, not a wrapped small number. */
	assert_int_equal(mc_exptime_write(400000000, NOW), MC_EXPTIME_MAX);
	assert_int_equal(mc_exptime_write(UINT64_MAX, NOW), MC_EXPTIME_MAX);
	/* What is written reads back as the same life (within the clock's second). */
	for (uint64_t secs = 2591990; secs < 2592010; secs++) {
		char t[16];
		uint64_t left = 0;
		int n = snprintf(t, sizeof(t), "%u", mc_exptime_write(secs, NOW));

		assert_int_equal(mc_exptime_read((const uint8_t *)t, (size_t)n, NOW, &left),
				 MC_EXPTIME_LEFT);
		assert_int_equal(left, secs);
	}
}

static enum mc_exptime_kind rd(const char *t, uint64_t now, uint64_t *left)
{
	*left = 0;
	return mc_exptime_read((const uint8_t *)t, strlen(t), now, left);
}

/* The reader: relative, absolute (future, past, no clock), negative, refused. */
static void test_exptime_read(void **state)
{
	uint64_t left;

	(void)state;
	assert_int_equal(rd("0", NOW, &left), MC_EXPTIME_NONE);
	assert_int_equal(rd("-0", NOW, &left), MC_EXPTIME_NONE);
	assert_int_equal(rd("2591999", NOW, &left), MC_EXPTIME_LEFT);
	assert_int_equal(left, 2591999);
	assert_int_equal(rd("2592000", NOW, &left), MC_EXPTIME_LEFT);
	assert_int_equal(left, 2592000);
	assert_int_equal(rd("2592001", NOW, &left), MC_EXPTIME_EXPIRED); /* 1970 */
	assert_int_equal(rd("1800000100", NOW, &left), MC_EXPTIME_LEFT);
	assert_int_equal(left, 100);
	assert_int_equal(rd("1800000000", NOW, &left), MC_EXPTIME_EXPIRED);
	assert_int_equal(rd("1800000100", 0, &left), MC_EXPTIME_LEFT);
	assert_true(left > MC_EXPTIME_REL_MAX);
	assert_int_equal(rd("-1", NOW, &left), MC_EXPTIME_EXPIRED);
	assert_int_equal(rd("-2147483648", NOW, &left), MC_EXPTIME_EXPIRED);
	assert_int_equal(rd("+7", NOW, &left), MC_EXPTIME_LEFT);
	assert_int_equal(left, 7);
	assert_int_equal(rd("2147483647", NOW, &left), MC_EXPTIME_LEFT);
	assert_int_equal(rd("2147483648", NOW, &left), MC_EXPTIME_BAD);
	assert_int_equal(rd("12x", NOW, &left), MC_EXPTIME_BAD);
	assert_int_equal(rd("", NOW, &left), MC_EXPTIME_BAD);
	assert_int_equal(rd("-", NOW, &left), MC_EXPTIME_BAD);
	assert_int_equal(mc_exptime_read_u32(0, NOW, &left), MC_EXPTIME_NONE);
	assert_int_equal(mc_exptime_read_u32(2592000, NOW, &left), MC_EXPTIME_LEFT);
	assert_int_equal(mc_exptime_read_u32(2592001, NOW, &left), MC_EXPTIME_EXPIRED);
	assert_int_equal(mc_exptime_read_u32(UINT32_MAX, NOW, &left), MC_EXPTIME_LEFT);
	assert_int_equal(left, UINT32_MAX - NOW);
}

/* What the worker asks before capping a stand-in's datagram. */
static void test_sets_expiry(void **state)
{
	static const struct {
		const char *in;
		bool sets;
	} v[] = {
		{"get a b\r\n", false},	   {"gets a\r\n", false},
		{"delete k\r\n", false},	   {"incr k 1\r\n", false},
		{"mg k v\r\n", false},	   {"ma k D2\r\n", false},
		{"set k 0 0 1\r\nx\r\n", true}, {"get a\r\ntouch k 5\r\n", true},
		{"gat 5 k\r\n", true},	   {"mg k v T5\r\n", true},
		{"ma k N5\r\n", true},	   {"ms k 1\r\nx\r\n", true},
	};
	struct mc_requests r;

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		assert_int_equal(mc_parse_requests((const uint8_t *)v[i].in, strlen(v[i].in), &r),
				 MC_OK);
		assert_int_equal(mc_sets_expiry((const uint8_t *)v[i].in, &r), v[i].sets);
	}
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
	assert_int_equal(
		mc_cap_ttl((const uint8_t *)dg, sizeof(dg) - 1, &r, TTL, NOW, out, sizeof(out)),
		sizeof(want) - 1);
	assert_memory_equal(out, want, sizeof(want) - 1);
	assert_int_equal(
		mc_cap_ttl((const uint8_t *)dg, sizeof(dg) - 1, &r, TTL, NOW, out, sizeof(want) - 2),
		0);
}

/* The quiet delete the router sends on its own: text where a token carries the key, meta
 * base64 where it cannot (a space, CR, LF, NUL), and what comes out parses as one
 * delete of the same key; too small a buffer writes nothing. */
static void test_delete_line(void **state)
{
	static const uint8_t sp[] = {'a', ' ', 'b'}, ctl[] = {0x10, 'k'}, del[] = {'x', 0x7f};
	uint8_t big[MC_KEY_MAX], dec[MC_KEY_MAX];
	char out[MC_DELETE_LINE_MAX];
	struct mc_requests r;
	size_t n;

	(void)state;
	n = mc_delete_line((const uint8_t *)"user:42", 7, out, sizeof(out));
	assert_int_equal(n, 24);
	assert_memory_equal(out, "delete user:42 noreply\r\n", 24);
	n = mc_delete_line(sp, sizeof(sp), out, sizeof(out));
	assert_int_equal(n, 13);
	assert_memory_equal(out, "md YSBi b q\r\n", 13);
	/* Control bytes and DEL are part of a text key (memcaslap's keys): a text delete, which
	 * memcached never answers (a meta `md ... q` of an absent key answers NF, a second
	 * message in a failover read's datagram: issue 27, e2e-control-live's reply_no_slot). */
	assert_true(mc_delete_is_text(ctl, sizeof(ctl)));
	assert_int_equal(mc_delete_line(ctl, sizeof(ctl), out, sizeof(out)), 19);
	assert_memory_equal(out, "delete \x10k noreply\r\n", 19);
	assert_int_equal(mc_delete_line(del, sizeof(del), out, sizeof(out)), 19);
	assert_memory_equal(out, "delete x\x7f noreply\r\n", 19);
	assert_false(mc_delete_is_text(sp, sizeof(sp)));
	assert_false(mc_delete_is_text((const uint8_t *)"a\rb", 3));
	assert_false(mc_delete_is_text((const uint8_t *)"a\nb", 3));
	assert_false(mc_delete_is_text((const uint8_t *)"a\0b", 3));
	assert_int_equal(mc_delete_line((const uint8_t *)"a\0b", 3, out, sizeof(out)), 13);
	assert_memory_equal(out, "md YQBi b q\r\n", 13);
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7 + 1);
	/* 186 bytes: 248 base64 characters, the longest memcached takes as a key token. */
	n = mc_delete_line(big, 186, out, sizeof(out));
	assert_int_equal(n, 3 + 248 + 6);
	assert_int_equal(mc_parse_requests((const uint8_t *)out, n, &r), MC_OK);
	assert_int_equal(r.nkeys, 1);
	assert_int_equal(mc_key_decode((const uint8_t *)out, &r.keys[0], dec), 186);
	assert_memory_equal(dec, big, 186);
	assert_int_equal(mc_delete_line(big, 186, out, n - 1), 0);
	assert_int_equal(mc_delete_line(big, 187, out, sizeof(out)), 0); /* 252 characters */
	assert_int_equal(mc_delete_line(big, sizeof(big), out, sizeof(out)), 0);
	assert_int_equal(mc_delete_line((const uint8_t *)"k", 1, out, 17), 0);
	assert_int_equal(mc_delete_line((const uint8_t *)"k", 1, out, 18), 18);
	assert_int_equal(mc_delete_line(big, 0, out, sizeof(out)), 0);
	assert_int_equal(mc_delete_line(big, MC_KEY_MAX + 1, out, sizeof(out)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ascii),
		cmocka_unit_test(test_meta),
		cmocka_unit_test(test_binary),
		cmocka_unit_test(test_binary_touch),
		cmocka_unit_test(test_exptime_write),
		cmocka_unit_test(test_exptime_read),
		cmocka_unit_test(test_sets_expiry),
		cmocka_unit_test(test_datagram_and_room),
		cmocka_unit_test(test_delete_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
