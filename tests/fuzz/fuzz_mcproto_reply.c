/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for lib/mcproto's streaming reply parser.
 *
 * Input: records of a 2-byte big-endian length and that many bytes (the format of
 * tests/data/mcproto/<case>.reply). The first record is a request datagram (frame header +
 * request) whose parse, when it succeeds, sets the reply expectation; the others are reply
 * datagrams, each copied into a buffer of its own exact size that is freed once the parser has
 * moved on, so reading a stale or out-of-bounds byte is an ASan report.
 *
 * Checks: every pointer an event hands out lies inside the current datagram or the parser's
 * line buffer; value pieces add up to the announced length; keys are at most 250 bytes; and the
 * reply payloads as one unframed stream give the same items whether fed whole or split at an
 * arbitrary point.
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

static int inside(const uint8_t *x, size_t n, const uint8_t *lo, size_t len)
{
	return x >= lo && n <= len && (size_t)(x - lo) <= len - n;
}

/* A digest of the item stream, to compare two ways of feeding the same bytes. */
struct digest {
	uint64_t items, data_bytes;
	uint64_t h;
	int err;
};

static void mix(struct digest *d, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		d->h = (d->h ^ p[i]) * 0x100000001b3ull;
}

/* Drain events from the datagram [p, p + n); check every pointer. */
static int drain(struct mc_reply_parser *rp, const uint8_t *p, size_t n, struct digest *d,
		 uint64_t *want, uint64_t *got)
{
	struct mc_reply_event ev;
	int rc;

	while ((rc = mc_reply_next(rp, &ev)) > 0) {
		if (rc == MC_EV_ITEM) {
			CHECK(*got == *want); /* the previous value was complete */
			CHECK(ev.type < MC_REPLY_COUNT && ev.result <= MC_RES_INFO);
			CHECK(inside(ev.head, ev.head_len, p, n) ||
			      inside(ev.head, ev.head_len, rp->line, sizeof(rp->line)));
			CHECK(ev.head_len >= 1 && ev.head_len <= MC_REPLY_LINE_MAX);
			if (ev.key) {
				CHECK(ev.key_len <= MC_KEY_MAX);
				CHECK(inside(ev.key, ev.key_len, ev.head, ev.head_len));
			}
			if (ev.mopaque) {
				CHECK(ev.opaque_len <= MC_OPAQUE_MAX);
				CHECK(inside(ev.mopaque, ev.opaque_len, ev.head, ev.head_len));
			}
			d->items++;
			mix(d, &ev.type, 1);
			mix(d, ev.head, ev.head_len);
			*want = ev.value_len;
			*got = 0;
		} else {
			CHECK(rc == MC_EV_DATA);
			CHECK(ev.data_len > 0 && inside(ev.data, ev.data_len, p, n));
			*got += ev.data_len;
			CHECK(*got <= *want);
			CHECK(ev.last == (*got == *want));
			d->data_bytes += ev.data_len;
			mix(d, ev.data, ev.data_len);
		}
	}
	if (rc < 0) {
		CHECK(-rc > 0 && -rc < MC_E_COUNT);
		d->err = 1;
	}
	return rc;
}

/* Feed [s, s + n) unframed in two pieces split at k, each in an exact-size copy. */
static void unframed(const uint8_t *s, size_t n, size_t k, struct digest *d)
{
	static struct mc_reply_parser rp;
	uint64_t want = 0, got = 0;
	size_t cut[3] = {0, k, n};

	mc_reply_init(&rp);
	for (int i = 0; i < 2; i++) {
		size_t len = cut[i + 1] - cut[i];
		uint8_t *c = malloc(len ? len : 1);
		CHECK(c != NULL);
		memcpy(c, s + cut[i], len);
		mc_reply_feed(&rp, c, len);
		int rc = drain(&rp, c, len, d, &want, &got);
		free(c);
		if (rc < 0)
			return;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct mc_reply_parser rp;
	static struct mc_requests reqs;
	static uint8_t stream[1 << 17];
	size_t pos = 0, slen = 0;
	uint64_t want = 0, got = 0;
	int first = 1, failed = 0;
	struct digest framed = {0};

	mc_reply_init(&rp);
	while (size - pos >= 2) {
		size_t n = (size_t)data[pos] << 8 | data[pos + 1];
		pos += 2;
		if (n > size - pos)
			n = size - pos;
		const uint8_t *rec = data + pos;
		pos += n;
		if (first) {
			first = 0;
			if (mc_parse_datagram(rec, n, &reqs) == MC_OK)
				mc_reply_expect(&rp, &reqs);
			continue;
		}
		uint8_t *d = malloc(n ? n : 1);
		CHECK(d != NULL);
		memcpy(d, rec, n);
		enum mc_err e = mc_reply_feed_datagram(&rp, d, n);
		if (e == MC_OK && !failed) {
			if (n > MC_FRAME_HDR_LEN && slen + n - 8 <= sizeof(stream)) {
				memcpy(stream + slen, d + 8, n - 8);
				slen += n - 8;
			}
			if (drain(&rp, d + 8, n - 8, &framed, &want, &got) < 0)
				failed = 1;
			(void)mc_reply_done(&rp);
		} else {
			CHECK(e == MC_E_FRAME_SHORT || e == MC_E_REPLY_FRAME_ORDER || failed);
		}
		free(d);
	}

	/* The accepted payloads as one stream: whole vs split give the same items. */
	if (slen) {
		struct digest whole = {0}, split = {0};
		unframed(stream, slen, slen, &whole);
		unframed(stream, slen, (size_t)(framed.h % (slen + 1)), &split);
		CHECK(whole.err == split.err);
		if (!whole.err) {
			CHECK(whole.items == split.items && whole.data_bytes == split.data_bytes);
			CHECK(whole.h == split.h);
		}
	}
	return 0;
}
