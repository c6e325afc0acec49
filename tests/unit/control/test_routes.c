/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `route add|remove|list` and the route rule of membership changes: a member without a route
 * is refused at add / replace (and at commit when its route went away meanwhile), a route
 * change that would strand a member is refused, and the router hears of every change.
 */

#include <arpa/inet.h>

#include "ctl_test.h"

struct routes_rec {
	unsigned calls;
	struct rt_table last;
	int fail;
};

static int rec_routes(void *ctx, const struct rt_table *next)
{
	struct routes_rec *r = ctx;

	if (r->fail)
		return r->fail;
	r->calls++;
	r->last = *next;
	return 0;
}

/* Engine over n1..n3 (198.18.1.x) with routes: 198.18.0.0/24 direct, 198.18.1.0/24 via
 * 198.18.0.254. */
static struct ctl_engine *routed_engine(struct routes_rec *rec)
{
	struct ctl_ops ops = {.ctx = rec, .routes = rec_routes};
	struct ctl_engine *e = test_engine(3, NULL, &ops);
	struct rt_table t;
	struct rt_route r;
	char err[256];

	rt_init(&t);
	assert_int_equal(rt_parse("198.18.0.0/24 direct", 20, &r, err, sizeof(err)), 0);
	assert_int_equal(rt_add(&t, &r, err, sizeof(err)), 1);
	/* Without the nodes' route the engine refuses the table. */
	assert_int_equal(ctl_engine_set_routes(e, &t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "node n1: no route to 198.18.1.1"));
	assert_int_equal(ctl_engine_routes(e)->n, 0);
	assert_int_equal(rt_parse("198.18.1.0/24 via 198.18.0.254", 30, &r, err, sizeof(err)), 0);
	assert_int_equal(rt_add(&t, &r, err, sizeof(err)), 1);
	assert_int_equal(ctl_engine_set_routes(e, &t, err, sizeof(err)), 0);
	assert_int_equal(ctl_engine_routes(e)->n, 2);
	return e;
}

static void test_route_list_add_remove(void **state)
{
	struct routes_rec rec = {0};
	struct ctl_engine *e = routed_engine(&rec);
	struct ctl_session *s = ctl_session_new(e);
	char *r;

	(void)state;
	r = test_expect(s, "route list", "OK lines 2 routes 2\n");
	assert_non_null(strstr(r, "\n198.18.0.0/24 direct\n198.18.1.0/24 via 198.18.0.254\n"));
	free(r);
	test_ok(s, "route add 198.18.2.0/24 via 198.18.0.253", "OK route added routes 3\n");
	assert_int_equal(rec.calls, 1);
	assert_int_equal(rec.last.n, 3);
	/* A new next hop for the nodes' prefix: replaced, the router told. */
	test_ok(s, "route add 198.18.1.0/24 via 198.18.0.253", "OK route replaced routes 3\n");
	assert_int_equal(rec.calls, 2);
	assert_int_equal(inet_v4(&rec.last.r[1].gw), htonl(0xc61200fd));
	test_ok(s, "route remove 198.18.2.0/24", "OK route removed routes 2\n");
	assert_int_equal(rec.calls, 3);
	/* No route change moves the epoch. */
	test_ok(s, "epoch", "OK epoch 1\n");
	ctl_session_free(s);
	ctl_engine_free(e);
}

static void test_route_refusals(void **state)
{
	struct routes_rec rec = {0};
	struct ctl_engine *e = routed_engine(&rec);
	struct ctl_session *s = ctl_session_new(e);
	char *r;

	(void)state;
	/* Removing the nodes' only route would strand them. */
	r = test_expect(s, "route remove 198.18.1.0/24", "ERROR route remove 198.18.1.0/24 would ");
	assert_non_null(strstr(r, "node n1: no route to 198.18.1.1"));
	assert_non_null(strstr(r, "nothing changed"));
	free(r);
	/* A gateway off the segment; the direct route holding the gateway. */
	test_ok(s, "route add 198.18.5.0/24 via 198.18.9.1",
		"ERROR route add: route 198.18.5.0/24");
	test_ok(s, "route add 198.18.4.0/24 direct", "OK route added routes 3");
	test_ok(s, "route remove 198.18.0.0/24", "ERROR route remove: route 198.18.1.0/24");
	test_ok(s, "route remove 198.18.4.0/24", "OK route removed routes 2");
	test_ok(s, "route remove 198.18.7.0/24", "ERROR route remove: no route for 198.18.7.0/24");
	test_ok(s, "route add 198.18.7.0/24", "ERROR route add: expected 'via GW' or 'direct'");
	test_ok(s, "route flip", "ERROR usage: route add PREFIX");
	test_ok(s, "route", "ERROR usage: route add PREFIX");
	test_ok(s, "route list x", "ERROR route list: unexpected arguments");
	/* The router refusing keeps the old routes. */
	rec.fail = -ENOMEM;
	test_ok(s, "route add 198.18.2.0/24 via 198.18.0.253", "ERROR routes not applied");
	rec.fail = 0;
	test_ok(s, "route list", "OK lines 2 routes 2\n");
	assert_int_equal(rec.calls, 2);
	ctl_session_free(s);
	ctl_engine_free(e);
}

static void test_member_needs_route(void **state)
{
	struct routes_rec rec = {0};
	struct ctl_engine *e = routed_engine(&rec);
	struct ctl_session *s = ctl_session_new(e), *t = ctl_session_new(e);

	(void)state;
	test_ok(s, "add n9 198.18.3.9:11211", "ERROR node n9: no route to 198.18.3.9 (add one");
	test_ok(s, "replace n1 198.18.1.1 ; n9 198.18.3.9",
		"ERROR node n9: no route to 198.18.3.9");
	test_ok(s, "add n8 198.18.0.8:11211", "OK epoch 2\n"); /* on the segment */
	test_ok(s, "add n7 198.18.1.7:11211", "OK epoch 3\n"); /* behind the gateway */
	test_ok(s, "route add default via 198.18.0.254", "OK route added");
	test_ok(s, "add n9 198.18.3.9:11211", "OK epoch 4\n");
	test_ok(s, "remove n9", "OK epoch 5\n");
	/* A transaction queues a member; its route goes before the commit. */
	test_ok(s, "begin", "OK transaction open");
	test_ok(s, "add n9 198.18.3.9:11211", "OK queued 1\n");
	test_ok(t, "route remove default", "OK route removed");
	test_ok(s, "commit", "ERROR node n9: no route to 198.18.3.9");
	test_ok(s, "epoch", "OK epoch 5\n");
	ctl_session_free(t);
	ctl_session_free(s);
	ctl_engine_free(e);
}

/* IPv6: members `add NAME [v6]:port`, listed bracketed; IPv6 routes added, listed and removed
 * beside the IPv4 ones; the route rule per family: the IPv4 direct route leaves IPv6 members
 * on-link until an IPv6 direct route exists, then an IPv6 member needs an IPv6 route (never an
 * IPv4 one); the router's IPv6 address is refused as a member. */
static void test_ipv6_members_and_routes(void **state)
{
	struct routes_rec rec = {0};
	struct ctl_engine *e = routed_engine(&rec);
	struct ctl_session *s = ctl_session_new(e);
	char *r;

	(void)state;
	/* No IPv6 direct route: an IPv6 member is a neighbour. */
	test_ok(s, "add v1 [2001:2::1:1]:11211", "OK epoch 2\n");
	r = test_expect(s, "list", "OK lines 4 members 4");
	assert_non_null(strstr(r, "name v1 addr [2001:2::1:1]:11211 weight 1 "));
	assert_non_null(strstr(r, "name n1 addr 198.18.1.1:11211 weight 1 "));
	free(r);
	/* An IPv6 direct route that does not hold v1 strands it: refused. */
	r = test_expect(s, "route add 2001:2:9::/64 direct",
			"ERROR route add 2001:2:9::/64 direct would leave node v1: no route to "
			"2001:2::1:1");
	free(r);
	test_ok(s, "route add 2001:2::/64 direct", "OK route added routes 3");
	test_ok(s, "route add 2001:2:2::/64 via 2001:2::fe", "OK route added routes 4");
	test_ok(s, "route add 2001:2:3::/64 via 2001:2:9::1",
		"ERROR route add: route 2001:2:3::/64 via 2001:2:9::1: gateway 2001:2:9::1 is in "
		"no direct route");
	test_ok(s, "route add 2001:2:3::/64 via 198.18.0.254",
		"ERROR route add: gateway 198.18.0.254 is IPv4 but the prefix 2001:2:3::/64 is "
		"IPv6");
	assert_true(inet_equal(&rec.last.r[3].gw,
			       &(struct inet_addr){{0x20, 0x01, 0, 2, [15] = 0xfe}}));
	test_ok(s, "add v2 [2001:2:2::2]:11300", "OK epoch 3\n");
	/* No IPv6 route holds 2001:2:3::/64; the IPv4 default never serves an IPv6 member. */
	test_ok(s, "route add default via 198.18.0.254", "OK route added routes 5");
	test_ok(s, "add v3 [2001:2:3::3]", "ERROR node v3: no route to 2001:2:3::3 (add one");
	test_ok(s, "route add default6 via 2001:2::fe", "OK route added routes 6");
	test_ok(s, "add v3 [2001:2:3::3]", "OK epoch 4\n");
	r = test_expect(s, "route list", "OK lines 6 routes 6\n");
	assert_non_null(strstr(r, "\n2001:2::/64 direct\n2001:2:2::/64 via 2001:2::fe\n"
				  "default via 198.18.0.254\ndefault6 via 2001:2::fe\n"));
	free(r);
	/* Removing the IPv6 routes would strand v2 and v3; the IPv4 default does not help. */
	test_ok(s, "route remove 2001:2:2::/64", "OK route removed routes 5"); /* default6 */
	r = test_expect(s, "route remove default6", "ERROR route remove default6 would leave ");
	assert_non_null(strstr(r, "no route to 2001:2:2::2"));
	free(r);
	test_ok(s, "route remove default", "OK route removed routes 4");
	/* The router's own IPv6 address is no member's; its IPv4 one still refused too. */
	assert_int_equal(ctl_engine_set_router_address(e, "2001:2::1"), 0);
	assert_int_equal(ctl_engine_set_router_address(e, "198.18.0.1"), 0);
	test_ok(s, "add v4 [2001:2::1]:11211", "ERROR node v4: 2001:2::1 is the router's own");
	test_ok(s, "add v4 198.18.0.1:11211", "ERROR node v4: 198.18.0.1 is the router's own");
	assert_int_equal(ctl_engine_set_router_address(e, "[2001:2::1]"), -EINVAL);
	assert_int_equal(ctl_engine_set_router_address(e, NULL), 0);
	test_ok(s, "add v4 [2001:2::1]:11211", "OK epoch 5\n");
	ctl_session_free(s);
	ctl_engine_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_route_list_add_remove),
		cmocka_unit_test(test_route_refusals),
		cmocka_unit_test(test_member_needs_route),
		cmocka_unit_test(test_ipv6_members_and_routes),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
