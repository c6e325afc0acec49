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
 * 40000..40999.
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
		b[14 + 4 * i] = 0x00;
		b[15 + 4 * i] = 0x07; /* VLAN 7 */
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
static void expect(const struct fixture *fx, const struct frame *f, unsigned int ctr,
		   const char *what)
{
	uint8_t b[2048];
	uint64_t d[STEER_CTR_COUNT];
	bool ours = ctr == STEER_CTR_TO_XSK_REQUEST || ctr == STEER_CTR_TO_XSK_REPLY;
	int act, i;

	act = run(fx, b, build(f, b), d);
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

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static int load(struct fixture *fx)
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

static int setup_empty(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (fx == NULL || load(fx) < 0)
		return -1;
	*state = fx;
	return 0;
}

/* An AF_XDP socket on lo queue 0 (what test runs see as rx_queue_index 0) in xsks_map. */
static int setup_socket(void **state)
{
	struct xsk_socket_config sc = {
		.rx_size = 64,
		.tx_size = 64,
		.bind_flags = XDP_COPY,
		.libbpf_flags = XSK_LIBBPF_FLAGS__INHIBIT_PROG_LOAD,
	};
	struct fixture *fx;
	int fd, key = 0;

	if (setup_empty(state) < 0)
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
	f.frag_off = 0x2000;
	expect(fx, &f, STEER_CTR_PASS_FRAGMENT, "first fragment (MF)");
	f = request(PORT_A);
	f.frag_off = 0x0010;
	expect(fx, &f, STEER_CTR_PASS_FRAGMENT, "later fragment (offset)");
	f = request(PORT_A);
	f.vlans = 1;
	f.frag_off = 0x2000 | 0x0001;
	expect(fx, &f, STEER_CTR_PASS_FRAGMENT, "VLAN-tagged middle fragment");
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

#define WITH_EMPTY_MAP(t) cmocka_unit_test_setup_teardown(t, setup_empty, teardown)
#define WITH_SOCKET(t)	  cmocka_unit_test_setup_teardown(t, setup_socket, teardown)

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
