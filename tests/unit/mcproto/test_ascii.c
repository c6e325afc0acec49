/* SPDX-License-Identifier: BSD-3-Clause */
/* Classic text requests: retrieval, storage with data blocks, delete, arithmetic, touch,
 * keyless commands, key rules, line endings and pipelines (protocol.txt, memcached 1.6). */
#include "mc_test.h"

static struct mc_requests r;

static void test_get_one_key(void **state)
{
	(void)state;
	const char s[] = "get foo\r\n";
	assert_int_equal(PARSE(s, &r), MC_OK);
	assert_int_equal(r.nreq, 1);
	assert_int_equal(r.nkeys, 1);
	assert_int_equal(r.proto, MC_PROTO_ASCII);
	assert_int_equal(r.req[0].cmd, MC_CMD_GET);
	assert_int_equal(r.req[0].kind, MC_KIND_READ);
	assert_int_equal(r.req[0].proto, MC_PROTO_ASCII);
	assert_int_equal(r.req[0].off, 0);
	assert_int_equal(r.req[0].len, sizeof(s) - 1);
	assert_int_equal(r.req[0].line_len, sizeof(s) - 1);
	assert_int_equal(r.req[0].flags, 0);
	assert_int_equal(r.req[0].key_first, 0);
	assert_int_equal(r.req[0].key_count, 1);
	assert_int_equal(r.keys[0].off, 4);
	assert_int_equal(r.keys[0].req, 0);
	assert_key(s, &r, 0, "foo");
}

static void test_get_many_keys_extra_spaces(void **state)
{
	(void)state;
	const char s[] = "  get   a  bb ccc    \r\n";
	assert_int_equal(PARSE(s, &r), MC_OK);
	assert_int_equal(r.req[0].cmd, MC_CMD_GET);
	assert_int_equal(r.req[0].off, 2); /* the command name */
	assert_int_equal(r.nkeys, 3);
	assert_key(s, &r, 0, "a");
	assert_key(s, &r, 1, "bb");
	assert_key(s, &r, 2, "ccc");
	assert_int_equal(r.req[0].len, sizeof(s) - 1 - 2);
}

static void test_gets_gat_gats(void **state)
{
	(void)state;
	const char gets[] = "gets k1 k2\r\n";
	assert_int_equal(PARSE(gets, &r), MC_OK);
	assert_int_equal(r.req[0].cmd, MC_CMD_GETS);
	assert_int_equal(r.nkeys, 2);

	const char gat[] = "gat 300 k1 k2 k3\r\n";
	assert_int_equal(PARSE(gat, &r), MC_OK);
	assert_int_equal(r.req[0].cmd, MC_CMD_GAT);
	assert_int_equal(r.req[0].kind, MC_KIND_READ);
	assert_int_equal(r.nkeys, 3);
	assert_key(gat, &r, 0, "k1");
	assert_int_equal(r.req[0].args_len, 3);
	assert_memory_equal(gat + r.req[0].args_off, "300", 3);

	assert_int_equal(PARSE("gats -1 k\r\n", &r), MC_OK);
	assert_int_equal(r.req[0].cmd, MC_CMD_GATS);
	assert_int_equal(PARSE("gat 10\r\n", &r), MC_E_KEY_MISSING);
	assert_int_equal(PARSE("gat\r\n", &r), MC_E_BAD_ARGUMENTS);
	assert_int_equal(PARSE("gat ten k\r\n", &r), MC_E_BAD_NUMBER);
	assert_int_equal(PARSE("gat 2147483648 k\r\n", &r), MC_E_BAD_NUMBER);
	assert_int_equal(PARSE("gat -2147483648 k\r\n", &r), MC_OK);
}

static void test_get_errors(void **state)
{
	(void)state;
	assert_int_equal(PARSE("get\r\n", &r), MC_E_KEY_MISSING);
	assert_int_equal(PARSE("get    \r\n", &r), MC_E_KEY_MISSING);
	assert_int_equal(PARSE("get foo", &r), MC_E_LINE_UNTERMINATED);
	assert_int_equal(PARSE("get foo\r", &r), MC_E_LINE_UNTERMINATED);
	/* A bare "\n" ends a line, as in memcached. */
	assert_int_equal(PARSE("get foo\n", &r), MC_OK);
	assert_int_equal(r.req[0].len, 8);
	assert_key("get foo\n", &r, 0, "foo");
	/* "\r" not right before "\n" stays in the token: a control character in the key. */
	assert_int_equal(PARSE("get foo\r \n", &r), MC_E_KEY_BAD_CHAR);
	assert_int_equal(PARSE("get foo\r\r\n", &r), MC_E_KEY_BAD_CHAR);
	assert_int_equal(PARSE("get fo\to\r\n", &r), MC_E_KEY_BAD_CHAR);
	assert_int_equal(PARSE("get a\x7f\r\n", &r), MC_E_KEY_BAD_CHAR);
	assert_int_equal(PARSE("get a\0b\r\n", &r), MC_E_KEY_BAD_CHAR);
	/* Commands are case-sensitive. */
	assert_int_equal(PARSE("GET foo\r\n", &r), MC_E_UNKNOWN_COMMAND);
	assert_int_equal(PARSE("\r\n", &r), MC_E_UNKNOWN_COMMAND);
	assert_int_equal(PARSE("   \r\n", &r), MC_E_UNKNOWN_COMMAND);
	assert_int_equal(PARSE("bogus foo\r\n", &r), MC_E_UNKNOWN_COMMAND);
	assert_int_equal(PARSE("", &r), MC_E_EMPTY);
}

/*
 * memcaslap's keys start with bytes 0x10: memcached stores them (it splits on spaces only),
 * so a router that must be transparent to it parses them with MC_PARSE_CTL_KEYS.
 */
static void test_control_keys_as_memcached(void **state)
{
	(void)state;
	static const char get[] = "get \x10\x10\x10\x10\x10\x10\x10\x10"
				  "abc k2\r\n";
	static const char set[] = "set \x10\x01\x7fz 0 0 1 noreply\r\nx\r\n";
	static const char mg[] = "mg a\x10"
				 "b v\r\n";

	assert_int_equal(mc_parse_requests((const uint8_t *)get, sizeof(get) - 1, &r),
			 MC_E_KEY_BAD_CHAR);
	assert_int_equal(mc_parse_requests_flags((const uint8_t *)get, sizeof(get) - 1,
						 MC_PARSE_CTL_KEYS, &r),
			 MC_OK);
	assert_int_equal(r.nkeys, 2);
	assert_int_equal(r.keys[0].off, 4);
	assert_int_equal(r.keys[0].len, 11);
	assert_key(get, &r, 1, "k2");
	assert_int_equal(mc_parse_requests_flags((const uint8_t *)set, sizeof(set) - 1,
						 MC_PARSE_CTL_KEYS, &r),
			 MC_OK);
	assert_int_equal(r.keys[0].len, 4);
	assert_int_equal(
		mc_parse_requests_flags((const uint8_t *)mg, sizeof(mg) - 1, MC_PARSE_CTL_KEYS, &r),
		MC_OK);
	assert_int_equal(r.keys[0].len, 3);
	/* Spaces still split keys and length limits still hold. */
	char big[300];
	int n = snprintf(big, sizeof(big), "get \x10%0250d\r\n", 0);
	assert_int_equal(
		mc_parse_requests_flags((const uint8_t *)big, (size_t)n, MC_PARSE_CTL_KEYS, &r),
		MC_E_KEY_TOO_LONG);
}

static void test_key_length_limits(void **state)
{
	(void)state;
	char buf[300];
	char key[252];

	memset(key, 'k', sizeof(key));
	key[250] = '\0';
	snprintf(buf, sizeof(buf), "get %s\r\n", key);
	assert_int_equal(parse_str(buf, &r), MC_OK);
	assert_int_equal(r.keys[0].len, 250);
	key[250] = 'k';
	key[251] = '\0';
	snprintf(buf, sizeof(buf), "get %s\r\n", key);
	assert_int_equal(parse_str(buf, &r), MC_E_KEY_TOO_LONG);
	snprintf(buf, sizeof(buf), "set %s 0 0 1\r\nx\r\n", key);
	assert_int_equal(parse_str(buf, &r), MC_E_KEY_TOO_LONG);
	/* Bytes above 0x7f (UTF-8) are allowed. */
	assert_int_equal(PARSE("get caf\xc3\xa9\r\n", &r), MC_OK);
	assert_int_equal(r.keys[0].len, 5);
}

/* Every byte value at every position of a 16-byte key, among plain and high-bit bytes: the
 * parser's word-at-a-time scan must agree with the byte rule of mc_key_check(). */
static void test_key_bytes_everywhere(void **state)
{
	(void)state;
	static const uint8_t fills[] = {'a', 0xc3, 0x80, 0xff, 0x7e, 0x21};
	uint8_t buf[32];

	for (size_t f = 0; f < sizeof(fills); f++)
		for (unsigned c = 0; c < 256; c++) {
			if (c == ' ' || c == '\n')
				continue;
			for (int j = 0; j < 16; j++) {
				memcpy(buf, "get ", 4);
				memset(buf + 4, fills[f], 16);
				buf[4 + j] = (uint8_t)c;
				memcpy(buf + 20, "\r\n", 2);
				bool bad = c < 0x20 || c == 0x7f;
				enum mc_err e = mc_parse_requests(buf, 22, &r);
				assert_int_equal(e, bad ? MC_E_KEY_BAD_CHAR : MC_OK);
				assert_int_equal(mc_key_check(buf + 4, 16), e);
				if (!bad)
					assert_int_equal(r.keys[0].len, 16);
			}
		}
}

static void test_key_count_limit(void **state)
{
	(void)state;
	static char buf[8192];
	size_t n = (size_t)snprintf(buf, sizeof(buf), "get");

	for (int i = 0; i < MC_MAX_KEYS; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, " k%d", i);
	snprintf(buf + n, sizeof(buf) - n, "\r\n");
	assert_int_equal(parse_str(buf, &r), MC_OK);
	assert_int_equal(r.nkeys, MC_MAX_KEYS);
	assert_int_equal(r.req[0].key_count, MC_MAX_KEYS);
	assert_key(buf, &r, MC_MAX_KEYS - 1, "k255");
	snprintf(buf + n, sizeof(buf) - n, " one_more\r\n");
	assert_int_equal(parse_str(buf, &r), MC_E_TOO_MANY_KEYS);
}

static void test_set_and_friends(void **state)
{
	(void)state;
	const char s[] = "set foo 5 0 3\r\nbar\r\n";
	assert_int_equal(PARSE(s, &r), MC_OK);
	assert_int_equal(r.req[0].cmd, MC_CMD_SET);
	assert_int_equal(r.req[0].kind, MC_KIND_WRITE);
	assert_true(r.req[0].flags & MC_REQ_F_VALUE);
	assert_false(r.req[0].flags & MC_REQ_F_QUIET);
	assert_int_equal(r.req[0].line_len, 15);
	assert_int_equal(r.req[0].data_off, 15);
	assert_int_equal(r.req[0].data_len, 3);
	assert_memory_equal(s + r.req[0].data_off, "bar", 3);
	assert_int_equal(r.req[0].len, sizeof(s) - 1);
	assert_key(s, &r, 0, "foo");

	static const struct {
		const char *name;
		enum mc_cmd cmd;
	} cmds[] = {{"add", MC_CMD_ADD},
		    {"replace", MC_CMD_REPLACE},
		    {"append", MC_CMD_APPEND},
		    {"prepend", MC_CMD_PREPEND}};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char buf[64];
		snprintf(buf, sizeof(buf), "%s k 1 2 4 noreply\r\nab\r\n\r\n", cmds[i].name);
		assert_int_equal(parse_str(buf, &r), MC_OK);
		assert_int_equal(r.req[0].cmd, cmds[i].cmd);
		assert_int_equal(r.req[0].kind, MC_KIND_WRITE);
		assert_true(r.req[0].flags & MC_REQ_F_QUIET);
		assert_int_equal(r.req[0].data_len, 4);
		assert_memory_equal(buf + r.req[0].data_off, "ab\r\n", 4);
	}
}

static void test_set_data_block(void **state)
{
	(void)state;
	/* Empty value, value holding "\r\n", exptime negative, flags at 2^32-1. */
	assert_int_equal(PARSE("set k 0 0 0\r\n\r\n", &r), MC_OK);
	assert_int_equal(r.req[0].data_len, 0);
	assert_int_equal(PARSE("set k 0 0 4\r\n\r\n\r\n\r\n", &r), MC_OK);
	assert_int_equal(r.req[0].data_len, 4);
	assert_int_equal(PARSE("set k 4294967295 -1 1\r\nx\r\n", &r), MC_OK);
	/* <bytes> off by one either way. */
	/* One too many: the block runs into its own "\r\n", one byte is missing. */
	assert_int_equal(PARSE("set k 0 0 4\r\nbar\r\n", &r), MC_E_DATA_TRUNCATED);
	assert_int_equal(PARSE("set k 0 0 4\r\nbar\r\nX", &r), MC_E_DATA_BAD_END);
	/* One too few: "r" sits where "\r" must be. */
	assert_int_equal(PARSE("set k 0 0 2\r\nbar\r\n", &r), MC_E_DATA_BAD_END);
	assert_int_equal(PARSE("set k 0 0 5\r\nbar\r\n", &r), MC_E_DATA_TRUNCATED);
	assert_int_equal(PARSE("set k 0 0 3\r\nbar", &r), MC_E_DATA_TRUNCATED);
	assert_int_equal(PARSE("set k 0 0 3\r\nbar\r", &r), MC_E_DATA_TRUNCATED);
	assert_int_equal(PARSE("set k 0 0 3\r\nbar\n", &r), MC_E_DATA_TRUNCATED);
	assert_int_equal(PARSE("set k 0 0 3\r\nbar\nx", &r), MC_E_DATA_BAD_END);
	assert_int_equal(PARSE("set k 0 0 3\r\n", &r), MC_E_DATA_TRUNCATED);
	assert_int_equal(PARSE("set k 0 0 99999999999\r\nx\r\n", &r), MC_E_BAD_NUMBER);
	/* Numbers and argument counts. */
	assert_int_equal(PARSE("set k x 0 1\r\nx\r\n", &r), MC_E_BAD_NUMBER);
	assert_int_equal(PARSE("set k 4294967296 0 1\r\nx\r\n", &r), MC_E_BAD_NUMBER);
	assert_int_equal(PARSE("set k 0 0 -1\r\nx\r\n", &r), MC_E_BAD_NUMBER);
	assert_int_equal(PARSE("set k 0 1x 1\r\nx\r\n", &r), MC_E_BAD_NUMBER);
	assert_int_equal(PARSE("set k 0 0\r\nx\r\n", &r), MC_E_BAD_ARGUMENTS);
	assert_int_equal(PARSE("set k 0 0 1 norepl\r\nx\r\n", &r), MC_E_BAD_ARGUMENTS);
	assert_int_equal(PARSE("set k 0 0 1 noreply x\r\nx\r\n", &r), MC_E_BAD_ARGUMENTS);
	assert_int_equal(PARSE("set\r\n", &r), MC_E_KEY_MISSING);
}

static void test_cas(void **state)
{
	(void)state;
	assert_int_equal(PARSE("cas k 0 0 1 12345\r\nx\r\n", &r), MC_OK);
	assert_int_equal(r.req[0].cmd, MC_CMD_CAS);
	assert_int_equal(r.req[0].kind, MC_KIND_WRITE);
	assert_false(r.req[0].flags & MC_REQ_F_QUIET);
	assert_int_equal(PARSE("cas k 0 0 1 18446744073709551615 noreply\r\nx\r\n", &r), MC_OK);
	assert_true(r.req[0].flags & MC_REQ_F_QUIET);
	assert_int_equal(PARSE("cas k 0 0 1 18446744073709551616\r\nx\r\n", &r), MC_E_BAD_NUMBER);
	assert_int_equal(PARSE("cas k 0 0 1\r\nx\r\n", &r), MC_E_BAD_ARGUMENTS);
	assert_int_equal(PARSE("cas k 0 0 1 noreply\r\nx\r\n", &r), MC_E_BAD_NUMBER);
}

static void test_delete(void **state)
{
	(void)state;
	assert_int_equal(PARSE("delete k\r\n", &r), MC_OK);
	assert_int_equal(r.req[0].cmd, MC_CMD_DELETE);
	assert_int_equal(r.req[0].kind, MC_KIND_DELETE);
	assert_false(r.req[0].flags & MC_REQ_F_QUIET);
	assert_int_equal(PARSE("delete k noreply\r\n", &r), MC_OK);
	assert_true(r.req[0].flags & MC_REQ_F_QUIET);
	assert_int_equal(PARSE("delete k 0\r\n", &r), MC_OK);
	assert_int_equal(PARSE("delete k 0 noreply\r\n", &r), MC_OK);
	assert_true(r.req[0].flags & MC_REQ_F_QUIET);
	assert_int_equal(PARSE("delete k 5\r\n", &r), MC_E_BAD_ARGUMENTS);
	assert_int_equal(PARSE("delete k noreply 0\r\n", &r), MC_E_BAD_ARGUMENTS);
	assert_int_equal(PARSE("delete\r\n", &r), MC_E_KEY_MISSING);
}

static void test_incr_decr_touch(void **state)
{
	(void)state;
	assert_int_equal(PARSE("incr n 5\r\n", &r), MC_OK);
	assert_int_equal(r.req[0].cmd, MC_CMD_INCR);
	assert_int_equal(r.req[0].kind, MC_KIND_ARITH);
	assert_int_equal(PARSE("decr n 18446744073709551615 noreply\r\n", &r), MC_OK);
	assert_int_equal(r.req[0].cmd, MC_CMD_DECR);
	assert_true(r.req[0].flags & MC_REQ_F_QUIET);
	assert_int_equal(PARSE("incr n 18446744073709551616\r\n", &r), MC_E_BAD_NUMBER);
	assert_int_equal(PARSE("incr n -1\r\n", &r), MC_E_BAD_NUMBER);
	assert_int_equal(PARSE("incr n\r\n", &r), MC_E_BAD_ARGUMENTS);
	assert_int_equal(PARSE("incr\r\n", &r), MC_E_KEY_MISSING);
	assert_int_equal(PARSE("touch k 10\r\n", &r), MC_OK);
	assert_int_equal(r.req[0].cmd, MC_CMD_TOUCH);
	assert_int_equal(r.req[0].kind, MC_KIND_TOUCH);
	assert_int_equal(PARSE("touch k -1 noreply\r\n", &r), MC_OK);
	assert_true(r.req[0].flags & MC_REQ_F_QUIET);
	assert_int_equal(PARSE("touch k soon\r\n", &r), MC_E_BAD_NUMBER);
	assert_int_equal(PARSE("touch k 1 2\r\n", &r), MC_E_BAD_ARGUMENTS);
}

static void test_keyless(void **state)
{
	(void)state;
	static const struct {
		const char *line;
		enum mc_cmd cmd;
		bool quiet;
	} cases[] = {
		{"version\r\n", MC_CMD_VERSION, false},
		{"verbosity 1\r\n", MC_CMD_VERBOSITY, false},
		{"verbosity 1 noreply\r\n", MC_CMD_VERBOSITY, true},
		{"stats\r\n", MC_CMD_STATS, false},
		{"stats items\r\n", MC_CMD_STATS, false},
		{"flush_all\r\n", MC_CMD_FLUSH_ALL, false},
		{"flush_all 10 noreply\r\n", MC_CMD_FLUSH_ALL, true},
		{"quit\r\n", MC_CMD_QUIT, false},
		{"shutdown graceful\r\n", MC_CMD_SHUTDOWN, false},
		{"cache_memlimit 100\r\n", MC_CMD_CACHE_MEMLIMIT, false},
		{"misbehave\r\n", MC_CMD_MISBEHAVE, false},
		{"lru_crawler metadump all\r\n", MC_CMD_LRU_CRAWLER, false},
		{"lru tune 10 25 0.1 2.0\r\n", MC_CMD_LRU, false},
		{"slabs automove 1\r\n", MC_CMD_SLABS, false},
		{"watch fetchers\r\n", MC_CMD_WATCH, false},
		{"extstore item_size 64\r\n", MC_CMD_EXTSTORE, false},
		{"debugtime 5\r\n", MC_CMD_DEBUGTIME, false},
		{"mn\r\n", MC_CMD_MN, false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(parse_str(cases[i].line, &r), MC_OK);
		assert_int_equal(r.req[0].cmd, cases[i].cmd);
		assert_int_equal(r.req[0].kind, MC_KIND_KEYLESS);
		assert_int_equal(r.req[0].key_count, 0);
		assert_int_equal(r.nkeys, 0);
		assert_int_equal(!!(r.req[0].flags & MC_REQ_F_QUIET), cases[i].quiet);
		/* The command's name is the word that starts the line. */
		const char *name = mc_cmd_name(r.req[0].cmd);
		assert_memory_equal(cases[i].line, name, strlen(name));
		assert_true(cases[i].line[strlen(name)] == ' ' ||
			    cases[i].line[strlen(name)] == '\r');
	}
	assert_int_equal(PARSE("stats slabs\r\n", &r), MC_OK);
	assert_int_equal(r.req[0].args_len, 5);
	assert_memory_equal(&"stats slabs"[r.req[0].args_off], "slabs", 5);
}

static void test_pipeline(void **state)
{
	(void)state;
	const char s[] =
		"get a b\r\nset c 0 0 1\r\nx\r\ndelete d noreply\r\nversion\r\nincr e 1\r\n";
	assert_int_equal(PARSE(s, &r), MC_OK);
	assert_int_equal(r.nreq, 5);
	assert_int_equal(r.nkeys, 5);
	const enum mc_cmd want[] = {MC_CMD_GET, MC_CMD_SET, MC_CMD_DELETE, MC_CMD_VERSION,
				    MC_CMD_INCR};
	uint32_t pos = 0;
	for (int i = 0; i < 5; i++) {
		assert_int_equal(r.req[i].cmd, want[i]);
		assert_int_equal(r.req[i].off, pos); /* requests tile the buffer */
		pos += r.req[i].len;
	}
	assert_int_equal(pos, sizeof(s) - 1);
	assert_int_equal(r.req[1].key_first, 2);
	assert_int_equal(r.keys[2].req, 1);
	assert_key(s, &r, 3, "d");
	assert_int_equal(r.keys[4].req, 4);
	assert_int_equal(r.req[3].key_count, 0);
	assert_int_equal(r.req[4].key_first, 4);

	/* An error in a later request names where it is. */
	const char bad[] = "get a\r\nget \x01\r\n";
	assert_int_equal(PARSE(bad, &r), MC_E_KEY_BAD_CHAR);
	assert_int_equal(r.err_off, 7);
	/* Binary after text is refused. */
	const char mixed[] = "get a\r\n\x80\x00\x00\x00";
	assert_int_equal(PARSE(mixed, &r), MC_E_MIXED_PROTOCOLS);
	assert_int_equal(r.err_off, 7);
}

static void test_request_count_limit(void **state)
{
	(void)state;
	static char buf[MC_MAX_REQUESTS * 8 + 16];
	size_t n = 0;

	for (int i = 0; i < MC_MAX_REQUESTS; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "get k\r\n");
	assert_int_equal(mc_parse_requests((uint8_t *)buf, n, &r), MC_OK);
	assert_int_equal(r.nreq, MC_MAX_REQUESTS);
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "mn\r\n");
	assert_int_equal(mc_parse_requests((uint8_t *)buf, n, &r), MC_E_TOO_MANY_REQUESTS);
}

/* A datagram parsed (the commonest shapes take a shorter way: parse_fast, the lone binary
 * GET) and its body parsed by the general request parser: the same result, field for field,
 * offsets shifted by the frame header, whatever the shape. The dataplane places and forwards
 * by the datagram parse, so a shortcut that differed would misplace or mangle a request. */
static void assert_same_parse(const uint8_t *body, size_t blen)
{
	uint8_t d[512];
	struct mc_requests *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	const struct mc_frame f = {7, 0, 1, 0};
	const uint32_t h = MC_FRAME_HDR_LEN;
	enum mc_err ea, eb;

	assert_non_null(a);
	assert_non_null(b);
	assert_true(blen + h <= sizeof(d));
	mc_frame_write(d, &f);
	memcpy(d + h, body, blen);
	ea = mc_parse_datagram_flags(d, blen + h, MC_PARSE_CTL_KEYS, a);
	eb = blen == 0 ? MC_E_EMPTY : mc_parse_requests_flags(body, blen, MC_PARSE_CTL_KEYS, b);
	assert_int_equal(ea, eb);
	if (ea == MC_OK) {
		assert_int_equal(a->nreq, b->nreq);
		assert_int_equal(a->nkeys, b->nkeys);
		assert_int_equal(a->proto, b->proto);
		for (unsigned i = 0; i < a->nreq; i++) {
			const struct mc_request *x = &a->req[i], *y = &b->req[i];
			bool text = x->proto != MC_PROTO_BINARY;

			assert_int_equal(x->off, y->off + h);
			assert_int_equal(x->len, y->len);
			assert_int_equal(x->line_len, y->line_len);
			if (x->flags & MC_REQ_F_VALUE)
				assert_int_equal(x->data_off, y->data_off + h);
			assert_int_equal(x->data_len, y->data_len);
			if (x->args_len != 0 || y->args_len != 0)
				assert_int_equal(x->args_off, y->args_off + h);
			assert_int_equal(x->args_len, y->args_len);
			if (!text)
				assert_int_equal(x->opaque, y->opaque);
			assert_int_equal(x->opaque_len, y->opaque_len);
			assert_int_equal(x->proto, y->proto);
			assert_int_equal(x->cmd, y->cmd);
			assert_int_equal(x->kind, y->kind);
			assert_int_equal(x->flags, y->flags);
			assert_int_equal(x->opcode, y->opcode);
			assert_int_equal(x->key_first, y->key_first);
			assert_int_equal(x->key_count, y->key_count);
		}
		for (unsigned i = 0; i < a->nkeys; i++) {
			assert_int_equal(a->keys[i].off, b->keys[i].off + h);
			assert_int_equal(a->keys[i].len, b->keys[i].len);
			assert_int_equal(a->keys[i].req, b->keys[i].req);
			assert_int_equal(a->keys[i].base64, b->keys[i].base64);
		}
	} else {
		assert_int_equal(a->err_off, b->err_off + h);
	}
	free(a);
	free(b);
}

static void test_datagram_shortcuts_agree(void **state)
{
	static const char *const bodies[] = {
		"get foo\r\n",
		"get foo bar\r\n",
		"get foo\r\nget bar\r\n",
		"get fo\x01o\r\n",
		"get foo\n",
		"get foo \r\n",
		"gets foo\r\n",
		"mg foo\r\n",
		"mg foo v f t\r\n",
		"mg foo v\nf\r\n",
		"mg Zm9v b v\r\n",
		"mg foo q k O123\r\n",
		"mg foo v 1x\r\n",
		"ma foo\r\n",
		"mn\r\n",
		"set foo 0 0 1\r\nx\r\n",
		"get \r\n",
		"get\r\n",
		"version\r\n",
		"",
	};
	/* Binary: a lone GET (the shortcut), GETK, a GET with extras or a value (refused the
	 * same way), and two GETs in one datagram. */
	uint8_t bin[2 * (24 + 5)] = {0};
	const uint8_t ops[] = {0x00, 0x0c, 0x09, 0x01};

	(void)state;
	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++)
		assert_same_parse((const uint8_t *)bodies[i], strlen(bodies[i]));
	for (size_t i = 0; i < sizeof(ops); i++) {
		for (int two = 0; two < 2; two++) {
			for (int j = 0; j <= two; j++) {
				uint8_t *h = bin + j * (24 + 5);

				memset(h, 0, 24);
				h[0] = 0x80; /* request magic */
				h[1] = ops[i];
				h[3] = 5;     /* key length */
				h[11] = 5;    /* total body */
				h[15] = 0x2a; /* opaque */
				memcpy(h + 24, "hello", 5);
			}
			assert_same_parse(bin, (size_t)(two + 1) * (24 + 5));
			bin[4] = 1; /* extras length 1 (of the 5 body bytes) */
			assert_same_parse(bin, (size_t)(two + 1) * (24 + 5));
			for (size_t n = 0; n < 24 + 5; n++)
				assert_same_parse(bin, n); /* cut short */
		}
	}
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_one_key),
		cmocka_unit_test(test_get_many_keys_extra_spaces),
		cmocka_unit_test(test_gets_gat_gats),
		cmocka_unit_test(test_get_errors),
		cmocka_unit_test(test_key_length_limits),
		cmocka_unit_test(test_key_bytes_everywhere),
		cmocka_unit_test(test_key_count_limit),
		cmocka_unit_test(test_set_and_friends),
		cmocka_unit_test(test_set_data_block),
		cmocka_unit_test(test_cas),
		cmocka_unit_test(test_delete),
		cmocka_unit_test(test_incr_decr_touch),
		cmocka_unit_test(test_control_keys_as_memcached),
		cmocka_unit_test(test_keyless),
		cmocka_unit_test(test_pipeline),
		cmocka_unit_test(test_request_count_limit),
		cmocka_unit_test(test_datagram_shortcuts_agree),
	};
	/* clang-format on */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
