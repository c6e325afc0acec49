/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The TX/slot layer (dp_tx.h, dp_tx.c) on its own: the datagram checksum every request and
 * reply is checked with, against DPDK's rte_raw_cksum() over every length and alignment; the
 * divisibility test that judges a sum (dp_csum_verifies); and the outcome accounting of a TX
 * burst the queue takes only part of.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include <rte_ethdev.h>
#include <rte_ip.h>

#include "dp_test.h"
#include "dp_tx.h"

/* The ones' complement sum of @p len bytes at @p p plus @p start, 16 bits at a time (RFC
 * 1071), folded to the one value in 0..0xffff that is 0 only for an all-zero sum. */
static uint16_t ref_sum(const uint8_t *p, size_t len, uint64_t start)
{
	uint64_t s = (start & 0xffffffff) + (start >> 32);

	for (size_t i = 0; i < len; i++)
		s += (uint64_t)p[i] << (i & 1 ? 8 : 0);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* Every length 0..600 (the chain alone, after one or more 64-byte blocks) at every offset 0..7 from
 * an 8-byte boundary, in a buffer that ends exactly there (valgrind and ASan see a read past it),
 * random bytes and all-ones bytes (the sums that wrap most), with and without a partial sum to
 * start from. */
static void test_csum_sum_all_lengths(void **state)
{
	static const uint64_t starts[] = {0, 0x11, UINT64_MAX - 3, 0xffff0000ffff};

	(void)state;
	srand(17);
	for (uint32_t len = 0; len <= 600; len++) {
		for (uint32_t off = 0; off < 8; off++) {
			for (int fill = 0; fill < 2; fill++) {
				uint8_t *mem = malloc(off + len + (off + len == 0));
				uint8_t *p = mem + off;

				assert_non_null(mem);
				for (uint32_t i = 0; i < len; i++)
					p[i] = fill ? 0xff : (uint8_t)rand();
				assert_int_equal(dp_csum_sum(p, len, 0), rte_raw_cksum(p, len));
				for (size_t k = 0; k < RTE_DIM(starts); k++)
					assert_int_equal(dp_csum_sum(p, len, starts[k]),
							 ref_sum(p, len, starts[k]));
				free(mem);
			}
		}
	}
}

/* All zero: 0, the one sum that folds to 0 (a zero checksum field means "none"). */
static void test_csum_sum_zero(void **state)
{
	uint8_t z[160] = {0};

	(void)state;
	for (uint32_t len = 0; len <= sizeof(z); len++)
		assert_int_equal(dp_csum_sum(z, len, 0), 0);
	assert_int_equal(dp_csum_sum(z, 40, 0xffff), 0xffff);
}

/* dp_csum_verifies() says yes exactly when the sum folds to 0xffff: on the sums themselves
 * (0, multiples of 0xffff up to 2^64 - 1, their neighbours), then on every length 2..600 at
 * every offset with a checksum word put in (yes) and each of its bits flipped (no), against
 * ref_sum(). */
static void test_csum_verifies(void **state)
{
	static const uint64_t starts[] = {0, 0x11, UINT64_MAX - 3};

	(void)state;
	assert_false(dp_csum_verifies(0));
	assert_true(dp_csum_verifies(0xffff));
	assert_true(dp_csum_verifies(UINT64_MAX));
	assert_false(dp_csum_verifies(UINT64_MAX - 1));
	srand(23);
	for (int i = 0; i < 100000; i++) {
		uint64_t k =
			((uint64_t)rand() << 31 ^ (uint64_t)rand()) % (UINT64_MAX / 0xffff) + 1;
		uint64_t d = (uint64_t)rand() % 0xfffe + 1;

		assert_true(dp_csum_verifies(k * 0xffff));
		assert_false(dp_csum_verifies(k * 0xffff - d));
	}
	for (uint32_t len = 2; len <= 600; len++) {
		for (uint32_t off = 0; off < 8; off++) {
			uint8_t *mem = malloc(off + len);
			uint8_t *p = mem + off;

			assert_non_null(mem);
			for (uint32_t i = 0; i < len; i++)
				p[i] = (uint8_t)rand();
			for (size_t k = 0; k < RTE_DIM(starts); k++) {
				uint16_t c;

				p[0] = p[1] = 0;
				c = (uint16_t)~ref_sum(p, len, starts[k]);
				memcpy(p, &c, 2);
				assert_int_equal(ref_sum(p, len, starts[k]), 0xffff);
				assert_true(dp_csum_verifies(dp_csum_sum64(p, len, starts[k])));
				for (int bit = 0; bit < 16; bit++) {
					p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
					assert_false(
						dp_csum_verifies(dp_csum_sum64(p, len, starts[k])));
					p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
				}
			}
			free(mem);
		}
	}
}

/* dp_ip4_phdr_cksum() is rte_ipv4_phdr_cksum() without TSO: random addresses, protocols,
 * header lengths (5..15 words) and total lengths, the sums that wrap most (all-ones
 * addresses) and the smallest. */
static void test_ip4_phdr_cksum(void **state)
{
	struct rte_ipv4_hdr ip;

	(void)state;
	srand(29);
	for (int i = 0; i < 200000; i++) {
		uint8_t ihl = (uint8_t)(5 + rand() % 11);
		uint16_t hlen = (uint16_t)(ihl * 4);

		memset(&ip, 0, sizeof(ip));
		ip.version_ihl = (uint8_t)(0x40 | ihl);
		switch (i % 4) {
		case 0:
			ip.src_addr = ip.dst_addr = UINT32_MAX;
			break;
		case 1:
			ip.src_addr = ip.dst_addr = 0;
			break;
		default:
			ip.src_addr = (uint32_t)rand() << 1 ^ (uint32_t)rand();
			ip.dst_addr = (uint32_t)rand() << 1 ^ (uint32_t)rand();
		}
		ip.next_proto_id = i % 3 == 0 ? IPPROTO_UDP : (uint8_t)rand();
		ip.total_length = rte_cpu_to_be_16(
			(uint16_t)(hlen + (i % 5 == 0 ? UINT16_MAX - hlen
						      : rand() % (UINT16_MAX - hlen))));
		assert_int_equal(dp_ip4_phdr_cksum(&ip, hlen), rte_ipv4_phdr_cksum(&ip, 0));
	}
}

/* dp_ip6_phdr_cksum() is rte_ipv6_phdr_cksum() without TSO, the same way. */
static void test_ip6_phdr_cksum(void **state)
{
	struct rte_ipv6_hdr ip6;

	(void)state;
	srand(31);
	for (int i = 0; i < 200000; i++) {
		memset(&ip6, 0, sizeof(ip6));
		for (size_t b = 0; b < 16; b++) {
			ip6.src_addr[b] = i % 4 == 0 ? 0xff : (uint8_t)rand();
			ip6.dst_addr[b] = i % 4 == 0 ? 0xff : (uint8_t)rand();
		}
		ip6.proto = i % 3 == 0 ? IPPROTO_UDP : (uint8_t)rand();
		ip6.payload_len = rte_cpu_to_be_16(i % 5 == 0 ? UINT16_MAX : (uint16_t)rand());
		assert_int_equal(dp_ip6_phdr_cksum(&ip6), rte_ipv6_phdr_cksum(&ip6, 0));
	}
}

/* ---- a TX burst the queue takes only part of -------------------------------------------- */

/* Fill queue 0's TX ring but @p room entries (the port takes that many, refuses the rest);
 * @return how many fillers went in (to drain with drain_fillers). */
static unsigned int fill_tx(unsigned int room)
{
	unsigned int n = 0;

	while (rte_ring_free_count(rig.tx[0]) > room) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(rig.pool);

		assert_non_null(m);
		assert_int_equal(rte_ring_enqueue(rig.tx[0], m), 0);
		n++;
	}
	return n;
}

static void drain_fillers(unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		rte_pktmbuf_free(t_sent(0));
}

static uint64_t nodes_sum(bool fwd)
{
	struct dp_node_stats nodes[8];
	uint32_t n = dp_nodes_get(rig.dp, nodes, 8);
	uint64_t s = 0;

	for (uint32_t i = 0; i < n; i++)
		s += fwd ? nodes[i].forwarded : nodes[i].returned;
	return s;
}

/* Five requests in one burst, room for three: the three the port took are forwarded (in total
 * and per node), the other two are tx_full drops whose slots are free at once. Then their
 * three replies in one burst, room for one: one returned (in total and per node), two
 * tx_full. The identity holds throughout (t_stats). */
static void test_refused_tail_counted_once(void **state)
{
	struct {
		uint16_t sport, reqid;
		char ip[INET_ADDRSTRLEN];
	} fwd[3];
	unsigned int nfill;
	struct dp_stats s;
	char text[16];

	(void)state;
	t_dp_start(1, 4, NULL);
	nfill = fill_tx(3);
	for (int i = 0; i < 5; i++) {
		snprintf(text, sizeof(text), "get k%d\r\n", i);
		t_inject(0, t_request((uint16_t)(6000 + i), (uint16_t)i, text, strlen(text)));
	}
	t_poll(0);
	assert_int_equal(rte_ring_count(rig.rx[0]), 0); /* one burst */
	s = t_stats();
	assert_int_equal(s.ctr[DP_CTR_FORWARDED], 3);
	assert_int_equal(s.drop[DP_DROP_TX_FULL], 2);
	assert_int_equal(s.ctr[DP_CTR_SLOTS_TX_FREED], 2);
	assert_int_equal(s.slots_live, 3);
	assert_int_equal(nodes_sum(true), 3);
	drain_fillers(nfill);
	for (int i = 0; i < 3; i++) {
		struct rte_mbuf *m = t_sent(0);
		struct t_view v;

		assert_non_null(m);
		t_view_udp(m, &v, false);
		fwd[i].sport = rte_be_to_cpu_16(v.udp->src_port);
		fwd[i].reqid = v.reqid;
		assert_non_null(inet_ntop(AF_INET, &v.ip->dst_addr, fwd[i].ip, sizeof(fwd[i].ip)));
		rte_pktmbuf_free(m);
	}
	assert_null(t_sent(0));

	nfill = fill_tx(1);
	for (int i = 0; i < 3; i++)
		t_inject(0,
			 t_reply(fwd[i].ip, 11211, fwd[i].sport, fwd[i].reqid, 0, 1, "END\r\n", 5));
	t_poll(0);
	assert_int_equal(rte_ring_count(rig.rx[0]), 0);
	s = t_stats();
	assert_int_equal(s.ctr[DP_CTR_RETURNED], 1);
	assert_int_equal(s.ctr[DP_CTR_FORWARDED], 3);
	assert_int_equal(s.drop[DP_DROP_TX_FULL], 4);
	assert_int_equal(s.slots_live, 0);
	assert_int_equal(nodes_sum(false), 1);
	assert_int_equal(nodes_sum(true), 3);
	drain_fillers(nfill);
	struct rte_mbuf *r = t_sent(0); /* the one returned reply */

	assert_non_null(r);
	rte_pktmbuf_free(r);
	assert_null(t_sent(0));
	t_dp_stop();
}

/* ---- TX checksum offload (IPv4) --------------------------------------------------------- */

static void tx_offload(struct dp_config *c)
{
	c->tx_cksum_offload = true;
}

/* What a NIC with checksum offloads does to IPv4/UDP frame @p m, after checking that the
 * router asked for it as DPDK wants: the flags and header lengths, the IPv4 checksum field 0,
 * the UDP one seeded with the pseudo-header sum. */
static void nic_complete(struct rte_mbuf *m)
{
	struct rte_ipv4_hdr *ip =
		rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, sizeof(struct rte_ether_hdr));
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	uint16_t c;

	assert_int_equal(m->ol_flags & (RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM |
					RTE_MBUF_F_TX_UDP_CKSUM),
			 RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_UDP_CKSUM);
	assert_int_equal(m->l2_len, sizeof(struct rte_ether_hdr));
	assert_int_equal(m->l3_len, sizeof(*ip));
	assert_int_equal(ip->hdr_checksum, 0);
	assert_int_equal(udp->dgram_cksum, rte_ipv4_phdr_cksum(ip, m->ol_flags));
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	c = (uint16_t)~rte_raw_cksum(udp, rte_be_to_cpu_16(udp->dgram_len));
	udp->dgram_cksum = c == 0 ? 0xffff : c;
}

/* With the TX checksum offload, a request and its reply leave with what the NIC needs, and
 * once it has done its part both checksums are right (t_view_udp checks them): the
 * pseudo-header sum is the one rte_ipv4_phdr_cksum() gives. */
static void test_ip4_offload_round_trip(void **state)
{
	static const char hit[] = "VALUE k1 0 3\r\nabc\r\nEND\r\n";
	char ip[INET_ADDRSTRLEN];
	struct rte_mbuf *m;
	struct t_view v;
	uint16_t sport, reqid;

	(void)state;
	t_dp_start(1, 4, tx_offload);
	t_inject(0, t_request(6100, 0x4242, "get k1\r\n", 8));
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	nic_complete(m);
	t_view_udp(m, &v, false);
	assert_int_equal(v.plen, 8 + 8);
	assert_memory_equal(v.payload + 8, "get k1\r\n", 8);
	sport = rte_be_to_cpu_16(v.udp->src_port);
	reqid = v.reqid;
	assert_non_null(inet_ntop(AF_INET, &v.ip->dst_addr, ip, sizeof(ip)));
	rte_pktmbuf_free(m);

	t_inject(0, t_reply(ip, 11211, sport, reqid, 0, 1, hit, strlen(hit)));
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	nic_complete(m);
	t_view_udp(m, &v, false);
	assert_int_equal(rte_be_to_cpu_16(v.udp->dst_port), 6100);
	assert_int_equal(v.reqid, 0x4242);
	assert_int_equal(v.plen, 8 + strlen(hit));
	assert_memory_equal(v.payload + 8, hit, strlen(hit));
	rte_pktmbuf_free(m);
	assert_int_equal(t_stats().ctr[DP_CTR_RETURNED], 1);
	t_dp_stop();
}

/* ---- link_gated (net_memif) -------------------------------------------------------------- */

static void link_gated(struct dp_config *c)
{
	c->link_gated = true;
}

/* With link_gated, a worker neither receives nor sends on a port whose link is down (net_memif
 * maps its rings on connect: a burst before that reads unmapped memory), and serves as before
 * once it is up; without it, the link state changes nothing. */
static void test_link_gate(void **state)
{
	struct rte_mbuf *m;
	struct t_view v;

	(void)state;
	t_dp_start(1, 4, link_gated);
	assert_int_equal(rte_eth_dev_set_link_down(rig.port), 0);
	t_inject(0, t_request(6200, 7, "get k1\r\n", 8));
	t_poll(0);
	t_poll(0);
	assert_int_equal(rte_ring_count(rig.rx[0]), 1); /* not taken */
	assert_null(t_sent(0));
	assert_int_equal(t_stats().ctr[DP_CTR_RX], 0);
	assert_int_equal(rte_eth_dev_set_link_up(rig.port), 0);
	t_poll(0);
	assert_int_equal(rte_ring_count(rig.rx[0]), 0);
	m = t_sent(0);
	assert_non_null(m);
	t_view_udp(m, &v, false);
	assert_memory_equal(v.payload + 8, "get k1\r\n", 8);
	rte_pktmbuf_free(m);
	assert_int_equal(t_stats().ctr[DP_CTR_FORWARDED], 1);
	t_dp_stop();

	t_dp_start(1, 4, NULL); /* not gated: a down link is the PMD's business */
	assert_int_equal(rte_eth_dev_set_link_down(rig.port), 0);
	t_inject(0, t_request(6201, 8, "get k1\r\n", 8));
	t_poll(0);
	assert_int_equal(rte_ring_count(rig.rx[0]), 0);
	m = t_sent(0);
	assert_non_null(m);
	rte_pktmbuf_free(m);
	assert_int_equal(rte_eth_dev_set_link_up(rig.port), 0);
	t_stats();
	t_dp_stop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csum_sum_all_lengths),
		cmocka_unit_test(test_csum_sum_zero),
		cmocka_unit_test(test_csum_verifies),
		cmocka_unit_test(test_ip4_phdr_cksum),
		cmocka_unit_test(test_ip6_phdr_cksum),
		cmocka_unit_test(test_refused_tail_counted_once),
		cmocka_unit_test(test_ip4_offload_round_trip),
		cmocka_unit_test(test_link_gate),
	};

	t_eal_setup("dp_tx", "0", 1);
	return t_eal_teardown(cmocka_run_group_tests(tests, NULL, NULL));
}
