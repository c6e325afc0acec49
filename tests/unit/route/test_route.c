/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/route: which next hop a node's address goes through, and which tables are refused. */

#include <setjmp.h>
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "route.h"

static uint32_t ip(const char *s)
{
	struct in_addr a;

	assert_int_equal(inet_pton(AF_INET, s, &a), 1);
	return a.s_addr;
}

static void add(struct rt_table *t, const char *text, int expect)
{
	struct rt_route r;
	char err[256];

	assert_int_equal(rt_parse(text, strlen(text), &r, err, sizeof(err)), 0);
	assert_int_equal(rt_add(t, &r, err, sizeof(err)), expect);
}

/* The next hop of @p node, or "" when it has no route. */
static const char *nh_of(const struct rt_table *t, const char *node)
{
	static char out[INET_ADDRSTRLEN];
	uint32_t nh;

	if (rt_lookup(t, ip(node), &nh) < 0)
		return "";
	inet_ntop(AF_INET, &nh, out, sizeof(out));
	return out;
}

static void test_parse(void **state)
{
	struct rt_route r;
	char err[256], text[RT_TEXT_MAX];
	static const char *const bad[] = {
		"",
		"198.18.2.0/24",
		"198.18.2.0/24 via",
		"198.18.2.0/24 via x",
		"198.18.2.1/24 direct",
		"198.18.2.0/33 direct",
		"198.18.2.0 direct",
		"198.18.2.0/24 via 127.0.0.1",
		"198.18.2.0/24 via 224.0.0.1",
		"198.18.2.0/24 via 0.1.2.3",
		"198.18.2.0/24 by 1.2.3.4",
		"198.18.2.0/24 direct extra",
		"/24 direct",
		"198.18.2.0/ direct",
		"198.18.2.0/24x direct",
	};

	(void)state;
	assert_int_equal(rt_parse("  198.18.2.0/24   via  198.18.0.254 ", 36, &r, err, sizeof(err)),
			 0);
	assert_int_equal(r.len, 24);
	assert_int_equal(r.addr, ip("198.18.2.0"));
	assert_int_equal(r.mask, ip("255.255.255.0"));
	assert_int_equal(r.gw, ip("198.18.0.254"));
	rt_format(&r, text);
	assert_string_equal(text, "198.18.2.0/24 via 198.18.0.254");
	assert_int_equal(rt_parse("default via 198.18.0.254", 24, &r, err, sizeof(err)), 0);
	assert_int_equal(r.len, 0);
	assert_int_equal(r.mask, 0);
	rt_format(&r, text);
	assert_string_equal(text, "default via 198.18.0.254");
	assert_int_equal(rt_parse("198.18.0.0/15 direct", 20, &r, err, sizeof(err)), 0);
	assert_int_equal(r.gw, 0);
	rt_format(&r, text);
	assert_string_equal(text, "198.18.0.0/15 direct");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (rt_parse(bad[i], strlen(bad[i]), &r, err, sizeof(err)) != -EINVAL)
			fail_msg("'%s' was accepted", bad[i]);
		assert_true(err[0] != '\0');
	}
	assert_int_equal(rt_parse_prefix("default", 7, &r, err, sizeof(err)), 0);
	assert_int_equal(rt_parse_prefix("198.18.2.0/24 x", 15, &r, err, sizeof(err)), -EINVAL);
}

/* No direct route: every address without a gateway route is a neighbour (as before routes). */
static void test_lookup_legacy(void **state)
{
	struct rt_table t;

	(void)state;
	rt_init(&t);
	assert_string_equal(nh_of(&t, "198.18.2.10"), "198.18.2.10");
	add(&t, "198.18.2.0/24 via 198.18.0.254", 1);
	assert_string_equal(nh_of(&t, "198.18.2.10"), "198.18.0.254");
	assert_string_equal(nh_of(&t, "198.18.3.10"), "198.18.3.10");
	add(&t, "default via 198.18.0.253", 1);
	assert_string_equal(nh_of(&t, "198.18.3.10"), "198.18.0.253");
	assert_string_equal(nh_of(&t, "198.18.2.10"), "198.18.0.254");
}

/* Longest prefix wins; with direct routes an address in none is unreachable. */
static void test_lookup_longest(void **state)
{
	struct rt_table t;

	(void)state;
	rt_init(&t);
	add(&t, "198.18.0.0/24 direct", 1);
	add(&t, "198.18.2.0/23 via 198.18.0.254", 1);
	add(&t, "198.18.2.128/25 via 198.18.0.253", 1);
	assert_string_equal(nh_of(&t, "198.18.0.7"), "198.18.0.7");
	assert_string_equal(nh_of(&t, "198.18.2.10"), "198.18.0.254");
	assert_string_equal(nh_of(&t, "198.18.3.10"), "198.18.0.254");
	assert_string_equal(nh_of(&t, "198.18.2.200"), "198.18.0.253");
	assert_string_equal(nh_of(&t, "198.19.0.1"), "");
	add(&t, "default via 198.18.0.252", 1);
	assert_string_equal(nh_of(&t, "198.19.0.1"), "198.18.0.252");
	/* A more specific direct route beats the gateway's. */
	add(&t, "198.18.3.0/24 direct", 1);
	assert_string_equal(nh_of(&t, "198.18.3.10"), "198.18.3.10");
}

/* Gateways must be neighbours; add replaces; remove refuses to strand a gateway. */
static void test_add_remove(void **state)
{
	struct rt_table t;
	struct rt_route r;
	char err[256];

	(void)state;
	rt_init(&t);
	add(&t, "198.18.0.0/24 direct", 1);
	assert_int_equal(rt_parse("198.18.2.0/24 via 198.18.1.1", 28, &r, err, sizeof(err)), 0);
	assert_int_equal(rt_add(&t, &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "198.18.1.1"));
	assert_int_equal(t.n, 1);
	add(&t, "198.18.2.0/24 via 198.18.0.254", 1);
	add(&t, "198.18.2.0/24 via 198.18.0.253", 2);
	assert_int_equal(t.n, 2);
	assert_string_equal(nh_of(&t, "198.18.2.1"), "198.18.0.253");
	/* The direct route holds the gateway: removing it is refused while another direct
	 * route stays (without any, every address is a neighbour, gateways too). */
	add(&t, "198.18.4.0/24 direct", 1);
	assert_int_equal(rt_parse_prefix("198.18.0.0/24", 13, &r, err, sizeof(err)), 0);
	assert_int_equal(rt_remove(&t, &r, err, sizeof(err)), -EINVAL);
	assert_int_equal(t.n, 3);
	assert_int_equal(rt_parse_prefix("198.18.9.0/24", 13, &r, err, sizeof(err)), 0);
	assert_int_equal(rt_remove(&t, &r, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "198.18.9.0/24"));
	assert_int_equal(rt_parse_prefix("198.18.2.0/24", 13, &r, err, sizeof(err)), 0);
	assert_int_equal(rt_remove(&t, &r, err, sizeof(err)), 0);
	assert_int_equal(t.n, 2);
	assert_string_equal(nh_of(&t, "198.18.2.1"), "");
}

static void test_full_and_equal(void **state)
{
	struct rt_table t, u;
	char text[64];

	(void)state;
	rt_init(&t);
	for (int i = 0; i < RT_ROUTES_MAX; i++) {
		snprintf(text, sizeof(text), "198.19.%d.0/24 via 198.18.0.254", i);
		add(&t, text, 1);
	}
	add(&t, "198.18.9.0/24 via 198.18.0.254", -ENOSPC);
	add(&t, "198.19.5.0/24 via 198.18.0.253", 2); /* replacing needs no room */
	u = t;
	assert_true(rt_equal(&t, &u));
	u.r[3].gw = ip("198.18.0.1");
	assert_false(rt_equal(&t, &u));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),	       cmocka_unit_test(test_lookup_legacy),
		cmocka_unit_test(test_lookup_longest), cmocka_unit_test(test_add_remove),
		cmocka_unit_test(test_full_and_equal),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
