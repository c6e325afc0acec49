/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Capping the expiry of storage requests (mc_cap_ttl): a copy of a request datagram whose
 * writes carry at most a given TTL, for writes the router sends to a stand-in node while the
 * owner is down. Works on a parse the caller made (mcproto.c, binary.c); calls nothing else.
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

static void put_u32(struct ttl_out *o, uint32_t v)
{
	char b[16];
	int n = snprintf(b, sizeof(b), "%u", v);

	put(o, b, (size_t)n);
}

/* The expiry @p t[0..n) (decimal text) needs capping to @p ttl: none (0), or more than @p ttl
 * seconds (relative), or an absolute time (above 30 days: all of those are capped, the router
 * keeps no clock of the node's). A negative one (already expired) stays. */
static bool text_needs_cap(const uint8_t *t, size_t n, uint32_t ttl)
{
	uint64_t v = 0;

	if (n > 0 && t[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++) {
		if (t[i] < '0' || t[i] > '9')
			return false; /* not a number: the node refuses it anyway */
		v = v > UINT32_MAX ? v : v * 10 + (uint64_t)(t[i] - '0');
	}
	return v == 0 || v > ttl;
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

/* Copy @p p from *from to @p upto, then @p ttl in decimal; *from moves to @p resume. */
static void splice_ttl(struct ttl_out *o, const uint8_t *p, size_t *from, size_t upto,
		       size_t resume, uint32_t ttl, const char *prefix)
{
	put(o, p + *from, upto - *from);
	put(o, prefix, strlen(prefix));
	put_u32(o, ttl);
	*from = resume;
}

/* ASCII set/add/replace/cas: `cmd key flags exptime bytes ...`, exptime is token 3. */
static void ascii_storage(struct ttl_out *o, const uint8_t *p, size_t *from,
			  const struct mc_request *rq, uint32_t ttl)
{
	size_t t, n;

	if (token_at(p, rq->off, line_body_end(p, rq), 3, &t, &n) && text_needs_cap(p + t, n, ttl))
		splice_ttl(o, p, from, t, t + n, ttl, "");
}

/* Meta ms: the `T` flag's value, or ` T<ttl>` added at the end of the line. */
static void meta_set(struct ttl_out *o, const uint8_t *p, size_t *from, const struct mc_request *rq,
		     uint32_t ttl)
{
	size_t end = rq->args_off + rq->args_len, t, n;

	for (unsigned k = 0; rq->args_len != 0 && token_at(p, rq->args_off, end, k, &t, &n); k++) {
		if (p[t] != 'T')
			continue;
		if (text_needs_cap(p + t + 1, n - 1, ttl))
			splice_ttl(o, p, from, t + 1, t + n, ttl, "");
		return;
	}
	end = line_body_end(p, rq);
	splice_ttl(o, p, from, end, end, ttl, " T");
}

/* Binary SET/ADD/REPLACE (and quiet forms): extras are flags (4) and expiration (4 bytes,
 * big-endian); rewritten in place, the length does not change. */
static void binary_storage(struct ttl_out *o, const uint8_t *p, size_t *from,
			   const struct mc_request *rq, uint32_t ttl)
{
	size_t at = rq->args_off + 4;
	uint32_t v;
	uint8_t b[4] = {(uint8_t)(ttl >> 24), (uint8_t)(ttl >> 16), (uint8_t)(ttl >> 8),
			(uint8_t)ttl};

	if (rq->args_len != 8)
		return;
	v = (uint32_t)p[at] << 24 | (uint32_t)p[at + 1] << 16 | (uint32_t)p[at + 2] << 8 |
	    p[at + 3];
	if (v != 0 && v <= ttl)
		return;
	put(o, p + *from, at - *from);
	put(o, b, 4);
	*from = at + 4;
}

static bool binary_storage_op(uint8_t op)
{
	switch (op) {
	case MC_BIN_SET:
	case MC_BIN_ADD:
	case MC_BIN_REPLACE:
	case MC_BIN_SETQ:
	case MC_BIN_ADDQ:
	case MC_BIN_REPLACEQ:
		return true;
	default:
		return false;
	}
}

size_t mc_cap_ttl(const uint8_t *p, size_t len, const struct mc_requests *r, uint32_t ttl,
		  uint8_t *out, size_t cap)
{
	struct ttl_out o = {out, cap, 0, true};
	size_t from = 0;

	for (uint16_t i = 0; i < r->nreq; i++) {
		const struct mc_request *rq = &r->req[i];

		if (rq->proto == MC_PROTO_BINARY) {
			if (binary_storage_op(rq->opcode))
				binary_storage(&o, p, &from, rq, ttl);
		} else if (rq->cmd == MC_CMD_MS) {
			meta_set(&o, p, &from, rq, ttl);
		} else if (rq->cmd == MC_CMD_SET || rq->cmd == MC_CMD_ADD ||
			   rq->cmd == MC_CMD_REPLACE || rq->cmd == MC_CMD_CAS) {
			ascii_storage(&o, p, &from, rq, ttl);
		}
	}
	put(&o, p + from, len - from);
	return o.ok ? o.len : 0;
}
