/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Neighbour learning against the real kernel in a throwaway namespace pair (root;
 * skipped otherwise): the peer's MAC is resolved through the kernel and matches both the
 * address given to the peer's interface and what `ip neigh` shows; an address nobody
 * answers ends up failed, never known; entries of other interfaces are not reported. The same
 * over IPv6 (neighbour discovery; addresses in 2001:2::/48 only), and IPv4 and IPv6 entries
 * in one lookup.
 */
#include <errno.h>
#include <net/if.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <cmocka.h>

#include "neigh.h"
#include "netns.h"

static struct netns_pair ns;
static unsigned int ifindex;
static char ip6_a[48], ip6_b[48], ip6_silent[48]; /* 2001:2:0:<net>::1, ::2, ::77 */

static struct inet_addr ip_of(const char *text)
{
	struct inet_addr a;

	assert_int_equal(inet_parse(text, strlen(text), &a), 0);
	return a;
}

static void mac_of(const char *text, uint8_t mac[6])
{
	unsigned int b[6], i;

	assert_int_equal(
		sscanf(text, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]), 6);
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
}

/* Look up @e until its state is @want or @ms pass; returns the last state. */
static unsigned int wait_state(struct neigh *n, struct neigh_entry *e, unsigned int want, int ms)
{
	struct timespec d = {.tv_nsec = 50 * 1000 * 1000};
	int waited;

	for (waited = 0;; waited += 50) {
		assert_int_equal(neigh_lookup(n, e, 1), 0);
		if (e->state == want || waited >= ms)
			return e->state;
		nanosleep(&d, NULL);
	}
}

/* Wait for @p e to be known, asking the kernel again when a resolution failed, as the router's
 * poll does (neigh.h): with 100 ms retransmits a busy machine can let the peer's answer miss
 * all three probes, which says nothing about the lookup. */
static unsigned int wait_known(struct neigh *n, struct neigh_entry *e, int ms)
{
	unsigned int st;

	for (int tries = 0; tries < 5; tries++) {
		st = wait_state(n, e, NEIGH_KNOWN, ms);
		if (st != NEIGH_FAILED)
			return st;
		assert_int_equal(neigh_resolve(n, &e->addr), 0);
	}
	return st;
}

static void test_resolve_peer(void **state)
{
	struct neigh_entry e[2] = {{.addr = ip_of(ns.ip_b)}, {.addr = ip_of(ns.ip_b)}};
	char err[128] = "", mac_text[18];
	struct neigh *n = neigh_open(ifindex, err, sizeof(err));
	uint8_t want[6];

	(void)state;
	assert_non_null(n);
	netns_sh("ip -n %s neigh flush all", ns.a);
	assert_int_equal(neigh_lookup(n, e, 2), 0);
	assert_int_equal(e[0].state, NEIGH_ABSENT);
	assert_int_equal(neigh_resolve(n, &e[0].addr), 0);
	assert_int_equal(wait_known(n, e, 3000), NEIGH_KNOWN);
	mac_of(ns.mac_b, want);
	assert_memory_equal(e[0].mac, want, 6);
	/* What the kernel shows to ip(8), and the same answer for a repeated address. */
	snprintf(mac_text, sizeof(mac_text), "%02x:%02x:%02x:%02x:%02x:%02x", e[0].mac[0],
		 e[0].mac[1], e[0].mac[2], e[0].mac[3], e[0].mac[4], e[0].mac[5]);
	assert_int_equal(netns_sh("ip -n %s neigh show %s dev %s | grep -q 'lladdr %s'", ns.a,
				  ns.ip_b, ns.if_a, mac_text),
			 0);
	assert_int_equal(neigh_lookup(n, e, 2), 0);
	assert_int_equal(e[1].state, NEIGH_KNOWN);
	assert_memory_equal(e[1].mac, want, 6);
	neigh_close(n);
}

static void test_silent_address_fails(void **state)
{
	char addr[20], err[128] = "";
	struct neigh *n = neigh_open(ifindex, err, sizeof(err));
	struct neigh_entry e;
	unsigned int st;

	(void)state;
	assert_non_null(n);
	snprintf(addr, sizeof(addr), "198.18.%d.77", ns.net);
	e.addr = ip_of(addr);
	assert_int_equal(neigh_resolve(n, &e.addr), 0);
	assert_int_equal(neigh_lookup(n, &e, 1), 0);
	assert_true(e.state == NEIGH_PENDING || e.state == NEIGH_FAILED);
	st = wait_state(n, &e, NEIGH_FAILED, 5000);
	assert_int_equal(st, NEIGH_FAILED);
	/* Asking again starts a new resolution instead of an error. */
	assert_int_equal(neigh_resolve(n, &e.addr), 0);
	assert_int_not_equal(wait_state(n, &e, NEIGH_KNOWN, 200), NEIGH_KNOWN);
	neigh_close(n);
}

static void test_other_interface_not_reported(void **state)
{
	char err[128] = "", other_if[16];
	struct neigh *on_a, *on_other;
	struct neigh_entry e = {.addr = ip_of("198.18.211.9")};
	const uint8_t want[6] = {2, 0, 0, 0, 0, 9};

	(void)state;
	snprintf(other_if, sizeof(other_if), "%.12sx", ns.if_a);
	assert_int_equal(netns_sh("ip -n %s link add %s type veth peer name %sy && "
				  "ip -n %s addr add 198.18.211.1/24 dev %s && "
				  "ip -n %s link set %s up && "
				  "ip -n %s neigh add 198.18.211.9 lladdr 02:00:00:00:00:09 dev %s "
				  "nud permanent",
				  ns.a, other_if, ns.if_a, ns.a, other_if, ns.a, other_if, ns.a,
				  other_if),
			 0);
	on_a = neigh_open(ifindex, err, sizeof(err));
	on_other = neigh_open(if_nametoindex(other_if), err, sizeof(err));
	assert_non_null(on_a);
	assert_non_null(on_other);
	assert_int_equal(neigh_lookup(on_a, &e, 1), 0);
	assert_int_equal(e.state, NEIGH_ABSENT);
	assert_int_equal(neigh_lookup(on_other, &e, 1), 0);
	assert_int_equal(e.state, NEIGH_KNOWN);
	assert_memory_equal(e.mac, want, 6);
	neigh_close(on_a);
	neigh_close(on_other);
	netns_sh("ip -n %s link del %s", ns.a, other_if);
}

/* IPv6: the kernel resolves the peer by neighbour discovery; its MAC is the one given to the
 * peer's interface and what `ip -6 neigh` shows; IPv4 and IPv6 entries share one lookup. */
static void test_resolve_peer_ipv6(void **state)
{
	struct neigh_entry e[3] = {
		{.addr = ip_of(ip6_b)}, {.addr = ip_of(ns.ip_b)}, {.addr = ip_of(ip6_silent)}};
	char err[128] = "", mac_text[18];
	struct neigh *n = neigh_open(ifindex, err, sizeof(err));
	uint8_t want[6];

	(void)state;
	assert_non_null(n);
	netns_sh("ip -n %s neigh flush all", ns.a);
	netns_sh("ip -n %s -6 neigh flush all", ns.a);
	assert_int_equal(neigh_lookup(n, e, 3), 0);
	assert_int_equal(e[0].state, NEIGH_ABSENT);
	assert_int_equal(e[1].state, NEIGH_ABSENT);
	assert_int_equal(neigh_resolve(n, &e[0].addr), 0);
	assert_int_equal(wait_known(n, e, 3000), NEIGH_KNOWN);
	mac_of(ns.mac_b, want);
	assert_memory_equal(e[0].mac, want, 6);
	snprintf(mac_text, sizeof(mac_text), "%02x:%02x:%02x:%02x:%02x:%02x", e[0].mac[0],
		 e[0].mac[1], e[0].mac[2], e[0].mac[3], e[0].mac[4], e[0].mac[5]);
	assert_int_equal(netns_sh("ip -n %s -6 neigh show %s dev %s | grep -q 'lladdr %s'", ns.a,
				  ip6_b, ns.if_a, mac_text),
			 0);
	/* One lookup over both families: the IPv4 peer after its own resolution. */
	assert_int_equal(neigh_resolve(n, &e[1].addr), 0);
	assert_int_equal(wait_known(n, &e[1], 3000), NEIGH_KNOWN);
	assert_int_equal(neigh_lookup(n, e, 3), 0);
	assert_int_equal(e[0].state, NEIGH_KNOWN);
	assert_int_equal(e[1].state, NEIGH_KNOWN);
	assert_memory_equal(e[1].mac, want, 6);
	assert_int_equal(e[2].state, NEIGH_ABSENT);
	neigh_close(n);
}

/* An IPv6 address nobody answers ends failed, never known; asking again is no error. */
static void test_silent_address_fails_ipv6(void **state)
{
	char err[128] = "";
	struct neigh *n = neigh_open(ifindex, err, sizeof(err));
	struct neigh_entry e = {.addr = ip_of(ip6_silent)};

	(void)state;
	assert_non_null(n);
	assert_int_equal(neigh_resolve(n, &e.addr), 0);
	assert_int_equal(neigh_lookup(n, &e, 1), 0);
	assert_true(e.state == NEIGH_PENDING || e.state == NEIGH_FAILED);
	assert_int_equal(wait_state(n, &e, NEIGH_FAILED, 5000), NEIGH_FAILED);
	assert_int_equal(neigh_resolve(n, &e.addr), 0);
	assert_int_not_equal(wait_state(n, &e, NEIGH_KNOWN, 200), NEIGH_KNOWN);
	neigh_close(n);
}

/* A permanent IPv6 entry on another interface is reported there only. */
static void test_other_interface_not_reported_ipv6(void **state)
{
	char err[128] = "", other_if[16];
	struct neigh *on_a, *on_other;
	struct neigh_entry e = {.addr = ip_of("2001:2:0:d3::9")};
	const uint8_t want[6] = {2, 0, 0, 0, 0, 0x19};

	(void)state;
	snprintf(other_if, sizeof(other_if), "%.12sz", ns.if_a);
	assert_int_equal(netns_sh("ip -n %s link add %s type veth peer name %sw && "
				  "ip -n %s addr add 2001:2:0:d3::1/64 dev %s nodad && "
				  "ip -n %s link set %s up && "
				  "ip -n %s -6 neigh add 2001:2:0:d3::9 lladdr 02:00:00:00:00:19 "
				  "dev %s nud permanent",
				  ns.a, other_if, ns.if_a, ns.a, other_if, ns.a, other_if, ns.a,
				  other_if),
			 0);
	on_a = neigh_open(ifindex, err, sizeof(err));
	on_other = neigh_open(if_nametoindex(other_if), err, sizeof(err));
	assert_non_null(on_a);
	assert_non_null(on_other);
	assert_int_equal(neigh_lookup(on_a, &e, 1), 0);
	assert_int_equal(e.state, NEIGH_ABSENT);
	assert_int_equal(neigh_lookup(on_other, &e, 1), 0);
	assert_int_equal(e.state, NEIGH_KNOWN);
	assert_memory_equal(e.mac, want, 6);
	neigh_close(on_a);
	neigh_close(on_other);
	netns_sh("ip -n %s link del %s", ns.a, other_if);
}

static void test_missing_interface(void **state)
{
	char err[128] = "";
	struct neigh *n = neigh_open(999999, err, sizeof(err));
	struct neigh_entry e = {.addr = ip_of(ns.ip_b)};
	struct inet_addr b6 = ip_of(ip6_b);

	(void)state;
	assert_non_null(n);
	assert_int_equal(neigh_resolve(n, &e.addr), -ENODEV);
	assert_int_equal(neigh_resolve(n, &b6), -ENODEV);
	assert_int_equal(neigh_lookup(n, &e, 1), 0);
	assert_int_equal(e.state, NEIGH_ABSENT);
	assert_string_equal(neigh_state_name(NEIGH_KNOWN), "known");
	assert_null(neigh_state_name(NEIGH_KNOWN + 1));
	neigh_close(n);
}

static int group_setup(void **state)
{
	(void)state;
	if (netns_up(&ns, "ng", 212) != 0 || netns_enter(&ns, ns.a) != 0)
		return -1;
	/* Unanswered ARP gives up after 3 probes 100 ms apart instead of 3 s. */
	netns_sh("ip netns exec %s sysctl -qw net.ipv4.neigh.%s.retrans_time_ms=100", ns.a,
		 ns.if_a);
	/* IPv6 on the pair, in 2001:2::/48 only; nodad: usable at once. ND gives up as fast. */
	snprintf(ip6_a, sizeof(ip6_a), "2001:2:0:%x::1", ns.net);
	snprintf(ip6_b, sizeof(ip6_b), "2001:2:0:%x::2", ns.net);
	snprintf(ip6_silent, sizeof(ip6_silent), "2001:2:0:%x::77", ns.net);
	if (netns_sh("ip netns exec %s sysctl -qw net.ipv6.conf.%s.disable_ipv6=0", ns.a,
		     ns.if_a) != 0 ||
	    netns_sh("ip netns exec %s sysctl -qw net.ipv6.conf.%s.disable_ipv6=0", ns.b,
		     ns.if_b) != 0 ||
	    netns_sh("ip -n %s addr add %s/64 dev %s nodad", ns.a, ip6_a, ns.if_a) != 0 ||
	    netns_sh("ip -n %s addr add %s/64 dev %s nodad", ns.b, ip6_b, ns.if_b) != 0)
		return -1;
	netns_sh("ip netns exec %s sysctl -qw net.ipv6.neigh.%s.retrans_time_ms=100", ns.a,
		 ns.if_a);
	ifindex = if_nametoindex(ns.if_a);
	return ifindex ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	netns_down(&ns);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve_peer),
		cmocka_unit_test(test_silent_address_fails),
		cmocka_unit_test(test_other_interface_not_reported),
		cmocka_unit_test(test_resolve_peer_ipv6),
		cmocka_unit_test(test_silent_address_fails_ipv6),
		cmocka_unit_test(test_other_interface_not_reported_ipv6),
		cmocka_unit_test(test_missing_interface),
	};

	if (geteuid() != 0) {
		printf("1..0 # SKIP needs root for namespaces\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
