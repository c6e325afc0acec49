/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_CONTROL_PRIV_H
#define RINGWAY_CONTROL_PRIV_H

/*
 * Contract between the command parser and engine (command.c), the membership state and state
 * file (state.c) and the socket server (server.c); also used by the unit tests and the fuzzer.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control.h"
#include "route.h"

/*
 * Every command of the protocol, one row each: enum suffix, name, arguments (usage text; ""
 * for none), flags. CTL_CMD_F_CHANGE: changes the membership (may follow `plan`, is queued
 * inside a transaction, moves the epoch). The parser's "unknown command" reason, the
 * argument usage errors, ctl_cmd_changes() and the command list of ctl_commands_usage()
 * (ringwayctl --help) are generated from it; the handler goes in run() (command.c), the
 * argument parser (if any) in parse_args().
 */
#define CTL_CMD_F_CHANGE 0x1u
/* `hotkeys [N]`: keys shown without N, most with it. */
#define CTL_HOTKEYS_DEFAULT 10
#define CTL_HOTKEYS_MAX 4096
#define CTL_FOREACH_CMD(_)                                                               \
	_(ADD, "add", "NAME ADDR[:PORT] [weight W] [mac MAC] [--keep]", CTL_CMD_F_CHANGE) \
	_(REMOVE, "remove", "NAME", CTL_CMD_F_CHANGE)                                    \
	_(WEIGHT, "weight", "NAME W", CTL_CMD_F_CHANGE)                                  \
	_(REPLACE, "replace",                                                            \
	  "[epoch E [digest D]] [M1 ; M2 ; ...]  (alone: member lines follow, then end)",          \
	  CTL_CMD_F_CHANGE)                                                              \
	_(LIST, "list", "", 0)                                                           \
	_(RING, "ring", "", 0)                                                           \
	_(STATS, "stats", "", 0)                                                         \
	_(EPOCH, "epoch", "", 0)                                                         \
	_(BEGIN, "begin", "", 0)                                                         \
	_(COMMIT, "commit", "", 0)                                                       \
	_(ABORT, "abort", "", 0)                                                         \
	_(FLEET, "fleet", "[managed|local|state|refused R]", 0)                                          \
	_(HEALTH, "health", "NAME down|up [--flush|--accept-stale]", 0)                 \
	_(WARMUP, "warmup", "[end]", 0) \
	_(ROUTE, "route", "add PREFIX via GW|direct | remove PREFIX | list", 0) \
	_(HOTKEYS, "hotkeys", "[N]", 0)                                                  \
	_(HOT, "hot", "add|remove KEY", 0) \
	_(DRAIN, "drain", "[error|silent|status]", 0) \
	_(UNDRAIN, "undrain", "", 0) \
	_(GUTTER, "gutter",                                                              \
	  "add NAME ADDR[:PORT] [weight W] [mac MAC] | remove NAME | list", 0)

/* Prefixes that may stand before a command: enum suffix, name, what follows. */
#define CTL_FOREACH_PREFIX(_)                \
	_(IF_EPOCH, "if-epoch", "E COMMAND") \
	_(PLAN, "plan", "CHANGE ARGUMENTS")

enum ctl_cmd_type {
#define CTL_CMD_ENUM(e, s, args, flags) CTL_CMD_##e,
	CTL_FOREACH_CMD(CTL_CMD_ENUM)
#undef CTL_CMD_ENUM
		CTL_CMD_COUNT
};

/* A parsed command line. Owns `members` (replace); release with ctl_cmd_release(). */
struct ctl_cmd {
	enum ctl_cmd_type type;
	bool if_epoch;		    /* `if-epoch E` prefix */
	uint64_t epoch;		    /* its E */
	bool plan;		    /* `plan` prefix: describe the change, do not make it */
	bool block;		    /* `replace` alone: member lines follow, then `end` */
	struct ctl_member member;   /* add */
	char name[PL_NAME_MAX + 1]; /* remove, weight */
	uint32_t weight;	    /* weight */
	struct ctl_member *members; /* replace on one line */
	uint32_t nmembers;
	bool has_fleet_epoch; /* `replace epoch E`: publish at E (the fleet's revision) */
	uint64_t fleet_epoch;
	bool has_fleet_digest; /* `replace epoch E digest D`: E's digest is D (see do_change) */
	uint64_t fleet_digest;
	int fleet;		/* fleet: -1 show, 0 local, 1 managed, 2 state (the text), 3 refused
				 * fleet_epoch */
	enum ctl_health health;	/* health: what the operator asks of NAME's health */
	bool warm_end;		/* warmup: `end` given */
	int route_op;		/* route: CTL_ROUTE_* */
	struct rt_route route;	/* route add / remove (prefix only) */
	uint32_t count;		/* hotkeys: keys to show */
	bool pin;		/* hot: add (true) or remove */
	char key[251];		/* hot: the key */
	enum ctl_gutter gutter; /* gutter: add (member), remove (name), list */
	enum ctl_drain drain;	/* drain, undrain: what is asked */
};

/* `route` sub-commands. */
enum {
	CTL_ROUTE_LIST = 0,
	CTL_ROUTE_ADD,
	CTL_ROUTE_REMOVE,
};

/* True for the commands flagged CTL_CMD_F_CHANGE (add, remove, weight, replace). */
bool ctl_cmd_changes(enum ctl_cmd_type t);
/* Name and usage arguments of command @p t ("" when out of range). */
const char *ctl_cmd_name(enum ctl_cmd_type t);
const char *ctl_cmd_args(enum ctl_cmd_type t);

/*
 * Parse one command line (no newline). Every malformed form gives -EINVAL and a reason;
 * -ENOMEM when a replace list cannot be held. *cmd is released on failure.
 */
int ctl_cmd_parse(const char *line, size_t len, struct ctl_cmd *cmd, char *err, size_t errlen);
void ctl_cmd_release(struct ctl_cmd *cmd);

/*
 * Apply a change command to @p st: the membership rules of the protocol (unknown node,
 * duplicates, weights, last node). Does not touch the epoch. On failure @p st is unchanged
 * (callers still apply to a copy of the live state; a transaction applies to its own copy).
 */
int ctl_state_apply(struct ctl_state *st, const struct ctl_cmd *cmd, char *err, size_t errlen);

/* Set the epoch (the engine's business: +1 per published change). */
void ctl_state_set_epoch(struct ctl_state *st, uint64_t epoch);

/* Members @p m[0..n) all have a route in @p t: 0, or -EINVAL with `node NAME: no route to
 * ADDR` for the first without. */
int ctl_members_check_routes(const struct rt_table *t, const struct ctl_member *m, uint32_t n,
			     char *err, size_t errlen);

/* Index of member @p name, or -ENOENT. */
int32_t ctl_state_find(const struct ctl_state *st, const char *name);

/* Build the placement of @p st; NULL with errno and a reason. */
struct pl_placement *ctl_state_build(const struct ctl_state *st, char *err, size_t errlen);

/* Serialise @p st in the state-file format (with its checksum line). 0 or -ENOMEM. */
int ctl_state_format(const struct ctl_state *st, struct ctl_text *out);
/* Parse state-file text; 0 and *out, or -EINVAL with "line L: reason". */
int ctl_state_parse(const char *text, size_t len, struct ctl_state **out, char *err, size_t errlen);

/* Token helpers shared by the parsers. */
int ctl_name_parse(const char *s, size_t len, char out[PL_NAME_MAX + 1], char *err, size_t errlen);
int ctl_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out);
int ctl_mac_parse(const char *s, size_t len, uint8_t mac[6]);
void ctl_mac_format(const uint8_t mac[6], char out[18]);

/* Counters the engine keeps and `stats` reports; the server bumps its own. */
#define CTL_FOREACH_COUNTER(_)                                                            \
	_(commands, "ctl.commands")		    /* replies given */                   \
	_(errors, "ctl.errors")			    /* ERROR replies */                   \
	_(changes, "ctl.changes")		    /* epochs published */                \
	_(publish_failed, "ctl.publish_failed")	    /* ops->publish refused */            \
	_(save_failed, "ctl.save_failed")	    /* state file not written */          \
	_(save_not_durable, "ctl.save_not_durable") /* written, directory not synced */   \
	_(clients_accepted, "ctl.clients_accepted")                                       \
	_(clients_refused, "ctl.clients_refused")   /* above max_clients */               \
	_(idle_disconnects, "ctl.idle_disconnects") /* silent or not reading */           \
	_(long_lines, "ctl.long_lines")		    /* above CTL_LINE_MAX */              \
	_(output_overflows, "ctl.output_overflows") /* unread replies above max_output */ \
	_(auth_ok, "ctl.auth_ok")		    /* TCP clients that authenticated */  \
	_(auth_failed, "ctl.auth_failed")	    /* TCP `auth` with a wrong token */   \
	_(unauthenticated, "ctl.unauthenticated")   /* TCP: another line before auth */   \
	_(change_last_us, "ctl.change_last_us")	    /* last change: line to published */  \
	_(change_max_us, "ctl.change_max_us")

struct ctl_counters {
#define CTL_COUNTER_FIELD(f, s) uint64_t f;
	CTL_FOREACH_COUNTER(CTL_COUNTER_FIELD)
#undef CTL_COUNTER_FIELD
};

/* The engine's counters, for the server to bump. */
struct ctl_counters *ctl_engine_counters(struct ctl_engine *e);

/* printf into a fixed reason buffer (never overflows; NULL/0 ignored). Returns -EINVAL. */
int ctl_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif /* RINGWAY_CONTROL_PRIV_H */
