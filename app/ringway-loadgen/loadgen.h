/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ringway-loadgen: a memcached UDP load generator on one DPDK port.
 *
 * One lcore (the main one) does everything: it builds requests into mbufs at a TSC-paced
 * rate, transmits them, polls RX for replies (and ARP), matches replies to in-flight requests
 * by the frame header's request id, and retires requests that time out. Nothing is allocated
 * per packet: keys are written straight into the mbuf, the key distribution is a table built
 * at start-up, the in-flight table is indexed by request id.
 *
 * Files: main.c (options, EAL, port, phases, report), gen.c (the run loop), req.c (keys,
 * distributions and request building), hist.c (latency histogram).
 */
#ifndef RINGWAY_LOADGEN_H
#define RINGWAY_LOADGEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "mcproto.h"

/* ---------------------------------------------------------------- options */

enum lg_dist {
	LG_DIST_UNIFORM,
	LG_DIST_ZIPF,
};

struct lg_opts {
	uint32_t src_ip; /* network order */
	uint16_t sport_base;
	uint16_t sport_count;
	uint32_t dst_ip; /* network order */
	uint16_t dst_port;
	uint32_t gw_ip; /* next hop to ARP for; network order; default dst_ip */
	struct rte_ether_addr dst_mac;
	bool have_dst_mac;
	bool arp;
	uint16_t port_id;
	double rate;	 /* requests per second; 0: as fast as the window allows */
	uint32_t window; /* most requests in flight */
	double duration_s;
	uint32_t timeout_ms;
	double get_ratio;
	uint32_t keys;
	enum lg_dist dist;
	double zipf_s;
	uint32_t value_size;
	uint32_t key_size; /* 0: prefix + the fewest digits */
	enum mc_proto proto;
	char key_prefix[MC_KEY_MAX + 1];
	const char *json_path;
	bool preload;
	uint16_t burst;
	uint64_t seed;
	uint32_t idle_us; /* sleep after idle turns; 0: spin */
	bool quiet;
	uint16_t queues;   /* queue pairs on the port: requests leave on each in turn per burst */
	uint16_t multiget; /* keys per GET (ASCII only); 1: single-key */
	/* Node emulator (--nodes): answers requests to node_net/node_mask:node_port. */
	bool nodes;
	uint32_t node_net, node_mask; /* network order */
	uint16_t node_port;
	uint32_t node_value_size;
	double node_hit_ratio;
	uint32_t node_delay_us;
	double node_cross; /* share of replies sent on the next queue */
	bool serve;	   /* --serve: the nodes only, nothing sent */
	/* RFC 2544 search (--search): binary search on the rate for zero loss. */
	bool search;
	double search_lo, search_hi; /* requests per second */
	double trial_s;
	double loss_max;	/* largest loss ratio that passes */
	uint32_t search_steps;	/* trials of the search at most */
	uint32_t search_repeat; /* trials per rate; all must pass */
	double search_res;	/* stop when (hi - lo) / hi is below it */
	double lat_trial_s;	/* latency trials at 10 / 50 / 90 % of the zero-loss rate */
	uint32_t trial_gap_ms;	/* between trials: the router's slots and contexts drain */
	uint32_t series_ms;	/* hit ratio over time: bucket width of the timed run */
};

/* ---------------------------------------------------------------- latency histogram */

/* Log-linear: values below 2^LG_HIST_SUB exactly, above that 2^LG_HIST_SUB buckets per power
 * of two (relative error under 1/64). Values are TSC cycles. */
#define LG_HIST_SUB	6
#define LG_HIST_BUCKETS ((64 - LG_HIST_SUB + 1) << LG_HIST_SUB)

struct lg_hist {
	uint64_t count;
	uint64_t sum;
	uint64_t min;
	uint64_t max;
	uint64_t b[LG_HIST_BUCKETS];
};

void lg_hist_reset(struct lg_hist *h);
void lg_hist_add(struct lg_hist *h, uint64_t v);
/* The value below which a fraction @p q (0..1) of the recorded values lie (bucket midpoint,
 * clamped to [min, max]); 0 when empty. */
uint64_t lg_hist_quantile(const struct lg_hist *h, double q);
/* Exposed for the unit-style self check in the tests: bucket of a value and its bounds. */
unsigned int lg_hist_index(uint64_t v);
uint64_t lg_hist_low(unsigned int i);

/* ---------------------------------------------------------------- hit ratio over time */

/* What a bucket counts: GETs answered with a value, GETs answered without one, requests lost
 * (no whole reply within the timeout). Every request is put in the bucket of its send time. */
enum lg_series_what { LG_SER_HIT, LG_SER_MISS, LG_SER_LOST, LG_SER_COUNT };

struct lg_series_bucket {
	uint32_t n[LG_SER_COUNT];
};

struct lg_series {
	uint64_t interval_tsc; /* bucket width */
	uint32_t n;	       /* buckets; times past the last one count in the last one */
	uint32_t used;	       /* 1 + the highest bucket counted in */
	struct lg_series_bucket *b;
};

/* @p n buckets of @p interval_tsc each; 0, -EINVAL (interval 0) or -ENOMEM. */
int lg_series_init(struct lg_series *s, uint64_t interval_tsc, uint32_t n);
void lg_series_free(struct lg_series *s);
/* The bucket of time @p t (TSC cycles since the series' start). */
uint32_t lg_series_index(const struct lg_series *s, uint64_t t);
/* Count one @p what at time @p t; a series without table (init failed) counts nothing. */
void lg_series_add(struct lg_series *s, uint64_t t, enum lg_series_what what);
/* Hits / (hits + misses) of bucket @p i, or -1 when it holds no GET result. */
double lg_series_ratio(const struct lg_series *s, uint32_t i);
/* The lowest ratio of the buckets [from, to) that hold GET results (its index in *at), or -1
 * when none does. */
double lg_series_min(const struct lg_series *s, uint32_t from, uint32_t to, uint32_t *at);

/* ---------------------------------------------------------------- keys and requests */

struct lg_rng {
	uint64_t s;
};

static inline uint64_t lg_rand(struct lg_rng *r)
{
	/* xorshift64*: fast, good enough for key choice and the GET/SET coin. */
	uint64_t x = r->s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* A uniform double in [0, 1). */
static inline double lg_rand01(struct lg_rng *r)
{
	return (double)(lg_rand(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Key choice: uniform, or zipf through an alias table (Walker/Vose) built at start-up from
 * the zipf probabilities: one random entry read per pick, whatever the key count. */
struct lg_alias {
	uint32_t thresh; /* keep this entry when a uniform 32-bit coin is below thresh */
	uint32_t alias;	 /* else take this one */
};

struct lg_keys {
	uint32_t n;
	enum lg_dist dist;
	struct lg_alias *alias; /* zipf: n entries */
	char prefix[MC_KEY_MAX + 1];
	uint16_t prefix_len;
	uint16_t digits;  /* decimal digits after the prefix, zero-padded */
	uint16_t key_len; /* prefix_len + digits */
};

int lg_keys_init(struct lg_keys *k, const struct lg_opts *o);
void lg_keys_free(struct lg_keys *k);
uint32_t lg_keys_pick(const struct lg_keys *k, struct lg_rng *r);
/* Writes key @p idx (k->key_len bytes) at @p p. */
void lg_key_write(const struct lg_keys *k, uint32_t idx, uint8_t *p);

enum lg_op {
	LG_OP_GET,
	LG_OP_SET,
};

/* Builds request payloads (after the frame header) and knows their largest size. */
struct lg_req {
	const struct lg_keys *keys;
	enum mc_proto proto;
	uint32_t value_size;
	uint32_t multiget; /* keys per GET, >= 1 (ASCII only) */
	uint8_t *value;	   /* value_size bytes of a fixed pattern */
	char value_len_text[12];
	uint8_t value_len_text_len;
	/* Parsed examples of a GET and a SET, so the reply parser knows what to expect. */
	struct mc_requests *tmpl[2];
};

int lg_req_init(struct lg_req *q, const struct lg_keys *k, const struct lg_opts *o);
void lg_req_free(struct lg_req *q);
/* Payload bytes (frame header excluded) of the largest request @p op. */
uint32_t lg_req_max_len(const struct lg_req *q, enum lg_op op);
/* Write request @p op for key @p idx at @p p (room for lg_req_max_len()); returns its length.
 * Binary requests carry @p opaque in their header. */
uint32_t lg_req_write(const struct lg_req *q, enum lg_op op, uint32_t idx, uint32_t opaque,
		      uint8_t *p);

/* ---------------------------------------------------------------- request frames (tmpl.c) */

#define LG_HDR_LEN    (RTE_ETHER_HDR_LEN + 20 + 8) /* Ethernet + IPv4 + UDP */
#define LG_MULTIGET_MAX 100

/* One request kind (GET or SET) as a whole frame for key 0, request 0, source port 0, IP id
 * 0, with its checksums' sums: a request is this copied, a few fields written, and both
 * checksums updated by what those fields add. */
struct lg_tmpl {
	uint8_t *frame;
	uint16_t len;	     /* frame bytes (keys have a fixed length) */
	uint16_t opaque_off; /* binary: the header's opaque; 0: none */
	uint16_t ip_sum;     /* folded sum of the IPv4 header, checksum 0 */
	uint16_t udp_sum;    /* folded sum of the pseudo-header and the datagram, checksum 0 */
	uint16_t digits;
	uint16_t nkeys;			     /* keys in the request: multi-get ones */
	uint16_t key_end[LG_MULTIGET_MAX];   /* frame offset just after each key */
	uint32_t key_n;			     /* keys in the key space */
};

/* The Ethernet + IPv4 + UDP header of every request (lengths, ids, checksums 0). */
void lg_frame_hdr_init(uint8_t *hdr, const struct rte_ether_addr *src_mac,
		       const struct rte_ether_addr *dst_mac, const struct lg_opts *o);
/* The old builder, kept as the reference: every byte written, both checksums computed over
 * the whole frame. Request number @p n, key @p key; returns the frame length. */
uint32_t lg_frame_build_ref(const struct lg_req *q, const uint8_t *hdr, enum lg_op op,
			    uint32_t key, uint32_t n, uint16_t sport, uint16_t ip_id, uint8_t *p);
/* 0 or -ENOMEM. */
int lg_tmpl_init(struct lg_tmpl *t, const struct lg_req *q, enum lg_op op, const uint8_t *hdr);
void lg_tmpl_free(struct lg_tmpl *t);
/* The same bytes lg_frame_build_ref() writes, from the template; returns the frame length. */
uint32_t lg_tmpl_write(const struct lg_tmpl *t, uint32_t key, uint32_t n, uint16_t sport,
		       uint16_t ip_id, uint8_t *p);
/* A 32-bit sum of 16-bit words folded to 16 bits, ones' complement (end-around carry). */
uint16_t lg_cksum_fold(uint32_t s);

/* The reply a hit to one kind of request gets, learnt from the first one the reply parser
 * found whole, a hit of the right value size: a later reply equal to it outside the key (ASCII)
 * or the opaque (binary) is that same hit, without the parser. */
struct lg_expect {
	bool valid;
	bool key_chars; /* the skipped span is a key: graphic ASCII, no space */
	uint16_t len;	/* payload bytes after the frame header */
	uint16_t skip_off, skip_len;
	uint8_t b[1400];
};

/* Does the key (memcached's rule: no space, control byte or DEL) at @p k (@p len bytes) hold a byte <= 0x20 or 0x7f? (mcproto's word test) */
static inline bool lg_key_special(const uint8_t *k, uint32_t len)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	uint64_t acc = 0;

	if (len < 8) {
		for (uint32_t i = 0; i < len; i++)
			if (k[i] <= 0x20 || k[i] == 0x7f)
				return true;
		return false;
	}
	for (uint32_t i = 0;; i += 8) {
		uint64_t x, d;

		if (i + 8 > len)
			i = len - 8; /* the last word overlaps the one before */
		memcpy(&x, k + i, 8);
		d = x ^ (ones * 0x7f);
		acc |= ((x - ones * 0x21) & ~x & highs) | ((d - ones) & ~d & highs);
		if (i + 8 == len)
			break;
	}
	return acc != 0;
}

/* Learn from @p p (@p len bytes after the frame header), a whole single hit of a request in
 * @p proto with keys of @p key_len bytes. */
void lg_expect_learn(struct lg_expect *x, enum mc_proto proto, const uint8_t *p, uint32_t len,
		     uint16_t key_len);
/* Is @p p the learnt hit (outside the skipped span)? */
bool lg_expect_match(const struct lg_expect *x, const uint8_t *p, uint32_t len);

/* ---------------------------------------------------------------- node replies (nodereply.c) */

#define LG_NODE_DGRAM_BODY 1400 /* memcached's UDP_MAX_PAYLOAD_SIZE, after the frame header */
#define LG_NODE_BODY_MAX   (256 * 1024)
#define LG_REPLY_TMPLS	   16

/* What a templated reply depends on (compared whole: padding zeroed). */
struct lg_reply_shape {
	uint8_t proto, cmd, opcode, flags;
	uint8_t hit;
	uint8_t args_len; /* meta: the flag tokens, as sent */
	uint16_t key_len;
	uint16_t key_off;    /* body offset of the echoed key; 0xffff: none */
	uint16_t opaque_off; /* binary: the response's opaque; 0xffff: none */
	uint8_t args[32];
};

struct lg_reply_tmpl {
	bool valid;   /* body, len and sum hold the shape's reply */
	bool general; /* the shape takes the general path (a reply of several datagrams) */
	struct lg_reply_shape shape;
	uint16_t len;			    /* body bytes, one datagram */
	uint16_t sum;			    /* folded sum of the body, key and opaque zeroed */
	/* The reply's IPv4 header with addresses, IP id and checksum 0, and the sums the two
	 * checksums start from: the header's, and the pseudo-header's (addresses 0) + the UDP
	 * header's (ports and checksum 0) + the frame header's (request id 0) + the body's. */
	uint8_t ip_hdr[20];
	uint16_t ip_sum0, udp_sum0;
	uint8_t body[LG_NODE_DGRAM_BODY];
};

/* A learnt request (the node's fast path): the payload bytes of a request that took a reply
 * template, with the spans that vary per request masked out (the frame header's request id,
 * the key, the binary opaque). A datagram of the same length equal to it outside those spans,
 * whose key holds no byte <= 0x20 and no 0x7f, parses as the same request for another key
 * (the key's bytes cannot end or split it), so its reply is the same template's, without
 * the parser. How it ends: a slot is overwritten by the next request learnt into it (round
 * robin) and freed with the node; nothing else refers to it. */
#define LG_REQ_PATS	 4
#define LG_REQ_PAT_WORDS 16 /* requests of up to 8 x 16 bytes */
struct lg_req_pat {
	uint16_t len; /* payload bytes, frame header included; 0: slot unused */
	uint16_t key_off, key_len;
	uint16_t opaque_off; /* binary: payload offset of the opaque; 0xffff: none */
	uint8_t nw;	     /* compared words */
	uint16_t woff[LG_REQ_PAT_WORDS];
	uint64_t want[LG_REQ_PAT_WORDS], mask[LG_REQ_PAT_WORDS];
	bool have[2];			/* [hit]: rt[hit] learnt */
	struct lg_reply_tmpl rt[2];	/* [hit]: own copies (template slots get reused) */
};

/* The node emulator's reply state, EAL-free (the unit test builds one). */
struct lg_node_core {
	uint64_t hit_thresh; /* keys whose 53-bit hash is below it are held */
	uint32_t value_size;
	uint8_t *value;
	char value_len_text[12];
	uint8_t value_len_text_len;
	uint8_t *body;		 /* LG_NODE_BODY_MAX bytes: one reply before it is cut */
	struct mc_requests *req; /* the request datagram, parsed */
	struct lg_reply_tmpl tmpl[LG_REPLY_TMPLS];
	struct lg_req_pat pat[LG_REQ_PATS];
	uint8_t npat, pat_next; /* slots in use; the next one to learn into */
};

/* Does the node hold key @p k? (FNV-1a 64, mixed; the same keys miss every time.) */
bool lg_node_key_held(const struct lg_node_core *nd, const uint8_t *k, uint32_t len);
/* The whole reply to nd->req (parsed from datagram payload @p payload) into nd->body; false
 * when it outgrows LG_NODE_BODY_MAX. Counts hits, misses and SETs into @p ctr. */
bool lg_node_body(struct lg_node_core *nd, const uint8_t *payload, uint64_t *ctr, uint32_t *len);
/* The old datagram builder (every byte, both checksums over the whole datagram): datagram
 * @p seq of @p total carrying @p len body bytes, the request's headers @p req_hdr turned
 * round. Returns the frame length. */
uint32_t lg_node_dgram_ref(const uint8_t *req_hdr, const struct rte_ether_addr *src_mac,
			   uint16_t ip_id, uint16_t reqid, uint16_t seq, uint16_t total,
			   const uint8_t *body, uint32_t len, uint8_t *p);
/* The template for nd->req's reply (learnt on first sight of its shape), or NULL when the
 * request takes the general path. Counts nothing. */
const struct lg_reply_tmpl *lg_node_tmpl(struct lg_node_core *nd, const uint8_t *payload,
					 bool hit);
/* The reply frame from template @p t: the same bytes lg_node_dgram_ref() writes for the body
 * lg_node_body() builds. Returns the frame length. */
uint32_t lg_node_tmpl_write(const struct lg_node_core *nd, const struct lg_reply_tmpl *t,
			    const uint8_t *req_hdr, const uint8_t *payload,
			    const struct rte_ether_addr *src_mac, uint16_t ip_id, uint8_t *out);

/* The request nd->req, parsed from @p payload (@p len bytes), took template @p t with key
 * verdict @p hit: learn its bytes for the fast path (requests of more than 128 bytes are not
 * learnt). */
void lg_node_pat_learn(struct lg_node_core *nd, const uint8_t *payload, uint32_t len, bool hit,
		       const struct lg_reply_tmpl *t);
/* The node's fast path: when @p payload (@p len bytes) is a learnt request whose reply template
 * for its key's verdict is known, the reply frame (the same bytes as lg_node_dgram_ref() of
 * lg_node_body()) into @p out, which may be @p req_hdr itself (the reply overwrites the
 * request: everything the reply needs is read first), if it fits in @p room bytes. Returns
 * the frame length with *hit set, or 0: the datagram takes the general path. */
uint32_t lg_node_fast(const struct lg_node_core *nd, const uint8_t *req_hdr,
		      const uint8_t *payload, uint32_t len, const struct rte_ether_addr *src_mac,
		      uint16_t ip_id, uint32_t room, uint8_t *out, bool *hit);

/* ---------------------------------------------------------------- the run */

/* Counters of one phase (preload or the timed run). */
#define LG_FOREACH_CTR(_)                                                                        \
	_(SENT, "sent") /* requests handed to the port */                                        \
	_(SENT_GET, "sent_get")                                                                  \
	_(SENT_SET, "sent_set")                                                                  \
	_(REPLIES, "replies")	    /* requests whose reply arrived whole */                     \
	_(LOST, "lost")		    /* no complete reply within the timeout */                   \
	_(HITS, "hits")		    /* GET answered with a value */                              \
	_(MISSES, "misses")	    /* GET answered without one */                               \
	_(STORED, "stored")	    /* SET answered STORED / HD / binary OK */                   \
	_(NOT_STORED, "not_stored") /* SET answered otherwise (not an error) */                  \
	_(ERRORS, "errors")	    /* ERROR, CLIENT_ERROR, SERVER_ERROR, bin status */          \
	_(VALUE_SIZE_MISMATCH, "value_size_mismatch") /* hit with another length */              \
	_(RX_PACKETS, "rx_packets")		      /* every frame polled */                   \
	_(RX_DATAGRAMS, "rx_datagrams")		      /* reply datagrams matched to a request */ \
	_(RX_LATE, "rx_late")		/* reply for a retired or unknown request id */          \
	_(RX_DUPLICATE, "rx_duplicate") /* datagram seen before */                               \
	_(RX_BAD_REPLY, "rx_bad_reply") /* frame or reply that does not parse */                 \
	_(RX_STRAY, "rx_stray")		/* UDP not from --dst or not to our ports */             \
	_(RX_OTHER, "rx_other")		/* not ARP, not IPv4/UDP for us */                       \
	_(ARP_REPLIES_SENT, "arp_replies_sent")                                                  \
	_(TX_RETRIES, "tx_retries")	  /* bursts the port took only partly */                 \
	_(ALLOC_FAILED, "alloc_failed")	  /* mbuf pool empty */                                  \
	_(WINDOW_FULL, "window_full")	  /* a due request waited for the in-flight window */    \
	_(NODE_REQUESTS, "node_requests") /* datagrams to an emulated node */                    \
	_(NODE_HITS, "node_hits")                                                                \
	_(NODE_MISSES, "node_misses")                                                            \
	_(NODE_SETS, "node_sets")                                                                \
	_(NODE_DATAGRAMS, "node_datagrams") /* reply datagrams the port took */                  \
	_(NODE_CROSS, "node_cross")	    /* replies steered to the next queue */              \
	_(NODE_BAD_REQUEST, "node_bad_request")                                                  \
	_(NODE_TX_DROPPED, "node_tx_dropped")                                                    \
	_(TX_BYTES, "tx_bytes")	    /* Ethernet frame bytes of the requests sent */              \
	_(RX_BYTES, "rx_bytes")	    /* of every frame polled */                                  \
	_(NODE_BYTES, "node_bytes") /* of the emulated nodes' reply datagrams sent */

enum lg_ctr {
#define LG_CTR_ENUM(e, s) LG_CTR_##e,
	LG_FOREACH_CTR(LG_CTR_ENUM)
#undef LG_CTR_ENUM
		LG_CTR_COUNT
};

extern const char *const lg_ctr_names[LG_CTR_COUNT];

/* One in-flight request, indexed by its 16-bit request id. */
struct lg_slot {
	uint64_t tsc;  /* send time */
	uint64_t seen; /* datagrams seen, bit = seq (seq >= 64 are counted, not deduplicated) */
	uint32_t key;
	uint16_t sport;
	uint16_t total; /* datagrams of the reply, from the first one that arrived */
	uint16_t got;
	uint8_t live;
	uint8_t op;	/* enum lg_op */
	uint8_t result; /* enum mc_result of the first item, 0xff until datagram 0 arrived */
	uint8_t pad[7];
};

#define LG_IDS 65536u

struct lg_phase_result {
	uint64_t ctr[LG_CTR_COUNT];
	double elapsed_s; /* sending time */
	struct lg_hist lat;
	/* The timed run (lg_gen_run) only: results per --series-ms of send time from start_unix
	 * (CLOCK_REALTIME seconds when the run began, to line events up with the curve). */
	struct lg_series series;
	double start_unix;
};

struct lg_gen;

/* Everything the run loop needs; set up by main.c. */
struct lg_env {
	const struct lg_opts *o;
	struct lg_keys *keys;
	struct lg_req *req;
	struct rte_mempool *pool;
	struct rte_ether_addr src_mac;
	struct rte_ether_addr dst_mac; /* resolved */
	uint64_t hz;
	uint32_t mtu;
	volatile int *stop; /* set by SIGINT / SIGTERM */
};

/* The node emulator (node.c): replies to requests sent to --nodes addresses. */
struct lg_node;

struct lg_node *lg_node_create(const struct lg_env *env);
void lg_node_free(struct lg_node *nd);
/* @p ip (network order) is an emulated node's address. */
bool lg_node_owns(const struct lg_node *nd, uint32_t ip);
/* Answer the request datagram (UDP payload @p payload) in @p m, received on queue @p q; the
 * caller still owns @p m. Counts into @p ctr. */
bool lg_node_rx(struct lg_node *nd, struct rte_mbuf *m, const uint8_t *payload, uint32_t plen,
		uint16_t q, uint64_t now, uint64_t *ctr);
/* Send delayed replies that are due and flush the TX buffers; returns datagrams handled. */
uint32_t lg_node_poll(struct lg_node *nd, uint64_t now, uint64_t *ctr);
/* Replies waiting for their delay. */
uint32_t lg_node_pending(const struct lg_node *nd);

struct lg_gen *lg_gen_create(const struct lg_env *env);
void lg_gen_free(struct lg_gen *g);
/* ARP for the next hop until answered or @p timeout_ms pass; 0 and env->dst_mac set, or
 * -ETIMEDOUT. Answers ARP for our address meanwhile. */
int lg_gen_resolve(struct lg_gen *g, struct lg_env *env, uint32_t timeout_ms);
/* SET every key once (retrying keys not stored, up to @p passes); fills @p r. */
void lg_gen_preload(struct lg_gen *g, unsigned int passes, struct lg_phase_result *r);
/* The timed run. */
void lg_gen_run(struct lg_gen *g, struct lg_phase_result *r);
/* Keep answering (as the nodes) and polling for @p ms, sending nothing. */
void lg_gen_settle(struct lg_gen *g, uint32_t ms);
/* One timed trial at @p rate requests per second (0: unpaced) for @p seconds. */
void lg_gen_trial(struct lg_gen *g, double rate, double seconds, struct lg_phase_result *r);
/* Keys the preload could not store. */
uint32_t lg_gen_preload_missing(const struct lg_gen *g);

#endif /* RINGWAY_LOADGEN_H */
