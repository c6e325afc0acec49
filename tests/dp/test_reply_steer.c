/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reply steering (dp_reply_steer_install) on real PMDs, in a network namespace of the test's
 * own (unshare; root, else the whole test is skipped):
 *
 *   probe    which PMDs available here take the rules: net_tap does where the kernel has the
 *            multiq qdisc, flower and skbedit (one rule per reply port: TC flower matches no
 *            port mask; this machine's kernel has none of the three, so there it refuses);
 *            net_ring, net_null, net_memif, net_af_packet and net_af_xdp have no rte_flow in
 *            DPDK 22.11 and refuse, leaving no rule. Each verdict is printed as a TAP comment.
 *   steered  two workers over a two-queue net_tap whose kernel side plays the client
 *            (198.18.0.10, 32 sockets) and the node (198.18.1.1:11211, a UDP socket that
 *            answers every get). Skipped where net_tap refuses. With the rules, every reply arrives
 * on the queue of the worker that owns its slot: handed_over stays 0 while all 256 replies are
 * returned. crossed  the same with rules that send each worker's reply ports to the other worker's
 *            queue: every reply is handed over, exactly (handed_over = taken_over = 256).
 *   none     no rules: every reply is returned whichever queue it arrives on; the share handed
 *            over is printed (the tun driver already puts a flow's packets on the queue that
 *            last sent on it, so on net_tap that share is usually 0 even without rules).
 *
 * The workers are polled in turn by this thread and the kernel sockets are non-blocking: the
 * counts do not depend on scheduling; the only wait is a generous bound on the whole exchange.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_eth_ring.h>
#include <rte_flow.h>

#include "dp_test.h"
#include "rw_rundir.h"

#define S_IFACE	   "rwsteer0"
#define S_CLIENT   "198.18.0.10"
#define S_NODE	   "198.18.1.1"
#define S_SOCKETS  32
#define S_PER_SOCK 8
#define S_N	   (S_SOCKETS * S_PER_SOCK)
#define S_BASE	   40000
#define S_COUNT	   1024

static struct rte_mempool *pool;
static uint16_t tap_port;
static uint8_t tap_mac[6]; /* the DPDK side of the tap: the router's MAC */
static uint8_t k_mac[6];   /* the kernel side: client and node */
static int cli_fd[S_SOCKETS], node_fd = -1;
static uint32_t tap_rules; /* what test_probe found net_tap takes here */

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd) != 0) {
		fprintf(stderr, "failed: %s\n", cmd);
		exit(1);
	}
}

static int port_start(uint16_t port, uint16_t nq)
{
	struct rte_eth_conf conf;
	int rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_configure(port, nq, nq, &conf);
	for (uint16_t q = 0; q < nq && rc == 0; q++) {
		rc = rte_eth_rx_queue_setup(port, q, 512, 0, NULL, pool);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(port, q, 512, 0, NULL);
	}
	return rc != 0 ? rc : rte_eth_dev_start(port);
}

static void steer_config(struct dp_config *c, uint16_t port)
{
	dp_config_defaults(c);
	c->port_id = port;
	c->n_workers = 2;
	c->router_ip = t_ip(T_ROUTER_IP);
	memcpy(c->router_mac, tap_mac, 6);
	c->listen_ports[0] = T_LISTEN;
	c->n_listen = 1;
	c->reply_port_base = S_BASE;
	c->reply_port_count = S_COUNT;
	c->allowed[0].addr = t_ip("198.18.0.0");
	c->allowed[0].mask = t_ip("255.255.255.0");
	c->n_allowed = 1;
	c->slots = 512;
	c->pool = pool;
}

/* ---------------------------------------------------------------- probe */

/* Install on @p port (started with two queues), print the verdict; @return rules. */
static uint32_t probe_port(const char *what, uint16_t port)
{
	struct dp_config c;
	struct dp_reply_steer rs;
	struct rte_eth_dev_info info;
	int rc;

	steer_config(&c, port);
	rc = dp_reply_steer_install(port, &c, &rs);
	assert_int_equal(rte_eth_dev_info_get(port, &info), 0);
	if (rs.rules != 0)
		printf("# %s (%s): rte_flow, %u rules, %s\n", what, info.driver_name, rs.rules,
		       rs.masked ? "port blocks by mask" : "one per port");
	else
		printf("# %s (%s): handoff: %s\n", what, info.driver_name, rs.why);
	assert_int_equal(rc, rs.err);
	assert_true(rs.rules == 0 ? rc != 0 : rc == 0);
	if (rs.rules != 0)
		assert_int_equal(dp_reply_steer_remove(port), 0);
	return rs.rules;
}

/* A vdev made now (one that cannot be made here is reported, not failed), started with two
 * queues, probed, closed. */
static void probe_vdev(const char *name, const char *args, bool want_rules)
{
	uint16_t port;
	int rc = rte_vdev_init(name, args);

	if (rc != 0 || rte_eth_dev_get_port_by_name(name, &port) != 0) {
		printf("# %s: not available here (%s)\n", name, rte_strerror(-rc));
		return;
	}
	rc = port_start(port, 2);
	if (rc != 0) /* net_af_xdp on a veth opens one queue: its verdict still holds */
		rc = port_start(port, 1);
	if (rc != 0) {
		printf("# %s: cannot start two queues (%s)\n", name, rte_strerror(-rc));
	} else {
		uint32_t n = probe_port(name, port);

		assert_true(want_rules ? n == S_COUNT : n == 0);
		rte_eth_dev_stop(port);
	}
	rte_eth_dev_close(port);
	rte_vdev_uninit(name);
}

static void test_probe(void **state)
{
	struct rte_ring *r[2];
	int ring;

	(void)state;
	/* net_tap: TC flower takes exact ports only, so one rule per port, on a kernel with the
	 * multiq qdisc, flower and skbedit (CONFIG_NET_SCH_MULTIQ, CONFIG_NET_CLS_FLOWER,
	 * CONFIG_NET_ACT_SKBEDIT); without them the PMD disables its rte_flow at creation. */
	tap_rules = probe_port("net_tap0", tap_port);
	assert_true(tap_rules == 0 || tap_rules == S_COUNT);
	r[0] = rte_ring_create("s_r0", 256, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	r[1] = rte_ring_create("s_r1", 256, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	assert_non_null(r[0]);
	assert_non_null(r[1]);
	ring = rte_eth_from_rings("s_ring", r, 2, r, 2, 0);
	assert_true(ring >= 0);
	assert_int_equal(port_start((uint16_t)ring, 2), 0);
	assert_int_equal(probe_port("net_ring", (uint16_t)ring), 0);
	rte_eth_dev_stop((uint16_t)ring);
	rte_eth_dev_close((uint16_t)ring);
	probe_vdev("net_null0", "", false);
	probe_vdev("net_memif0", "role=server,socket=/tmp/rwsteer-memif.sock", false);
	probe_vdev("net_af_packet0", "iface=rwsveth0,qpairs=2", false);
	probe_vdev("net_af_xdp0", "iface=rwsveth1,queue_count=1", false);
}

/* ---------------------------------------------------------------- traffic */

static int udp_socket(const char *ip, uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);

	inet_pton(AF_INET, ip, &a.sin_addr);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		perror("bind");
		exit(1);
	}
	return fd;
}

/* The node: answer every waiting get with a one-datagram hit carrying its request id. */
static void node_answer(void)
{
	uint8_t buf[2048], out[256];
	struct sockaddr_in from;
	socklen_t fl = sizeof(from);
	ssize_t n;

	while ((n = recvfrom(node_fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl)) > 8) {
		const char *key = (const char *)buf + 8 + 4; /* "get " */
		size_t klen = 0;
		int len;

		while (8 + 4 + klen < (size_t)n && key[klen] != '\r')
			klen++;
		memcpy(out, buf, 2);		    /* request id */
		memcpy(out + 2, "\0\0\0\1\0\0", 6); /* seq 0, total 1 */
		len = snprintf((char *)out + 8, sizeof(out) - 8, "VALUE %.*s 0 1\r\nx\r\nEND\r\n",
			       (int)klen, key);
		sendto(node_fd, out, (size_t)(8 + len), 0, (struct sockaddr *)&from, fl);
		fl = sizeof(from);
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* S_N gets from the client sockets, served through @p dp; @return the replies the client got
 * (each checked: its request id, the key it asked for). */
static uint32_t exchange(struct dp *dp, uint32_t round)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(T_LISTEN)};
	bool got[S_N] = {false};
	uint32_t n_got = 0;
	double deadline = now_s() + 30;

	inet_pton(AF_INET, T_ROUTER_IP, &to.sin_addr);
	for (uint32_t i = 0; i < S_N; i++) {
		uint8_t req[64];
		uint16_t id = htons((uint16_t)(round * S_N + i));
		int len;

		memcpy(req, &id, 2);
		memcpy(req + 2, "\0\0\0\1\0\0", 6);
		len = snprintf((char *)req + 8, sizeof(req) - 8, "get k%u\r\n", i);
		assert_int_equal(sendto(cli_fd[i % S_SOCKETS], req, (size_t)(8 + len), 0,
					(struct sockaddr *)&to, sizeof(to)),
				 8 + len);
	}
	while (n_got < S_N && now_s() < deadline) {
		dp_worker_poll(dp_worker_get(dp, 0));
		dp_worker_poll(dp_worker_get(dp, 1));
		node_answer();
		for (int s = 0; s < S_SOCKETS; s++) {
			uint8_t buf[512];
			ssize_t n;

			while ((n = recv(cli_fd[s], buf, sizeof(buf), 0)) > 8) {
				uint16_t id = (uint16_t)((buf[0] << 8 | buf[1]) - round * S_N);
				char want[64];
				int wl;

				assert_true(id < S_N && id % S_SOCKETS == (uint16_t)s && !got[id]);
				wl = snprintf(want, sizeof(want), "VALUE k%u 0 1\r\nx\r\nEND\r\n",
					      id);
				assert_int_equal(n, 8 + wl);
				assert_memory_equal(buf + 8, want, (size_t)wl);
				got[id] = true;
				n_got++;
			}
		}
	}
	return n_got;
}

/* A dp of two workers on the tap serving node n1 at S_NODE (the kernel's MAC). */
static struct dp *dp_on_tap(uint32_t rules)
{
	struct dp_config c;
	struct dp_node_mac mac = {.has_mac = true};
	struct pl_member m = {.name = "n1", .addr = S_NODE, .port = 11211, .weight = 1};
	struct pl_config pc = {.algo = PL_ALGO_RING};
	struct pl_placement *pl = pl_build(&pc, &m, 1);
	struct dp *dp;

	steer_config(&c, tap_port);
	c.reply_steer_rules = rules;
	dp = dp_create(&c);
	assert_non_null(dp);
	assert_non_null(pl);
	memcpy(mac.mac, k_mac, 6);
	assert_int_equal(dp_publish_placement(dp, pl, &mac, 1), 0);
	pl_free(pl);
	return dp;
}

/* Serve S_N gets; check they all came back and every count adds up; @return handed_over. */
static uint64_t serve(uint32_t rules, uint32_t round)
{
	struct dp *dp = dp_on_tap(rules);
	struct dp_stats st, w0, w1;
	uint32_t n = exchange(dp, round);

	assert_int_equal(n, S_N);
	assert_int_equal(dp_stats_get(dp, -1, &st), 0);
	assert_int_equal(dp_stats_get(dp, 0, &w0), 0);
	assert_int_equal(dp_stats_get(dp, 1, &w1), 0);
	assert_int_equal(st.ctr[DP_CTR_FORWARDED], S_N);
	assert_int_equal(st.ctr[DP_CTR_RETURNED], S_N);
	assert_int_equal(st.ctr[DP_CTR_SLOTS_COMPLETED], S_N);
	assert_int_equal(st.ctr[DP_CTR_HANDED_OVER], st.ctr[DP_CTR_TAKEN_OVER]);
	assert_int_equal(st.reply_steer_rules, rules);
	assert_true(dp_stats_identity(&st));
	/* The client's 32 flows reach both workers (each queue's share is the tun hash's). */
	assert_true(w0.ctr[DP_CTR_FORWARDED] > 0 && w1.ctr[DP_CTR_FORWARDED] > 0);
	printf("# %u rules: %" PRIu64 " of %u replies handed over (worker 0 forwarded %" PRIu64
	       ", worker 1 %" PRIu64 ")\n",
	       rules, st.ctr[DP_CTR_HANDED_OVER], S_N, w0.ctr[DP_CTR_FORWARDED],
	       w1.ctr[DP_CTR_FORWARDED]);
	dp_free(dp);
	return st.ctr[DP_CTR_HANDED_OVER];
}

static void test_steered(void **state)
{
	struct dp_config c;
	struct dp_reply_steer rs;

	(void)state;
	if (tap_rules == 0) {
		/* not cmocka's skip(): meson reads its "not ok # SKIP" as a failure */
		printf("# skipped: net_tap refuses rte_flow on this kernel (no multiq, flower, "
		       "skbedit)\n");
		return;
	}
	steer_config(&c, tap_port);
	assert_int_equal(dp_reply_steer_install(tap_port, &c, &rs), 0);
	assert_int_equal(rs.rules, S_COUNT);
	assert_int_equal(serve(rs.rules, 1), 0);
	assert_int_equal(dp_reply_steer_remove(tap_port), 0);
}

/* Rules of our own that put worker w's reply ports on the other worker's queue. */
static void cross_rules(void)
{
	for (uint32_t p = 0; p < S_COUNT; p++) {
		struct rte_flow_attr attr = {.ingress = 1};
		struct rte_flow_item_udp spec = {.hdr.dst_port = htons((uint16_t)(S_BASE + p))};
		struct rte_flow_item_udp mask = {.hdr.dst_port = 0xffff};
		struct rte_flow_action_queue q = {.index = p < S_COUNT / 2 ? 1 : 0};
		struct rte_flow_item items[] = {
			{.type = RTE_FLOW_ITEM_TYPE_ETH},
			{.type = RTE_FLOW_ITEM_TYPE_IPV4},
			{.type = RTE_FLOW_ITEM_TYPE_UDP, .spec = &spec, .mask = &mask},
			{.type = RTE_FLOW_ITEM_TYPE_END},
		};
		struct rte_flow_action act[] = {
			{.type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &q},
			{.type = RTE_FLOW_ACTION_TYPE_END},
		};
		struct rte_flow_error err;

		assert_non_null(rte_flow_create(tap_port, &attr, items, act, &err));
	}
}

static void test_crossed(void **state)
{
	(void)state;
	if (tap_rules == 0) {
		printf("# skipped: net_tap refuses rte_flow on this kernel\n");
		return;
	}
	cross_rules();
	assert_int_equal(serve(S_COUNT, 2), S_N);
	assert_int_equal(dp_reply_steer_remove(tap_port), 0);
}

static void test_none(void **state)
{
	uint64_t h;

	(void)state;
	h = serve(0, 3);
	assert_true(h <= S_N);
}

/* ---------------------------------------------------------------- set-up */

static void kernel_side(void)
{
	char path[128];
	FILE *f;
	struct rte_ether_addr a;
	struct ifreq ifr = {0};
	int fd;

	assert_int_equal(rte_eth_macaddr_get(tap_port, &a), 0);
	memcpy(tap_mac, &a, 6);
	/* By ioctl: /sys shows the namespace it was mounted in, not this one. */
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", S_IFACE);
	if (fd < 0 || ioctl(fd, SIOCGIFHWADDR, &ifr) != 0) {
		perror("SIOCGIFHWADDR " S_IFACE);
		exit(1);
	}
	memcpy(k_mac, ifr.ifr_hwaddr.sa_data, 6);
	close(fd);
	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6", S_IFACE);
	f = fopen(path, "w");
	if (f != NULL) {
		fputs("1", f); /* no router solicitations or MLD reports into the router */
		fclose(f);
	}
	sh("ip link set lo up && ip link set %s up && ip addr add %s/24 dev %s && "
	   "ip addr add %s/24 dev %s",
	   S_IFACE, S_CLIENT, S_IFACE, S_NODE, S_IFACE);
	sh("ip neigh replace %s lladdr %02x:%02x:%02x:%02x:%02x:%02x dev %s nud permanent",
	   T_ROUTER_IP, tap_mac[0], tap_mac[1], tap_mac[2], tap_mac[3], tap_mac[4], tap_mac[5],
	   S_IFACE);
	sh("ip link add rwsveth0 type veth peer name rwsveth1 && ip link set rwsveth0 up && "
	   "ip link set rwsveth1 up");
	for (int s = 0; s < S_SOCKETS; s++)
		cli_fd[s] = udp_socket(S_CLIENT, (uint16_t)(20000 + s * 7));
	node_fd = udp_socket(S_NODE, 11211);
}

int main(void)
{
	char prefix[64];
	char *argv[] = {
		"test_reply_steer",
		"-l",
		"0",
		"--no-huge",
		"-m",
		"256",
		"--no-pci",
		"--no-shconf",
		"--no-telemetry",
		"--log-level",
		"error",
		"--file-prefix",
		prefix,
		"--vdev",
		"net_tap0,iface=" S_IFACE,
	};
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_steered),
		cmocka_unit_test(test_crossed),
		cmocka_unit_test(test_none),
	};
	int rc;

	/* The tap, the veths and the addresses live and die with this namespace. */
	if (geteuid() != 0 || unshare(CLONE_NEWNET) != 0) {
		printf("1..0 # SKIP needs root for a network namespace of its own\n");
		return 0;
	}
	snprintf(prefix, sizeof(prefix), "test_reply_steer_%d", getpid());
	rw_rundir_remove_at_exit(prefix);
	if (rte_eal_init((int)RTE_DIM(argv), argv) < 0)
		return 1;
	pool = rte_pktmbuf_pool_create("s_pool", 8191, 64, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	if (pool == NULL || rte_eth_dev_get_port_by_name("net_tap0", &tap_port) != 0 ||
	    port_start(tap_port, 2) != 0)
		return 1;
	kernel_side();
	cmocka_set_message_output(CM_OUTPUT_TAP);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	rte_eth_dev_stop(tap_port);
	rte_eth_dev_close(tap_port);
	rte_eal_cleanup();
	rw_rundir_remove();
	return rc;
}
