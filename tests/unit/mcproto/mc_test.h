/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the mcproto unit tests (header-only; each test is one executable). */
#ifndef RINGWAY_MC_TEST_H
#define RINGWAY_MC_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mcproto.h"

/* Parse a C string literal (length from sizeof, so embedded NULs count). */
#define PARSE(lit, out) mc_parse_requests((const uint8_t *)(lit), sizeof(lit) - 1, (out))

static inline enum mc_err parse_str(const char *s, struct mc_requests *out)
{
	return mc_parse_requests((const uint8_t *)s, strlen(s), out);
}

/* Key @p i of @p r equals the C string @p want (in the buffer @p buf). */
static inline void assert_key(const void *buf, const struct mc_requests *r, unsigned i,
			      const char *want)
{
	assert_true(i < r->nkeys);
	assert_int_equal(r->keys[i].len, strlen(want));
	assert_memory_equal((const uint8_t *)buf + r->keys[i].off, want, strlen(want));
}

/* One collected reply item. */
struct col_item {
	uint8_t type, result, proto, opcode;
	uint16_t status;
	uint32_t opaque;
	char key[MC_KEY_MAX + 1];
	char mopaque[MC_OPAQUE_MAX + 1];
	uint32_t value_len; /* announced */
	uint32_t value_off; /* in col.values */
	uint32_t got;	    /* received */
	char head[MC_REPLY_LINE_MAX + 1];
	uint32_t head_len;
};

#define COL_MAX_ITEMS 256
#define COL_VALUES    (1u << 20)

struct col {
	int n;
	int err; /* last negative rc, 0 if none */
	uint32_t values_len;
	struct col_item it[COL_MAX_ITEMS];
	uint8_t values[COL_VALUES];
};

static inline struct col *col_new(void)
{
	struct col *c = calloc(1, sizeof(*c));
	assert_non_null(c);
	return c;
}

/* Drain the events of what was fed into @p c; returns MC_EV_MORE (0) or a negative reason. */
static inline int col_drain(struct mc_reply_parser *rp, struct col *c)
{
	struct mc_reply_event ev;
	int rc;

	while ((rc = mc_reply_next(rp, &ev)) > 0) {
		if (rc == MC_EV_ITEM) {
			assert_true(c->n < COL_MAX_ITEMS);
			struct col_item *it = &c->it[c->n++];
			memset(it, 0, sizeof(*it));
			it->type = ev.type;
			it->result = ev.result;
			it->proto = ev.proto;
			it->opcode = ev.opcode;
			it->status = ev.status;
			it->opaque = ev.opaque;
			if (ev.key)
				memcpy(it->key, ev.key, ev.key_len);
			if (ev.mopaque)
				memcpy(it->mopaque, ev.mopaque, ev.opaque_len);
			assert_true(ev.head_len <= MC_REPLY_LINE_MAX);
			memcpy(it->head, ev.head, ev.head_len);
			it->head_len = ev.head_len;
			it->value_len = ev.value_len;
			it->value_off = c->values_len;
		} else {
			assert_true(c->n > 0);
			struct col_item *it = &c->it[c->n - 1];
			assert_true(c->values_len + ev.data_len <= COL_VALUES);
			memcpy(c->values + c->values_len, ev.data, ev.data_len);
			c->values_len += ev.data_len;
			it->got += ev.data_len;
			assert_true(it->got <= it->value_len);
			assert_int_equal(ev.last, it->got == it->value_len);
		}
	}
	if (rc < 0)
		c->err = rc;
	return rc;
}

/* Value bytes of item @p i. */
static inline const uint8_t *col_value(const struct col *c, int i)
{
	return c->values + c->it[i].value_off;
}

/* Feed one unframed buffer in pieces of the given sizes (0-terminated list), then drain. */
static inline int col_feed_split(struct mc_reply_parser *rp, struct col *c, const void *buf,
				 size_t len, size_t split)
{
	const uint8_t *p = buf;
	int rc;

	if (split > len)
		split = len;
	mc_reply_feed(rp, p, split);
	if ((rc = col_drain(rp, c)) < 0)
		return rc;
	mc_reply_feed(rp, p + split, len - split);
	return col_drain(rp, c);
}

#endif /* RINGWAY_MC_TEST_H */
