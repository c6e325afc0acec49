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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame_roundtrip),
		cmocka_unit_test(test_datagram_rules),
		cmocka_unit_test(test_key_check),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
