/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reply steering (control lcore, at port start): rte_flow rules that put each node reply on
 * the RX queue of the worker whose reply ports it is addressed to, so that it does not cross
 * to that worker through a hand-off ring.
 *
 * Worker w's reply ports are one contiguous block, reply_port_base + w * (count / n_workers)
 * (dp_control.c, worker_new), so a rule per worker matches the block by a UDP destination
 * port mask where the PMD can mask ports (a block whose base is not aligned to its size is
 * cut into aligned pieces), and a rule per port where it matches exact ports only (net_tap:
 * TC flower takes no port mask). One set per family the node side speaks, tagged with the
 * node side's VLAN when that is fixed. A reply that no rule matches (another VLAN, a PMD
 * that refused) still reaches its worker through the hand-off; the rules only move work.
 *
 * Who cleans up: dp_reply_steer_remove() (rte_flow_flush) before the port stops; a PMD that
 * does not keep rules across a restart (RTE_ETH_DEV_CAPA_FLOW_RULE_KEEP unset, net_tap among
 * them) drops them at stop, so a restarted port needs dp_reply_steer_install() again.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_flow.h>

#include "dataplane_priv.h"

/* One rule's match: destination ports spec/mask (host order), family, and the target. */
struct steer_rule {
	uint16_t port;
	uint16_t mask;
	bool v6;
	uint16_t queue;
};

/* The VLAN the node side's replies carry when it is fixed and tagged (0: untagged / any). */
static uint16_t node_vlan(const struct dp_config *c)
{
	bool fixed = c->two_ports ? c->node_vlan_fixed : c->vlan_fixed;
	uint16_t vid = c->two_ports ? c->node_vlan_id : c->vlan_id;

	return fixed ? vid : 0;
}

/* Build and validate (@p create false) or create one rule; 0 or a negative errno with the
 * PMD's message in @p why. */
static int rule_apply(uint16_t port, const struct dp_config *c, const struct steer_rule *r,
		      bool create, char *why, size_t wlen)
{
	struct rte_flow_attr attr = {.ingress = 1};
	struct rte_flow_item_vlan vlan_spec = {0}, vlan_mask = {0};
	struct rte_flow_item_udp udp_spec = {0}, udp_mask = {0};
	struct rte_flow_action_queue queue = {.index = r->queue};
	struct rte_flow_item items[5];
	struct rte_flow_action actions[] = {
		{.type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &queue},
		{.type = RTE_FLOW_ACTION_TYPE_END},
	};
	struct rte_flow_error err = {0};
	uint16_t vid = node_vlan(c);
	unsigned int n = 0;
	int rc;

	memset(items, 0, sizeof(items));
	items[n++].type = RTE_FLOW_ITEM_TYPE_ETH;
	if (vid != 0) {
		vlan_spec.tci = rte_cpu_to_be_16(vid);
		vlan_mask.tci = rte_cpu_to_be_16(0x0fff);
		items[n].type = RTE_FLOW_ITEM_TYPE_VLAN;
		items[n].spec = &vlan_spec;
		items[n++].mask = &vlan_mask;
	}
	items[n++].type = r->v6 ? RTE_FLOW_ITEM_TYPE_IPV6 : RTE_FLOW_ITEM_TYPE_IPV4;
	udp_spec.hdr.dst_port = rte_cpu_to_be_16(r->port);
	udp_mask.hdr.dst_port = rte_cpu_to_be_16(r->mask);
	items[n].type = RTE_FLOW_ITEM_TYPE_UDP;
	items[n].spec = &udp_spec;
	items[n++].mask = &udp_mask;
	items[n].type = RTE_FLOW_ITEM_TYPE_END;
	if (create)
		rc = rte_flow_create(port, &attr, items, actions, &err) != NULL ? 0 : -rte_errno;
	else
		rc = rte_flow_validate(port, &attr, items, actions, &err);
	if (rc > 0)
		rc = -rc; /* a PMD that returns a positive errno */
	if (rc != 0)
		snprintf(why, wlen, "%s (%s)", err.message != NULL ? err.message : "refused",
			 rte_strerror(-rc));
	return rc;
}

/* The rules of worker @p wk's block [lo, lo + n) for one family: aligned blocks with a mask
 * (@p masked), or one per port. Calls @p fn on each; stops at its first error. */
static int for_block(uint32_t lo, uint32_t n, uint16_t wk, bool v6, bool masked,
		     int (*fn)(const struct steer_rule *, void *), void *arg)
{
	uint32_t hi = lo + n;

	while (lo < hi) {
		uint32_t size = 1;

		while (masked && size < 65536 && (lo & (size * 2 - 1)) == 0 && lo + size * 2 <= hi)
			size *= 2;

		struct steer_rule r = {
			.port = (uint16_t)lo,
			.mask = (uint16_t)(0xffffu & ~(size - 1)),
			.v6 = v6,
			.queue = wk,
		};
		int rc = fn(&r, arg);

		if (rc != 0)
			return rc;
		lo += size;
	}
	return 0;
}

struct steer_walk {
	uint16_t port;
	const struct dp_config *c;
	bool create;
	uint32_t rules;
	char *why;
	size_t wlen;
};

static int walk_rule(const struct steer_rule *r, void *arg)
{
	struct steer_walk *sw = arg;
	int rc = sw->create ? rule_apply(sw->port, sw->c, r, true, sw->why, sw->wlen) : 0;

	if (rc == 0)
		sw->rules++;
	return rc;
}

/* Every rule of the configuration, counted (@p sw->create false) or created. */
static int walk_all(struct steer_walk *sw, bool v4, bool v6, bool masked)
{
	const struct dp_config *c = sw->c;
	uint32_t per = c->reply_port_count / c->n_workers;
	int rc = 0;

	for (uint16_t w = 0; w < c->n_workers && rc == 0; w++) {
		uint32_t lo = (uint32_t)c->reply_port_base + (uint32_t)w * per;

		if (v4)
			rc = for_block(lo, per, w, false, masked, walk_rule, sw);
		if (rc == 0 && v6)
			rc = for_block(lo, per, w, true, masked, walk_rule, sw);
	}
	return rc;
}

/* The PMD takes the first rule of each family in this form (masked or exact)? */
static int probe(uint16_t port, const struct dp_config *c, bool v4, bool v6, bool masked, char *why,
		 size_t wlen)
{
	uint32_t per = c->reply_port_count / c->n_workers;
	uint32_t size = 1;
	int rc = 0;

	while (masked && (c->reply_port_base & (size * 2 - 1)) == 0 && size * 2 <= per)
		size *= 2;
	if (masked && size == 1)
		return -ENOTSUP; /* no block to mask: the exact form is the same rule */

	struct steer_rule r = {
		.port = c->reply_port_base,
		.mask = (uint16_t)(0xffffu & ~(size - 1)),
		.queue = c->n_workers - 1, /* the highest queue a rule names */
	};

	if (v4)
		rc = rule_apply(port, c, &r, false, why, wlen);
	r.v6 = true;
	if (rc == 0 && v6)
		rc = rule_apply(port, c, &r, false, why, wlen);
	return rc;
}

int dp_reply_steer_install(uint16_t port, const struct dp_config *c, struct dp_reply_steer *out)
{
	uint32_t ip4 = c->two_ports ? c->node_router_ip : c->router_ip;
	const uint8_t *ip6 =
		c->two_ports && dp_ip6_set(c->node_router_ip6) ? c->node_router_ip6 : c->router_ip6;
	bool v4 = ip4 != 0, v6 = dp_ip6_set(ip6);
	struct steer_walk sw = {.port = port, .c = c, .why = out->why, .wlen = sizeof(out->why)};
	char why_mask[sizeof(out->why)];
	int rc;

	memset(out, 0, sizeof(*out));
	out->port = port;
	if (c->n_workers < 2 || c->reply_port_count < c->n_workers) {
		snprintf(out->why, sizeof(out->why), "one worker: nothing to steer");
		return 0;
	}
	out->masked = true;
	rc = probe(port, c, v4, v6, true, why_mask, sizeof(why_mask));
	if (rc != 0) {
		out->masked = false;
		rc = probe(port, c, v4, v6, false, out->why, sizeof(out->why));
	}
	if (rc == 0) {
		walk_all(&sw, v4, v6, out->masked); /* counts */
		if (sw.rules > DP_STEER_RULES_MAX) {
			snprintf(out->why, sizeof(out->why),
				 "exact-port rules only: %u needed, at most %u (lower "
				 "reply_port_count)",
				 sw.rules, DP_STEER_RULES_MAX);
			rc = -E2BIG;
		}
	}
	if (rc == 0) {
		sw.create = true;
		sw.rules = 0;
		rc = walk_all(&sw, v4, v6, out->masked);
		if (rc != 0)
			dp_reply_steer_remove(port);
		else
			out->rules = sw.rules;
	}
	out->err = rc;
	if (rc == 0)
		out->why[0] = '\0';
	return rc;
}

int dp_reply_steer_remove(uint16_t port)
{
	struct rte_flow_error err;

	return rte_flow_flush(port, &err);
}
