/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The steering program's decision for crafted frames, run in the kernel with
 * BPF_PROG_TEST_RUN (needs root; skipped otherwise). Each frame must move exactly one
 * decision counter, the expected one. Two fixtures:
 *   - empty xsks_map: the kernel falls back to XDP_PASS for our packets, so the counters
 *     tell "steered" (to_xsk_* plus xsk_missing) from "passed" (pass_*);
 *   - an AF_XDP socket bound to lo's queue 0 in xsks_map: our packets now return
 *     XDP_REDIRECT, everything else still XDP_PASS.
 * Config: router 198.18.0.1, 16 listen ports (11211, 11311, 20002..20015), replies
 * 40000..40999; the IPv6 fixtures add the router's IPv6 address 2001:2::1 (without it IPv6
 * is not steered at all); the VLAN fixtures steer VLAN 7 (or untagged) only; the two-port
 * fixtures are the client port (no reply range) and the node port (node_address 198.18.1.254,
 * the probe port 39999 and the reply range only).
 */
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cmocka.h>
#include <linux/if_ether.h>
#include <xdp/xsk.h>

#include "steer.h"

#define ROUTER	  0xc6120001u /* 198.18.0.1 */
#define OTHER_IP  0xc6120063u /* 198.18.0.99 */
#define PORT_A	  11211
#define PORT_B	  11311
#define PORT_LAST 20015 /* the last of the 16 listen ports; 2..15 are 20002..20015 */
#define RBASE	  40000
#define RCOUNT	  1000

static const uint8_t ROUTER6[16] = {0x20, 0x01, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
static const uint8_t OTHER6[16] = {0x20, 0x01, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
/* ff02::1:ff00:1, the solicited-node group of 2001:2::1 (where Neighbor Solicitations go). */
static const uint8_t SNMC6[16] = {0xff, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0, 0, 1};

#define IP6_HOPOPTS  0
#define IP6_ROUTING  43
#define IP6_FRAGMENT 44
#define IP6_ESP	     50
#define IP6_ICMP     58
#define IP6_DSTOPTS  60

struct fixture {
	struct bpf_object *obj;
	int prog_fd;
	int stats_fd;
	int xsks_fd;
	struct xsk_socket *xsk; /* the shared socket when in xsks_map, else NULL */
};

/*
 * One AF_XDP socket for the whole run: the kernel releases a socket's binding to a queue
 * asynchronously, so a fresh socket per test would find lo's queue 0 still busy.
 */
static struct {
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	void *area;
	struct xsk_ring_prod fq, tx;
	struct xsk_ring_cons cq, rx;
} shared;

#define UMEM_BYTES (64 * 4096)

/* What a frame looks like; build() turns it into bytes. */
struct frame {
	int vlans;	    /* 802.1Q tags before the ethertype: 0, 1 or 2 */
	bool tci_set;	    /* the tags' TCI is tci, else VLAN 7 */
	uint16_t tci;	    /* priority bits and VLAN id */
	uint16_t ethertype; /* after the tags */
	uint8_t version;    /* IPv4 version nibble */
	uint8_t ihl;	    /* 32-bit words */
	int ip_len_delta;   /* added to the true IP total length */
	uint16_t frag_off;  /* host order, flags and offset */
	uint8_t proto;
	uint32_t daddr; /* host order */
	uint16_t dport;
	int udp_len_delta; /* added to the true UDP length */
	size_t payload;	   /* bytes after the UDP header */
	size_t pad;	   /* bytes after the IP datagram (Ethernet padding) */
};

static struct frame request(uint16_t port)
{
	struct frame f = {
		.ethertype = ETH_P_IP,
		.version = 4,
		.ihl = 5,
		.proto = IPPROTO_UDP,
		.daddr = ROUTER,
		.dport = port,
		.payload = 24,
	};
	return f;
}

static size_t build(const struct frame *f, uint8_t *b)
{
	size_t l2 = 14 + 4 * (size_t)f->vlans, ihl = (size_t)f->ihl * 4;
	size_t udp_len = 8 + f->payload, ip_len = (ihl < 20 ? 20 : ihl) + udp_len;
	uint8_t *ip = b + l2, *udp;
	int i;

	memset(b, 0, 2048);
	memcpy(b, "\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02", 12);
	for (i = 0; i < f->vlans; i++) {
		b[12 + 4 * i] = 0x81;
		b[13 + 4 * i] = 0x00;
		b[14 + 4 * i] = (uint8_t)(f->tci_set ? f->tci >> 8 : 0x00);
		b[15 + 4 * i] = (uint8_t)(f->tci_set ? f->tci : 0x07); /* VLAN 7 */
	}
	b[l2 - 2] = (uint8_t)(f->ethertype >> 8);
	b[l2 - 1] = (uint8_t)f->ethertype;
	ip[0] = (uint8_t)(f->version << 4 | f->ihl);
	ip[2] = (uint8_t)((ip_len + (size_t)f->ip_len_delta) >> 8);
	ip[3] = (uint8_t)(ip_len + (size_t)f->ip_len_delta);
	ip[6] = (uint8_t)(f->frag_off >> 8);
	ip[7] = (uint8_t)f->frag_off;
	ip[8] = 64;
	ip[9] = f->proto;
	memcpy(ip + 12, "\xc6\x12\x00\x0a", 4); /* 198.18.0.10 */
	ip[16] = (uint8_t)(f->daddr >> 24);
	ip[17] = (uint8_t)(f->daddr >> 16);
	ip[18] = (uint8_t)(f->daddr >> 8);
	ip[19] = (uint8_t)f->daddr;
	for (i = 20; i < (int)ihl; i++)
		ip[i] = 1; /* NOP options */
	udp = ip + (ihl < 20 ? 20 : ihl);
	udp[0] = 0x9c; /* source port 40000 */
	udp[1] = 0x40;
	udp[2] = (uint8_t)(f->dport >> 8);
	udp[3] = (uint8_t)f->dport;
	udp[4] = (uint8_t)((udp_len + (size_t)f->udp_len_delta) >> 8);
	udp[5] = (uint8_t)(udp_len + (size_t)f->udp_len_delta);
	memcpy(udp + 8, "get key\r\n", 9);
	return l2 + ip_len + f->pad;
}

/* An IPv6 frame; build6() turns it into bytes. */
struct frame6 {
	int vlans;
	uint16_t ethertype; /* ETH_P_IPV6 unless a test lies */
	uint8_t version;    /* version nibble */
	int plen_delta;	    /* added to the true payload length */
	int n_ext;	    /* extension headers before the last next header */
	uint8_t ext[8];	    /* their types */
	uint8_t ext_len[8]; /* their Hdr Ext Len (8-byte units after the first 8) */
	uint8_t next;	    /* what follows them: UDP, TCP, ICMPv6, fragment */
	const uint8_t *daddr;
	uint16_t dport;
	int udp_len_delta;
	size_t payload; /* bytes after the UDP header */
	size_t pad;	/* after the IPv6 packet */
};

static struct frame6 request6(uint16_t port)
{
	struct frame6 f = {
		.ethertype = ETH_P_IPV6,
		.version = 6,
		.next = IPPROTO_UDP,
		.daddr = ROUTER6,
		.dport = port,
		.payload = 24,
	};
	return f;
}

static size_t build6(const struct frame6 *f, uint8_t *b)
{
	size_t l2 = 14 + 4 * (size_t)f->vlans, off = 40, udp_len = 8 + f->payload, plen;
	uint8_t *ip = b + l2, *udp;
	int i;

	memset(b, 0, 2048);
	memcpy(b, "\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02", 12);
	for (i = 0; i < f->vlans; i++)
		memcpy(b + 12 + 4 * i, "\x81\x00\x00\x07", 4);
	b[l2 - 2] = (uint8_t)(f->ethertype >> 8);
	b[l2 - 1] = (uint8_t)f->ethertype;
	ip[0] = (uint8_t)(f->version << 4);
	ip[7] = 64;
	memcpy(ip + 8, "\x20\x01\x00\x02\0\0\0\0\0\0\0\0\0\0\x01\x00", 16); /* 2001:2::100 */
	memcpy(ip + 24, f->daddr, 16);
	ip[6] = f->n_ext ? f->ext[0] : f->next;
	for (i = 0; i < f->n_ext; i++) {
		ip[off] = i + 1 < f->n_ext ? f->ext[i + 1] : f->next;
		ip[off + 1] = f->ext_len[i];
		ip[off + 2] = 1; /* PadN over the rest of the options */
		ip[off + 3] = (uint8_t)(f->ext_len[i] * 8 + 4);
		off += ((size_t)f->ext_len[i] + 1) * 8;
	}
	if (f->next == IP6_FRAGMENT) { /* a fragment header: offset 0, M set, then UDP */
		ip[off] = IPPROTO_UDP;
		ip[off + 3] = 1;
		off += 8;
	}
	udp = ip + off;
	udp[0] = 0x9c; /* source port 40000; checksum left 0 */
	udp[1] = 0x40;
	udp[2] = (uint8_t)(f->dport >> 8);
	udp[3] = (uint8_t)f->dport;
	udp[4] = (uint8_t)((udp_len + (size_t)f->udp_len_delta) >> 8);
	udp[5] = (uint8_t)(udp_len + (size_t)f->udp_len_delta);
	memcpy(udp + 8, "get key\r\n", 9);
	plen = off - 40 + udp_len;
	ip[4] = (uint8_t)((plen + (size_t)f->plen_delta) >> 8);
	ip[5] = (uint8_t)(plen + (size_t)f->plen_delta);
	return l2 + 40 + plen + f->pad;
}

static void read_counters(const struct fixture *fx, uint64_t out[STEER_CTR_COUNT])
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t vals[ncpu > 0 ? ncpu : 1];
	uint32_t k;
	int i;

	assert_true(ncpu > 0);
	for (k = 0; k < STEER_CTR_COUNT; k++) {
		assert_int_equal(bpf_map_lookup_elem(fx->stats_fd, &k, vals), 0);
		out[k] = 0;
		for (i = 0; i < ncpu; i++)
			out[k] += vals[i];
	}
}

/* Run @len bytes of @b; return the XDP action, record counter deltas in @delta. */
static int run(const struct fixture *fx, const uint8_t *b, size_t len,
	       uint64_t delta[STEER_CTR_COUNT])
{
	uint64_t before[STEER_CTR_COUNT], after[STEER_CTR_COUNT];
	uint8_t out[2048];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = b, .data_size_in = (uint32_t)len,
		    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);
	int rc, i;

	read_counters(fx, before);
	rc = bpf_prog_test_run_opts(fx->prog_fd, &o);
	if (rc < 0)
		return rc;
	read_counters(fx, after);
	for (i = 0; i < STEER_CTR_COUNT; i++)
		delta[i] = after[i] - before[i];
	return (int)o.retval;
}

/* @f must move counter @ctr (and, for to_xsk_*, xsk_missing unless a socket is bound). */
static void expect_bytes(const struct fixture *fx, const uint8_t *b, size_t len, unsigned int ctr,
			 const char *what)
{
	uint64_t d[STEER_CTR_COUNT];
	bool ours = ctr == STEER_CTR_TO_XSK_REQUEST || ctr == STEER_CTR_TO_XSK_REPLY ||
		    ctr == STEER_CTR_TO_XSK_FRAGMENT;
	int act, i;

	act = run(fx, b, len, d);
	for (i = 0; i < STEER_CTR_COUNT; i++) {
		uint64_t want = (unsigned int)i == ctr;

		if (i == STEER_CTR_XSK_MISSING)
			want = ours && fx->xsk == NULL;
		if (d[i] != want) {
			int j;

			for (j = 0; j < STEER_CTR_COUNT; j++)
				fprintf(stderr, "# %s %llu\n", steer_ctr_name((unsigned int)j),
					(unsigned long long)d[j]);
			fail_msg("%s: counter %s moved by %llu, expected %llu", what,
				 steer_ctr_name((unsigned int)i), (unsigned long long)d[i],
				 (unsigned long long)want);
		}
	}
	if (act != (ours && fx->xsk ? XDP_REDIRECT : XDP_PASS))
		fail_msg("%s: action %d", what, act);
}

static void expect(const struct fixture *fx, const struct frame *f, unsigned int ctr,
		   const char *what)
{
	uint8_t b[2048];

	expect_bytes(fx, b, build(f, b), ctr, what);
}

static void expect6(const struct fixture *fx, const struct frame6 *f, unsigned int ctr,
		    const char *what)
{
	uint8_t b[2048];

	expect_bytes(fx, b, build6(f, b), ctr, what);
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* The program's configuration in a fixture: one port, its variants for a VLAN, or one of two
 * ports (the client port: requests only; the node port: replies and probe answers to
 * NODE_IP only). */
enum variant {
	ONE_PORT,
	ONE_PORT6,
	VLAN_7,
	VLAN_0,
	CLIENT_PORT,
	NODE_PORT,
	IPV6_ONLY,
};

#define NODE_IP	   0xc61201feu /* 198.18.1.254, node_address */
#define PROBE_PORT (RBASE - 1)

static void tweak(struct steer_config *c, enum variant v)
{
	switch (v) {
	case ONE_PORT6:
		inet_from_v6(&c->router_ip6, ROUTER6);
		break;
	case VLAN_7:
	case VLAN_0:
		c->vlan_fixed = true;
		c->vlan_id = v == VLAN_7 ? 7 : 0;
		break;
	case CLIENT_PORT:
		c->reply_port_base = 0;
		c->reply_port_count = 0;
		break;
	case NODE_PORT:
		c->router_ip = htonl(NODE_IP);
		c->listen_ports[0] = PROBE_PORT;
		c->n_listen_ports = 1;
		break;
	case IPV6_ONLY:
		c->router_ip = 0;
		inet_from_v6(&c->router_ip6, ROUTER6);
		break;
	case ONE_PORT:
		break;
	}
}

static int load(struct fixture *fx, enum variant v)
{
	struct steer_config c = {
		.router_ip = htonl(ROUTER),
		.listen_ports = {PORT_A, PORT_B},
		.n_listen_ports = STEER_MAX_LISTEN_PORTS,
		.reply_port_base = RBASE,
		.reply_port_count = RCOUNT,
	};
	char err[256];
	void *img;
	size_t len;
	unsigned int i;

	for (i = 2; i < STEER_MAX_LISTEN_PORTS; i++)
		c.listen_ports[i] = (uint16_t)(PORT_LAST - (STEER_MAX_LISTEN_PORTS - 1) + i);
	tweak(&c, v);
	if (steer_object_build(&c, &img, &len, err, sizeof(err)) < 0) {
		fprintf(stderr, "# %s\n", err);
		return -1;
	}
	fx->obj = bpf_object__open_mem(img, len, NULL);
	free(img);
	if (fx->obj == NULL || bpf_object__load(fx->obj) < 0)
		return -1;
	fx->prog_fd = bpf_program__fd(bpf_object__next_program(fx->obj, NULL));
	fx->stats_fd = bpf_map__fd(bpf_object__find_map_by_name(fx->obj, STEER_STATS_MAP_NAME));
	fx->xsks_fd = bpf_map__fd(bpf_object__find_map_by_name(fx->obj, STEER_XSKS_MAP_NAME));
	return fx->prog_fd >= 0 && fx->stats_fd >= 0 && fx->xsks_fd >= 0 ? 0 : -1;
}

static int setup_variant(void **state, enum variant v)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (fx == NULL || load(fx, v) < 0)
		return -1;
	*state = fx;
	return 0;
}

static int setup_empty(void **state)
{
	return setup_variant(state, ONE_PORT);
}

static int setup_empty6(void **state)
{
	return setup_variant(state, ONE_PORT6);
}

static int setup_vlan7(void **state)
{
	return setup_variant(state, VLAN_7);
}

static int setup_vlan0(void **state)
{
	return setup_variant(state, VLAN_0);
}

static int setup_client_port(void **state)
{
	return setup_variant(state, CLIENT_PORT);
}

static int setup_node_port(void **state)
{
	return setup_variant(state, NODE_PORT);
}

static int setup_ipv6_only(void **state)
{
	return setup_variant(state, IPV6_ONLY);
}

/* An AF_XDP socket on lo queue 0 (what test runs see as rx_queue_index 0) in xsks_map. */
static int setup_socket_family(void **state, bool ipv6)
{
	struct xsk_socket_config sc = {
		.rx_size = 64,
		.tx_size = 64,
		.bind_flags = XDP_COPY,
		.libbpf_flags = XSK_LIBBPF_FLAGS__INHIBIT_PROG_LOAD,
	};
	struct fixture *fx;
	int fd, key = 0;

	if (setup_variant(state, ipv6 ? ONE_PORT6 : ONE_PORT) < 0)
		return -1;
	fx = *state;
	if (shared.xsk == NULL) {
		shared.area = mmap(NULL, UMEM_BYTES, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (shared.area == MAP_FAILED ||
		    xsk_umem__create(&shared.umem, shared.area, UMEM_BYTES, &shared.fq, &shared.cq,
				     NULL) < 0 ||
		    xsk_socket__create(&shared.xsk, "lo", 0, shared.umem, &shared.rx, &shared.tx,
				       &sc) < 0) {
			fprintf(stderr, "# cannot create an AF_XDP socket on lo: %s\n",
				strerror(errno));
			return -1;
		}
	}
	fx->xsk = shared.xsk;
	fd = xsk_socket__fd(shared.xsk);
	return bpf_map_update_elem(fx->xsks_fd, &key, &fd, 0) < 0 ? -1 : 0;
}

static int setup_socket(void **state)
{
	return setup_socket_family(state, false);
}

static int setup_socket6(void **state)
{
	return setup_socket_family(state, true);
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	if (fx == NULL)
		return 0;
	bpf_object__close(fx->obj);
	free(fx);
	return 0;
}

static void free_shared(void)
{
	if (shared.xsk)
		xsk_socket__delete(shared.xsk);
	if (shared.umem)
		xsk_umem__delete(shared.umem);
	if (shared.area && shared.area != MAP_FAILED)
		munmap(shared.area, UMEM_BYTES);
}

static void test_ours(void **state)
{
	const struct fixture *fx = *state;
	struct frame f;

	f = request(PORT_A);
	expect(fx, &f, STEER_CTR_TO_XSK_REQUEST, "request to first listen port");
	f = request(PORT_B);
	expect(fx, &f, STEER_CTR_TO_XSK_REQUEST, "request to second listen port");
	f = request(PORT_LAST);
	expect(fx, &f, STEER_CTR_TO_XSK_REQUEST, "request to the last of 16 listen ports");
	f = request(RBASE);
	expect(fx, &f, STEER_CTR_TO_XSK_REPLY, "reply to first reply port");
	f = request(RBASE + RCOUNT - 1);
	expect(fx, &f, STEER_CTR_TO_XSK_REPLY, "reply to last reply port");
	f = request(PORT_A);
	f.vlans = 1;
	expect(fx, &f, STEER_CTR_TO_XSK_REQUEST, "VLAN-tagged request");
	f = request(RBASE + 5);
	f.vlans = 1;
	expect(fx, &f, STEER_CTR_TO_XSK_REPLY, "VLAN-tagged reply");
	f = request(PORT_A);
	f.ihl = 15;
	expect(fx, &f, STEER_CTR_TO_XSK_REQUEST, "request with 40 bytes of IP options");
	f = request(PORT_A);
	f.pad = 18;
	expect(fx, &f, STEER_CTR_TO_XSK_REQUEST, "request with Ethernet padding");
	f = request(PORT_A);
	f.frag_off = 0x4000;
	expect(fx, &f, STEER_CTR_TO_XSK_REQUEST, "request with DF set");
	f = request(PORT_A);
	f.payload = 1400;
	expect(fx, &f, STEER_CTR_TO_XSK_REQUEST, "1400-byte request");
	f = request(PORT_A);
	f.payload = 0;
	expect(fx, &f, STEER_CTR_TO_XSK_REQUEST, "empty UDP payload");
}

static void test_not_ours(void **state)
{
	const struct fixture *fx = *state;
	struct frame f;

	f = request(PORT_A);
	f.ethertype = ETH_P_ARP;
	expect(fx, &f, STEER_CTR_PASS_NOT_IPV4, "ARP");
	f = request(PORT_A);
	f.ethertype = ETH_P_IPV6;
	expect(fx, &f, STEER_CTR_PASS_NOT_IPV4, "IPv6");
	f = request(PORT_A);
	f.vlans = 1;
	f.ethertype = ETH_P_ARP;
	expect(fx, &f, STEER_CTR_PASS_NOT_IPV4, "VLAN-tagged ARP");
	f = request(PORT_A);
	f.vlans = 2;
	expect(fx, &f, STEER_CTR_PASS_NOT_IPV4, "two VLAN tags");
	f = request(PORT_A);
	f.proto = IPPROTO_ICMP;
	expect(fx, &f, STEER_CTR_PASS_NOT_UDP, "ICMP");
	f = request(PORT_A);
	f.proto = IPPROTO_TCP;
	expect(fx, &f, STEER_CTR_PASS_NOT_UDP, "TCP to a listen port");
	f = request(PORT_A);
	f.vlans = 1;
	f.proto = IPPROTO_TCP;
	expect(fx, &f, STEER_CTR_PASS_NOT_UDP, "VLAN-tagged TCP");
	f = request(PORT_A);
	f.daddr = OTHER_IP;
	expect(fx, &f, STEER_CTR_PASS_OTHER_ADDR, "request to another address");
	f = request(PORT_A + 1);
	expect(fx, &f, STEER_CTR_PASS_OTHER_PORT, "UDP to another port");
	f = request(PORT_LAST + 1);
	expect(fx, &f, STEER_CTR_PASS_OTHER_PORT, "UDP one past the last listen port");
	f = request(53);
	expect(fx, &f, STEER_CTR_PASS_OTHER_PORT, "DNS");
	f = request(RBASE - 1);
	expect(fx, &f, STEER_CTR_PASS_OTHER_PORT, "port below the reply range");
	f = request(RBASE + RCOUNT);
	expect(fx, &f, STEER_CTR_PASS_OTHER_PORT, "port above the reply range");
	f = request(RBASE + RCOUNT);
	f.vlans = 1;
	expect(fx, &f, STEER_CTR_PASS_OTHER_PORT, "VLAN-tagged, port above the reply range");
}

static void test_fragments_and_malformed(void **state)
{
	const struct fixture *fx = *state;
	struct frame f;

	f = request(PORT_A);
	/* UDP fragments to the router are ringway's to reassemble (only the first has a port). */
	f.frag_off = 0x2000;
	expect(fx, &f, STEER_CTR_TO_XSK_FRAGMENT, "first fragment (MF)");
	f = request(PORT_A);
	f.frag_off = 0x0010;
	expect(fx, &f, STEER_CTR_TO_XSK_FRAGMENT, "later fragment (offset)");
	f = request(PORT_A);
	f.vlans = 1;
	f.frag_off = 0x2000 | 0x0001;
	expect(fx, &f, STEER_CTR_TO_XSK_FRAGMENT, "VLAN-tagged middle fragment");
	/* Others stay the kernel's: a TCP fragment, a UDP fragment to another address. */
	f = request(PORT_A);
	f.frag_off = 0x2000;
	f.proto = IPPROTO_TCP;
	expect(fx, &f, STEER_CTR_PASS_FRAGMENT, "TCP fragment");
	f = request(PORT_A);
	f.version = 6;
	expect(fx, &f, STEER_CTR_PASS_BAD_IPV4, "IP version 6 in an IPv4 ethertype");
	f = request(PORT_A);
	f.ihl = 4;
	expect(fx, &f, STEER_CTR_PASS_BAD_IPV4, "IHL 4");
	f = request(PORT_A);
	f.ip_len_delta = 1;
	expect(fx, &f, STEER_CTR_PASS_BAD_IPV4, "IP length one byte past the frame");
	f = request(PORT_A);
	f.ip_len_delta = -(int)(8 + 24 + 1);
	expect(fx, &f, STEER_CTR_PASS_BAD_IPV4, "IP length shorter than its header");
	f = request(PORT_A);
	f.ip_len_delta = -(int)(24 + 4);
	expect(fx, &f, STEER_CTR_PASS_BAD_UDP, "IP length ends inside the UDP header");
	f = request(PORT_A);
	f.udp_len_delta = -(int)(24 + 1);
	expect(fx, &f, STEER_CTR_PASS_BAD_UDP, "UDP length 7");
	f = request(PORT_A);
	f.udp_len_delta = 1;
	expect(fx, &f, STEER_CTR_PASS_BAD_UDP, "UDP length past the IP payload");
	f = request(RBASE);
	f.udp_len_delta = 100;
	expect(fx, &f, STEER_CTR_PASS_BAD_UDP, "reply with a lying UDP length");
}

/* Every prefix of a request's headers: the kernel refuses < 14 bytes, the rest pass. */
static void truncate_all(const struct fixture *fx, int vlans)
{
	struct frame f = request(PORT_A);
	size_t full, hdr = 14 + 4 * (size_t)vlans + 20 + 8, len;
	uint8_t b[2048];
	uint64_t d[STEER_CTR_COUNT];
	int act, i;

	f.vlans = vlans;
	full = build(&f, b);
	for (len = 0; len <= hdr + 8; len++) {
		uint64_t moved = 0;

		act = run(fx, b, len, d);
		if (len < ETH_HLEN) {
			/* BPF_PROG_TEST_RUN rejects frames shorter than an Ethernet header. */
			assert_int_equal(act, -EINVAL);
			continue;
		}
		assert_int_equal(act, XDP_PASS);
		for (i = 0; i < STEER_CTR_COUNT; i++)
			moved += d[i];
		if (moved != 1 || d[STEER_CTR_TO_XSK_REQUEST] != 0)
			fail_msg("%zu of %zu bytes (vlans %d): steered or counted %llu times", len,
				 full, vlans, (unsigned long long)moved);
		if (len < 14 + 4 * (size_t)vlans)
			assert_int_equal(d[STEER_CTR_PASS_SHORT_ETH], 1);
		else
			assert_int_equal(d[STEER_CTR_PASS_BAD_IPV4], 1); /* IP length > frame */
	}
	assert_int_equal(run(fx, b, full, d), fx->xsk ? XDP_REDIRECT : XDP_PASS);
	assert_int_equal(d[STEER_CTR_TO_XSK_REQUEST], 1);
}

static void test_truncated(void **state)
{
	truncate_all(*state, 0);
	truncate_all(*state, 1);
}

/* Extension headers @types (lengths @lens) before UDP. */
static struct frame6 with_ext(uint16_t port, int n, const uint8_t *types, const uint8_t *lens)
{
	struct frame6 f = request6(port);

	f.n_ext = n;
	memcpy(f.ext, types, (size_t)n);
	memcpy(f.ext_len, lens, (size_t)n);
	return f;
}

static void test_ours6(void **state)
{
	static const uint8_t four[4] = {IP6_HOPOPTS, IP6_DSTOPTS, IP6_ROUTING, IP6_DSTOPTS};
	static const uint8_t lens[4] = {0, 1, 2, 127}; /* the last: 1,024 bytes */
	const struct fixture *fx = *state;
	struct frame6 f;
	struct frame v4;

	f = request6(PORT_A);
	expect6(fx, &f, STEER_CTR_TO_XSK_REQUEST, "IPv6 request to the first listen port");
	f = request6(PORT_LAST);
	expect6(fx, &f, STEER_CTR_TO_XSK_REQUEST, "IPv6 request to the last listen port");
	f = request6(RBASE);
	expect6(fx, &f, STEER_CTR_TO_XSK_REPLY, "IPv6 reply to the first reply port");
	f = request6(RBASE + RCOUNT - 1);
	expect6(fx, &f, STEER_CTR_TO_XSK_REPLY, "IPv6 reply to the last reply port");
	f = request6(PORT_A);
	f.vlans = 1;
	expect6(fx, &f, STEER_CTR_TO_XSK_REQUEST, "VLAN-tagged IPv6 request");
	f = request6(PORT_A);
	f.pad = 18;
	expect6(fx, &f, STEER_CTR_TO_XSK_REQUEST, "IPv6 request with Ethernet padding");
	f = request6(PORT_A);
	f.payload = 1400;
	expect6(fx, &f, STEER_CTR_TO_XSK_REQUEST, "1400-byte IPv6 request");
	f = request6(PORT_A);
	f.payload = 0;
	expect6(fx, &f, STEER_CTR_TO_XSK_REQUEST, "empty UDP payload over IPv6");
	/* Checksum 0 (build6 leaves it so) is the router's to drop under its own reason. */
	f = with_ext(PORT_A, 1, four, lens);
	expect6(fx, &f, STEER_CTR_TO_XSK_REQUEST, "hop-by-hop header, then UDP");
	f = with_ext(RBASE, 2, four, lens);
	expect6(fx, &f, STEER_CTR_TO_XSK_REPLY, "hop-by-hop + destination options, then UDP");
	f = with_ext(PORT_A, 3, four, lens);
	expect6(fx, &f, STEER_CTR_TO_XSK_REQUEST, "three extension headers, then UDP");
	f = with_ext(PORT_A, 4, four, lens);
	f.payload = 16;
	expect6(fx, &f, STEER_CTR_TO_XSK_REQUEST, "four extension headers (the last 1 KB)");
	v4 = request(PORT_A);
	expect(fx, &v4, STEER_CTR_TO_XSK_REQUEST, "IPv4 request beside IPv6");
}

static void test_not_ours6(void **state)
{
	const struct fixture *fx = *state;
	struct frame6 f;

	f = request6(PORT_A);
	f.daddr = OTHER6;
	expect6(fx, &f, STEER_CTR_PASS_OTHER_ADDR, "IPv6 request to another address");
	f = request6(PORT_A);
	f.daddr = SNMC6;
	f.next = IP6_ICMP;
	expect6(fx, &f, STEER_CTR_PASS_OTHER_ADDR, "Neighbor Solicitation (solicited-node group)");
	f = request6(PORT_A);
	f.next = IP6_ICMP;
	expect6(fx, &f, STEER_CTR_PASS_NOT_UDP, "ICMPv6 to the router (echo, unicast NS)");
	f = request6(PORT_A);
	f.next = IPPROTO_TCP;
	expect6(fx, &f, STEER_CTR_PASS_NOT_UDP, "TCP over IPv6 to a listen port");
	f = request6(PORT_A);
	f.next = IP6_ESP;
	expect6(fx, &f, STEER_CTR_PASS_NOT_UDP, "ESP");
	f = request6(PORT_A + 1);
	expect6(fx, &f, STEER_CTR_PASS_OTHER_PORT, "IPv6 UDP to another port");
	f = request6(RBASE - 1);
	expect6(fx, &f, STEER_CTR_PASS_OTHER_PORT, "IPv6 port below the reply range");
	f = request6(RBASE + RCOUNT);
	f.vlans = 1;
	expect6(fx, &f, STEER_CTR_PASS_OTHER_PORT, "VLAN-tagged IPv6, above the reply range");
	f = request6(PORT_A);
	f.vlans = 2;
	expect6(fx, &f, STEER_CTR_PASS_NOT_IPV4, "IPv6 under two VLAN tags");
}

static void test_fragments_and_malformed6(void **state)
{
	static const uint8_t hbh[5] = {IP6_HOPOPTS, IP6_DSTOPTS, IP6_DSTOPTS, IP6_DSTOPTS,
				       IP6_DSTOPTS};
	static const uint8_t zero[5] = {0};
	const struct fixture *fx = *state;
	struct frame6 f;

	f = request6(PORT_A);
	f.next = IP6_FRAGMENT;
	expect6(fx, &f, STEER_CTR_TO_XSK_FRAGMENT, "UDP fragment header right after IPv6");
	f = with_ext(PORT_A, 1, hbh, zero);
	f.next = IP6_FRAGMENT;
	expect6(fx, &f, STEER_CTR_PASS_FRAGMENT, "fragment header after hop-by-hop");
	f = with_ext(PORT_A, 5, hbh, zero);
	expect6(fx, &f, STEER_CTR_PASS_IPV6_EXT, "five extension headers");
	f = with_ext(PORT_A, 1, hbh, zero);
	f.ext_len[0] = 10; /* claims 88 bytes; the payload holds 8 + 32 */
	f.payload = 0;
	f.pad = 100; /* the frame is long enough: the payload length is what bounds it */
	{
		uint8_t b[2048];
		size_t len = build6(&f, b);

		/* build6 sized the payload from the claim: shrink it back to 8 + 8 + 0. */
		b[14 + 4] = 0;
		b[14 + 5] = 16;
		expect_bytes(fx, b, len, STEER_CTR_PASS_BAD_IPV6,
			     "extension header longer than the payload");
	}
	f = request6(PORT_A);
	f.plen_delta = 1;
	expect6(fx, &f, STEER_CTR_PASS_BAD_IPV6, "payload length one byte past the frame");
	f = request6(PORT_A);
	f.version = 4;
	expect6(fx, &f, STEER_CTR_PASS_BAD_IPV6, "IP version 4 in an IPv6 ethertype");
	f = request6(PORT_A);
	f.plen_delta = -(int)(24 + 4);
	expect6(fx, &f, STEER_CTR_PASS_BAD_UDP, "payload length ends inside the UDP header");
	f = request6(PORT_A);
	f.udp_len_delta = -(int)(24 + 1);
	expect6(fx, &f, STEER_CTR_PASS_BAD_UDP, "IPv6: UDP length 7");
	f = request6(RBASE);
	f.udp_len_delta = 1;
	expect6(fx, &f, STEER_CTR_PASS_BAD_UDP, "IPv6: UDP length past the payload");
}

/* Every prefix of an IPv6 request (with a hop-by-hop header): nothing is steered. */
static void truncate_all6(const struct fixture *fx, int vlans)
{
	static const uint8_t hbh[1] = {IP6_HOPOPTS}, zero[1] = {0};
	struct frame6 f = with_ext(PORT_A, 1, hbh, zero);
	size_t full, l2 = 14 + 4 * (size_t)vlans, len;
	uint8_t b[2048];
	uint64_t d[STEER_CTR_COUNT];
	int act, i;

	f.vlans = vlans;
	full = build6(&f, b);
	for (len = ETH_HLEN; len < full; len++) {
		uint64_t moved = 0;

		act = run(fx, b, len, d);
		assert_int_equal(act, XDP_PASS);
		for (i = 0; i < STEER_CTR_COUNT; i++)
			moved += d[i];
		if (moved != 1 ||
		    d[len < l2 ? STEER_CTR_PASS_SHORT_ETH : STEER_CTR_PASS_BAD_IPV6] != 1)
			fail_msg("IPv6: %zu of %zu bytes (vlans %d): not counted as truncated", len,
				 full, vlans);
	}
	assert_int_equal(run(fx, b, full, d), fx->xsk ? XDP_REDIRECT : XDP_PASS);
	assert_int_equal(d[STEER_CTR_TO_XSK_REQUEST], 1);
}

static void test_truncated6(void **state)
{
	truncate_all6(*state, 0);
	truncate_all6(*state, 1);
}

/* Without an IPv6 address configured, even a perfect IPv6 request is not ours. */
static void test_ipv6_unconfigured(void **state)
{
	const struct fixture *fx = *state;
	struct frame6 f = request6(PORT_A);

	expect6(fx, &f, STEER_CTR_PASS_NOT_IPV4, "IPv6 request, no IPv6 address configured");
}

/* A request or reply whose one tag has TCI @p tci (@p vlans 0: untagged). */
static struct frame tagged(uint16_t port, int vlans, uint16_t tci)
{
	struct frame f = request(port);

	f.vlans = vlans;
	f.tci_set = true;
	f.tci = tci;
	return f;
}

/* vlan = 7: VLAN 7 only, whatever the priority bits; everything else is the kernel's. */
static void test_vlan7(void **state)
{
	const struct fixture *fx = *state;
	struct frame f;
	uint8_t b[2048];

	f = tagged(PORT_A, 1, 7);
	expect(fx, &f, STEER_CTR_TO_XSK_REQUEST, "request on VLAN 7");
	f = tagged(RBASE + 1, 1, 7);
	expect(fx, &f, STEER_CTR_TO_XSK_REPLY, "reply on VLAN 7");
	f = tagged(PORT_A, 1, 0xe007);
	expect(fx, &f, STEER_CTR_TO_XSK_REQUEST, "request on VLAN 7, priority 7, DEI 0");
	f = tagged(PORT_A, 1, 0x1007);
	expect(fx, &f, STEER_CTR_TO_XSK_REQUEST, "request on VLAN 7 with DEI set");
	f = tagged(PORT_A, 0, 0);
	expect(fx, &f, STEER_CTR_PASS_OTHER_VLAN, "untagged request");
	f = tagged(PORT_A, 1, 0);
	expect(fx, &f, STEER_CTR_PASS_OTHER_VLAN, "priority-tagged request (VLAN 0)");
	f = tagged(PORT_A, 1, 8);
	expect(fx, &f, STEER_CTR_PASS_OTHER_VLAN, "request on VLAN 8");
	f = tagged(RBASE + 1, 1, 0x0fff);
	expect(fx, &f, STEER_CTR_PASS_OTHER_VLAN, "reply on VLAN 4095");
	f = tagged(PORT_A, 1, 0x0107);
	expect(fx, &f, STEER_CTR_PASS_OTHER_VLAN, "request on VLAN 263 (7 in the low byte)");
	f = tagged(PORT_A, 1, 7);
	f.ethertype = ETH_P_ARP;
	expect(fx, &f, STEER_CTR_PASS_NOT_IPV4, "ARP on VLAN 7 (the kernel's)");
	f = tagged(PORT_A, 1, 7);
	f.proto = IPPROTO_ICMP;
	expect(fx, &f, STEER_CTR_PASS_NOT_UDP, "ICMP on VLAN 7 (the kernel's)");
	f = tagged(PORT_A, 2, 7);
	expect(fx, &f, STEER_CTR_PASS_NOT_IPV4, "two tags, the outer one VLAN 7");
	f = tagged(PORT_A, 1, 7);
	f.daddr = OTHER_IP;
	expect(fx, &f, STEER_CTR_PASS_OTHER_ADDR, "VLAN 7, another address");
	f = tagged(PORT_A, 1, 7);
	expect_bytes(fx, b, build(&f, b) > 17 ? 17 : 0, STEER_CTR_PASS_SHORT_ETH, "tag cut short");
}

/* vlan = 0: untagged or priority-tagged only. */
static void test_vlan0(void **state)
{
	const struct fixture *fx = *state;
	struct frame f;

	f = tagged(PORT_A, 0, 0);
	expect(fx, &f, STEER_CTR_TO_XSK_REQUEST, "untagged request");
	f = tagged(RBASE, 0, 0);
	expect(fx, &f, STEER_CTR_TO_XSK_REPLY, "untagged reply");
	f = tagged(PORT_A, 1, 0xa000);
	expect(fx, &f, STEER_CTR_TO_XSK_REQUEST, "priority-tagged request (priority 5)");
	f = tagged(PORT_A, 1, 7);
	expect(fx, &f, STEER_CTR_PASS_OTHER_VLAN, "request on VLAN 7");
	f = tagged(PORT_A, 0, 0);
	f.ethertype = ETH_P_ARP;
	expect(fx, &f, STEER_CTR_PASS_NOT_IPV4, "untagged ARP");
}

/* Two ports, the client port: requests to the router address, nothing in the reply range. */
static void test_client_port(void **state)
{
	const struct fixture *fx = *state;
	struct frame f;

	f = request(PORT_A);
	expect(fx, &f, STEER_CTR_TO_XSK_REQUEST, "client port: request");
	f = request(RBASE);
	expect(fx, &f, STEER_CTR_PASS_OTHER_PORT, "client port: a \"reply\" is not ours");
	f = request(PROBE_PORT);
	expect(fx, &f, STEER_CTR_PASS_OTHER_PORT, "client port: the probe port is not ours");
	f = request(PORT_A);
	f.daddr = NODE_IP;
	expect(fx, &f, STEER_CTR_PASS_OTHER_ADDR, "client port: request to node_address");
}

/* Two ports, the node port: replies and probe answers to node_address only. */
static void test_node_port(void **state)
{
	const struct fixture *fx = *state;
	struct frame f;

	f = request(RBASE);
	f.daddr = NODE_IP;
	expect(fx, &f, STEER_CTR_TO_XSK_REPLY, "node port: reply to node_address");
	f = request(RBASE + RCOUNT - 1);
	f.daddr = NODE_IP;
	expect(fx, &f, STEER_CTR_TO_XSK_REPLY, "node port: reply to the last reply port");
	f = request(PROBE_PORT);
	f.daddr = NODE_IP;
	expect(fx, &f, STEER_CTR_TO_XSK_REQUEST, "node port: probe answer");
	f = request(PORT_A);
	f.daddr = NODE_IP;
	expect(fx, &f, STEER_CTR_PASS_OTHER_PORT, "node port: a request is not ours");
	f = request(RBASE);
	expect(fx, &f, STEER_CTR_PASS_OTHER_ADDR, "node port: reply to the client address");
	f = request(RBASE);
	f.daddr = NODE_IP;
	f.ethertype = ETH_P_ARP;
	expect(fx, &f, STEER_CTR_PASS_NOT_IPV4, "node port: ARP (the kernel's)");
}

/* An IPv6-only router (router_ip 0): IPv6 is steered, nothing IPv4 is (not to the address an
 * IPv4 router would have, not to 0.0.0.0): the kernel gets it. */
static void test_ipv6_only(void **state)
{
	const struct fixture *fx = *state;
	struct frame6 f6;
	struct frame f;

	f6 = request6(PORT_A);
	expect6(fx, &f6, STEER_CTR_TO_XSK_REQUEST, "IPv6-only: IPv6 request");
	f6 = request6(RBASE);
	expect6(fx, &f6, STEER_CTR_TO_XSK_REPLY, "IPv6-only: IPv6 reply");
	f = request(PORT_A);
	expect(fx, &f, STEER_CTR_PASS_OTHER_ADDR, "IPv6-only: IPv4 request");
	f = request(RBASE);
	f.daddr = 0;
	expect(fx, &f, STEER_CTR_PASS_OTHER_ADDR, "IPv6-only: IPv4 reply to 0.0.0.0");
	f = request(PORT_A);
	f.daddr = 0;
	expect(fx, &f, STEER_CTR_PASS_OTHER_ADDR, "IPv6-only: IPv4 request to 0.0.0.0");
}

static int lo_up(void)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = -1;

	if (fd < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
	return rc;
}

#define WITH_EMPTY_MAP(t)  cmocka_unit_test_setup_teardown(t, setup_empty, teardown)
#define WITH_SOCKET(t)	   cmocka_unit_test_setup_teardown(t, setup_socket, teardown)
#define WITH_EMPTY_MAP6(t) cmocka_unit_test_setup_teardown(t, setup_empty6, teardown)
#define WITH_SOCKET6(t)	   cmocka_unit_test_setup_teardown(t, setup_socket6, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		WITH_EMPTY_MAP(test_ours),
		WITH_EMPTY_MAP(test_not_ours),
		WITH_EMPTY_MAP(test_fragments_and_malformed),
		WITH_EMPTY_MAP(test_truncated),
		WITH_SOCKET(test_ours),
		WITH_SOCKET(test_not_ours),
		WITH_SOCKET(test_fragments_and_malformed),
		WITH_SOCKET(test_truncated),
		WITH_EMPTY_MAP(test_ipv6_unconfigured),
		WITH_EMPTY_MAP6(test_ours),
		WITH_EMPTY_MAP6(test_ours6),
		WITH_EMPTY_MAP6(test_not_ours6),
		WITH_EMPTY_MAP6(test_fragments_and_malformed6),
		WITH_EMPTY_MAP6(test_truncated6),
		WITH_SOCKET6(test_ours6),
		WITH_SOCKET6(test_not_ours6),
		WITH_SOCKET6(test_fragments_and_malformed6),
		WITH_SOCKET6(test_truncated6),
		cmocka_unit_test_setup_teardown(test_vlan7, setup_vlan7, teardown),
		cmocka_unit_test_setup_teardown(test_vlan0, setup_vlan0, teardown),
		cmocka_unit_test_setup_teardown(test_client_port, setup_client_port, teardown),
		cmocka_unit_test_setup_teardown(test_node_port, setup_node_port, teardown),
		cmocka_unit_test_setup_teardown(test_ipv6_only, setup_ipv6_only, teardown),
	};
	int rc;

	if (geteuid() != 0) {
		printf("1..0 # SKIP needs root for BPF_PROG_TEST_RUN\n");
		return 77;
	}
	/* A private lo: another run of this test (another build dir) binds its own queue 0. */
	if (unshare(CLONE_NEWNET) != 0 || lo_up() != 0) {
		printf("1..0 # SKIP cannot make a private network namespace: %s\n",
		       strerror(errno));
		return 77;
	}
	libbpf_set_print(quiet);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	free_shared();
	return rc;
}
