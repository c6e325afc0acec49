/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_CONTROL_H
#define RINGWAY_CONTROL_H

/**
 * @file
 * The control plane without DPDK: membership state with epochs, the command protocol,
 * transactions, the state file, and a poll()-based management socket server.
 *
 * Threading: everything here runs on one thread (the router's control lcore, a test, a
 * tool). The only calls into the router are the ctl_ops callbacks, made from inside
 * ctl_server_poll() / ctl_session_line() on that same thread.
 *
 * Protocol (documented in docs/control.md): one command per line, one reply
 * per command. A reply's first line is `OK[ key value ...]` or `ERROR <reason>`. When the
 * first pair after OK is `lines N`, exactly N body lines follow. Values never hold spaces.
 *
 * Errors: constructors return NULL and set errno; other calls return 0 or a negative errno
 * and, where they take @p err, write a human-readable reason there (always NUL-terminated
 * when errlen > 0).
 *
 * Wiring on the router's control lcore:
 *   rc = ctl_state_load(state_path, &st, err, sizeof(err));
 *   if (rc == -ENOENT)  -> st = ctl_state_new(&cfg, 1) + ctl_state_replace(config's nodes)
 *   else if (rc < 0)    -> stop with err (the file is left untouched)
 *   e = ctl_engine_new(st, state_path, &ops);   ops.publish -> dp_publish_placement()
 *   publish ctl_engine_placement(e) to the workers once (epoch ctl_state_epoch(st))
 *   srv = ctl_server_open(e, &scfg, err, sizeof(err));
 *   loop: ctl_server_poll(srv, 10); other control-lcore housekeeping
 *   ctl_server_close(srv); ctl_engine_free(e);
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "placement.h"

struct rt_table;

#ifdef __cplusplus
extern "C" {
#endif

/** Longest command line, without the newline. Longer lines are refused, never buffered. */
#define CTL_LINE_MAX 4096
/** Largest member weight. Weight 0 (drained) is allowed only through `weight NAME 0`. */
#define CTL_WEIGHT_MAX PL_WEIGHT_MAX
/** Socket path used when neither the config nor the command line names one. */
#define CTL_DEFAULT_SOCKET "/run/ringway/ctl.sock"
/** Milliseconds a client may stay silent (or not read its replies) before it is disconnected. */
#define CTL_DEFAULT_IDLE_MS 30000

/** One member as the control plane keeps it: the placement member plus an optional MAC. */
struct ctl_member {
	struct pl_member pl; /**< name, address, port, weight */
	uint8_t mac[6];	     /**< static next-hop MAC when has_mac */
	bool has_mac;	     /**< false: the router resolves the MAC by ARP */
	/** `--keep`: if it joins (is new to the ring), serve what the node holds as it is;
	 *  else the router flushes it first (dp_publish_placement_flush). Said on the command
	 *  that adds it; neither saved, nor compared, nor part of the digest. */
	bool keep;
};

/*
 * Growable text: replies, stats, state files.
 */

/** A growable NUL-terminated buffer. Zero-initialise; release with ctl_text_release(). */
struct ctl_text {
	char *buf;  /**< NUL-terminated once anything was appended; may be NULL when empty */
	size_t len; /**< bytes of text, without the NUL */
	size_t cap; /**< allocated bytes */
	bool oom;   /**< an append ran out of memory: the text is incomplete */
};

/** Append formatted text. 0 or -ENOMEM (then oom is set and later appends do nothing). */
int ctl_text_appendf(struct ctl_text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/** Append @p len bytes. 0 or -ENOMEM. */
int ctl_text_append(struct ctl_text *t, const char *p, size_t len);
/** Forget the text, keep the memory. */
void ctl_text_reset(struct ctl_text *t);
/** Free the memory. */
void ctl_text_release(struct ctl_text *t);

/*
 * Membership state: members in placement order, the placement configuration, the epoch.
 * Member i of a state is member i of the placement built from it.
 */

struct ctl_state;

/** Empty state (no members) with @p cfg (NULL: defaults) at @p epoch. NULL + errno. */
struct ctl_state *ctl_state_new(const struct pl_config *cfg, uint64_t epoch);
/** Deep copy, or NULL with errno = ENOMEM. */
struct ctl_state *ctl_state_copy(const struct ctl_state *st);
/** Free; NULL is fine. */
void ctl_state_free(struct ctl_state *st);

uint64_t ctl_state_epoch(const struct ctl_state *st);
uint32_t ctl_state_count(const struct ctl_state *st);
/** Member @p idx, or NULL when out of range. */
const struct ctl_member *ctl_state_member(const struct ctl_state *st, uint32_t idx);
const struct pl_config *ctl_state_config(const struct ctl_state *st);
/** True when both hold the same epoch, configuration and members in the same order, and the
 *  same recorded routes (none on both, or the same table). */
bool ctl_state_equal(const struct ctl_state *a, const struct ctl_state *b);

/**
 * The route table @p st records (the state file's `routes` section), or NULL when it records
 * none: a state built from the config, or read from a file written before a live route change
 * (the config's [route] applies then). Routes are the router's, not the membership's: they
 * change neither the epoch nor the digest.
 */
const struct rt_table *ctl_state_routes(const struct ctl_state *st);
/** Record @p t with @p st (NULL: record none). No check here (ctl_state_check_routes). */
void ctl_state_set_routes(struct ctl_state *st, const struct rt_table *t);
/** Every member of @p st has a route in @p t (rt_lookup): 0, or -EINVAL with
 *  `node NAME: no route to ADDR` for the first that has none. */
int ctl_state_check_routes(const struct ctl_state *st, const struct rt_table *t, char *err,
			   size_t errlen);
/**
 * Describe how route tables @p a and @p b (named @p a_name, @p b_name) differ: appends
 * `only in A: R1, R2; only in B: R3` (`none` for an empty side) to @p out.
 * @return 0 when they hold the same routes (nothing appended), 1 when they differ, -ENOMEM.
 */
int ctl_routes_diff(const struct rt_table *a, const char *a_name, const struct rt_table *b,
		    const char *b_name, struct ctl_text *out);

/**
 * Parse a member spec `NAME ADDR[:PORT] [weight W] [mac MAC] [--keep]` (port default 11211,
 * weight default 1). Checks the syntax of each field and refuses an ADDR no node can have
 * (0.0.0.0/8, 127.0.0.0/8, multicast, reserved, broadcast); not membership rules.
 * @return 0, or -EINVAL with the reason in @p err.
 */
int ctl_member_parse(const char *text, size_t len, struct ctl_member *m, char *err, size_t errlen);

/**
 * Append a member to @p st (used to load the config's initial nodes). Refuses an invalid
 * name, a duplicate name or address:port, a weight above CTL_WEIGHT_MAX, more than
 * PL_MEMBERS_MAX members. The epoch does not change.
 * @return 0, or -EINVAL / -E2BIG / -ENOMEM with the reason in @p err; @p st is unchanged then.
 */
int ctl_state_add(struct ctl_state *st, const struct ctl_member *m, char *err, size_t errlen);

/**
 * Make the members of @p st exactly @p m[0..n), in that order (`replace`, and the fast way to
 * load many initial nodes: O(n log n), where n calls of ctl_state_add are O(n^2)). Refuses
 * what ctl_state_add refuses, an empty list, and a list where no member has a weight above 0.
 * The epoch does not change. 0, or -EINVAL / -ENOMEM with the reason; @p st is unchanged then.
 */
int ctl_state_replace(struct ctl_state *st, const struct ctl_member *m, uint32_t n, char *err,
		      size_t errlen);

/**
 * Check what any published membership must satisfy: at least one member, at least one with
 * weight > 0. 0 or -EINVAL with the reason.
 */
int ctl_state_check(const struct ctl_state *st, char *err, size_t errlen);

/**
 * Write @p st to @p path atomically: a temporary file in the same directory (mode 0600),
 * fsync, rename over @p path, fsync the directory. Format: see docs/control.md
 * ("Persistence and the state file"); the `routes` section only when @p st records routes (a
 * file without one reads as before).
 * @return 0; 1 when @p path holds @p st but the directory could not be synced (the rename
 * may not survive a crash; the reason is in @p err); a negative errno when @p path is
 * untouched (the temporary file is removed).
 */
int ctl_state_save(const struct ctl_state *st, const char *path, char *err, size_t errlen);

/**
 * Read a state file written by ctl_state_save(). The file is only read, never changed.
 * A file with routes must be whole: routes that pass rt_check, one per prefix, and a route
 * for every member (else refused, naming the member).
 * @return 0 and *out (caller frees); -ENOENT when the file does not exist; another negative
 * errno (-EINVAL for a corrupt, truncated or foreign file) with the reason in @p err.
 */
int ctl_state_load(const char *path, struct ctl_state **out, char *err, size_t errlen);

/*
 * Fleets: several routers on one membership kept in a store (etcd, see ringway-sync).
 */

/** Largest membership text ctl_state_from_text() reads (the state-file limit). */
#define CTL_STATE_TEXT_MAX (64u << 20)

/**
 * Digest of the placement @p st describes: XXH64 of its canonical text (placement settings,
 * then every member with address, port, weight and MAC, in placement order; the epoch is not
 * part of it). Two routers with the same digest place every key on the same node.
 * 0 only when memory ran out.
 */
uint64_t ctl_state_digest(const struct ctl_state *st);

/** @p st in the state-file format (docs/control.md, "Persistence and the state file"),
 * appended to @p out. 0/-ENOMEM. */
int ctl_state_to_text(const struct ctl_state *st, struct ctl_text *out);

/**
 * Parse text in the state-file format (checksum line included) as ctl_state_load() does.
 * @return 0 and *out (caller frees), or -EINVAL / -ENOMEM with the reason in @p err.
 */
int ctl_state_from_text(const char *text, size_t len, struct ctl_state **out, char *err,
			size_t errlen);

/*
 * The engine: the live membership, its placement, and what the router must do on a change.
 */

/** `health NAME down|up [--flush|--accept-stale]`: an operator's word on a node's health. */
enum ctl_health {
	CTL_HEALTH_DOWN,	    /**< take it out (maintenance); no epoch change */
	CTL_HEALTH_UP,		    /**< let it back once its stale keys are deleted */
	CTL_HEALTH_UP_FLUSH,	    /**< ... flushing it whole (its key record overflowed) */
	CTL_HEALTH_UP_ACCEPT_STALE, /**< ... accepting what could not be cleaned */
};

/** `gutter add|remove|list`: the gutter pool of [failover] mode = gutter. */
enum ctl_gutter {
	CTL_GUTTER_ADD,	   /**< add a node to the pool (republished, no epoch change) */
	CTL_GUTTER_REMOVE, /**< take a node out of the pool */
	CTL_GUTTER_LIST,   /**< one line per gutter node */
};

/** `drain [error|silent|status]`, `undrain`: a router's drain (docs/operations.md). */
enum ctl_drain {
	CTL_DRAIN_START,	/**< drain, new requests get the configured answer */
	CTL_DRAIN_START_ERROR,	/**< ... they get the protocol's error */
	CTL_DRAIN_START_SILENT, /**< ... they get nothing (dropped, counted) */
	CTL_DRAIN_STATUS,	/**< only say the state */
	CTL_DRAIN_STOP,		/**< undrain: serve new requests again */
};

/** What the control plane asks of the router. Called on the control thread only. */
struct ctl_ops {
	/**
	 * Make @p next the membership every worker uses. @p pl was built from @p next
	 * (member i of @p next is member i of @p pl) and stays owned by the engine: clone it
	 * (pl_clone) for each worker, publish, wait until no worker can read the old copies,
	 * free them, then return 0. The epoch to publish is ctl_state_epoch(@p next); member i's
	 * static MAC (if any) is ctl_state_member(@p next, i)->mac. Return a negative errno only
	 * when no worker has seen the change. The state file already holds @p next; on failure
	 * the engine restores it and the client gets `ERROR publish failed: ...`.
	 * NULL: nothing to publish (tests, tools).
	 */
	int (*publish)(void *ctx, const struct ctl_state *next, const struct pl_placement *pl);
	/**
	 * Append the router's counters to @p out, one `key value` pair (or several pairs)
	 * per line, each line ending in '\n', values without spaces. NULL: none.
	 */
	int (*stats)(void *ctx, struct ctl_text *out);
	/**
	 * Append extra ` key value` pairs (each starting with a space, no newline) describing
	 * member @p idx of the live state in `list` replies, e.g. ` arp resolved`. NULL: none.
	 */
	void (*member_status)(void *ctx, uint32_t idx, const struct ctl_member *m,
			      struct ctl_text *out);
	void *ctx;
	/**
	 * `health NAME ...`: apply @p what to member @p name's health (never a membership
	 * change). Return 0, or a negative errno with the reason in @p err (the client gets
	 * `ERROR <reason>`). NULL: the command is refused (no data plane).
	 */
	int (*health)(void *ctx, const char *name, enum ctl_health what, char *err, size_t errlen);
	/**
	 * `warmup [end]`: append the warm-up window's state as one `OK warmup ...` line to
	 * @p out, after ending the window when @p end. Return 0, or a negative errno with the
	 * reason in @p err. NULL: the command is refused (no data plane).
	 */
	int (*warmup)(void *ctx, bool end, struct ctl_text *out, char *err, size_t errlen);
	/**
	 * Make @p next the routes the router resolves its nodes' next hops with (`route add`,
	 * `route remove`): re-resolve every node now. Every live member has a route in
	 * @p next (the engine checked), and the state file already records @p next. Return a
	 * negative errno to refuse (the engine puts the file back, keeps the previous routes
	 * and replies ERROR). NULL: nothing to apply (tests, tools).
	 */
	int (*routes)(void *ctx, const struct rt_table *next);
	/**
	 * `hotkeys [N]`: append ` key value` pairs describing the hot-key view (each starting
	 * with a space, no newline) to @p head, and one line per key (at most @p n, hottest
	 * first, `key value` pairs, each line ending in '\n', values without spaces) to
	 * @p lines. NULL: the command answers that the router has no hot-key detection.
	 */
	int (*hotkeys)(void *ctx, uint32_t n, struct ctl_text *head, struct ctl_text *lines);
	/**
	 * `hot add|remove KEY`: pin (@p pin) or unpin @p key (@p len bytes, no spaces) for
	 * hot-key spreading. 0, or a negative errno with the reason in @p err. NULL: the command
	 * answers that the router has no hot-key spreading.
	 */
	int (*hot_pin)(void *ctx, bool pin, const char *key, size_t len, char *err, size_t errlen);
	/**
	 * `gutter ...`: add @p m to the gutter pool, remove the node named m->pl.name, or list
	 * the pool: append one line per node to @p out (`name N addr A:P weight W ...`, no
	 * trailing pairs required) and return how many. Add and remove republish the pool to
	 * the workers (never a membership change) and return 0. A negative errno with the
	 * reason in @p err gives `ERROR <reason>`. NULL: the command is refused.
	 */
	int (*gutter)(void *ctx, enum ctl_gutter op, const struct ctl_member *m,
		      struct ctl_text *out, char *err, size_t errlen);
	/**
	 * `drain ...`, `undrain`: apply @p op to the router's drain (never a membership change)
	 * and append its state as one `OK drain STATE ...` line to @p out. A negative errno with
	 * the reason in @p err gives `ERROR <reason>`, the state unchanged. NULL: the command is
	 * refused (no data plane).
	 */
	int (*drain)(void *ctx, enum ctl_drain op, struct ctl_text *out, char *err, size_t errlen);
};

struct ctl_engine;

/**
 * Engine over @p initial (taken over, also on failure), which must pass ctl_state_check()
 * (NULL: fails with EINVAL, so a failed load can be passed straight in).
 * @p state_path: where each change is saved before it is published and acknowledged; NULL
 * for no persistence. @p ops is copied; NULL means no callbacks. Nothing is published or
 * saved here: the router publishes ctl_engine_placement() to its workers at start.
 * @return the engine, or NULL with errno (EINVAL: the membership is refused; ENOMEM).
 */
struct ctl_engine *ctl_engine_new(struct ctl_state *initial, const char *state_path,
				  const struct ctl_ops *ops);
void ctl_engine_free(struct ctl_engine *e);
/**
 * Refuse members at @p addr (the router's own IPv4 or IPv6 address, without brackets) in every
 * later change, as the config refuses a node there: `ERROR`, state unchanged. The engine
 * holds one address per family: a call sets its family's; NULL clears both. Once any is set,
 * a member of a family the router has no address of is refused too (the router speaks to a
 * node from its own address of the node's family).
 * @return 0, or -EINVAL when @p addr is no IPv4 or IPv6 address.
 */
int ctl_engine_set_router_address(struct ctl_engine *e, const char *addr);
/**
 * The static routes members are reached through (see route.h): every later change refuses a
 * member whose address has no route, and `route remove` / `route add` refuse to leave a
 * member without one. Routes are the router's own (from its config or its state file, changed
 * with `route`), not part of the membership or the digest. The engine starts with the routes
 * its initial state records (ctl_state_routes), else none; the router then sets the table it
 * starts with here: the state file's when it records one, else the config's [route]. A live
 * `route add|remove` is saved with the membership (the state file then records the routes,
 * and every later save keeps them) before the router applies it: a failed save leaves the
 * routes and the file as they were (`ERROR state file ...; nothing changed`).
 * @return 0, or -EINVAL when a live member has no route in @p t (reason in @p err; the
 * routes are unchanged then).
 */
int ctl_engine_set_routes(struct ctl_engine *e, const struct rt_table *t, char *err, size_t errlen);
/** The routes in force (an empty table until ctl_engine_set_routes). */
const struct rt_table *ctl_engine_routes(const struct ctl_engine *e);
/**
 * Fleet-managed: the membership comes from the fleet's store. Local changes (add, remove,
 * weight, replace, transactions of them) are then refused with an ERROR that names the
 * store; only `replace epoch E ...` (E above the live epoch) changes the membership. `plan`
 * and reads still work; `epoch` and `ring` replies then end in `digest D fleet managed`
 * (D: ctl_engine_digest, 16 hex digits). The control command `fleet [managed|local]` sets
 * the same flag and always replies `OK fleet MODE epoch N digest D`.
 */
void ctl_engine_set_fleet_managed(struct ctl_engine *e, bool managed);
bool ctl_engine_fleet_managed(const struct ctl_engine *e);
/** ctl_state_digest() of the live membership, kept by the engine. */
uint64_t ctl_engine_digest(const struct ctl_engine *e);
/**
 * The fleet revision this router's agent said it could not apply (`fleet refused R`, or a
 * `replace epoch R digest D` the engine refused), 0 when none: cleared when a fleet revision
 * at or above it is applied, or on `fleet local`. A router that cannot apply R says so in its
 * own replies (`fleet`) and /metrics, not only in the agent's log and registration.
 */
uint64_t ctl_engine_fleet_refused(const struct ctl_engine *e);
/** The live membership (changes only inside ctl_server_poll / ctl_session_line). */
const struct ctl_state *ctl_engine_state(const struct ctl_engine *e);
/** The placement of the live membership, owned by the engine. */
const struct pl_placement *ctl_engine_placement(const struct ctl_engine *e);

/**
 * One client's conversation (its open transaction, an unfinished `replace` block).
 */
struct ctl_session;

struct ctl_session *ctl_session_new(struct ctl_engine *e);
/** Free; an open transaction is discarded. */
void ctl_session_free(struct ctl_session *s);

/**
 * Run one command line (@p len bytes, without the newline; a trailing '\r' is ignored).
 * Appends the full reply (ending in '\n') to @p reply.
 * @return 1 when a reply was appended, 0 when the line needs none (an empty line, a member
 * line inside a `replace` block), -ENOMEM when the reply could not be built.
 */
int ctl_session_line(struct ctl_session *s, const char *line, size_t len, struct ctl_text *reply);

/*
 * The management socket server: poll()-based, non-blocking, no threads.
 */

struct ctl_server_config {
	const char *unix_path; /**< socket path; NULL: CTL_DEFAULT_SOCKET */
	bool tcp;	       /**< also listen on 127.0.0.1 (never another address) */
	uint16_t tcp_port;     /**< with tcp: the port; 0 picks a free one */
	const char *tcp_token_file; /**< with tcp, required: the shared secret (see
					 ctl_token_load()); a TCP client's first line must be
					 `auth TOKEN` */
	uint32_t idle_ms;      /**< 0: CTL_DEFAULT_IDLE_MS */
	uint32_t max_clients;  /**< 0: 16 */
	size_t max_output;     /**< bytes of unread replies per client before it is cut off;
				    0: 64 MiB */
};

struct ctl_server;

/** Longest TCP token, shortest accepted. */
#define CTL_TOKEN_MAX 256
#define CTL_TOKEN_MIN 16

/**
 * Read the TCP listener's shared secret from @p path: its first line, CTL_TOKEN_MIN to
 * CTL_TOKEN_MAX printable characters without spaces. The file must be a regular file owned by
 * the caller's effective user with no group or other permission bits (mode 0600 or 0400):
 * a token others can read authenticates nobody, so such a file is refused. Fills @p token
 * (NUL-terminated). 0, or a negative errno with the reason in @p err.
 */
int ctl_token_load(const char *path, char token[CTL_TOKEN_MAX + 1], char *err, size_t errlen);

/**
 * Listen on the Unix socket (mode 0600; missing directories created with mode 0700; a stale
 * socket file replaced; a socket another process serves is refused) and, if asked, on TCP
 * 127.0.0.1. The TCP listener needs tcp_token_file (ctl_token_load()); a TCP client's first
 * line must be `auth TOKEN` (compared in constant time; `OK authenticated`), and any other
 * first line (an unknown command, an HTTP request line or header from a browser's
 * cross-protocol POST) or a wrong token gets one ERROR and the connection is closed without
 * running anything. Unix clients need no token (the socket's mode admits only its owner).
 * NULL with errno and the reason in @p err.
 */
struct ctl_server *ctl_server_open(struct ctl_engine *e, const struct ctl_server_config *cfg,
				   char *err, size_t errlen);

/**
 * Serve: wait up to @p timeout_ms (0: do not wait, -1: until something happens) for
 * activity, then accept clients, read, run complete lines, write replies, drop idle clients.
 * A change command blocks here until ops->publish returns.
 * @return the number of commands run, or a negative errno when poll() itself failed.
 */
int ctl_server_poll(struct ctl_server *srv, int timeout_ms);

/** Port of the TCP listener, 0 when there is none. */
uint16_t ctl_server_tcp_port(const struct ctl_server *srv);
/** Connected clients right now. */
uint32_t ctl_server_clients(const struct ctl_server *srv);
/** Close every client and listener and remove the socket file. NULL is fine. */
void ctl_server_close(struct ctl_server *srv);

/*
 * Client side (ringwayctl, tests).
 */

/**
 * Append the protocol's commands, one per line (`  NAME ARGUMENTS`), then the prefixes
 * (`if-epoch`, `plan`), for usage texts. Generated from the parser's command table, so a
 * new command shows up here without touching the client. 0 or -ENOMEM.
 */
int ctl_commands_usage(struct ctl_text *out);

/** Connect to a Unix socket: a blocking fd, or a negative errno with the reason in @p err. */
int ctl_connect_unix(const char *path, char *err, size_t errlen);
/** Connect to 127.0.0.1:@p port: a blocking fd, or a negative errno with the reason. */
int ctl_connect_tcp(uint16_t port, char *err, size_t errlen);
/** Send `auth TOKEN` on @p fd and read the reply (at most @p timeout_ms): 0 when the server
 *  accepted it; -EACCES (refused, reason in @p err), -EPIPE, -ETIMEDOUT, -EPROTO. */
int ctl_auth(int fd, const char *token, int timeout_ms, char *err, size_t errlen);

/** One parsed reply. */
struct ctl_reply {
	bool ok;	 /**< OK or ERROR */
	char *head;	 /**< text after "OK " / "ERROR " (may be empty) */
	uint32_t nlines; /**< body lines */
	char **lines;	 /**< body lines, without newlines */
};

/**
 * Framing rule for a reply's first line (without the newline): sets *ok and *nlines
 * (body lines that follow). -EPROTO when the line is neither OK nor ERROR, or its
 * `lines N` is malformed or above PL_MEMBERS_MAX + 64.
 */
int ctl_reply_head(const char *line, bool *ok, uint32_t *nlines);

/** Reads replies from a connected fd, buffering what arrives early. */
struct ctl_reader;

struct ctl_reader *ctl_reader_new(int fd);
void ctl_reader_free(struct ctl_reader *rd);
/**
 * Read the next whole reply, waiting at most @p timeout_ms for each chunk (-1: forever).
 * @return 0; -EPIPE when the server closed first; -ETIMEDOUT; -EPROTO (bad framing or a
 * line above the limit); -ENOMEM.
 */
int ctl_reader_next(struct ctl_reader *rd, struct ctl_reply *r, int timeout_ms);
/** Free what a reply holds and zero it. */
void ctl_reply_clear(struct ctl_reply *r);

#ifdef __cplusplus
}
#endif

#endif /* RINGWAY_CONTROL_H */
