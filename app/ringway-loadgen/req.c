/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Keys, their distribution, and requests in the three protocols. Everything a request needs
 * is prepared at start-up (the zipf CDF, the value bytes, the value length as text); writing
 * one is a few copies and the key's decimal digits.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>

#include "loadgen.h"

static uint16_t decimal_digits(uint32_t v)
{
	uint16_t d = 1;

	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

/* Zipf over ranks 1..n with exponent s: P(i) proportional to 1 / i^s; key index = rank - 1.
 * Vose's alias method: scale the probabilities to mean 1, then pair each entry below 1 with
 * one above 1 that tops it up, so every entry holds at most two outcomes. */
static int zipf_alias(struct lg_keys *k, double s)
{
	uint32_t n = k->n, ns = 0, nl = 0, *work = malloc(sizeof(uint32_t) * n);
	double *p = malloc(sizeof(double) * n), sum = 0;
	int rc = 0;

	k->alias = malloc(sizeof(*k->alias) * n);
	if (work == NULL || p == NULL || k->alias == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		p[i] = 1.0 / pow((double)i + 1.0, s);
		sum += p[i];
	}
	/* work[0..ns) holds the small entries, work[n-nl..n) the large ones. */
	for (uint32_t i = 0; i < n; i++) {
		p[i] = p[i] * n / sum;
		if (p[i] < 1.0)
			work[ns++] = i;
		else
			work[n - ++nl] = i;
	}
	while (ns > 0 && nl > 0) {
		uint32_t sm = work[--ns], lg = work[n - nl--];

		k->alias[sm].thresh = (uint32_t)(p[sm] * 4294967296.0);
		k->alias[sm].alias = lg;
		p[lg] -= 1.0 - p[sm];
		if (p[lg] < 1.0)
			work[ns++] = lg;
		else
			work[n - ++nl] = lg;
	}
	/* What is left has probability 1 up to rounding: always itself. */
	while (ns > 0) {
		uint32_t i = work[--ns];

		k->alias[i] = (struct lg_alias){.thresh = UINT32_MAX, .alias = i};
	}
	while (nl > 0) {
		uint32_t i = work[n - nl--];

		k->alias[i] = (struct lg_alias){.thresh = UINT32_MAX, .alias = i};
	}
out:
	free(work);
	free(p);
	return rc;
}

int lg_keys_init(struct lg_keys *k, const struct lg_opts *o)
{
	size_t plen = strlen(o->key_prefix);
	uint16_t digits = decimal_digits(o->keys - 1);

	memset(k, 0, sizeof(*k));
	if (o->key_size > plen + digits)
		digits = (uint16_t)(o->key_size - plen);
	if (plen + digits > MC_KEY_MAX)
		return -ENAMETOOLONG;
	memcpy(k->prefix, o->key_prefix, plen + 1);
	k->prefix_len = (uint16_t)plen;
	k->digits = digits;
	k->key_len = (uint16_t)(plen + digits);
	k->n = o->keys;
	k->dist = o->dist;
	if (o->dist == LG_DIST_ZIPF)
		return zipf_alias(k, o->zipf_s);
	return 0;
}

void lg_keys_free(struct lg_keys *k)
{
	free(k->alias);
	k->alias = NULL;
}

uint32_t lg_keys_pick(const struct lg_keys *k, struct lg_rng *r)
{
	uint32_t i = (uint32_t)(((lg_rand(r) >> 32) * (uint64_t)k->n) >> 32);
	const struct lg_alias *a;

	if (k->dist == LG_DIST_UNIFORM)
		return i;
	a = &k->alias[i];
	return (uint32_t)(lg_rand(r) >> 32) < a->thresh ? i : a->alias;
}

void lg_key_write(const struct lg_keys *k, uint32_t idx, uint8_t *p)
{
	uint8_t *d = p + k->key_len;

	memcpy(p, k->prefix, k->prefix_len);
	for (uint16_t i = 0; i < k->digits; i++) {
		*--d = (uint8_t)('0' + idx % 10);
		idx /= 10;
	}
}

/* ---------------------------------------------------------------- requests */

static uint8_t *put(uint8_t *p, const void *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

#define PUT_LIT(p, s) put((p), (s), sizeof(s) - 1)

static uint32_t write_text(const struct lg_req *q, enum lg_op op, uint32_t idx, uint8_t *p)
{
	const struct lg_keys *k = q->keys;
	uint8_t *s = p;
	bool meta = q->proto == MC_PROTO_META;

	if (op == LG_OP_GET)
		p = meta ? PUT_LIT(p, "mg ") : PUT_LIT(p, "get ");
	else
		p = meta ? PUT_LIT(p, "ms ") : PUT_LIT(p, "set ");
	lg_key_write(k, idx, p);
	p += k->key_len;
	/* A multi-get (ASCII): the other keys spread over the key space from the first. */
	for (uint32_t j = 1; op == LG_OP_GET && j < q->multiget; j++) {
		p = PUT_LIT(p, " ");
		lg_key_write(k, (uint32_t)(((uint64_t)idx + (uint64_t)j * 7919u) % k->n), p);
		p += k->key_len;
	}
	if (op == LG_OP_GET) {
		p = meta ? PUT_LIT(p, " v\r\n") : PUT_LIT(p, "\r\n");
		return (uint32_t)(p - s);
	}
	p = meta ? PUT_LIT(p, " ") : PUT_LIT(p, " 0 0 ");
	p = put(p, q->value_len_text, q->value_len_text_len);
	p = PUT_LIT(p, "\r\n");
	p = put(p, q->value, q->value_size);
	p = PUT_LIT(p, "\r\n");
	return (uint32_t)(p - s);
}

static uint32_t write_binary(const struct lg_req *q, enum lg_op op, uint32_t idx, uint32_t opaque,
			     uint8_t *p)
{
	const struct lg_keys *k = q->keys;
	uint8_t extlen = op == LG_OP_SET ? 8 : 0;
	uint32_t body = extlen + k->key_len + (op == LG_OP_SET ? q->value_size : 0);
	uint16_t klen = rte_cpu_to_be_16(k->key_len);
	uint32_t be;

	memset(p, 0, MC_BIN_HDR_LEN + extlen);
	p[0] = 0x80;
	p[1] = op == LG_OP_SET ? MC_BIN_SET : MC_BIN_GET;
	memcpy(p + 2, &klen, 2);
	p[4] = extlen;
	be = rte_cpu_to_be_32(body);
	memcpy(p + 8, &be, 4);
	be = rte_cpu_to_be_32(opaque);
	memcpy(p + 12, &be, 4);
	/* SET extras: flags 0, exptime 0 (already zero). */
	lg_key_write(k, idx, p + MC_BIN_HDR_LEN + extlen);
	if (op == LG_OP_SET)
		memcpy(p + MC_BIN_HDR_LEN + extlen + k->key_len, q->value, q->value_size);
	return MC_BIN_HDR_LEN + body;
}

uint32_t lg_req_write(const struct lg_req *q, enum lg_op op, uint32_t idx, uint32_t opaque,
		      uint8_t *p)
{
	if (q->proto == MC_PROTO_BINARY)
		return write_binary(q, op, idx, opaque, p);
	return write_text(q, op, idx, p);
}

uint32_t lg_req_max_len(const struct lg_req *q, enum lg_op op)
{
	uint32_t k = q->keys->key_len, v = q->value_size, t = q->value_len_text_len;

	if (q->proto == MC_PROTO_BINARY)
		return MC_BIN_HDR_LEN + k + (op == LG_OP_SET ? 8 + v : 0);
	if (op == LG_OP_GET) /* "get " / "mg " + keys with spaces + "\r\n" / " v\r\n" */
		return 4 + q->multiget * (k + 1) + 4;
	return 4 + k + 5 + t + 2 + v + 2;
}

int lg_req_init(struct lg_req *q, const struct lg_keys *k, const struct lg_opts *o)
{
	uint8_t *buf;
	int rc = 0;

	memset(q, 0, sizeof(*q));
	q->keys = k;
	q->proto = o->proto;
	q->value_size = o->value_size;
	q->multiget = o->multiget > 1 ? o->multiget : 1;
	if (q->multiget > 1 && o->proto != MC_PROTO_ASCII)
		return -EPROTONOSUPPORT;
	q->value_len_text_len = (uint8_t)snprintf(q->value_len_text, sizeof(q->value_len_text),
						  "%u", o->value_size);
	q->value = malloc(o->value_size + 1);
	/* The larger of the two: a multi-get outgrows a SET of a small value. */
	buf = malloc(RTE_MAX(lg_req_max_len(q, LG_OP_GET), lg_req_max_len(q, LG_OP_SET)));
	q->tmpl[0] = malloc(sizeof(struct mc_requests));
	q->tmpl[1] = malloc(sizeof(struct mc_requests));
	if (q->value == NULL || buf == NULL || q->tmpl[0] == NULL || q->tmpl[1] == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	/* A recognisable, printable pattern (memcached stores bytes; any would do). */
	for (uint32_t i = 0; i < o->value_size; i++)
		q->value[i] = (uint8_t)('a' + i % 26);
	/* Parse one request of each kind with the router's own parser: a request the parser
	 * refuses would be refused by ringway too, and the reply parser needs to know what the
	 * requests ask for. */
	for (int op = LG_OP_GET; op <= LG_OP_SET; op++) {
		uint32_t len = lg_req_write(q, (enum lg_op)op, k->n - 1, 1, buf);

		if (mc_parse_requests(buf, len, q->tmpl[op]) != MC_OK || q->tmpl[op]->nreq != 1) {
			rc = -EPROTO;
			goto out;
		}
	}
out:
	free(buf);
	if (rc != 0)
		lg_req_free(q);
	return rc;
}

void lg_req_free(struct lg_req *q)
{
	free(q->value);
	free(q->tmpl[0]);
	free(q->tmpl[1]);
	q->value = NULL;
	q->tmpl[0] = q->tmpl[1] = NULL;
}
