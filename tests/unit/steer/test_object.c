/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * steer_object_build without privileges: bad configurations are refused with -EINVAL, and a
 * good one lands in the object's .rodata exactly where libbpf (an independent ELF reader)
 * finds the initial value it will load; the program and map names are the ones the AF_XDP
 * PMD and the loader look for.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <bpf/libbpf.h>
#include <cmocka.h>

#include "steer.h"

static struct steer_config good_config(void)
{
	struct steer_config c = {
		.router_ip = htonl(0xc6120001), /* 198.18.0.1 */
		.listen_ports = {11211, 11311},
		.n_listen_ports = 2,
		.reply_port_base = 40000,
		.reply_port_count = 1024,
	};
	return c;
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static void expect_invalid(const struct steer_config *c, const char *needle)
{
	char err[256] = "";
	void *obj = NULL;
	size_t len = 0;

	assert_int_equal(steer_object_build(c, &obj, &len, err, sizeof(err)), -EINVAL);
	assert_null(obj);
	assert_non_null(strstr(err, needle));
}

static void test_bad_configs(void **state)
{
	struct steer_config c;

	(void)state;
	c = good_config();
	c.router_ip = 0;
	expect_invalid(&c, "0.0.0.0");
	c = good_config();
	c.n_listen_ports = 0;
	expect_invalid(&c, "listen ports");
	c = good_config();
	c.n_listen_ports = STEER_MAX_LISTEN_PORTS + 1;
	expect_invalid(&c, "listen ports");
	c = good_config();
	c.listen_ports[1] = 0;
	expect_invalid(&c, "listen port 1 is 0");
	c = good_config();
	c.reply_port_base = 65000;
	c.reply_port_count = 537; /* 65000 + 537 = 65537 */
	expect_invalid(&c, "reply ports");
	c = good_config();
	c.reply_port_base = 0;
	expect_invalid(&c, "reply ports");
	c = good_config();
	inet_from_v4(&c.router_ip6, htonl(0xc6120001)); /* ::ffff:198.18.0.1 is no IPv6 */
	expect_invalid(&c, "IPv4-mapped");
	c = good_config();
	c.vlan_fixed = true;
	c.vlan_id = 4095;
	expect_invalid(&c, "VLAN 4095");
}

/* The .rodata initial value libbpf would load from @img. */
static const struct steer_cfg *rodata_of(struct bpf_object *obj)
{
	struct bpf_map *m;
	size_t sz = 0;

	bpf_object__for_each_map(m, obj)
	{
		const char *n = bpf_map__name(m);
		size_t nl = strlen(n);

		if (nl >= 7 && strcmp(n + nl - 7, ".rodata") == 0) {
			const void *v = bpf_map__initial_value(m, &sz);

			assert_true(sz >= sizeof(struct steer_cfg));
			return v;
		}
	}
	fail_msg("no .rodata map in the object");
	return NULL;
}

static void test_config_lands_in_rodata(void **state)
{
	struct steer_config c = good_config();
	const struct steer_cfg *ro;
	struct bpf_object *obj;
	struct bpf_program *p;
	char err[256] = "";
	void *img = NULL;
	size_t len = 0;

	(void)state;
	c.reply_port_base = 65535;
	c.reply_port_count = 1; /* the last port is allowed */
	assert_int_equal(steer_object_build(&c, &img, &len, err, sizeof(err)), 0);
	obj = bpf_object__open_mem(img, len, NULL);
	assert_non_null(obj);
	ro = rodata_of(obj);
	assert_int_equal(ro->magic, STEER_CFG_MAGIC);
	assert_int_equal(ro->router_ip, htonl(0xc6120001));
	assert_int_equal(ro->n_listen_ports, 2);
	assert_int_equal(ro->listen_ports[0], htons(11211));
	assert_int_equal(ro->listen_ports[1], htons(11311));
	assert_int_equal(ro->listen_ports[2], 0);
	assert_int_equal(ro->reply_port_base, 65535);
	assert_int_equal(ro->reply_port_count, 1);

	/* Exactly one program (the PMD takes the first) with the name we recognise. */
	p = bpf_object__next_program(obj, NULL);
	assert_non_null(p);
	assert_string_equal(bpf_program__name(p), STEER_PROG_NAME);
	assert_int_equal(bpf_program__type(p), BPF_PROG_TYPE_XDP);
	assert_null(bpf_object__next_program(obj, p));
	assert_non_null(bpf_object__find_map_by_name(obj, STEER_XSKS_MAP_NAME));
	assert_int_equal(bpf_map__type(bpf_object__find_map_by_name(obj, STEER_XSKS_MAP_NAME)),
			 BPF_MAP_TYPE_XSKMAP);
	assert_int_equal(
		bpf_map__max_entries(bpf_object__find_map_by_name(obj, STEER_STATS_MAP_NAME)),
		STEER_CTR_COUNT);
	bpf_object__close(obj);
	free(img);
}

/* IPv6: the address as 16 bytes in network order with the flag; IPv4 may be absent. */
static void test_ipv6_lands_in_rodata(void **state)
{
	static const uint8_t v6[16] = {0x20, 0x01, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	struct steer_config c = good_config();
	const struct steer_cfg *ro;
	struct bpf_object *obj;
	char err[256] = "";
	void *img = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(steer_object_build(&c, &img, &len, err, sizeof(err)), 0);
	obj = bpf_object__open_mem(img, len, NULL);
	assert_non_null(obj);
	assert_int_equal(rodata_of(obj)->flags & STEER_CFG_IPV6, 0); /* none given: off */
	bpf_object__close(obj);
	free(img);

	c.router_ip = 0; /* an IPv6-only router */
	inet_from_v6(&c.router_ip6, v6);
	assert_int_equal(steer_object_build(&c, &img, &len, err, sizeof(err)), 0);
	obj = bpf_object__open_mem(img, len, NULL);
	assert_non_null(obj);
	ro = rodata_of(obj);
	assert_int_equal(ro->flags, STEER_CFG_IPV6);
	assert_int_equal(ro->router_ip, 0);
	assert_memory_equal(ro->router_ip6, v6, 16);
	bpf_object__close(obj);
	free(img);
}

/* A VLAN: its id with the flag; without one neither (any tag is steered). */
static void test_vlan_lands_in_rodata(void **state)
{
	struct steer_config c = good_config();
	const struct steer_cfg *ro;
	struct bpf_object *obj;
	char err[256] = "";
	void *img = NULL;
	size_t len = 0;

	(void)state;
	c.vlan_id = 100; /* without vlan_fixed: ignored */
	assert_int_equal(steer_object_build(&c, &img, &len, err, sizeof(err)), 0);
	obj = bpf_object__open_mem(img, len, NULL);
	assert_non_null(obj);
	ro = rodata_of(obj);
	assert_int_equal(ro->flags & STEER_CFG_VLAN, 0);
	assert_int_equal(ro->vlan_id, 0);
	bpf_object__close(obj);
	free(img);

	c.vlan_fixed = true;
	c.vlan_id = 4094;
	assert_int_equal(steer_object_build(&c, &img, &len, err, sizeof(err)), 0);
	obj = bpf_object__open_mem(img, len, NULL);
	assert_non_null(obj);
	ro = rodata_of(obj);
	assert_int_equal(ro->flags, STEER_CFG_VLAN);
	assert_int_equal(ro->vlan_id, 4094);
	bpf_object__close(obj);
	free(img);
}

static void test_two_builds_differ_only_in_config(void **state)
{
	struct steer_config a = good_config(), b = good_config();
	void *ia, *ib;
	size_t la, lb, i, diff = 0;
	char err[256];

	(void)state;
	b.router_ip = htonl(0xc6120002);
	assert_int_equal(steer_object_build(&a, &ia, &la, err, sizeof(err)), 0);
	assert_int_equal(steer_object_build(&b, &ib, &lb, err, sizeof(err)), 0);
	assert_int_equal(la, lb);
	for (i = 0; i < la; i++)
		diff += ((uint8_t *)ia)[i] != ((uint8_t *)ib)[i];
	assert_int_equal(diff, 1); /* the last byte of the address */
	free(ia);
	free(ib);
}

static void test_counter_names(void **state)
{
	unsigned int i, j;

	(void)state;
	for (i = 0; i < STEER_CTR_COUNT; i++) {
		assert_non_null(steer_ctr_name(i));
		for (j = 0; j < i; j++)
			assert_string_not_equal(steer_ctr_name(i), steer_ctr_name(j));
	}
	assert_null(steer_ctr_name(STEER_CTR_COUNT));
	assert_string_equal(steer_ctr_name(STEER_CTR_TO_XSK_REQUEST), "to_xsk_request");
	assert_string_equal(steer_ctr_name(STEER_CTR_XSK_MISSING), "xsk_missing");
}

static void test_vdev_iface(void **state)
{
	char ifname[16];

	(void)state;
	assert_int_equal(
		steer_vdev_iface("net_af_xdp0,iface=eth1,queue_count=2", ifname, sizeof(ifname)),
		1);
	assert_string_equal(ifname, "eth1");
	assert_int_equal(
		steer_vdev_iface("net_af_xdp1,start_queue=2,iface=veth0", ifname, sizeof(ifname)),
		1);
	assert_string_equal(ifname, "veth0");
	assert_int_equal(steer_vdev_iface("net_af_packet0,iface=eth1", ifname, sizeof(ifname)), 0);
	assert_int_equal(steer_vdev_iface("net_ring0", ifname, sizeof(ifname)), 0);
	assert_int_equal(steer_vdev_iface("net_af_xdp0,queue_count=2", ifname, sizeof(ifname)),
			 -EINVAL);
	assert_int_equal(steer_vdev_iface("net_af_xdp0,iface=", ifname, sizeof(ifname)), -EINVAL);
	assert_int_equal(steer_vdev_iface("net_af_xdp0,myiface=eth1", ifname, sizeof(ifname)),
			 -EINVAL);
	assert_int_equal(
		steer_vdev_iface("net_af_xdp0,iface=eth1,xdp_prog=/x.o", ifname, sizeof(ifname)),
		-EINVAL);
	assert_int_equal(
		steer_vdev_iface("net_af_xdp0,iface=averyveryverylongname", ifname, sizeof(ifname)),
		-EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_configs),
		cmocka_unit_test(test_config_lands_in_rodata),
		cmocka_unit_test(test_ipv6_lands_in_rodata),
		cmocka_unit_test(test_vlan_lands_in_rodata),
		cmocka_unit_test(test_two_builds_differ_only_in_config),
		cmocka_unit_test(test_counter_names),
		cmocka_unit_test(test_vdev_iface),
	};

	libbpf_set_print(quiet);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
