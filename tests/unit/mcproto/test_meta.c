/* SPDX-License-Identifier: BSD-3-Clause */
/* Meta text requests: mg ms md ma mn me, flags, `b` base64 keys, `O` opaque, `q` quiet,
 * pipelines (protocol.txt "Meta Commands", memcached 1.6). */
#include "mc_test.h"

static struct mc_requests r;

static void test_mg(void **state)
{
	(void)state;
	const char s[] = "mg foo v f t k O123 q\r\n";
	assert_int_equal(PARSE(s, &r), MC_OK);
	assert_int_equal(r.proto, MC_PROTO_META);
	assert_int_equal(r.req[0].proto, MC_PROTO_META);
	assert_int_equal(r.req[0].cmd, MC_CMD_MG);
	assert_int_equal(r.req[0].kind, MC_KIND_READ);
	assert_key(s, &r, 0, "foo");
	assert_int_equal(r.keys[0].base64, 0);
	assert_true(r.req[0].flags & MC_REQ_F_QUIET);
	assert_true(r.req[0].flags & MC_REQ_F_KEY_IN_REPLY);
	assert_true(r.req[0].flags & MC_REQ_F_OPAQUE);
	assert_false(r.req[0].flags & MC_REQ_F_BASE64);
	assert_int_equal(r.req[0].opaque_len, 3);
	assert_memory_equal(s + r.req[0].opaque_off, "123", 3);
	/* args: the flag tokens, for a router that rebuilds the request. */
	assert_int_equal(r.req[0].args_len, strlen("v f t k O123 q"));
	assert_memory_equal(s + r.req[0].args_off, "v f t k O123 q", r.req[0].args_len);
	assert_int_equal(r.req[0].len, sizeof(s) - 1);

	assert_int_equal(PARSE("mg foo\r\n", &r), MC_OK);
	assert_int_equal(r.req[0].flags, 0);
	assert_int_equal(r.req[0].args_len, 0);
	/* Token-carrying flags of every kind, and the ignored P / L proxy hints. */
	assert_int_equal(PARSE("mg foo N30 R10 T60 E99 Ppath/ Lx s h l u\r\n", &r), MC_OK);
}

static void test_mg_errors(void **state)
{
	(void)state;
	char buf[400];
	char key[252];

	assert_int_equal(PARSE("mg\r\n", &r), MC_E_KEY_MISSING);
	assert_int_equal(PARSE("mg foo 1\r\n", &r), MC_E_META_BAD_FLAG);
	assert_int_equal(PARSE("mg foo -v\r\n", &r), MC_E_META_BAD_FLAG);
	assert_int_equal(PARSE("mg foo v\x01\r\n", &r), MC_E_META_BAD_FLAG);
	assert_int_equal(PARSE("mg foo v", &r), MC_E_LINE_UNTERMINATED);
	assert_int_equal(PARSE("mg f\x02o v\r\n", &r), MC_E_KEY_BAD_CHAR);
	/* O tokens up to 32 bytes with the O, as memcached counts them (1.6.18 answers a 32-byte
	 * value with CLIENT_ERROR opaque token too long, seen in e2e-multiget-random). */
	assert_int_equal(PARSE("mg foo O1234567890123456789012345678901\r\n", &r), MC_OK);
	assert_int_equal(r.req[0].opaque_len, 31);
	assert_int_equal(PARSE("mg foo O12345678901234567890123456789012\r\n", &r),
			 MC_E_META_OPAQUE_TOO_LONG);
	/* Key length limits as for classic commands. */
	memset(key, 'x', sizeof(key));
	key[250] = '\0';
	snprintf(buf, sizeof(buf), "mg %s v\r\n", key);
	assert_int_equal(parse_str(buf, &r), MC_OK);
	assert_int_equal(r.keys[0].len, 250);
	key[250] = 'x';
	key[251] = '\0';
	snprintf(buf, sizeof(buf), "mg %s v\r\n", key);
	assert_int_equal(parse_str(buf, &r), MC_E_KEY_TOO_LONG);
}

static void test_base64_key(void **state)
{
	(void)state;
	uint8_t out[MC_KEY_MAX];
	const char s[] = "mg YmluAWtleQ== b v k\r\n"; /* "bin\x01key" */

	assert_int_equal(PARSE(s, &r), MC_OK);
	assert_true(r.req[0].flags & MC_REQ_F_BASE64);
	assert_int_equal(r.keys[0].base64, 1);
	assert_key(s, &r, 0, "YmluAWtleQ==");
	assert_int_equal(mc_key_decode((const uint8_t *)s, &r.keys[0], out), 7);
	assert_memory_equal(out, "bin\x01key", 7);

	/* Plain keys decode to themselves. */
	assert_int_equal(PARSE("mg plain v\r\n", &r), MC_OK);
	assert_int_equal(mc_key_decode((const uint8_t *)"mg plain v\r\n", &r.keys[0], out), 5);
	assert_memory_equal(out, "plain", 5);

	/* One and two padding characters, no padding. */
	assert_int_equal(PARSE("mg Zm9vYg== b\r\n", &r), MC_OK);
	assert_int_equal(mc_key_decode((const uint8_t *)"mg Zm9vYg== b\r\n", &r.keys[0], out), 4);
	assert_memory_equal(out, "foob", 4);
	assert_int_equal(PARSE("mg Zm9vYmE= b\r\n", &r), MC_OK);
	assert_int_equal(PARSE("mg Zm9vYmFy b\r\n", &r), MC_OK);
	assert_int_equal(mc_key_decode((const uint8_t *)"mg Zm9vYmFy b\r\n", &r.keys[0], out), 6);
	assert_memory_equal(out, "foobar", 6);
	/* The b flag may come anywhere among the flags. */
	assert_int_equal(PARSE("md Zm9v q b\r\n", &r), MC_OK);
	assert_int_equal(r.keys[0].base64, 1);

	/* Invalid base64 is refused, never guessed at. */
	assert_int_equal(PARSE("mg Zm9 b\r\n", &r), MC_E_META_BAD_BASE64);
	assert_int_equal(PARSE("mg Zm9v! b\r\n", &r), MC_E_META_BAD_BASE64);
	assert_int_equal(PARSE("mg Zm9*Zm9v b\r\n", &r), MC_E_META_BAD_BASE64);
	assert_int_equal(PARSE("mg Zg==Zm9v b\r\n", &r), MC_E_META_BAD_BASE64);
	assert_int_equal(PARSE("mg Z=== b\r\n", &r), MC_E_META_BAD_BASE64);
	assert_int_equal(PARSE("mg ==== b\r\n", &r), MC_E_META_BAD_BASE64);
	assert_int_equal(PARSE("mg Zm=v b\r\n", &r), MC_E_META_BAD_BASE64);
}

static void test_ms(void **state)
{
	(void)state;
	const char s[] = "ms foo 3 T90 F5 I\r\nbar\r\n";
	assert_int_equal(PARSE(s, &r), MC_OK);
	assert_int_equal(r.req[0].cmd, MC_CMD_MS);
	assert_int_equal(r.req[0].kind, MC_KIND_WRITE);
	assert_true(r.req[0].flags & MC_REQ_F_VALUE);
	assert_int_equal(r.req[0].data_len, 3);
	assert_memory_equal(s + r.req[0].data_off, "bar", 3);
	assert_int_equal(r.req[0].line_len, strlen("ms foo 3 T90 F5 I\r\n"));
	assert_int_equal(r.req[0].len, sizeof(s) - 1);
	assert_memory_equal(s + r.req[0].args_off, "T90 F5 I", r.req[0].args_len);

	assert_int_equal(PARSE("ms foo 2 q b\r\nhi\r\n", &r), MC_E_META_BAD_BASE64);
	assert_int_equal(PARSE("ms Zm9v 2 q b MA\r\nhi\r\n", &r), MC_OK);
	assert_true(r.req[0].flags & MC_REQ_F_QUIET);
	assert_int_equal(PARSE("ms foo 0\r\n\r\n", &r), MC_OK);
	assert_int_equal(r.req[0].data_len, 0);
	assert_int_equal(PARSE("ms foo\r\nhi\r\n", &r), MC_E_BAD_ARGUMENTS);
	assert_int_equal(PARSE("ms foo T0\r\nhi\r\n", &r), MC_E_BAD_NUMBER);
	assert_int_equal(PARSE("ms foo 3\r\nhi\r\n", &r), MC_E_DATA_TRUNCATED);
	assert_int_equal(PARSE("ms foo 1\r\nhi\r\n", &r), MC_E_DATA_BAD_END);
	assert_int_equal(PARSE("ms foo 2\r\nhi\n\n", &r), MC_E_DATA_BAD_END);
}

static void test_md_ma_me_mn(void **state)
{
	(void)state;
	assert_int_equal(PARSE("md foo q I T30 C123\r\n", &r), MC_OK);
	assert_int_equal(r.req[0].cmd, MC_CMD_MD);
	assert_int_equal(r.req[0].kind, MC_KIND_DELETE);
	assert_true(r.req[0].flags & MC_REQ_F_QUIET);

	assert_int_equal(PARSE("ma foo v MD D10 N0 J5\r\n", &r), MC_OK);
	assert_int_equal(r.req[0].cmd, MC_CMD_MA);
	assert_int_equal(r.req[0].kind, MC_KIND_ARITH);
	assert_int_equal(PARSE("ma\r\n", &r), MC_E_KEY_MISSING);

	assert_int_equal(PARSE("me foo\r\n", &r), MC_OK);
	assert_int_equal(r.req[0].cmd, MC_CMD_ME);
	assert_int_equal(r.req[0].kind, MC_KIND_READ);
	assert_int_equal(r.nkeys, 1);
	assert_int_equal(PARSE("me Zm9v b\r\n", &r), MC_OK);
	assert_int_equal(r.keys[0].base64, 1);
	assert_int_equal(PARSE("me foo v\r\n", &r), MC_E_META_BAD_FLAG);

	assert_int_equal(PARSE("mn\r\n", &r), MC_OK);
	assert_int_equal(r.req[0].cmd, MC_CMD_MN);
	assert_int_equal(r.req[0].kind, MC_KIND_KEYLESS);
	assert_int_equal(r.nkeys, 0);
	assert_int_equal(PARSE("mn foo\r\n", &r), MC_E_BAD_ARGUMENTS);
	/* Two-letter words that are not meta commands. */
	assert_int_equal(PARSE("mx foo\r\n", &r), MC_E_UNKNOWN_COMMAND);
	assert_int_equal(PARSE("MG foo\r\n", &r), MC_E_UNKNOWN_COMMAND);
}

static void test_pipeline(void **state)
{
	(void)state;
	const char s[] = "mg a v q k\r\nmg Yg== b v q\r\nms c 1 q\r\nx\r\nmg d v q O9\r\nmn\r\n";
	uint8_t out[MC_KEY_MAX];

	assert_int_equal(PARSE(s, &r), MC_OK);
	assert_int_equal(r.nreq, 5);
	assert_int_equal(r.nkeys, 4);
	const enum mc_cmd want[] = {MC_CMD_MG, MC_CMD_MG, MC_CMD_MS, MC_CMD_MG, MC_CMD_MN};
	uint32_t pos = 0;
	for (int i = 0; i < 5; i++) {
		assert_int_equal(r.req[i].cmd, want[i]);
		assert_int_equal(r.req[i].off, pos);
		pos += r.req[i].len;
		if (i < 4) {
			assert_true(r.req[i].flags & MC_REQ_F_QUIET);
			assert_int_equal(r.req[i].key_count, 1);
			assert_int_equal(r.req[i].key_first, i);
			assert_int_equal(r.keys[i].req, i);
		}
	}
	assert_int_equal(pos, sizeof(s) - 1);
	assert_int_equal(mc_key_decode((const uint8_t *)s, &r.keys[1], out), 1);
	assert_int_equal(out[0], 'b');
	assert_key(s, &r, 2, "c");
	assert_int_equal(r.req[3].opaque_len, 1);
	assert_int_equal(s[r.req[3].opaque_off], '9');

	/* Classic and meta mix in one datagram, as memcached allows on one connection. */
	assert_int_equal(PARSE("get a b\r\nmg c v\r\n", &r), MC_OK);
	assert_int_equal(r.proto, MC_PROTO_ASCII);
	assert_int_equal(r.req[1].proto, MC_PROTO_META);
	assert_int_equal(r.keys[2].req, 1);
	/* A bad request late in the pipeline fails the datagram and says where. */
	const char bad[] = "mg a v\r\nmg b v\r\nmg c 7\r\nmn\r\n";
	assert_int_equal(PARSE(bad, &r), MC_E_META_BAD_FLAG);
	assert_int_equal(r.err_off, 16);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mg),
		cmocka_unit_test(test_mg_errors),
		cmocka_unit_test(test_base64_key),
		cmocka_unit_test(test_ms),
		cmocka_unit_test(test_md_ma_me_mn),
		cmocka_unit_test(test_pipeline),
	};
	/* clang-format on */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
