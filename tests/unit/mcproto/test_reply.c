/* SPDX-License-Identifier: BSD-3-Clause */
/* Reply parsing: every reply form of protocol.txt (classic, meta, binary), streams split at
 * every byte, datagram framing and completion. */
#include "mc_test.h"

static struct mc_reply_parser rp;

/* Parse a whole unframed buffer; returns the collection (caller frees). */
static struct col *parse_all(const void *buf, size_t len, int *rc)
{
	struct col *c = col_new();

	mc_reply_init(&rp);
	mc_reply_feed(&rp, buf, len);
	*rc = col_drain(&rp, c);
	return c;
}

#define ONE(lit, type_, result_)                                        \
	do {                                                            \
		int rc_;                                                \
		struct col *c_ = parse_all(lit, sizeof(lit) - 1, &rc_); \
		assert_int_equal(rc_, MC_EV_MORE);                      \
		assert_int_equal(c_->n, 1);                             \
		assert_int_equal(c_->it[0].type, type_);                \
		assert_int_equal(c_->it[0].result, result_);            \
		assert_int_equal(c_->it[0].head_len, sizeof(lit) - 1);  \
		free(c_);                                               \
	} while (0)

#define BAD(lit, err)                                                   \
	do {                                                            \
		int rc_;                                                \
		struct col *c_ = parse_all(lit, sizeof(lit) - 1, &rc_); \
		assert_int_equal(rc_, -(int)(err));                     \
		free(c_);                                               \
	} while (0)

static void test_classic_lines(void **state)
{
	(void)state;
	ONE("END\r\n", MC_REPLY_END, MC_RES_END);
	ONE("STORED\r\n", MC_REPLY_STORED, MC_RES_OK);
	ONE("NOT_STORED\r\n", MC_REPLY_NOT_STORED, MC_RES_FAIL);
	ONE("EXISTS\r\n", MC_REPLY_EXISTS, MC_RES_FAIL);
	ONE("NOT_FOUND\r\n", MC_REPLY_NOT_FOUND, MC_RES_MISS);
	ONE("DELETED\r\n", MC_REPLY_DELETED, MC_RES_OK);
	ONE("TOUCHED\r\n", MC_REPLY_TOUCHED, MC_RES_OK);
	ONE("OK\r\n", MC_REPLY_OK, MC_RES_OK);
	ONE("42\r\n", MC_REPLY_NUMBER, MC_RES_OK);
	ONE("18446744073709551615\r\n", MC_REPLY_NUMBER, MC_RES_OK);
	ONE("9   \r\n", MC_REPLY_NUMBER, MC_RES_OK); /* decr may space-pad */
	ONE("VERSION 1.6.18\r\n", MC_REPLY_VERSION, MC_RES_INFO);
	ONE("STAT pid 123\r\n", MC_REPLY_STAT, MC_RES_INFO);
	ONE("ERROR\r\n", MC_REPLY_ERROR, MC_RES_ERROR);
	ONE("ERROR unknown command\r\n", MC_REPLY_ERROR, MC_RES_ERROR);
	ONE("CLIENT_ERROR bad data chunk\r\n", MC_REPLY_CLIENT_ERROR, MC_RES_ERROR);
	ONE("SERVER_ERROR out of memory storing object\r\n", MC_REPLY_SERVER_ERROR, MC_RES_ERROR);
	ONE("END\n", MC_REPLY_END, MC_RES_END);

	BAD("STORED now\r\n", MC_E_REPLY_BAD_LINE);
	BAD("stored\r\n", MC_E_REPLY_BAD_LINE);
	BAD("\r\n", MC_E_REPLY_BAD_LINE);
	BAD("12a\r\n", MC_E_REPLY_BAD_LINE);
	BAD("18446744073709551616\r\n", MC_E_REPLY_BAD_LINE);
	BAD("HELLO\r\n", MC_E_REPLY_BAD_LINE);
}

static void test_value(void **state)
{
	(void)state;
	const char s[] =
		"VALUE foo 5 3\r\nbar\r\nVALUE k2 0 0 77\r\n\r\nVALUE x 1 4\r\n\r\n\r\n\r\nEND\r\n";
	int rc;
	struct col *c = parse_all(s, sizeof(s) - 1, &rc);

	assert_int_equal(rc, MC_EV_MORE);
	assert_int_equal(c->n, 4);
	assert_int_equal(c->it[0].type, MC_REPLY_VALUE);
	assert_int_equal(c->it[0].result, MC_RES_HIT);
	assert_string_equal(c->it[0].key, "foo");
	assert_int_equal(c->it[0].value_len, 3);
	assert_memory_equal(col_value(c, 0), "bar", 3);
	assert_int_equal(c->it[0].head_len, 15);
	assert_string_equal(c->it[1].key, "k2"); /* with cas, empty value */
	assert_int_equal(c->it[1].value_len, 0);
	assert_int_equal(c->it[2].value_len, 4); /* a value made of "\r\n\r\n" */
	assert_memory_equal(col_value(c, 2), "\r\n\r\n", 4);
	assert_int_equal(c->it[3].type, MC_REPLY_END);
	free(c);

	BAD("VALUE foo 0 3\r\nbarX\n", MC_E_REPLY_DATA_BAD_END);
	BAD("VALUE foo 0 3\r\nbar\n\r", MC_E_REPLY_DATA_BAD_END);
	BAD("VALUE foo x 3\r\nbar\r\n", MC_E_REPLY_BAD_LINE);
	BAD("VALUE foo 0\r\n", MC_E_REPLY_BAD_LINE);
	BAD("VALUE\r\n", MC_E_REPLY_BAD_LINE);
	BAD("VALUE foo 0 3 1 2\r\nbar\r\n", MC_E_REPLY_BAD_LINE);
	BAD("VALUE foo 0 3 x\r\nbar\r\n", MC_E_REPLY_BAD_LINE);
	BAD("VALUE foo 0 4294967296\r\n", MC_E_REPLY_BAD_LINE);
}

/* Parse reply head @p head (no terminator) followed by @p vlen bytes of value: one item
 * expected (the caller frees the collection). */
static struct col *one_item(const char *head, uint32_t vlen)
{
	char buf[1024];
	int rc, n = snprintf(buf, sizeof(buf), "%s\r\n", head);

	assert_true(n > 0 && (size_t)n + vlen + 2 < sizeof(buf));
	memset(buf + n, 'v', vlen);
	memcpy(buf + n + vlen, "\r\n", 2);
	struct col *c = parse_all(buf, (size_t)n + vlen + 2, &rc);

	if (rc != MC_EV_MORE || c->n != 1)
		fail_msg("'%s': rc %d, %u items", head, rc, c->n);
	assert_int_equal(c->it[0].value_len, vlen);
	return c;
}

/* One VALUE head: its key and value length as parsed; the fast one-pass line and the
 * tokenizer must agree. */
static void value_head(const char *head, const char *key, uint32_t vlen)
{
	struct col *c = one_item(head, vlen);

	assert_int_equal(c->it[0].type, MC_REPLY_VALUE);
	assert_string_equal(c->it[0].key, key);
	assert_int_equal(c->it[0].head_len, strlen(head) + 2);
	free(c);
}

/* The shapes the one-pass VALUE line takes, and those it leaves to the tokenizer (spaces,
 * long numbers, long keys): every one answered as protocol.txt's grammar says. */
static void test_value_shapes(void **state)
{
	char key[MC_KEY_MAX + 2], head[MC_KEY_MAX + 64];

	(void)state;
	value_head("VALUE k 0 0", "k", 0);
	value_head("VALUE foo 123456789 3", "foo", 3);
	value_head("VALUE foo 0 3 1234567890123456789", "foo", 3);	  /* 19-digit cas */
	value_head("VALUE foo 0 3 18446744073709551615", "foo", 3);	  /* 20 digits: tokenizer */
	value_head("VALUE foo 4294967295 3", "foo", 3);		  /* 10-digit flags */
	value_head("VALUE foo 00 003", "foo", 3);			  /* leading zeros */
	value_head("VALUE  foo 0 3", "foo", 3);			  /* two spaces */
	value_head("VALUE foo  0  3", "foo", 3);
	value_head("VALUE foo 0 3 ", "foo", 3);			  /* trailing space */
	value_head("VALUE foo 0 3 7 ", "foo", 3);
	value_head("VALUE k\x01\x7f 0 2", "k\x01\x7f", 2);		  /* bytes as they are */
	memset(key, 'k', MC_KEY_MAX);
	key[MC_KEY_MAX] = '\0';
	snprintf(head, sizeof(head), "VALUE %s 0 1", key);
	value_head(head, key, 1);
	BAD("VALUE foo 0 3 18446744073709551616\r\nbar\r\n", MC_E_REPLY_BAD_LINE);
	BAD("VALUE foo 4294967296 3\r\nbar\r\n", MC_E_REPLY_BAD_LINE);
	BAD("VALUE foo 0 3x\r\nbar\r\n", MC_E_REPLY_BAD_LINE);
	BAD("VALUE foo 0x 3\r\nbar\r\n", MC_E_REPLY_BAD_LINE);
	BAD("VALUE foo 0 3 5x\r\nbar\r\n", MC_E_REPLY_BAD_LINE);
	BAD("VALUE foo 0 -3\r\nbar\r\n", MC_E_REPLY_BAD_LINE);
	BAD("VALUE foo 0 \r\n", MC_E_REPLY_BAD_LINE);
	BAD("VALUE foo \r\n", MC_E_REPLY_BAD_LINE);
	key[MC_KEY_MAX] = 'k';
	key[MC_KEY_MAX + 1] = '\0';
	snprintf(head, sizeof(head), "VALUE %s 0 1\r\nx\r\n", key);
	int rc;
	struct col *c = parse_all(head, strlen(head), &rc);

	assert_int_equal(rc, -(int)MC_E_REPLY_BAD_LINE); /* a key of 251 bytes */
	free(c);
}

/* One meta VA head: its key (NULL: none) and opaque as parsed. */
static void va_head(const char *head, const char *key, const char *opaque, uint32_t vlen)
{
	struct col *c = one_item(head, vlen);

	assert_int_equal(c->it[0].type, MC_REPLY_META_VA);
	assert_int_equal(c->it[0].proto, MC_PROTO_META);
	assert_string_equal(c->it[0].key, key ? key : "");
	assert_string_equal(c->it[0].mopaque, opaque ? opaque : "");
	free(c);
}

/* VA lines: the one-pass shapes and those the tokenizer takes, answered alike. */
static void test_va_shapes(void **state)
{
	(void)state;
	va_head("VA 0", NULL, NULL, 0);
	va_head("VA 3 kfoo", "foo", NULL, 3);
	va_head("VA 3 Oab kfoo f5 t-1", "foo", "ab", 3);
	va_head("VA 3 kfoo kbar", "bar", NULL, 3); /* the last one */
	va_head("VA 3 O", NULL, "", 3);		  /* an empty opaque */
	va_head("VA 3  kfoo", "foo", NULL, 3);	  /* two spaces: tokenizer */
	va_head("VA 3 kfoo ", "foo", NULL, 3);	  /* trailing space */
	va_head("VA 0000000003 kfoo", "foo", NULL, 3); /* 10 digits */
	va_head("VA 3 O0123456789012345678901234567890", NULL, "0123456789012345678901234567890",
		3); /* 31 bytes: MC_OPAQUE_MAX */
	BAD("VA 3 k\r\nabc\r\n", MC_E_REPLY_BAD_LINE);
	BAD("VA 3x kfoo\r\nabc\r\n", MC_E_REPLY_BAD_LINE);
	BAD("VA kfoo\r\nabc\r\n", MC_E_REPLY_BAD_LINE);
	BAD("VA 4294967296\r\nabc\r\n", MC_E_REPLY_BAD_LINE);
	BAD("VA 3 O01234567890123456789012345678901\r\nabc\r\n", MC_E_REPLY_BAD_LINE);
}

static void test_meta(void **state)
{
	(void)state;
	const char s[] = "VA 2 f7 kmkey O42 t-1\r\nhi\r\nHD c5\r\nEN\r\nNF\r\nNS\r\nEX\r\nMN\r\n"
			 "ME mkey exp=-1 la=0 cas=6 fetch=yes cls=1 size=69\r\nHD kfoo Oab b\r\n";
	int rc;
	struct col *c = parse_all(s, sizeof(s) - 1, &rc);
	static const struct {
		enum mc_reply_type type;
		enum mc_result result;
	} want[] = {{MC_REPLY_META_VA, MC_RES_HIT},  {MC_REPLY_META_HD, MC_RES_OK},
		    {MC_REPLY_META_EN, MC_RES_MISS}, {MC_REPLY_META_NF, MC_RES_MISS},
		    {MC_REPLY_META_NS, MC_RES_FAIL}, {MC_REPLY_META_EX, MC_RES_FAIL},
		    {MC_REPLY_META_MN, MC_RES_END},  {MC_REPLY_META_ME, MC_RES_INFO},
		    {MC_REPLY_META_HD, MC_RES_OK}};

	assert_int_equal(rc, MC_EV_MORE);
	assert_int_equal(c->n, 9);
	for (int i = 0; i < 9; i++) {
		assert_int_equal(c->it[i].type, want[i].type);
		assert_int_equal(c->it[i].result, want[i].result);
		assert_int_equal(c->it[i].proto, MC_PROTO_META);
	}
	assert_string_equal(c->it[0].key, "mkey");
	assert_string_equal(c->it[0].mopaque, "42");
	assert_memory_equal(col_value(c, 0), "hi", 2);
	assert_string_equal(c->it[7].key, "mkey");
	assert_string_equal(c->it[8].key, "foo");
	assert_string_equal(c->it[8].mopaque, "ab");
	free(c);

	BAD("VA x\r\nhi\r\n", MC_E_REPLY_BAD_LINE);
	BAD("VA\r\n", MC_E_REPLY_BAD_LINE);
	BAD("VA 2\r\nhi!\r\n", MC_E_REPLY_DATA_BAD_END);
	BAD("HD k\r\n", MC_E_REPLY_BAD_LINE);
	BAD("HD O123456789012345678901234567890123\r\n", MC_E_REPLY_BAD_LINE);
	BAD("ME\r\n", MC_E_REPLY_BAD_LINE);
}

/* A binary response into buf; returns its length. */
static size_t bres(uint8_t *b, uint8_t opcode, uint16_t status, const char *key, size_t extlen,
		   const char *value, uint32_t opaque)
{
	size_t kl = key ? strlen(key) : 0, vl = value ? strlen(value) : 0;
	uint32_t body = (uint32_t)(extlen + kl + vl);

	memset(b, 0, MC_BIN_HDR_LEN + body);
	b[0] = 0x81;
	b[1] = opcode;
	b[2] = (uint8_t)(kl >> 8);
	b[3] = (uint8_t)kl;
	b[4] = (uint8_t)extlen;
	b[6] = (uint8_t)(status >> 8);
	b[7] = (uint8_t)status;
	b[8] = (uint8_t)(body >> 24);
	b[9] = (uint8_t)(body >> 16);
	b[10] = (uint8_t)(body >> 8);
	b[11] = (uint8_t)body;
	b[12] = (uint8_t)(opaque >> 24);
	b[15] = (uint8_t)opaque;
	if (kl)
		memcpy(b + MC_BIN_HDR_LEN + extlen, key, kl);
	if (vl)
		memcpy(b + MC_BIN_HDR_LEN + extlen + kl, value, vl);
	return MC_BIN_HDR_LEN + body;
}

static void test_binary(void **state)
{
	(void)state;
	static uint8_t b[1024];
	size_t n = 0;
	int rc;

	n += bres(b + n, MC_BIN_GETK, 0, "bkey", 4, "hello", 1);
	n += bres(b + n, MC_BIN_GET, MC_BIN_STATUS_KEY_NOT_FOUND, NULL, 0, "Not found", 2);
	n += bres(b + n, MC_BIN_SET, 0, NULL, 0, NULL, 3);
	n += bres(b + n, MC_BIN_ADD, MC_BIN_STATUS_KEY_EXISTS, NULL, 0, "Data exists for key.", 4);
	n += bres(b + n, MC_BIN_INCREMENT, MC_BIN_STATUS_NON_NUMERIC, NULL, 0, "Non-numeric", 5);
	n += bres(b + n, MC_BIN_VERSION, 0, NULL, 0, "1.6.18", 6);
	n += bres(b + n, MC_BIN_NOOP, 0, NULL, 0, NULL, 7);
	struct col *c = parse_all(b, n, &rc);

	assert_int_equal(rc, MC_EV_MORE);
	assert_int_equal(c->n, 7);
	static const enum mc_result want[] = {MC_RES_HIT,   MC_RES_MISS, MC_RES_OK, MC_RES_FAIL,
					      MC_RES_ERROR, MC_RES_INFO, MC_RES_END};
	for (int i = 0; i < 7; i++) {
		assert_int_equal(c->it[i].type, MC_REPLY_BINARY);
		assert_int_equal(c->it[i].proto, MC_PROTO_BINARY);
		assert_int_equal(c->it[i].result, want[i]);
		assert_int_equal(c->it[i].opaque, (uint32_t)i + 1);
	}
	assert_string_equal(c->it[0].key, "bkey");
	assert_int_equal(c->it[0].value_len, 5);
	assert_int_equal(c->it[0].head_len, 24 + 4 + 4);
	assert_memory_equal(col_value(c, 0), "hello", 5);
	assert_int_equal(c->it[1].status, MC_BIN_STATUS_KEY_NOT_FOUND);
	assert_int_equal(c->it[1].key[0], '\0');
	assert_memory_equal(col_value(c, 5), "1.6.18", 6);
	free(c);

	/* Lengths that disagree, request magic, truncation is just "more". */
	n = bres(b, MC_BIN_GET, 0, "k", 4, "v", 0);
	b[2] = 1; /* key length 257 > 250 */
	c = parse_all(b, n, &rc);
	assert_int_equal(rc, -(int)MC_E_BIN_BAD_LENGTHS);
	free(c);
	n = bres(b, MC_BIN_GET, 0, "key", 4, NULL, 0);
	b[11] = 5; /* body 5 < extras 4 + key 3 */
	c = parse_all(b, n, &rc);
	assert_int_equal(rc, -(int)MC_E_BIN_BAD_LENGTHS);
	free(c);
	n = bres(b, MC_BIN_GET, 0, "key", 4, NULL, 0);
	b[0] = 0x80;
	c = parse_all(b, n, &rc);
	assert_int_equal(rc, -(int)MC_E_BIN_BAD_MAGIC);
	free(c);
	n = bres(b, MC_BIN_GET, 0, "key", 4, "value", 0);
	for (size_t cut = 0; cut < n; cut++) {
		c = parse_all(b, cut, &rc);
		assert_int_equal(rc, MC_EV_MORE);
		assert_int_equal(c->n, cut >= 31 ? 1 : 0);
		free(c);
	}
}

static void test_line_limit(void **state)
{
	(void)state;
	static char big[MC_REPLY_LINE_MAX + 16];
	int rc;

	memset(big, 'x', sizeof(big));
	memcpy(big, "STAT ", 5);
	memcpy(big + MC_REPLY_LINE_MAX - 2, "\r\n", 2);
	struct col *c = parse_all(big, MC_REPLY_LINE_MAX, &rc);
	assert_int_equal(rc, MC_EV_MORE);
	assert_int_equal(c->n, 1);
	free(c);
	memcpy(big + MC_REPLY_LINE_MAX - 2, "xx\r\n", 4);
	c = parse_all(big, MC_REPLY_LINE_MAX + 2, &rc);
	assert_int_equal(rc, -(int)MC_E_REPLY_LINE_TOO_LONG);
	free(c);
	/* Also when the long line is split over datagrams. */
	mc_reply_init(&rp);
	c = col_new();
	assert_int_equal(col_feed_split(&rp, c, big, MC_REPLY_LINE_MAX + 2, 700),
			 -(int)MC_E_REPLY_LINE_TOO_LONG);
	free(c);
	/* After an error the parser stays failed. */
	struct mc_reply_event ev;
	mc_reply_feed(&rp, (const uint8_t *)"END\r\n", 5);
	assert_true(mc_reply_next(&rp, &ev) < 0);
}

/* The same stream, split in two at every offset and fed byte by byte, gives the same items. */
static void test_split_everywhere(void **state)
{
	(void)state;
	static uint8_t s[2048];
	size_t n = 0;
	const char *text =
		"VALUE foo 5 3\r\nbar\r\nVALUE e 0 0\r\n\r\nVA 4 kmkey O1\r\n\r\n\r\n\r\n"
		"HD\r\nEN\r\n18\r\nEND\r\nMN\r\n";
	memcpy(s, text, strlen(text));
	n = strlen(text);
	n += bres(s + n, MC_BIN_GETK, 0, "bkey", 4, "hello", 9);
	n += bres(s + n, MC_BIN_NOOP, 0, NULL, 0, NULL, 10);
	memcpy(s + n, "END\r\n", 5);
	n += 5;

	int rc;
	struct col *ref = parse_all(s, n, &rc);
	assert_int_equal(rc, MC_EV_MORE);
	assert_int_equal(ref->n, 11);

	for (size_t split = 0; split <= n; split++) {
		struct col *c = col_new();
		mc_reply_init(&rp);
		assert_int_equal(col_feed_split(&rp, c, s, n, split), MC_EV_MORE);
		assert_int_equal(c->n, ref->n);
		assert_int_equal(c->values_len, ref->values_len);
		assert_memory_equal(c->values, ref->values, ref->values_len);
		for (int i = 0; i < ref->n; i++) {
			assert_int_equal(c->it[i].type, ref->it[i].type);
			assert_string_equal(c->it[i].key, ref->it[i].key);
			assert_string_equal(c->it[i].mopaque, ref->it[i].mopaque);
			assert_int_equal(c->it[i].head_len, ref->it[i].head_len);
			assert_memory_equal(c->it[i].head, ref->it[i].head, ref->it[i].head_len);
		}
		assert_true(mc_reply_done(&rp));
		free(c);
	}
	/* One byte at a time. */
	struct col *c = col_new();
	mc_reply_init(&rp);
	for (size_t i = 0; i < n; i++) {
		mc_reply_feed(&rp, s + i, 1);
		assert_int_equal(col_drain(&rp, c), MC_EV_MORE);
		if (i + 1 < n && i > 0 && s[i] == 'E' && s[i + 1] == 'N')
			assert_false(mc_reply_done(&rp));
	}
	assert_int_equal(c->n, ref->n);
	assert_memory_equal(c->values, ref->values, ref->values_len);
	assert_true(mc_reply_done(&rp));
	free(c);
	free(ref);
}

/* Build a datagram: frame header + payload. */
static size_t dgram(uint8_t *d, uint16_t id, uint16_t seq, uint16_t total, const char *payload)
{
	struct mc_frame f = {.request_id = id, .seq = seq, .total = total};
	size_t n = strlen(payload);

	mc_frame_write(d, &f);
	memcpy(d + 8, payload, n);
	return 8 + n;
}

static void test_framing(void **state)
{
	(void)state;
	uint8_t d[256];
	size_t n;

	/* Messages of one and of several datagrams, and an empty message, in one reply. */
	mc_reply_init(&rp);
	struct col *c = col_new();
	n = dgram(d, 5, 0, 2, "VALUE big 0 6\r\nabc");
	assert_int_equal(mc_reply_feed_datagram(&rp, d, n), MC_OK);
	assert_int_equal(col_drain(&rp, c), MC_EV_MORE);
	assert_false(mc_reply_done(&rp));
	n = dgram(d, 5, 1, 2, "def\r\n");
	assert_int_equal(mc_reply_feed_datagram(&rp, d, n), MC_OK);
	assert_int_equal(col_drain(&rp, c), MC_EV_MORE);
	assert_true(mc_reply_done(&rp)); /* no expectation: a boundary */
	n = dgram(d, 5, 0, 0, "");
	assert_int_equal(mc_reply_feed_datagram(&rp, d, n), MC_OK);
	assert_int_equal(col_drain(&rp, c), MC_EV_MORE);
	n = dgram(d, 5, 0, 1, "END\r\n");
	assert_int_equal(mc_reply_feed_datagram(&rp, d, n), MC_OK);
	assert_int_equal(col_drain(&rp, c), MC_EV_MORE);
	assert_int_equal(c->n, 2);
	assert_memory_equal(col_value(c, 0), "abcdef", 6);
	assert_true(mc_reply_done(&rp));
	free(c);

	/* Out-of-step datagrams are refused and leave the parser as it was. */
	mc_reply_init(&rp);
	n = dgram(d, 5, 1, 2, "x");
	assert_int_equal(mc_reply_feed_datagram(&rp, d, n), MC_E_REPLY_FRAME_ORDER);
	n = dgram(d, 5, 0, 3, "VALUE k 0 1\r\n");
	assert_int_equal(mc_reply_feed_datagram(&rp, d, n), MC_OK);
	n = dgram(d, 6, 1, 3, "x"); /* another request id */
	assert_int_equal(mc_reply_feed_datagram(&rp, d, n), MC_E_REPLY_FRAME_ORDER);
	n = dgram(d, 5, 2, 3, "x"); /* a gap */
	assert_int_equal(mc_reply_feed_datagram(&rp, d, n), MC_E_REPLY_FRAME_ORDER);
	n = dgram(d, 5, 1, 4, "x"); /* total changed */
	assert_int_equal(mc_reply_feed_datagram(&rp, d, n), MC_E_REPLY_FRAME_ORDER);
	n = dgram(d, 5, 0, 3, "x"); /* restart inside a message */
	assert_int_equal(mc_reply_feed_datagram(&rp, d, n), MC_E_REPLY_FRAME_ORDER);
	n = dgram(d, 5, 1, 3, "x");
	assert_int_equal(mc_reply_feed_datagram(&rp, d, n), MC_OK);
	assert_int_equal(mc_reply_feed_datagram(&rp, d, 7), MC_E_FRAME_SHORT);
	/* An empty message with a payload is not memcached's. */
	mc_reply_init(&rp);
	n = dgram(d, 5, 0, 0, "END\r\n");
	assert_int_equal(mc_reply_feed_datagram(&rp, d, n), MC_E_REPLY_FRAME_ORDER);
	n = dgram(d, 5, 1, 0, "");
	assert_int_equal(mc_reply_feed_datagram(&rp, d, n), MC_E_REPLY_FRAME_ORDER);
}

/* Feed @p reply (unframed) after mc_reply_expect() for @p req; report done after each byte. */
static void expect_case(const char *req, const void *reply, size_t len, bool want_done)
{
	struct mc_requests r;
	struct col *c = col_new();

	assert_int_equal(parse_str(req, &r), MC_OK);
	mc_reply_init(&rp);
	mc_reply_expect(&rp, &r);
	for (size_t i = 0; i < len; i++) {
		mc_reply_feed(&rp, (const uint8_t *)reply + i, 1);
		assert_int_equal(col_drain(&rp, c), MC_EV_MORE);
		if (i + 1 < len)
			assert_false(mc_reply_done(&rp));
	}
	assert_int_equal(mc_reply_done(&rp), want_done);
	free(c);
}

#define EXPECT(req, reply, done) expect_case(req, reply, sizeof(reply) - 1, done)

static void test_expect(void **state)
{
	(void)state;
	/* A value that reads "END" is data, not the terminator. */
	EXPECT("get a b\r\n", "VALUE a 0 1\r\nx\r\nVALUE b 0 3\r\nEND\r\nEND\r\n", true);
	EXPECT("get a b\r\n", "VALUE a 0 1\r\nx\r\n", false);
	EXPECT("get a\r\nget b\r\n", "END\r\nVALUE b 0 1\r\ny\r\nEND\r\n", true);
	EXPECT("get a\r\nget b\r\n", "END\r\n", false);
	EXPECT("set a 0 0 1\r\nx\r\n", "STORED\r\n", true);
	EXPECT("set a 0 0 1\r\nx\r\ndelete a\r\nincr n 1\r\n", "STORED\r\nDELETED\r\n5\r\n", true);
	EXPECT("set a 0 0 1\r\nx\r\ndelete a\r\nincr n 1\r\n", "STORED\r\nDELETED\r\n", false);
	EXPECT("get a\r\n", "SERVER_ERROR out of memory\r\n", true);
	EXPECT("stats\r\n", "STAT pid 1\r\nSTAT uptime 2\r\nEND\r\n", true);
	EXPECT("version\r\n", "VERSION 1.6.18\r\n", true);
	EXPECT("mg a v\r\nmg b v\r\n", "VA 1\r\nx\r\nEN\r\n", true);
	EXPECT("mg a v\r\nmg b v\r\n", "VA 1\r\nx\r\n", false);
	EXPECT("mg a v q\r\nmg b v q\r\nmn\r\n", "VA 1\r\nx\r\nMN\r\n", true);
	EXPECT("mg a v q\r\nmg b v q\r\nmn\r\n", "VA 1\r\nx\r\n", false);
	EXPECT("mn\r\nmg b v q\r\nmn\r\n", "MN\r\nMN\r\n", true);
	EXPECT("mn\r\nmg b v q\r\nmn\r\n", "MN\r\n", false);
	/* Quiet without a closing mn, quit, watch: unknowable, never done. */
	EXPECT("mg a v q\r\n", "VA 1\r\nx\r\n", false);
	EXPECT("set a 0 0 1 noreply\r\nx\r\n", "", false);
	EXPECT("quit\r\n", "", false);
	EXPECT("watch\r\n", "OK\r\n", false);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classic_lines),
		cmocka_unit_test(test_value),
		cmocka_unit_test(test_value_shapes),
		cmocka_unit_test(test_va_shapes),
		cmocka_unit_test(test_meta),
		cmocka_unit_test(test_binary),
		cmocka_unit_test(test_line_limit),
		cmocka_unit_test(test_split_everywhere),
		cmocka_unit_test(test_framing),
		cmocka_unit_test(test_expect),
	};
	/* clang-format on */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
