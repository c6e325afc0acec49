/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reply parsing: a streaming parser over the datagrams of one reply. Item headers (text lines,
 * binary header + extras + key) are taken in place when a datagram holds them whole and are
 * reassembled in the parser's line buffer when they straddle datagrams; values are never
 * copied, only reported piece by piece.
 */
#include <string.h>

#include "mcproto.h"
#include "mcproto_priv.h"

enum rstate {
	RS_HEAD,  /* at an item boundary, or part of a header is in rp->line */
	RS_DATA,  /* data_left value bytes to come */
	RS_CRLF,  /* crlf_left bytes of a text value's "\r\n" to come */
	RS_ERROR, /* sticky after an error */
};

/* clang-format off */
static const uint8_t reply_result[MC_REPLY_COUNT] = {
#define MC_REPLY_RES(e, s, r) [MC_REPLY_##e] = MC_RES_##r,
	MC_FOREACH_REPLY(MC_REPLY_RES)
#undef MC_REPLY_RES
};
/* clang-format on */

/* How mc_reply_done() judges completion. */
enum expect {
	EX_BOUNDARY, /* no expectation given: a boundary is enough */
	EX_UNITS,    /* one response per request; multi[] marks those that run to END */
	EX_TERMS,    /* the reply ends with the units-th MN / binary NOOP response */
	EX_UNKNOWN,  /* cannot be told from the stream: never done */
};

void mc_reply_init(struct mc_reply_parser *rp)
{
	memset(rp, 0, offsetof(struct mc_reply_parser, line));
	rp->state = RS_HEAD;
	rp->expect = EX_BOUNDARY;
}

/* Commands whose reply cannot be delimited, or that get none. */
static bool reply_unknowable(const struct mc_request *r)
{
	switch (r->cmd) {
	case MC_CMD_QUIT:
	case MC_CMD_SHUTDOWN:
	case MC_CMD_WATCH:
	case MC_CMD_LRU_CRAWLER:
		return true;
	case MC_CMD_STATS:
		return r->proto == MC_PROTO_BINARY; /* a series ending in an empty STAT */
	default:
		return (r->flags & MC_REQ_F_QUIET) != 0;
	}
}

static bool reply_multi(const struct mc_request *r)
{
	if (r->proto != MC_PROTO_ASCII)
		return false;
	return r->kind == MC_KIND_READ || r->cmd == MC_CMD_STATS;
}

void mc_reply_expect(struct mc_reply_parser *rp, const struct mc_requests *reqs)
{
	uint16_t n = reqs->nreq > MC_MAX_REQUESTS ? MC_MAX_REQUESTS : reqs->nreq;

	rp->units = 0;
	rp->units_seen = 0;
	memset(rp->multi, 0, sizeof(rp->multi));
	rp->expect = EX_UNKNOWN;
	if (n == 0)
		return;
	uint8_t last = reqs->req[n - 1].cmd;
	if (last == MC_CMD_MN || last == MC_CMD_NOOP) {
		for (uint16_t i = 0; i < n; i++)
			if (reqs->req[i].cmd == last)
				rp->units++;
		rp->expect = EX_TERMS;
		return;
	}
	for (uint16_t i = 0; i < n; i++) {
		if (reply_unknowable(&reqs->req[i]))
			return;
		if (reply_multi(&reqs->req[i]))
			rp->multi[i / 8] |= (uint8_t)(1u << (i % 8));
	}
	rp->units = n;
	rp->expect = EX_UNITS;
}

bool mc_reply_is_one_message(const struct mc_requests *reqs)
{
	if (reqs->nreq != 1)
		return false;
	const struct mc_request *r = &reqs->req[0];
	if (reply_unknowable(r) || r->cmd == MC_CMD_STATS)
		return false;
	return r->key_count <= 1;
}

/* Count a response header against the expectation. */
static void expect_item(struct mc_reply_parser *rp, const struct mc_reply_event *ev)
{
	uint16_t u = rp->units_seen;

	if (u >= rp->units)
		return;
	if (rp->expect == EX_TERMS) {
		if (ev->type == MC_REPLY_META_MN ||
		    (ev->type == MC_REPLY_BINARY && ev->opcode == MC_BIN_NOOP))
			rp->units_seen++;
	} else if (rp->expect == EX_UNITS) {
		bool multi = rp->multi[u / 8] & (1u << (u % 8));
		if (!multi || ev->type == MC_REPLY_END || ev->result == MC_RES_ERROR)
			rp->units_seen++;
	}
}

void mc_reply_feed(struct mc_reply_parser *rp, const uint8_t *p, size_t len)
{
	rp->cur = p;
	rp->cur_len = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
	rp->cur_pos = 0;
}

enum mc_err mc_reply_feed_datagram(struct mc_reply_parser *rp, const uint8_t *p, size_t len)
{
	struct mc_frame f;
	enum mc_err e = mc_frame_parse(p, len, &f);

	if (e != MC_OK)
		return e;
	if (rp->framed && f.request_id != rp->request_id)
		return MC_E_REPLY_FRAME_ORDER;
	if (rp->next_seq == rp->total) { /* at a message boundary: a new message starts */
		if (f.seq != 0 || (f.total == 0 && len != MC_FRAME_HDR_LEN))
			return MC_E_REPLY_FRAME_ORDER;
	} else if (f.seq != rp->next_seq || f.total != rp->total) {
		return MC_E_REPLY_FRAME_ORDER;
	}
	rp->framed = 1;
	rp->request_id = f.request_id;
	rp->total = f.total;
	rp->next_seq = f.total == 0 ? 0 : (uint16_t)(f.seq + 1);
	mc_reply_feed(rp, p + MC_FRAME_HDR_LEN, len - MC_FRAME_HDR_LEN);
	return MC_OK;
}

bool mc_reply_done(const struct mc_reply_parser *rp)
{
	bool boundary = rp->next_seq == rp->total && rp->cur_pos == rp->cur_len &&
			rp->state == RS_HEAD && rp->line_len == 0;

	if (!boundary)
		return false;
	switch (rp->expect) {
	case EX_BOUNDARY:
		return true;
	case EX_UNITS:
	case EX_TERMS:
		return rp->units_seen >= rp->units;
	default:
		return false;
	}
}

/* ---- header parsing ---- */

/* Cursor over one text reply line's content (terminator excluded). */
struct rline {
	const uint8_t *s;
	uint32_t pos, end;
};

static bool rtok(struct rline *l, const uint8_t **t, uint32_t *n)
{
	uint32_t i = l->pos;

	while (i < l->end && l->s[i] == ' ')
		i++;
	if (i == l->end) {
		l->pos = i;
		return false;
	}
	uint32_t st = i;
	while (i < l->end && l->s[i] != ' ')
		i++;
	*t = l->s + st;
	*n = i - st;
	l->pos = i;
	return true;
}

static bool tok_eq(const uint8_t *t, uint32_t n, const char *lit)
{
	size_t ln = strlen(lit);
	return n == ln && memcmp(t, lit, ln) == 0;
}

static bool dec_num(const uint8_t *s, uint32_t n, uint64_t max, uint64_t *v)
{
	uint64_t x = 0;

	if (n == 0 || n > 20)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		uint64_t d = (uint64_t)(s[i] - '0');
		if (x > (max - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*v = x;
	return true;
}

/* Replies that are one word and nothing else. */
static const struct {
	const char *word;
	uint8_t type;
} bare_words[] = {
	{"END", MC_REPLY_END},
	{"STORED", MC_REPLY_STORED},
	{"NOT_STORED", MC_REPLY_NOT_STORED},
	{"EXISTS", MC_REPLY_EXISTS},
	{"NOT_FOUND", MC_REPLY_NOT_FOUND},
	{"DELETED", MC_REPLY_DELETED},
	{"TOUCHED", MC_REPLY_TOUCHED},
	{"OK", MC_REPLY_OK},
};

/* Replies whose word is followed by free text. */
static const struct {
	const char *word;
	uint8_t type;
} text_words[] = {
	{"ERROR", MC_REPLY_ERROR},
	{"CLIENT_ERROR", MC_REPLY_CLIENT_ERROR},
	{"SERVER_ERROR", MC_REPLY_SERVER_ERROR},
	{"VERSION", MC_REPLY_VERSION},
	{"STAT", MC_REPLY_STAT},
};

/* Meta reply codes that take flags. */
static const struct {
	const char *word;
	uint8_t type;
} meta_words[] = {
	{"HD", MC_REPLY_META_HD}, {"EN", MC_REPLY_META_EN}, {"NF", MC_REPLY_META_NF},
	{"NS", MC_REPLY_META_NS}, {"EX", MC_REPLY_META_EX}, {"MN", MC_REPLY_META_MN},
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Meta return flags: `k<key>` and `O<opaque>` are reported. */
static enum mc_err meta_rflags(struct rline *l, struct mc_reply_event *ev)
{
	const uint8_t *t;
	uint32_t n;

	while (rtok(l, &t, &n)) {
		if (t[0] == 'k') {
			if (n - 1 == 0 || n - 1 > MC_KEY_MAX)
				return MC_E_REPLY_BAD_LINE;
			ev->key = t + 1;
			ev->key_len = (uint16_t)(n - 1);
		} else if (t[0] == 'O') {
			if (n - 1 > MC_OPAQUE_MAX)
				return MC_E_REPLY_BAD_LINE;
			ev->mopaque = t + 1;
			ev->opaque_len = (uint8_t)(n - 1);
		}
	}
	return MC_OK;
}

/* VALUE <key> <flags> <bytes> [<cas>] */
static enum mc_err parse_value_line(struct rline *l, struct mc_reply_event *ev)
{
	const uint8_t *k, *t;
	uint32_t kn, n;
	uint64_t v;

	if (!rtok(l, &k, &kn) || kn > MC_KEY_MAX)
		return MC_E_REPLY_BAD_LINE;
	if (!rtok(l, &t, &n) || !dec_num(t, n, UINT32_MAX, &v))
		return MC_E_REPLY_BAD_LINE;
	if (!rtok(l, &t, &n) || !dec_num(t, n, UINT32_MAX, &v))
		return MC_E_REPLY_BAD_LINE;
	ev->value_len = (uint32_t)v;
	if (rtok(l, &t, &n) && !dec_num(t, n, UINT64_MAX, &v))
		return MC_E_REPLY_BAD_LINE;
	if (rtok(l, &t, &n))
		return MC_E_REPLY_BAD_LINE;
	ev->key = k;
	ev->key_len = (uint16_t)kn;
	ev->type = MC_REPLY_VALUE;
	return MC_OK;
}

/* Digits at @p s[*i ..) up to @p end, at most @p max of them: their value (no overflow: max
 * is short enough) in *@p v and *@p i past them. @return how many, 0 when none or too many. */
static inline uint32_t short_dec(const uint8_t *s, uint32_t *i, uint32_t end, uint32_t max,
				 uint64_t *v)
{
	uint32_t j = *i;
	uint64_t x = 0;

	while (j < end && (uint8_t)(s[j] - '0') <= 9 && j - *i <= max)
		x = x * 10 + (uint64_t)(s[j++] - '0');
	if (j - *i > max)
		return 0;
	*v = x;
	j -= *i;
	*i += j;
	return j;
}

/*
 * The commonest line of a multi-get's reply, `VALUE <key> <flags> <bytes>[ <cas>]` (line
 * @p s, @p end bytes without its terminator) with single spaces, flags and bytes of at most
 * 9 digits and a cas of at most 19 (none can overflow), in one pass: @return true with @p ev
 * as parse_value_line() fills it. Any other shape (several spaces, longer numbers, a bad
 * token) returns false and the general tokenizer judges the line, so the answer for every
 * line is the general one (issue 30: its rtok() calls were a fifth of a 10-key multi-get's
 * merge).
 */
static bool value_line_fast(const uint8_t *s, uint32_t end, struct mc_reply_event *ev)
{
	uint32_t i = 6, k = 6;
	uint64_t flags, bytes, cas;

	if (end < 11 || memcmp(s, "VALUE ", 6) != 0)
		return false;
	while (i < end && s[i] != ' ')
		i++;
	if (i == k || i - k > MC_KEY_MAX || i == end)
		return false;
	uint32_t kn = i - k;

	i++;
	if (short_dec(s, &i, end, 9, &flags) == 0 || i == end || s[i] != ' ')
		return false;
	i++;
	if (short_dec(s, &i, end, 9, &bytes) == 0)
		return false;
	if (i != end &&
	    (s[i] != ' ' || (i++, short_dec(s, &i, end, 19, &cas) == 0) || i != end))
		return false;
	ev->proto = MC_PROTO_ASCII;
	ev->key = s + k;
	ev->key_len = (uint16_t)kn;
	ev->value_len = (uint32_t)bytes;
	ev->type = MC_REPLY_VALUE;
	return true;
}

/*
 * ... and of a meta multi-get's: `VA <bytes>` and its return flags, single spaces, at most 9
 * digits, each flag token non-empty, `k` and `O` within their bounds: @return true with
 * @p ev as the general path fills it (the last `k` and `O` win, as meta_rflags() has them).
 * Anything else is the general tokenizer's.
 */
static bool va_line_fast(const uint8_t *s, uint32_t end, struct mc_reply_event *ev)
{
	uint32_t i = 3;
	uint64_t bytes;
	const uint8_t *key = NULL, *op = NULL;
	uint32_t key_len = 0, op_len = 0;

	if (end < 4 || memcmp(s, "VA ", 3) != 0 || short_dec(s, &i, end, 9, &bytes) == 0)
		return false;
	while (i < end) {
		uint32_t t;

		if (s[i] != ' ' || ++i == end || s[i] == ' ')
			return false;
		t = i;
		while (i < end && s[i] != ' ')
			i++;
		if (s[t] == 'k') {
			if (i - t - 1 == 0 || i - t - 1 > MC_KEY_MAX)
				return false;
			key = s + t + 1;
			key_len = i - t - 1;
		} else if (s[t] == 'O') {
			if (i - t - 1 > MC_OPAQUE_MAX)
				return false;
			op = s + t + 1;
			op_len = i - t - 1;
		}
	}
	ev->proto = MC_PROTO_META;
	ev->type = MC_REPLY_META_VA;
	ev->value_len = (uint32_t)bytes;
	if (key != NULL) {
		ev->key = key;
		ev->key_len = (uint16_t)key_len;
	}
	if (op != NULL) {
		ev->mopaque = op;
		ev->opaque_len = (uint8_t)op_len;
	}
	return true;
}

/* One text reply line (with its terminator) into @p ev. */
static enum mc_err parse_text_line(const uint8_t *s, uint32_t len, struct mc_reply_event *ev)
{
	struct rline l = {.s = s, .pos = 0, .end = len - 1};
	const uint8_t *w, *t;
	uint32_t wn, n;
	uint64_t v;

	if (l.end > 0 && s[l.end - 1] == '\r')
		l.end--;
	if (value_line_fast(s, l.end, ev) || va_line_fast(s, l.end, ev))
		return MC_OK;
	if (!rtok(&l, &w, &wn))
		return MC_E_REPLY_BAD_LINE;
	ev->proto = MC_PROTO_ASCII;
	if (tok_eq(w, wn, "VALUE"))
		return parse_value_line(&l, ev);
	for (size_t i = 0; i < ARRAY_LEN(bare_words); i++)
		if (tok_eq(w, wn, bare_words[i].word)) {
			ev->type = bare_words[i].type;
			return rtok(&l, &t, &n) ? MC_E_REPLY_BAD_LINE : MC_OK;
		}
	for (size_t i = 0; i < ARRAY_LEN(text_words); i++)
		if (tok_eq(w, wn, text_words[i].word)) {
			ev->type = text_words[i].type;
			return MC_OK;
		}
	if (w[0] >= '0' && w[0] <= '9') {
		ev->type = MC_REPLY_NUMBER;
		if (!dec_num(w, wn, UINT64_MAX, &v) || rtok(&l, &t, &n))
			return MC_E_REPLY_BAD_LINE;
		return MC_OK;
	}
	ev->proto = MC_PROTO_META;
	if (tok_eq(w, wn, "VA")) {
		if (!rtok(&l, &t, &n) || !dec_num(t, n, UINT32_MAX, &v))
			return MC_E_REPLY_BAD_LINE;
		ev->type = MC_REPLY_META_VA;
		ev->value_len = (uint32_t)v;
		return meta_rflags(&l, ev);
	}
	if (tok_eq(w, wn, "ME")) {
		if (!rtok(&l, &t, &n) || n > MC_KEY_MAX)
			return MC_E_REPLY_BAD_LINE;
		ev->type = MC_REPLY_META_ME;
		ev->key = t;
		ev->key_len = (uint16_t)n;
		return MC_OK;
	}
	for (size_t i = 0; i < ARRAY_LEN(meta_words); i++)
		if (tok_eq(w, wn, meta_words[i].word)) {
			ev->type = meta_words[i].type;
			return meta_rflags(&l, ev);
		}
	return MC_E_REPLY_BAD_LINE;
}

/* What a binary response means for the client. */
static uint8_t bin_result(uint8_t opcode, uint16_t status)
{
	switch (status) {
	case MC_BIN_STATUS_OK:
		switch (opcode) {
		case MC_BIN_NOOP:
			return MC_RES_END;
		case MC_BIN_GET:
		case MC_BIN_GETQ:
		case MC_BIN_GETK:
		case MC_BIN_GETKQ:
		case MC_BIN_GAT:
		case MC_BIN_GATQ:
		case MC_BIN_GATK:
		case MC_BIN_GATKQ:
			return MC_RES_HIT;
		case MC_BIN_VERSION:
		case MC_BIN_STAT:
			return MC_RES_INFO;
		default:
			return MC_RES_OK;
		}
	case MC_BIN_STATUS_KEY_NOT_FOUND:
		return MC_RES_MISS;
	case MC_BIN_STATUS_KEY_EXISTS:
	case MC_BIN_STATUS_NOT_STORED:
		return MC_RES_FAIL;
	default:
		return MC_RES_ERROR;
	}
}

/* Length of the binary head (24 + extras + key) from the first 24 bytes, or an error. */
static enum mc_err bin_head_len(const uint8_t *h, uint32_t *need)
{
	uint32_t keylen = mc_rd16(h + 2), extlen = h[4], bodylen = mc_rd32(h + 8);

	if (h[0] != MC_BIN_RES_MAGIC)
		return MC_E_BIN_BAD_MAGIC;
	if (keylen > MC_KEY_MAX || keylen + extlen > bodylen)
		return MC_E_BIN_BAD_LENGTHS;
	*need = MC_BIN_HDR_LEN + extlen + keylen;
	return MC_OK;
}

static void parse_bin_head(const uint8_t *h, struct mc_reply_event *ev)
{
	uint32_t keylen = mc_rd16(h + 2), extlen = h[4], bodylen = mc_rd32(h + 8);

	ev->type = MC_REPLY_BINARY;
	ev->proto = MC_PROTO_BINARY;
	ev->opcode = h[1];
	ev->status = mc_rd16(h + 6);
	ev->opaque = mc_rd32(h + 12);
	ev->value_len = bodylen - extlen - keylen;
	if (keylen) {
		ev->key = h + MC_BIN_HDR_LEN + extlen;
		ev->key_len = (uint16_t)keylen;
	}
}

/* Binary magic (a reply's 0x81, or a misdirected request's 0x80, refused later). */
static inline bool is_bin(uint8_t b)
{
	return b == MC_BIN_RES_MAGIC || b == MC_BIN_REQ_MAGIC;
}

/*
 * How long the head starting with @p b (of which @p n bytes are known) is: *need > 0 when
 * known and complete within n, 0 when more bytes are needed.
 */
static enum mc_err head_need(const uint8_t *b, uint32_t n, uint32_t *need)
{
	*need = 0;
	if (n == 0)
		return MC_OK;
	if (is_bin(b[0])) {
		uint32_t hl;
		if (n < MC_BIN_HDR_LEN)
			return MC_OK;
		enum mc_err e = bin_head_len(b, &hl);
		if (e != MC_OK)
			return e;
		if (hl <= n)
			*need = hl;
		return MC_OK;
	}
	const uint8_t *nl = memchr(b, '\n', n < MC_REPLY_LINE_MAX ? n : MC_REPLY_LINE_MAX);
	if (nl != NULL)
		*need = (uint32_t)(nl - b) + 1;
	else if (n >= MC_REPLY_LINE_MAX)
		return MC_E_REPLY_LINE_TOO_LONG;
	return MC_OK;
}

/* Move bytes of the current chunk into the line buffer until the head is whole. */
static enum mc_err head_accumulate(struct mc_reply_parser *rp, uint32_t *need)
{
	enum mc_err e;

	for (;;) {
		if ((e = head_need(rp->line, rp->line_len, need)) != MC_OK)
			return e;
		if (*need)
			return MC_OK;
		uint32_t avail = rp->cur_len - rp->cur_pos;
		if (avail == 0)
			return MC_OK;
		/* Text: up to and including '\n'; binary: one byte at a time is enough, but
		 * take as much as may belong to the head. */
		const uint8_t *s = rp->cur + rp->cur_pos;
		uint32_t take = avail;
		bool bin = is_bin(rp->line_len ? rp->line[0] : s[0]);
		if (bin) {
			uint32_t want = MC_BIN_HDR_LEN;
			if (rp->line_len >= MC_BIN_HDR_LEN)
				want = MC_BIN_HDR_LEN + rp->line[4] + mc_rd16(rp->line + 2);
			take = want - rp->line_len < avail ? want - rp->line_len : avail;
		} else {
			const uint8_t *nl = memchr(s, '\n', avail);
			if (nl)
				take = (uint32_t)(nl - s) + 1;
		}
		if (take > (uint32_t)MC_REPLY_LINE_MAX - rp->line_len)
			return MC_E_REPLY_LINE_TOO_LONG;
		memcpy(rp->line + rp->line_len, s, take);
		rp->line_len = (uint16_t)(rp->line_len + take);
		rp->cur_pos += take;
	}
}

/* Fill @p ev from a complete head and set the state for what follows it. */
static enum mc_err head_event(struct mc_reply_parser *rp, const uint8_t *h, uint32_t len,
			      struct mc_reply_event *ev)
{
	enum mc_err e;
	bool bin = is_bin(h[0]);

	*ev = (struct mc_reply_event){.head = h, .head_len = len};
	if (bin) {
		parse_bin_head(h, ev);
		ev->result = bin_result(ev->opcode, ev->status);
	} else {
		if ((e = parse_text_line(h, len, ev)) != MC_OK)
			return e;
		ev->result = reply_result[ev->type];
	}
	rp->items++;
	expect_item(rp, ev);
	if (ev->value_len) {
		rp->state = RS_DATA;
		rp->data_left = ev->value_len;
		rp->crlf_left = bin ? 0 : 2;
	} else if (!bin && (ev->type == MC_REPLY_VALUE || ev->type == MC_REPLY_META_VA)) {
		rp->state = RS_CRLF;
		rp->crlf_left = 2;
	} else {
		rp->state = RS_HEAD;
	}
	return MC_OK;
}

static int next_head(struct mc_reply_parser *rp, struct mc_reply_event *ev)
{
	uint32_t need = 0, avail = rp->cur_len - rp->cur_pos;
	const uint8_t *s = rp->cur + rp->cur_pos;
	enum mc_err e;

	if (rp->line_len == 0) {
		if (avail == 0)
			return MC_EV_MORE;
		if ((e = head_need(s, avail, &need)) != MC_OK)
			return -(int)e;
		if (need) {
			rp->cur_pos += need;
			e = head_event(rp, s, need, ev);
			return e == MC_OK ? MC_EV_ITEM : -(int)e;
		}
	}
	if ((e = head_accumulate(rp, &need)) != MC_OK)
		return -(int)e;
	if (!need)
		return MC_EV_MORE;
	/* The head is whole in rp->line: bytes past it were never copied (take stops at the
	 * head's end), so line_len == need. */
	rp->line_len = 0;
	e = head_event(rp, rp->line, need, ev);
	return e == MC_OK ? MC_EV_ITEM : -(int)e;
}

int mc_reply_next(struct mc_reply_parser *rp, struct mc_reply_event *ev)
{
	int rc;

	for (;;) {
		uint32_t avail = rp->cur_len - rp->cur_pos;
		switch (rp->state) {
		case RS_HEAD:
			rc = next_head(rp, ev);
			if (rc < 0)
				rp->state = RS_ERROR;
			return rc;
		case RS_DATA: {
			if (avail == 0)
				return MC_EV_MORE;
			uint32_t take = rp->data_left < avail ? rp->data_left : avail;
			*ev = (struct mc_reply_event){
				.data = rp->cur + rp->cur_pos,
				.data_len = take,
			};
			rp->cur_pos += take;
			rp->data_left -= take;
			ev->last = rp->data_left == 0;
			if (ev->last)
				rp->state = rp->crlf_left ? RS_CRLF : RS_HEAD;
			return MC_EV_DATA;
		}
		case RS_CRLF:
			if (avail == 0)
				return MC_EV_MORE;
			if (rp->cur[rp->cur_pos] != (rp->crlf_left == 2 ? '\r' : '\n')) {
				rp->state = RS_ERROR;
				return -(int)MC_E_REPLY_DATA_BAD_END;
			}
			rp->cur_pos++;
			if (--rp->crlf_left == 0)
				rp->state = RS_HEAD;
			continue;
		default:
			return -(int)MC_E_REPLY_BAD_LINE;
		}
	}
}
