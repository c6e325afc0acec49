/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hot keys on the real worker code: sampled requests land in the worker's sketch, the control
 * lcore's round hands the sketch over and merges it into the view (keys, counts, rates, owners,
 * the owners' request rates), the sampling rate follows hot_sample_every (0: none), and a
 * worker that does not poll is counted late and its samples reach the next view.
 * Spreading: a pinned key's hot set is published (and follows a placement change), its gets go
 * to its replicas only and to each of them, a replica's miss is re-asked of the owner and the
 * owner's hit reaches the client and the replica (`add`) byte for byte, a write sends the
 * other replicas a delete before the write leaves and suppresses fills, an unpinned key cools
 * down, a key over the threshold spreads by itself; the accounting identity holds throughout
 * with the router's own packets counted apart.
 * Cooling (issue 27), against a model of the nodes that keeps what the router wrote with
 * memcached's expiry: a key that stops spreading keeps its writes from leaving copies, and
 * stays in the set until every copy written could have expired, so a key that turns hot again
 * never reads an older value from a replica.
 */

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "dataplane_priv.h"
#include "dp_hot.h"
#include "dp_test.h"

static uint32_t every = 1;
static uint32_t keys = 64;
static uint32_t threshold;

static void hot_config(struct dp_config *c)
{
	c->hot_sample_every = every;
	c->hot_sketch_keys = keys;
	/* 50 ms: a round closes without a worker half an interval after it asked, and a
	 * loaded machine (the whole suite on two vCPUs) once descheduled the test longer than
	 * the 5 ms of a 10 ms interval between its worker's answer and the merge */
	c->hot_interval_ms = 50;
	c->hot_threshold_pct = threshold;
	c->hot_replicas = 3;
	c->hot_fill_ttl_s = 1;
}

/* Send `get KEY` from the client and drop what the router forwards. */
static void get(const char *key, uint16_t id)
{
	char req[300];
	struct rte_mbuf *m;
	int n = snprintf(req, sizeof(req), "get %s\r\n", key);

	t_inject(0, t_request(7000, id, req, (size_t)n));
	t_poll(0);
	while ((m = t_sent(0)) != NULL)
		rte_pktmbuf_free(m);
}

/* One merge round: wait out the interval, let the control lcore ask, the worker answer
 * (when @p worker_polls), the control lcore merge. */
static void round_trip(bool worker_polls)
{
	rte_delay_us_sleep(51000);
	dp_control_poll(rig.dp); /* the round starts: the worker is asked for its sketch */
	if (worker_polls)
		t_poll(0); /* ... and hands it over */
	else
		rte_delay_us_sleep(26000); /* half an interval: the round closes without it */
	dp_control_poll(rig.dp);
}

static const struct dp_hotkey *find(const struct dp_hotkey *v, uint32_t n, const char *key)
{
	for (uint32_t i = 0; i < n; i++)
		if (v[i].len == strlen(key) && memcmp(v[i].key, key, v[i].len) == 0)
			return &v[i];
	return NULL;
}

/* Every request sampled, K above the distinct keys: the counts are exact, the hottest first,
 * with its owner and rates. */
static void test_view_exact(void **state)
{
	struct dp_hotkey v[64];
	struct dp_hot_summary s;
	const struct dp_hotkey *hot, *warm;
	char key[32];
	uint32_t n;
	uint16_t id = 0;

	(void)state;
	every = 1;
	keys = 64;
	t_dp_start(1, 4, hot_config);
	dp_control_poll(rig.dp); /* the first interval starts */
	for (int i = 0; i < 60; i++) {
		get("hot", id++);
		if (i % 2 == 0)
			get("warm", id++);
		if (i % 3 == 0) {
			snprintf(key, sizeof(key), "cold%d", i);
			get(key, id++);
		}
	}
	assert_int_equal(t_stats().ctr[DP_CTR_HOT_SAMPLED], 60 + 30 + 20);
	assert_int_equal(dp_hotkeys_get(rig.dp, v, 64, &s), 0); /* no view yet */
	round_trip(true);
	n = dp_hotkeys_get(rig.dp, v, 64, &s);
	assert_int_equal(n, 22);
	assert_int_equal(s.intervals, 1);
	assert_int_equal(s.sampled, 110);
	assert_int_equal(s.sketch_keys, 64);
	assert_int_equal(s.late, 0);
	assert_true(s.interval_s > 0.049 && s.interval_s < 1.0);
	hot = find(v, n, "hot");
	warm = find(v, n, "warm");
	assert_ptr_equal(hot, &v[0]);
	assert_ptr_equal(warm, &v[1]);
	assert_int_equal(hot->count, 60);
	assert_int_equal(hot->err, 0);
	assert_int_equal(warm->count, 30);
	assert_true(fabs(hot->rate - 60 / s.interval_s) < 1e-6 * hot->rate);
	assert_int_equal(hot->owner, t_owner("hot"));
	snprintf(key, sizeof(key), "n%d", t_owner("hot") + 1);
	assert_string_equal(hot->owner_name, key);
	/* Its owner got at least the hot key's 60 requests in the interval. */
	assert_true(hot->owner_rate * s.interval_s >= 60 - 1e-6);
	assert_true(hot->guaranteed && warm->guaranteed);
	/* The next round has nothing new: an empty view. */
	round_trip(true);
	assert_int_equal(dp_hotkeys_get(rig.dp, v, 64, &s), 0);
	assert_int_equal(s.intervals, 2);
	t_dp_stop();
}

/* A small sketch: the hottest keys survive, every estimate within the stated bound. */
static void test_view_bounded(void **state)
{
	struct dp_hotkey v[8];
	struct dp_hot_summary s;
	char key[32];
	uint32_t n;
	uint64_t a = 0, b = 0;

	(void)state;
	every = 1;
	keys = 8;
	t_dp_start(1, 4, hot_config);
	dp_control_poll(rig.dp);
	for (int i = 0; i < 400; i++) {
		if (i % 3 == 0)
			snprintf(key, sizeof(key), "alpha"), a++;
		else if (i % 6 == 1)
			snprintf(key, sizeof(key), "beta"), b++;
		else
			snprintf(key, sizeof(key), "c%d", i);
		get(key, (uint16_t)i);
	}
	round_trip(true);
	n = dp_hotkeys_get(rig.dp, v, 8, &s);
	assert_int_equal(n, 8);
	assert_int_equal(s.sampled, 400);
	assert_memory_equal(v[0].key, "alpha", 5);
	assert_memory_equal(v[1].key, "beta", 4);
	/* count >= true >= count - err, err <= N / K = 50 */
	assert_true(v[0].count >= a && v[0].count - v[0].err <= a && v[0].err <= 50);
	assert_true(v[1].count >= b && v[1].count - v[1].err <= b && v[1].err <= 50);
	assert_true(fabs(s.bound_rate - 50 / s.interval_s) < 1e-6 * s.bound_rate);
	t_dp_stop();
}

/* 1 in 16 on average; 0: nothing sampled. */
static void test_sampling_rate(void **state)
{
	uint64_t sampled;

	(void)state;
	every = 16;
	keys = 64;
	t_dp_start(1, 4, hot_config);
	for (int i = 0; i < 3200; i++)
		get(i & 1 ? "a" : "b", (uint16_t)i);
	sampled = t_stats().ctr[DP_CTR_HOT_SAMPLED];
	print_message("# 1 in 16 of 3200: %lu sampled\n", (unsigned long)sampled);
	assert_true(sampled >= 140 && sampled <= 260);
	t_dp_stop();
	every = 0;
	t_dp_start(1, 4, hot_config);
	for (int i = 0; i < 1000; i++)
		get("a", (uint16_t)i);
	assert_int_equal(t_stats().ctr[DP_CTR_HOT_SAMPLED], 0);
	t_dp_stop();
}

/* A worker that does not poll misses the round (late); its samples reach the next view. */
static void test_late_worker(void **state)
{
	struct dp_hotkey v[4];
	struct dp_hot_summary s;

	(void)state;
	every = 1;
	keys = 64;
	t_dp_start(1, 4, hot_config);
	dp_control_poll(rig.dp);
	for (int i = 0; i < 10; i++)
		get("late", (uint16_t)i);
	round_trip(false);
	assert_int_equal(dp_hotkeys_get(rig.dp, v, 4, &s), 0);
	assert_int_equal(s.late, 1);
	assert_int_equal(s.intervals, 1);
	round_trip(true);
	assert_int_equal(dp_hotkeys_get(rig.dp, v, 4, &s), 1);
	assert_int_equal(v[0].count, 10);
	assert_int_equal(s.late, 1);
	t_dp_stop();
}

/* The node index (0-based) a packet the router sent goes to. */
static int dest_node(struct rte_mbuf *m, struct t_view *v)
{
	t_view_udp(m, v, true);
	return (int)(rte_be_to_cpu_32(v->ip->dst_addr) & 0xff) - 1;
}

/* Replicas of @p key in the rig's placement (member indices = node index). */
static int replicas_of(const char *key, uint32_t *rep)
{
	return pl_replicas(rig.pl, pl_key_hash(rig.pl, key, strlen(key)), rep, 3);
}

static bool is_replica(const uint32_t *rep, int n, int node)
{
	for (int i = 0; i < n; i++)
		if ((int)rep[i] == node)
			return true;
	return false;
}

/* A pinned key: published; its gets reach each of its 3 replicas and nothing else. */
static void test_spread_pinned(void **state)
{
	uint32_t rep[3], per[8] = {0};
	struct dp_hot_summary s;
	struct rte_mbuf *m;
	struct t_view v;
	int n;

	(void)state;
	every = 1;
	threshold = 0;
	t_dp_start(1, 4, hot_config);
	n = replicas_of("hk", rep);
	assert_int_equal(n, 3);
	assert_null(atomic_load(&rig.dp->hotset));
	assert_int_equal(dp_hot_pin(rig.dp, (const uint8_t *)"hk", 2, false), -ENOENT);
	assert_int_equal(dp_hot_pin(rig.dp, (const uint8_t *)"hk", 2, true), 0);
	assert_non_null(atomic_load(&rig.dp->hotset));
	dp_hotkeys_get(rig.dp, NULL, 0, &s);
	assert_int_equal(s.spreading, 1);
	for (int i = 0; i < 90; i++) {
		t_inject(0, t_request(7000, (uint16_t)i, "get hk\r\n", 8));
		t_poll(0);
		while ((m = t_sent(0)) != NULL) {
			int d = dest_node(m, &v);

			assert_true(is_replica(rep, n, d));
			assert_int_equal(v.plen, 8 + 8);
			assert_memory_equal(v.payload + 8, "get hk\r\n", 8);
			per[d]++;
			rte_pktmbuf_free(m);
		}
	}
	/* Two random choices under the bounded load: each replica gets its part. */
	for (int i = 0; i < n; i++) {
		print_message("# replica n%u: %u of 90\n", rep[i] + 1, per[rep[i]]);
		assert_true(per[rep[i]] >= 20);
	}
	assert_int_equal(t_stats().ctr[DP_CTR_HOT_SPREAD], 90 - per[rep[0]]);
	/* Other commands of the key, and other keys, go to the owner. */
	t_inject(0, t_request(7000, 500, "gets hk\r\n", 9));
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	assert_int_equal(dest_node(m, &v), (int)rep[0]);
	rte_pktmbuf_free(m);
	/* A new placement: the set is republished with replicas walked on it. */
	{
		struct pl_placement *pl3 = t_fleet(3);

		t_publish(pl3, 3);
		dp_control_poll(rig.dp);
		assert_int_equal(atomic_load(&rig.dp->hotset)->epoch, 2);
		pl_free(pl3);
	}
	t_dp_stop();
}

/* The request the router forwarded: its source port and request id (to answer it). */
static int take_sent(uint16_t *sport, uint16_t *reqid, char *body, size_t cap)
{
	struct rte_mbuf *m = t_sent(0);
	struct t_view v;
	int d;

	assert_non_null(m);
	d = dest_node(m, &v);
	*sport = rte_be_to_cpu_16(v.udp->src_port);
	*reqid = v.reqid;
	assert_true(v.plen - 8 < cap);
	memcpy(body, v.payload + 8, v.plen - 8);
	body[v.plen - 8] = '\0';
	rte_pktmbuf_free(m);
	return d;
}

static char node_ip[32];

static const char *ip_of(int node)
{
	snprintf(node_ip, sizeof(node_ip), "198.18.1.%d", node + 1);
	return node_ip;
}

/* A get spread to a non-owner replica (retrying until the choice falls on one). */
static int spread_get(uint16_t id, uint16_t *sport, uint16_t *reqid, const uint32_t *rep)
{
	char body[64];

	for (int tries = 0; tries < 64; tries++) {
		int d;

		t_inject(0, t_request(7000, id, "get hk\r\n", 8));
		t_poll(0);
		d = take_sent(sport, reqid, body, sizeof(body));
		if (d != (int)rep[0])
			return d;
		/* the owner got it: answer, so the slot is freed */
		t_inject(0, t_reply(ip_of(d), 11211, *sport, *reqid, 0, 1, "END\r\n", 5));
		t_poll(0);
		rte_pktmbuf_free(t_sent(0));
	}
	fail_msg("no get went to a replica");
	return -1;
}

/* A replica's miss: the owner is asked from the same slot; its hit reaches the client and is
 * added to the replica, byte for byte. A write deletes the copies first and stops the fills. */
static void test_fill_and_write(void **state)
{
	static const char hit[] = "VALUE hk 5 3\r\nabc\r\nEND\r\n";
	uint32_t rep[3];
	uint16_t sport, reqid, fport, freqid;
	char body[128];
	struct rte_mbuf *m;
	struct t_view v;
	struct dp_stats st;
	int d, o;

	(void)state;
	every = 1;
	threshold = 0;
	t_dp_start(1, 4, hot_config);
	replicas_of("hk", rep);
	assert_int_equal(dp_hot_pin(rig.dp, (const uint8_t *)"hk", 2, true), 0);
	d = spread_get(77, &sport, &reqid, rep);
	/* The replica misses: nothing reaches the client, the owner is asked. */
	t_inject(0, t_reply(ip_of(d), 11211, sport, reqid, 0, 1, "END\r\n", 5));
	t_poll(0);
	o = take_sent(&fport, &freqid, body, sizeof(body));
	assert_int_equal(o, (int)rep[0]);
	assert_string_equal(body, "get hk\r\n");
	assert_int_equal(fport, sport);	     /* the same slot */
	assert_int_not_equal(freqid, reqid); /* its next generation */
	assert_null(t_sent(0));
	/* The replica's late duplicate of the miss finds the slot moved on. */
	t_inject(0, t_reply(ip_of(d), 11211, sport, reqid, 0, 1, "END\r\n", 5));
	t_poll(0);
	assert_null(t_sent(0));
	assert_int_equal(t_drop(DP_DROP_REPLY_WRONG_SOURCE), 1);
	/* The owner's hit: the add to the replica, then the client's reply. */
	t_inject(0, t_reply(ip_of(o), 11211, fport, freqid, 0, 1, hit, strlen(hit)));
	t_poll(0);
	assert_int_equal(take_sent(&fport, &freqid, body, sizeof(body)), d);
	assert_string_equal(body, "add hk 5 1 3 noreply\r\nabc\r\n");
	assert_int_equal(fport, T_LISTEN);
	m = t_sent(0);
	assert_non_null(m);
	t_view_udp(m, &v, false);
	assert_int_equal(v.ip->dst_addr, t_ip(T_CLIENT_IP));
	assert_int_equal(v.reqid, 77);
	assert_int_equal(v.plen, 8 + strlen(hit));
	assert_memory_equal(v.payload + 8, hit, strlen(hit));
	rte_pktmbuf_free(m);
	st = t_stats(); /* the identity: the absorbed miss counts as returned */
	assert_int_equal(st.ctr[DP_CTR_HOT_MISSES], 1);
	assert_int_equal(st.ctr[DP_CTR_HOT_FETCHES], 1);
	assert_int_equal(st.ctr[DP_CTR_HOT_FILLS], 1);
	/* A set: the two other replicas get its copy (exptime capped at fill_ttl_s, 1 s here)
	 * before the set leaves for the owner. */
	t_inject(0, t_request(7000, 90, "set hk 3 0 1\r\nx\r\n", 17));
	t_poll(0);
	for (int i = 0; i < 2; i++) {
		int r = take_sent(&fport, &freqid, body, sizeof(body));

		assert_true(r == (int)rep[1] || r == (int)rep[2]);
		assert_string_equal(body, "set hk 3 1 1 noreply\r\nx\r\n");
	}
	assert_int_equal(take_sent(&fport, &freqid, body, sizeof(body)), (int)rep[0]);
	assert_string_equal(body, "set hk 3 0 1\r\nx\r\n");
	assert_int_equal(t_stats().ctr[DP_CTR_HOT_INVALIDATIONS], 2);
	/* Any other write (a delete here): the other replicas' copies are deleted first. */
	t_inject(0, t_request(7000, 91, "delete hk\r\n", 11));
	t_poll(0);
	for (int i = 0; i < 2; i++) {
		int r = take_sent(&fport, &freqid, body, sizeof(body));

		assert_true(r == (int)rep[1] || r == (int)rep[2]);
		assert_string_equal(body, "delete hk noreply\r\n");
	}
	assert_int_equal(take_sent(&fport, &freqid, body, sizeof(body)), (int)rep[0]);
	assert_string_equal(body, "delete hk\r\n");
	assert_int_equal(t_stats().ctr[DP_CTR_HOT_INVALIDATIONS], 4);
	/* A quiet write in a pipeline: its copies too. */
	t_inject(0, t_request(7000, 92, "get hk\r\nset hk 0 0 1 noreply\r\ny\r\n", 33));
	t_poll(0);
	assert_int_equal(t_sent_count(0), 3);
	for (int i = 0; i < 2; i++) {
		int r = take_sent(&fport, &freqid, body, sizeof(body));

		assert_true(r == (int)rep[1] || r == (int)rep[2]);
		assert_string_equal(body, "set hk 0 1 1 noreply\r\ny\r\n");
	}
	assert_int_equal(take_sent(&fport, &freqid, body, sizeof(body)), (int)rep[0]);
	t_inject(0, t_reply(ip_of(rep[0]), 11211, fport, freqid, 0, 1, "END\r\n", 5));
	t_poll(0);
	rte_pktmbuf_free(t_sent(0));
	/* A fill racing it: the owner's (old) hit reaches the client, not the replica. */
	d = spread_get(78, &sport, &reqid, rep);
	t_inject(0, t_reply(ip_of(d), 11211, sport, reqid, 0, 1, "END\r\n", 5));
	t_poll(0);
	o = take_sent(&fport, &freqid, body, sizeof(body));
	t_inject(0, t_reply(ip_of(o), 11211, fport, freqid, 0, 1, hit, strlen(hit)));
	t_poll(0);
	m = t_sent(0);
	t_view_udp(m, &v, false);
	assert_int_equal(rte_be_to_cpu_16(v.udp->dst_port), 7000);
	rte_pktmbuf_free(m);
	assert_null(t_sent(0));
	st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_HOT_FILLS], 1);
	assert_int_equal(st.ctr[DP_CTR_HOT_FILL_SKIPPED], 1);
	t_dp_stop();
}

/* The owner down: a hot key does not spread (its reads fail over as any other key's), and a
 * replica's miss of a read spread before the owner went down is not filled from it: the owner
 * holds none of the outage's writes, and a frozen owner answers the fetch, late, with its value
 * from before (issue 27, soak seed 3001: the fetch waited 0.2 s for a frozen node, the client
 * got v9 after v10 was acknowledged, and the fill put v9 on the replica). */
static void test_owner_down_no_spread(void **state)
{
	uint32_t rep[3];
	uint16_t sport, reqid, fport, freqid;
	char body[128], owner[8];
	struct rte_mbuf *m;
	struct t_view v;
	uint64_t spread;
	int d;

	(void)state;
	every = 1;
	threshold = 0;
	t_dp_start(1, 4, hot_config);
	replicas_of("hk", rep);
	snprintf(owner, sizeof(owner), "n%u", rep[0] + 1);
	assert_int_equal(dp_hot_pin(rig.dp, (const uint8_t *)"hk", 2, true), 0);
	/* A read spread while the owner serves; then the owner goes down; the replica misses. */
	d = spread_get(77, &sport, &reqid, rep);
	assert_int_equal(dp_health_admin(rig.dp, owner, DP_HEALTH_DOWN), 0);
	t_inject(0, t_reply(ip_of(d), 11211, sport, reqid, 0, 1, "END\r\n", 5));
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	t_view_udp(m, &v, false); /* the miss is the client's answer, no fetch */
	assert_int_equal(v.ip->dst_addr, t_ip(T_CLIENT_IP));
	assert_int_equal(v.reqid, 77);
	assert_memory_equal(v.payload + 8, "END\r\n", 5);
	rte_pktmbuf_free(m);
	assert_null(t_sent(0));
	assert_int_equal(t_stats().ctr[DP_CTR_HOT_FETCHES], 0);
	/* While it is down, every read goes to its stand-in, none is spread. */
	spread = t_stats().ctr[DP_CTR_HOT_SPREAD];
	for (int i = 0; i < 40; i++) {
		t_inject(0, t_request(7000, (uint16_t)(100 + i), "get hk\r\n", 8));
		t_poll(0);
		assert_int_equal(take_sent(&fport, &freqid, body, sizeof(body)), (int)rep[1]);
		t_inject(0, t_reply(ip_of((int)rep[1]), 11211, fport, freqid, 0, 1, "END\r\n", 5));
		t_poll(0);
		rte_pktmbuf_free(t_sent(0));
	}
	assert_int_equal(t_stats().ctr[DP_CTR_HOT_SPREAD], spread);
	assert_int_equal(t_stats().ctr[DP_CTR_HOT_FETCHES], 0);
	t_dp_stop();
}

/* A write of a hot key while one of its replicas is down: the serving replica gets the copy
 * (a set) or the delete, the down one gets nothing and the key is recorded for it (deleted
 * there before it serves again). A frozen node queues what it is sent, and a socket buffer
 * that filled kept an early copy and dropped a later delete: soak seeds 5023, 5034 and 5035
 * read a value two writes old from a returned replica. */
static void test_write_to_down_replica(void **state)
{
	static const char *const writes[] = {"set hk 0 0 1\r\nx\r\n", "delete hk\r\n",
					     "set hk 0 0 2\r\nyy\r\n"};
	uint32_t rep[3];
	char down[8];

	(void)state;
	every = 1000000;
	threshold = 0;
	t_dp_start(1, 4, hot_config);
	assert_int_equal(replicas_of("hk", rep), 3);
	assert_int_equal(dp_hot_pin(rig.dp, (const uint8_t *)"hk", 2, true), 0);
	snprintf(down, sizeof(down), "n%u", rep[2] + 1);
	assert_int_equal(dp_health_admin(rig.dp, down, DP_HEALTH_DOWN), 0);
	for (size_t i = 0; i < sizeof(writes) / sizeof(writes[0]); i++) {
		struct dp_stats before = t_stats(), after;
		int to[4] = {0};
		struct rte_mbuf *m;

		t_inject(0, t_request(7000, (uint16_t)(200 + i), writes[i], strlen(writes[i])));
		t_poll(0);
		while ((m = t_sent(0)) != NULL) {
			struct t_view v;

			to[dest_node(m, &v)]++;
			rte_pktmbuf_free(m);
		}
		after = t_stats();
		if (to[rep[2]] != 0)
			fail_msg("'%s': %d datagram(s) to the down replica n%u", writes[i],
				 to[rep[2]], rep[2] + 1);
		assert_int_equal(to[rep[0]], 1); /* the write itself, to the owner */
		assert_int_equal(to[rep[1]], 1); /* the copy or the delete */
		assert_int_equal(after.ctr[DP_CTR_HOT_MISSED] - before.ctr[DP_CTR_HOT_MISSED], 1);
		assert_int_equal(after.ctr[DP_CTR_DIRTY_KEYS] - before.ctr[DP_CTR_DIRTY_KEYS], 1);
	}
	t_dp_stop();
}

/* The rig's 4 nodes with node @p heavy at weight 4, the others at 1. */
static struct pl_placement *weighted(int heavy)
{
	struct pl_member m[4];
	struct pl_config c = {0};

	memset(m, 0, sizeof(m));
	for (int i = 0; i < 4; i++) {
		snprintf(m[i].name, sizeof(m[i].name), "n%d", i + 1);
		snprintf(m[i].addr, sizeof(m[i].addr), "198.18.1.%d", i + 1);
		m[i].port = 11211;
		m[i].weight = i == heavy ? 4 : 1;
	}
	c.algo = PL_ALGO_RING;
	return pl_build(&c, m, 4);
}

static void publish(struct pl_placement *pl)
{
	t_publish(pl, 4);
	/* Only the hot set's own deletes are looked at: no held placement's moved-key deletes. */
	dp_warm_forget(rig.dp);
	dp_control_poll(rig.dp); /* the hot set walked again on it */
}

/* A membership change moves a hot key's replica set and a later one moves it back: a replica
 * that left the set is sent every write's delete while its copies may live, so that back in
 * the set it holds no value older than the key's last write (soak seed 5034 read one two
 * writes old). Reads never go to it meanwhile. */
static void test_replica_set_flip(void **state)
{
	uint32_t rep0[3], rep1[3];
	struct pl_placement *pl1 = NULL;
	int gone = -1;

	(void)state;
	every = 1000000;
	threshold = 0;
	t_dp_start(1, 4, hot_config);
	assert_int_equal(replicas_of("hk", rep0), 3);
	assert_int_equal(dp_hot_pin(rig.dp, (const uint8_t *)"hk", 2, true), 0);
	/* A weight change that takes one of the replicas out of the key's set. */
	for (int heavy = 0; heavy < 4 && gone < 0; heavy++) {
		pl1 = weighted(heavy);
		assert_int_equal(pl_replicas(pl1, pl_key_hash(pl1, "hk", 2), rep1, 3), 3);
		for (int i = 0; i < 3 && gone < 0; i++)
			if (!is_replica(rep1, 3, (int)rep0[i]))
				gone = (int)rep0[i];
		if (gone < 0)
			pl_free(pl1);
	}
	assert_true(gone >= 0);
	publish(pl1);
	for (int i = 0; i < 3; i++) {
		const char *w = i == 1 ? "delete hk\r\n" : "set hk 0 0 1\r\nx\r\n";
		struct rte_mbuf *m;
		int to_gone = 0;
		char body[64];

		t_inject(0, t_request(7000, (uint16_t)(300 + i), w, strlen(w)));
		t_poll(0);
		while ((m = t_sent(0)) != NULL) {
			struct t_view v;

			if (dest_node(m, &v) == gone) {
				to_gone++;
				assert_true(v.plen - 8 < sizeof(body));
				memcpy(body, v.payload + 8, v.plen - 8);
				body[v.plen - 8] = '\0';
				assert_string_equal(body, "delete hk noreply\r\n");
			}
			rte_pktmbuf_free(m);
		}
		if (to_gone != 1)
			fail_msg("write %d: %d datagram(s) to n%d, which left the key's replica set",
				 i, to_gone, gone + 1);
	}
	/* Reads spread over the new set only. */
	for (int i = 0; i < 60; i++) {
		struct rte_mbuf *m;
		struct t_view v;

		t_inject(0, t_request(7000, (uint16_t)(400 + i), "get hk\r\n", 8));
		t_poll(0);
		while ((m = t_sent(0)) != NULL) {
			assert_true(is_replica(rep1, 3, dest_node(m, &v)));
			rte_pktmbuf_free(m);
		}
	}
	pl_free(pl1);
	t_dp_stop();
}

/* Unpinned: the key cools down (gets to the owner, writes still delete copies), then leaves. */
static void test_cooling(void **state)
{
	uint32_t rep[3];
	uint16_t p, q;
	char body[64];
	struct dp_hot_summary s;

	(void)state;
	every = 1;
	threshold = 0;
	t_dp_start(1, 4, hot_config);
	replicas_of("hk", rep);
	assert_int_equal(dp_hot_pin(rig.dp, (const uint8_t *)"hk", 2, true), 0);
	assert_int_equal(dp_hot_pin(rig.dp, (const uint8_t *)"hk", 2, false), 0);
	dp_hotkeys_get(rig.dp, NULL, 0, &s);
	assert_int_equal(s.spreading, 0);
	assert_int_equal(s.cooling, 1);
	for (int i = 0; i < 20; i++) {
		t_inject(0, t_request(7000, (uint16_t)i, "get hk\r\n", 8));
		t_poll(0);
		assert_int_equal(take_sent(&p, &q, body, sizeof(body)), (int)rep[0]);
	}
	t_inject(0, t_request(7000, 99, "delete hk\r\n", 11));
	t_poll(0);
	assert_int_equal(t_sent_count(0), 3);
	assert_int_equal(t_stats().ctr[DP_CTR_HOT_INVALIDATIONS], 2);
	while (t_sent_count(0) > 0)
		rte_pktmbuf_free(t_sent(0));
	/* fill_ttl_s (1 s) and memcached's clock slack (DP_HOT_EXPIRY_SLACK_S) later the key
	 * leaves the set: not before its copies could have expired. */
	rte_delay_us_sleep(1100000);
	dp_control_poll(rig.dp);
	dp_hotkeys_get(rig.dp, NULL, 0, &s);
	assert_int_equal(s.cooling, 1);
	rte_delay_us_sleep((DP_HOT_EXPIRY_SLACK_S * 1000 + 100) * 1000);
	dp_control_poll(rig.dp);
	rte_delay_us_sleep(51000);
	dp_control_poll(rig.dp);
	dp_hotkeys_get(rig.dp, NULL, 0, &s);
	assert_int_equal(s.cooling, 0);
	t_inject(0, t_request(7000, 100, "delete hk\r\n", 11));
	t_poll(0);
	assert_int_equal(t_sent_count(0), 1);
	t_dp_stop();
}

/* ---- a model of the nodes for key "hk" ------------------------------------------------- */

/* What node i holds of "hk": memcached keeps an item with exptime N readable until up to a
 * second after N seconds (its clock ticks once a second), the model the full second. */
static struct {
	bool live;
	char val[32];
	uint64_t until; /* TSC; 0: no expiry */
} held[8];
static char got[32]; /* the value of the client's last reply ("" for a miss) */
static uint16_t next_id = 1000;

static bool held_live(int n)
{
	return held[n].live && (held[n].until == 0 || rte_rdtsc() < held[n].until);
}

/* Node @p n handles @p body (one request, as the router sent it): the reply it sends, or "". */
static void node_does(int n, const char *body, char *reply, size_t cap)
{
	unsigned flags, exp, bytes;
	char cmd[16], key[32];
	const char *data = strstr(body, "\r\n");
	bool quiet = strstr(body, " noreply\r\n") != NULL;

	reply[0] = '\0';
	assert_int_equal(sscanf(body, "%15s %31s", cmd, key), 2);
	assert_string_equal(key, "hk");
	if (strcmp(cmd, "get") == 0) {
		if (held_live(n))
			snprintf(reply, cap, "VALUE hk 0 %zu\r\n%s\r\nEND\r\n",
				 strlen(held[n].val), held[n].val);
		else
			snprintf(reply, cap, "END\r\n");
		return;
	}
	if (strcmp(cmd, "delete") == 0) {
		bool was = held_live(n);

		held[n].live = false;
		if (!quiet)
			snprintf(reply, cap, was ? "DELETED\r\n" : "NOT_FOUND\r\n");
		return;
	}
	assert_true(strcmp(cmd, "set") == 0 || strcmp(cmd, "add") == 0);
	assert_int_equal(sscanf(body, "%*s %*s %u %u %u", &flags, &exp, &bytes), 3);
	assert_true(exp <= 2592000); /* relative: the model knows no other */
	if (strcmp(cmd, "add") != 0 || !held_live(n)) {
		held[n].live = true;
		snprintf(held[n].val, sizeof(held[n].val), "%.*s", (int)bytes, data + 2);
		held[n].until = exp == 0 ? 0 : rte_rdtsc() + (exp + 1ull) * rte_get_tsc_hz();
	}
	if (!quiet)
		snprintf(reply, cap, "STORED\r\n");
}

/* Deliver everything the router sent: to the model's nodes (answering what they answer) and
 * to the client (its last value in got). */
static void pump(void)
{
	struct rte_mbuf *m;

	while ((m = t_sent(0)) != NULL) {
		char body[512], reply[512];
		struct t_view v;
		int d = dest_node(m, &v);

		assert_true(v.plen - 8 < sizeof(body));
		memcpy(body, v.payload + 8, v.plen - 8);
		body[v.plen - 8] = '\0';
		if (v.ip->dst_addr == t_ip(T_CLIENT_IP)) {
			const char *e;

			got[0] = '\0';
			if (strncmp(body, "VALUE ", 6) == 0 && (e = strstr(body, "\r\n")) != NULL)
				snprintf(got, sizeof(got), "%.*s", (int)strcspn(e + 2, "\r"), e + 2);
			rte_pktmbuf_free(m);
			continue;
		}
		node_does(d, body, reply, sizeof(reply));
		if (reply[0] != '\0') {
			t_inject(0, t_reply(ip_of(d), 11211, rte_be_to_cpu_16(v.udp->src_port),
					    v.reqid, 0, 1, reply, strlen(reply)));
			t_poll(0);
		}
		rte_pktmbuf_free(m);
	}
}

static void client_does(const char *text)
{
	t_inject(0, t_request(7000, next_id++, text, strlen(text)));
	t_poll(0);
	pump();
}

static uint32_t cooling_now(void)
{
	struct dp_hot_summary s;

	dp_control_poll(rig.dp);
	dp_hotkeys_get(rig.dp, NULL, 0, &s);
	return s.cooling;
}

/* Wait (bounded, polling the control lcore) until the cooling key leaves the set. */
static void until_cooled(void)
{
	uint64_t end = rte_rdtsc() + 20 * rte_get_tsc_hz();

	while (cooling_now() != 0) {
		assert_true(rte_rdtsc() < end);
		rte_delay_us_sleep(20000);
	}
}

/* The key is hot again: every read answers the latest write, never an older copy. */
static void reads_see(const char *want)
{
	assert_int_equal(dp_hot_pin(rig.dp, (const uint8_t *)"hk", 2, true), 0);
	for (int i = 0; i < 40; i++) {
		client_does("get hk\r\n");
		assert_string_equal(got, want);
	}
	assert_true(t_stats().ctr[DP_CTR_HOT_SPREAD] > 0);
}

/* Issue 27, defect 4. (a) hot, set v1 (copied to the replicas), cooling, set v2 after the
 * key left the set, hot again: the replicas' v1 must have expired by then. (b) a set while
 * the key cools: today copied to the replicas with fill_ttl_s, outliving the cooling. */
static void test_cooling_leaves_no_stale_copy(void **state)
{
	(void)state;
	every = 1;
	threshold = 0;
	/* (a) */
	t_dp_start(1, 4, hot_config);
	memset(held, 0, sizeof(held));
	assert_int_equal(dp_hot_pin(rig.dp, (const uint8_t *)"hk", 2, true), 0);
	client_does("set hk 0 0 2\r\nv1\r\n");
	assert_int_equal(t_stats().ctr[DP_CTR_HOT_INVALIDATIONS], 2); /* copies of v1 */
	assert_int_equal(dp_hot_pin(rig.dp, (const uint8_t *)"hk", 2, false), 0);
	until_cooled();
	client_does("set hk 0 0 2\r\nv2\r\n");
	reads_see("v2");
	t_dp_stop();
	/* (b) */
	t_dp_start(1, 4, hot_config);
	memset(held, 0, sizeof(held));
	assert_int_equal(dp_hot_pin(rig.dp, (const uint8_t *)"hk", 2, true), 0);
	assert_int_equal(dp_hot_pin(rig.dp, (const uint8_t *)"hk", 2, false), 0);
	rte_delay_us_sleep(700000); /* late in a fill_ttl_s (1 s) of cooling */
	assert_int_equal(cooling_now(), 1);
	client_does("set hk 0 0 2\r\nv1\r\n");
	until_cooled();
	client_does("set hk 0 0 2\r\nv2\r\n");
	reads_see("v2");
	t_dp_stop();
}

/* Over the threshold (10 % of its owner's rate): spread without a pin. */
static void test_spread_auto(void **state)
{
	struct dp_hotkey v[4];
	struct dp_hot_summary s;
	char key[16];

	(void)state;
	every = 1;
	threshold = 10;
	t_dp_start(1, 4, hot_config);
	dp_control_poll(rig.dp);
	for (int i = 0; i < 200; i++) {
		snprintf(key, sizeof(key), i % 2 ? "auto" : "c%d", i);
		get(key, (uint16_t)i);
	}
	round_trip(true);
	assert_true(dp_hotkeys_get(rig.dp, v, 4, &s) >= 1);
	assert_memory_equal(v[0].key, "auto", 4);
	assert_int_equal(s.spreading, 1);
	assert_non_null(atomic_load(&rig.dp->hotset));
	assert_int_equal(atomic_load(&rig.dp->hotset)->n, 1);
	/* The next view shows it spread. */
	for (int i = 0; i < 20; i++)
		get("auto", (uint16_t)i);
	round_trip(true);
	dp_hotkeys_get(rig.dp, v, 4, &s);
	assert_int_equal(v[0].spread, DP_HOT_STATE_SPREAD);
	threshold = 0;
	t_dp_stop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_view_exact),    cmocka_unit_test(test_view_bounded),
		cmocka_unit_test(test_sampling_rate), cmocka_unit_test(test_late_worker),
		cmocka_unit_test(test_spread_pinned), cmocka_unit_test(test_fill_and_write),
		cmocka_unit_test(test_cooling),	      cmocka_unit_test(test_spread_auto),
		cmocka_unit_test(test_cooling_leaves_no_stale_copy),
		cmocka_unit_test(test_owner_down_no_spread),
		cmocka_unit_test(test_write_to_down_replica),
		cmocka_unit_test(test_replica_set_flip),
	};
	int rc;

	t_eal_setup("dp_hot", "0", 1);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	return t_eal_teardown(rc);
}
