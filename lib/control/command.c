/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The command protocol: parsing a line, running it against the engine (changes, plans,
 * transactions, replace blocks), building the reply; and the client-side reply reader.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "control_priv.h"

#define REASON_MAX 256
/* Most body lines a reply may announce: a list of every member plus the stats lines. */
#define REPLY_LINES_MAX (PL_MEMBERS_MAX + 4096)
/* Longest reply line the reader accepts. */
#define REPLY_LINE_MAX (64u << 10)

static const struct {
	const char *name;
	const char *args;
	unsigned int flags;
} cmds[] = {
#define CTL_CMD_ROW(e, s, a, f) {s, a, f},
	CTL_FOREACH_CMD(CTL_CMD_ROW)
#undef CTL_CMD_ROW
};

enum ctl_prefix {
#define CTL_PREFIX_ENUM(e, s, a) CTL_PREFIX_##e,
	CTL_FOREACH_PREFIX(CTL_PREFIX_ENUM)
#undef CTL_PREFIX_ENUM
};

static const struct {
	const char *name;
	const char *args;
} prefixes[] = {
#define CTL_PREFIX_ROW(e, s, a) {s, a},
	CTL_FOREACH_PREFIX(CTL_PREFIX_ROW)
#undef CTL_PREFIX_ROW
};

bool ctl_cmd_changes(enum ctl_cmd_type t)
{
	return (unsigned int)t < CTL_CMD_COUNT && (cmds[t].flags & CTL_CMD_F_CHANGE);
}

const char *ctl_cmd_name(enum ctl_cmd_type t)
{
	return (unsigned int)t < CTL_CMD_COUNT ? cmds[t].name : "";
}

const char *ctl_cmd_args(enum ctl_cmd_type t)
{
	return (unsigned int)t < CTL_CMD_COUNT ? cmds[t].args : "";
}

/* The names of the commands with every flag of @p flags into @p buf, joined by @p sep (the
 * last two by @p last). */
static const char *cmd_list(unsigned int flags, const char *sep, const char *last, char *buf,
			    size_t len)
{
	int n = 0, k = 0;
	size_t o = 0;

	for (int t = 0; t < CTL_CMD_COUNT; t++)
		n += (cmds[t].flags & flags) == flags;
	buf[0] = '\0';
	for (int t = 0; t < CTL_CMD_COUNT && o < len; t++) {
		if ((cmds[t].flags & flags) != flags)
			continue;
		o += (size_t)snprintf(buf + o, len - o, "%s%s",
				      k == 0	   ? ""
				      : k == n - 1 ? last
						   : sep,
				      cmds[t].name);
		k++;
	}
	return buf;
}

int ctl_commands_usage(struct ctl_text *out)
{
	char changes[128];

	cmd_list(CTL_CMD_F_CHANGE, "|", "|", changes, sizeof(changes));
	for (int t = 0; t < CTL_CMD_COUNT; t++)
		ctl_text_appendf(out, "  %s%s%s\n", cmds[t].name, *cmds[t].args ? " " : "",
				 cmds[t].args);
	for (int p = 0; p < (int)(sizeof(prefixes) / sizeof(prefixes[0])); p++) {
		ctl_text_appendf(out, "  %s %s", prefixes[p].name, prefixes[p].args);
		if (p == CTL_PREFIX_PLAN)
			ctl_text_appendf(out, "  (CHANGE: %s; describes, changes nothing)",
					 changes);
		ctl_text_appendf(out, "\n");
	}
	return out->oom ? -ENOMEM : 0;
}

/* ---- parser ---- */

struct span {
	const char *p;
	size_t n;
};

static bool word(const char **cur, const char *end, struct span *w)
{
	const char *p = *cur;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	w->p = p;
	while (p < end && *p != ' ' && *p != '\t')
		p++;
	w->n = (size_t)(p - w->p);
	*cur = p;
	return w->n > 0;
}

static bool span_is(const struct span *w, const char *s)
{
	return w->n == strlen(s) && memcmp(w->p, s, w->n) == 0;
}

static bool rest_empty(const char *cur, const char *end)
{
	struct span w;

	return !word(&cur, end, &w);
}

static int check_bytes(const char *p, size_t len, char *err, size_t errlen)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)p[i];

		if ((c < 0x20 && c != '\t') || c >= 0x7f)
			return ctl_fail(err, errlen,
					"byte 0x%02x at column %zu: commands are printable ASCII",
					c, i + 1);
	}
	return 0;
}

/* @p w is exactly 16 hex digits (a digest as replies print it): *v its value. */
static bool hex64(const struct span *w, uint64_t *v)
{
	*v = 0;
	if (w->n != 16)
		return false;
	for (size_t i = 0; i < 16; i++) {
		char c = w->p[i];
		unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
			     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
			     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
						    : 16u;

		if (d == 16u)
			return false;
		*v = *v << 4 | d;
	}
	return true;
}

static int parse_replace(const char *cur, const char *end, struct ctl_cmd *cmd, char *err,
			 size_t errlen)
{
	const char *after = cur;
	char why[REASON_MAX];
	struct span w, e;
	uint32_t n = 1;

	/* `epoch E`: the fleet's revision to publish at. A member named "epoch" has an address,
	 * never a plain number, after its name, so the two cannot be confused. */
	if (word(&after, end, &w) && span_is(&w, "epoch") && word(&after, end, &e) &&
	    (e.n == 0 || memchr(e.p, '.', e.n) == NULL)) {
		if (ctl_parse_u64(e.p, e.n, UINT64_MAX, &cmd->fleet_epoch) < 0)
			return ctl_fail(err, errlen,
					"replace epoch E: E must be a number, not '%.*s'",
					(int)(e.n > 32 ? 32 : e.n), e.p);
		cmd->has_fleet_epoch = true;
		cur = after;
		/* `digest D`: the fleet's digest of revision E (16 hex digits). A member named
		 * "digest" would need an address there, and 16 bare hex digits are none. */
		if (word(&after, end, &w) && span_is(&w, "digest") && word(&after, end, &e) &&
		    hex64(&e, &cmd->fleet_digest)) {
			cmd->has_fleet_digest = true;
			cur = after;
		}
	}
	if (rest_empty(cur, end)) {
		cmd->block = true;
		return 0;
	}
	for (const char *p = cur; p < end; p++)
		n += *p == ';';
	cmd->members = calloc(n, sizeof(*cmd->members));
	if (cmd->members == NULL)
		return ctl_fail(err, errlen, "out of memory"), -ENOMEM;
	while (cmd->nmembers < n) {
		const char *semi = memchr(cur, ';', (size_t)(end - cur));
		const char *stop = semi ? semi : end;

		if (rest_empty(cur, stop))
			return ctl_fail(err, errlen, "replace: member %u is empty",
					cmd->nmembers + 1);
		if (ctl_member_parse(cur, (size_t)(stop - cur), &cmd->members[cmd->nmembers], why,
				     sizeof(why)) < 0)
			return ctl_fail(err, errlen, "replace: member %u: %s", cmd->nmembers + 1,
					why);
		cmd->nmembers++;
		cur = semi ? semi + 1 : end;
	}
	return 0;
}

static int usage_error(const struct ctl_cmd *cmd, char *err, size_t errlen)
{
	return ctl_fail(err, errlen, "usage: %s %s", cmds[cmd->type].name, cmds[cmd->type].args);
}

static int parse_name_arg(const char **cur, const char *end, struct ctl_cmd *cmd, char *err,
			  size_t errlen)
{
	char why[REASON_MAX];
	struct span w;

	if (!word(cur, end, &w))
		return usage_error(cmd, err, errlen);
	if (ctl_name_parse(w.p, w.n, cmd->name, why, sizeof(why)) < 0)
		return ctl_fail(err, errlen, "%s", why);
	return 0;
}

/* route add PREFIX via GW|direct, route remove PREFIX, route list. */
static int parse_route(const char *cur, const char *end, struct ctl_cmd *cmd, char *err,
		       size_t errlen)
{
	char why[REASON_MAX];
	struct span w;

	if (!word(&cur, end, &w))
		return usage_error(cmd, err, errlen);
	if (span_is(&w, "list")) {
		cmd->route_op = CTL_ROUTE_LIST;
		if (!rest_empty(cur, end))
			return ctl_fail(err, errlen, "route list: unexpected arguments");
		return 0;
	}
	if (span_is(&w, "add")) {
		cmd->route_op = CTL_ROUTE_ADD;
		if (rt_parse(cur, (size_t)(end - cur), &cmd->route, why, sizeof(why)) < 0)
			return ctl_fail(err, errlen, "route add: %s", why);
		return 0;
	}
	if (span_is(&w, "remove")) {
		cmd->route_op = CTL_ROUTE_REMOVE;
		if (rt_parse_prefix(cur, (size_t)(end - cur), &cmd->route, why, sizeof(why)) < 0)
			return ctl_fail(err, errlen, "route remove: %s", why);
		return 0;
	}
	return usage_error(cmd, err, errlen);
}

static int parse_args(const char *cur, const char *end, struct ctl_cmd *cmd, char *err,
		      size_t errlen)
{
	char why[REASON_MAX];
	struct span w;
	uint64_t v;

	switch (cmd->type) {
	case CTL_CMD_ADD:
		if (ctl_member_parse(cur, (size_t)(end - cur), &cmd->member, why, sizeof(why)) < 0)
			return ctl_fail(err, errlen, "add: %s", why);
		return 0;
	case CTL_CMD_REMOVE:
		if (parse_name_arg(&cur, end, cmd, err, errlen) < 0)
			return -EINVAL;
		break;
	case CTL_CMD_WEIGHT:
		if (parse_name_arg(&cur, end, cmd, err, errlen) < 0)
			return -EINVAL;
		if (!word(&cur, end, &w))
			return usage_error(cmd, err, errlen);
		if (ctl_parse_u64(w.p, w.n, CTL_WEIGHT_MAX, &v) < 0)
			return ctl_fail(err, errlen, "weight must be an integer 0..%d",
					CTL_WEIGHT_MAX);
		cmd->weight = (uint32_t)v;
		break;
	case CTL_CMD_REPLACE:
		return parse_replace(cur, end, cmd, err, errlen);
	case CTL_CMD_HEALTH:
		if (parse_name_arg(&cur, end, cmd, err, errlen) < 0)
			return -EINVAL;
		if (!word(&cur, end, &w) || !(span_is(&w, "down") || span_is(&w, "up")))
			return usage_error(cmd, err, errlen);
		cmd->health = span_is(&w, "down") ? CTL_HEALTH_DOWN : CTL_HEALTH_UP;
		if (cmd->health == CTL_HEALTH_UP && word(&cur, end, &w)) {
			if (span_is(&w, "--flush"))
				cmd->health = CTL_HEALTH_UP_FLUSH;
			else if (span_is(&w, "--accept-stale"))
				cmd->health = CTL_HEALTH_UP_ACCEPT_STALE;
			else
				return usage_error(cmd, err, errlen);
		}
		break;
	case CTL_CMD_WARMUP:
		cmd->warm_end = false;
		if (word(&cur, end, &w)) {
			if (!span_is(&w, "end"))
				return usage_error(cmd, err, errlen);
			cmd->warm_end = true;
		}
		break;
	case CTL_CMD_ROUTE:
		return parse_route(cur, end, cmd, err, errlen);
	case CTL_CMD_DRAIN:
		cmd->drain = CTL_DRAIN_START;
		if (word(&cur, end, &w)) {
			if (span_is(&w, "error"))
				cmd->drain = CTL_DRAIN_START_ERROR;
			else if (span_is(&w, "silent"))
				cmd->drain = CTL_DRAIN_START_SILENT;
			else if (span_is(&w, "status"))
				cmd->drain = CTL_DRAIN_STATUS;
			else
				return usage_error(cmd, err, errlen);
		}
		break;
	case CTL_CMD_UNDRAIN:
		cmd->drain = CTL_DRAIN_STOP;
		break;
	case CTL_CMD_HOTKEYS:
		cmd->count = CTL_HOTKEYS_DEFAULT;
		if (!word(&cur, end, &w))
			break;
		if (ctl_parse_u64(w.p, w.n, CTL_HOTKEYS_MAX, &v) < 0 || v == 0)
			return ctl_fail(err, errlen, "hotkeys: N must be an integer 1..%d",
					CTL_HOTKEYS_MAX);
		cmd->count = (uint32_t)v;
		break;
	case CTL_CMD_HOT:
		if (!word(&cur, end, &w) || (!span_is(&w, "add") && !span_is(&w, "remove")))
			return usage_error(cmd, err, errlen);
		cmd->pin = span_is(&w, "add");
		if (!word(&cur, end, &w))
			return usage_error(cmd, err, errlen);
		if (w.n >= sizeof(cmd->key))
			return ctl_fail(err, errlen, "hot: a key is at most %zu bytes",
					sizeof(cmd->key) - 1);
		memcpy(cmd->key, w.p, w.n);
		cmd->key[w.n] = '\0';
		break;
	case CTL_CMD_GUTTER:
		if (!word(&cur, end, &w))
			return usage_error(cmd, err, errlen);
		if (span_is(&w, "add")) {
			cmd->gutter = CTL_GUTTER_ADD;
			if (ctl_member_parse(cur, (size_t)(end - cur), &cmd->member, why,
					     sizeof(why)) < 0)
				return ctl_fail(err, errlen, "gutter add: %s", why);
			/* A gutter node holds copies with a capped TTL: nothing to flush. */
			if (cmd->member.keep)
				return ctl_fail(err, errlen,
						"gutter add: --keep is for members (a gutter node is "
						"never flushed)");
			return 0;
		}
		if (span_is(&w, "remove")) {
			cmd->gutter = CTL_GUTTER_REMOVE;
			if (parse_name_arg(&cur, end, cmd, err, errlen) < 0)
				return -EINVAL;
			snprintf(cmd->member.pl.name, sizeof(cmd->member.pl.name), "%s", cmd->name);
			break;
		}
		if (!span_is(&w, "list"))
			return usage_error(cmd, err, errlen);
		cmd->gutter = CTL_GUTTER_LIST;
		break;
	case CTL_CMD_FLEET:
		cmd->fleet = -1;
		if (word(&cur, end, &w)) {
			if (!span_is(&w, "managed") && !span_is(&w, "local") &&
			    !span_is(&w, "state") && !span_is(&w, "refused"))
				return usage_error(cmd, err, errlen);
			cmd->fleet = span_is(&w, "refused") ? 3
				     : span_is(&w, "state") ? 2
							    : span_is(&w, "managed");
			if (cmd->fleet == 3 &&
			    (!word(&cur, end, &w) ||
			     ctl_parse_u64(w.p, w.n, UINT64_MAX, &cmd->fleet_epoch) < 0 ||
			     cmd->fleet_epoch == 0))
				return ctl_fail(err, errlen,
						"usage: fleet refused R (R a fleet revision, 1 or "
						"more)");
		}
		break;
	default:
		break;
	}
	if (!rest_empty(cur, end))
		return ctl_fail(err, errlen, "%s: unexpected arguments", cmds[cmd->type].name);
	return 0;
}

static int parse_prefixes(const char **cur, const char *end, struct ctl_cmd *cmd, struct span *w,
			  char *err, size_t errlen)
{
	const char *if_epoch = prefixes[CTL_PREFIX_IF_EPOCH].name;
	const char *plan = prefixes[CTL_PREFIX_PLAN].name;
	char changes[128];
	struct span e;

	if (span_is(w, if_epoch)) {
		if (!word(cur, end, &e) || ctl_parse_u64(e.p, e.n, UINT64_MAX, &cmd->epoch) < 0)
			return ctl_fail(err, errlen, "usage: %s %s (E a number)", if_epoch,
					prefixes[CTL_PREFIX_IF_EPOCH].args);
		cmd->if_epoch = true;
		if (!word(cur, end, w))
			return ctl_fail(err, errlen, "%s %" PRIu64 ": missing command", if_epoch,
					cmd->epoch);
		if (span_is(w, if_epoch))
			return ctl_fail(err, errlen, "%s cannot be nested", if_epoch);
	}
	if (span_is(w, plan)) {
		cmd->plan = true;
		if (!word(cur, end, w))
			return ctl_fail(
				err, errlen, "usage: %s %s ARGUMENTS", plan,
				cmd_list(CTL_CMD_F_CHANGE, "|", "|", changes, sizeof(changes)));
	}
	return 0;
}

static int unknown_command(const struct span *w, char *err, size_t errlen)
{
	char all[256], pre[64];
	size_t o = 0;

	cmd_list(0, " ", " ", all, sizeof(all));
	pre[0] = '\0';
	for (size_t p = 0; p < sizeof(prefixes) / sizeof(prefixes[0]); p++)
		o += (size_t)snprintf(pre + o, sizeof(pre) - o, "%s%s", p ? " " : "",
				      prefixes[p].name);
	return ctl_fail(err, errlen, "unknown command '%.*s' (commands: %s; prefixes: %s)",
			(int)(w->n > 32 ? 32 : w->n), w->p, all, pre);
}

int ctl_cmd_parse(const char *line, size_t len, struct ctl_cmd *cmd, char *err, size_t errlen)
{
	const char *cur = line, *end = line + len;
	char changes[128];
	struct span w;
	int rc;

	memset(cmd, 0, sizeof(*cmd));
	cmd->type = CTL_CMD_COUNT;
	if (len > CTL_LINE_MAX)
		return ctl_fail(err, errlen, "line too long (limit %d bytes)", CTL_LINE_MAX);
	if ((rc = check_bytes(line, len, err, errlen)) < 0)
		return rc;
	if (!word(&cur, end, &w))
		return ctl_fail(err, errlen, "empty command");
	if ((rc = parse_prefixes(&cur, end, cmd, &w, err, errlen)) < 0)
		return rc;
	for (int t = 0; t < CTL_CMD_COUNT; t++)
		if (span_is(&w, cmds[t].name))
			cmd->type = (enum ctl_cmd_type)t;
	if (cmd->type == CTL_CMD_COUNT)
		return unknown_command(&w, err, errlen);
	if (cmd->plan && !ctl_cmd_changes(cmd->type))
		return ctl_fail(err, errlen, "plan takes %s, not %s",
				cmd_list(CTL_CMD_F_CHANGE, ", ", " or ", changes, sizeof(changes)),
				cmds[cmd->type].name);
	rc = parse_args(cur, end, cmd, err, errlen);
	if (rc < 0)
		ctl_cmd_release(cmd);
	return rc;
}

void ctl_cmd_release(struct ctl_cmd *cmd)
{
	free(cmd->members);
	cmd->members = NULL;
	cmd->nmembers = 0;
}

/* ---- engine ---- */

struct ctl_engine {
	struct ctl_state *st;
	struct pl_placement *pl;
	char router_addr[2][PL_ADDR_MAX + 1]; /* IPv4, IPv6 (canonical); "" when not set */
	char *state_path;
	struct ctl_ops ops;
	struct ctl_counters cnt;
	bool fleet;	 /* fleet-managed: only `replace epoch E` changes the membership */
	uint64_t digest; /* ctl_state_digest(st) */
	/* Fleet revision refused (0: none). Set by `fleet refused R` or a refused `replace
	 * epoch R digest D`; ends when a fleet revision >= R is applied or on `fleet local`. */
	uint64_t fleet_refused;
	struct rt_table routes;
};

struct ctl_engine *ctl_engine_new(struct ctl_state *initial, const char *state_path,
				  const struct ctl_ops *ops)
{
	struct ctl_engine *e = calloc(1, sizeof(*e));
	int saved = ENOMEM;

	if (e == NULL)
		goto fail;
	if (state_path != NULL && (e->state_path = strdup(state_path)) == NULL)
		goto fail;
	if (initial == NULL || ctl_state_check(initial, NULL, 0) < 0) {
		saved = EINVAL;
		goto fail;
	}
	e->pl = ctl_state_build(initial, NULL, 0);
	if (e->pl == NULL) {
		saved = errno;
		goto fail;
	}
	/* A state file's routes come checked (every member has one); a state built by hand may
	 * record any table. */
	if (ctl_state_routes(initial) != NULL &&
	    ctl_state_check_routes(initial, ctl_state_routes(initial), NULL, 0) < 0) {
		pl_free(e->pl);
		saved = EINVAL;
		goto fail;
	}
	if (ctl_state_routes(initial) != NULL)
		e->routes = *ctl_state_routes(initial);
	e->st = initial;
	e->digest = ctl_state_digest(initial);
	if (ops != NULL)
		e->ops = *ops;
	return e;
fail:
	if (e != NULL)
		free(e->state_path);
	free(e);
	ctl_state_free(initial);
	errno = saved;
	return NULL;
}

void ctl_engine_free(struct ctl_engine *e)
{
	if (e == NULL)
		return;
	pl_free(e->pl);
	ctl_state_free(e->st);
	free(e->state_path);
	free(e);
}

int ctl_engine_set_router_address(struct ctl_engine *e, const char *addr)
{
	struct inet_addr a;

	if (addr == NULL) {
		e->router_addr[0][0] = e->router_addr[1][0] = '\0';
		return 0;
	}
	if (inet_parse(addr, strlen(addr), &a) < 0)
		return -EINVAL;
	inet_format(&a, e->router_addr[inet_is_v4(&a) ? 0 : 1]);
	return 0;
}

/* A change that would put a member at the router's own address (addresses are canonical). */
static int check_router_address(const struct ctl_engine *e, const struct ctl_cmd *cmd, char *err,
				size_t errlen)
{
	const struct ctl_member *m = cmd->type == CTL_CMD_ADD ? &cmd->member : cmd->members;
	uint32_t n = cmd->type == CTL_CMD_ADD	    ? 1
		     : cmd->type == CTL_CMD_REPLACE ? cmd->nmembers
						    : 0;

	for (uint32_t i = 0; i < n; i++) {
		bool v6 = strchr(m[i].pl.addr, ':') != NULL;

		if (strcmp(m[i].pl.addr, e->router_addr[0]) == 0 ||
		    strcmp(m[i].pl.addr, e->router_addr[1]) == 0)
			return ctl_fail(err, errlen, "node %s: %s is the router's own address",
					m[i].pl.name, m[i].pl.addr);
		/* the router reaches a node from its own address of the node's family: with
		 * addresses set, a family it has none of cannot be served */
		if ((e->router_addr[0][0] != '\0' || e->router_addr[1][0] != '\0') &&
		    e->router_addr[v6 ? 1 : 0][0] == '\0')
			return ctl_fail(err, errlen,
					"node %s: %s is %s and the router has no %s address "
					"(set [router] %s)",
					m[i].pl.name, m[i].pl.addr, v6 ? "IPv6" : "IPv4",
					v6 ? "IPv6" : "IPv4", v6 ? "address6" : "address");
	}
	return 0;
}

/* Members @p m[0..n) all have a route in @p t: 0, or -EINVAL naming the first without and
 * how to give it one. */
static int check_routes(const struct rt_table *t, const struct ctl_member *m, uint32_t n, char *err,
			size_t errlen)
{
	char why[REASON_MAX];

	if (ctl_members_check_routes(t, m, n, why, sizeof(why)) == 0)
		return 0;
	return ctl_fail(err, errlen,
			"%s (add one with `route add PREFIX via GW`, or a default gateway)", why);
}

/* Every member of @p st has a route in @p t. */
static int check_state_routes(const struct rt_table *t, const struct ctl_state *st, char *err,
			      size_t errlen)
{
	for (uint32_t i = 0; i < ctl_state_count(st); i++)
		if (check_routes(t, ctl_state_member(st, i), 1, err, errlen) < 0)
			return -EINVAL;
	return 0;
}

int ctl_engine_set_routes(struct ctl_engine *e, const struct rt_table *t, char *err, size_t errlen)
{
	if (check_state_routes(t, e->st, err, errlen) < 0)
		return -EINVAL;
	e->routes = *t;
	/* What the state file records stays the live table (saved with the next change). */
	if (ctl_state_routes(e->st) != NULL)
		ctl_state_set_routes(e->st, t);
	return 0;
}

const struct rt_table *ctl_engine_routes(const struct ctl_engine *e)
{
	return &e->routes;
}

void ctl_engine_set_fleet_managed(struct ctl_engine *e, bool managed)
{
	e->fleet = managed;
}

bool ctl_engine_fleet_managed(const struct ctl_engine *e)
{
	return e->fleet;
}

uint64_t ctl_engine_digest(const struct ctl_engine *e)
{
	return e->digest;
}

uint64_t ctl_engine_fleet_refused(const struct ctl_engine *e)
{
	return e->fleet_refused;
}

const struct ctl_state *ctl_engine_state(const struct ctl_engine *e)
{
	return e->st;
}

const struct pl_placement *ctl_engine_placement(const struct ctl_engine *e)
{
	return e->pl;
}

struct ctl_counters *ctl_engine_counters(struct ctl_engine *e)
{
	return &e->cnt;
}

/* ---- sessions ---- */

struct ctl_session {
	struct ctl_engine *e;
	struct ctl_state *txn; /* open transaction: the pending membership */
	uint64_t txn_base;     /* live epoch at begin */
	uint32_t txn_changes;
	/* a `replace` block in progress */
	bool in_block;
	struct ctl_cmd block; /* its prefixes; members collected below */
	uint32_t block_cap;
	unsigned block_lines;
	char block_err[REASON_MAX + 32]; /* first bad member line, "" when none */
	uint64_t line_ns;		 /* when the line being run arrived (CLOCK_MONOTONIC) */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct ctl_session *ctl_session_new(struct ctl_engine *e)
{
	struct ctl_session *s = calloc(1, sizeof(*s));

	if (s != NULL)
		s->e = e;
	return s;
}

static void block_reset(struct ctl_session *s)
{
	ctl_cmd_release(&s->block);
	s->in_block = false;
	s->block_cap = 0;
	s->block_lines = 0;
	s->block_err[0] = '\0';
}

void ctl_session_free(struct ctl_session *s)
{
	if (s == NULL)
		return;
	block_reset(s);
	ctl_state_free(s->txn);
	free(s);
}

static int reply_error(struct ctl_session *s, struct ctl_text *r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int reply_error(struct ctl_session *s, struct ctl_text *r, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	s->e->cnt.errors++;
	return ctl_text_appendf(r, "ERROR %s\n", why);
}

/* Publish @p next (taken) as the live membership at @p epoch (live + 1, or the fleet's). */
static int commit_state(struct ctl_session *s, struct ctl_state *next, uint64_t epoch,
			struct ctl_text *r)
{
	struct ctl_engine *e = s->e;
	char why[REASON_MAX], why2[REASON_MAX];
	struct pl_placement *pl;
	int rc, saved;

	ctl_state_set_epoch(next, epoch);
	/* The routes the file records are the live ones, not those of when a transaction
	 * copied the membership. */
	ctl_state_set_routes(next, ctl_state_routes(e->st));
	/* A transaction may have queued a member whose route was removed since. */
	if (check_state_routes(&e->routes, next, why, sizeof(why)) < 0) {
		ctl_state_free(next);
		return reply_error(s, r, "%s; nothing changed", why);
	}
	pl = ctl_state_build(next, why, sizeof(why));
	if (pl == NULL) {
		ctl_state_free(next);
		return reply_error(s, r, "%s; nothing changed", why);
	}
	saved = e->state_path != NULL ? ctl_state_save(next, e->state_path, why, sizeof(why)) : 0;
	if (saved < 0) {
		e->cnt.save_failed++;
		rc = reply_error(s, r, "%s; nothing changed", why);
		goto drop;
	}
	/* saved == 1: the file holds @p next already, so it is published like any change and
	 * the reply says it may not be durable, never "nothing changed". */
	e->cnt.save_not_durable += saved == 1;
	rc = e->ops.publish ? e->ops.publish(e->ops.ctx, next, pl) : 0;
	if (rc < 0) {
		e->cnt.publish_failed++;
		/* Put the file back to the live membership; say so if even that fails. */
		if (e->state_path != NULL &&
		    ctl_state_save(e->st, e->state_path, why2, sizeof(why2)) < 0) {
			e->cnt.save_failed++;
			rc = reply_error(s, r, "publish failed: %s; nothing changed, but %s",
					 strerror(-rc), why2);
		} else {
			rc = reply_error(s, r, "publish failed: %s; nothing changed",
					 strerror(-rc));
		}
		goto drop;
	}
	pl_free(e->pl);
	ctl_state_free(e->st);
	e->pl = pl;
	e->st = next;
	e->digest = ctl_state_digest(next);
	e->cnt.changes++;
	/* Publish latency: the command line received to every worker on the new epoch
	 * (placement built, state file synced, ops->publish returned). */
	e->cnt.change_last_us = (mono_ns() - s->line_ns) / 1000;
	if (e->cnt.change_last_us > e->cnt.change_max_us)
		e->cnt.change_max_us = e->cnt.change_last_us;
	return ctl_text_appendf(r, "OK epoch %" PRIu64 "%s\n", ctl_state_epoch(next),
				saved == 1 ? " durable no" : "");
drop:
	pl_free(pl);
	ctl_state_free(next);
	return rc;
}

/* The membership commands read: the pending one inside a transaction. */
static const struct ctl_state *view_of(const struct ctl_session *s)
{
	return s->txn ? s->txn : s->e->st;
}

/* Shares of every member of @p st; *pl_out is built unless @p st is the live state. */
static double *shares_of(struct ctl_session *s, const struct ctl_state *st,
			 struct pl_placement **owned, const struct pl_placement **pl)
{
	double *sh = calloc((size_t)ctl_state_count(st) + 1, sizeof(*sh));

	*owned = NULL;
	*pl = st == s->e->st ? s->e->pl : (*owned = ctl_state_build(st, NULL, 0));
	if (sh == NULL || *pl == NULL || pl_shares(*pl, sh) < 0) {
		free(sh);
		pl_free(*owned);
		*owned = NULL;
		return NULL;
	}
	return sh;
}

static bool same_place(const struct ctl_member *a, const struct ctl_member *b)
{
	return a->pl.port == b->pl.port && strcmp(a->pl.addr, b->pl.addr) == 0 &&
	       a->has_mac == b->has_mac && (!a->has_mac || memcmp(a->mac, b->mac, 6) == 0);
}

/*
 * One line per member of either side. Members are matched by name through the placements'
 * name index (member i of a state is member i of its placement): O(n log n) at 10,000 nodes.
 */
static void plan_body(const struct ctl_state *a, const struct pl_placement *pa, const double *sa,
		      const struct ctl_state *b, const struct pl_placement *pb, const double *sb,
		      struct ctl_text *body, uint32_t *n)
{
	for (uint32_t i = 0; i < ctl_state_count(a); i++) {
		const struct ctl_member *m = ctl_state_member(a, i);
		int32_t j = pl_member_find(pb, m->pl.name);
		const char *what = "removed";

		if (j >= 0)
			what = ctl_state_member(b, (uint32_t)j)->pl.weight != m->pl.weight
				       ? "reweighted"
			       : same_place(m, ctl_state_member(b, (uint32_t)j)) ? "kept"
										 : "readdressed";
		ctl_text_appendf(body, "name %s share_before %.6f share_after %.6f change %s\n",
				 m->pl.name, sa[i], j >= 0 ? sb[j] : 0.0, what);
		(*n)++;
	}
	for (uint32_t j = 0; j < ctl_state_count(b); j++) {
		const struct ctl_member *m = ctl_state_member(b, j);

		if (pl_member_find(pa, m->pl.name) >= 0)
			continue;
		ctl_text_appendf(body,
				 "name %s share_before 0.000000 share_after %.6f change added\n",
				 m->pl.name, sb[j]);
		(*n)++;
	}
}

static int do_plan(struct ctl_session *s, const struct ctl_cmd *cmd, struct ctl_text *r)
{
	const struct pl_placement *pa, *pb;
	struct pl_placement *oa = NULL, *ob = NULL;
	const struct ctl_state *cur = view_of(s);
	struct ctl_state *next = ctl_state_copy(cur);
	struct ctl_text body = {0};
	double *sa = NULL, *sb = NULL, moved;
	char why[REASON_MAX];
	uint32_t n = 0;
	int rc;

	if (next == NULL)
		return reply_error(s, r, "out of memory");
	if (ctl_state_apply(next, cmd, why, sizeof(why)) < 0) {
		rc = reply_error(s, r, "%s", why);
		goto out;
	}
	sa = shares_of(s, cur, &oa, &pa);
	sb = shares_of(s, next, &ob, &pb);
	if (sa == NULL || sb == NULL) {
		rc = reply_error(s, r, "cannot build the placement: %s", strerror(errno));
		goto out;
	}
	plan_body(cur, pa, sa, next, pb, sb, &body, &n);
	if (pl_moved_fraction(pa, pb, &moved) == 0)
		ctl_text_appendf(r, "OK lines %u moved %.6f", n, moved);
	else
		ctl_text_appendf(r, "OK lines %u moved unknown", n);
	ctl_text_appendf(r, " members_before %u members_after %u epoch %" PRIu64 "\n",
			 ctl_state_count(cur), ctl_state_count(next), ctl_state_epoch(s->e->st));
	rc = ctl_text_append(r, body.buf, body.len);
out:
	free(sa);
	free(sb);
	pl_free(oa);
	pl_free(ob);
	ctl_text_release(&body);
	ctl_state_free(next);
	return rc;
}

/* Why a change may not run now (fleet rules), or NULL. */
static const char *fleet_refusal(const struct ctl_session *s, const struct ctl_cmd *cmd)
{
	if (cmd->has_fleet_epoch && s->txn != NULL)
		return "replace epoch E cannot be queued in a transaction (transaction still "
		       "open)";
	if (s->e->fleet && !cmd->has_fleet_epoch && !cmd->plan)
		return "fleet-managed: this router's membership comes from the fleet's store "
		       "(etcd); change it there (ringwayctl --etcd URL --cluster NAME ...), or "
		       "run `fleet local` to take this router out of the fleet";
	return NULL;
}

/*
 * `replace epoch E digest D`, the fleet agent's form: this router takes the fleet's revision E
 * whatever its own epoch L, because the fleet's store, not this router's history, numbers a
 * fleet's memberships (a router started from an older state file, changed while `fleet
 * local`, or a store rebuilt with fresh revisions all leave L at or above E):
 *  - the result's digest must be D, or nothing changes (placement settings of this router
 *    that differ from the fleet's, e.g. hash_tag: the members alone would give another ring);
 *  - E above L: published at E; below L: published at E, the reply says `rebased_from L`;
 *  - E equal to L: nothing to do when the digest is D already (`changes 0`); otherwise the
 *    live membership is re-published at L + 1 first, then @p next at E: the data plane tells
 *    placements apart by epoch (hot set, workers' epoch_seen), so one epoch never names two.
 * Takes @p next.
 */
static int converge(struct ctl_session *s, struct ctl_state *next, uint64_t epoch, uint64_t digest,
		    struct ctl_text *r)
{
	const struct pl_config *cfg = ctl_state_config(s->e->st);
	uint64_t live = ctl_state_epoch(s->e->st), got = ctl_state_digest(next);
	struct ctl_text step = {0};
	struct pl_placement *pl;
	char why[REASON_MAX];
	int rc;

	if (got != digest) {
		char tag[5] = "none";

		if (cfg->hash_tag[0] != '\0')
			snprintf(tag, sizeof(tag), "%c%c", cfg->hash_tag[0], cfg->hash_tag[1]);
		ctl_state_free(next);
		return reply_error(
			s, r,
			"the result's digest %016" PRIx64 " is not the fleet's %016" PRIx64
			": this router's placement settings (algo %s vnodes %u maglev_size "
			"%u key_hash %s hash_tag %s) differ from the fleet's; nothing "
			"changed",
			got, digest, pl_algo_name(cfg->algo), cfg->vnodes, cfg->maglev_size,
			pl_hash_name(cfg->key_hash), tag);
	}
	if (epoch == live && got == s->e->digest) {
		ctl_state_free(next);
		return ctl_text_appendf(r, "OK epoch %" PRIu64 " changes 0\n", live);
	}
	if (epoch == live) {
		/* Check the second step can be built before the first is made. */
		if ((pl = ctl_state_build(next, why, sizeof(why))) == NULL) {
			ctl_state_free(next);
			return reply_error(s, r, "%s; nothing changed", why);
		}
		pl_free(pl);
		struct ctl_state *again = ctl_state_copy(s->e->st);

		if (again == NULL) {
			ctl_state_free(next);
			return reply_error(s, r, "out of memory");
		}
		rc = commit_state(s, again, live + 1, &step);
		if (rc < 0 || step.len < 2 || strncmp(step.buf, "OK", 2) != 0) {
			ctl_state_free(next);
			if (rc >= 0)
				rc = ctl_text_append(r, step.buf, step.len);
			ctl_text_release(&step);
			return rc;
		}
		ctl_text_release(&step);
	}
	rc = commit_state(s, next, epoch, &step);
	if (rc >= 0 && epoch < live && step.len > 0 && strncmp(step.buf, "OK", 2) == 0 &&
	    step.buf[step.len - 1] == '\n')
		step.len--, rc = ctl_text_appendf(&step, " rebased_from %" PRIu64 "\n", live);
	if (rc >= 0)
		rc = ctl_text_append(r, step.buf ? step.buf : "", step.len);
	ctl_text_release(&step);
	return rc;
}

static int change(struct ctl_session *s, const struct ctl_cmd *cmd, struct ctl_text *r);

/* A change; a fleet revision (`replace epoch R ...`) refused is remembered as refused, one
 * applied at or above the remembered one ends it. */
static int do_change(struct ctl_session *s, const struct ctl_cmd *cmd, struct ctl_text *r)
{
	uint64_t errors = s->e->cnt.errors;
	int rc = change(s, cmd, r);

	if (!cmd->has_fleet_epoch || cmd->plan || s->txn != NULL)
		return rc;
	if (s->e->cnt.errors != errors && cmd->fleet_epoch > s->e->fleet_refused)
		s->e->fleet_refused = cmd->fleet_epoch;
	else if (s->e->cnt.errors == errors && cmd->fleet_epoch >= s->e->fleet_refused)
		s->e->fleet_refused = 0;
	return rc;
}

static int change(struct ctl_session *s, const struct ctl_cmd *cmd, struct ctl_text *r)
{
	uint64_t live = ctl_state_epoch(s->e->st);
	char why[REASON_MAX];
	struct ctl_state *next;
	const char *no = fleet_refusal(s, cmd);

	if (no != NULL)
		return reply_error(s, r, "%s", no);
	if (cmd->has_fleet_epoch && !cmd->plan && cmd->has_fleet_digest && cmd->fleet_epoch == 0)
		return reply_error(s, r,
				   "replace epoch 0: no fleet revision is 0; nothing changed");
	if (cmd->has_fleet_epoch && !cmd->plan && !cmd->has_fleet_digest &&
	    cmd->fleet_epoch <= live)
		return reply_error(s, r,
				   "epoch is %" PRIu64 ": replace epoch %" PRIu64
				   " must be above it; nothing changed",
				   live, cmd->fleet_epoch);
	if (check_router_address(s->e, cmd, why, sizeof(why)) < 0 ||
	    check_routes(&s->e->routes, cmd->type == CTL_CMD_ADD ? &cmd->member : cmd->members,
			 cmd->type == CTL_CMD_ADD	? 1
			 : cmd->type == CTL_CMD_REPLACE ? cmd->nmembers
							: 0,
			 why, sizeof(why)) < 0)
		return reply_error(s, r, "%s%s", why, s->txn ? " (transaction still open)" : "");
	if (cmd->plan)
		return do_plan(s, cmd, r);
	if (s->txn != NULL) {
		/* ctl_state_apply leaves the pending state unchanged when it refuses. */
		if (ctl_state_apply(s->txn, cmd, why, sizeof(why)) < 0)
			return reply_error(s, r, "%s (transaction still open)", why);
		s->txn_changes++;
		return ctl_text_appendf(r, "OK queued %u\n", s->txn_changes);
	}
	next = ctl_state_copy(s->e->st);
	if (next == NULL)
		return reply_error(s, r, "out of memory");
	if (ctl_state_apply(next, cmd, why, sizeof(why)) < 0) {
		ctl_state_free(next);
		return reply_error(s, r, "%s", why);
	}
	if (cmd->has_fleet_digest)
		return converge(s, next, cmd->fleet_epoch, cmd->fleet_digest, r);
	return commit_state(s, next, cmd->has_fleet_epoch ? cmd->fleet_epoch : live + 1, r);
}

static int do_list(struct ctl_session *s, struct ctl_text *r)
{
	const struct ctl_state *st = view_of(s);
	const struct pl_placement *pl;
	struct pl_placement *owned;
	double *sh = shares_of(s, st, &owned, &pl);
	uint32_t n = ctl_state_count(st);
	char mac[18], ep[PL_ENDPOINT_MAX];

	if (sh == NULL)
		return reply_error(s, r, "cannot build the placement: %s", strerror(errno));
	ctl_text_appendf(r, "OK lines %u members %u epoch %" PRIu64 "%s\n", n, n,
			 ctl_state_epoch(s->e->st), s->txn ? " pending yes" : "");
	for (uint32_t i = 0; i < n; i++) {
		const struct ctl_member *m = ctl_state_member(st, i);

		if (m->has_mac)
			ctl_mac_format(m->mac, mac);
		pl_member_endpoint(&m->pl, ep);
		ctl_text_appendf(r, "name %s addr %s weight %u state %s share %.6f mac %s",
				 m->pl.name, ep, m->pl.weight, m->pl.weight ? "active" : "drained",
				 sh[i], m->has_mac ? mac : "arp");
		if (st == s->e->st && s->e->ops.member_status != NULL)
			s->e->ops.member_status(s->e->ops.ctx, i, m, r);
		ctl_text_appendf(r, "\n");
	}
	free(sh);
	pl_free(owned);
	return 0;
}

static int do_ring(struct ctl_session *s, struct ctl_text *r)
{
	const struct ctl_state *st = view_of(s);
	struct pl_placement *owned = NULL;
	const struct pl_placement *pl =
		st == s->e->st ? s->e->pl : (owned = ctl_state_build(st, NULL, 0));
	const struct pl_config *cfg;
	uint32_t weighted = 0;

	if (pl == NULL)
		return reply_error(s, r, "cannot build the placement: %s", strerror(errno));
	cfg = pl_config_of(pl);
	for (uint32_t i = 0; i < ctl_state_count(st); i++)
		weighted += ctl_state_member(st, i)->pl.weight > 0;
	ctl_text_appendf(r, "OK algo %s vnodes %u points %" PRIu64 " members %u weighted %u",
			 pl_algo_name(cfg->algo), cfg->vnodes, pl_point_count(pl),
			 ctl_state_count(st), weighted);
	if (cfg->hash_tag[0] != '\0')
		ctl_text_appendf(r, " hash_tag %c%c", cfg->hash_tag[0], cfg->hash_tag[1]);
	else
		ctl_text_appendf(r, " hash_tag none");
	ctl_text_appendf(r, " memory %zu epoch %" PRIu64 "%s", pl_memory(pl),
			 ctl_state_epoch(s->e->st), s->txn ? " pending yes" : "");
	/* Fleet routers compare digests; a standalone router keeps its reply as it was. */
	if (s->e->fleet)
		ctl_text_appendf(r, " digest %016" PRIx64 " fleet managed",
				 owned != NULL ? ctl_state_digest(st) : s->e->digest);
	ctl_text_appendf(r, "\n");
	pl_free(owned);
	return 0;
}

/* Body lines of @p t: each must be non-empty; a missing last newline is added. */
static int count_lines(struct ctl_text *t, uint32_t *n)
{
	*n = 0;
	if (t->len > 0 && t->buf[t->len - 1] != '\n' && ctl_text_append(t, "\n", 1) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < t->len; i++) {
		if (t->buf[i] != '\n')
			continue;
		if (i == 0 || t->buf[i - 1] == '\n')
			return -EPROTO;
		(*n)++;
	}
	return 0;
}

/* `fleet state`: the live membership as the state-file text a fleet's store holds (what
 * `ringwayctl --etcd init --router SOCKET` stores), with the mode, epoch and digest. */
static int do_fleet_state(struct ctl_session *s, struct ctl_text *r)
{
	struct ctl_text body = {0};
	uint32_t n = 0;
	int rc;

	if (ctl_state_to_text(s->e->st, &body) < 0 || count_lines(&body, &n) < 0) {
		ctl_text_release(&body);
		return reply_error(s, r, "out of memory");
	}
	ctl_text_appendf(r, "OK lines %u fleet %s epoch %" PRIu64 " digest %016" PRIx64 "\n", n,
			 s->e->fleet ? "managed" : "local", ctl_state_epoch(s->e->st),
			 s->e->digest);
	rc = ctl_text_append(r, body.buf, body.len);
	ctl_text_release(&body);
	return rc;
}

static int do_stats(struct ctl_session *s, struct ctl_text *r)
{
	struct ctl_engine *e = s->e;
	struct ctl_text body = {0};
	uint32_t n = 0;
	int rc;

#define CTL_COUNTER_LINE(f, name) ctl_text_appendf(&body, name " %" PRIu64 "\n", e->cnt.f);
	CTL_FOREACH_COUNTER(CTL_COUNTER_LINE)
#undef CTL_COUNTER_LINE
	ctl_text_appendf(&body, "ctl.epoch %" PRIu64 "\nctl.members %u\n", ctl_state_epoch(e->st),
			 ctl_state_count(e->st));
	rc = e->ops.stats ? e->ops.stats(e->ops.ctx, &body) : 0;
	if (rc == 0)
		rc = count_lines(&body, &n);
	if (rc == 0 && body.oom)
		rc = -ENOMEM;
	if (rc < 0)
		rc = reply_error(s, r, "stats unavailable: %s", strerror(-rc));
	else if ((rc = ctl_text_appendf(r, "OK lines %u\n", n)) == 0)
		rc = ctl_text_append(r, body.buf, body.len);
	ctl_text_release(&body);
	return rc;
}

/* `hotkeys [N]`: the router's hot-key view, `OK lines N` and its pairs, then a line a key. */
static int do_hotkeys(struct ctl_session *s, uint32_t count, struct ctl_text *r)
{
	struct ctl_engine *e = s->e;
	struct ctl_text head = {0}, body = {0};
	uint32_t n = 0;
	int rc;

	if (e->ops.hotkeys == NULL)
		return reply_error(s, r, "hotkeys: this router has no hot-key detection");
	rc = e->ops.hotkeys(e->ops.ctx, count, &head, &body);
	if (rc == 0)
		rc = count_lines(&body, &n);
	if (rc == 0 && (body.oom || head.oom))
		rc = -ENOMEM;
	if (rc < 0)
		rc = reply_error(s, r, "hotkeys unavailable: %s", strerror(-rc));
	else if ((rc = ctl_text_appendf(r, "OK lines %u%s\n", n, head.buf ? head.buf : "")) == 0)
		rc = ctl_text_append(r, body.buf, body.len);
	ctl_text_release(&head);
	ctl_text_release(&body);
	return rc;
}

/* `hot add|remove KEY`: pin or unpin a key for spreading. */
static int do_hot(struct ctl_session *s, const struct ctl_cmd *cmd, struct ctl_text *r)
{
	struct ctl_engine *e = s->e;
	char why[REASON_MAX];

	if (e->ops.hot_pin == NULL)
		return reply_error(s, r, "hot: this router has no hot-key spreading");
	if (e->ops.hot_pin(e->ops.ctx, cmd->pin, cmd->key, strlen(cmd->key), why, sizeof(why)) < 0)
		return reply_error(s, r, "hot %s %s: %s", cmd->pin ? "add" : "remove", cmd->key,
				   why);
	return ctl_text_appendf(r, "OK %s %s\n", cmd->pin ? "pinned" : "unpinned", cmd->key);
}

static int do_begin(struct ctl_session *s, struct ctl_text *r)
{
	if (s->txn != NULL)
		return reply_error(s, r, "a transaction is already open (nested begin)");
	s->txn = ctl_state_copy(s->e->st);
	if (s->txn == NULL)
		return reply_error(s, r, "out of memory");
	s->txn_base = ctl_state_epoch(s->e->st);
	s->txn_changes = 0;
	return ctl_text_appendf(r, "OK transaction open epoch %" PRIu64 "\n", s->txn_base);
}

static int do_commit(struct ctl_session *s, struct ctl_text *r)
{
	struct ctl_state *txn = s->txn;
	uint64_t live = ctl_state_epoch(s->e->st);

	if (txn == NULL)
		return reply_error(s, r, "commit without begin");
	s->txn = NULL;
	if (live != s->txn_base) {
		ctl_state_free(txn);
		return reply_error(s, r,
				   "epoch is %" PRIu64 ", the transaction began at %" PRIu64
				   ": transaction discarded, nothing changed",
				   live, s->txn_base);
	}
	if (s->txn_changes == 0) {
		ctl_state_free(txn);
		return ctl_text_appendf(r, "OK epoch %" PRIu64 " changes 0\n", live);
	}
	return commit_state(s, txn, live + 1, r);
}

static int do_abort(struct ctl_session *s, struct ctl_text *r)
{
	if (s->txn == NULL)
		return reply_error(s, r, "abort without begin");
	ctl_state_free(s->txn);
	s->txn = NULL;
	return ctl_text_appendf(r, "OK transaction aborted changes %u\n", s->txn_changes);
}

/* `health NAME ...`: the router's health of one member; the membership is not touched. */
static int do_health(struct ctl_session *s, const struct ctl_cmd *cmd, struct ctl_text *r)
{
	static const char *const what[] = {"down", "up", "up flushed", "up stale accepted"};
	char why[REASON_MAX] = "";
	int rc;

	if (ctl_state_find(s->e->st, cmd->name) < 0)
		return reply_error(s, r, "unknown node %s", cmd->name);
	if (s->e->ops.health == NULL)
		return reply_error(s, r, "no data plane to apply health to");
	rc = s->e->ops.health(s->e->ops.ctx, cmd->name, cmd->health, why, sizeof(why));
	if (rc < 0)
		return reply_error(s, r, "%s", why[0] ? why : strerror(-rc));
	return ctl_text_appendf(r, "OK health %s %s epoch %" PRIu64 "\n", cmd->name,
				what[cmd->health], ctl_state_epoch(s->e->st));
}

/* `warmup [end]`: the data plane's warm-up window; the membership is not touched. */
static int do_warmup(struct ctl_session *s, const struct ctl_cmd *cmd, struct ctl_text *r)
{
	char why[REASON_MAX] = "";
	int rc;

	if (s->e->ops.warmup == NULL)
		return reply_error(s, r, "no data plane to warm up");
	rc = s->e->ops.warmup(s->e->ops.ctx, cmd->warm_end, r, why, sizeof(why));
	if (rc < 0)
		return reply_error(s, r, "%s", why[0] ? why : strerror(-rc));
	return 0;
}

/* `drain ...`, `undrain`: the data plane's drain; the membership is not touched. */
static int do_drain(struct ctl_session *s, const struct ctl_cmd *cmd, struct ctl_text *r)
{
	char why[REASON_MAX] = "";
	int rc;

	if (s->e->ops.drain == NULL)
		return reply_error(s, r, "no data plane to drain");
	rc = s->e->ops.drain(s->e->ops.ctx, cmd->drain, r, why, sizeof(why));
	if (rc < 0)
		return reply_error(s, r, "%s", why[0] ? why : strerror(-rc));
	return 0;
}

static int route_list(struct ctl_session *s, struct ctl_text *r)
{
	const struct rt_table *t = &s->e->routes;
	char text[RT_TEXT_MAX];

	ctl_text_appendf(r, "OK lines %u routes %u\n", t->n, t->n);
	for (uint32_t i = 0; i < t->n; i++) {
		rt_format(&t->r[i], text);
		ctl_text_appendf(r, "%s\n", text);
	}
	return 0;
}

/*
 * Make @p next the live routes as commit_state makes a membership live: the state file first
 * (the live membership recording @p next), then the router (ops->routes); a failed save
 * changes nothing, a refusal by the router puts the file back. The live state is swapped for
 * its copy (same members, epoch and placement).
 */
static int commit_routes(struct ctl_session *s, const struct rt_table *next, const char *done,
			 struct ctl_text *r)
{
	struct ctl_engine *e = s->e;
	char why[REASON_MAX], why2[REASON_MAX];
	struct ctl_state *st = ctl_state_copy(e->st);
	int saved, rc;

	if (st == NULL)
		return reply_error(s, r, "out of memory; nothing changed");
	ctl_state_set_routes(st, next);
	saved = e->state_path != NULL ? ctl_state_save(st, e->state_path, why, sizeof(why)) : 0;
	if (saved < 0) {
		e->cnt.save_failed++;
		ctl_state_free(st);
		return reply_error(s, r, "%s; nothing changed", why);
	}
	e->cnt.save_not_durable += saved == 1;
	rc = e->ops.routes ? e->ops.routes(e->ops.ctx, next) : 0;
	if (rc < 0) {
		ctl_state_free(st);
		if (e->state_path != NULL &&
		    ctl_state_save(e->st, e->state_path, why2, sizeof(why2)) < 0) {
			e->cnt.save_failed++;
			return reply_error(s, r, "routes not applied: %s; nothing changed, but %s",
					   strerror(-rc), why2);
		}
		return reply_error(s, r, "routes not applied: %s; nothing changed", strerror(-rc));
	}
	ctl_state_free(e->st);
	e->st = st;
	e->routes = *next;
	return ctl_text_appendf(r, "OK route %s routes %u%s\n", done, next->n,
				saved == 1 ? " durable no" : "");
}

/* route add / remove: on a copy; every live member keeps a route; saved, then applied. */
static int do_route(struct ctl_session *s, const struct ctl_cmd *cmd, struct ctl_text *r)
{
	struct ctl_engine *e = s->e;
	char why[REASON_MAX], text[RT_TEXT_MAX];
	struct rt_table next = e->routes;
	const char *done = "removed";
	int rc;

	if (cmd->route_op == CTL_ROUTE_LIST)
		return route_list(s, r);
	rt_format(&cmd->route, text);
	if (cmd->route_op == CTL_ROUTE_REMOVE)
		*strchr(text, ' ') = '\0'; /* the prefix alone */
	if (cmd->route_op == CTL_ROUTE_ADD) {
		rc = rt_add(&next, &cmd->route, why, sizeof(why));
		done = rc == 2 ? "replaced" : "added";
	} else {
		rc = rt_remove(&next, &cmd->route, why, sizeof(why));
	}
	if (rc < 0)
		return reply_error(s, r, "route %s: %s; nothing changed",
				   cmd->route_op == CTL_ROUTE_ADD ? "add" : "remove", why);
	if (check_state_routes(&next, e->st, why, sizeof(why)) < 0)
		return reply_error(s, r, "route %s %s would leave %s; nothing changed",
				   cmd->route_op == CTL_ROUTE_ADD ? "add" : "remove", text, why);
	return commit_routes(s, &next, done, r);
}

/* `gutter add|remove|list`: the gutter pool lives in the router, outside the membership: no
 * epoch change, no state file. A gutter node may not share a member's name. */
static int do_gutter(struct ctl_session *s, const struct ctl_cmd *cmd, struct ctl_text *r)
{
	static const char *const what[] = {"add", "remove", "list"};
	struct ctl_text lines = {0};
	char why[REASON_MAX] = "";
	int rc;

	if (s->e->ops.gutter == NULL)
		return reply_error(s, r, "no data plane to hold a gutter pool");
	if (cmd->gutter == CTL_GUTTER_ADD && ctl_state_find(s->e->st, cmd->member.pl.name) >= 0)
		return reply_error(s, r, "%s is a member, not a gutter node", cmd->member.pl.name);
	rc = s->e->ops.gutter(s->e->ops.ctx, cmd->gutter, &cmd->member, &lines, why, sizeof(why));
	if (rc < 0) {
		ctl_text_release(&lines);
		return reply_error(s, r, "%s", why[0] ? why : strerror(-rc));
	}
	if (cmd->gutter == CTL_GUTTER_LIST)
		ctl_text_appendf(r, "OK lines %d gutter %d epoch %" PRIu64 "\n%s", rc, rc,
				 ctl_state_epoch(s->e->st), lines.buf ? lines.buf : "");
	else
		ctl_text_appendf(r, "OK gutter %s %s epoch %" PRIu64 "\n", what[cmd->gutter],
				 cmd->member.pl.name, ctl_state_epoch(s->e->st));
	ctl_text_release(&lines);
	return 0;
}

/* Run a parsed command; 1 when a reply was appended, 0 when a replace block began. */
static int run(struct ctl_session *s, struct ctl_cmd *cmd, struct ctl_text *r)
{
	uint64_t live = ctl_state_epoch(s->e->st);

	if (cmd->type == CTL_CMD_REPLACE && cmd->block) {
		/* Member lines follow; the epoch condition is checked at `end`. */
		s->in_block = true;
		s->block = *cmd;
		return 0;
	}
	if (cmd->if_epoch && cmd->epoch != live) {
		reply_error(s, r, "epoch is %" PRIu64, live);
		return 1;
	}
	switch (cmd->type) {
	case CTL_CMD_LIST:
		do_list(s, r);
		break;
	case CTL_CMD_RING:
		do_ring(s, r);
		break;
	case CTL_CMD_STATS:
		do_stats(s, r);
		break;
	case CTL_CMD_EPOCH:
		ctl_text_appendf(r, "OK epoch %" PRIu64, live);
		if (s->e->fleet)
			ctl_text_appendf(r, " digest %016" PRIx64 " fleet managed", s->e->digest);
		ctl_text_appendf(r, "\n");
		break;
	case CTL_CMD_FLEET:
		if (cmd->fleet == 2) {
			do_fleet_state(s, r);
			break;
		}
		if (cmd->fleet == 3 && cmd->fleet_epoch > s->e->fleet_refused)
			s->e->fleet_refused = cmd->fleet_epoch;
		if (cmd->fleet == 0 || cmd->fleet == 1)
			s->e->fleet = cmd->fleet == 1;
		if (cmd->fleet == 0)
			s->e->fleet_refused = 0;
		ctl_text_appendf(r, "OK fleet %s epoch %" PRIu64 " digest %016" PRIx64,
				 s->e->fleet ? "managed" : "local", live, s->e->digest);
		if (s->e->fleet_refused != 0)
			ctl_text_appendf(r, " refused %" PRIu64, s->e->fleet_refused);
		ctl_text_appendf(r, "\n");
		break;
	case CTL_CMD_HEALTH:
		do_health(s, cmd, r);
		break;
	case CTL_CMD_WARMUP:
		do_warmup(s, cmd, r);
		break;
	case CTL_CMD_HOTKEYS:
		do_hotkeys(s, cmd->count, r);
		break;
	case CTL_CMD_HOT:
		do_hot(s, cmd, r);
		break;
	case CTL_CMD_GUTTER:
		do_gutter(s, cmd, r);
		break;
	case CTL_CMD_DRAIN:
	case CTL_CMD_UNDRAIN:
		do_drain(s, cmd, r);
		break;
	case CTL_CMD_BEGIN:
		do_begin(s, r);
		break;
	case CTL_CMD_COMMIT:
		do_commit(s, r);
		break;
	case CTL_CMD_ABORT:
		do_abort(s, r);
		break;
	case CTL_CMD_ROUTE:
		do_route(s, cmd, r);
		break;
	default:
		do_change(s, cmd, r);
		break;
	}
	return 1;
}

static int block_member(struct ctl_session *s, const char *line, size_t len)
{
	struct ctl_cmd *b = &s->block;
	char why[REASON_MAX];
	struct ctl_member *m;

	if (s->block_err[0] != '\0')
		return 0;
	if (len > CTL_LINE_MAX || check_bytes(line, len, why, sizeof(why)) < 0 ||
	    (b->nmembers >= PL_MEMBERS_MAX &&
	     ctl_fail(why, sizeof(why), "more than %d members", PL_MEMBERS_MAX)) ||
	    ctl_member_parse(line, len, &b->members[b->nmembers], why, sizeof(why)) < 0) {
		snprintf(s->block_err, sizeof(s->block_err), "replace line %u: %s", s->block_lines,
			 len > CTL_LINE_MAX ? "line too long" : why);
		return 0;
	}
	b->nmembers++;
	if (b->nmembers == s->block_cap) {
		uint32_t cap = s->block_cap ? s->block_cap * 2 : 64;

		m = realloc(b->members, ((size_t)cap + 1) * sizeof(*m));
		if (m == NULL) {
			snprintf(s->block_err, sizeof(s->block_err), "out of memory");
			return 0;
		}
		b->members = m;
		s->block_cap = cap;
	}
	return 0;
}

/* A line inside a `replace` block: a member, or `end`. */
static int block_line(struct ctl_session *s, const char *line, size_t len, struct ctl_text *r)
{
	const char *cur = line, *end = line + len;
	struct span w;

	if (!word(&cur, end, &w))
		return 0;
	s->block_lines++;
	if (!span_is(&w, "end") || !rest_empty(cur, end)) {
		if (s->block.members == NULL) {
			s->block.members = calloc(65, sizeof(*s->block.members));
			s->block_cap = s->block.members ? 64 : 0;
			if (s->block.members == NULL)
				snprintf(s->block_err, sizeof(s->block_err), "out of memory");
		}
		return block_member(s, line, len);
	}
	s->e->cnt.commands++;
	s->block.block = false;
	if (s->block_err[0] != '\0')
		reply_error(s, r, "%s; nothing changed", s->block_err);
	else if (s->block.if_epoch && s->block.epoch != ctl_state_epoch(s->e->st))
		reply_error(s, r, "epoch is %" PRIu64, ctl_state_epoch(s->e->st));
	else
		do_change(s, &s->block, r);
	block_reset(s);
	return 1;
}

int ctl_session_line(struct ctl_session *s, const char *line, size_t len, struct ctl_text *r)
{
	char why[REASON_MAX];
	struct ctl_cmd cmd;
	int rc;

	s->line_ns = mono_ns();
	if (len > 0 && line[len - 1] == '\r')
		len--;
	if (s->in_block)
		rc = block_line(s, line, len, r);
	else if (rest_empty(line, line + len))
		return 0;
	else if (ctl_cmd_parse(line, len, &cmd, why, sizeof(why)) < 0) {
		s->e->cnt.commands++;
		reply_error(s, r, "%s", why);
		rc = 1;
	} else {
		rc = run(s, &cmd, r);
		if (rc == 1) {
			s->e->cnt.commands++;
			ctl_cmd_release(&cmd);
		}
	}
	return r->oom ? -ENOMEM : rc;
}

/* ---- client side: reply framing and reader ---- */

int ctl_reply_head(const char *line, bool *ok, uint32_t *nlines)
{
	uint64_t n;
	size_t len;

	*nlines = 0;
	if (strncmp(line, "ERROR", 5) == 0 && (line[5] == '\0' || line[5] == ' ')) {
		*ok = false;
		return 0;
	}
	if (strncmp(line, "OK", 2) != 0 || (line[2] != '\0' && line[2] != ' '))
		return -EPROTO;
	*ok = true;
	if (strncmp(line + 2, " lines ", 7) != 0)
		return 0;
	line += 9;
	len = strcspn(line, " ");
	if (ctl_parse_u64(line, len, REPLY_LINES_MAX, &n) < 0)
		return -EPROTO;
	*nlines = (uint32_t)n;
	return 0;
}

struct ctl_reader {
	int fd;
	char *buf;
	size_t off, len, cap;
};

struct ctl_reader *ctl_reader_new(int fd)
{
	struct ctl_reader *rd = calloc(1, sizeof(*rd));

	if (rd == NULL)
		return NULL;
	rd->fd = fd;
	rd->cap = 4096;
	rd->buf = malloc(rd->cap);
	if (rd->buf == NULL) {
		free(rd);
		return NULL;
	}
	return rd;
}

void ctl_reader_free(struct ctl_reader *rd)
{
	if (rd == NULL)
		return;
	free(rd->buf);
	free(rd);
}

static int reader_fill(struct ctl_reader *rd, int timeout_ms)
{
	struct pollfd pfd = {.fd = rd->fd, .events = POLLIN};
	ssize_t n;
	int rc;

	if (rd->off > 0) {
		memmove(rd->buf, rd->buf + rd->off, rd->len - rd->off);
		rd->len -= rd->off;
		rd->off = 0;
	}
	if (rd->len == rd->cap) {
		size_t cap = rd->cap ? rd->cap * 2 : 4096;
		char *p = realloc(rd->buf, cap);

		if (p == NULL)
			return -ENOMEM;
		rd->buf = p;
		rd->cap = cap;
	}
	do
		rc = poll(&pfd, 1, timeout_ms);
	while (rc < 0 && errno == EINTR);
	if (rc < 0)
		return -errno;
	if (rc == 0)
		return -ETIMEDOUT;
	n = read(rd->fd, rd->buf + rd->len, rd->cap - rd->len);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -errno;
	if (n == 0)
		return -EPIPE;
	rd->len += (size_t)n;
	return 0;
}

static int reader_line(struct ctl_reader *rd, char **line, int timeout_ms)
{
	for (;;) {
		char *start = rd->buf + rd->off;
		char *nl = rd->len > rd->off ? memchr(start, '\n', rd->len - rd->off) : NULL;
		int rc;

		if (nl != NULL) {
			*line = strndup(start, (size_t)(nl - start));
			rd->off = (size_t)(nl - rd->buf) + 1;
			return *line ? 0 : -ENOMEM;
		}
		if (rd->len - rd->off > REPLY_LINE_MAX)
			return -EPROTO;
		if ((rc = reader_fill(rd, timeout_ms)) < 0)
			return rc;
	}
}

int ctl_reader_next(struct ctl_reader *rd, struct ctl_reply *r, int timeout_ms)
{
	char *head = NULL;
	uint32_t n;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = reader_line(rd, &head, timeout_ms)) < 0)
		return rc;
	if (ctl_reply_head(head, &r->ok, &n) < 0) {
		free(head);
		return -EPROTO;
	}
	r->head = strdup(head + (r->ok ? 2 : 5) + (head[r->ok ? 2 : 5] == ' '));
	free(head);
	r->lines = calloc((size_t)n + 1, sizeof(*r->lines));
	if (r->head == NULL || r->lines == NULL) {
		ctl_reply_clear(r);
		return -ENOMEM;
	}
	for (; r->nlines < n; r->nlines++) {
		if ((rc = reader_line(rd, &r->lines[r->nlines], timeout_ms)) < 0) {
			ctl_reply_clear(r);
			return rc;
		}
	}
	return 0;
}

void ctl_reply_clear(struct ctl_reply *r)
{
	for (uint32_t i = 0; i < r->nlines; i++)
		free(r->lines[i]);
	free(r->lines);
	free(r->head);
	memset(r, 0, sizeof(*r));
}
