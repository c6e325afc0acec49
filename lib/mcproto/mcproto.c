/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Request parsing: the frame header, names, keys, and the text (classic and meta) requests.
 * Binary requests are in binary.c. Every read is bounded by the line or buffer end computed
 * before it; lengths from the wire are compared with what is left before they are used.
 */
#include <stddef.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "mcproto.h"
#include "mcproto_priv.h"

/* clang-format off */
static const char *const err_names[MC_E_COUNT] = {
	[MC_OK] = "ok",
#define MC_ERR_NAME(e, s) [MC_E_##e] = s,
	MC_FOREACH_ERROR(MC_ERR_NAME)
#undef MC_ERR_NAME
};
/* clang-format on */

/* clang-format off */
static const char *const cmd_names[MC_CMD_COUNT] = {
#define MC_CMD_NAME(e, s, k) [MC_CMD_##e] = s,
	MC_FOREACH_CMD(MC_CMD_NAME)
#undef MC_CMD_NAME
};
/* clang-format on */

/* clang-format off */
const uint8_t mc_cmd_kind[MC_CMD_COUNT] = {
#define MC_CMD_KIND(e, s, k) [MC_CMD_##e] = MC_KIND_##k,
	MC_FOREACH_CMD(MC_CMD_KIND)
#undef MC_CMD_KIND
};
/* clang-format on */

/* clang-format off */
static const char *const kind_names[MC_KIND_COUNT] = {
#define MC_KIND_NAME(e, s) [MC_KIND_##e] = s,
	MC_FOREACH_KIND(MC_KIND_NAME)
#undef MC_KIND_NAME
};
/* clang-format on */

const char *mc_err_name(enum mc_err err)
{
	return (unsigned)err < MC_E_COUNT ? err_names[err] : "unknown";
}

const char *mc_cmd_name(enum mc_cmd cmd)
{
	return (unsigned)cmd < MC_CMD_COUNT ? cmd_names[cmd] : "unknown";
}

const char *mc_kind_name(enum mc_kind kind)
{
	return (unsigned)kind < MC_KIND_COUNT ? kind_names[kind] : "unknown";
}

/* The frame header's four fields (the caller checked the 8 bytes are there). */
static inline void frame_read(const uint8_t *p, struct mc_frame *f)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* The four big-endian fields at once: one load, the bytes of each 16-bit lane swapped,
	 * one store (struct mc_frame is the four fields in wire order). */
	uint64_t v, m = 0x00ff00ff00ff00ffull;

	_Static_assert(sizeof(*f) == 8 && offsetof(struct mc_frame, reserved) == 6,
		       "struct mc_frame: the wire's four fields");
	memcpy(&v, p, 8);
	v = (v & m) << 8 | (v >> 8 & m);
	memcpy(f, &v, 8);
#else
	f->request_id = mc_rd16(p);
	f->seq = mc_rd16(p + 2);
	f->total = mc_rd16(p + 4);
	f->reserved = mc_rd16(p + 6);
#endif
}

enum mc_err mc_frame_parse(const uint8_t *p, size_t len, struct mc_frame *f)
{
	if (len < MC_FRAME_HDR_LEN)
		return MC_E_FRAME_SHORT;
	frame_read(p, f);
	return MC_OK;
}

void mc_frame_write(uint8_t *p, const struct mc_frame *f)
{
	mc_wr16(p, f->request_id);
	mc_wr16(p + 2, f->seq);
	mc_wr16(p + 4, f->total);
	mc_wr16(p + 6, f->reserved);
}

enum mc_err mc_key_check(const uint8_t *k, size_t len)
{
	if (len == 0)
		return MC_E_KEY_MISSING;
	if (len > MC_KEY_MAX)
		return MC_E_KEY_TOO_LONG;
	for (size_t i = 0; i < len; i++)
		if (k[i] <= 0x20 || k[i] == 0x7f)
			return MC_E_KEY_BAD_CHAR;
	return MC_OK;
}

/* ---- base64 (RFC 4648 alphabet, padded, as memcached's `b` flag expects) ---- */

/* Value of a base64 character, or -1. */
static int b64_val(uint8_t c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/*
 * Decode @p len base64 characters into @p out (room for len / 4 * 3 bytes), or only
 * validate when @p out is NULL. Returns the decoded length, 0 when invalid or empty.
 */
static size_t b64_decode(const uint8_t *s, size_t len, uint8_t *out)
{
	size_t n = 0;

	if (len == 0 || len % 4 != 0)
		return 0;
	for (size_t i = 0; i < len; i += 4) {
		int v[4];
		int pad = 0;
		for (int j = 0; j < 4; j++) {
			uint8_t c = s[i + j];
			if (c == '=' && i + 4 == len && j >= 2) {
				v[j] = 0;
				pad++;
				continue;
			}
			if (pad) /* data after '=' */
				return 0;
			v[j] = b64_val(c);
			if (v[j] < 0)
				return 0;
		}
		uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 |
			     (uint32_t)v[3];
		uint8_t b[3] = {(uint8_t)(w >> 16), (uint8_t)(w >> 8), (uint8_t)w};
		for (int j = 0; j < 3 - pad; j++) {
			if (out)
				out[n] = b[j];
			n++;
		}
	}
	return n;
}

size_t mc_key_decode(const uint8_t *p, const struct mc_key *k, uint8_t out[MC_KEY_MAX])
{
	if (k->len == 0 || k->len > MC_KEY_MAX)
		return 0;
	if (!k->base64) {
		memcpy(out, p + k->off, k->len);
		return k->len;
	}
	return b64_decode(p + k->off, k->len, out);
}

/* ---- text requests ---- */

/* One text command line: [pos, end) excludes the "\r\n" / "\n" that ends at next. */
struct line {
	const uint8_t *p;
	uint32_t pos;  /* cursor: next byte to tokenise */
	uint32_t end;  /* end of the line's content */
	uint32_t next; /* first byte after the line terminator */
};

/* Next space-separated token of the line; false at the end of the line. */
static inline bool next_tok(struct line *l, uint32_t *off, uint32_t *len)
{
	uint32_t i = l->pos;

	while (i < l->end && l->p[i] == ' ')
		i++;
	if (i == l->end) {
		l->pos = i;
		return false;
	}
	uint32_t s = i;
	while (i < l->end && l->p[i] != ' ')
		i++;
	*off = s;
	*len = i - s;
	l->pos = i;
	return true;
}

/*
 * True when the 8 bytes at @p q hold a byte <= 0x20 (space, control) or 0x7f. Both tests are
 * exact for existence (the "has less than n" and "has zero byte" word tricks, n = 0x21).
 */
static inline bool word_has_special(const uint8_t *q)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	uint64_t x;

	memcpy(&x, q, 8);
	uint64_t lt = (x - ones * 0x21) & ~x & highs;
	uint64_t d = x ^ (ones * 0x7f);
	uint64_t del = (d - ones) & ~d & highs;
	return (lt | del) != 0;
}

/*
 * First index in [i, end) holding a byte <= 0x20 or 0x7f, or end; [p, p + end) is readable
 * (the SSE2 tail reads from end - 16, before i). In a word that has one,
 * the lowest flagged byte of the word tricks is exact (borrows only run upwards), so on a
 * little-endian host its position comes from the trailing zero count.
 */
static inline uint32_t scan_plain(const uint8_t *p, uint32_t i, uint32_t end)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;

#ifdef __SSE2__
	/* 16 bytes a step where SSE2 is there (every x86-64): unsigned x <= 0x20 is
	 * min(x, 0x20) == x. */
	const __m128i sp = _mm_set1_epi8(0x20), del = _mm_set1_epi8(0x7f);

	while (end - i >= 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
		__m128i hit = _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(x, sp), x),
					   _mm_cmpeq_epi8(x, del));
		unsigned m = (unsigned)_mm_movemask_epi8(hit);

		if (m != 0)
			return i + (uint32_t)__builtin_ctz(m);
		i += 16;
	}
	/* The last 1..15 bytes: the 16 that end at end (the buffer holds them), without the
	 * lanes before i, instead of a word and a byte loop. */
	if (i < end && end >= 16) {
		uint32_t b = end - 16;
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + b));
		__m128i hit = _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(x, sp), x),
					   _mm_cmpeq_epi8(x, del));
		unsigned m = (unsigned)_mm_movemask_epi8(hit) & (0xffffu << (i - b));

		return m != 0 ? b + (uint32_t)__builtin_ctz(m) : end;
	}
#endif
	while (end - i >= 8) {
		uint64_t x;

		memcpy(&x, p + i, 8);
		uint64_t d = x ^ (ones * 0x7f);
		uint64_t m = ((x - ones * 0x21) & ~x & highs) | ((d - ones) & ~d & highs);
		if (m != 0) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			return i + (uint32_t)__builtin_ctzll(m) / 8;
#else
			break;
#endif
		}
		i += 8;
	}
	while (i < end && p[i] > 0x20 && p[i] != 0x7f)
		i++;
	return i;
}

/*
 * Next token as a key: tokenises and applies mc_key_check()'s byte rule in one pass.
 * *bad is set when the token holds a control character (spaces end it).
 */
static inline bool next_key_tok(struct line *l, uint32_t *off, uint32_t *len, bool *bad)
{
	const uint8_t *p = l->p;
	uint32_t i = l->pos, end = l->end;
	unsigned ctl = 0;

	while (i < end && p[i] == ' ')
		i++;
	if (i == end) {
		l->pos = i;
		return false;
	}
	uint32_t s = i;
	/* Skip 8 ordinary bytes at a time; stop at the word holding a space or control byte. */
	while (end - i >= 8 && !word_has_special(p + i))
		i += 8;
	for (; i < end; i++) {
		uint8_t ch = p[i];
		if (ch == ' ')
			break;
		ctl |= (ch < 0x20) | (ch == 0x7f);
	}
	*off = s;
	*len = i - s;
	*bad = ctl != 0;
	l->pos = i;
	return true;
}

static inline bool tok_is(const struct line *l, uint32_t off, uint32_t len, const char *s,
			  uint32_t slen)
{
	return len == slen && memcmp(l->p + off, s, slen) == 0;
}

#define TOK_IS(l, off, len, lit) tok_is(l, off, len, lit, sizeof(lit) - 1)

/* Decimal unsigned number of at most 20 digits that fits @p max. */
static bool parse_unum(const uint8_t *s, uint32_t len, uint64_t max, uint64_t *v)
{
	uint64_t n = 0;

	if (len == 0 || len > 20)
		return false;
	for (uint32_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		uint64_t d = (uint64_t)(s[i] - '0');
		if (n > (max - d) / 10)
			return false;
		n = n * 10 + d;
	}
	*v = n;
	return true;
}

/* Signed 32-bit decimal (exptime may be negative: expire at once). */
static bool parse_snum32(const uint8_t *s, uint32_t len)
{
	uint64_t v;

	if (len > 0 && s[0] == '-')
		return parse_unum(s + 1, len - 1, (uint64_t)INT32_MAX + 1, &v);
	return parse_unum(s, len, INT32_MAX, &v);
}

/* Parsing context for one buffer. */
struct pctx {
	const uint8_t *p;
	uint32_t len;
	unsigned flags; /* MC_PARSE_* */
	struct mc_requests *out;
};

/* Claim the next request slot, initialised for a text request starting at @p off. */
static struct mc_request *req_new(struct pctx *c, uint32_t off, uint8_t proto, uint8_t cmd)
{
	struct mc_requests *o = c->out;

	if (o->nreq >= MC_MAX_REQUESTS)
		return NULL;
	struct mc_request *r = &o->req[o->nreq];
	*r = (struct mc_request){
		.off = off,
		.proto = proto,
		.cmd = cmd,
		.kind = mc_cmd_kind[cmd],
		.key_first = o->nkeys,
	};
	return r;
}

/* Append a key of request @p r (not yet counted in nreq); @p err is its verdict so far. */
static enum mc_err key_push(struct pctx *c, struct mc_request *r, uint32_t off, uint32_t len,
			    enum mc_err err)
{
	struct mc_requests *o = c->out;

	if (len == 0)
		return MC_E_KEY_MISSING;
	if (len > MC_KEY_MAX)
		return MC_E_KEY_TOO_LONG;
	if (err != MC_OK)
		return err;
	if (o->nkeys >= MC_MAX_KEYS)
		return MC_E_TOO_MANY_KEYS;
	o->keys[o->nkeys++] = (struct mc_key){
		.off = off,
		.len = (uint16_t)len,
		.req = o->nreq,
		.base64 = 0,
	};
	r->key_count++;
	return MC_OK;
}

/* The next token of a text line as a key: MC_E_KEY_MISSING when there is none. */
static enum mc_err key_next(struct pctx *c, struct line *l, struct mc_request *r)
{
	uint32_t off, len;
	bool bad;

	if (!next_key_tok(l, &off, &len, &bad))
		return MC_E_KEY_MISSING;
	if (c->flags & MC_PARSE_CTL_KEYS)
		bad = false;
	return key_push(c, r, off, len, bad ? MC_E_KEY_BAD_CHAR : MC_OK);
}

/* The optional trailing "noreply" of classic commands; anything else there is an error. */
static enum mc_err opt_noreply(struct line *l, struct mc_request *r)
{
	uint32_t off, len;

	if (!next_tok(l, &off, &len))
		return MC_OK;
	if (!TOK_IS(l, off, len, "noreply"))
		return MC_E_BAD_ARGUMENTS;
	r->flags |= MC_REQ_F_QUIET;
	return next_tok(l, &off, &len) ? MC_E_BAD_ARGUMENTS : MC_OK;
}

/* Data block of @p bytes right after the command line: exactly that, then "\r\n". */
static enum mc_err data_block(struct pctx *c, struct line *l, struct mc_request *r, uint64_t bytes)
{
	uint32_t start = l->next;

	if (bytes > c->len - start || c->len - start - bytes < 2)
		return MC_E_DATA_TRUNCATED;
	uint32_t end = start + (uint32_t)bytes;
	if (c->p[end] != '\r' || c->p[end + 1] != '\n')
		return MC_E_DATA_BAD_END;
	r->flags |= MC_REQ_F_VALUE;
	r->data_off = start;
	r->data_len = (uint32_t)bytes;
	l->next = end + 2;
	return MC_OK;
}

/* get gets <key>+ / gat gats <exptime> <key>+ */
static enum mc_err parse_retrieval(struct pctx *c, struct line *l, struct mc_request *r)
{
	uint32_t off, len;
	enum mc_err e;

	if (r->cmd == MC_CMD_GAT || r->cmd == MC_CMD_GATS) {
		if (!next_tok(l, &off, &len))
			return MC_E_BAD_ARGUMENTS;
		if (!parse_snum32(c->p + off, len))
			return MC_E_BAD_NUMBER;
		r->args_off = off;
		r->args_len = len;
	}
	while ((e = key_next(c, l, r)) == MC_OK)
		;
	if (e != MC_E_KEY_MISSING)
		return e;
	return r->key_count ? MC_OK : MC_E_KEY_MISSING;
}

/* set add replace append prepend <key> <flags> <exptime> <bytes> [noreply]
 * cas <key> <flags> <exptime> <bytes> <cas unique> [noreply] */
static enum mc_err parse_storage(struct pctx *c, struct line *l, struct mc_request *r)
{
	uint32_t off[4], len[4];
	uint64_t v, bytes;
	enum mc_err e;

	if ((e = key_next(c, l, r)) != MC_OK)
		return e;
	for (int i = 1; i < 4; i++)
		if (!next_tok(l, &off[i], &len[i]))
			return MC_E_BAD_ARGUMENTS;
	if (!parse_unum(c->p + off[1], len[1], UINT32_MAX, &v) ||
	    !parse_snum32(c->p + off[2], len[2]) ||
	    !parse_unum(c->p + off[3], len[3], INT32_MAX - 2, &bytes))
		return MC_E_BAD_NUMBER;
	if (r->cmd == MC_CMD_CAS) {
		uint32_t coff, clen;
		if (!next_tok(l, &coff, &clen))
			return MC_E_BAD_ARGUMENTS;
		if (!parse_unum(c->p + coff, clen, UINT64_MAX, &v))
			return MC_E_BAD_NUMBER;
	}
	if ((e = opt_noreply(l, r)) != MC_OK)
		return e;
	return data_block(c, l, r, bytes);
}

/* delete <key> [0] [noreply] (the legacy hold time must be 0, as memcached insists) */
static enum mc_err parse_delete(struct pctx *c, struct line *l, struct mc_request *r)
{
	uint32_t off, len;
	enum mc_err e;

	if ((e = key_next(c, l, r)) != MC_OK)
		return e;
	uint32_t save = l->pos;
	if (next_tok(l, &off, &len) && TOK_IS(l, off, len, "0"))
		save = l->pos;
	l->pos = save;
	return opt_noreply(l, r);
}

/* incr decr <key> <delta> [noreply] / touch <key> <exptime> [noreply] */
static enum mc_err parse_key_num(struct pctx *c, struct line *l, struct mc_request *r)
{
	uint32_t off, len;
	uint64_t v;
	enum mc_err e;

	if ((e = key_next(c, l, r)) != MC_OK)
		return e;
	if (!next_tok(l, &off, &len))
		return MC_E_BAD_ARGUMENTS;
	bool ok = r->cmd == MC_CMD_TOUCH ? parse_snum32(c->p + off, len)
					 : parse_unum(c->p + off, len, UINT64_MAX, &v);
	if (!ok)
		return MC_E_BAD_NUMBER;
	return opt_noreply(l, r);
}

/* Keyless commands: arguments are the server's business; a last "noreply" makes it quiet. */
static enum mc_err parse_keyless(struct pctx *c, struct line *l, struct mc_request *r)
{
	uint32_t off, len, first = 0, last_off = 0, last_len = 0;
	bool any = false;

	while (next_tok(l, &off, &len)) {
		if (!any)
			first = off;
		any = true;
		last_off = off;
		last_len = len;
	}
	if (!any)
		return MC_OK;
	r->args_off = first;
	r->args_len = last_off + last_len - first;
	if (TOK_IS(l, last_off, last_len, "noreply"))
		r->flags |= MC_REQ_F_QUIET;
	(void)c;
	return MC_OK;
}

/* Meta flags: tokens starting with a letter; O (opaque), q, b, k are noted. Tokenised as
 * next_tok() does (spaces separate, the line's end ends), with each byte checked once. */
static enum mc_err meta_flags(struct pctx *c, struct line *l, struct mc_request *r)
{
	const uint8_t *p = c->p;
	uint32_t i = l->pos, end = l->end, first = 0, last = 0;
	bool any = false;

	for (;;) {
		while (i < end && p[i] == ' ')
			i++;
		if (i == end)
			break;
		uint32_t off = i;
		uint8_t f = p[i++];
		if (!((f >= 'a' && f <= 'z') || (f >= 'A' && f <= 'Z')))
			return MC_E_META_BAD_FLAG;
		for (; i < end && p[i] != ' '; i++)
			if (p[i] < 0x20 || p[i] == 0x7f)
				return MC_E_META_BAD_FLAG;
		if (f == 'q') {
			r->flags |= MC_REQ_F_QUIET;
		} else if (f == 'b') {
			r->flags |= MC_REQ_F_BASE64;
		} else if (f == 'k') {
			r->flags |= MC_REQ_F_KEY_IN_REPLY;
		} else if (f == 'O') {
			if (i - off - 1 > MC_OPAQUE_MAX)
				return MC_E_META_OPAQUE_TOO_LONG;
			r->flags |= MC_REQ_F_OPAQUE;
			r->opaque_off = off + 1;
			r->opaque_len = (uint8_t)(i - off - 1);
		}
		if (!any)
			first = off;
		any = true;
		last = i;
	}
	l->pos = i;
	if (any) {
		r->args_off = first;
		r->args_len = last - first;
	}
	return MC_OK;
}

/* A `b` key must decode to at least one byte; the key struct remembers to decode it. */
static enum mc_err meta_base64_key(struct pctx *c, struct mc_request *r)
{
	if (!(r->flags & MC_REQ_F_BASE64) || r->key_count == 0)
		return MC_OK;
	struct mc_key *k = &c->out->keys[r->key_first];
	if (b64_decode(c->p + k->off, k->len, NULL) == 0)
		return MC_E_META_BAD_BASE64;
	k->base64 = 1;
	return MC_OK;
}

/* mg md ma <key> <flag>* / ms <key> <datalen> <flag>* + data / me <key> [b] / mn */
static enum mc_err parse_meta(struct pctx *c, struct line *l, struct mc_request *r)
{
	uint32_t off, len;
	uint64_t bytes = 0;
	enum mc_err e;

	if (r->cmd == MC_CMD_MN)
		return next_tok(l, &off, &len) ? MC_E_BAD_ARGUMENTS : MC_OK;
	if ((e = key_next(c, l, r)) != MC_OK)
		return e;
	if (r->cmd == MC_CMD_MS) {
		if (!next_tok(l, &off, &len))
			return MC_E_BAD_ARGUMENTS;
		if (!parse_unum(c->p + off, len, INT32_MAX - 2, &bytes))
			return MC_E_BAD_NUMBER;
	}
	if ((e = meta_flags(c, l, r)) != MC_OK)
		return e;
	if (r->cmd == MC_CMD_ME &&
	    (r->args_len != 0 && !(r->args_len == 1 && c->p[r->args_off] == 'b')))
		return MC_E_META_BAD_FLAG;
	if ((e = meta_base64_key(c, r)) != MC_OK)
		return e;
	return r->cmd == MC_CMD_MS ? data_block(c, l, r, bytes) : MC_OK;
}

typedef enum mc_err (*text_parse_fn)(struct pctx *c, struct line *l, struct mc_request *r);

struct text_cmd {
	const char *name;
	uint8_t len;
	uint8_t cmd;
	uint8_t proto;
	text_parse_fn parse;
};

/* clang-format off */
#define TC(n, c, pr, fn) {n, sizeof(n) - 1, MC_CMD_##c, MC_PROTO_##pr, fn}
/* clang-format on */

/* Most frequent first: the lookup is a scan with a length check. */
static const struct text_cmd text_cmds[] = {
	TC("get", GET, ASCII, parse_retrieval),
	TC("mg", MG, META, parse_meta),
	TC("set", SET, ASCII, parse_storage),
	TC("ms", MS, META, parse_meta),
	TC("gets", GETS, ASCII, parse_retrieval),
	TC("delete", DELETE, ASCII, parse_delete),
	TC("md", MD, META, parse_meta),
	TC("mn", MN, META, parse_meta),
	TC("ma", MA, META, parse_meta),
	TC("me", ME, META, parse_meta),
	TC("gat", GAT, ASCII, parse_retrieval),
	TC("gats", GATS, ASCII, parse_retrieval),
	TC("add", ADD, ASCII, parse_storage),
	TC("replace", REPLACE, ASCII, parse_storage),
	TC("append", APPEND, ASCII, parse_storage),
	TC("prepend", PREPEND, ASCII, parse_storage),
	TC("cas", CAS, ASCII, parse_storage),
	TC("incr", INCR, ASCII, parse_key_num),
	TC("decr", DECR, ASCII, parse_key_num),
	TC("touch", TOUCH, ASCII, parse_key_num),
	TC("version", VERSION, ASCII, parse_keyless),
	TC("verbosity", VERBOSITY, ASCII, parse_keyless),
	TC("stats", STATS, ASCII, parse_keyless),
	TC("flush_all", FLUSH_ALL, ASCII, parse_keyless),
	TC("quit", QUIT, ASCII, parse_keyless),
	TC("shutdown", SHUTDOWN, ASCII, parse_keyless),
	TC("cache_memlimit", CACHE_MEMLIMIT, ASCII, parse_keyless),
	TC("misbehave", MISBEHAVE, ASCII, parse_keyless),
	TC("lru_crawler", LRU_CRAWLER, ASCII, parse_keyless),
	TC("lru", LRU, ASCII, parse_keyless),
	TC("slabs", SLABS, ASCII, parse_keyless),
	TC("watch", WATCH, ASCII, parse_keyless),
	TC("extstore", EXTSTORE, ASCII, parse_keyless),
	TC("debugtime", DEBUGTIME, ASCII, parse_keyless),
};

static const struct text_cmd *text_cmd_find(const uint8_t *s, uint32_t len)
{
	for (size_t i = 0; i < sizeof(text_cmds) / sizeof(text_cmds[0]); i++)
		if (text_cmds[i].len == len && memcmp(text_cmds[i].name, s, len) == 0)
			return &text_cmds[i];
	return NULL;
}

/* One text request at @p pos; on success *next is the first byte after it. */
static enum mc_err parse_text(struct pctx *c, uint32_t pos, uint32_t *next)
{
	const uint8_t *nl = memchr(c->p + pos, '\n', c->len - pos);
	uint32_t off, len;

	if (nl == NULL)
		return MC_E_LINE_UNTERMINATED;
	struct line l = {.p = c->p, .pos = pos, .next = (uint32_t)(nl - c->p) + 1};
	l.end = l.next - 1;
	if (l.end > pos && c->p[l.end - 1] == '\r')
		l.end--;
	if (!next_tok(&l, &off, &len))
		return MC_E_UNKNOWN_COMMAND;
	const struct text_cmd *tc = text_cmd_find(c->p + off, len);
	if (tc == NULL)
		return MC_E_UNKNOWN_COMMAND;
	struct mc_request *r = req_new(c, off, tc->proto, tc->cmd);
	if (r == NULL)
		return MC_E_TOO_MANY_REQUESTS;
	enum mc_err e = tc->parse(c, &l, r);
	if (e != MC_OK) {
		c->out->nkeys = r->key_first; /* drop the failed request's keys */
		return e;
	}
	r->line_len = (r->flags & MC_REQ_F_VALUE) ? r->data_off - off : l.next - off;
	r->len = l.next - off;
	c->out->nreq++;
	*next = l.next;
	return MC_OK;
}

#ifdef __SSE2__
/*
 * meta_flags() for the flags of a one-line `mg` (parse_fast) in one 16-byte window: [pos, end)
 * with p[pos] a space and end + 2 the buffer's length (the line's "\r\n" ends it). True with
 * @p r filled as meta_flags() fills it; false, @p r unchanged, when the flags do not fit the
 * window, or hold a `b` or `O` flag, or anything meta_flags() refuses (it decides then).
 */
static inline bool meta_flags_window(const uint8_t *p, uint32_t pos, uint32_t end,
				     struct mc_request *r)
{
	if (end + 2 < 16 || pos < end + 2 - 16)
		return false;
	uint32_t b = end + 2 - 16;
	__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + b));
	__m128i low = _mm_or_si128(x, _mm_set1_epi8(0x20));
	unsigned span = ((1u << (end - b)) - 1) & ~((1u << (pos - b)) - 1);
	unsigned sp = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8(' ')));
	unsigned ctl = (unsigned)_mm_movemask_epi8(
		_mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1f)), x),
			     _mm_cmpeq_epi8(x, _mm_set1_epi8(0x7f))));
	/* A letter: x | 0x20 within 'a'..'z'. */
	unsigned letter = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(
		_mm_max_epu8(_mm_min_epu8(low, _mm_set1_epi8('z')), _mm_set1_epi8('a')), low));
	unsigned tok = span & ~sp, starts = tok & (sp << 1);

	if ((ctl & span) != 0 || (starts & ~letter) != 0)
		return false;
	if (tok == 0)
		return true;
	if ((unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('b')),
						     _mm_cmpeq_epi8(x, _mm_set1_epi8('O')))) &
	    starts)
		return false;
	if ((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8('q'))) & starts)
		r->flags |= MC_REQ_F_QUIET;
	if ((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8('k'))) & starts)
		r->flags |= MC_REQ_F_KEY_IN_REPLY;
	r->args_off = b + (uint32_t)__builtin_ctz(starts);
	r->args_len = b + 32 - (uint32_t)__builtin_clz(tok) - r->args_off;
	return true;
}
#endif

/* parse_fast() of an `mg` whose flags (from @p e, a space, to the "\r\n" ending @p len) the
 * 16-byte window does not take: meta_flags() decides. Out of line: inlined, its parse
 * context and line cursor cost every datagram parse a stack frame (5 instructions a
 * forwarded request, callgrind). */
static __attribute__((noinline)) bool parse_fast_flags(const uint8_t *p, uint32_t e, uint32_t len,
						       unsigned flags, struct mc_requests *out)
{
	struct pctx c = {.p = p, .len = len, .flags = flags, .out = out};
	struct mc_request *r = &out->req[0];
	/* The key, then flags up to the "\r\n" at the datagram's end. A '\n' before it (where the
	 * full parser would end the line) is a control byte in a flag token or a token that does
	 * not start with a letter: meta_flags() refuses it and the full parser decides. */
	struct line l = {.p = p, .pos = e, .end = len - 2, .next = len};

	if (meta_flags(&c, &l, r) != MC_OK || meta_base64_key(&c, r) != MC_OK) {
		out->nkeys = 0;
		return false;
	}
	out->nreq = 1;
	return true;
}

/*
 * The commonest datagrams in one pass over the key: exactly `get <key>\r\n`, or one
 * `mg <key>[ <flags>]\r\n` line. True with @p out as parse_text() fills it for them; false
 * (out->nreq and nkeys still 0) for anything else, including keys the flags decide on
 * (control bytes), so that the full parser gives the answer and the error. Always inlined: the
 * datagram parse tries it first for every `get` / `mg` (a call and its register saves: ~20
 * instructions).
 */
static inline __attribute__((always_inline)) bool
parse_fast(const uint8_t *p, uint32_t start, uint32_t len, unsigned flags, struct mc_requests *out)
{
	bool mg = p[start] == 'm';
	uint32_t k = start + (mg ? 3 : 4), e;

	if (len - start < 6 || mc_rd16(p + len - 2) != ('\r' << 8 | '\n'))
		return false;
	if (mg ? memcmp(p + start, "mg ", 3) != 0 : memcmp(p + start, "get ", 4) != 0)
		return false;
	e = scan_plain(p, k, len);
	if (e == k || e - k > MC_KEY_MAX)
		return false;
	struct mc_request *r = &out->req[0];
	*r = (struct mc_request){
		.off = start,
		.len = len - start,
		.line_len = len - start,
		.proto = mg ? MC_PROTO_META : MC_PROTO_ASCII,
		.cmd = mg ? MC_CMD_MG : MC_CMD_GET,
		.kind = MC_KIND_READ,
		.key_count = 1,
	};
	out->keys[0] = (struct mc_key){.off = k, .len = (uint16_t)(e - k)};
	out->proto = r->proto;
	if (e == len - 2) {
		out->nreq = out->nkeys = 1;
		return true;
	}
	if (!mg || p[e] != ' ')
		return false;
	out->nkeys = 1;
#ifdef __SSE2__
	if (meta_flags_window(p, e, len - 2, r)) {
		out->nreq = 1;
		return true;
	}
#endif
	return parse_fast_flags(p, e, len, flags, out);
}

/* Parse [start, len) of @p p; offsets stay relative to @p p. @p fast: whether parse_fast() is
 * worth trying (false: the caller tried it). */
static enum mc_err parse_from(const uint8_t *p, uint32_t start, uint32_t len, unsigned flags,
			      struct mc_requests *out, bool fast)
{
	struct pctx c = {.p = p, .len = len, .flags = flags, .out = out};
	uint32_t pos = start;
	enum mc_err e = MC_OK;

	out->nreq = 0;
	out->nkeys = 0;
	out->err_off = start;
	if (start >= len)
		return MC_E_EMPTY;
	if (fast && (p[start] == 'g' || p[start] == 'm') && parse_fast(p, start, len, flags, out))
		return MC_OK;
	bool binary = p[start] == MC_BIN_REQ_MAGIC;
	out->proto = binary ? MC_PROTO_BINARY : MC_PROTO_ASCII;
	while (pos < len) {
		uint32_t next = pos;
		if ((p[pos] == MC_BIN_REQ_MAGIC) != binary)
			e = MC_E_MIXED_PROTOCOLS;
		else if (binary)
			e = mc_parse_binary(p, len, pos, out, &next);
		else
			e = parse_text(&c, pos, &next);
		if (e != MC_OK) {
			out->err_off = pos;
			return e;
		}
		pos = next;
	}
	out->proto = out->req[0].proto;
	return MC_OK;
}

enum mc_err mc_parse_requests_flags(const uint8_t *p, size_t len, unsigned flags,
				    struct mc_requests *out)
{
	if (len > UINT32_MAX) {
		out->err_off = 0;
		return MC_E_TOO_MANY_REQUESTS;
	}
	return parse_from(p, 0, (uint32_t)len, flags, out, true);
}

enum mc_err mc_parse_requests(const uint8_t *p, size_t len, struct mc_requests *out)
{
	return mc_parse_requests_flags(p, len, 0, out);
}

enum mc_err mc_parse_datagram_flags(const uint8_t *p, size_t len, unsigned flags,
				    struct mc_requests *out)
{
	out->err_off = 0;
	out->nreq = 0;
	out->nkeys = 0;
	if (len < MC_FRAME_HDR_LEN)
		return MC_E_FRAME_SHORT;
	frame_read(p, &out->frame);
	if (out->frame.total != 1)
		return MC_E_FRAME_MULTI;
	if (out->frame.seq != 0)
		return MC_E_FRAME_SEQ;
	if (len > UINT32_MAX)
		return MC_E_TOO_MANY_REQUESTS;
	/* The commonest shapes straight away, as parse_from() would find them: a one-line
	 * `get` / `mg` (parse_fast) or one binary GET filling the datagram. */
	if (len > MC_FRAME_HDR_LEN) {
		uint8_t c0 = p[MC_FRAME_HDR_LEN];

		out->err_off = MC_FRAME_HDR_LEN;
		if ((c0 == 'g' || c0 == 'm') &&
		    parse_fast(p, MC_FRAME_HDR_LEN, (uint32_t)len, flags, out))
			return MC_OK;
		if (c0 == MC_BIN_REQ_MAGIC &&
		    mc_parse_binary_get(p, (uint32_t)len, MC_FRAME_HDR_LEN, out))
			return MC_OK;
	}
	return parse_from(p, MC_FRAME_HDR_LEN, (uint32_t)len, flags, out, false);
}

bool mc_match_single_get(const uint8_t *p, uint32_t len, uint16_t *koff, uint16_t *klen)
{
	uint32_t fr, e, k;

	/* seq 0, total 1 (bytes 2..5, big-endian), as mc_parse_datagram_flags() wants. */
	if (len < MC_FRAME_HDR_LEN + 6)
		return false;
	memcpy(&fr, p + 2, 4);
	if (fr != UINT32_C(0x01000000))
		return false;
	if (p[MC_FRAME_HDR_LEN] == MC_BIN_REQ_MAGIC) {
		const uint8_t *h = p + MC_FRAME_HDR_LEN;
		uint32_t kl;

		/* mc_parse_binary_get()'s shape for the two opcodes that are not quiet. */
		if (len - MC_FRAME_HDR_LEN < MC_BIN_HDR_LEN || (h[1] != MC_BIN_GET && h[1] != MC_BIN_GETK) ||
		    h[4] != 0 || h[5] != 0)
			return false;
		kl = mc_rd16(h + 2);
		if (kl == 0 || kl > MC_KEY_MAX || mc_rd32(h + 8) != kl ||
		    len - MC_FRAME_HDR_LEN - MC_BIN_HDR_LEN != kl)
			return false;
		*koff = MC_FRAME_HDR_LEN + MC_BIN_HDR_LEN;
		*klen = (uint16_t)kl;
		return true;
	}
	/* parse_fast()'s shapes: "\r\n" ends the datagram, "get " or "mg ", a plain key. */
	if (len - MC_FRAME_HDR_LEN < 6 || mc_rd16(p + len - 2) != ('\r' << 8 | '\n'))
		return false;
	memcpy(&fr, p + MC_FRAME_HDR_LEN, 4);
	if (fr == (uint32_t)('g' | 'e' << 8 | 't' << 16 | ' ' << 24))
		k = MC_FRAME_HDR_LEN + 4;
	else if ((fr & 0xffffffu) == (uint32_t)('m' | 'g' << 8 | ' ' << 16))
		k = MC_FRAME_HDR_LEN + 3;
	else
		return false;
	e = scan_plain(p, k, len);
	if (e == k || e - k > MC_KEY_MAX)
		return false;
	*koff = (uint16_t)k;
	*klen = (uint16_t)(e - k);
	if (e == len - 2)
		return true;
	if (k != MC_FRAME_HDR_LEN + 3 || p[e] != ' ')
		return false;
#ifdef __SSE2__
	struct mc_request r = {.flags = 0};

	/* The window refuses `b` and `O`; a `q` makes the read quiet (the general path's). */
	return meta_flags_window(p, e, len - 2, &r) && !(r.flags & MC_REQ_F_QUIET);
#else
	return false;
#endif
}

enum mc_err mc_parse_datagram(const uint8_t *p, size_t len, struct mc_requests *out)
{
	return mc_parse_datagram_flags(p, len, 0, out);
}
