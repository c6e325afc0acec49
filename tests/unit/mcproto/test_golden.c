/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Golden vectors: request and reply datagrams captured from a real memcached 1.6.18 over UDP
 * (tests/data/mcproto/capture.py). Each request must parse as memcached understood it, and each
 * reply must give the items memcached sent: hit or miss, keys, values byte for byte, and the
 * reply's end, which must not be reported before the last datagram.
 */
#include "mc_test.h"

#ifndef MC_DATA_DIR
#error "MC_DATA_DIR must name tests/data/mcproto"
#endif

#define BIG_LEN 5000

struct want_item {
	uint8_t type;
	uint8_t result;
	const char *key;   /* NULL: no key expected */
	const char *value; /* NULL: no check; "@BIG": the 5000-byte test value */
	uint32_t opaque;   /* binary opaque, or meta O token as a number; 0: no check */
};

struct golden {
	const char *name;
	enum mc_err req_err; /* what the request parser says */
	enum mc_cmd cmd;     /* first request's command, if it parses */
	uint16_t nreq;	     /* requests in the datagram, if it parses */
	uint16_t nkeys;
	int ndgrams; /* reply datagrams */
	struct want_item items[8];
	int nitems; /* -1: check only the first and last of items[0..1] (stats) */
};

/* clang-format off */
#define I(t, r, k, v, o) {MC_REPLY_##t, MC_RES_##r, k, v, o}
#define BI(r, k, v, o) {MC_REPLY_BINARY, MC_RES_##r, k, v, o}

static const struct golden cases[] = {
	{"ascii_set", MC_OK, MC_CMD_SET, 1, 1, 1, {I(STORED, OK, NULL, NULL, 0)}, 1},
	{"ascii_get_hit", MC_OK, MC_CMD_GET, 1, 1, 1,
	 {I(VALUE, HIT, "foo", "bar", 0), I(END, END, NULL, NULL, 0)}, 2},
	{"ascii_get_miss", MC_OK, MC_CMD_GET, 1, 1, 1, {I(END, END, NULL, NULL, 0)}, 1},
	{"ascii_gets_hit", MC_OK, MC_CMD_GETS, 1, 1, 1,
	 {I(VALUE, HIT, "foo", "bar", 0), I(END, END, NULL, NULL, 0)}, 2},
	{"ascii_multiget", MC_OK, MC_CMD_GET, 1, 3, 2,
	 {I(VALUE, HIT, "foo", "bar", 0), I(VALUE, HIT, "baz", "quux", 0),
	  I(END, END, NULL, NULL, 0)}, 3},
	{"ascii_multiget_miss", MC_OK, MC_CMD_GET, 1, 2, 2, {I(END, END, NULL, NULL, 0)}, 1},
	{"ascii_multiget_big", MC_OK, MC_CMD_GET, 1, 3, 9,
	 {I(VALUE, HIT, "big", "@BIG", 0), I(VALUE, HIT, "foo", "bar", 0),
	  I(VALUE, HIT, "big", "@BIG", 0), I(END, END, NULL, NULL, 0)}, 4},
	{"ascii_pipeline", MC_OK, MC_CMD_GET, 3, 3, 3,
	 {I(VALUE, HIT, "foo", "bar", 0), I(END, END, NULL, NULL, 0),
	  I(NOT_FOUND, MISS, NULL, NULL, 0), I(NUMBER, OK, NULL, NULL, 0)}, 4},
	{"ascii_gat_hit", MC_OK, MC_CMD_GAT, 1, 2, 2,
	 {I(VALUE, HIT, "foo", "bar", 0), I(VALUE, HIT, "baz", "quux", 0),
	  I(END, END, NULL, NULL, 0)}, 3},
	{"ascii_add_exists", MC_OK, MC_CMD_ADD, 1, 1, 1, {I(NOT_STORED, FAIL, NULL, NULL, 0)}, 1},
	{"ascii_replace_miss", MC_OK, MC_CMD_REPLACE, 1, 1, 1,
	 {I(NOT_STORED, FAIL, NULL, NULL, 0)}, 1},
	{"ascii_append", MC_OK, MC_CMD_APPEND, 1, 1, 1, {I(STORED, OK, NULL, NULL, 0)}, 1},
	{"ascii_cas_miss", MC_OK, MC_CMD_CAS, 1, 1, 1, {I(NOT_FOUND, MISS, NULL, NULL, 0)}, 1},
	{"ascii_cas_exists", MC_OK, MC_CMD_CAS, 1, 1, 1, {I(EXISTS, FAIL, NULL, NULL, 0)}, 1},
	{"ascii_delete_hit", MC_OK, MC_CMD_DELETE, 1, 1, 1, {I(DELETED, OK, NULL, NULL, 0)}, 1},
	{"ascii_delete_miss", MC_OK, MC_CMD_DELETE, 1, 1, 1,
	 {I(NOT_FOUND, MISS, NULL, NULL, 0)}, 1},
	{"ascii_incr", MC_OK, MC_CMD_INCR, 1, 1, 1, {I(NUMBER, OK, NULL, NULL, 0)}, 1},
	{"ascii_decr_miss", MC_OK, MC_CMD_DECR, 1, 1, 1, {I(NOT_FOUND, MISS, NULL, NULL, 0)}, 1},
	{"ascii_touch_hit", MC_OK, MC_CMD_TOUCH, 1, 1, 1, {I(TOUCHED, OK, NULL, NULL, 0)}, 1},
	{"ascii_touch_miss", MC_OK, MC_CMD_TOUCH, 1, 1, 1, {I(NOT_FOUND, MISS, NULL, NULL, 0)}, 1},
	{"ascii_version", MC_OK, MC_CMD_VERSION, 1, 0, 1, {I(VERSION, INFO, NULL, NULL, 0)}, 1},
	{"ascii_verbosity", MC_OK, MC_CMD_VERBOSITY, 1, 0, 1, {I(OK, OK, NULL, NULL, 0)}, 1},
	{"ascii_unknown", MC_E_UNKNOWN_COMMAND, 0, 0, 0, 1, {I(ERROR, ERROR, NULL, NULL, 0)}, 1},
	/* memcached: "CLIENT_ERROR bad data chunk" for the block, then ERROR for its rest. */
	{"ascii_bad_chunk", MC_E_DATA_BAD_END, 0, 0, 0, 2,
	 {I(CLIENT_ERROR, ERROR, NULL, NULL, 0), I(ERROR, ERROR, NULL, NULL, 0)}, 2},
	{"ascii_get_big", MC_OK, MC_CMD_GET, 1, 1, 4,
	 {I(VALUE, HIT, "big", "@BIG", 0), I(END, END, NULL, NULL, 0)}, 2},
	{"ascii_stats", MC_OK, MC_CMD_STATS, 1, 0, 2,
	 {I(STAT, INFO, NULL, NULL, 0), I(END, END, NULL, NULL, 0)}, -1},
	{"meta_ms", MC_OK, MC_CMD_MS, 1, 1, 1, {I(META_HD, OK, NULL, NULL, 0)}, 1},
	{"meta_mg_hit", MC_OK, MC_CMD_MG, 1, 1, 1, {I(META_VA, HIT, "mkey", "hi", 42)}, 1},
	{"meta_mg_miss", MC_OK, MC_CMD_MG, 1, 1, 1, {I(META_EN, MISS, NULL, NULL, 0)}, 1},
	{"meta_mg_hd", MC_OK, MC_CMD_MG, 1, 1, 1, {I(META_HD, OK, NULL, NULL, 0)}, 1},
	{"meta_mg_base64", MC_OK, MC_CMD_MG, 1, 1, 1,
	 {I(META_VA, HIT, "YmluAWtleQ==", "x", 0)}, 1},
	{"meta_pipeline", MC_OK, MC_CMD_MG, 4, 3, 3,
	 {I(META_VA, HIT, "mkey", "hi", 0), I(META_VA, HIT, "foo", "bar", 7),
	  I(META_MN, END, NULL, NULL, 0)}, 3},
	{"meta_pipeline_plain", MC_OK, MC_CMD_MG, 3, 3, 3,
	 {I(META_VA, HIT, NULL, "hi", 0), I(META_EN, MISS, NULL, NULL, 0),
	  I(META_VA, HIT, "foo", "bar", 0)}, 3},
	{"meta_md_hit", MC_OK, MC_CMD_MD, 1, 1, 1, {I(META_HD, OK, NULL, NULL, 0)}, 1},
	{"meta_md_miss", MC_OK, MC_CMD_MD, 2, 1, 2,
	 {I(META_NF, MISS, NULL, NULL, 0), I(META_MN, END, NULL, NULL, 0)}, 2},
	{"meta_ma", MC_OK, MC_CMD_MA, 1, 1, 1, {I(META_VA, HIT, NULL, "6", 0)}, 1},
	{"meta_me", MC_OK, MC_CMD_ME, 1, 1, 1, {I(META_ME, INFO, "mkey", NULL, 0)}, 1},
	{"meta_mn", MC_OK, MC_CMD_MN, 1, 0, 1, {I(META_MN, END, NULL, NULL, 0)}, 1},
	{"meta_ms_bad", MC_E_DATA_BAD_END, 0, 0, 0, 2,
	 {I(CLIENT_ERROR, ERROR, NULL, NULL, 0), I(ERROR, ERROR, NULL, NULL, 0)}, 2},
	{"meta_mg_big", MC_OK, MC_CMD_MG, 1, 1, 4, {I(META_VA, HIT, NULL, "@BIG", 0)}, 1},
	{"bin_set", MC_OK, MC_CMD_SET, 1, 1, 1, {BI(OK, NULL, "", 0x1001)}, 1},
	{"bin_get_hit", MC_OK, MC_CMD_GET, 1, 1, 1, {BI(HIT, NULL, "hello", 0x1002)}, 1},
	{"bin_get_miss", MC_OK, MC_CMD_GET, 1, 1, 1, {BI(MISS, NULL, "Not found", 0x1003)}, 1},
	{"bin_getk_hit", MC_OK, MC_CMD_GET, 1, 1, 1, {BI(HIT, "bkey", "hello", 0x1004)}, 1},
	{"bin_pipeline", MC_OK, MC_CMD_GET, 4, 3, 3,
	 {BI(HIT, "bkey", "hello", 1), BI(HIT, "bkey2", "world", 3), BI(END, NULL, "", 4)}, 3},
	{"bin_getq_pipeline", MC_OK, MC_CMD_GET, 3, 2, 3,
	 {BI(HIT, NULL, "hello", 6), BI(END, NULL, "", 7)}, 2},
	{"bin_delete_miss", MC_OK, MC_CMD_DELETE, 1, 1, 1, {BI(MISS, NULL, NULL, 0x1005)}, 1},
	{"bin_incr", MC_OK, MC_CMD_INCR, 1, 1, 1,
	 {BI(OK, NULL, "@INCR", 0x1006)}, 1},
	{"bin_touch", MC_OK, MC_CMD_TOUCH, 1, 1, 1, {BI(OK, NULL, NULL, 0x1007)}, 1},
	{"bin_gat", MC_OK, MC_CMD_GAT, 1, 1, 1, {BI(HIT, NULL, "hello", 0x1008)}, 1},
	{"bin_version", MC_OK, MC_CMD_VERSION, 1, 0, 1, {BI(INFO, NULL, NULL, 0x1009)}, 1},
	{"bin_noop", MC_OK, MC_CMD_NOOP, 1, 0, 1, {BI(END, NULL, "", 0x100A)}, 1},
	{"bin_get_big", MC_OK, MC_CMD_GET, 1, 1, 4, {BI(HIT, NULL, "@BIG", 0x100B)}, 1},
};
/* clang-format on */

static uint8_t *load(const char *name, const char *ext, size_t *len)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s.%s", MC_DATA_DIR, name, ext);
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		fail_msg("cannot open %s", path);
	uint8_t *buf = malloc(1 << 20);
	assert_non_null(buf);
	*len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	return buf;
}

static void check_value(const struct col *c, int i, const struct want_item *w)
{
	static uint8_t big[BIG_LEN];

	if (w->value == NULL)
		return;
	if (strcmp(w->value, "@BIG") == 0) {
		for (int j = 0; j < BIG_LEN; j++)
			big[j] = (uint8_t)('a' + j % 26);
		assert_int_equal(c->it[i].value_len, BIG_LEN);
		assert_int_equal(c->it[i].got, BIG_LEN);
		assert_memory_equal(col_value(c, i), big, BIG_LEN);
		return;
	}
	if (strcmp(w->value, "@INCR") == 0) { /* 41 + 1 as a 64-bit big-endian counter */
		assert_int_equal(c->it[i].value_len, 8);
		assert_memory_equal(col_value(c, i), "\0\0\0\0\0\0\0\x2a", 8);
		return;
	}
	size_t n = strlen(w->value);
	assert_int_equal(c->it[i].value_len, n);
	assert_int_equal(c->it[i].got, n);
	if (n)
		assert_memory_equal(col_value(c, i), w->value, n);
}

static void check_item(const struct col *c, int i, const struct want_item *w)
{
	assert_int_equal(c->it[i].type, w->type);
	assert_int_equal(c->it[i].result, w->result);
	if (w->key)
		assert_string_equal(c->it[i].key, w->key);
	else if (w->type != MC_REPLY_META_VA) /* VA keys only with k; not asked for here */
		assert_string_equal(c->it[i].key, "");
	if (w->opaque && w->type == MC_REPLY_BINARY)
		assert_int_equal(c->it[i].opaque, w->opaque);
	else if (w->opaque)
		assert_int_equal(strtoul(c->it[i].mopaque, NULL, 10), w->opaque);
	check_value(c, i, w);
}

/* Feed every reply datagram in order; the reply must be done after the last, not before. */
static struct col *run_reply(const struct golden *g, const struct mc_requests *reqs)
{
	static struct mc_reply_parser rp;
	size_t len, pos = 0;
	uint8_t *rep = load(g->name, "reply", &len);
	struct col *c = col_new();
	int n = 0;

	mc_reply_init(&rp);
	if (reqs)
		mc_reply_expect(&rp, reqs);
	while (pos < len) {
		assert_true(len - pos >= 2);
		size_t dl = (size_t)rep[pos] << 8 | rep[pos + 1];
		assert_true(len - pos - 2 >= dl);
		if (reqs && n > 0)
			assert_false(mc_reply_done(&rp));
		assert_int_equal(mc_reply_feed_datagram(&rp, rep + pos + 2, dl), MC_OK);
		assert_int_equal(col_drain(&rp, c), MC_EV_MORE);
		pos += 2 + dl;
		n++;
	}
	assert_int_equal(n, g->ndgrams);
	assert_true(mc_reply_done(&rp));
	free(rep);
	return c;
}

static void test_golden(void **state)
{
	const struct golden *g = *state;
	static struct mc_requests r;
	size_t len;
	uint8_t *req = load(g->name, "req", &len);

	assert_int_equal(mc_parse_datagram(req, len, &r), g->req_err);
	if (g->req_err == MC_OK) {
		assert_int_equal(r.req[0].cmd, g->cmd);
		assert_int_equal(r.nreq, g->nreq);
		assert_int_equal(r.nkeys, g->nkeys);
		for (unsigned i = 0; i < r.nkeys; i++)
			assert_true(r.keys[i].off + r.keys[i].len <= len);
	}
	struct col *c = run_reply(g, g->req_err == MC_OK ? &r : NULL);

	if (g->nitems < 0) {
		assert_true(c->n > 10);
		for (int i = 0; i + 1 < c->n; i++)
			check_item(c, i, &g->items[0]);
		check_item(c, c->n - 1, &g->items[1]);
	} else {
		assert_int_equal(c->n, g->nitems);
		for (int i = 0; i < c->n; i++)
			check_item(c, i, &g->items[i]);
	}
	free(c);
	free(req);
}

/* Messages in a captured reply: datagrams with seq 0 and total > 0 start one. */
static int count_messages(const char *name, int *empty)
{
	size_t len, pos = 0;
	uint8_t *rep = load(name, "reply", &len);
	int n = 0;

	*empty = 0;
	while (pos + 2 <= len) {
		size_t dl = (size_t)rep[pos] << 8 | rep[pos + 1];
		const uint8_t *d = rep + pos + 2;
		assert_true(dl >= 8 && pos + 2 + dl <= len);
		if (d[2] == 0 && d[3] == 0) {
			if (d[4] == 0 && d[5] == 0)
				(*empty)++;
			else
				n++;
		}
		pos += 2 + dl;
	}
	free(rep);
	return n;
}

/* mc_reply_is_one_message() against what memcached sent: when it says one message, the capture
 * holds exactly one (and no empty one); the multi-message captures are all refused by it. */
static void test_one_message(void **state)
{
	(void)state;
	static struct mc_requests r;
	int one = 0, several = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len;
		uint8_t *req = load(cases[i].name, "req", &len);
		if (mc_parse_datagram(req, len, &r) != MC_OK) {
			free(req);
			continue;
		}
		int empty, msgs = count_messages(cases[i].name, &empty);
		if (mc_reply_is_one_message(&r)) {
			assert_int_equal(msgs, 1);
			assert_int_equal(empty, 0);
			one++;
		}
		if (msgs + empty > 1) {
			assert_false(mc_reply_is_one_message(&r));
			several++;
		}
		free(req);
	}
	/* The captures hold both kinds, so the test says something. */
	assert_true(one >= 30);
	assert_true(several >= 8);
}

/* A few replies whose text is deterministic, checked byte for byte. */
static void test_exact_lines(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		int item;
		const char *head;
	} lines[] = {
		{"ascii_incr", 0, "16\r\n"},
		{"ascii_gets_hit", 0, "VALUE foo 5 3 1\r\n"},
		{"ascii_pipeline", 3, "11\r\n"},
		{"meta_mg_hit", 0, "VA 2 f7 kmkey O42 t-1\r\n"},
		{"meta_mg_hd", 0, "HD s2\r\n"},
		{"ascii_bad_chunk", 0, "CLIENT_ERROR bad data chunk\r\n"},
	};
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		const struct golden *g = NULL;
		for (size_t j = 0; j < sizeof(cases) / sizeof(cases[0]); j++)
			if (strcmp(cases[j].name, lines[i].name) == 0)
				g = &cases[j];
		assert_non_null(g);
		struct col *c = run_reply(g, NULL);
		assert_true(lines[i].item < c->n);
		assert_int_equal(c->it[lines[i].item].head_len, strlen(lines[i].head));
		assert_memory_equal(c->it[lines[i].item].head, lines[i].head,
				    strlen(lines[i].head));
		free(c);
	}
}

/* mc_bin_response_write() against memcached's own response headers: given the captured
 * request's opcode and opaque and the status and body length memcached answered with, the 24
 * bytes are those of the capture (after the reply's 2-byte length and 8-byte frame header). */
static void test_bin_response_header(void **state)
{
	(void)state;
	static struct mc_requests r;
	static const struct {
		const char *name;
		uint16_t status;
		uint32_t body_len;
	} hdrs[] = {
		{"bin_noop", MC_BIN_STATUS_OK, 0},
		{"bin_get_miss", MC_BIN_STATUS_KEY_NOT_FOUND, 9}, /* "Not found" */
		{"bin_version", MC_BIN_STATUS_OK, 6},		  /* "1.6.18" */
		{"bin_delete_miss", MC_BIN_STATUS_KEY_NOT_FOUND, 9},
	};
	for (size_t i = 0; i < sizeof(hdrs) / sizeof(hdrs[0]); i++) {
		size_t qlen, plen;
		uint8_t *req = load(hdrs[i].name, "req", &qlen);
		uint8_t *rep = load(hdrs[i].name, "reply", &plen);
		uint8_t h[MC_BIN_HDR_LEN + 1];

		assert_int_equal(mc_parse_datagram(req, qlen, &r), MC_OK);
		assert_true(plen >= 2 + MC_FRAME_HDR_LEN + MC_BIN_HDR_LEN);
		memset(h, 0xee, sizeof(h));
		mc_bin_response_write(h, r.req[0].opcode, hdrs[i].status, hdrs[i].body_len,
				      r.req[0].opaque);
		assert_memory_equal(h, rep + 2 + MC_FRAME_HDR_LEN, MC_BIN_HDR_LEN);
		assert_int_equal(h[MC_BIN_HDR_LEN], 0xee); /* nothing past the header */
		free(req);
		free(rep);
	}
}

int main(void)
{
	enum { N = sizeof(cases) / sizeof(cases[0]) };
	struct CMUnitTest tests[N + 3];

	for (size_t i = 0; i < N; i++)
		tests[i] = (struct CMUnitTest){
			.name = cases[i].name,
			.test_func = test_golden,
			.initial_state = (void *)&cases[i],
		};
	tests[N] = (struct CMUnitTest)cmocka_unit_test(test_exact_lines);
	tests[N + 1] = (struct CMUnitTest)cmocka_unit_test(test_one_message);
	tests[N + 2] = (struct CMUnitTest)cmocka_unit_test(test_bin_response_header);
	return cmocka_run_group_tests_name("golden", tests, NULL, NULL);
}
