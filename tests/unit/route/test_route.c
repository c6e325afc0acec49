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

static struct inet_addr ip(const char *s)
{
	struct inet_addr a;

	assert_int_equal(inet_parse(s, strlen(s), &a), 0);
	return a;
}

static void assert_ip(const struct inet_addr *a, const char *s)
{
	char text[INET_TEXT_MAX];

	inet_format(a, text);
	assert_string_equal(text, s);
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
	static char out[INET_TEXT_MAX];
	struct inet_addr a = ip(node), nh;

	if (rt_lookup(t, &a, &nh) < 0)
		return "";
	assert_int_equal(inet_is_v4(&nh), inet_is_v4(&a));
	inet_format(&nh, out);
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
	assert_ip(&r.addr, "198.18.2.0");
	assert_ip(&r.gw, "198.18.0.254");
	rt_format(&r, text);
	assert_string_equal(text, "198.18.2.0/24 via 198.18.0.254");
	assert_int_equal(rt_parse("default via 198.18.0.254", 24, &r, err, sizeof(err)), 0);
	assert_int_equal(r.len, 0);
	assert_ip(&r.addr, "0.0.0.0");
	rt_format(&r, text);
	assert_string_equal(text, "default via 198.18.0.254");
	assert_int_equal(rt_parse("198.18.0.0/15 direct", 20, &r, err, sizeof(err)), 0);
	assert_true(inet_is_zero(&r.gw));
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

/* IPv6 routes: the prefix forms, `default` taking the gateway's family, `default6`, what
 * rt_format prints (and rt_parse reads back), and the refusals. */
static void test_parse_v6(void **state)
{
	struct rt_route r, back;
	char err[256], text[RT_TEXT_MAX];
	static const char *const good[][2] = {
		{"2001:2:2::/64 via 2001:2::fe", "2001:2:2::/64 via 2001:2::fe"},
		{" 2001:2:0:0::/48  direct ", "2001:2::/48 direct"},
		{"default via 2001:2::fe", "default6 via 2001:2::fe"},
		{"default6 via 2001:2::fe", "default6 via 2001:2::fe"},
		{"default6 direct", "default6 direct"},
		{"::/0 via 2001:2::fe", "default6 via 2001:2::fe"},
		{"2001:2:2::5/128 via fe80::1", "2001:2:2::5/128 via fe80::1"},
		{"default direct", "default direct"},
	};
	static const char *const bad[] = {
		"2001:2:2::1/64 direct",	       /* host bits */
		"2001:2:2::/129 direct",	       /* length */
		"2001:2:2:: direct",		       /* no length */
		"2001:2:2::/64 via ::",		       /* unspecified */
		"2001:2:2::/64 via ::1",	       /* loopback */
		"2001:2:2::/64 via ff02::1",	       /* multicast */
		"2001:2:2::/64 via 198.18.0.254",      /* family mismatch */
		"198.18.2.0/24 via 2001:2::fe",	       /* family mismatch */
		"default6 via 198.18.0.254",	       /* default6 is IPv6 */
		"::ffff:198.18.2.0/120 direct",	       /* IPv4 written as IPv6 */
		"2001:2:2::/64 via ::ffff:198.18.0.1", /* idem */
		"2001:2:2::/64 via [2001:2::fe]",      /* no brackets */
		"2001:2:2::/64 via 2001:2::fe%eth0",   /* no zone */
		"2001:2:2::/64 via 2001:2::fe x",
		"default6",
		"default66 direct",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (rt_parse(good[i][0], strlen(good[i][0]), &r, err, sizeof(err)) != 0)
			fail_msg("'%s' refused: %s", good[i][0], err);
		rt_format(&r, text);
		assert_string_equal(text, good[i][1]);
		assert_int_equal(rt_parse(text, strlen(text), &back, err, sizeof(err)), 0);
		assert_memory_equal(&back, &r, sizeof(r));
	}
	assert_int_equal(rt_parse("default via 2001:2::fe", 22, &r, err, sizeof(err)), 0);
	assert_false(inet_is_v4(&r.addr));
	assert_true(inet_is_zero(&r.addr));
	assert_ip(&r.gw, "2001:2::fe");
	assert_int_equal(rt_parse("2001:2:2::/64 via 198.18.0.254", 30, &r, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "gateway 198.18.0.254 is IPv4 but the prefix 2001:2:2::/64 "
				    "is IPv6"));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (rt_parse(bad[i], strlen(bad[i]), &r, err, sizeof(err)) != -EINVAL)
			fail_msg("'%s' was accepted", bad[i]);
		assert_true(err[0] != '\0');
	}
	assert_int_equal(rt_parse_prefix("default6", 8, &r, err, sizeof(err)), 0);
	assert_false(inet_is_v4(&r.addr));
	assert_int_equal(r.len, 0);
	assert_int_equal(rt_parse_prefix("default", 7, &r, err, sizeof(err)), 0);
	assert_true(inet_is_v4(&r.addr));
	assert_int_equal(rt_parse_prefix(" 2001:2:2::/64 ", 15, &r, err, sizeof(err)), 0);
	assert_int_equal(r.len, 64);
	assert_true(inet_is_zero(&r.gw));
	assert_int_equal(rt_parse_prefix("2001:2:2::1/64", 14, &r, err, sizeof(err)), -EINVAL);
}

/* Longest prefix per family, and a family never matches the other's routes: an IPv4 address
 * is not in ::/0 nor an IPv6 address in 0.0.0.0/0, and a direct route of one family leaves
 * the other family's unmatched addresses on-link. */
static void test_lookup_v6(void **state)
{
	struct rt_table t;

	(void)state;
	rt_init(&t);
	/* Nothing of IPv6 yet: every IPv6 address is a neighbour. */
	add(&t, "198.18.0.0/24 direct", 1);
	add(&t, "default via 198.18.0.254", 1);
	assert_string_equal(nh_of(&t, "2001:2:2::5"), "2001:2:2::5");
	assert_string_equal(nh_of(&t, "198.19.0.1"), "198.18.0.254");
	/* An IPv6 default route takes no IPv4 address, and the IPv4 one no IPv6 address. */
	add(&t, "default via 2001:2::fe", 1); /* ::/0, a prefix of its own: added */
	assert_int_equal(t.n, 3);
	assert_string_equal(nh_of(&t, "2001:2:2::5"), "2001:2::fe");
	assert_string_equal(nh_of(&t, "2001:db8::1"), "2001:2::fe");
	assert_string_equal(nh_of(&t, "198.19.0.1"), "198.18.0.254");
	assert_string_equal(nh_of(&t, "10.1.2.3"), "198.18.0.254");
	/* Longest prefix among the IPv6 routes. */
	add(&t, "2001:2::/64 direct", 1);
	add(&t, "2001:2:2::/48 via 2001:2::fd", 1);
	add(&t, "2001:2:2:1::/64 via 2001:2::fc", 1);
	add(&t, "2001:2:2:1::7/128 direct", 1);
	assert_string_equal(nh_of(&t, "2001:2::1:3"), "2001:2::1:3");
	assert_string_equal(nh_of(&t, "2001:2:2::5"), "2001:2::fd");
	assert_string_equal(nh_of(&t, "2001:2:2:1::5"), "2001:2::fc");
	assert_string_equal(nh_of(&t, "2001:2:2:1::7"), "2001:2:2:1::7");
	assert_string_equal(nh_of(&t, "2001:db8::1"), "2001:2::fe");
	/* Removing the IPv6 default: unmatched IPv6 is unreachable (a direct IPv6 route
	 * exists), unmatched IPv4 still goes to the IPv4 default. */
	struct rt_route r;
	char err[256];

	assert_int_equal(rt_parse_prefix("default6", 8, &r, err, sizeof(err)), 0);
	assert_int_equal(rt_remove(&t, &r, err, sizeof(err)), 0);
	assert_string_equal(nh_of(&t, "2001:db8::1"), "");
	assert_string_equal(nh_of(&t, "198.19.0.1"), "198.18.0.254");
	/* An IPv4-only table with a direct route leaves IPv6 addresses alone, and vice versa. */
	rt_init(&t);
	add(&t, "198.18.0.0/24 direct", 1);
	assert_string_equal(nh_of(&t, "198.19.0.1"), "");
	assert_string_equal(nh_of(&t, "2001:2:2::5"), "2001:2:2::5");
	rt_init(&t);
	add(&t, "2001:2::/64 direct", 1);
	assert_string_equal(nh_of(&t, "2001:2:2::5"), "");
	assert_string_equal(nh_of(&t, "198.19.0.1"), "198.19.0.1");
}

/* The gateway rule per family: an IPv6 gateway must lie in an IPv6 direct route when there is
 * one, whatever the IPv4 routes hold; removal refuses to strand an IPv6 gateway; a route whose
 * gateway is of the other family is refused even when built without rt_parse. */
static void test_gateway_rule_v6(void **state)
{
	struct rt_table t;
	struct rt_route r;
	char err[256];

	(void)state;
	rt_init(&t);
	add(&t, "198.18.0.0/24 direct", 1);
	/* No IPv6 direct route: any IPv6 gateway is a neighbour. */
	add(&t, "2001:2:2::/64 via 2001:2::fe", 1);
	assert_int_equal(rt_parse("2001:2::/64 direct", 18, &r, err, sizeof(err)), 0);
	add(&t, "2001:2::/64 direct", 1);
	assert_int_equal(rt_parse("2001:2:3::/64 via 2001:9::1", 27, &r, err, sizeof(err)), 0);
	assert_int_equal(rt_add(&t, &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "route 2001:2:3::/64 via 2001:9::1: gateway 2001:9::1 is in "
				    "no direct route"));
	assert_int_equal(t.n, 3);
	/* The only IPv6 direct route holds an IPv6 gateway: removing it is refused while
	 * another IPv6 direct route stays. */
	add(&t, "2001:2:9::/64 direct", 1);
	assert_int_equal(rt_parse_prefix("2001:2::/64", 11, &r, err, sizeof(err)), 0);
	assert_int_equal(rt_remove(&t, &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "2001:2::fe"));
	assert_int_equal(t.n, 4);
	/* IPv4 and IPv6 default routes are two prefixes, each replaced on its own. */
	add(&t, "default via 198.18.0.254", 1);
	add(&t, "default6 via 2001:2::fd", 1);
	add(&t, "default via 2001:2::fe", 2);
	add(&t, "default via 198.18.0.253", 2);
	assert_int_equal(t.n, 6);
	assert_string_equal(nh_of(&t, "2001:db8::1"), "2001:2::fe");
	assert_string_equal(nh_of(&t, "10.0.0.1"), "198.18.0.253");
	assert_int_equal(rt_parse_prefix("2001:2:7::/64", 13, &r, err, sizeof(err)), 0);
	assert_int_equal(rt_remove(&t, &r, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "no route for 2001:2:7::/64"));
	/* Mixed families built by hand (a caller not using rt_parse) are refused too. */
	memset(&r, 0, sizeof(r));
	r.addr = ip("2001:2:5::");
	r.len = 64;
	r.gw = ip("198.18.0.254");
	assert_int_equal(rt_add(&t, &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not of the prefix's family"));
	assert_int_equal(t.n, 6);
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
	u = t;
	u.r[3].gw = ip("2001:2::fe"); /* same bytes nowhere: a family is part of the address */
	assert_false(rt_equal(&t, &u));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),	       cmocka_unit_test(test_lookup_legacy),
		cmocka_unit_test(test_lookup_longest), cmocka_unit_test(test_add_remove),
		cmocka_unit_test(test_full_and_equal), cmocka_unit_test(test_parse_v6),
		cmocka_unit_test(test_lookup_v6),      cmocka_unit_test(test_gateway_rule_v6),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
