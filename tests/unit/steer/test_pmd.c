/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ownership decision end to end, with DPDK 22.11's real AF_XDP PMD (root; skipped
 * otherwise): steer_open, then a net_af_xdp port with xdp_prog=steer_object_path() on one
 * end of a namespace veth pair. From the other namespace:
 *   - UDP to the router address and listen port, and to a reply port, arrive through
 *     rte_eth_rx_burst (the PMD put its socket into our xsks_map);
 *   - ping and UDP to another port are still answered / received by the kernel;
 *   - the counters say so, with no packet missing a socket;
 *   - rte_eth_dev_close leaves no program attached.
 */
#include <errno.h>
#include <net/if.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <bpf/libbpf.h>
#include <cmocka.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "netns.h"
#include "rw_rundir.h"
#include "steer.h"

#define LISTEN_PORT 11211
#define REPLY_BASE  40000

static struct netns_pair ns;
static unsigned int ifindex;
static struct steer *steer;
static uint16_t port_id;

/* Send one UDP datagram from namespace b to a's address, port @port. */
static void send_udp(uint16_t port, const char *text)
{
	assert_int_equal(
		netns_sh("echo %s | ip netns exec %s nc -u -w0 %s %u", text, ns.b, ns.ip_a, port),
		0);
}

/* Poll the port for up to 2 s for a UDP datagram to @port carrying @text. */
static bool receive_udp(uint16_t port, const char *text)
{
	struct rte_mbuf *m[32];
	bool found = false;
	int round;

	for (round = 0; round < 200 && !found; round++) {
		uint16_t n = rte_eth_rx_burst(port_id, 0, m, 32), i;

		for (i = 0; i < n; i++) {
			const uint8_t *p = rte_pktmbuf_mtod(m[i], const uint8_t *);
			const struct rte_ipv4_hdr *ip = (const void *)(p + 14);
			const struct rte_udp_hdr *udp = (const void *)(p + 14 + 20);
			size_t tl = strlen(text);

			if (m[i]->data_len >= 14 + 20 + 8 + tl &&
			    ip->next_proto_id == IPPROTO_UDP &&
			    rte_be_to_cpu_16(udp->dst_port) == port &&
			    memcmp(udp + 1, text, tl) == 0)
				found = true;
			rte_pktmbuf_free(m[i]);
		}
		if (!found)
			usleep(10000);
	}
	return found;
}

static void test_ours_reach_the_port(void **state)
{
	(void)state;
	send_udp(LISTEN_PORT, "ringway-request");
	assert_true(receive_udp(LISTEN_PORT, "ringway-request"));
	send_udp(REPLY_BASE + 3, "ringway-reply");
	assert_true(receive_udp(REPLY_BASE + 3, "ringway-reply"));
}

static void test_kernel_keeps_the_rest(void **state)
{
	(void)state;
	assert_int_equal(
		netns_sh("ip netns exec %s ping -q -c 2 -i 0.2 -W 2 %s >/dev/null", ns.b, ns.ip_a),
		0);
	assert_int_equal(
		netns_sh("f=$(mktemp); ip netns exec %s timeout 3 nc -u -l %s 5353 >$f & "
			 "sleep 0.5; echo kernel-udp | ip netns exec %s nc -u -w1 %s 5353; "
			 "sleep 0.3; kill %%1 2>/dev/null; wait; "
			 "grep -qx kernel-udp $f; r=$?; rm -f $f; exit $r",
			 ns.a, ns.ip_a, ns.b, ns.ip_a),
		0);
	assert_false(receive_udp(5353, "kernel-udp"));
}

static void test_counters(void **state)
{
	uint64_t n[STEER_CTR_COUNT];

	(void)state;
	assert_int_equal(steer_read_stats(steer, n), 0);
	assert_true(n[STEER_CTR_TO_XSK_REQUEST] >= 1);
	assert_true(n[STEER_CTR_TO_XSK_REPLY] >= 1);
	assert_int_equal(n[STEER_CTR_XSK_MISSING], 0);
	assert_true(n[STEER_CTR_PASS_NOT_UDP] >= 2);	/* echo requests */
	assert_true(n[STEER_CTR_PASS_OTHER_PORT] >= 1); /* 5353 */
}

static void test_close_detaches(void **state)
{
	uint32_t id = 1;

	(void)state;
	assert_int_equal(rte_eth_dev_stop(port_id), 0);
	assert_int_equal(rte_eth_dev_close(port_id), 0);
	assert_int_equal(steer_query(ifindex, &id, NULL), 0);
	assert_int_equal(id, 0);
}

static int start_port(void)
{
	char vdev[256], prefix[64], base[128], ifname[16];
	char *argv[] = {
		"test_steer_pmd",
		"-l",
		"0",
		"--no-huge",
		"-m",
		"256",
		"--no-pci",
		"--no-shconf",
		"--log-level",
		"error",
		"--file-prefix",
		prefix,
		"--vdev",
		vdev,
	};
	struct rte_eth_conf conf;
	struct rte_mempool *pool;
	char err[256] = "";

	snprintf(prefix, sizeof(prefix), "steer_pmd_%d", (int)getpid());
	rw_rundir_remove_at_exit(prefix);
	/* What the router does with the user's --vdev argument. */
	snprintf(base, sizeof(base), "net_af_xdp0,iface=%s,start_queue=0,queue_count=1", ns.if_a);
	if (steer_vdev_iface(base, ifname, sizeof(ifname)) != 1 || strcmp(ifname, ns.if_a) != 0 ||
	    steer_vdev_with_prog(base, steer, vdev, sizeof(vdev)) != 0)
		return -1;
	if (rte_eal_init((int)RTE_DIM(argv), argv) < 0 || rte_eth_dev_count_avail() != 1)
		return -1;
	port_id = 0;
	pool = rte_pktmbuf_pool_create("steer_pool", 4096, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	memset(&conf, 0, sizeof(conf));
	if (pool == NULL || rte_eth_dev_configure(port_id, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup(port_id, 0, 1024, 0, NULL, pool) != 0 ||
	    rte_eth_tx_queue_setup(port_id, 0, 1024, 0, NULL) != 0 ||
	    rte_eth_dev_start(port_id) != 0)
		return -1;
	if (steer_check_attached(steer, err, sizeof(err)) != 0) {
		fprintf(stderr, "# %s\n", err);
		return -1;
	}
	return 0;
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static int group_setup(void **state)
{
	struct steer_config c = {
		.listen_ports = {LISTEN_PORT},
		.n_listen_ports = 1,
		.reply_port_base = REPLY_BASE,
		.reply_port_count = 100,
	};
	char err[256] = "";

	(void)state;
	if (netns_up(&ns, "pm", 214) != 0 || netns_enter(&ns, ns.a) != 0)
		return -1;
	ifindex = if_nametoindex(ns.if_a);
	inet_pton(AF_INET, ns.ip_a, &c.router_ip);
	steer = steer_open(ifindex, &c, err, sizeof(err));
	if (steer == NULL) {
		fprintf(stderr, "# %s\n", err);
		return -1;
	}
	return start_port();
}

static int group_teardown(void **state)
{
	(void)state;
	steer_close(steer);
	rte_eal_cleanup();
	netns_down(&ns);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ours_reach_the_port),
		cmocka_unit_test(test_kernel_keeps_the_rest),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_close_detaches),
	};

	if (geteuid() != 0) {
		printf("1..0 # SKIP needs root for namespaces and AF_XDP\n");
		return 77;
	}
	libbpf_set_print(quiet);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
