/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * AF_XDP mode with lib/steer and lib/neigh (see xdp.h): a steering program per AF_XDP port
 * prepared before EAL and set up for its role (client, node or both) once EAL named the ports,
 * checked after the ports started, the node-facing kernel's neighbour table polled on the
 * control lcore, and the programs removed at exit.
 */

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_telemetry.h>

#include "neigh.h"
#include "steer.h"
#include "xdp.h"

#define RW_XDP_PORTS_MAX 2 /* [router] port and node_port */

/* One AF_XDP port: its interface, its --vdev argument and its steering program. */
struct rw_xdp_port {
	unsigned int ifindex;
	char ifname[IF_NAMESIZE];
	char name[64];	 /* the vdev's device name (before the first comma): its ethdev name */
	char vdev[1024]; /* the rewritten --vdev value EAL reads */
	struct steer *steer;
	uint32_t stale; /* program id of an earlier ringway, removed */
};

struct rw_xdp {
	struct rw_xdp_port p[RW_XDP_PORTS_MAX];
	unsigned int n;
	char ifnames[2 * IF_NAMESIZE + 2]; /* "veth0" or "veth0, veth1" */
	/* The node-facing port's kernel resolves the nodes: its (VLAN) interface's table. */
	struct neigh *neigh;
	unsigned int neigh_ifindex; /* 0: the node-facing port is not AF_XDP */
	char neigh_ifname[IF_NAMESIZE];
	uint64_t next_tsc; /* next neighbour poll */
};

/* The handle /ringway/steer reports on (telemetry callbacks take no context). */
static struct rw_xdp *tel_xdp;

static int fail(char *err, size_t errlen, int rc, const char *fmt, const char *a, const char *b)
{
	snprintf(err, errlen, fmt, a, b);
	return rc;
}

/* The VLAN frames on the client side (@p node false) or the node side carry: -1 = any (or
 * none), else the VLAN id (0: untagged). Two ports without node_vlan: requests keep the
 * client's tag, so the node side is on the client side's VLAN. */
static int side_vlan(const struct rw_config *cfg, bool node)
{
	if (node && cfg->router.has_node_port && cfg->router.has_node_vlan)
		return (int)cfg->router.node_vlan;
	return cfg->router.has_vlan ? (int)cfg->router.vlan : -1;
}

/*
 * What the program on a port steers. One port: requests to address/address6, replies and
 * probe answers. Two ports: the client port only requests (to address/address6), the node
 * port only replies and probe answers (to node_address, node_address6 or else address6, as
 * the data plane answers there).
 */
static void steer_config_for(const struct rw_config *cfg, bool client, bool node,
			     struct steer_config *sc)
{
	const struct rw_cfg_router *r = &cfg->router;
	bool node_addr6 = false;
	int vlan = side_vlan(cfg, node);

	memset(sc, 0, sizeof(*sc));
	for (unsigned int i = 0; i < 16; i++)
		node_addr6 = node_addr6 || r->node_address6[i] != 0;
	sc->router_ip = client ? r->address : r->node_address;
	/* all zero: IPv6 not steered */
	inet_from_v6(&sc->router_ip6, client || !node_addr6 ? r->address6 : r->node_address6);
	if (client) {
		sc->n_listen_ports = r->n_listen_ports;
		memcpy(sc->listen_ports, r->listen_ports, sizeof(uint16_t) * r->n_listen_ports);
	}
	if (node) {
		sc->reply_port_base = (uint16_t)r->reply_port_base;
		sc->reply_port_count = (uint16_t)r->reply_port_count;
		/* The nodes' answers to the router's probes come to the probe port: steered like a
		 * listen port (the worker tells them apart), else the kernel would take them. With
		 * every listen-port entry used, probes go unanswered and down nodes stay down. */
		if (sc->n_listen_ports < STEER_MAX_LISTEN_PORTS)
			sc->listen_ports[sc->n_listen_ports++] =
				(uint16_t)(cfg->health.probe_port ? cfg->health.probe_port
								  : r->reply_port_base - 1);
	}
	sc->vlan_fixed = vlan >= 0;
	sc->vlan_id = (uint16_t)(vlan >= 0 ? vlan : 0);
}

/* Steering for the interface named by --vdev value @p val (iface= found in p->ifname), set up
 * for the client port (or the only one) until rw_xdp_bind() knows which port it is. */
static int open_steering(struct rw_xdp_port *p, const char *val, const struct rw_config *cfg,
			 char *err, size_t errlen)
{
	struct steer_config sc;
	char why[256];
	bool ours = false;

	p->ifindex = if_nametoindex(p->ifname);
	if (p->ifindex == 0)
		return fail(err, errlen, -EINVAL, "--vdev %s: no interface %s here", val,
			    p->ifname);
	snprintf(p->name, sizeof(p->name), "%.*s", (int)strcspn(val, ","), val);
	steer_config_for(cfg, true, !cfg->router.has_node_port, &sc);
	if (steer_query(p->ifindex, &p->stale, &ours) != 0 || !ours)
		p->stale = 0;
	p->steer = steer_open(p->ifindex, &sc, why, sizeof(why));
	if (p->steer == NULL)
		return fail(err, errlen, errno != 0 ? -errno : -EINVAL, "AF_XDP steering on %s: %s",
			    p->ifname, why);
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

/* One more AF_XDP port for --vdev value @p val (argument @p i of argv), rewritten in place. */
static int add_port(struct rw_xdp *x, char **argv, int i, bool eq, const char *val,
		    const char *ifname, const struct rw_config *cfg, char *err, size_t errlen)
{
	struct rw_xdp_port *p = &x->p[x->n];
	char rewritten[sizeof(p->vdev) - 8];
	int rc;

	x->n++;
	snprintf(p->ifname, sizeof(p->ifname), "%s", ifname);
	if ((rc = open_steering(p, val, cfg, err, errlen)) < 0)
		return rc;
	if (steer_vdev_with_prog(val, p->steer, rewritten, sizeof(rewritten)) != 0)
		return fail(err, errlen, -EINVAL, "--vdev %s: %s", val, "too long");
	snprintf(p->vdev, sizeof(p->vdev), "%s%s", eq ? "--vdev=" : "", rewritten);
	argv[eq ? i : i + 1] = p->vdev;
	snprintf(x->ifnames + strlen(x->ifnames), sizeof(x->ifnames) - strlen(x->ifnames), "%s%s",
		 x->n > 1 ? ", " : "", p->ifname);
	return 0;
}

int rw_xdp_prepare(int argc, char **argv, const struct rw_config *cfg, struct rw_xdp **out,
		   char *err, size_t errlen)
{
	struct rw_xdp *x = NULL;
	char ifname[IF_NAMESIZE];
	bool eq;
	int rc;

	*out = NULL;
	for (int i = 1; i < argc; i++) {
		char *val = vdev_value(argc, argv, i, &eq);

		if (val == NULL || (rc = steer_vdev_iface(val, ifname, sizeof(ifname))) == 0)
			continue;
		if (rc < 0 || (x != NULL && x->n == RW_XDP_PORTS_MAX)) {
			rc = fail(err, errlen, -EINVAL, "--vdev %s: %s", val,
				  rc >= 0 ? "two AF_XDP ports at most ([router] port and node_port)"
					  : "an AF_XDP port needs iface= and no xdp_prog= "
					    "(ringway loads its own steering program)");
			goto fail;
		}
		if (x == NULL && (x = calloc(1, sizeof(*x))) == NULL)
			return fail(err, errlen, -ENOMEM, "%s%s", "out of memory", "");
		if ((rc = add_port(x, argv, i, eq, val, ifname, cfg, err, errlen)) < 0)
			goto fail;
	}
	*out = x;
	return 0;
fail:
	rw_xdp_close(x);
	return rc;
}

unsigned int rw_xdp_ports(const struct rw_xdp *x)
{
	return x != NULL ? x->n : 0;
}

const char *rw_xdp_port_ifname(const struct rw_xdp *x, unsigned int i)
{
	return x != NULL && i < x->n ? x->p[i].ifname : "";
}

uint32_t rw_xdp_stale_removed(const struct rw_xdp *x, unsigned int i)
{
	return x != NULL && i < x->n ? x->p[i].stale : 0;
}

const char *rw_xdp_ifname(const struct rw_xdp *x)
{
	return x != NULL ? x->ifnames : "";
}

const char *rw_xdp_neigh_ifname(const struct rw_xdp *x)
{
	return x != NULL && x->neigh_ifindex != 0 ? x->neigh_ifname : "";
}

bool rw_xdp_kernel_neigh(const struct rw_xdp *x)
{
	return x != NULL && x->neigh_ifindex != 0;
}

/*
 * The kernel's VLAN interface for VLAN @p vid on @p ifname, from /proc/net/vlan/config (lines
 * "NAME | VID | PARENT", present while the 8021q module is); false when there is none.
 */
static bool vlan_interface(const char *ifname, int vid, char *out, size_t outlen)
{
	char line[256], name[IF_NAMESIZE + 1], parent[IF_NAMESIZE + 1];
	FILE *f = fopen("/proc/net/vlan/config", "re");
	bool found = false;
	int v;

	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%16s | %d | %16s", name, &v, parent) == 3 && v == vid &&
		    strcmp(parent, ifname) == 0 && strlen(name) < outlen) {
			memcpy(out, name, strlen(name) + 1);
			found = true;
		}
	}
	fclose(f);
	return found;
}

/*
 * Where the node-facing port's kernel keeps the nodes' MACs: the port's interface, or on a
 * VLAN its VLAN interface when the kernel has one (without one the port's interface itself:
 * whatever tags and untags there, e.g. tc, makes it the VLAN's interface).
 */
static int neigh_interface(struct rw_xdp *x, const struct rw_xdp_port *p, int vlan, char *err,
			   size_t errlen)
{
	snprintf(x->neigh_ifname, sizeof(x->neigh_ifname), "%s", p->ifname);
	x->neigh_ifindex = p->ifindex;
	if (vlan <= 0 || !vlan_interface(p->ifname, vlan, x->neigh_ifname, sizeof(x->neigh_ifname)))
		return 0;
	x->neigh_ifindex = if_nametoindex(x->neigh_ifname);
	if (x->neigh_ifindex == 0)
		return fail(err, errlen, -ENODEV, "VLAN interface %s of %s vanished",
			    x->neigh_ifname, p->ifname);
	return 0;
}

int rw_xdp_bind(struct rw_xdp *x, const struct rw_config *cfg, char *err, size_t errlen)
{
	uint16_t node =
		(uint16_t)(cfg->router.has_node_port ? cfg->router.node_port : cfg->router.port);

	for (unsigned int i = 0; x != NULL && i < x->n; i++) {
		struct rw_xdp_port *p = &x->p[i];
		struct steer_config sc;
		char id[16], why[256];
		uint16_t port;
		bool client, is_node;

		if (rte_eth_dev_get_port_by_name(p->name, &port) != 0)
			return fail(err, errlen, -ENODEV, "AF_XDP port %s (%s) was not probed",
				    p->name, p->ifname);
		client = port == cfg->router.port;
		is_node = port == node;
		if (!client && !is_node) {
			snprintf(id, sizeof(id), "%u", port);
			return fail(err, errlen, -EINVAL,
				    "AF_XDP port %s is DPDK port %s, neither [router] port nor "
				    "node_port",
				    p->ifname, id);
		}
		steer_config_for(cfg, client, is_node, &sc);
		if (steer_reconfigure(p->steer, &sc, why, sizeof(why)) != 0)
			return fail(err, errlen, -EINVAL, "AF_XDP steering on %s: %s", p->ifname,
				    why);
		if (is_node && neigh_interface(x, p, side_vlan(cfg, true), err, errlen) != 0)
			return -ENODEV;
	}
	return 0;
}

/* /ringway/steer: the XDP programs' counters, summed over the AF_XDP ports, or those of the
 * port on the interface named by the parameter. */
static int tel_steer(const char *cmd, const char *params, struct rte_tel_data *d)
{
	uint64_t c[STEER_CTR_COUNT], sum[STEER_CTR_COUNT] = {0};
	unsigned int found = 0;

	(void)cmd;
	for (unsigned int i = 0; tel_xdp != NULL && i < tel_xdp->n; i++) {
		if (params != NULL && params[0] != '\0' &&
		    strcmp(params, tel_xdp->p[i].ifname) != 0)
			continue;
		if (steer_read_stats(tel_xdp->p[i].steer, c) != 0)
			return -ENODEV;
		for (unsigned int k = 0; k < STEER_CTR_COUNT; k++)
			sum[k] += c[k];
		found++;
	}
	if (found == 0)
		return -ENODEV;
	rte_tel_data_start_dict(d);
	for (unsigned int i = 0; i < STEER_CTR_COUNT; i++)
		rte_tel_data_add_dict_u64(d, steer_ctr_name(i), sum[i]);
	return 0;
}

int rw_xdp_started(struct rw_xdp *x, char *err, size_t errlen)
{
	int rc;

	if (x == NULL)
		return 0;
	for (unsigned int i = 0; i < x->n; i++) {
		rc = steer_check_attached(x->p[i].steer, err, errlen);
		if (rc != 0)
			return rc;
	}
	if (x->neigh_ifindex != 0 && x->neigh == NULL) {
		x->neigh = neigh_open(x->neigh_ifindex, err, errlen);
		if (x->neigh == NULL)
			return -errno;
	}
	if (tel_xdp == x)
		return 0;
	tel_xdp = x;
	return rte_telemetry_register_cmd("/ringway/steer", tel_steer,
					  "AF_XDP steering program counters, summed over the "
					  "AF_XDP ports. Parameter: an interface name for one");
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
	for (unsigned int i = 0; i < x->n; i++)
		steer_close(x->p[i].steer);
	free(x);
}
