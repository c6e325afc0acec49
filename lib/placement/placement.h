/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_PLACEMENT_H
#define RINGWAY_PLACEMENT_H

/**
 * @file
 * Key placement: which member of a cache fleet owns a key.
 *
 * A placement is an immutable object built from a member list and a configuration.
 * Once built it may be read by any number of threads at once without locks; it is freed
 * by whoever built it once no reader can still hold it (the router uses RCU for that).
 * No DPDK: this library is used by the worker cores, the planner, tests and fuzzers alike.
 *
 * Errors: constructors return NULL and set errno; other calls return 0 or a negative errno.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Longest member name, without the terminating NUL. */
#define PL_NAME_MAX 63
/** Longest address text (IPv4 dotted quad or host name), without the NUL. */
#define PL_ADDR_MAX 63
/** Most members one placement holds. */
#define PL_MEMBERS_MAX 65536
/** Default tokens per unit of weight for the `ring` algorithm. */
#define PL_DEFAULT_VNODES 160
/** Default Maglev lookup table size (a prime). */
#define PL_DEFAULT_MAGLEV_TABLE 65537
/** Longest key a lookup accepts (memcached's limit). */
#define PL_KEY_MAX 250
/** Largest member weight the tools, the config and the control socket accept (one limit). */
#define PL_WEIGHT_MAX 10000

/** Placement algorithms, by the name the config and tools use. */
#define PL_FOREACH_ALGO(_)                                                                   \
	_(RING, "ring")             /* XXH3 consistent-hash ring, vnodes per weight unit */   \
	_(KETAMA, "ketama")         /* libmemcached KETAMA_WEIGHTED, bit-exact */              \
	_(TWEMPROXY, "twemproxy")   /* nutcracker distribution: ketama, bit-exact */           \
	_(JUMP, "jump")             /* Lamping & Veach jump consistent hash */                 \
	_(RENDEZVOUS, "rendezvous") /* highest random weight, weighted */                      \
	_(MAGLEV, "maglev")         /* Maglev lookup table, prime size */                      \
	_(MODULO, "modulo")         /* hash mod N: reference only, not minimal */

enum pl_algo {
#define PL_ALGO_ENUM(e, s) PL_ALGO_##e,
	PL_FOREACH_ALGO(PL_ALGO_ENUM)
#undef PL_ALGO_ENUM
	PL_ALGO_COUNT
};

/** Key hash functions; the compatibility recipes name theirs (twemproxy's `hash:`). */
#define PL_FOREACH_HASH(_)                        \
	_(XXH3, "xxh3")                           \
	_(MD5, "md5")                             \
	_(FNV1A_64, "fnv1a_64")                   \
	_(FNV1_64, "fnv1_64")                     \
	_(FNV1A_32, "fnv1a_32")                   \
	_(FNV1_32, "fnv1_32")                     \
	_(ONE_AT_A_TIME, "one_at_a_time")         \
	_(CRC32, "crc32")                         \
	_(CRC32A, "crc32a")                       \
	_(HSIEH, "hsieh")                         \
	_(MURMUR, "murmur")                       \
	_(JENKINS, "jenkins")

enum pl_hash {
#define PL_HASH_ENUM(e, s) PL_HASH_##e,
	PL_FOREACH_HASH(PL_HASH_ENUM)
#undef PL_HASH_ENUM
	PL_HASH_COUNT
};

/** One member of the fleet. A weight of 0 means drained: it owns nothing. */
struct pl_member {
	char name[PL_NAME_MAX + 1];
	char addr[PL_ADDR_MAX + 1]; /**< IPv4, host name or IPv6 (without brackets) */
	uint16_t port;
	uint32_t weight;
};

/** Longest text pl_member_endpoint() writes, with the NUL. */
#define PL_ENDPOINT_MAX (PL_ADDR_MAX + 9)

/** `addr:port`, or `[addr]:port` when addr is an IPv6 address (holds a ':'): the form the
 *  nodes file, the state file and `ringwayctl add` read back. */
void pl_member_endpoint(const struct pl_member *m, char out[PL_ENDPOINT_MAX]);

/** How to build a placement. Zero fields take the defaults noted. */
struct pl_config {
	enum pl_algo algo;      /**< default PL_ALGO_RING (0) */
	uint32_t vnodes;        /**< ring: tokens per unit of weight; 0 = PL_DEFAULT_VNODES */
	uint32_t maglev_size;   /**< maglev: table size, must be prime; 0 = default */
	enum pl_hash key_hash;  /**< twemproxy only: its `hash:`; 0 (xxh3) = fnv1a_64 there */
	char hash_tag[2];       /**< e.g. "{}": hash only the text between them; "\0\0" = off */
	/** Copies of every write: the first `replicas` distinct members of the key's replica
	 *  walk (pl_replicas) hold it; 0 or 1 = the owner alone. Where a key's copies go, not
	 *  who owns it: no part of the placement's points, the state file or the fleet digest
	 *  (the router reads it from its configuration; see docs/pools.md). At most
	 *  PL_REPLICAS_MAX. */
	uint32_t replicas;
};

/** Most copies of a write a replicated placement keeps (pl_config.replicas). */
#define PL_REPLICAS_MAX 8

struct pl_placement;

/**
 * Configuration fields an algorithm reads besides hash_tag (which every algorithm honours),
 * by the name the tools print them under; bits of pl_algo_info.params via PL_PARAM_BIT().
 */
#define PL_FOREACH_PARAM(_)                                                 \
	_(VNODES, "vnodes")           /* pl_config.vnodes */                \
	_(MAGLEV_SIZE, "maglev_size") /* pl_config.maglev_size */           \
	_(KEY_HASH, "key_hash")       /* pl_config.key_hash (else xxh3) */

enum pl_param {
#define PL_PARAM_ENUM(e, s) PL_PARAM_##e,
	PL_FOREACH_PARAM(PL_PARAM_ENUM)
#undef PL_PARAM_ENUM
	PL_PARAM_COUNT
};

#define PL_PARAM_BIT(p) (UINT32_C(1) << (p))

/** What a membership change moves under an algorithm (see docs/scaling.md, "Placement"). */
enum pl_movement {
	PL_MOVES_MINIMAL,      /**< only keys to or from the changed members */
	PL_MOVES_MINIMAL_LAST, /**< minimal when the last member changes; others renumber */
	PL_MOVES_NEAR_MINIMAL, /**< the table is refilled: a few more keys move */
	PL_MOVES_REPOINTED,    /**< every member's point count follows the fleet's total */
	PL_MOVES_MOST,	       /**< most keys move: a reference, not for use */
};

/** What the tools need to know about an algorithm without building it. */
struct pl_algo_info {
	const char *name;	   /**< as in PL_FOREACH_ALGO */
	uint32_t params;	   /**< PL_PARAM_BIT()s of the config fields it reads */
	enum pl_movement movement; /**< what a membership change moves */
	/** pl_moved_fraction() answers every change (else only some: see there) */
	bool moved_exact;
	uint8_t space_bits; /**< pl_key_hash() values lie in [0, 2^space_bits) */
	/** with PL_PARAM_KEY_HASH: the key hash a pl_config.key_hash of 0 (xxh3) stands for */
	enum pl_hash default_key_hash;
};

/** Descriptor of algorithm @p a, or NULL when out of range. */
const struct pl_algo_info *pl_algo_info(enum pl_algo a);
/** Parameter name ("vnodes") for @p p, or NULL when out of range. */
const char *pl_param_name(enum pl_param p);

/** Algorithm name ("ring") for @p a, or NULL when out of range. */
const char *pl_algo_name(enum pl_algo a);
/** Parse an algorithm name; 0 on success, -EINVAL when unknown. */
int pl_algo_parse(const char *name, enum pl_algo *out);
/** Hash function name for @p h, or NULL when out of range. */
const char *pl_hash_name(enum pl_hash h);
/** Parse a hash function name; 0 on success, -EINVAL when unknown. */
int pl_hash_parse(const char *name, enum pl_hash *out);

/**
 * Build a placement over @p n members (copied; the caller keeps its array).
 * Fails with EINVAL on bad config, duplicate or empty names, n == 0 or n > PL_MEMBERS_MAX;
 * also EINVAL past the size limits: 2^27 continuum points (sum of weight x vnodes for ring),
 * 2^26 jump/modulo buckets (sum of weights) or maglev entries (maglev_size must be a prime
 * >= the members with weight);
 * ENOMEM when memory runs out. Members with weight 0 are kept (they keep their index)
 * but own nothing; a placement where every weight is 0 is valid and owns nothing.
 * @return the placement, or NULL with errno set.
 */
struct pl_placement *pl_build(const struct pl_config *cfg, const struct pl_member *members,
			      uint32_t n);

/** Allocator hooks, so a copy of a placement can live in a worker's NUMA-local memory. */
struct pl_allocator {
	/** Return @p size bytes aligned to @p align (a power of two, at most 64), or NULL. */
	void *(*alloc)(size_t size, size_t align, void *ctx);
	void (*free)(void *ptr, void *ctx);
	void *ctx;
};

/**
 * Deep copy of @p p whose every byte comes from @p a (NULL: malloc). The copy answers every
 * lookup exactly as @p p does and is freed with pl_free(), which uses the same allocator.
 * @return the copy, or NULL with errno set (ENOMEM).
 */
struct pl_placement *pl_clone(const struct pl_placement *p, const struct pl_allocator *a);

/** Free a placement; NULL is fine. The caller guarantees no reader still uses it. */
void pl_free(struct pl_placement *p);

/** The configuration the placement was built with (defaults filled in). */
const struct pl_config *pl_config_of(const struct pl_placement *p);
/** Number of members (including drained ones). */
uint32_t pl_member_count(const struct pl_placement *p);
/** Member @p idx, or NULL when out of range. */
const struct pl_member *pl_member_at(const struct pl_placement *p, uint32_t idx);
/** Index of the member named @p name, or -ENOENT. */
int32_t pl_member_find(const struct pl_placement *p, const char *name);
/** Bytes of memory the placement holds (for reports). */
size_t pl_memory(const struct pl_placement *p);
/** Points on the continuum (ring/ketama/twemproxy), table size (maglev), else 0. */
uint64_t pl_point_count(const struct pl_placement *p);

/**
 * The key's hash as this placement's algorithm uses it, after applying the hash tag.
 * Split from the lookup so that callers can hash once and look up several times.
 */
uint64_t pl_key_hash(const struct pl_placement *p, const void *key, size_t len);

/**
 * Owner of a key hash from pl_key_hash(): a member index, or -ENOENT when no member has
 * a weight. Thread-safe, no allocation, constant time for the continuum algorithms
 * (indexed), O(members) for rendezvous.
 */
int32_t pl_lookup_hash(const struct pl_placement *p, uint64_t hash);

/**
 * Start loading the memory pl_lookup_hash(@p p, @p hash) will read (the continuum's index
 * entry; the slot table entry for jump, modulo and maglev), so that a caller with several
 * keys can hash them all, prefetch, then look them up with the misses overlapped. A hint
 * only: no effect on any answer, no fault for any hash.
 */
void pl_prefetch_hash(const struct pl_placement *p, uint64_t hash);

/** pl_lookup_hash(p, pl_key_hash(p, key, len)). */
int32_t pl_lookup(const struct pl_placement *p, const void *key, size_t len);

/**
 * Same answer as pl_lookup_hash() for continuum algorithms, by plain binary search over
 * the points, without the index. For tests and the benchmark; -ENOTSUP for others.
 */
int32_t pl_lookup_hash_bsearch(const struct pl_placement *p, uint64_t hash);

/**
 * Replica set of a key: up to @p r distinct members with weight, in the order the algorithm
 * prefers them (ring order walking clockwise from the key for continuum algorithms; score
 * order for rendezvous; for the others the buckets (jump, modulo) or table entries (maglev)
 * that follow the key's, cyclically). out[0] is the owner.
 * @return the number written (min(r, members with weight)), or a negative errno.
 */
int pl_replicas(const struct pl_placement *p, uint64_t hash, uint32_t *out, uint32_t r);

/**
 * Bounded-load owner: walk the replica order from the key and return the first member whose
 * load is below ceil((1 + eps) * average), where average = (sum(loads) + 1) / members with
 * weight (the +1 counts the key being placed). @p loads has pl_member_count() entries.
 * @return a member index, or -ENOENT when no member has weight, -EINVAL on eps < 0.
 */
int32_t pl_lookup_bounded(const struct pl_placement *p, uint64_t hash, const uint64_t *loads,
			  double eps);

/**
 * Share of the hash space each member owns, exactly, from arcs (continuum algorithms),
 * table entries (maglev) or the weight formula (jump, rendezvous, modulo).
 * @p shares has pl_member_count() entries. 0 or a negative errno.
 */
int pl_shares(const struct pl_placement *p, double *shares);

/**
 * Exact fraction of the hash space whose owner differs between @p from and @p to,
 * matching members by name. Both must use the same algorithm and key hash.
 * Computed from arcs (continuum) or table entries (maglev); for jump and modulo from
 * their closed forms (any change); for rendezvous when at most one member's weight differs
 * (adding and removing included), else -ENOTSUP. Different algorithm, key hash or hash tag:
 * -EINVAL.
 * @return 0 and *fraction in [0, 1], or a negative errno.
 */
int pl_moved_fraction(const struct pl_placement *from, const struct pl_placement *to,
		      double *fraction);

/**
 * Parse a nodes file: one member a line, `name address[:port] [weight]`; `#` starts a comment;
 * blank lines are ignored; the port defaults to 11211 and the weight to 1. An IPv6 address is
 * written in brackets (`[2001:db8::1]:11211`, `[2001:db8::1]`) and stored without them, in
 * RFC 5952 form.
 * @p text need not be NUL-terminated. On success *out is a malloc'd array (caller frees) of
 * *n members. On failure returns -EINVAL (or -ENOMEM) and writes "line L: what was expected"
 * to @p err (always NUL-terminated when errlen > 0); *out is left NULL.
 */
int pl_members_parse(const char *text, size_t len, struct pl_member **out, uint32_t *n,
		     char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* RINGWAY_PLACEMENT_H */
