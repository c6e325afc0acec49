/* SPDX-License-Identifier: BSD-3-Clause */
/* The UDP frame header, request datagram rules, key rules and the generated name tables. */
#include "mc_test.h"

static struct mc_requests r;

static void test_frame_roundtrip(void **state)
{
	(void)state;
	const uint8_t wire[8] = {0x12, 0x34, 0x00, 0x02, 0x00, 0x05, 0xab, 0xcd};
	struct mc_frame f;
	uint8_t out[8];

	assert_int_equal(mc_frame_parse(wire, 8, &f), MC_OK);
	assert_int_equal(f.request_id, 0x1234);
	assert_int_equal(f.seq, 2);
	assert_int_equal(f.total, 5);
	assert_int_equal(f.reserved, 0xabcd);
	mc_frame_write(out, &f);
	assert_memory_equal(out, wire, 8);
	for (size_t n = 0; n < 8; n++)
		assert_int_equal(mc_frame_parse(wire, n, &f), MC_E_FRAME_SHORT);
}

static void test_datagram_rules(void **state)
{
	(void)state;
	const char ok[] = "\x00\x07\x00\x00\x00\x01\x00\x00get foo\r\n";
	assert_int_equal(mc_parse_datagram((const uint8_t *)ok, sizeof(ok) - 1, &r), MC_OK);
	assert_int_equal(r.frame.request_id, 7);
	/* Offsets count from the frame header's first byte. */
	assert_int_equal(r.req[0].off, 8);
	assert_int_equal(r.keys[0].off, 12);
	assert_key(ok, &r, 0, "foo");

	const char multi[] = "\x00\x07\x00\x00\x00\x02\x00\x00get foo\r\n";
	assert_int_equal(mc_parse_datagram((const uint8_t *)multi, sizeof(multi) - 1, &r),
			 MC_E_FRAME_MULTI);
	const char zero[] = "\x00\x07\x00\x00\x00\x00\x00\x00get foo\r\n";
	assert_int_equal(mc_parse_datagram((const uint8_t *)zero, sizeof(zero) - 1, &r),
			 MC_E_FRAME_MULTI);
	const char seq[] = "\x00\x07\x00\x01\x00\x01\x00\x00get foo\r\n";
	assert_int_equal(mc_parse_datagram((const uint8_t *)seq, sizeof(seq) - 1, &r),
			 MC_E_FRAME_SEQ);
	assert_int_equal(mc_parse_datagram((const uint8_t *)ok, 8, &r), MC_E_EMPTY);
	assert_int_equal(mc_parse_datagram((const uint8_t *)ok, 5, &r), MC_E_FRAME_SHORT);
	/* Reserved is reported, not enforced (memcached does not check it either). */
	const char rsv[] = "\x00\x07\x00\x00\x00\x01\x00\x09mn\r\n";
	assert_int_equal(mc_parse_datagram((const uint8_t *)rsv, sizeof(rsv) - 1, &r), MC_OK);
	assert_int_equal(r.frame.reserved, 9);
	/* Errors after the header report offsets in the datagram. */
	const char bad[] = "\x00\x07\x00\x00\x00\x01\x00\x00get foo\r\nbogus\r\n";
	assert_int_equal(mc_parse_datagram((const uint8_t *)bad, sizeof(bad) - 1, &r),
			 MC_E_UNKNOWN_COMMAND);
	assert_int_equal(r.err_off, 17);
}

static void test_key_check(void **state)
{
	(void)state;
	uint8_t k[260];

	memset(k, 'a', sizeof(k));
	assert_int_equal(mc_key_check(k, 0), MC_E_KEY_MISSING);
	assert_int_equal(mc_key_check(k, 1), MC_OK);
	assert_int_equal(mc_key_check(k, 250), MC_OK);
	assert_int_equal(mc_key_check(k, 251), MC_E_KEY_TOO_LONG);
	for (unsigned c = 0; c < 256; c++) {
		k[100] = (uint8_t)c;
		bool bad = c <= 0x20 || c == 0x7f;
		assert_int_equal(mc_key_check(k, 250), bad ? MC_E_KEY_BAD_CHAR : MC_OK);
	}
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(mc_err_name(MC_OK), "ok");
	assert_string_equal(mc_err_name(MC_E_KEY_TOO_LONG), "key_too_long");
	assert_string_equal(mc_err_name(MC_E_FRAME_MULTI), "frame_multi_datagram");
	assert_string_equal(mc_err_name(MC_E_COUNT), "unknown");
	assert_string_equal(mc_err_name((enum mc_err)(MC_E_COUNT + 5)), "unknown");
	/* Every reason has a distinct non-empty [a-z0-9_] name, usable as a counter key. */
	for (int i = 1; i < MC_E_COUNT; i++) {
		const char *a = mc_err_name((enum mc_err)i);
		assert_true(strlen(a) > 0);
		assert_int_equal(strspn(a, "abcdefghijklmnopqrstuvwxyz0123456789_"), strlen(a));
		for (int j = 1; j < i; j++)
			assert_string_not_equal(a, mc_err_name((enum mc_err)j));
	}
	assert_string_equal(mc_cmd_name(MC_CMD_GET), "get");
	assert_string_equal(mc_cmd_name(MC_CMD_FLUSH_ALL), "flush_all");
	assert_string_equal(mc_cmd_name(MC_CMD_COUNT), "unknown");
	for (int i = 0; i < MC_CMD_COUNT; i++)
		assert_non_null(mc_cmd_name((enum mc_cmd)i));
	assert_string_equal(mc_kind_name(MC_KIND_READ), "read");
	assert_string_equal(mc_kind_name(MC_KIND_KEYLESS), "keyless");
	assert_string_equal(mc_kind_name(MC_KIND_COUNT), "unknown");
}


/* Whether @p p (@p n bytes) is a fast-lane read, checked against the full parse: a match is
 * exactly one read, not quiet, of the key it names (plain, not base64). */
static bool single_get(const uint8_t *p, uint32_t n)
{
	static struct mc_requests g;
	uint16_t off = 0, len = 0;
	bool m = mc_match_single_get(p, n, &off, &len);

	if (!m)
		return false;
	assert_int_equal(mc_parse_datagram_flags(p, n, MC_PARSE_CTL_KEYS, &g), MC_OK);
	assert_int_equal(mc_parse_datagram_flags(p, n, 0, &g), MC_OK);
	assert_int_equal(g.nreq, 1);
	assert_int_equal(g.nkeys, 1);
	assert_int_equal(g.req[0].kind, MC_KIND_READ);
	assert_int_equal(g.req[0].key_count, 1);
	assert_false(g.req[0].flags & (MC_REQ_F_QUIET | MC_REQ_F_BASE64));
	assert_false(g.keys[0].base64);
	assert_int_equal(g.keys[0].off, off);
	assert_int_equal(g.keys[0].len, len);
	return true;
}

static uint32_t dgram(uint8_t *b, uint16_t seq, uint16_t total, const void *body, size_t n)
{
	const uint8_t h[8] = {0x12, 0x34, (uint8_t)(seq >> 8), (uint8_t)seq, (uint8_t)(total >> 8),
			      (uint8_t)total, 0, 0};

	memcpy(b, h, 8);
	memcpy(b + 8, body, n);
	return (uint32_t)(8 + n);
}

static uint32_t bin_get(uint8_t *b, uint8_t op, const char *key, uint8_t extras)
{
	uint8_t h[24 + 300] = {0x80, op};
	size_t kl = strlen(key);

	h[2] = (uint8_t)(kl >> 8);
	h[3] = (uint8_t)kl;
	h[4] = extras;
	h[11] = (uint8_t)(kl + extras);
	memset(h + 24, 'e', extras);
	memcpy(h + 24 + extras, key, kl);
	return dgram(b, 0, 1, h, 24 + extras + kl);
}

/* The fast lane's matcher (mc_match_single_get): the shapes it takes, the ones it leaves to
 * the full parser, and on random and mutated datagrams never a match the parse disagrees with. */
static void test_single_get(void **state)
{
	(void)state;
	static const char *yes[] = {
		"get foo\r\n", "mg foo\r\n", "mg foo v\r\n", "mg foo v f t\r\n", "mg foo s v k\r\n",
		("get \x80\xff" "key\r\n"),
	};
	static const char *no[] = {
		"get foo bar\r\n", "get foo\n", "get foo\r\nget bar\r\n", "gets foo\r\n",
		"mg foo q v\r\n", "mg Zm9v b v\r\n", "mg foo v Oabc\r\n", "get \r\n", "get  foo\r\n",
		"set foo 0 0 1\r\nx\r\n", "mg foo v\r\nmn\r\n", "delete foo\r\n", "version\r\n",
		"get fo\x7fo\r\n", "mg foo 1v\r\n",
	};
	uint8_t b[2048];
	uint16_t off, len;
	uint32_t n;

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		n = dgram(b, 0, 1, yes[i], strlen(yes[i]));
		assert_true(single_get(b, n));
		/* Another datagram of several, or not the first: never. */
		n = dgram(b, 1, 2, yes[i], strlen(yes[i]));
		assert_false(mc_match_single_get(b, n, &off, &len));
		n = dgram(b, 0, 2, yes[i], strlen(yes[i]));
		assert_false(mc_match_single_get(b, n, &off, &len));
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		n = dgram(b, 0, 1, no[i], strlen(no[i]));
		assert_false(single_get(b, n));
	}
	/* Key length limits: 250 bytes pass, 251 go to the full parser (its error). */
	char big[300] = "get ";
	memset(big + 4, 'k', 250);
	memcpy(big + 254, "\r\n", 3);
	assert_true(single_get(b, dgram(b, 0, 1, big, strlen(big))));
	memset(big + 4, 'k', 251);
	memcpy(big + 255, "\r\n", 3);
	assert_false(single_get(b, dgram(b, 0, 1, big, strlen(big))));
	/* Binary: GET and GETK; not the quiet ones, not with extras, not GAT. */
	assert_true(single_get(b, bin_get(b, MC_BIN_GET, "foo", 0)));
	assert_true(single_get(b, bin_get(b, MC_BIN_GETK, "foo", 0)));
	assert_false(single_get(b, bin_get(b, MC_BIN_GETQ, "foo", 0)));
	assert_false(single_get(b, bin_get(b, MC_BIN_GETKQ, "foo", 0)));
	assert_false(single_get(b, bin_get(b, MC_BIN_GAT, "foo", 4)));
	assert_false(single_get(b, bin_get(b, MC_BIN_GET, "", 0)));
	n = bin_get(b, MC_BIN_GET, "foo", 0);
	b[n++] = 'x'; /* the body is not the key */
	assert_false(single_get(b, n));
	/* Random and mutated datagrams: a match always agrees with the full parse; the
	 * unmutated shapes match. */
	uint64_t x = 0x9e3779b97f4a7c15ull;
	static const char *base[] = {"get foo\r\n", "mg some:key v f t\r\n", "mg k\r\n"};
	unsigned matched = 0;

	for (int it = 0; it < 200000; it++) {
		const char *s = base[it % 3];

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		n = dgram(b, 0, 1, s, strlen(s));
		if (it % 7 == 3)
			n = bin_get(b, (x & 1) ? MC_BIN_GET : MC_BIN_GETK, "binkey", 0);
		for (int m = (int)(x >> 60) % 4; m > 0; m--) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			b[(x >> 8) % n] = (uint8_t)(x >> 32);
			if ((x >> 40) % 5 == 0)
				n = n - (n > 9);
			else if ((x >> 40) % 5 == 1 && n < sizeof(b))
				b[n++] = (uint8_t)(x >> 48);
		}
		matched += single_get(b, n);
	}
	assert_true(matched > 200000 / 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame_roundtrip),
		cmocka_unit_test(test_datagram_rules),
		cmocka_unit_test(test_key_check),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_single_get),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
