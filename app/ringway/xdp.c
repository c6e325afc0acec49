/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * AF_XDP mode with lib/steer and lib/neigh (see xdp.h): the steering program prepared before
 * EAL, checked after the port started, the kernel's neighbour table polled on the control
 * lcore, and the program removed at exit.
 */

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_telemetry.h>

#include "neigh.h"
#include "steer.h"
#include "xdp.h"

struct rw_xdp {
	unsigned int ifindex;
	char ifname[64];
	char vdev[1024]; /* the rewritten --vdev value EAL reads */
	struct steer *steer;
	struct neigh *neigh;
	uint32_t stale;	   /* program id of an earlier ringway, removed */
	uint64_t next_tsc; /* next neighbour poll */
};

/* The handle /ringway/steer reports on (telemetry callbacks take no context). */
static struct rw_xdp *tel_xdp;

static int fail(char *err, size_t errlen, int rc, const char *fmt, const char *a, const char *b)
{
	snprintf(err, errlen, fmt, a, b);
	return rc;
}

/* Steering for the interface named by --vdev value @p val (iface= found in x->ifname). */
static int open_steering(struct rw_xdp *x, const char *val, const struct rw_config *cfg, char *err,
			 size_t errlen)
{
	struct steer_config sc = {0};
	char why[256];
	bool ours = false;

	x->ifindex = if_nametoindex(x->ifname);
	if (x->ifindex == 0)
		return fail(err, errlen, -EINVAL, "--vdev %s: no interface %s here", val,
			    x->ifname);
	sc.router_ip = cfg->router.address;
	inet_from_v6(&sc.router_ip6, cfg->router.address6); /* all zero: IPv6 not steered */
	sc.n_listen_ports = cfg->router.n_listen_ports;
	memcpy(sc.listen_ports, cfg->router.listen_ports,
	       sizeof(uint16_t) * cfg->router.n_listen_ports);
	sc.reply_port_base = (uint16_t)cfg->router.reply_port_base;
	sc.reply_port_count = (uint16_t)cfg->router.reply_port_count;
	/* The nodes' answers to the router's probes come to the probe port: steered like a
	 * listen port (the worker tells them apart), else the kernel would take them. With
	 * every listen-port entry used, probes go unanswered and down nodes stay down. */
	if (sc.n_listen_ports < STEER_MAX_LISTEN_PORTS)
		sc.listen_ports[sc.n_listen_ports++] =
			(uint16_t)(cfg->health.probe_port ? cfg->health.probe_port
							  : cfg->router.reply_port_base - 1);
	if (steer_query(x->ifindex, &x->stale, &ours) != 0 || !ours)
		x->stale = 0;
	x->steer = steer_open(x->ifindex, &sc, why, sizeof(why));
	if (x->steer == NULL)
		return fail(err, errlen, errno != 0 ? -errno : -EINVAL, "AF_XDP steering on %s: %s",
			    x->ifname, why);
	return 0;
}

/* Argument @p i of argv when it is (or its value is) an EAL --vdev value, else NULL. */
static char *vdev_value(int argc, char **argv, int i, bool *eq)
{
	*eq = strncmp(argv[i], "--vdev=", 7) == 0;
	if (*eq)
		return argv[i] + 7;
	return strcmp(argv[i], "--vdev") == 0 && i + 1 < argc ? argv[i + 1] : NULL;
}

int rw_xdp_prepare(int argc, char **argv, const struct rw_config *cfg, struct rw_xdp **out,
		   char *err, size_t errlen)
{
	struct rw_xdp *x = NULL;
	char ifname[64], rewritten[sizeof(x->vdev) - 8];
	bool eq;
	int rc;

	*out = NULL;
	for (int i = 1; i < argc; i++) {
		char *val = vdev_value(argc, argv, i, &eq);

		if (val == NULL || (rc = steer_vdev_iface(val, ifname, sizeof(ifname))) == 0)
			continue;
		if (rc < 0 || x != NULL) {
			rc = fail(err, errlen, -EINVAL, "--vdev %s: %s", val,
				  x != NULL ? "one AF_XDP port only"
					    : "an AF_XDP port needs iface= and no xdp_prog= "
					      "(ringway loads its own steering program)");
			goto fail;
		}
		x = calloc(1, sizeof(*x));
		if (x == NULL)
			return fail(err, errlen, -ENOMEM, "%s%s", "out of memory", "");
		snprintf(x->ifname, sizeof(x->ifname), "%s", ifname);
		if ((rc = open_steering(x, val, cfg, err, errlen)) < 0)
			goto fail;
		if (steer_vdev_with_prog(val, x->steer, rewritten, sizeof(rewritten)) != 0) {
			rc = fail(err, errlen, -EINVAL, "--vdev %s: %s", val, "too long");
			goto fail;
		}
		snprintf(x->vdev, sizeof(x->vdev), "%s%s", eq ? "--vdev=" : "", rewritten);
		argv[eq ? i : i + 1] = x->vdev;
	}
	*out = x;
	return 0;
fail:
	rw_xdp_close(x);
	return rc;
}

uint32_t rw_xdp_stale_removed(const struct rw_xdp *x)
{
	return x != NULL ? x->stale : 0;
}

const char *rw_xdp_ifname(const struct rw_xdp *x)
{
	return x != NULL ? x->ifname : "";
}

/* /ringway/steer: the XDP program's counters. */
static int tel_steer(const char *cmd, const char *params, struct rte_tel_data *d)
{
	uint64_t c[STEER_CTR_COUNT];

	(void)cmd;
	(void)params;
	if (tel_xdp == NULL || steer_read_stats(tel_xdp->steer, c) != 0)
		return -ENODEV;
	rte_tel_data_start_dict(d);
	for (unsigned int i = 0; i < STEER_CTR_COUNT; i++)
		rte_tel_data_add_dict_u64(d, steer_ctr_name(i), c[i]);
	return 0;
}

int rw_xdp_started(struct rw_xdp *x, char *err, size_t errlen)
{
	int rc;

	if (x == NULL)
		return 0;
	rc = steer_check_attached(x->steer, err, errlen);
	if (rc != 0)
		return rc;
	x->neigh = neigh_open(x->ifindex, err, errlen);
	if (x->neigh == NULL)
		return -errno;
	tel_xdp = x;
	return rte_telemetry_register_cmd("/ringway/steer", tel_steer,
					  "AF_XDP steering program counters. No parameters");
}

/* The address the kernel must resolve for @p n: the node, or the gateway it is behind, in the
 * node's family. False when it has no route. */
static bool next_hop(const struct dp_node_stats *n, struct inet_addr *a)
{
	if (!n->v6) {
		inet_from_v4(a, n->nh_ip);
		return n->nh_ip != 0;
	}
	inet_from_v6(a, n->nh_ip6);
	return !inet_is_zero(a);
}

void rw_xdp_neigh_poll(struct rw_xdp *x, struct dp *dp, uint32_t max_nodes, bool now)
{
	struct dp_node_stats *nodes;
	struct neigh_entry *e;
	uint32_t n, k = 0;

	if (x == NULL || x->neigh == NULL || (!now && rte_get_tsc_cycles() < x->next_tsc))
		return;
	x->next_tsc = rte_get_tsc_cycles() + rte_get_tsc_hz() / 4;
	nodes = calloc(max_nodes, sizeof(*nodes));
	e = calloc(max_nodes, sizeof(*e));
	if (nodes == NULL || e == NULL)
		goto out;
	n = dp_nodes_get(dp, nodes, max_nodes);
	for (uint32_t i = 0; i < n; i++)
		if ((nodes[i].in_ring || nodes[i].gutter) && !nodes[i].mac_static &&
		    next_hop(&nodes[i], &e[k].addr))
			k++;
	if (k == 0 || neigh_lookup(x->neigh, e, k) != 0)
		goto out;
	for (uint32_t i = 0; i < k; i++) {
		if (e[i].state == NEIGH_KNOWN && inet_is_v4(&e[i].addr))
			dp_neigh_update(dp, inet_v4(&e[i].addr), e[i].mac);
		else if (e[i].state == NEIGH_KNOWN)
			dp_neigh_update6(dp, e[i].addr.b, e[i].mac);
		else if (e[i].state != NEIGH_PENDING)
			neigh_resolve(x->neigh, &e[i].addr);
	}
out:
	free(nodes);
	free(e);
}

void rw_xdp_close(struct rw_xdp *x)
{
	if (x == NULL)
		return;
	if (tel_xdp == x)
		tel_xdp = NULL;
	neigh_close(x->neigh);
	steer_close(x->steer);
	free(x);
}
