/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Expiry times as memcached reads them, and the router's only writer of them.
 *
 * memcached takes an exptime up to 30 days (REALTIME_MAXDELTA, 2,592,000 s) as seconds from
 * now and anything above as an absolute Unix time; a negative one, or an absolute one not
 * after its start, expires at once. So a life longer than 30 days must be written as an
 * absolute time (mc_exptime_write), and a client's absolute time must be read against a clock
 * before it can be compared with a TTL (mc_exptime_read). Every exptime the router puts on
 * the wire (warm-up fills, hot-key copies and fills, stand-in writes) comes from here.
 *
 * Capping (mc_cap_ttl): a copy of a request datagram whose expiries end within a given TTL,
 * for writes the router sends to a stand-in node while the owner is down. Works on a parse
 * the caller made (mcproto.c, binary.c); calls nothing else.
 */

#include <stdio.h>
#include <string.h>

#include "mcproto.h"

/* Appends to a bounded output buffer; ok turns false (and stays) once something did not fit. */
struct ttl_out {
	uint8_t *p;
	size_t cap;
	size_t len;
	bool ok;
};

static void put(struct ttl_out *o, const void *s, size_t n)
{
	if (!o->ok || n > o->cap - o->len) {
		o->ok = false;
		return;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
}

/* ---- quiet deletes the router sends on its own (clean-ups, stand-ins, moved keys) ---- */

/* memcached's text parser ends a line at '\n' and splits it on ' ' only: any other byte,
 * control bytes and DEL included, is part of the key token (memcaslap's keys carry them;
 * checked on memcached 1.6.18). NUL and '\r' are kept out to be safe. */
bool mc_delete_is_text(const uint8_t *k, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (k[i] == ' ' || k[i] == '\n' || k[i] == '\r' || k[i] == '\0')
			return false;
	return true;
}

size_t mc_delete_line(const uint8_t *key, size_t len, char *out, size_t cap)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o;

	if (len == 0 || len > MC_KEY_MAX)
		return 0;
	if (mc_delete_is_text(key, len)) {
		if (len + 17 > cap) /* "delete " + key + " noreply\r\n" */
			return 0;
		memcpy(out, "delete ", 7);
		memcpy(out + 7, key, len);
		memcpy(out + 7 + len, " noreply\r\n", 10);
		return len + 17;
	}
	if (4 * ((len + 2) / 3) > MC_KEY_MAX || 3 + 4 * ((len + 2) / 3) + 6 > cap)
		return 0; /* "md " + base64 + " b q\r\n" */
	memcpy(out, "md ", 3);
	o = 3;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)key[i] << 16 | (i + 1 < len ? (uint32_t)key[i + 1] << 8 : 0) |
			     (i + 2 < len ? key[i + 2] : 0);

		out[o++] = t[v >> 18 & 63];
		out[o++] = t[v >> 12 & 63];
		out[o++] = i + 1 < len ? t[v >> 6 & 63] : '=';
		out[o++] = i + 2 < len ? t[v & 63] : '=';
	}
	memcpy(out + o, " b q\r\n", 6);
	return o + 6;
}

uint32_t mc_exptime_write(uint64_t secs, uint64_t now_unix)
{
	if (secs <= MC_EXPTIME_REL_MAX)
		return (uint32_t)secs;
	if (now_unix == 0)
		return MC_EXPTIME_REL_MAX;
	if (secs > MC_EXPTIME_MAX || now_unix + secs > MC_EXPTIME_MAX)
		return MC_EXPTIME_MAX; /* 2038: the most memcached's text parser takes */
	return (uint32_t)(now_unix + secs);
}

enum mc_exptime_kind mc_exptime_read_u32(uint32_t v, uint64_t now_unix, uint64_t *left)
{
	if (v == 0)
		return MC_EXPTIME_NONE;
	if (v <= MC_EXPTIME_REL_MAX) {
		*left = v;
		return MC_EXPTIME_LEFT;
	}
	if (now_unix == 0) { /* no clock: absolute, so more than 30 days from the epoch's view */
		*left = (uint64_t)MC_EXPTIME_REL_MAX + 1;
		return MC_EXPTIME_LEFT;
	}
	if (v <= now_unix)
		return MC_EXPTIME_EXPIRED;
	*left = v - now_unix;
	return MC_EXPTIME_LEFT;
}

enum mc_exptime_kind mc_exptime_read(const uint8_t *t, size_t n, uint64_t now_unix,
				     uint64_t *left)
{
	uint64_t v = 0;
	bool neg = false;
	size_t i = 0;

	if (n > 0 && (t[0] == '-' || t[0] == '+'))
		neg = t[i++] == '-';
	if (i == n)
		return MC_EXPTIME_BAD;
	for (; i < n; i++) {
		if (t[i] < '0' || t[i] > '9')
			return MC_EXPTIME_BAD;
		v = v * 10 + (uint64_t)(t[i] - '0');
		if (v > (uint64_t)MC_EXPTIME_MAX + neg)
			return MC_EXPTIME_BAD; /* memcached: "bad command line format" */
	}
	if (neg)
		return v == 0 ? MC_EXPTIME_NONE : MC_EXPTIME_EXPIRED;
	return mc_exptime_read_u32((uint32_t)v, now_unix, left);
}

/* What the exptime @p t[0..n) becomes under cap @p ttl: false when it stays; else *out (a
 * decimal number, or "-1" for an absolute time already past). */
static bool text_cap(const uint8_t *t, size_t n, uint32_t ttl, uint64_t now_unix, char *out,
		     size_t cap)
{
	uint64_t left = 0;

	switch (mc_exptime_read(t, n, now_unix, &left)) {
	case MC_EXPTIME_BAD:
		return false; /* the node refuses the request: nothing to cap */
	case MC_EXPTIME_EXPIRED:
		if (n > 0 && t[0] == '-')
			return false;
		snprintf(out, cap, "-1"); /* past by our clock: the node's may be behind */
		return true;
	case MC_EXPTIME_LEFT:
		if (left <= ttl)
			return false;
		/* fall through */
	case MC_EXPTIME_NONE:
		break;
	}
	snprintf(out, cap, "%u", mc_exptime_write(ttl, now_unix));
	return true;
}

/* Start and length of token @p idx (0-based, separated by one or more spaces) of the text
 * command line [p + off, p + end). @return false when there is no such token. */
static bool token_at(const uint8_t *p, size_t off, size_t end, unsigned idx, size_t *t, size_t *n)
{
	size_t i = off;

	for (unsigned k = 0;; k++) {
		while (i < end && p[i] == ' ')
			i++;
		if (i >= end || p[i] == '\r' || p[i] == '\n')
			return false;
		*t = i;
		while (i < end && p[i] != ' ' && p[i] != '\r' && p[i] != '\n')
			i++;
		*n = i - *t;
		if (k == idx)
			return true;
	}
}

/* Where the command line of @p rq ends before its "\r\n" (or bare "\n"). */
static size_t line_body_end(const uint8_t *p, const struct mc_request *rq)
{
	size_t e = rq->off + rq->line_len;

	if (e > rq->off && p[e - 1] == '\n')
		e--;
	if (e > rq->off && p[e - 1] == '\r')
		e--;
	return e;
}

/* Copy @p p from *from to @p upto, then @p prefix and @p text; *from moves to @p resume. */
static void splice(struct ttl_out *o, const uint8_t *p, size_t *from, size_t upto, size_t resume,
		   const char *prefix, const char *text)
{
	put(o, p + *from, upto - *from);
	put(o, prefix, strlen(prefix));
	put(o, text, strlen(text));
	*from = resume;
}

/* The text exptime token at [t, t + n) capped in place (when it needs it). */
static void cap_token(struct ttl_out *o, const uint8_t *p, size_t *from, size_t t, size_t n,
		      uint32_t ttl, uint64_t now_unix)
{
	char v[16];

	if (text_cap(p + t, n, ttl, now_unix, v, sizeof(v)))
		splice(o, p, from, t, t + n, "", v);
}

/* ASCII set/add/replace/cas: `cmd key flags exptime bytes ...` (token 3); touch: `touch key
 * exptime` (token 2); gat/gats: `gat exptime key...` (the parser's args). */
static void ascii_expiry(struct ttl_out *o, const uint8_t *p, size_t *from,
			 const struct mc_request *rq, uint32_t ttl, uint64_t now_unix)
{
	size_t t, n;

	if (rq->cmd == MC_CMD_GAT || rq->cmd == MC_CMD_GATS) {
		if (rq->args_len != 0)
			cap_token(o, p, from, rq->args_off, rq->args_len, ttl, now_unix);
		return;
	}
	if (token_at(p, rq->off, line_body_end(p, rq), rq->cmd == MC_CMD_TOUCH ? 2 : 3, &t, &n))
		cap_token(o, p, from, t, n, ttl, now_unix);
}

/* Meta ms, mg, ma: the values of the `T` (TTL) and `N` (vivify TTL) flags capped; ms without `T` gets
 * ` T<ttl>` at the end of the line (its item would live for ever). */
static void meta_expiry(struct ttl_out *o, const uint8_t *p, size_t *from,
			const struct mc_request *rq, uint32_t ttl, uint64_t now_unix)
{
	size_t end = rq->args_off + rq->args_len, t, n;
	bool have_t = false;
	char v[16];

	for (unsigned k = 0; rq->args_len != 0 && token_at(p, rq->args_off, end, k, &t, &n); k++) {
		if (p[t] != 'T' && p[t] != 'N')
			continue;
		have_t |= p[t] == 'T';
		cap_token(o, p, from, t + 1, n - 1, ttl, now_unix);
	}
	if (have_t || rq->cmd != MC_CMD_MS)
		return;
	end = line_body_end(p, rq);
	snprintf(v, sizeof(v), "%u", mc_exptime_write(ttl, now_unix));
	splice(o, p, from, end, end, " T", v);
}

/* Binary SET/ADD/REPLACE (and quiet forms): extras are flags (4) and expiration (4 bytes,
 * big-endian); TOUCH, GAT*: expiration (4). Rewritten in place, the length does not change. */
static void binary_expiry(struct ttl_out *o, const uint8_t *p, size_t *from,
			  const struct mc_request *rq, uint32_t ttl, uint64_t now_unix)
{
	bool storage = rq->cmd != MC_CMD_TOUCH && rq->cmd != MC_CMD_GAT;
	size_t at = rq->args_off + (storage ? 4 : 0);
	uint64_t left = 0;
	uint32_t v, c;

	if (rq->args_len != (storage ? 8 : 4))
		return;
	v = (uint32_t)p[at] << 24 | (uint32_t)p[at + 1] << 16 | (uint32_t)p[at + 2] << 8 |
	    p[at + 3];
	switch (mc_exptime_read_u32(v, now_unix, &left)) {
	case MC_EXPTIME_EXPIRED:
		c = MC_EXPTIME_PAST; /* binary has no negative: absolute 1970 */
		break;
	case MC_EXPTIME_LEFT:
		if (left <= ttl)
			return;
		/* fall through */
	default:
		c = mc_exptime_write(ttl, now_unix);
		break;
	}
	uint8_t b[4] = {(uint8_t)(c >> 24), (uint8_t)(c >> 16), (uint8_t)(c >> 8), (uint8_t)c};

	put(o, p + *from, at - *from);
	put(o, b, 4);
	*from = at + 4;
}

static bool binary_expiry_op(uint8_t op)
{
	switch (op) {
	case MC_BIN_SET:
	case MC_BIN_ADD:
	case MC_BIN_REPLACE:
	case MC_BIN_SETQ:
	case MC_BIN_ADDQ:
	case MC_BIN_REPLACEQ:
	case MC_BIN_TOUCH:
	case MC_BIN_GAT:
	case MC_BIN_GATQ:
	case MC_BIN_GATK:
	case MC_BIN_GATKQ:
		return true;
	default:
		return false;
	}
}

/* How request @p rq may set an expiry: 0 not at all, 1 ASCII, 2 meta, 3 binary. */
static int expiry_form(const uint8_t *p, const struct mc_request *rq)
{
	size_t end = rq->args_off + rq->args_len, t, n;

	if (rq->proto == MC_PROTO_BINARY)
		return binary_expiry_op(rq->opcode) ? 3 : 0;
	switch (rq->cmd) {
	case MC_CMD_SET:
	case MC_CMD_ADD:
	case MC_CMD_REPLACE:
	case MC_CMD_CAS:
	case MC_CMD_TOUCH:
	case MC_CMD_GAT:
	case MC_CMD_GATS:
		return 1;
	case MC_CMD_MS:
		return 2;
	case MC_CMD_MG:
	case MC_CMD_MA:
		for (unsigned k = 0; rq->args_len != 0 && token_at(p, rq->args_off, end, k, &t, &n);
		     k++)
			if (p[t] == 'T' || p[t] == 'N')
				return 2;
		return 0;
	default:
		return 0;
	}
}

bool mc_sets_expiry(const uint8_t *p, const struct mc_requests *r)
{
	for (uint16_t i = 0; i < r->nreq; i++)
		if (expiry_form(p, &r->req[i]) != 0)
			return true;
	return false;
}

size_t mc_cap_ttl(const uint8_t *p, size_t len, const struct mc_requests *r, uint32_t ttl,
		  uint64_t now_unix, uint8_t *out, size_t cap)
{
	struct ttl_out o = {out, cap, 0, true};
	size_t from = 0;

	for (uint16_t i = 0; i < r->nreq; i++) {
		const struct mc_request *rq = &r->req[i];

		switch (expiry_form(p, rq)) {
		case 1:
			ascii_expiry(&o, p, &from, rq, ttl, now_unix);
			break;
		case 2:
			meta_expiry(&o, p, &from, rq, ttl, now_unix);
			break;
		case 3:
			binary_expiry(&o, p, &from, rq, ttl, now_unix);
			break;
		default:
			break;
		}
	}
	put(&o, p + from, len - from);
	return o.ok ? o.len : 0;
}
