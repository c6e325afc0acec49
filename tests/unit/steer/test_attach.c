/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loader on a real interface, in a throwaway namespace pair joined by a veth (root;
 * skipped otherwise). "The PMD" below is this test doing exactly what DPDK 22.11's AF_XDP
 * PMD does with xdp_prog=PATH: bpf_object__open_file + bpf_object__load, bpf_xdp_attach
 * with XDP_FLAGS_UPDATE_IF_NOEXIST, and bpf_xdp_detach with the same flag at close.
 *   - attach is seen by steer_check_attached, bpf_xdp_query and `ip link`; detach clears it
 *   - steer_close removes ours when the PMD did not (exit without closing the port)
 *   - a run killed with SIGKILL leaves its program; the next steer_open replaces it
 *   - someone else's program is never removed; a second ringway on the interface is refused
 *   - with the program attached (native and generic XDP) the namespace still answers ping
 *     and TCP, and UDP to the router port moves the steering counters
 */
#include <errno.h>
#include <net/if.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cmocka.h>
#include <linux/if_link.h>

#include "netns.h"
#include "steer.h"

static struct netns_pair ns;
static unsigned int ifindex;

/* The PMD's side: its bpf_object stays open for the life of the port. */
struct pmd {
	struct bpf_object *obj;
};

static struct steer_config config(void)
{
	struct steer_config c = {
		.listen_ports = {11211},
		.n_listen_ports = 1,
		.reply_port_base = 40000,
		.reply_port_count = 512,
	};

	inet_pton(AF_INET, ns.ip_a, &c.router_ip);
	return c;
}

static struct steer *open_ok(void)
{
	struct steer_config c = config();
	char err[256] = "";
	struct steer *s = steer_open(ifindex, &c, err, sizeof(err));

	if (s == NULL)
		fail_msg("steer_open: %s", err);
	return s;
}

/* Attach like the AF_XDP PMD; @mode 0 lets the kernel choose (native on veth). */
static int pmd_attach(struct pmd *p, const char *path, uint32_t mode)
{
	struct bpf_program *prog;
	int rc;

	p->obj = bpf_object__open_file(path, NULL);
	if (p->obj == NULL)
		return -errno;
	rc = bpf_object__load(p->obj);
	prog = bpf_object__next_program(p->obj, NULL);
	if (rc == 0 && bpf_object__find_map_by_name(p->obj, STEER_XSKS_MAP_NAME) == NULL)
		rc = -ENOENT;
	if (rc == 0)
		rc = bpf_xdp_attach((int)ifindex, bpf_program__fd(prog),
				    XDP_FLAGS_UPDATE_IF_NOEXIST | mode, NULL);
	if (rc < 0) {
		bpf_object__close(p->obj);
		p->obj = NULL;
	}
	return rc;
}

static void pmd_close(struct pmd *p, uint32_t mode)
{
	assert_int_equal(bpf_xdp_detach((int)ifindex, XDP_FLAGS_UPDATE_IF_NOEXIST | mode, NULL), 0);
	bpf_object__close(p->obj);
	p->obj = NULL;
}

static bool ip_link_shows_xdp(void)
{
	return netns_test("ip -n %s link show dev %s | grep -q 'prog/xdp'", ns.a, ns.if_a) == 0;
}

static uint32_t attached_id(bool *ours)
{
	uint32_t id = 1;

	assert_int_equal(steer_query(ifindex, &id, ours), 0);
	return id;
}

static void test_attach_detach(void **state)
{
	struct steer *s = open_ok();
	struct pmd p;
	char err[256] = "";
	bool ours = false;

	(void)state;
	assert_int_equal(attached_id(NULL), 0);
	assert_int_equal(steer_check_attached(s, err, sizeof(err)), -ENOENT);
	assert_int_equal(pmd_attach(&p, steer_object_path(s), 0), 0);
	assert_int_equal(steer_check_attached(s, err, sizeof(err)), 0);
	assert_int_not_equal(attached_id(&ours), 0);
	assert_true(ours);
	assert_true(ip_link_shows_xdp());
	pmd_close(&p, 0);
	assert_int_equal(attached_id(NULL), 0);
	assert_false(ip_link_shows_xdp());
	assert_int_equal(steer_check_attached(s, err, sizeof(err)), -ENOENT);
	steer_close(s);
}

/* The configuration in the object at @path, as the PMD's libbpf would load it. */
static struct steer_cfg object_config(const char *path)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct steer_cfg c;
	struct bpf_map *m;
	bool found = false;

	assert_non_null(obj);
	bpf_object__for_each_map(m, obj)
	{
		const char *n = bpf_map__name(m);
		size_t nl = strlen(n), sz = 0;
		const void *v;

		if (nl < 7 || strcmp(n + nl - 7, ".rodata") != 0)
			continue;
		v = bpf_map__initial_value(m, &sz);
		assert_true(sz >= sizeof(c));
		memcpy(&c, v, sizeof(c));
		found = true;
	}
	bpf_object__close(obj);
	assert_true(found);
	return c;
}

/* After EAL names the port (e.g. the node port of two): the same file, the new configuration,
 * and it still loads and attaches; a bad one leaves the file as it was. */
static void test_reconfigure(void **state)
{
	struct steer *s = open_ok();
	struct steer_config c = config();
	struct steer_cfg got;
	struct pmd p;
	char err[256] = "", path[64];

	(void)state;
	snprintf(path, sizeof(path), "%s", steer_object_path(s));
	got = object_config(path);
	assert_int_equal(got.reply_port_count, 512);
	assert_int_equal(got.flags & STEER_CFG_VLAN, 0);
	c.router_ip = htonl(0xc61201fe); /* 198.18.1.254 */
	c.listen_ports[0] = 39999;
	c.vlan_fixed = true;
	c.vlan_id = 100;
	assert_int_equal(steer_reconfigure(s, &c, err, sizeof(err)), 0);
	assert_string_equal(steer_object_path(s), path);
	got = object_config(path);
	assert_int_equal(got.router_ip, htonl(0xc61201fe));
	assert_int_equal(got.listen_ports[0], htons(39999));
	assert_int_equal(got.flags & STEER_CFG_VLAN, STEER_CFG_VLAN);
	assert_int_equal(got.vlan_id, 100);
	c.n_listen_ports = 0;
	assert_int_equal(steer_reconfigure(s, &c, err, sizeof(err)), -EINVAL);
	assert_int_equal(object_config(path).vlan_id, 100);
	assert_int_equal(pmd_attach(&p, path, 0), 0);
	assert_int_equal(steer_check_attached(s, err, sizeof(err)), 0);
	pmd_close(&p, 0);
	steer_close(s);
}

static void test_close_detaches_what_pmd_left(void **state)
{
	struct steer *s = open_ok();
	struct pmd p;

	(void)state;
	assert_int_equal(pmd_attach(&p, steer_object_path(s), XDP_FLAGS_SKB_MODE), 0);
	assert_true(ip_link_shows_xdp());
	steer_close(s); /* the port was never closed */
	assert_int_equal(attached_id(NULL), 0);
	assert_false(ip_link_shows_xdp());
	bpf_object__close(p.obj);
}

static void test_killed_run_is_replaced(void **state)
{
	int sync[2];
	pid_t child;
	char c = 0;
	struct pmd p;
	struct steer *s;
	bool ours = false;
	uint32_t stale;

	(void)state;
	assert_int_equal(pipe(sync), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct steer_config cfg = config();
		char err[256];
		struct steer *cs = steer_open(ifindex, &cfg, err, sizeof(err));

		if (cs == NULL || pmd_attach(&p, steer_object_path(cs), 0) != 0)
			_exit(1);
		(void)write(sync[1], "x", 1);
		pause(); /* killed here, never detaching */
		_exit(0);
	}
	close(sync[1]);
	assert_int_equal(read(sync[0], &c, 1), 1);
	close(sync[0]);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);

	stale = attached_id(&ours);
	assert_int_not_equal(stale, 0);
	assert_true(ours);
	/* Left in place, the stale program would make the PMD's attach fail. */
	s = open_ok();
	assert_int_equal(attached_id(NULL), 0);
	assert_int_equal(pmd_attach(&p, steer_object_path(s), 0), 0);
	assert_int_not_equal(attached_id(&ours), stale);
	assert_true(ours);
	pmd_close(&p, 0);
	steer_close(s);
}

static void test_foreign_program_kept(void **state)
{
	const struct bpf_insn pass[] = {
		{.code = 0xb7, .dst_reg = 0, .imm = XDP_PASS}, /* r0 = XDP_PASS */
		{.code = 0x95},				       /* exit */
	};
	struct steer_config c = config();
	char err[256] = "";
	bool ours = true;
	int fd;

	(void)state;
	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "other_xdp", "GPL", pass, 2, NULL);
	assert_true(fd >= 0);
	assert_int_equal(bpf_xdp_attach((int)ifindex, fd, XDP_FLAGS_SKB_MODE, NULL), 0);
	assert_null(steer_open(ifindex, &c, err, sizeof(err)));
	assert_int_equal(errno, EBUSY);
	assert_non_null(strstr(err, "not ringway's"));
	assert_int_equal(steer_detach_ours(ifindex), -EBUSY);
	assert_int_not_equal(attached_id(&ours), 0);
	assert_false(ours);
	assert_int_equal(bpf_xdp_detach((int)ifindex, XDP_FLAGS_SKB_MODE, NULL), 0);
	close(fd);
}

static void test_second_router_refused(void **state)
{
	struct steer_config c = config();
	struct steer *s1 = open_ok(), *s2;
	char err[256] = "";

	(void)state;
	s2 = steer_open(ifindex, &c, err, sizeof(err));
	assert_null(s2);
	assert_int_equal(errno, EBUSY);
	assert_non_null(strstr(err, "in use by another ringway"));
	steer_close(s1);
	s2 = open_ok();
	steer_close(s2);
}

static void kernel_traffic(uint32_t mode)
{
	uint64_t n[STEER_CTR_COUNT];
	char err[256] = "";
	struct steer *s = open_ok();
	struct pmd p;

	assert_int_equal(pmd_attach(&p, steer_object_path(s), mode), 0);
	assert_int_equal(steer_check_attached(s, err, sizeof(err)), 0);
	netns_sh("ip -n %s neigh flush all; ip -n %s neigh flush all", ns.a, ns.b);
	assert_int_equal(
		netns_sh("ip netns exec %s ping -q -c 3 -i 0.2 -W 2 %s >/dev/null", ns.b, ns.ip_a),
		0);
	assert_int_equal(
		netns_sh("f=$(mktemp); ip netns exec %s timeout 5 nc -l %s 7777 >$f & sleep 0.5; "
			 "echo ringway-tcp | ip netns exec %s timeout 5 nc -N %s 7777; wait; "
			 "grep -qx ringway-tcp $f; r=$?; rm -f $f; exit $r",
			 ns.a, ns.ip_a, ns.b, ns.ip_a),
		0);
	/* No AF_XDP socket is bound, so our UDP falls back to the kernel's listener. */
	assert_int_equal(
		netns_sh("f=$(mktemp); ip netns exec %s timeout 3 nc -u -l %s 11211 >$f & "
			 "sleep 0.5; echo ringway-udp | ip netns exec %s nc -u -w1 %s 11211; "
			 "sleep 0.3; kill %%1 2>/dev/null; wait; "
			 "grep -qx ringway-udp $f; r=$?; rm -f $f; exit $r",
			 ns.a, ns.ip_a, ns.b, ns.ip_a),
		0);
	assert_int_equal(steer_read_stats(s, n), 0);
	assert_true(n[STEER_CTR_PASS_NOT_IPV4] >= 1);	 /* ARP */
	assert_true(n[STEER_CTR_PASS_NOT_UDP] >= 3 + 3); /* 3 echo requests, TCP segments */
	assert_true(n[STEER_CTR_TO_XSK_REQUEST] >= 1);
	assert_int_equal(n[STEER_CTR_XSK_MISSING],
			 n[STEER_CTR_TO_XSK_REQUEST] + n[STEER_CTR_TO_XSK_REPLY]);
	pmd_close(&p, mode);
	steer_close(s);
}

static void test_kernel_traffic_native(void **state)
{
	(void)state;
	kernel_traffic(0);
}

static void test_kernel_traffic_generic(void **state)
{
	(void)state;
	kernel_traffic(XDP_FLAGS_SKB_MODE);
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
	(void)state;
	if (netns_up(&ns, "at", 210) != 0 || netns_enter(&ns, ns.a) != 0)
		return -1;
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
		cmocka_unit_test(test_attach_detach),
		cmocka_unit_test(test_reconfigure),
		cmocka_unit_test(test_close_detaches_what_pmd_left),
		cmocka_unit_test(test_killed_run_is_replaced),
		cmocka_unit_test(test_foreign_program_kept),
		cmocka_unit_test(test_second_router_refused),
		cmocka_unit_test(test_kernel_traffic_native),
		cmocka_unit_test(test_kernel_traffic_generic),
	};

	if (geteuid() != 0) {
		printf("1..0 # SKIP needs root for namespaces and XDP\n");
		return 77;
	}
	libbpf_set_print(quiet);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
