/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control side of the data plane (control lcore unless noted): creation and teardown,
 * placement publication with RCU, neighbour (ARP) timers, and the counters as the telemetry
 * thread and the exit print read them (any thread).
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_random.h>
#include <rte_telemetry.h>

#include "dataplane_priv.h"
#include "dp_frag.h"
#include "dp_hot.h"
#include "inet.h"

static const char *const counter_names[] = {
#define DP_CTR_NAME(e, s) s,
	DP_FOREACH_COUNTER(DP_CTR_NAME)
#undef DP_CTR_NAME
};

static const char *const drop_names[] = {
#define DP_DROP_NAME(e, s) s,
	DP_FOREACH_DROP(DP_DROP_NAME)
#undef DP_DROP_NAME
};

enum dp_gauge {
#define DP_GAUGE_ENUM(type, member, name) DP_GAUGE_##member,
	DP_FOREACH_GAUGE(DP_GAUGE_ENUM)
#undef DP_GAUGE_ENUM
		DP_GAUGE_COUNT
};

static const char *const gauge_names[] = {
#define DP_GAUGE_NAME(type, member, name) name,
	DP_FOREACH_GAUGE(DP_GAUGE_NAME)
#undef DP_GAUGE_NAME
};

/* Every gauge of @p s as a uint64_t, in DP_FOREACH_GAUGE order. */
static void gauge_values(const struct dp_stats *s, uint64_t v[DP_GAUGE_COUNT])
{
#define DP_GAUGE_VALUE(type, member, name) v[DP_GAUGE_##member] = (uint64_t)s->member;
	DP_FOREACH_GAUGE(DP_GAUGE_VALUE)
#undef DP_GAUGE_VALUE
}

static const char *const node_field_names[] = {
#define DP_NODE_FIELD_NAME(kind, member, name) name,
	DP_FOREACH_NODE_FIELD(DP_NODE_FIELD_NAME)
#undef DP_NODE_FIELD_NAME
};

const char *dp_node_field_name(enum dp_node_field f)
{
	return (unsigned int)f < DP_NODE_FIELD_COUNT ? node_field_names[f] : "unknown";
}

/* The TEXT fields of DP_FOREACH_NODE_FIELD. */
static void node_text(const struct dp_node_stats *n, enum dp_node_field f, char *text, size_t len)
{
	char a[INET_ADDRSTRLEN];

	switch (f) {
	case DP_NODE_F_name:
		snprintf(text, len, "%s", n->name);
		break;
	case DP_NODE_F_address:
		if (n->v6) {
			struct inet_addr ia;
			char e[INET_ENDPOINT_TEXT_MAX];

			inet_from_v6(&ia, n->ip6);
			inet_format_endpoint(&ia, n->port, e);
			snprintf(text, len, "%s", e);
			break;
		}
		inet_ntop(AF_INET, &n->ip, a, sizeof(a));
		snprintf(text, len, "%s:%u", a, n->port);
		break;
	case DP_NODE_F_health:
		snprintf(text, len, "%s%s%s", hl_state_name(n->health), n->held ? ",held" : "",
			 n->stale ? ",stale" : "");
		break;
	case DP_NODE_F_failover:
		snprintf(text, len, "%s",
			 hl_serving(&(struct hl_node){.state = n->health})
				 ? "-"
				 : dp_failover_name(n->failover_mode));
		break;
	case DP_NODE_F_via:
		if (n->nh_ip == 0) {
			snprintf(text, len, "none");
		} else if (n->v6 ? memcmp(n->nh_ip6, n->ip6, 16) == 0 : n->nh_ip == n->ip) {
			snprintf(text, len, "direct");
		} else if (n->v6) {
			char a6[INET_TEXT_MAX];
			struct inet_addr ia;

			inet_from_v6(&ia, n->nh_ip6);
			inet_format(&ia, a6);
			snprintf(text, len, "%s", a6);
		} else {
			inet_ntop(AF_INET, &n->nh_ip, a, sizeof(a));
			snprintf(text, len, "%s", a);
		}
		break;
	case DP_NODE_F_mac:
		if (n->mac_known)
			rte_ether_format_addr(text, len, (const struct rte_ether_addr *)n->mac);
		else
			snprintf(text, len, "unknown");
		break;
	default:
		snprintf(text, len, "?");
		break;
	}
}

#define NODE_VALUE_TEXT(member)
#define NODE_VALUE_U64(member)            \
	case DP_NODE_F_##member:          \
		*v = (uint64_t)n->member; \
		return 0;
#define NODE_VALUE(kind, member, name) NODE_VALUE_##kind(member)

int dp_node_field(const struct dp_node_stats *n, enum dp_node_field f, char *text, size_t len,
		  uint64_t *v)
{
	if ((unsigned int)f >= DP_NODE_FIELD_COUNT)
		return -EINVAL;
	switch (f) {
		DP_FOREACH_NODE_FIELD(NODE_VALUE)
	default:
		break;
	}
	node_text(n, f, text, len);
	return 1;
}

#undef NODE_VALUE
#undef NODE_VALUE_U64
#undef NODE_VALUE_TEXT

static const char *const failover_names[] = {
#define DP_FAILOVER_NAME(e, s) s,
	DP_FOREACH_FAILOVER(DP_FAILOVER_NAME)
#undef DP_FAILOVER_NAME
};

const char *dp_failover_name(enum dp_failover f)
{
	return (unsigned int)f < DP_FAILOVER_COUNT ? failover_names[f] : "unknown";
}

int dp_failover_parse(const char *name, enum dp_failover *out)
{
	for (int f = 0; f < DP_FAILOVER_COUNT; f++)
		if (strcmp(name, failover_names[f]) == 0) {
			*out = (enum dp_failover)f;
			return 0;
		}
	return -EINVAL;
}

const char *dp_counter_name(enum dp_counter c)
{
	return (unsigned int)c < DP_CTR_COUNT ? counter_names[c] : "unknown";
}

const char *dp_drop_name(enum dp_drop d)
{
	return (unsigned int)d < DP_DROP_COUNT ? drop_names[d] : "unknown";
}

void dp_config_defaults(struct dp_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->n_workers = 1;
	cfg->listen_ports[0] = 11211;
	cfg->n_listen = 1;
	cfg->reply_port_base = 32768;
	cfg->reply_port_count = 16384;
	cfg->slots = 4096;
	cfg->request_timeout_ms = 1000;
	cfg->quiet_read_ms = 20;
	cfg->client_slots_max = 0; /* ringway's config sets one */
	cfg->burst = 32;
	cfg->handoff_ring = 1024;
	cfg->neighbours = 1024;
	cfg->arp_retry_ms = 1000;
	cfg->arp_attempts = 5;
	cfg->arp_lifetime_s = 300;
	cfg->idle = DP_IDLE_POLL;
	cfg->backoff_us = 100;
	cfg->backoff_after = 1024;
	cfg->mtu = 1500;
	cfg->frag_entries = 128;
	cfg->frag_timeout_ms = 500;
	cfg->mget_max = 128;
	cfg->mget_bytes = 2u << 20;
	cfg->mget_send_burst = 256;
	cfg->slow_factor_pct = 300;
	cfg->slow_window_ms = 10000;
	cfg->slow_min_replies = 100;
	hl_config_defaults(&cfg->health);
	cfg->failover = DP_FAILOVER_NEXT;
	cfg->failover_ttl_s = 60;
	cfg->replicas = 1;
	cfg->warm_ttl_s = 300; /* warm_window_s 0: warm-up off */
	cfg->dirty_keys_max = 10000;
	cfg->probe_port = 0; /* one below the reply range */
	cfg->hot_sample_every = 64;
	cfg->hot_sketch_keys = 64;
	cfg->hot_interval_ms = 1000;
	cfg->hot_threshold_pct = 0;
	cfg->hot_replicas = 3;
	cfg->hot_load_pct = 25;
	cfg->hot_fill_ttl_s = 10;
}

static bool is_pow2(uint64_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

static uint32_t log2_floor(uint64_t v)
{
	uint32_t r = 0;

	while (v >>= 1)
		r++;
	return r;
}

static int config_check(const struct dp_config *c)
{
	if (c->n_workers == 0 || c->n_workers > DP_WORKERS_MAX || c->n_listen == 0 ||
	    c->n_listen > DP_LISTEN_MAX || c->n_allowed > DP_PREFIXES_MAX ||
	    c->n_allowed6 > DP_PREFIXES_MAX)
		return -EINVAL;
	if (!is_pow2(c->slots) || c->slots < 64 || c->slots > 65536)
		return -EINVAL;
	if (!is_pow2(c->reply_port_count) || c->reply_port_count < c->n_workers ||
	    (uint32_t)c->reply_port_base + c->reply_port_count > 65536 || c->reply_port_base == 0)
		return -EINVAL;
	for (uint16_t i = 0; i < c->n_listen; i++)
		if (c->listen_ports[i] >= c->reply_port_base &&
		    (uint32_t)(c->listen_ports[i] - c->reply_port_base) < c->reply_port_count)
			return -EINVAL;
	if (c->burst == 0 || c->burst > DP_BURST_MAX || !is_pow2(c->handoff_ring) ||
	    c->neighbours == 0 || c->arp_attempts == 0)
		return -EINVAL;
	if (c->slow_window_ms == 0 || (c->vlan_fixed && c->vlan_id > 4094))
		return -EINVAL;
	if (c->hot_sketch_keys == 0 || c->hot_sketch_keys > HK_K_MAX || c->hot_interval_ms == 0 ||
	    c->hot_replicas < 2 || c->hot_replicas > DP_HOT_R_MAX)
		return -EINVAL;
	if (c->two_ports && (c->node_port_id == c->port_id ||
			     (c->node_router_ip == 0 && !dp_ip6_set(c->node_router_ip6)) ||
			     (c->node_vlan_fixed && c->node_vlan_id > 4094)))
		return -EINVAL;
	/* No IPv4 address (IPv6-only): no IPv4 client either (nothing IPv4 is received). */
	if (c->router_ip == 0 && c->n_allowed > 0)
		return -EINVAL;
	if (c->mget_max >= DP_NO_MGET || (c->mtu != 0 && (c->mtu < 576 || c->mtu > 9000)))
		return -EINVAL;
	if (c->frag_entries > 65536 || c->frag_timeout_ms > 60000)
		return -EINVAL;
	if (dp_generation_bits(c->slots, c->reply_port_count, c->n_workers) < DP_GEN_BITS_MIN ||
	    dp_mget_datagrams_max(c->mget_bytes, c->mtu) > DP_REPLY_DATAGRAMS_MAX ||
	    c->mget_send_burst == 0 || c->n_client_macs > DP_CLIENT_MACS_MAX)
		return -EINVAL;
	if (hl_config_check(&c->health) != 0 || (unsigned int)c->failover >= DP_FAILOVER_COUNT ||
	    c->failover_ttl_s == 0 || c->replicas > PL_REPLICAS_MAX)
		return -EINVAL;
	for (uint16_t i = 0; i < c->n_listen; i++)
		if (c->listen_ports[i] == c->probe_port)
			return -EINVAL;
	if (c->probe_port == 0 ||
	    (c->probe_port >= c->reply_port_base &&
	     (uint32_t)(c->probe_port - c->reply_port_base) < c->reply_port_count))
		return -EINVAL;
	return 0;
}

/* A view no worker can read any more, with its placement and gutter pool; NULL is fine. */
static void view_free(struct dp_view *v)
{
	dp_view_free(v);
}


static void worker_free(struct dp_worker *w)
{
	if (w == NULL)
		return;
	view_free(atomic_load_explicit(&w->view, memory_order_relaxed));
	rte_ring_free(w->handoff);
	if (w->ctl_ring != NULL) {
		void *m; /* rings hold void *: no type-punned writes into an mbuf pointer */

		while (rte_ring_dequeue(w->ctl_ring, &m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(w->ctl_ring);
	}
	dp_mget_free(w);
	dp_warm_free(w);
	dp_obs_worker_free(w);
	dp_hot_worker_free(w);
	dp_frag_free(w);
	rte_free(w->slots);
	rte_free(w->slot6);
	rte_free(w->free_fifo);
	rte_free(w->quiet_q);
	rte_free(w->clients);
	rte_free(w->parsers);
	rte_free(w->parser_free);
	rte_free(w->node_fwd);
	rte_free(w->node_ret);
	rte_free(w->node_tmo);
	rte_free(w->node_lost);
	rte_free(w->dirty);
	rte_free(w);
}

/* Pattern @p t from the frame bytes @p want and the bits of them that count, @p mask: parts
 * at frame offsets 0, 16 and @p off3 (struct dp_hdr_tmpl). */
static void hdr_tmpl_fill(struct dp_hdr_tmpl *t, const uint8_t *want, const uint8_t *mask,
			  int off3)
{
	const int off[3] = {0, 16, off3};

	for (int i = 0; i < 3; i++) {
		memcpy(t->want[i], want + off[i], 16);
		memcpy(t->mask[i], mask + off[i], 16);
	}
}

/* The frame pattern of the client port (@p node false) or the node port (struct
 * dp_hdr_tmpl), IPv4 or (@p v6) IPv6, from the addresses and VLAN dp_rx_side() sets for that
 * port: no frame takes it without an address of the family, nor on a VLAN other than 0. */
static void hdr_tmpl_build(struct dp_hdr_tmpl *t, const struct dp_config *c, bool node, bool v6)
{
	uint32_t ip = node ? c->node_router_ip : c->router_ip;
	const uint8_t *ip6 = node ? c->node_router_ip6 : c->router_ip6;
	bool vlan_fixed = node ? c->node_vlan_fixed : c->vlan_fixed;
	uint16_t vid = node ? c->node_vlan_id : c->vlan_id;
	uint8_t want[DP_HDR6_TMPL_LEN] = {0}, mask[DP_HDR6_TMPL_LEN] = {0};
	bool has_addr = v6 ? dp_ip6_set(ip6) : ip != 0;

	memcpy(want, node ? c->node_router_mac : c->router_mac, 6); /* destination */
	memset(mask, 0xff, 6);
	mask[6] = 0x01; /* the source's group bit: clear */
	if (v6) {
		want[12] = 0x86; /* EtherType IPv6, no VLAN tag */
		want[13] = 0xdd;
		memset(mask + 12, 0xff, 2);
		want[14] = 0x60; /* version 6 */
		mask[14] = 0xf0;
		want[20] = IPPROTO_UDP; /* next header: no extension header */
		mask[20] = 0xff;
		memcpy(want + 38, ip6, 16); /* destination address */
		memset(mask + 38, 0xff, 16);
		hdr_tmpl_fill(t, want, mask, 38);
	} else {
		want[12] = 0x08; /* EtherType IPv4, no VLAN tag */
		memset(mask + 12, 0xff, 3);
		want[14] = 0x45; /* version 4, no options */
		mask[20] = 0x3f; /* MF and the fragment offset: 0 */
		mask[21] = 0xff;
		want[23] = IPPROTO_UDP;
		mask[23] = 0xff;
		memcpy(want + 30, &ip, 4); /* destination address, as stored */
		memset(mask + 30, 0xff, 4);
		hdr_tmpl_fill(t, want, mask, 26);
	}
	/* Untagged frames are served on a port with no VLAN or VLAN 0 only (vlan_want). */
	t->min_len = has_addr && (!vlan_fixed || vid == 0)
			     ? (v6 ? DP_HDR6_TMPL_LEN + (uint32_t)sizeof(struct rte_udp_hdr)
				   : DP_HDR_TMPL_LEN)
			     : UINT32_MAX;
}

static _Atomic uint32_t dp_instances;
/* The dp the telemetry commands report on (one per process). */
static struct dp *tel_dp;

static struct dp_worker *worker_new(struct dp *dp, uint16_t id, uint32_t inst)
{
	const struct dp_config *c = &dp->cfg;
	int socket = (int)c->worker_socket[id];
	struct dp_worker *w =
		rte_zmalloc_socket("dp_worker", sizeof(*w), RTE_CACHE_LINE_SIZE, socket);
	char name[RTE_RING_NAMESIZE];
	uint32_t ports_per_worker = c->reply_port_count / c->n_workers;

	if (w == NULL)
		return NULL;
	w->dp = dp;
	w->id = id;
	for (uint32_t i = 0; i < DP_AHEAD_RING; i++) {
		w->ahead_pkt[i].hint.req = &w->ahead[i];
		w->ahead_pkt[i].pk.hint = &w->ahead_pkt[i].hint; /* the worker never moves it */
	}
	w->n_workers = c->n_workers;
	w->port_id = c->port_id;
	w->queue_id = id;
	w->burst = (uint16_t)c->burst;
	w->n_listen = c->n_listen;
	memcpy(w->listen, c->listen_ports, sizeof(w->listen));
	w->n_allowed = c->n_allowed;
	w->allowed = dp->cfg.allowed;
	w->n_allowed6 = c->n_allowed6;
	w->allowed6 = dp->cfg.allowed6;
	w->n_client_macs = c->n_client_macs;
	w->client_macs = dp->client_macs;
	w->reply_base = c->reply_port_base;
	w->reply_count = c->reply_port_count;
	w->port_shift = log2_floor(ports_per_worker);
	w->slot_lo_bits =
		log2_floor(c->slots) > w->port_shift ? log2_floor(c->slots) - w->port_shift : 0;
	w->port_mask = (1u << w->port_shift) - 1;
	w->lo_mask = (1u << w->slot_lo_bits) - 1;
	w->gen_step = 1u << w->slot_lo_bits;
	w->my_port_base = (uint32_t)w->reply_base + ((uint32_t)w->id << w->port_shift);
	w->slot_mask = c->slots - 1;
	w->two_ports = c->two_ports;
	w->link_gated = c->link_gated;
	w->port_up = true;
	w->node_port_up = true;
	w->node_port_id = c->node_port_id;
	w->client_src_ip = c->router_ip;
	memcpy(&w->client_src_mac, c->router_mac, 6);
	w->node_src_ip = dp->cfg.node_router_ip;
	memcpy(w->client_src_ip6, c->router_ip6, 16);
	memcpy(w->node_src_ip6, dp->cfg.node_router_ip6, 16);
	w->node_vlan_fixed = dp->cfg.node_vlan_fixed;
	/* What keeps every request off the fast lane for the worker's life (dp_fast.h): a client
	 * MAC list, a re-tag towards the nodes, or the lane turned off. */
	w->fast_off = c->no_fast_lane || c->n_client_macs != 0 || (w->two_ports && w->node_vlan_fixed);
	w->node_vlan_tagged = dp->cfg.node_vlan_fixed && dp->cfg.node_vlan_id != 0;
	w->node_vlan_tci = rte_cpu_to_be_16(dp->cfg.node_vlan_id);
	memcpy(&w->node_src_mac, dp->cfg.node_router_mac, 6);
	for (int i = 0; i < 2; i++) {
		hdr_tmpl_build(&w->hdr_side[i], c, i == 1, false);
		hdr_tmpl_build(&w->hdr6_side[i], c, i == 1, true);
	}
	dp_rx_side(w, false);
	w->tx_offload = c->tx_cksum_offload;
	w->mtu = c->mtu != 0 ? c->mtu : 1500;
	/* Frames over the MTU leave the pattern: check_ipv4() sends them to be fragmented. */
	for (int i = 0; i < 4; i++) {
		struct dp_hdr_tmpl *t = i < 2 ? &w->hdr_side[i] : &w->hdr6_side[i - 2];

		t->len_span = t->min_len == UINT32_MAX
				      ? 0
				      : (uint32_t)sizeof(struct rte_ether_hdr) + w->mtu - t->min_len;
	}
	dp_rx_side(w, false);
	w->eps = dp->eps;
	w->timeout_tsc = (uint64_t)c->request_timeout_ms * dp->tsc_hz / 1000;
	/* 0 or more than the request timeout: the request timeout. */
	w->quiet_tsc =
		(uint64_t)(c->quiet_read_ms != 0 ? RTE_MIN(c->quiet_read_ms, c->request_timeout_ms)
						 : c->request_timeout_ms) *
		dp->tsc_hz / 1000;
	w->idle = c->idle;
	w->backoff_us = c->backoff_us;
	w->backoff_after = c->backoff_after;
	w->slots = rte_zmalloc_socket("dp_slots", sizeof(*w->slots) * c->slots, RTE_CACHE_LINE_SIZE,
				      socket);
	w->slot6 = rte_zmalloc_socket("dp_slot6", sizeof(*w->slot6) * c->slots, RTE_CACHE_LINE_SIZE,
				      socket);
	w->free_fifo = rte_malloc_socket("dp_free", sizeof(uint32_t) * c->slots, 0, socket);
	w->quiet_q = rte_malloc_socket("dp_quiet", sizeof(*w->quiet_q) * c->slots, 0, socket);
	w->client_max = c->client_slots_max;
	if (w->client_max != 0) {
		/* Each live slot adds at most one address: at most half full. A random odd
		 * multiplier, so no sender can aim addresses at one probe run. */
		w->client_mask = 2 * c->slots - 1;
		w->client_seed = rte_rand() | 1;
		w->clients = rte_zmalloc_socket("dp_clients", sizeof(*w->clients) * 2 * c->slots,
						RTE_CACHE_LINE_SIZE, socket);
	}
	w->node_fwd = rte_zmalloc_socket("dp_nfwd", sizeof(uint64_t) * c->neighbours,
					 RTE_CACHE_LINE_SIZE, socket);
	w->node_ret = rte_zmalloc_socket("dp_nret", sizeof(uint64_t) * c->neighbours,
					 RTE_CACHE_LINE_SIZE, socket);
	w->node_tmo = rte_zmalloc_socket("dp_ntmo", sizeof(uint64_t) * c->neighbours,
					 RTE_CACHE_LINE_SIZE, socket);
	w->node_lost = rte_zmalloc_socket("dp_nlost", sizeof(uint64_t) * c->neighbours,
					  RTE_CACHE_LINE_SIZE, socket);
	w->dirty = rte_malloc_socket("dp_dirty", sizeof(*w->dirty) * DP_DIRTY_RING,
				     RTE_CACHE_LINE_SIZE, socket);
	w->failover = (uint8_t)c->failover;
	w->failover_ttl_s = c->failover_ttl_s;
	w->replicas = c->replicas > 1 ? c->replicas : 1;
	w->fo_seen = dp->fo_seen;
	w->probe_port = c->probe_port;
	snprintf(name, sizeof(name), "dp%u_ho%u", inst, id);
	w->handoff = rte_ring_create(name, c->handoff_ring, socket, RING_F_SC_DEQ);
	if (id == 0) {
		snprintf(name, sizeof(name), "dp%u_ctl", inst);
		w->ctl_ring = rte_ring_create(name, 256, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
	}
	/* slots/8 for pipelines, and up to 4 nodes per multi-get being merged. */
	w->n_parser_free = RTE_MIN(c->slots / 8 + c->mget_max * 4, 65535u);
	w->parsers = rte_malloc_socket("dp_parsers", sizeof(*w->parsers) * w->n_parser_free,
				       RTE_CACHE_LINE_SIZE, socket);
	w->parser_free =
		rte_malloc_socket("dp_pfree", sizeof(uint16_t) * w->n_parser_free, 0, socket);
	if (w->parsers == NULL || w->parser_free == NULL) {
		worker_free(w);
		return NULL;
	}
	for (uint32_t i = 0; i < w->n_parser_free; i++)
		w->parser_free[i] = (uint16_t)(w->n_parser_free - 1 - i);
	if (w->slots == NULL || w->slot6 == NULL || w->free_fifo == NULL || w->quiet_q == NULL ||
	    (w->client_max != 0 && w->clients == NULL) || w->node_fwd == NULL ||
	    w->node_tmo == NULL || w->node_lost == NULL || w->dirty == NULL ||
	    w->node_ret == NULL || w->handoff == NULL || (id == 0 && w->ctl_ring == NULL) ||
	    dp_mget_init(w, c, socket) != 0 || dp_obs_worker_init(w, c, socket) != 0 ||
	    dp_warm_init(w, c, socket) != 0 || dp_hot_worker_init(w, c, socket) != 0 ||
	    dp_frag_create(w, c->frag_entries, c->frag_timeout_ms != 0 ? c->frag_timeout_ms : 500,
			   socket) != 0) {
		worker_free(w);
		return NULL;
	}
	/* Generations start at random per slot: the first request ids are not predictable. */
	for (uint32_t s = 0; s < c->slots; s++) {
		w->free_fifo[s] = s;
		w->slots[s].parser = DP_NO_PARSER;
		w->slots[s].reqid =
			(uint16_t)((rte_rand() & (0xffffu >> w->slot_lo_bits)) << w->slot_lo_bits |
				   (s & w->lo_mask));
		w->slots[s].port_be =
			rte_cpu_to_be_16((uint16_t)(w->my_port_base + (s >> w->slot_lo_bits)));
	}
	w->free_head = 0;
	w->free_tail = c->slots;
	return w;
}

struct dp *dp_create(const struct dp_config *cfg)
{
	struct dp *dp;
	size_t rcu_size;
	uint32_t inst = atomic_fetch_add(&dp_instances, 1);

	struct dp_config c;

	if (cfg == NULL) {
		errno = EINVAL;
		return NULL;
	}
	c = *cfg;
	if (c.probe_port == 0 && c.reply_port_base > 1)
		c.probe_port = (uint16_t)(c.reply_port_base - 1);
	if (config_check(&c) != 0) {
		errno = EINVAL;
		return NULL;
	}
	cfg = &c;
	dp = rte_zmalloc("dp", sizeof(*dp), RTE_CACHE_LINE_SIZE);
	if (dp == NULL)
		goto nomem;
	dp->cfg = *cfg;
	if (!cfg->two_ports) { /* one port: the node side is the client side */
		dp->cfg.node_port_id = cfg->port_id;
		dp->cfg.node_router_ip = cfg->router_ip;
		memcpy(dp->cfg.node_router_ip6, cfg->router_ip6, 16);
		memcpy(dp->cfg.node_router_mac, cfg->router_mac, 6);
		dp->cfg.node_vlan_fixed = cfg->vlan_fixed;
		dp->cfg.node_vlan_id = cfg->vlan_id;
	}
	dp->tsc_hz = rte_get_tsc_hz();
	{
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		dp->unix_tsc0 = rte_rdtsc();
		dp->unix_s0 = (uint64_t)ts.tv_sec;
	}
	for (uint16_t i = 0; i < cfg->n_client_macs; i++)
		memcpy(&dp->client_macs[i], cfg->client_macs[i], 6); /* little-endian, as eps */
	dp->eps = rte_zmalloc("dp_eps", sizeof(*dp->eps) * cfg->neighbours, RTE_CACHE_LINE_SIZE);
	rcu_size = rte_rcu_qsbr_get_memsize(cfg->n_workers);
	dp->rcu = rte_zmalloc("dp_rcu", rcu_size, RTE_CACHE_LINE_SIZE);
	if (dp->eps == NULL || dp->rcu == NULL || dp_obs_init(dp) != 0 || dp_hot_init(dp) != 0 ||
	    dp_health_init(dp) != 0)
		goto nomem;
	if (rte_rcu_qsbr_init(dp->rcu, cfg->n_workers) != 0) {
		dp_free(dp);
		errno = EINVAL;
		return NULL;
	}
	for (uint16_t i = 0; i < cfg->n_workers; i++) {
		dp->w[i] = worker_new(dp, i, inst);
		if (dp->w[i] == NULL)
			goto nomem;
		dp->handoff_rings[i] = dp->w[i]->handoff;
	}
	return dp;
nomem:
	dp_free(dp);
	errno = ENOMEM;
	return NULL;
}

void dp_free(struct dp *dp)
{
	if (dp == NULL)
		return;
	if (tel_dp == dp)
		tel_dp = NULL;
	dp_health_free(dp);
	for (unsigned int i = 0; i < DP_WORKERS_MAX; i++)
		worker_free(dp->w[i]);
	dp_obs_free(dp);
	dp_hot_free(dp);
	pl_free(dp->gutter.pl);
	free(dp->gutter.ep);
	rte_free(dp->rcu);
	rte_free(dp->eps);
	rte_free(dp);
}

struct dp_worker *dp_worker_get(struct dp *dp, unsigned int idx)
{
	return dp != NULL && idx < dp->cfg.n_workers ? dp->w[idx] : NULL;
}

void dp_stop(struct dp *dp)
{
	atomic_store_explicit(&dp->stop, true, memory_order_relaxed);
}

void dp_quiesce(const struct dp *dp)
{
	rte_rcu_qsbr_synchronize(dp->rcu, RTE_QSBR_THRID_INVALID);
}

uint64_t dp_epoch(const struct dp *dp)
{
	return atomic_load_explicit(&dp->epoch, memory_order_relaxed);
}

/* ---- publication ---------------------------------------------------------------------- */

/* A clone's allocations on one socket, counted (the warm-up gauge reports held views). */
struct socket_ctx {
	int socket;
	size_t bytes;
};

static void *socket_alloc(size_t size, size_t align, void *ctx)
{
	struct socket_ctx *c = ctx;

	c->bytes += size;
	return rte_malloc_socket("dp_pl", size, (unsigned int)align, c->socket);
}

static void socket_free(void *ptr, void *ctx)
{
	(void)ctx;
	rte_free(ptr);
}

/* Endpoints in use by address:port, for one publication (control lcore, malloc is fine):
 * open addressing, linear probing, at most half full. Every endpoint in use has an entry of
 * its own: IPv6 keys hold only the address's fold, so two nodes may share a key, and
 * two members at one address:port each have an endpoint (ep_find tells them apart). */
struct ep_index {
	uint64_t *keys; /* dp_src_key(); 0 = empty */
	uint32_t *idx;
	uint32_t mask;
};

static uint64_t ep_key(uint32_t ip, uint16_t port, bool v6)
{
	return dp_src_key(ip, port, v6);
}

/* The address word endpoints of @p a are keyed by: IPv4 itself, IPv6 folded (dp_fold6). */
static uint32_t ep_word(const struct inet_addr *a)
{
	return inet_is_v4(a) ? inet_v4(a) : dp_fold6(a->b);
}

/* The address of endpoint @p e (used). */
static void ep_addr(const struct dp_endpoint *e, struct inet_addr *a)
{
	if (e->v6)
		inet_from_v6(a, e->ip6);
	else
		inet_from_v4(a, atomic_load_explicit(&e->ip, memory_order_relaxed));
}

static uint32_t ep_hash(const struct ep_index *x, uint64_t key)
{
	return (uint32_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & x->mask;
}

static int ep_index_build(const struct dp *dp, struct ep_index *x)
{
	uint32_t n = atomic_load_explicit(&dp->n_eps_hwm, memory_order_relaxed), size = 16;

	while (size < 2 * n)
		size <<= 1;
	x->mask = size - 1;
	x->keys = calloc(size, sizeof(*x->keys));
	x->idx = calloc(size, sizeof(*x->idx));
	if (x->keys == NULL || x->idx == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		const struct dp_endpoint *e = &dp->eps[i];
		uint64_t key;
		uint32_t h;

		if (!e->used)
			continue;
		key = ep_key(atomic_load_explicit(&e->ip, memory_order_relaxed), e->port, e->v6);
		for (h = ep_hash(x, key); x->keys[h] != 0; h = (h + 1) & x->mask)
			;
		x->keys[h] = key;
		x->idx[h] = i;
	}
	return 0;
}

static void ep_index_free(struct ep_index *x)
{
	free(x->keys);
	free(x->idx);
}

/* The endpoint at @p a : @p port not in @p taken, or -ENOENT: one in a published ring first
 * (the node as workers know it), else any in use (a node removed, or of the gutter pool).
 * An IPv6 address is compared in full: another node whose fold is the same is not it, and
 * keeps its own entry whatever is added or removed beside it. */
static int32_t ep_find(const struct dp *dp, const struct ep_index *x, const struct inet_addr *a,
		       uint16_t port, const uint8_t *taken)
{
	bool v6 = !inet_is_v4(a);
	uint64_t key = ep_key(ep_word(a), port, v6);
	int32_t any = -ENOENT;

	for (uint32_t h = ep_hash(x, key); x->keys[h] != 0; h = (h + 1) & x->mask) {
		const struct dp_endpoint *e = &dp->eps[x->idx[h]];

		if (x->keys[h] != key || taken[x->idx[h]] || (v6 && memcmp(e->ip6, a->b, 16) != 0))
			continue;
		if (e->in_ring)
			return (int32_t)x->idx[h];
		if (any < 0)
			any = (int32_t)x->idx[h];
	}
	return any;
}

/* Whether endpoint @p i left its last ring or pool less than two request timeouts ago: its
 * node's requests may still time out or be answered late. */
static bool ep_recent(const struct dp *dp, uint32_t i, uint64_t now)
{
	uint64_t hold = 2 * (uint64_t)dp->cfg.request_timeout_ms * dp->tsc_hz / 1000;

	return dp->eps[i].released_tsc != 0 && now - dp->eps[i].released_tsc < hold;
}

/* A free endpoint index not in @p taken, from *cursor on (what lies before it was refused
 * and stays refused during one plan): never used, or used by no ring and no gutter pool;
 * unless @p recent_ok, not one released recently (ep_recent). */
static int32_t ep_claimable(const struct dp *dp, const uint8_t *taken, uint32_t *cursor,
			    bool recent_ok)
{
	uint64_t now = rte_rdtsc();

	for (; *cursor < dp->cfg.neighbours; (*cursor)++) {
		uint32_t i = *cursor;

		if (!taken[i] && !dp->eps[i].warm_hold &&
		    (!dp->eps[i].used || (!dp->eps[i].in_ring && !dp->eps[i].in_gutter)) &&
		    (recent_ok || !dp->eps[i].used || !ep_recent(dp, i, now)))
			return (int32_t)i;
	}
	return -ENOSPC;
}

static uint64_t ep_sum(const struct dp *dp, uint32_t i, bool fwd)
{
	uint64_t s = 0;

	for (uint16_t k = 0; k < dp->cfg.n_workers; k++)
		s += fwd ? dp->w[k]->node_fwd[i] : dp->w[k]->node_ret[i];
	return s;
}

static uint64_t ep_sum_mget(const struct dp *dp, uint32_t i)
{
	uint64_t s = 0;

	for (uint16_t k = 0; k < dp->cfg.n_workers; k++)
		s += dp->w[k]->node_mget_partial[i];
	return s;
}

/* The workers' timeouts (@p lost false) or lost dirty keys of endpoint @p i, summed. */
static uint64_t ep_sum_health(const struct dp *dp, uint32_t i, bool lost)
{
	uint64_t s = 0;

	for (uint16_t k = 0; k < dp->cfg.n_workers; k++)
		s += lost ? dp->w[k]->node_lost[i] : dp->w[k]->node_tmo[i];
	return s;
}

/* A member joins at endpoint @p i (a new node, or one that comes back after it left every
 * ring and pool): it starts clean. Its counters count from the workers' sums now, its
 * health is forgotten (serving, no probe; dp_health.c starts from the baselines), its
 * round trips count from now. Only the control lcore's fields are written: the workers'
 * arrays are read. */
static void ep_join(struct dp *dp, uint32_t i)
{
	struct dp_endpoint *e = &dp->eps[i];

	dp_health_reset(dp, e);
	e->base_fwd = ep_sum(dp, i, true);
	e->base_ret = ep_sum(dp, i, false);
	e->base_mget = ep_sum_mget(dp, i);
	e->base_tmo = ep_sum_health(dp, i, false);
	e->base_lost = ep_sum_health(dp, i, true);
	dp_obs_ep_claimed(dp, i);
}

/* Put member @p pm (at @p ip) in endpoint @p i; the previous occupant, if any, is not in any
 * ring a worker can still read (publication waited for that). */
static void ep_commit(struct dp *dp, uint32_t i, const struct pl_member *pm,
		      const struct inet_addr *a, const struct dp_node_mac *mac)
{
	struct dp_endpoint *e = &dp->eps[i];
	uint32_t ip = ep_word(a);
	bool v6 = !inet_is_v4(a);
	/* Another address: the neighbour state starts over too. */
	bool fresh = !e->used || atomic_load_explicit(&e->ip, memory_order_relaxed) != ip ||
		     e->port != pm->port || e->v6 != v6 || (v6 && memcmp(e->ip6, a->b, 16) != 0);
	/* A member joins: in no ring, pool or warm-up hold a worker reads, not claimed already
	 * by dp_prepare_placement for this change. */
	bool joins = fresh || (!e->in_ring && !e->in_gutter && !e->warm_hold && !e->pending);

	if (joins)
		ep_join(dp, i);
	if (fresh) {
		uint32_t hwm;

		atomic_store_explicit(&e->mac, 0, memory_order_relaxed);
		e->port = pm->port;
		e->tries = 0;
		e->resolving = false;
		e->next_tsc = 0;
		e->learned_tsc = 0;
		e->arp_sent = 0;
		e->arp_failures = 0;
		atomic_store_explicit(&e->arp_until, 0, memory_order_relaxed);
		e->changes_reported = atomic_load_explicit(&e->mac_changes, memory_order_relaxed);
		e->mac_reported = 0;
		e->seen_snapshot = atomic_load_explicit(&e->arp_seen, memory_order_relaxed);
		e->used = true;
		e->v6 = v6;
		if (v6) {
			memcpy(e->ip6, a->b, 16);
			dp_route_nexthop6(dp, e->ip6, e->nh_ip6);
		}
		atomic_store_explicit(&e->nh_ip,
				      v6 ? (dp_ip6_set(e->nh_ip6) ? dp_fold6(e->nh_ip6) : 0)
					 : dp_route_nexthop(dp, ip),
				      memory_order_relaxed);
		/* Release: a worker that sees the ip sees the entry reset. */
		atomic_store_explicit(&e->ip, ip, memory_order_release);
		hwm = atomic_load_explicit(&dp->n_eps_hwm, memory_order_relaxed);
		if (i + 1 > hwm)
			atomic_store_explicit(&dp->n_eps_hwm, i + 1, memory_order_release);
	}
	snprintf(e->name, sizeof(e->name), "%s", pm->name);
	e->mac_static = mac != NULL && mac->has_mac;
	if (e->mac_static) {
		uint64_t word = DP_MAC_VALID;

		memcpy(&word, mac->mac, 6);
		atomic_store_explicit(&e->mac, word, memory_order_relaxed);
	} else if (fresh) {
		dp_route_share_mac(dp, i); /* behind a gateway already resolved: no ARP */
	}
}

/* Entries of a view's source table for @p n sources: a power of two, at most half full. */
static uint32_t view_src_size(uint32_t n)
{
	uint32_t size = 16;

	while (size < 2 * n)
		size <<= 1;
	return size;
}

/* A view of @p n members and @p nsrc sources: the header, the member map, the source table. */
static size_t view_size(uint32_t n, uint32_t nsrc)
{
	size_t head = RTE_ALIGN_CEIL(sizeof(struct dp_view) + n * sizeof(uint32_t),
				     alignof(struct dp_src));

	return head + view_src_size(nsrc) * sizeof(struct dp_src);
}

/* Endpoint @p ep's entry. IPv4: the key is the address, and the first of two members at one
 * address:port wins (both name the same node). IPv6: the key is a fold, so every endpoint
 * gets its own entry (dp_view_find_src6 compares the full address); the table holds one
 * entry per source counted in nsrc, so it stays at most half full. */
static void view_src_put(struct dp_view *v, uint32_t ip, uint16_t port, uint32_t ep, bool v6)
{
	uint64_t key = dp_src_key(ip, port, v6);
	uint32_t h = dp_src_hash(key, v->src_mask);

	while (v->src[h].key != 0 && !(v->src[h].key == key && (!v6 || v->src[h].ep == ep)))
		h = (h + 1) & v->src_mask;
	if (v->src[h].key == 0)
		v->src[h] = (struct dp_src){key, ep};
}

/* Endpoints in use that the new ring leaves out (@p taken: the ones it names): nodes removed
 * by this or an earlier change, whose replies to requests still in flight must pass. */
static uint32_t view_src_extra(const struct dp *dp, const uint8_t *taken)
{
	uint32_t hwm = atomic_load_explicit(&dp->n_eps_hwm, memory_order_relaxed), k = 0;

	for (uint32_t i = 0; i < hwm; i++)
		k += dp->eps[i].used && !taken[i];
	return k;
}

/* Fill @p v's source table (sized for @p nsrc): member i of @p pl at @p ips[i] is endpoint
 * @p map[i] (IPv4: the first of two members at one address:port wins; both name the same
 * node; IPv6: each endpoint has its own entry),
 * then every endpoint in use that the ring leaves out (view_src_extra), so that a reply from
 * a node just removed, to a request sent before, is still handed to its slot's worker. */
static void view_sources(struct dp_view *v, const struct dp *dp, const struct pl_placement *pl,
			 const uint32_t *map, const struct inet_addr *ips, const uint8_t *taken,
			 uint32_t nsrc)
{
	uint32_t n = pl_member_count(pl), hwm;

	v->src = (struct dp_src *)((uint8_t *)v + view_size(n, nsrc) -
				   view_src_size(nsrc) * sizeof(struct dp_src));
	v->src_mask = view_src_size(nsrc) - 1;
	memset(v->src, 0, view_src_size(nsrc) * sizeof(struct dp_src));
	for (uint32_t i = 0; i < n; i++)
		view_src_put(v, ep_word(&ips[i]), pl_member_at(pl, i)->port, map[i],
			     !inet_is_v4(&ips[i]));
	hwm = atomic_load_explicit(&dp->n_eps_hwm, memory_order_relaxed);
	for (uint32_t i = 0; i < hwm; i++)
		if (dp->eps[i].used && !taken[i])
			view_src_put(v, atomic_load_explicit(&dp->eps[i].ip, memory_order_relaxed),
				     dp->eps[i].port, i, dp->eps[i].v6);
}

static void views_free(struct dp_view **v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		view_free(v[i]);
		v[i] = NULL;
	}
}

/* Put the published gutter pool (dp->gutter) in new view @p v, in @p a's memory. */
static int view_gutter(const struct dp *dp, struct dp_view *v, const struct pl_allocator *a,
		       int socket)
{
	v->gutter = (struct dp_view_gutter){0};
	if (dp->gutter.pl == NULL)
		return 0;
	v->gutter.pl = pl_clone(dp->gutter.pl, a);
	v->gutter.ep = rte_malloc_socket("dp_gutter", dp->gutter.n * sizeof(uint32_t), 0, socket);
	if (v->gutter.pl == NULL || v->gutter.ep == NULL)
		return -ENOMEM;
	memcpy(v->gutter.ep, dp->gutter.ep, dp->gutter.n * sizeof(uint32_t));
	v->gutter.n = dp->gutter.n;
	return 0;
}

/* Map every member to an endpoint index (existing or to claim), without changing anything.
 * O(members + endpoints). */
static int plan_endpoints(const struct dp *dp, const struct pl_placement *pl, uint32_t *map,
			  struct inet_addr *ips, uint8_t *taken)
{
	uint32_t n = pl_member_count(pl), cursor = 0, cursor_recent = 0;
	struct ep_index x;
	int rc = ep_index_build(dp, &x);

	for (uint32_t i = 0; rc == 0 && i < n; i++) {
		const struct pl_member *pm = pl_member_at(pl, i);
		int32_t e;

		/* A node is reached from the router's address of its family: an IPv6 node needs
		 * address6, an IPv4 node an IPv4 address (none on an IPv6-only router). */
		if (inet_parse(pm->addr, strlen(pm->addr), &ips[i]) != 0 ||
		    (!inet_is_v4(&ips[i]) && !dp_ip6_set(dp->cfg.node_router_ip6)) ||
		    (inet_is_v4(&ips[i]) && dp->cfg.node_router_ip == 0)) {
			rc = -EINVAL;
			break;
		}
		e = ep_find(dp, &x, &ips[i], pm->port, taken);
		if (e < 0) {
			/* Two members at one address:port share nothing: each gets its own. */
			e = ep_claimable(dp, taken, &cursor, false);
			if (e < 0) /* all free ones were just released: the oldest rule yields */
				e = ep_claimable(dp, taken, &cursor_recent, true);
			if (e < 0) {
				rc = -ENOSPC;
				break;
			}
		}
		taken[e] = 1;
		map[i] = (uint32_t)e;
	}
	ep_index_free(&x);
	return rc;
}

int dp_prepare_placement(struct dp *dp, const struct pl_placement *pl,
			 const struct dp_node_mac *macs)
{
	uint32_t n = pl_member_count(pl);
	uint32_t *map = calloc(n ? n : 1, sizeof(*map));
	struct inet_addr *ips = calloc(n ? n : 1, sizeof(*ips));
	uint8_t *taken = calloc(dp->cfg.neighbours, 1);
	int rc, unknown = 0;

	if (map == NULL || ips == NULL || taken == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	rc = plan_endpoints(dp, pl, map, ips, taken);
	for (uint32_t i = 0; rc == 0 && i < n; i++) {
		struct dp_endpoint *e = &dp->eps[map[i]];

		/* In a published ring already: workers forward to it as they did. */
		if (e->in_ring)
			continue;
		/* Claimable means no ring a worker can read names it: safe to fill now. */
		ep_commit(dp, map[i], pl_member_at(pl, i), &ips[i], macs ? &macs[i] : NULL);
		e->pending = true;
		if (!e->mac_static &&
		    !(atomic_load_explicit(&e->mac, memory_order_relaxed) & DP_MAC_VALID))
			unknown++;
	}
out:
	free(map);
	free(ips);
	free(taken);
	return rc != 0 ? rc : unknown;
}

static int publish_once(struct dp *dp, const struct pl_placement *pl,
			const struct dp_node_mac *macs, uint64_t epoch, const bool *flush)
{
	uint32_t n = pl_member_count(pl);
	uint32_t *map = calloc(n ? n : 1, sizeof(*map));
	struct inet_addr *ips = calloc(n ? n : 1, sizeof(*ips));
	uint8_t *taken = calloc(dp->cfg.neighbours, 1);
	struct dp_view *nv[DP_WORKERS_MAX] = {0};
	struct dp_view *old[DP_WORKERS_MAX] = {0};
	size_t vb[DP_WORKERS_MAX] = {0};
	uint16_t nw = dp->cfg.n_workers;
	uint32_t nsrc;
	uint64_t now;
	int rc;

	if (map == NULL || ips == NULL || taken == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	rc = plan_endpoints(dp, pl, map, ips, taken);
	if (rc != 0)
		goto out;
	nsrc = n + view_src_extra(dp, taken);
	for (uint16_t k = 0; k < nw; k++) {
		intptr_t socket = (intptr_t)dp->cfg.worker_socket[k];
		struct socket_ctx sc = {(int)socket, 0};
		struct pl_allocator a = {socket_alloc, socket_free, &sc};

		nv[k] = rte_malloc_socket("dp_view", view_size(n, nsrc), RTE_CACHE_LINE_SIZE,
					  (int)socket);
		if (nv[k] == NULL) {
			rc = -ENOMEM;
			goto out;
		}
		view_sources(nv[k], dp, pl, map, ips, taken, nsrc);
		nv[k]->pl = pl_clone(pl, &a);
		rc = view_gutter(dp, nv[k], &a, (int)socket);
		if (nv[k]->pl == NULL || rc != 0) {
			rc = -ENOMEM;
			goto out;
		}
		nv[k]->epoch = epoch;
		vb[k] = view_size(n, nsrc) + sc.bytes;
		nv[k]->bytes = vb[k];
		atomic_store_explicit(&nv[k]->older, NULL, memory_order_relaxed);
		nv[k]->n = n;
		memcpy(nv[k]->ep, map, n * sizeof(uint32_t));
	}
	for (uint32_t i = 0; i < n; i++)
		ep_commit(dp, map[i], pl_member_at(pl, i), &ips[i], macs ? &macs[i] : NULL);
	/* Down before any worker can read a ring that names it (the swap below releases it).
	 * No ring held it: no worker forwards to it yet, so nothing is lost by refusing here. */
	for (uint32_t i = 0; flush != NULL && i < n; i++) {
		if (!flush[i] || dp->eps[map[i]].in_ring)
			continue;
		rc = dp_health_join_flush(dp, &dp->eps[map[i]]);
		if (rc != 0) { /* refused: the ones marked are in no ring, and start over */
			for (uint32_t j = 0; j < i; j++)
				if (flush[j] && !dp->eps[map[j]].in_ring)
					dp_health_reset(dp, &dp->eps[map[j]]);
			goto out;
		}
	}
	/* Release: the replica (and the endpoints it names) is complete before a worker can
	 * load its pointer (acquire, once per burst). */
	for (uint16_t k = 0; k < nw; k++)
		old[k] = atomic_exchange_explicit(&dp->w[k]->view, nv[k], memory_order_acq_rel);
	dp_warm_rotate(dp, old); /* the replaced views may stay for the warm-up window */
	memcpy(dp->view_bytes, vb, sizeof(vb));
	/* After this no worker can hold a pointer to an old replica. */
	rte_rcu_qsbr_synchronize(dp->rcu, RTE_QSBR_THRID_INVALID);
	views_free(old, nw);
	now = rte_rdtsc();
	for (uint32_t i = 0; i < dp->cfg.neighbours; i++) {
		if (dp->eps[i].in_ring && !taken[i])
			dp->eps[i].released_tsc = now;
		dp->eps[i].in_ring = taken[i] != 0;
		dp->eps[i].pending = false;
	}
	atomic_store_explicit(&dp->epoch, epoch, memory_order_relaxed);
	memset(nv, 0, sizeof(nv));
out:
	views_free(nv, nw);
	free(map);
	free(ips);
	free(taken);
	return rc;
}

/* The placement the last change replaced is held for writes of the keys it moved (dp_warm.c,
 * membership flips): one more replica per worker. When the new replicas find no room beside
 * the current and the held ones (a fleet of thousands of members in a small memory), the hold
 * is given up (writes of the last change's moved keys stop deleting at their previous owners,
 * as before round 3) and the publication is tried once more: a change is never refused for
 * the hold's sake. */
int dp_publish_placement_flush(struct dp *dp, const struct pl_placement *pl,
			       const struct dp_node_mac *macs, uint64_t epoch, const bool *flush)
{
	int rc = publish_once(dp, pl, macs, epoch, flush);

	if (rc == -ENOMEM && atomic_load_explicit(&dp->w[0]->prev_view, memory_order_relaxed)) {
		dp_warm_forget(dp);
		rc = publish_once(dp, pl, macs, epoch, flush);
	}
	return rc;
}

int dp_publish_placement(struct dp *dp, const struct pl_placement *pl,
			 const struct dp_node_mac *macs, uint64_t epoch)
{
	return dp_publish_placement_flush(dp, pl, macs, epoch, NULL);
}

/* ---- gutter pool ----------------------------------------------------------------------- */

/* Map every node of gutter pool @p gpl to an endpoint: its own if one is in use at its
 * address:port (a member's included), else a claimable one; new ones are committed. */
static int gutter_endpoints(struct dp *dp, const struct pl_placement *gpl,
			    const struct dp_node_mac *macs, uint32_t *map, uint8_t *taken)
{
	uint32_t n = gpl != NULL ? pl_member_count(gpl) : 0;
	struct inet_addr *ips = calloc(n ? n : 1, sizeof(*ips));
	int rc = ips == NULL ? -ENOMEM : n == 0 ? 0 : plan_endpoints(dp, gpl, map, ips, taken);

	/* Claimable entries are in no view's ring or pool: safe to fill before the swap. A
	 * member's entry is left as it is (same node); a gutter node's is renamed, its MAC set. */
	for (uint32_t i = 0; rc == 0 && i < n; i++)
		if (!dp->eps[map[i]].in_ring)
			ep_commit(dp, map[i], pl_member_at(gpl, i), &ips[i],
				  macs ? &macs[i] : NULL);
	free(ips);
	return rc;
}

int dp_publish_gutter(struct dp *dp, const struct pl_placement *gpl, const struct dp_node_mac *macs)
{
	uint32_t gn = gpl != NULL ? pl_member_count(gpl) : 0;
	uint32_t *gmap = calloc(gn ? gn : 1, sizeof(*gmap));
	uint8_t *taken = calloc(dp->cfg.neighbours, 1);
	struct pl_placement *own = gn != 0 ? pl_clone(gpl, NULL) : NULL;
	struct dp_view *nv[DP_WORKERS_MAX] = {0};
	struct dp_view *old[DP_WORKERS_MAX] = {0};
	const struct dp_view *cur = atomic_load_explicit(&dp->w[0]->view, memory_order_relaxed);
	uint16_t nw = dp->cfg.n_workers;
	int rc = 0;

	if (gmap == NULL || taken == NULL || (gn != 0 && own == NULL)) {
		rc = -ENOMEM;
		goto out;
	}
	/* The members keep their entries: mark them taken so no gutter node claims one. */
	for (uint32_t i = 0; cur != NULL && i < cur->n; i++)
		taken[cur->ep[i]] = 1;
	rc = gutter_endpoints(dp, own, macs, gmap, taken);
	if (rc != 0)
		goto out;
	/* The control lcore's copy first: view_gutter() reads it. */
	pl_free(dp->gutter.pl);
	free(dp->gutter.ep);
	dp->gutter.pl = own;
	dp->gutter.ep = gmap;
	dp->gutter.n = gn;
	own = NULL;
	gmap = NULL;
	if (cur != NULL) {
		/* Same placement, same epoch, same members; the source table gets the new
		 * pool's nodes (every endpoint in use outside the ring is in it). */
		uint32_t n = cur->n, nsrc;
		struct inet_addr *ips = calloc(n ? n : 1, sizeof(*ips));

		memset(taken, 0, dp->cfg.neighbours);
		for (uint32_t i = 0; i < n; i++) {
			taken[cur->ep[i]] = 1;
			if (ips != NULL)
				ep_addr(&dp->eps[cur->ep[i]], &ips[i]);
		}
		nsrc = n + view_src_extra(dp, taken);
		for (uint16_t k = 0; ips != NULL && rc == 0 && k < nw; k++) {
			intptr_t socket = (intptr_t)dp->cfg.worker_socket[k];
			struct socket_ctx sc = {(int)socket, 0};
			struct pl_allocator a = {socket_alloc, socket_free, &sc};

			nv[k] = rte_malloc_socket("dp_view", view_size(n, nsrc),
						  RTE_CACHE_LINE_SIZE, (int)socket);
			if (nv[k] == NULL) {
				rc = -ENOMEM;
				break;
			}
			view_sources(nv[k], dp, cur->pl, cur->ep, ips, taken, nsrc);
			nv[k]->pl = pl_clone(cur->pl, &a);
			rc = view_gutter(dp, nv[k], &a, (int)socket);
			if (nv[k]->pl == NULL)
				rc = -ENOMEM;
			nv[k]->epoch = cur->epoch;
			nv[k]->bytes = view_size(n, nsrc) + sc.bytes;
			atomic_store_explicit(&nv[k]->older, NULL, memory_order_relaxed);
			nv[k]->n = n;
			memcpy(nv[k]->ep, cur->ep, n * sizeof(uint32_t));
		}
		if (ips == NULL)
			rc = -ENOMEM;
		free(ips);
		if (rc != 0)
			goto out; /* the workers keep the old pool; the next publish brings it */
		for (uint16_t k = 0; k < nw; k++)
			old[k] = atomic_exchange_explicit(&dp->w[k]->view, nv[k],
							  memory_order_acq_rel);
		rte_rcu_qsbr_synchronize(dp->rcu, RTE_QSBR_THRID_INVALID);
		views_free(old, nw);
		memset(nv, 0, sizeof(nv));
	}
	for (uint32_t i = 0; i < dp->cfg.neighbours; i++) {
		if (dp->eps[i].in_gutter)
			dp->eps[i].released_tsc = rte_rdtsc(); /* unless it stays: harmless */
		dp->eps[i].in_gutter = false;
	}
	for (uint32_t i = 0; i < dp->gutter.n; i++)
		dp->eps[dp->gutter.ep[i]].in_gutter = true;
out:
	views_free(nv, nw);
	pl_free(own);
	free(gmap);
	free(taken);
	return rc;
}

/* ---- neighbours ------------------------------------------------------------------------ */

/* Set the MAC of every endpoint whose next hop is @p ip (IPv4, @p ip6 NULL) or @p ip6. */
static unsigned int neigh_set(struct dp *dp, uint32_t ip, const uint8_t *ip6, const uint8_t mac[6])
{
	uint32_t n = atomic_load_explicit(&dp->n_eps_hwm, memory_order_relaxed);
	uint64_t word = DP_MAC_VALID;
	unsigned int hits = 0;

	memcpy(&word, mac, 6);
	for (uint32_t i = 0; i < n; i++) {
		struct dp_endpoint *e = &dp->eps[i];
		uint64_t old;

		if (!e->used || e->mac_static || e->v6 != (ip6 != NULL))
			continue;
		if (ip6 != NULL ? memcmp(e->nh_ip6, ip6, 16) != 0
				: atomic_load_explicit(&e->nh_ip, memory_order_relaxed) != ip)
			continue;
		old = atomic_exchange_explicit(&e->mac, word, memory_order_relaxed);
		if ((old & DP_MAC_VALID) && old != word)
			atomic_fetch_add_explicit(&e->mac_changes, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&e->arp_seen, 1, memory_order_relaxed);
		hits++;
	}
	return hits;
}

unsigned int dp_neigh_update(struct dp *dp, uint32_t ip, const uint8_t mac[6])
{
	return neigh_set(dp, ip, NULL, mac);
}

unsigned int dp_neigh_update6(struct dp *dp, const uint8_t ip6[16], const uint8_t mac[6])
{
	return neigh_set(dp, 0, ip6, mac);
}

uint32_t dp_mac_changes(struct dp *dp, struct dp_mac_change *out, uint32_t max)
{
	uint32_t n = atomic_load_explicit(&dp->n_eps_hwm, memory_order_relaxed), k = 0;

	for (uint32_t i = 0; i < n && k < max; i++) {
		struct dp_endpoint *e = &dp->eps[i];
		uint32_t c = atomic_load_explicit(&e->mac_changes, memory_order_relaxed);
		uint64_t mac = atomic_load_explicit(&e->mac, memory_order_relaxed);

		if (!e->used || c == e->changes_reported)
			continue;
		memset(&out[k], 0, sizeof(out[k]));
		snprintf(out[k].name, sizeof(out[k].name), "%s", e->name);
		out[k].v6 = e->v6;
		if (e->v6)
			memcpy(out[k].ip6, e->ip6, 16);
		else
			out[k].ip = atomic_load_explicit(&e->ip, memory_order_relaxed);
		memcpy(out[k].old_mac, &e->mac_reported, 6);
		memcpy(out[k].new_mac, &mac, 6);
		out[k].changes = c - e->changes_reported;
		e->changes_reported = c;
		e->mac_reported = mac;
		k++;
	}
	return k;
}

/*
 * Endpoint @p i wants to ask for next hop @p nh: when another endpoint behind the same next
 * hop has a request out already, share its window instead of sending another (the reply
 * teaches every endpoint whose window is open). @return true when joined.
 */
static bool arp_join(struct dp *dp, uint32_t i, uint64_t now, uint64_t retry)
{
	uint32_t n = atomic_load_explicit(&dp->n_eps_hwm, memory_order_relaxed);
	struct dp_endpoint *e = &dp->eps[i];

	for (uint32_t k = 0; k < n; k++) {
		const struct dp_endpoint *o = &dp->eps[k];
		uint64_t until = atomic_load_explicit(&o->arp_until, memory_order_relaxed);

		if (k == i || !o->used || until <= now || !dp_same_nh(o, e))
			continue;
		atomic_store_explicit(&e->arp_until, until, memory_order_relaxed);
		e->tries++;
		e->resolving = true;
		e->next_tsc = now + retry;
		return true;
	}
	return false;
}

void dp_control_poll(struct dp *dp)
{
	uint64_t now = rte_rdtsc();
	uint64_t retry = (uint64_t)dp->cfg.arp_retry_ms * dp->tsc_hz / 1000;
	uint64_t life = (uint64_t)dp->cfg.arp_lifetime_s * dp->tsc_hz;
	uint32_t n = atomic_load_explicit(&dp->n_eps_hwm, memory_order_relaxed);
	struct rte_ring *ring = dp->w[0]->ctl_ring;

	dp_warm_poll(dp); /* the warm-up window ends on time */
	dp_drain_poll(dp); /* drained as soon as the workers say they are empty */
	dp_hot_control_poll(dp, now);
	for (uint32_t i = 0; i < n; i++) {
		struct dp_endpoint *e = &dp->eps[i];
		uint32_t seen = atomic_load_explicit(&e->arp_seen, memory_order_relaxed);
		uint64_t mac = atomic_load_explicit(&e->mac, memory_order_relaxed);
		struct rte_mbuf *m;
		uint32_t nh;

		/* Settled: what a later change is reported against. */
		if (e->used && atomic_load_explicit(&e->mac_changes, memory_order_relaxed) ==
				       e->changes_reported)
			e->mac_reported = mac;
		if (!e->used || !(e->in_ring || e->pending || e->in_gutter) || e->mac_static ||
		    dp->cfg.no_arp_requests)
			continue;
		if (seen != e->seen_snapshot) {
			e->seen_snapshot = seen;
			e->learned_tsc = now;
			e->tries = 0;
			e->resolving = false;
			e->next_tsc = now + life;
		}
		if ((mac & DP_MAC_VALID) && e->learned_tsc != 0 && now - e->learned_tsc < life)
			continue;
		if (now < e->next_tsc)
			continue;
		if (e->tries >= dp->cfg.arp_attempts) {
			/* A round without an answer: count it and wait longer before the next. */
			e->arp_failures++;
			e->tries = 0;
			e->next_tsc = now + retry * dp->cfg.arp_attempts;
			continue;
		}
		nh = atomic_load_explicit(&e->nh_ip, memory_order_relaxed);
		if (nh == 0)
			continue; /* no route: nothing to ask */
		if (arp_join(dp, i, now, retry))
			continue;
		/* An IPv6 next hop is asked by Neighbor Solicitation, on the same timers. */
		m = e->v6 ? dp_ns_request(dp, e->nh_ip6) : dp_arp_request(dp, nh);
		if (m == NULL)
			return;
		/* Open the window before the request can leave: the enqueue (release) orders
		 * this store before worker 0 sends it, and so before any answer arrives. */
		atomic_store_explicit(&e->arp_until, now + retry, memory_order_relaxed);
		if (rte_ring_sp_enqueue(ring, m) != 0) {
			atomic_store_explicit(&e->arp_until, 0, memory_order_relaxed);
			rte_pktmbuf_free(m);
			return;
		}
		e->tries++;
		e->arp_sent++;
		e->resolving = true;
		e->next_tsc = now + retry;
	}
}

/* ---- counters -------------------------------------------------------------------------- */

static void add_worker(const struct dp_worker *w, struct dp_stats *out)
{
	for (int c = 0; c < DP_CTR_COUNT; c++)
		out->ctr[c] += w->ctr[c];
	for (int d = 0; d < DP_DROP_COUNT; d++)
		out->drop[d] += w->drop[d];
	out->slots_live += w->slot_mask + 1 - (w->free_tail - w->free_head);
	out->mget_live += w->mgets != NULL ? w->dp->cfg.mget_max - w->n_mget_free : 0;
	out->mget_bytes += w->mget_bytes;
	out->mget_bytes_peak = RTE_MAX(out->mget_bytes_peak, w->mget_bytes_peak);
	out->frag_held += w->frag_held;
}

int dp_stats_get(const struct dp *dp, int worker, struct dp_stats *out)
{
	if (dp == NULL || out == NULL || worker >= (int)dp->cfg.n_workers)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	for (uint16_t k = 0; k < dp->cfg.n_workers; k++)
		if (worker < 0 || worker == k)
			add_worker(dp->w[k], out);
	out->epoch = dp_epoch(dp);
	dp_obs_stats(dp, worker, out);
	out->dirty_bytes = dp_health_bytes(dp);
	out->drain_state = atomic_load_explicit(&dp->drain_state, memory_order_relaxed);
	out->reply_steer_rules = dp->cfg.reply_steer_rules;
	if (worker < 0) {
		struct dp_warm_state ws;

		dp_warm_get(dp, &ws);
		out->warm_open = ws.open;
		out->warm_bytes = ws.bytes;
	}
	return 0;
}

bool dp_stats_identity(const struct dp_stats *s)
{
	uint64_t drops = 0;

	for (int d = 0; d < DP_DROP_COUNT; d++)
		drops += s->drop[d];
	return drops == s->ctr[DP_CTR_DROPPED] &&
	       s->ctr[DP_CTR_RX] == s->ctr[DP_CTR_FORWARDED] + s->ctr[DP_CTR_RETURNED] +
					    s->ctr[DP_CTR_ANSWERED] + s->ctr[DP_CTR_DROPPED] +
					    s->ctr[DP_CTR_PROBE_REPLIES] +
					    s->ctr[DP_CTR_WARM_ABSORBED] +
					    s->ctr[DP_CTR_IP_FRAG_MERGED] + s->frag_held;
}

static void node_fill(const struct dp *dp, uint32_t i, struct dp_node_stats *o)
{
	const struct dp_endpoint *e = &dp->eps[i];
	uint64_t mac = atomic_load_explicit(&e->mac, memory_order_relaxed);

	memset(o, 0, sizeof(*o));
	snprintf(o->name, sizeof(o->name), "%s", e->name);
	o->ip = atomic_load_explicit(&e->ip, memory_order_relaxed);
	o->port = e->port;
	o->nh_ip = atomic_load_explicit(&e->nh_ip, memory_order_relaxed);
	o->v6 = e->v6;
	memcpy(o->ip6, e->ip6, 16);
	memcpy(o->nh_ip6, e->nh_ip6, 16);
	memcpy(o->mac, &mac, 6);
	o->mac_known = (mac & DP_MAC_VALID) != 0;
	o->mac_static = e->mac_static;
	/* A member being added (dp_prepare_placement) counts: AF_XDP mode asks the kernel for
	 * the MACs of in-ring nodes, and the new one's is needed before the swap. */
	o->in_ring = e->in_ring || e->pending;
	o->gutter = e->in_gutter;
	o->forwarded = ep_sum(dp, i, true) - e->base_fwd;
	o->returned = ep_sum(dp, i, false) - e->base_ret;
	o->mget_partial = ep_sum_mget(dp, i) - e->base_mget;
	o->arp_sent = e->arp_sent;
	o->arp_failures = e->arp_failures;
	dp_obs_node_fill(dp, i, o);
	dp_health_fill(dp, i, o);
	o->timeouts -= e->base_tmo; /* since it joined, as the counters above */
}

int dp_member_node(const struct dp *dp, uint32_t idx, struct dp_node_stats *out)
{
	/* The control lcore is the only writer of the views: reading one here is safe. */
	const struct dp_view *v = atomic_load_explicit(&dp->w[0]->view, memory_order_relaxed);

	if (v == NULL || idx >= v->n)
		return -ENOENT;
	node_fill(dp, v->ep[idx], out);
	return 0;
}

uint32_t dp_nodes_get(const struct dp *dp, struct dp_node_stats *out, uint32_t max)
{
	uint32_t n = atomic_load_explicit(&dp->n_eps_hwm, memory_order_relaxed), k = 0;

	for (uint32_t i = 0; i < n && k < max; i++) {
		if (!dp->eps[i].used)
			continue;
		node_fill(dp, i, &out[k++]);
	}
	return k;
}

static int print_stats(FILE *out, const char *prefix, const struct dp_stats *s)
{
	uint64_t g[DP_GAUGE_COUNT];

	gauge_values(s, g);
	for (int c = 0; c < DP_CTR_COUNT; c++)
		if (fprintf(out, "%s.%s %" PRIu64 "\n", prefix, counter_names[c], s->ctr[c]) < 0)
			return -EIO;
	for (int d = 0; d < DP_DROP_COUNT; d++)
		if (fprintf(out, "%s.drop.%s %" PRIu64 "\n", prefix, drop_names[d], s->drop[d]) < 0)
			return -EIO;
	for (int k = 0; k < DP_GAUGE_COUNT; k++)
		if (fprintf(out, "%s.%s %" PRIu64 "\n", prefix, gauge_names[k], g[k]) < 0)
			return -EIO;
	return 0;
}

/* node.NAME.FIELD lines for every field but the name. */
static int print_node(FILE *out, const struct dp_node_stats *n)
{
	char text[64];
	uint64_t v;

	for (int f = DP_NODE_F_name + 1; f < DP_NODE_FIELD_COUNT; f++) {
		int rc = dp_node_field(n, (enum dp_node_field)f, text, sizeof(text), &v) == 1
				 ? fprintf(out, "node.%s.%s %s\n", n->name, node_field_names[f],
					   text)
				 : fprintf(out, "node.%s.%s %" PRIu64 "\n", n->name,
					   node_field_names[f], v);

		if (rc < 0)
			return -EIO;
	}
	return 0;
}

int dp_stats_print(const struct dp *dp, FILE *out)
{
	struct dp_stats s;
	struct dp_node_stats *nodes;
	uint32_t nn;
	uint64_t sum;
	char name[32];
	int rc = 0;

	for (uint16_t k = 0; k < dp->cfg.n_workers; k++) {
		dp_stats_get(dp, k, &s);
		snprintf(name, sizeof(name), "worker.%u", k);
		if (print_stats(out, name, &s) != 0)
			return -EIO;
	}
	nodes = calloc(dp->cfg.neighbours, sizeof(*nodes));
	nn = nodes ? dp_nodes_get(dp, nodes, dp->cfg.neighbours) : 0;
	for (uint32_t i = 0; i < nn && rc == 0; i++)
		rc = print_node(out, &nodes[i]);
	free(nodes);
	dp_stats_get(dp, -1, &s);
	if (rc != 0 || print_stats(out, "total", &s) != 0)
		return -EIO;
	sum = s.ctr[DP_CTR_FORWARDED] + s.ctr[DP_CTR_RETURNED] + s.ctr[DP_CTR_ANSWERED] +
	      s.ctr[DP_CTR_DROPPED] + s.ctr[DP_CTR_PROBE_REPLIES];
	if (fprintf(out, "identity %s rx=%" PRIu64 " sum=%" PRIu64 "\n",
		    dp_stats_identity(&s) ? "ok" : "broken", s.ctr[DP_CTR_RX], sum) < 0)
		return -EIO;
	return fflush(out) == 0 ? 0 : -EIO;
}

/* ---- telemetry (runs on DPDK's telemetry thread) ---------------------------------------- */

static void tel_add_stats(struct rte_tel_data *d, const struct dp_stats *s)
{
	char key[RTE_TEL_MAX_STRING_LEN];
	uint64_t g[DP_GAUGE_COUNT];

	gauge_values(s, g);
	for (int c = 0; c < DP_CTR_COUNT; c++)
		rte_tel_data_add_dict_u64(d, counter_names[c], s->ctr[c]);
	for (int e = 0; e < DP_DROP_COUNT; e++) {
		snprintf(key, sizeof(key), "drop_%s", drop_names[e]);
		rte_tel_data_add_dict_u64(d, key, s->drop[e]);
	}
	for (int k = 0; k < DP_GAUGE_COUNT; k++)
		rte_tel_data_add_dict_u64(d, gauge_names[k], g[k]);
	rte_tel_data_add_dict_u64(d, "identity_ok", dp_stats_identity(s));
}

/* The optional ",W" of /ringway/stats and /ringway/drops: -1 (all workers) or a worker index. */
static int tel_worker_param(const char *params, int *worker)
{
	char *end;
	long v;

	*worker = -1;
	if (params == NULL || *params == '\0')
		return 0;
	v = strtol(params, &end, 10);
	if (*end != '\0' || v < 0 || v >= tel_dp->cfg.n_workers)
		return -EINVAL;
	*worker = (int)v;
	return 0;
}

/* /ringway/stats[,W]: flat dict (DPDK 22.11 telemetry cannot nest dicts) of the totals, or
 * of worker W's counters. */
static int tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct dp_stats s;
	int worker;

	(void)cmd;
	if (tel_dp == NULL)
		return -ENODEV;
	if (tel_worker_param(params, &worker) < 0)
		return -EINVAL;
	dp_stats_get(tel_dp, worker, &s);
	rte_tel_data_start_dict(d);
	tel_add_stats(d, &s);
	rte_tel_data_add_dict_u64(d, "workers", tel_dp->cfg.n_workers);
	return 0;
}

static void tel_add_node(struct rte_tel_data *d, const struct dp_node_stats *n, const char *prefix)
{
	char key[RTE_TEL_MAX_STRING_LEN], text[64];
	uint64_t v;

	for (int f = 0; f < DP_NODE_FIELD_COUNT; f++) {
		snprintf(key, sizeof(key), "%s%s", prefix, node_field_names[f]);
		if (dp_node_field(n, (enum dp_node_field)f, text, sizeof(text), &v) == 1)
			rte_tel_data_add_dict_string(d, key, text);
		else
			rte_tel_data_add_dict_u64(d, key, v);
	}
}

/* Nodes one /ringway/nodes page holds: a 22.11 reply takes RTE_TEL_MAX_DICT_ENTRIES (256)
 * entries, four of them the page's own counts. */
#define TEL_NODES_PAGE ((RTE_TEL_MAX_DICT_ENTRIES - 4) / DP_NODE_FIELD_COUNT)

/*
 * /ringway/nodes[,FROM]: flat dict "node<i>_<field>" for nodes FROM.. (i the node's index), as
 * many as one reply holds (TEL_NODES_PAGE), with "nodes" and "mac_known" over all, "first"
 * (FROM) and "next" (the index after the last one shown: equal to "nodes" on the last page,
 * else the FROM of the next page). Before paging, nodes past the first page were left out
 * without a word. /ringway/node,NAME: that node, fields unprefixed. (Telemetry keys may hold
 * only [A-Za-z0-9_/], and 22.11 cannot nest dicts, so names are values, not keys.)
 */
static int tel_nodes_common(const char *name, uint32_t from, struct rte_tel_data *d)
{
	uint32_t max = tel_dp ? tel_dp->cfg.neighbours : 0, n, known = 0, shown = 0, next;
	struct dp_node_stats *nodes;
	char prefix[32];

	if (tel_dp == NULL)
		return -ENODEV;
	nodes = calloc(max, sizeof(*nodes));
	if (nodes == NULL)
		return -ENOMEM;
	n = dp_nodes_get(tel_dp, nodes, max);
	next = from;
	rte_tel_data_start_dict(d);
	for (uint32_t i = 0; i < n; i++) {
		known += nodes[i].mac_known;
		if (name != NULL) {
			if (strcmp(name, nodes[i].name) == 0) {
				tel_add_node(d, &nodes[i], "");
				shown++;
			}
		} else if (i >= from && shown < TEL_NODES_PAGE) {
			snprintf(prefix, sizeof(prefix), "node%u_", i);
			tel_add_node(d, &nodes[i], prefix);
			shown++;
			next = i + 1;
		}
	}
	free(nodes);
	if (name != NULL && shown == 0)
		return -ENOENT;
	if (name == NULL) {
		rte_tel_data_add_dict_u64(d, "nodes", n);
		rte_tel_data_add_dict_u64(d, "mac_known", known);
		rte_tel_data_add_dict_u64(d, "first", from);
		rte_tel_data_add_dict_u64(d, "next", next > n ? n : next < from ? from : next);
	}
	return 0;
}

static int tel_nodes(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned long from = 0;
	char *end = NULL;

	(void)cmd;
	if (params != NULL && *params != '\0') {
		errno = 0;
		from = strtoul(params, &end, 10);
		if (*end != '\0' || errno != 0 || *params == '-' || from > UINT32_MAX)
			return -EINVAL;
	}
	return tel_nodes_common(NULL, (uint32_t)from, d);
}

static int tel_node(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	if (params == NULL || *params == '\0')
		return -EINVAL;
	return tel_nodes_common(params, 0, d);
}

/* /ringway/drops[,W]: {reason: count} over all workers (or worker W). */
static int tel_drops(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct dp_stats s;
	int worker;

	(void)cmd;
	if (tel_dp == NULL)
		return -ENODEV;
	if (tel_worker_param(params, &worker) < 0)
		return -EINVAL;
	dp_stats_get(tel_dp, worker, &s);
	rte_tel_data_start_dict(d);
	for (int e = 0; e < DP_DROP_COUNT; e++)
		rte_tel_data_add_dict_u64(d, drop_names[e], s.drop[e]);
	return 0;
}

int dp_telemetry_register(struct dp *dp)
{
	static bool registered;
	int rc;

	tel_dp = dp;
	if (registered)
		return 0;
	rc = rte_telemetry_register_cmd(
		"/ringway/stats", tel_stats,
		"Router counters, totals or of worker W (param W): rx, forwarded, returned, "
		"answered, dropped, drop_<reason>, ...");
	if (rc == 0)
		rc = rte_telemetry_register_cmd(
			"/ringway/drops", tel_drops,
			"Drops by reason, totals or of worker W (param W): {reason: count}");
	if (rc == 0)
		rc = rte_telemetry_register_cmd("/ringway/nodes", tel_nodes,
						"Cache nodes, one page from index FROM (param, 0): "
						"nodes, mac_known, first, next, node<i>_name, "
						"_address, _forwarded, ...");
	if (rc == 0)
		rc = rte_telemetry_register_cmd("/ringway/node", tel_node,
						"One cache node (param NAME): name, address, mac, "
						"mac_known, forwarded, returned, ...");
	if (rc == 0)
		rc = dp_obs_telemetry_register(dp);
	if (rc == 0)
		rc = dp_hot_telemetry_register(dp);
	registered = rc == 0;
	return rc;
}
