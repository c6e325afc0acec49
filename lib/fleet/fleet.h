/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_FLEET_H
#define RINGWAY_FLEET_H

/**
 * @file
 * A small etcd v3 client over its HTTP/JSON gateway (etcd 3.4: `/v3/kv/range`, `/v3/kv/put`,
 * `/v3/kv/txn`, `/v3/watch`, `/v3/lease/grant`, `/v3/lease/keepalive`), built on libcurl and
 * jansson. No DPDK. Keys and values travel base64-encoded, revisions and lease ids as JSON
 * strings; this library hides both.
 *
 * Endpoints: a comma-separated list of base URLs (`http://127.0.0.1:2379,http://...`). A call
 * tries the current endpoint first; when it cannot be reached (connection refused or reset,
 * timeout) the next one is tried, once each, and the first that answers becomes current.
 *
 * Errors: constructors return NULL and set errno; calls return 0 (or a count) or a negative
 * errno, with a reason in @p err: -ECONNREFUSED no endpoint reachable, -ETIMEDOUT no answer
 * in time, -EPROTO an answer that is not what etcd sends, -EIO etcd refused the request (its
 * message in @p err), -ENOENT the lease is gone, -ENOMEM.
 *
 * Threading: one client per thread; nothing is shared between clients. Call
 * fl_global_init() once before any thread makes a client.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** libcurl's global set-up; 0 or -EIO. */
int fl_global_init(void);

struct fl_client;

/** A client over @p endpoints; @p timeout_ms bounds each unary call. NULL + errno (EINVAL). */
struct fl_client *fl_client_new(const char *endpoints, int timeout_ms);
void fl_client_free(struct fl_client *c);
/** The endpoint the next call tries first. */
const char *fl_client_endpoint(const struct fl_client *c);

/** One key-value pair. */
struct fl_kv {
	char *key;   /**< NUL-terminated (keys here are text) */
	char *value; /**< NUL-terminated; may hold NULs: use value_len */
	size_t value_len;
	int64_t mod_revision; /**< the revision of its last change */
	int64_t create_revision;
	int64_t lease; /**< 0: none */
};

struct fl_range {
	int64_t revision; /**< the store's revision when it answered */
	uint32_t count;
	struct fl_kv *kvs;
};

/** Read @p key, or every key starting with it when @p prefix. 0 (count 0: none) or < 0. */
int fl_range(struct fl_client *c, const char *key, bool prefix, struct fl_range *out, char *err,
	     size_t errlen);
/** Free what a range holds and zero it. */
void fl_range_clear(struct fl_range *r);

/** Put @p key = @p value (under @p lease, 0: none). *revision (may be NULL): the new one. */
int fl_put(struct fl_client *c, const char *key, const void *value, size_t len, int64_t lease,
	   int64_t *revision, char *err, size_t errlen);

/**
 * Put @p key = @p value only if the key's mod_revision is still @p expect (0: the key does
 * not exist): one etcd transaction. @return 1 put (*revision the new revision), 0 refused
 * (the key moved on; *revision the store's revision), or < 0.
 */
int fl_txn_put(struct fl_client *c, const char *key, int64_t expect, const void *value, size_t len,
	       int64_t *revision, char *err, size_t errlen);

/** A lease of @p ttl_s seconds: its id. */
int fl_lease_grant(struct fl_client *c, int ttl_s, int64_t *id, char *err, size_t errlen);
/** Renew lease @p id once: *ttl_s its time to live now. -ENOENT when it expired. */
int fl_lease_keepalive(struct fl_client *c, int64_t id, int *ttl_s, char *err, size_t errlen);

/** What a watch reports. */
enum fl_event_type {
	FL_EV_PUT,
	FL_EV_DELETE,
	FL_EV_COMPACTED, /**< start revision compacted away: read afresh, watch from there */
};

struct fl_event {
	enum fl_event_type type;
	struct fl_kv kv;	  /**< PUT, DELETE (key and mod_revision only) */
	int64_t compact_revision; /**< COMPACTED */
};

/** Free what an event holds and zero it. */
void fl_event_clear(struct fl_event *ev);

struct fl_watch;

/**
 * Watch @p key from revision @p start (0: from now), a streaming request on the current
 * endpoint. It asks etcd to end the stream when its member loses the leader, so a partition
 * shows up as an error. NULL + errno.
 */
struct fl_watch *fl_watch_open(struct fl_client *c, const char *key, int64_t start);
/**
 * The next event, waiting at most @p timeout_ms. @return 1 and *ev (clear it), 0 nothing in
 * time, or < 0 when the stream ended or failed (-EPIPE the server closed it, -ECANCELED etcd
 * cancelled it; the client moves to the next endpoint): close it and open another.
 */
int fl_watch_next(struct fl_watch *w, int timeout_ms, struct fl_event *ev, char *err,
		  size_t errlen);
void fl_watch_close(struct fl_watch *w);

/*
 * base64 (RFC 4648, with padding), as the gateway wants keys and values.
 */

/** Bytes fl_base64_encode writes for @p len input bytes, NUL included. */
size_t fl_base64_encoded_size(size_t len);
/** Encode into @p out (fl_base64_encoded_size(len) bytes); returns the length written. */
size_t fl_base64_encode(const void *in, size_t len, char *out);
/**
 * Decode @p len characters into a new NUL-terminated buffer *out (*outlen bytes, NUL not
 * counted). -EINVAL for a character outside the alphabet, bad padding or a length that is
 * not a multiple of 4; -ENOMEM.
 */
int fl_base64_decode(const char *in, size_t len, char **out, size_t *outlen);

/*
 * The fleet's layout in etcd (docs/fleets.md, "Layout in etcd"):
 *   <prefix>/<cluster>/membership       the membership, state-file text; its mod_revision is
 *                                       the fleet epoch
 *   <prefix>/<cluster>/routers/<name>   one per router, under its agent's lease: a report
 */

/** Longest key built here. */
#define FL_KEY_MAX 512

/** "<prefix>/<cluster>/membership" into @p out; -ENAMETOOLONG, -EINVAL (empty part, '/' in
 * cluster). */
int fl_key_membership(const char *prefix, const char *cluster, char out[FL_KEY_MAX]);
/** "<prefix>/<cluster>/routers/" + @p name ("" for the directory's prefix). */
int fl_key_router(const char *prefix, const char *cluster, const char *name, char out[FL_KEY_MAX]);

/** What an agent reports about its router. */
struct fl_report {
	int64_t revision;	/**< the fleet revision the router holds (0: none yet) */
	uint64_t digest;	/**< the router's placement digest */
	int64_t applied_ms;	/**< wall clock (ms since the epoch) when it was applied */
	int64_t error_revision; /**< the revision refused (0: none) */
	char error[256];	/**< why ("" when none) */
};

/** The report as one JSON object (the key's value). Caller frees. NULL: ENOMEM. */
char *fl_report_format(const struct fl_report *r);
/** Parse a report value; -EPROTO when it is not one. */
int fl_report_parse(const char *text, size_t len, struct fl_report *r);

#ifdef __cplusplus
}
#endif

#endif /* RINGWAY_FLEET_H */
