/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ringway-sync: the agent beside each router of a fleet. It watches the fleet's membership
 * key in etcd and applies each new revision to its router through the control socket as one
 * `replace epoch <mod_revision>` block, then registers what the router holds (revision,
 * digest, when, and any revision it refused) under a lease.
 *
 *   ringway-sync --etcd URL[,URL...] --cluster NAME --name ROUTER --socket PATH
 *                [--prefix /ringway] [--ttl S] [--timeout MS]
 *
 * A separate process rather than a mode of the router's control lcore: the router keeps no
 * HTTP client, no JSON parser and no blocking network calls on the lcore that publishes
 * placements; the agent speaks the same control protocol an operator does, so what it can do
 * is exactly what the protocol allows (the router checks every member and refuses what it
 * would refuse from a person); and either side can restart alone (the router serves its state
 * file, the agent catches up to the newest revision).
 *
 * Agreement is judged by digest as well as revision: the agent reports revision R only while
 * the router's own epoch is R and its digest is the one etcd's value of R gives. A router at
 * or above the fleet's revision with another membership (started from an older state file,
 * changed while `fleet local`, a store rebuilt with fresh revisions) is not "ahead": it is
 * brought to R with `replace epoch R digest D`, which the router refuses as a whole (state
 * and epoch unchanged) when its result would not have digest D (its placement settings
 * differ), so a refused value changes nothing. The agent checks the router every PING_MS and
 * converges it again when it moved outside the agent.
 *
 * Faults: etcd unreachable -> the router keeps its membership; the agent retries with
 * exponential backoff (0.1 s .. 5 s) and on reconnect reads the key afresh (the newest
 * revision, never the ones in between). A compacted watch revision -> a fresh read. A value
 * that does not parse, or that the router refuses -> not applied, reported under the
 * router's key, the router stays on its last good epoch. Router gone -> reconnect, `fleet
 * managed` again, resync. SIGINT/SIGTERM -> revoke nothing, just exit (the lease expires).
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "fleet.h"

#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000
#define PING_MS	       5000 /* an `epoch` on the control socket: the router's idle limit is 30 s */

struct opts {
	const char *etcd, *cluster, *name, *socket, *prefix;
	int ttl_s, timeout_ms;
};

struct agent {
	struct opts o;
	struct fl_client *etcd;
	struct fl_watch *watch;
	char key[FL_KEY_MAX], self[FL_KEY_MAX];
	int64_t lease;
	int64_t watch_from; /* next revision the watch must report */
	int64_t told;	    /* revision the router was told it refused (`fleet refused R`) */
	int64_t fleet_rev;  /* newest fleet revision handled in this connected period: an older
			     * one (a watch event behind a fresh read) is superseded, never applied
			     */
	/* router */
	int fd;
	struct ctl_reader *rd;
	int64_t epoch; /* the router's epoch, digest and mode as last read */
	uint64_t digest;
	bool managed;
	struct fl_report rep; /* what is registered */
	bool rep_dirty;
	uint64_t next_keepalive, next_ping;
	int backoff_ms;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void logf_(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ringway-sync: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static uint64_t now_ms(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

	nanosleep(&ts, NULL);
}

static void backoff(struct agent *a)
{
	sleep_ms(a->backoff_ms);
	a->backoff_ms = a->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : a->backoff_ms * 2;
}

/* ---- the router ---- */

static void router_close(struct agent *a)
{
	ctl_reader_free(a->rd);
	a->rd = NULL;
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
}

static int send_text(struct agent *a, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(a->fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Send @p text (whole lines) and read one reply into @p r. < 0: the router is gone. */
static int router_call(struct agent *a, const char *text, size_t len, struct ctl_reply *r)
{
	int rc = send_text(a, text, len);

	if (rc == 0)
		rc = ctl_reader_next(a->rd, r, a->o.timeout_ms);
	if (rc < 0) {
		logf_("router: %s", strerror(-rc));
		router_close(a);
	}
	return rc;
}

/* The value of `key` in a reply head (`k v k v ...`), or NULL. */
static const char *head_value(const char *head, const char *key, char *buf, size_t size)
{
	size_t k = strlen(key);

	for (const char *p = head; p != NULL && *p != '\0';) {
		if (strncmp(p, key, k) == 0 && p[k] == ' ') {
			snprintf(buf, size, "%.*s", (int)strcspn(p + k + 1, " "), p + k + 1);
			return buf;
		}
		p = strchr(p, ' ');
		p = p ? strchr(p + 1, ' ') : NULL;
		p = p ? p + 1 : NULL;
	}
	return NULL;
}

/* `fleet managed` (or `fleet`): the router's mode, epoch and digest. */
static int router_read_epoch(struct agent *a, const char *cmd)
{
	struct ctl_reply r;
	char line[64], v[32];
	int n = snprintf(line, sizeof(line), "%s\n", cmd), rc;

	if ((rc = router_call(a, line, (size_t)n, &r)) < 0)
		return rc;
	if (!r.ok || head_value(r.head, "epoch", v, sizeof(v)) == NULL ||
	    (a->epoch = strtoll(v, NULL, 10), head_value(r.head, "digest", v, sizeof(v))) == NULL) {
		logf_("router: '%s' answered '%s'", cmd, r.head);
		ctl_reply_clear(&r);
		router_close(a);
		return -EPROTO;
	}
	a->digest = strtoull(v, NULL, 16);
	a->managed = head_value(r.head, "fleet", v, sizeof(v)) != NULL && strcmp(v, "managed") == 0;
	ctl_reply_clear(&r);
	return 0;
}

static int router_connect(struct agent *a)
{
	char err[256];
	int fd = ctl_connect_unix(a->o.socket, err, sizeof(err));

	if (fd < 0) {
		logf_("router: %s", err);
		return fd;
	}
	a->fd = fd;
	a->rd = ctl_reader_new(fd);
	if (a->rd == NULL) {
		router_close(a);
		return -ENOMEM;
	}
	if (router_read_epoch(a, "fleet managed") < 0)
		return -EPROTO;
	logf_("router %s: fleet managed, epoch %" PRId64 " digest %016" PRIx64, a->o.socket,
	      a->epoch, a->digest);
	/* Which fleet revision it holds is not known until its digest is compared (resync). */
	a->rep.revision = 0;
	a->rep.digest = a->digest;
	a->rep_dirty = true;
	a->fleet_rev = 0;
	a->told = 0;
	return 0;
}

/* The replace block for @p st at fleet revision @p rev whose digest is @p digest; @p keep:
 * every member `--keep` (not flushed if it joins this router). */
static int block_of(const struct ctl_state *st, int64_t rev, uint64_t digest, bool keep,
		    struct ctl_text *t)
{
	char mac[18];

	ctl_text_appendf(t, "replace epoch %" PRId64 " digest %016" PRIx64 "\n", rev, digest);
	for (uint32_t i = 0; i < ctl_state_count(st); i++) {
		const struct ctl_member *m = ctl_state_member(st, i);

		char ep[PL_ENDPOINT_MAX];

		pl_member_endpoint(&m->pl, ep);
		ctl_text_appendf(t, "%s %s weight %u", m->pl.name, ep, m->pl.weight);
		if (m->has_mac) {
			snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", m->mac[0],
				 m->mac[1], m->mac[2], m->mac[3], m->mac[4], m->mac[5]);
			ctl_text_appendf(t, " mac %s", mac);
		}
		ctl_text_appendf(t, "%s\n", keep ? " --keep" : "");
	}
	ctl_text_appendf(t, "end\n");
	return t->oom ? -ENOMEM : 0;
}

/* Tell the router it could not apply @p rev (`fleet refused R`), so that its own `fleet`
 * reply and /metrics say so; once per revision and connection. */
static void tell_router(struct agent *a, int64_t rev)
{
	struct ctl_reply r;
	char line[64];
	int n;

	if (a->fd < 0 || a->told == rev || rev <= 0)
		return;
	n = snprintf(line, sizeof(line), "fleet refused %" PRId64 "\n", rev);
	if (router_call(a, line, (size_t)n, &r) < 0)
		return;
	if (!r.ok)
		logf_("router: 'fleet refused' answered '%s'", r.head);
	a->told = rev;
	ctl_reply_clear(&r);
}

static void refuse(struct agent *a, int64_t rev, const char *why)
{
	tell_router(a, rev);
	if (a->rep.error_revision == rev && strcmp(a->rep.error, why) == 0)
		return;
	logf_("revision %" PRId64 " not applied: %s", rev, why);
	a->rep.error_revision = rev;
	snprintf(a->rep.error, sizeof(a->rep.error), "%s", why);
	a->rep_dirty = true;
}

/* The placement settings of @p st against the router's (`ring`): "" when they agree. */
static int check_settings(struct agent *a, const struct ctl_state *st, char *why, size_t n)
{
	const struct pl_config *cfg = ctl_state_config(st);
	struct ctl_reply r;
	char algo[32], vnodes[16], htag[16], tag[5] = "none";
	int rc = router_call(a, "ring\n", 5, &r);

	why[0] = '\0';
	if (rc < 0)
		return rc;
	if (cfg->hash_tag[0] != '\0')
		snprintf(tag, sizeof(tag), "%c%c", cfg->hash_tag[0], cfg->hash_tag[1]);
	/* The rest (maglev_size, key_hash) the router checks itself: the digest it is sent. */
	if (r.ok && head_value(r.head, "algo", algo, sizeof(algo)) &&
	    head_value(r.head, "vnodes", vnodes, sizeof(vnodes)) &&
	    head_value(r.head, "hash_tag", htag, sizeof(htag)) &&
	    (strcmp(algo, pl_algo_name(cfg->algo)) != 0 ||
	     (cfg->vnodes != 0 && strtoul(vnodes, NULL, 10) != cfg->vnodes) ||
	     strcmp(htag, tag) != 0))
		snprintf(why, n,
			 "placement settings differ: etcd has algo %s vnodes %u hash_tag %s, the "
			 "router %s vnodes %s hash_tag %s",
			 pl_algo_name(cfg->algo), cfg->vnodes, tag, algo, vnodes, htag);
	ctl_reply_clear(&r);
	return 0;
}

/* The router holds revision @p rev (its epoch and digest are etcd's): report it. */
static void agreed(struct agent *a, int64_t rev)
{
	if (a->rep.revision == rev && a->rep.digest == a->digest &&
	    (a->rep.error[0] == '\0' || a->rep.error_revision > rev))
		return;
	a->rep.revision = rev;
	a->rep.digest = a->digest;
	if (a->rep.error_revision <= rev) {
		a->rep.error[0] = '\0';
		a->rep.error_revision = 0;
	}
	a->rep_dirty = true;
}

/* The router's epoch and digest were read anew: a report of a revision whose digest it no
 * longer holds is withdrawn (revision 0) until the next comparison. */
static void router_seen(struct agent *a)
{
	if (a->digest == a->rep.digest)
		return;
	a->rep.revision = 0;
	a->rep.digest = a->digest;
	a->rep_dirty = true;
}

/* Apply revision @p rev with value @p v to the router. < 0 only when the router is gone. */
static int apply(struct agent *a, int64_t rev, const char *v, size_t len)
{
	struct ctl_state *st = NULL;
	struct ctl_text block = {0};
	struct ctl_reply r;
	char why[512];
	int64_t was_epoch = a->epoch;
	uint64_t want, was_digest = a->digest;
	int rc = 0;

	/* The first revision of a connected period brings the router to the fleet, whose
	 * members are serving already (the router restarted, or joins the fleet): nothing it
	 * adds is flushed. Later ones are changes of the fleet: a member they add may hold
	 * values from before it left, and each router flushes it before it serves (a write
	 * through one router in the lag between them may be lost to another's flush: a miss). */
	bool keep = a->fleet_rev == 0;

	if (rev < a->fleet_rev)
		return 0; /* superseded by a newer revision already handled */
	a->fleet_rev = rev;
	if (ctl_state_from_text(v, len, &st, why, sizeof(why)) < 0) {
		refuse(a, rev, why);
		return 0;
	}
	want = ctl_state_digest(st);
	if (a->epoch == rev && a->digest == want) {
		agreed(a, rev);
		goto out_ok;
	}
	if (a->epoch >= rev)
		logf_("router at epoch %" PRId64 " digest %016" PRIx64
		      ", at or above the fleet's revision %" PRId64 " digest %016" PRIx64
		      " with another membership: bringing it to the fleet's",
		      a->epoch, a->digest, rev, want);
	if ((rc = check_settings(a, st, why, sizeof(why))) < 0 || why[0] != '\0' ||
	    (rc = block_of(st, rev, want, keep, &block)) < 0)
		goto out;
	if ((rc = router_call(a, block.buf, block.len, &r)) < 0)
		goto out;
	if (!r.ok)
		snprintf(why, sizeof(why), "the router refused it: %s", r.head);
	ctl_reply_clear(&r);
	if (why[0] == '\0' && (rc = router_read_epoch(a, "fleet")) == 0 &&
	    (a->digest != want || a->epoch != rev))
		snprintf(why, sizeof(why),
			 "applied, but the router is at epoch %" PRId64 " digest %016" PRIx64
			 ", not etcd's revision %" PRId64 " digest %016" PRIx64,
			 a->epoch, a->digest, rev, want);
	if (rc == 0 && why[0] == '\0') {
		agreed(a, rev);
		a->rep.applied_ms = (int64_t)now_ms(CLOCK_REALTIME);
		a->rep_dirty = true;
		logf_("applied revision %" PRId64 " digest %016" PRIx64 " (%u members)%s", rev,
		      a->digest, ctl_state_count(st),
		      was_epoch >= rev ? " over the router's own epoch" : "");
	}
out:
	if (rc == 0 && why[0] != '\0')
		refuse(a, rev, why);
	if (rc == 0 && why[0] != '\0' && a->fd >= 0 &&
	    (rc = router_read_epoch(a, "fleet")) == 0) { /* the router's own word on where it is */
		router_seen(a);
		if (a->epoch != was_epoch || a->digest != was_digest)
			logf_("revision %" PRId64
			      " refused, yet the router moved from epoch %" PRId64 " to %" PRId64,
			      rev, was_epoch, a->epoch);
	}
out_ok:
	ctl_text_release(&block);
	ctl_state_free(st);
	return rc;
}

/* ---- etcd ---- */

static int register_self(struct agent *a)
{
	char err[256], *v;
	int rc;

	if (!a->rep_dirty)
		return 0;
	if (a->lease == 0 &&
	    (rc = fl_lease_grant(a->etcd, a->o.ttl_s, &a->lease, err, sizeof(err))) < 0) {
		logf_("etcd lease: %s", err);
		return rc;
	}
	a->rep.digest = a->rep.digest ? a->rep.digest : a->digest;
	v = fl_report_format(&a->rep);
	if (v == NULL)
		return -ENOMEM;
	rc = fl_put(a->etcd, a->self, v, strlen(v), a->lease, NULL, err, sizeof(err));
	free(v);
	if (rc == -ENOENT)
		a->lease = 0; /* expired while we were away: a new one next time */
	if (rc < 0) {
		logf_("etcd register: %s", err);
		return rc;
	}
	a->rep_dirty = false;
	return 0;
}

/* Read the key afresh and apply it; the watch restarts after the read's revision. */
static int resync(struct agent *a)
{
	struct fl_range r;
	char err[256];
	int rc = fl_range(a->etcd, a->key, false, &r, err, sizeof(err));

	if (rc < 0) {
		logf_("etcd read %s: %s", a->key, err);
		return rc;
	}
	if (r.count == 0)
		logf_("no membership at %s yet (revision %" PRId64 ")", a->key, r.revision);
	else
		rc = apply(a, r.kvs[0].mod_revision, r.kvs[0].value, r.kvs[0].value_len);
	a->watch_from = r.revision + 1;
	fl_range_clear(&r);
	return rc < 0 ? 0 : 0; /* a lost router is seen by the main loop */
}

/* Drain what the watch has (waiting up to @p wait_ms for the first) and apply the newest. */
static int watch_step(struct agent *a, int wait_ms)
{
	struct fl_event ev, last = {0};
	bool have = false;
	char err[256];
	int rc;

	while ((rc = fl_watch_next(a->watch, have ? 0 : wait_ms, &ev, err, sizeof(err))) == 1) {
		if (ev.type == FL_EV_COMPACTED) {
			logf_("watch from %" PRId64 " compacted (at %" PRId64 "): reading afresh",
			      a->watch_from, ev.compact_revision);
			fl_event_clear(&ev);
			fl_event_clear(&last);
			return -ESTALE;
		}
		a->watch_from = ev.kv.mod_revision + 1;
		if (ev.type == FL_EV_DELETE) {
			refuse(a, ev.kv.mod_revision,
			       "the membership key was deleted; the router keeps its last one");
			fl_event_clear(&ev);
			continue;
		}
		fl_event_clear(&last);
		last = ev; /* only the newest revision is applied, never the ones between */
		have = true;
		wait_ms = 0;
	}
	if (rc < 0)
		logf_("etcd watch: %s", err);
	if (have && apply(a, last.kv.mod_revision, last.kv.value, last.kv.value_len) < 0)
		rc = rc < 0 ? rc : 0;
	fl_event_clear(&last);
	return rc < 0 ? rc : 0;
}

static int keepalive(struct agent *a)
{
	char err[256];
	int ttl, rc;

	if (a->lease == 0)
		return 0;
	rc = fl_lease_keepalive(a->etcd, a->lease, &ttl, err, sizeof(err));
	if (rc == -ENOENT) {
		logf_("lease expired: registering again");
		a->lease = 0;
		a->rep_dirty = true;
		return 0;
	}
	if (rc < 0)
		logf_("etcd keepalive: %s", err);
	return rc;
}

/* One connected period: resync, watch, keep the lease; returns when something broke. */
static void serve(struct agent *a)
{
	int rc;

	if (resync(a) < 0 || register_self(a) < 0)
		return;
	a->watch = fl_watch_open(a->etcd, a->key, a->watch_from);
	if (a->watch == NULL)
		return;
	a->backoff_ms = BACKOFF_MIN_MS;
	a->next_keepalive = now_ms(CLOCK_MONOTONIC) + (uint64_t)a->o.ttl_s * 1000 / 3;
	a->next_ping = now_ms(CLOCK_MONOTONIC) + PING_MS;
	while (!stop && a->fd >= 0) {
		rc = watch_step(a, 200);
		if (rc < 0)
			break;
		if (a->fd < 0)
			break;
		if (register_self(a) < 0)
			break;
		if (now_ms(CLOCK_MONOTONIC) >= a->next_keepalive) {
			if (keepalive(a) < 0)
				break;
			a->next_keepalive =
				now_ms(CLOCK_MONOTONIC) + (uint64_t)a->o.ttl_s * 1000 / 3;
		}
		if (now_ms(CLOCK_MONOTONIC) >= a->next_ping) {
			int64_t was = a->epoch;
			uint64_t was_digest = a->digest;

			if (router_read_epoch(a, "fleet") < 0)
				break;
			a->next_ping = now_ms(CLOCK_MONOTONIC) + PING_MS;
			/* While its agent runs a router is in the fleet: `fleet local` lasts
			 * until the next look (stop the agent to take a router out). */
			if (!a->managed) {
				logf_("router was set `fleet local` while its agent runs: managed "
				      "again");
				if (router_read_epoch(a, "fleet managed") < 0)
					break;
			}
			if (a->epoch != was || a->digest != was_digest) {
				/* Changed behind the agent's back (`fleet local` and a change, or a
				 * restart from another state file): withdraw the report, read the
				 * key afresh and converge again. */
				logf_("router moved outside the fleet: epoch %" PRId64
				      " -> %" PRId64 " digest %016" PRIx64 ": converging again",
				      was, a->epoch, a->digest);
				a->rep.revision = 0;
				a->rep.digest = a->digest;
				a->rep_dirty = true;
				break;
			}
		}
	}
	fl_watch_close(a->watch);
	a->watch = NULL;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longs[] = {
		{"etcd", required_argument, NULL, 'e'},
		{"cluster", required_argument, NULL, 'c'},
		{"name", required_argument, NULL, 'n'},
		{"socket", required_argument, NULL, 's'},
		{"prefix", required_argument, NULL, 'p'},
		{"ttl", required_argument, NULL, 't'},
		{"timeout", required_argument, NULL, 'T'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	o->prefix = "/ringway";
	o->ttl_s = 10;
	o->timeout_ms = 3000;
	o->socket = CTL_DEFAULT_SOCKET;
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 'e':
			o->etcd = optarg;
			break;
		case 'c':
			o->cluster = optarg;
			break;
		case 'n':
			o->name = optarg;
			break;
		case 's':
			o->socket = optarg;
			break;
		case 'p':
			o->prefix = optarg;
			break;
		case 't':
			o->ttl_s = atoi(optarg);
			break;
		case 'T':
			o->timeout_ms = atoi(optarg);
			break;
		case 'h':
			return 1;
		default:
			return -1;
		}
	}
	if (o->etcd == NULL || o->cluster == NULL || o->name == NULL || optind != argc ||
	    o->ttl_s < 2 || o->ttl_s > 3600 || o->timeout_ms < 100)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct agent a = {.fd = -1, .backoff_ms = BACKOFF_MIN_MS};

	int rc = parse_opts(argc, argv, &a.o);

	if (rc > 0) {
		printf("usage: ringway-sync --etcd URL[,URL...] --cluster NAME --name ROUTER\n"
		       "                    [--socket PATH] [--prefix P] [--ttl S] [--timeout MS]\n"
		       "\n"
		       "The fleet agent beside a router (ringway-sync(8)): applies each revision of\n"
		       "the membership key PREFIX/CLUSTER/... in etcd to the router as one replace\n"
		       "block, and registers what the router holds under a lease.\n"
		       "\n"
		       "  --etcd URL[,URL...]  etcd client URLs (its v3 JSON gateway)\n"
		       "  --cluster NAME       the fleet's name in etcd\n"
		       "  --name ROUTER        this router's name in the fleet\n"
		       "  --socket PATH        the router's control socket (default %s)\n"
		       "  --prefix P           etcd key prefix (default /ringway)\n"
		       "  --ttl S              lease of the router's registration, 2..3600 s\n"
		       "                       (default 10)\n"
		       "  --timeout MS         etcd request timeout, at least 100 (default 3000)\n"
		       "\n"
		       "signals: SIGINT, SIGTERM exit (the lease then expires)\n"
		       "exit: 0 stopped by a signal, 2 usage error (faults are retried, never fatal)\n",
		       CTL_DEFAULT_SOCKET);
		return 0;
	}
	if (rc < 0) {
		fprintf(stderr,
			"usage: ringway-sync --etcd URL[,URL...] --cluster NAME --name ROUTER "
			"[--socket PATH] [--prefix /ringway] [--ttl S (10)] [--timeout MS "
			"(3000)]\n");
		return 2;
	}
	if (fl_key_membership(a.o.prefix, a.o.cluster, a.key) < 0 ||
	    fl_key_router(a.o.prefix, a.o.cluster, a.o.name, a.self) < 0 || *a.o.name == '\0') {
		fprintf(stderr, "ringway-sync: bad --prefix, --cluster or --name\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (fl_global_init() < 0 || (a.etcd = fl_client_new(a.o.etcd, a.o.timeout_ms)) == NULL) {
		fprintf(stderr, "ringway-sync: bad --etcd '%s'\n", a.o.etcd);
		return 2;
	}
	logf_("watching %s on %s for router %s", a.key, a.o.etcd, a.o.name);
	while (!stop) {
		if (a.fd < 0 && router_connect(&a) < 0) {
			backoff(&a);
			continue;
		}
		serve(&a);
		if (!stop)
			backoff(&a);
	}
	router_close(&a);
	fl_client_free(a.etcd);
	return 0;
}
