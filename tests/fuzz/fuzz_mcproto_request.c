/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for lib/mcproto's request parser. Beyond "no crash, no sanitizer report" it
 * checks what the router relies on: every offset lies inside the buffer, requests tile it in
 * order, keys obey the key rules and lie inside their request, base64 keys decode, and the
 * datagram entry point agrees with the raw one shifted by the frame header.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcproto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                 \
	do {                     \
		if (!(c))        \
			abort(); \
	} while (0)

static int within(uint64_t off, uint64_t len, uint64_t lo, uint64_t hi)
{
	return off >= lo && off + len <= hi;
}

static void check_requests(const uint8_t *p, size_t size, size_t start, const struct mc_requests *r)
{
	uint64_t end = start;
	unsigned keys = 0;
	uint8_t dec[MC_KEY_MAX];

	CHECK(r->nreq >= 1 && r->nreq <= MC_MAX_REQUESTS);
	CHECK(r->nkeys <= MC_MAX_KEYS);
	CHECK(r->proto == r->req[0].proto);
	for (unsigned i = 0; i < r->nreq; i++) {
		const struct mc_request *q = &r->req[i];
		CHECK(q->off >= end); /* in order, not overlapping (text may skip spaces) */
		CHECK(within(q->off, q->len, start, size));
		CHECK(q->line_len <= q->len && q->line_len > 0);
		CHECK(q->cmd < MC_CMD_COUNT && q->kind < MC_KIND_COUNT);
		CHECK(strcmp(mc_cmd_name((enum mc_cmd)q->cmd), "unknown") != 0);
		CHECK((q->kind == MC_KIND_KEYLESS) == (q->key_count == 0));
		if (q->flags & MC_REQ_F_VALUE)
			CHECK(within(q->data_off, q->data_len, q->off + q->line_len,
				     q->off + q->len));
		if (q->args_len)
			CHECK(within(q->args_off, q->args_len, q->off, q->off + q->len));
		if (q->flags & MC_REQ_F_OPAQUE) {
			CHECK(q->proto == MC_PROTO_META && q->opaque_len <= MC_OPAQUE_MAX);
			CHECK(within(q->opaque_off, q->opaque_len, q->off, q->off + q->line_len));
		}
		CHECK(q->key_first == keys);
		for (unsigned k = q->key_first; k < (unsigned)q->key_first + q->key_count; k++) {
			const struct mc_key *key = &r->keys[k];
			CHECK(k < r->nkeys && key->req == i);
			CHECK(key->len >= 1 && key->len <= MC_KEY_MAX);
			CHECK(within(key->off, key->len, q->off, q->off + q->line_len));
			if (q->proto != MC_PROTO_BINARY)
				CHECK(mc_key_check(p + key->off, key->len) == MC_OK);
			size_t n = mc_key_decode(p, key, dec);
			CHECK(n >= 1 && n <= MC_KEY_MAX);
			CHECK(key->base64 == !!(q->flags & MC_REQ_F_BASE64));
			if (!key->base64)
				CHECK(n == key->len && memcmp(dec, p + key->off, n) == 0);
		}
		keys += q->key_count;
		end = (uint64_t)q->off + q->len;
	}
	CHECK(keys == r->nkeys);
	CHECK(end == size); /* every byte belongs to a request */
}

/* A datagram's parse @p x and its body's @p y, field by field (padding bytes may differ):
 * offsets differ by @p h. */
static int same_requests_shifted(const struct mc_requests *x, const struct mc_requests *y,
				 uint32_t h)
{
	if (x->nreq != y->nreq || x->nkeys != y->nkeys || x->proto != y->proto)
		return 0;
	for (unsigned i = 0; i < x->nreq; i++) {
		const struct mc_request *a = &x->req[i], *b = &y->req[i];

		if (a->off != b->off + h || a->len != b->len || a->line_len != b->line_len ||
		    ((a->flags & MC_REQ_F_VALUE) && a->data_off != b->data_off + h) ||
		    a->data_len != b->data_len ||
		    ((a->args_len != 0 || b->args_len != 0) && a->args_off != b->args_off + h) ||
		    a->args_len != b->args_len ||
		    (a->proto == MC_PROTO_BINARY && a->opaque != b->opaque) ||
		    a->opaque_len != b->opaque_len ||
		    (a->opaque_len != 0 && a->opaque_off != b->opaque_off + h) ||
		    a->proto != b->proto || a->cmd != b->cmd || a->kind != b->kind ||
		    a->flags != b->flags || a->opcode != b->opcode ||
		    a->key_first != b->key_first || a->key_count != b->key_count)
			return 0;
	}
	for (unsigned i = 0; i < x->nkeys; i++)
		if (x->keys[i].off != y->keys[i].off + h || x->keys[i].len != y->keys[i].len ||
		    x->keys[i].req != y->keys[i].req || x->keys[i].base64 != y->keys[i].base64)
			return 0;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct mc_requests a, b;
	enum mc_err ea, eb;

	ea = mc_parse_datagram(data, size, &a);
	CHECK((unsigned)ea < MC_E_COUNT);
	CHECK(strcmp(mc_err_name(ea), "unknown") != 0);
	if (ea == MC_OK) {
		check_requests(data, size, MC_FRAME_HDR_LEN, &a);
		if (mc_reply_is_one_message(&a))
			CHECK(a.nreq == 1 && a.nkeys <= 1 && !(a.req[0].flags & MC_REQ_F_QUIET));
	} else
		CHECK(a.err_off <= size);

	/* The same bytes without the frame header: same verdict, offsets shifted by 8. */
	if (size >= MC_FRAME_HDR_LEN && (ea == MC_OK || a.err_off >= MC_FRAME_HDR_LEN)) {
		eb = mc_parse_requests(data + MC_FRAME_HDR_LEN, size - MC_FRAME_HDR_LEN, &b);
		CHECK(eb == ea);
		if (eb == MC_OK) {
			CHECK(a.nreq == b.nreq && a.nkeys == b.nkeys);
			for (unsigned i = 0; i < a.nkeys; i++)
				CHECK(a.keys[i].off == b.keys[i].off + MC_FRAME_HDR_LEN &&
				      a.keys[i].len == b.keys[i].len);
		} else {
			CHECK(a.err_off == b.err_off + MC_FRAME_HDR_LEN);
		}
	}
	/*
	 * Keys with control characters allowed (as memcached does): whatever the strict parse
	 * accepts is accepted the same way; anything accepted only here differs by key bytes.
	 */
	eb = mc_parse_datagram_flags(data, size, MC_PARSE_CTL_KEYS, &b);
	CHECK((unsigned)eb < MC_E_COUNT);
	if (ea == MC_OK) {
		CHECK(eb == MC_OK && a.nreq == b.nreq && a.nkeys == b.nkeys);
		for (unsigned i = 0; i < a.nkeys; i++)
			CHECK(a.keys[i].off == b.keys[i].off && a.keys[i].len == b.keys[i].len);
	}
	if (eb == MC_OK) {
		for (unsigned i = 0; i < b.nkeys; i++) {
			CHECK(b.keys[i].len >= 1 && b.keys[i].len <= MC_KEY_MAX);
			CHECK((uint64_t)b.keys[i].off + b.keys[i].len <= size);
			if (b.proto != MC_PROTO_BINARY)
				CHECK(memchr(data + b.keys[i].off, ' ', b.keys[i].len) == NULL);
		}
	}
	/* The datagram parse's shortcuts for the commonest shapes (one get / mg line, one binary
	 * GET) say exactly what the general parser says of the same body, field for field. */
	if (size > MC_FRAME_HDR_LEN && eb == MC_OK) {
		static struct mc_requests c;

		CHECK(mc_parse_requests_flags(data + MC_FRAME_HDR_LEN, size - MC_FRAME_HDR_LEN,
					      MC_PARSE_CTL_KEYS, &c) == MC_OK);
		CHECK(same_requests_shifted(&b, &c, MC_FRAME_HDR_LEN));
	}
	/* And the whole input as a raw request buffer. */
	eb = mc_parse_requests(data, size, &b);
	CHECK((unsigned)eb < MC_E_COUNT);
	if (eb == MC_OK)
		check_requests(data, size, 0, &b);
	return 0;
}
