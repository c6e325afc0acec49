/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the control-plane unit tests (cmocka). */
#ifndef RINGWAY_CTL_TEST_H
#define RINGWAY_CTL_TEST_H

#include <setjmp.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "control_priv.h"

/* A state with members n1..nN at 198.18.1.i:11211, weight 1, epoch 1. */
static inline struct ctl_state *test_state(unsigned nodes)
{
	struct ctl_state *st = ctl_state_new(NULL, 1);
	char spec[64], err[256];
	struct ctl_member m;

	assert_non_null(st);
	for (unsigned i = 1; i <= nodes; i++) {
		snprintf(spec, sizeof(spec), "n%u 198.18.%u.%u:11211", i, 1 + i / 250, i % 250);
		assert_int_equal(ctl_member_parse(spec, strlen(spec), &m, err, sizeof(err)), 0);
		assert_int_equal(ctl_state_add(st, &m, err, sizeof(err)), 0);
	}
	return st;
}

static inline struct ctl_engine *test_engine(unsigned nodes, const char *path,
					     const struct ctl_ops *ops)
{
	struct ctl_engine *e = ctl_engine_new(test_state(nodes), path, ops);

	assert_non_null(e);
	return e;
}

/* Run one line; the reply (caller frees), or NULL when the line needs none. */
static inline char *test_line(struct ctl_session *s, const char *line)
{
	struct ctl_text r = {0};
	int rc = ctl_session_line(s, line, strlen(line), &r);

	assert_true(rc == 0 || rc == 1);
	if (rc == 0) {
		assert_int_equal(r.len, 0);
		ctl_text_release(&r);
		return NULL;
	}
	assert_non_null(r.buf);
	assert_true(r.len > 0 && r.buf[r.len - 1] == '\n');
	return r.buf;
}

/* Run a line and check the reply starts with @p prefix; returns it (caller frees). */
static inline char *test_expect(struct ctl_session *s, const char *line, const char *prefix)
{
	char *r = test_line(s, line);

	if (r == NULL || strncmp(r, prefix, strlen(prefix)) != 0)
		fail_msg("'%s' replied '%s', expected '%s...'", line, r ? r : "(nothing)", prefix);
	return r;
}

static inline void test_ok(struct ctl_session *s, const char *line, const char *prefix)
{
	free(test_expect(s, line, prefix));
}

#endif /* RINGWAY_CTL_TEST_H */
