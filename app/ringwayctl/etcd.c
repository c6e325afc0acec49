/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ringwayctl --etcd URL[,URL...] --cluster NAME [--prefix P] COMMAND: the fleet's membership
 * in etcd instead of one router's socket.
 *
 *   init FILE          store a router's state file as the first membership (only when none)
 *   init --router SOCKET  the same from a running router's live membership (`fleet state`
 *                      on its control socket): no state file needed
 *   restore FILE | --router SOCKET   store it over whatever the key holds (e.g. a value
 *                      nobody can read: that is what restore is for, so replacing one
 *                      exits 0, with a note on stderr saying what was replaced)
 *   add|remove|weight|replace ...   plan against the stored membership, then one etcd txn
 *                      that puts the new membership only if the key is still at the revision
 *                      read (two operators can never interleave half-changes)
 *   plan CHANGE ...    what the change would move, computed from the stored membership
 *   get                the stored membership (state-file text) and its revision
 *   status             every registered router: revision, digest, lag, agrees yes|no
 *
 * The change itself runs through the control library's own engine over the stored membership
 * (the same rules, the same plan text as a router's socket). Output follows the protocol:
 * `OK key value ...` / `ERROR reason`; exit 0 OK, 1 ERROR (refused, or the key moved on:
 * `ERROR conflict`), 2 usage or etcd unreachable: every run that stored nothing exits non-zero.
 *
 * A change that changes nothing (`weight N W` to the weight N has) is committed as a new
 * revision with the same digest, as the router's own socket commits it as a new epoch: the
 * routers re-publish the same ring. Use `plan` first to see that nothing moves.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "etcd_cli.h"
#include "fleet.h"

struct fleet_opts {
	const char *etcd, *cluster, *prefix;
	int timeout_ms;
	char key[FL_KEY_MAX];
};

static int usage(void)
{
	fprintf(stderr,
		"usage: ringwayctl --etcd URL[,URL...] --cluster NAME [--prefix /ringway] "
		"[--timeout MS] init FILE|--router SOCKET | restore FILE|--router SOCKET | add ... "
		"| remove NAME | weight "
		"NAME W | replace "
		"[M1 ; M2 ...] | plan CHANGE ... | get | status\n");
	return 2;
}

/* Read the membership: *st (NULL when there is none) and its mod_revision (0: none). 1 when
 * the stored value is unreadable (said on stderr, prefixed @p what). */
static int read_membership_as(struct fl_client *c, const struct fleet_opts *o,
			      struct ctl_state **st, int64_t *mod, int64_t *rev, const char *what)
{
	struct fl_range r;
	char err[512];
	int rc = fl_range(c, o->key, false, &r, err, sizeof(err));

	*st = NULL;
	*mod = 0;
	if (rc < 0) {
		fprintf(stderr, "ERROR etcd: %s\n", err);
		return 2;
	}
	*rev = r.revision;
	if (r.count == 1) {
		*mod = r.kvs[0].mod_revision;
		if (ctl_state_from_text(r.kvs[0].value, r.kvs[0].value_len, st, err, sizeof(err)) <
		    0) {
			fprintf(stderr,
				"%s the stored membership (revision %" PRId64
				") is unreadable%s: %s\n",
				what, *mod, what[0] == 'n' ? " (restore replaces it)" : "", err);
			fl_range_clear(&r);
			return 1;
		}
	}
	fl_range_clear(&r);
	return 0;
}

static int read_membership(struct fl_client *c, const struct fleet_opts *o, struct ctl_state **st,
			   int64_t *mod, int64_t *rev)
{
	return read_membership_as(c, o, st, mod, rev, "ERROR");
}

/* Put @p st (epoch written as 0: etcd's mod_revision is the epoch) if the key is at @p mod. */
static int store(struct fl_client *c, const struct fleet_opts *o, const struct ctl_state *st,
		 int64_t mod)
{
	struct ctl_state *copy = ctl_state_copy(st);
	struct ctl_text t = {0};
	int64_t rev = 0;
	char err[512];
	int rc;

	if (copy == NULL)
		return 2;
	/* A state with epoch 0: ctl_state_replace keeps the epoch, so rebuild it. */
	{
		struct ctl_state *z = ctl_state_new(ctl_state_config(st), 0);
		struct ctl_member *m = calloc(ctl_state_count(st) + 1, sizeof(*m));

		for (uint32_t i = 0; m && i < ctl_state_count(st); i++)
			m[i] = *ctl_state_member(st, i);
		if (z == NULL || m == NULL ||
		    ctl_state_replace(z, m, ctl_state_count(st), err, sizeof(err)) < 0) {
			free(m);
			ctl_state_free(z);
			ctl_state_free(copy);
			return 2;
		}
		free(m);
		ctl_state_free(copy);
		copy = z;
	}
	if (ctl_state_to_text(copy, &t) < 0) {
		ctl_state_free(copy);
		return 2;
	}
	rc = fl_txn_put(c, o->key, mod, t.buf, t.len, &rev, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "ERROR etcd: %s\n", err);
	else if (rc == 0)
		fprintf(stderr,
			"ERROR conflict: the membership changed since revision %" PRId64
			" was read (etcd is at %" PRId64 "); nothing changed, run it again\n",
			mod, rev);
	else
		printf("OK revision %" PRId64 " digest %016" PRIx64 " members %u\n", rev,
		       ctl_state_digest(copy), ctl_state_count(copy));
	ctl_text_release(&t);
	ctl_state_free(copy);
	return rc < 0 ? 2 : rc == 0 ? 1 : 0;
}

/* Run @p line (and, for a block, stdin's member lines) on an engine over @p st. */
static int run_engine(struct ctl_state *st, const char *line, bool block, struct ctl_state **next,
		      struct ctl_text *reply)
{
	struct ctl_engine *e = ctl_engine_new(st, NULL, NULL);
	struct ctl_session *s;
	char *in = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc;

	*next = NULL;
	if (e == NULL || (s = ctl_session_new(e)) == NULL) {
		ctl_engine_free(e);
		return -ENOMEM;
	}
	rc = ctl_session_line(s, line, strlen(line), reply);
	while (block && rc == 0 && (n = getline(&in, &cap, stdin)) >= 0) {
		while (n > 0 && (in[n - 1] == '\n' || in[n - 1] == '\r'))
			in[--n] = '\0';
		if (strcmp(in, "end") == 0)
			break;
		rc = ctl_session_line(s, in, (size_t)n, reply);
	}
	if (block && rc == 0)
		rc = ctl_session_line(s, "end", 3, reply);
	free(in);
	if (rc >= 0 && strncmp(reply->buf ? reply->buf : "", "OK", 2) == 0)
		*next = ctl_state_copy(ctl_engine_state(e));
	ctl_session_free(s);
	ctl_engine_free(e);
	return rc < 0 ? rc : 0;
}

/* The words of argv joined by spaces. */
static char *joined(int argc, char **argv)
{
	size_t len = 1;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = calloc(1, len);
	for (int i = 0; s && i < argc; i++) {
		strcat(s, argv[i]);
		if (i + 1 < argc)
			strcat(s, " ");
	}
	return s;
}

static int cmd_change(struct fl_client *c, const struct fleet_opts *o, int argc, char **argv)
{
	bool plan = strcmp(argv[0], "plan") == 0;
	bool block = argc == 1 + plan && strcmp(argv[plan], "replace") == 0;
	struct ctl_state *st, *next = NULL;
	struct ctl_text reply = {0};
	int64_t mod, rev;
	char *line = joined(argc, argv);
	int rc;

	if (line == NULL)
		return 2;
	rc = read_membership(c, o, &st, &mod, &rev);
	if (rc == 0 && st == NULL) {
		fprintf(stderr, "ERROR no membership at %s yet: store one with `init FILE`\n",
			o->key);
		rc = 1;
	}
	if (rc != 0) {
		free(line);
		return rc;
	}
	/* The engine numbers epochs from the stored revision, as the routers will. */
	if (run_engine(st, line, block, &next, &reply) < 0) {
		free(line);
		return 2;
	}
	free(line);
	if (next == NULL || plan) {
		fputs(reply.buf ? reply.buf : "ERROR no reply\n", next ? stdout : stderr);
		rc = next ? 0 : 1;
	} else {
		rc = store(c, o, next, mod);
	}
	ctl_state_free(next);
	ctl_text_release(&reply);
	return rc;
}

/* The live membership of the router on @p sock (`fleet state`), or < 0 with ERROR said. */
static int load_router(const char *sock, int timeout_ms, struct ctl_state **st)
{
	struct ctl_reply r = {0};
	struct ctl_reader *rd = NULL;
	struct ctl_text t = {0};
	char err[512];
	int fd = ctl_connect_unix(sock, err, sizeof(err)), rc = -EPROTO;

	*st = NULL;
	if (fd < 0) {
		fprintf(stderr, "ERROR router %s: %s\n", sock, err);
		return fd;
	}
	if ((rd = ctl_reader_new(fd)) == NULL || write(fd, "fleet state\n", 12) != 12 ||
	    ctl_reader_next(rd, &r, timeout_ms) < 0) {
		fprintf(stderr, "ERROR router %s: no answer to `fleet state`\n", sock);
		goto out;
	}
	if (!r.ok) {
		fprintf(stderr, "ERROR router %s: `fleet state`: %s\n", sock, r.head);
		goto out;
	}
	for (uint32_t i = 0; i < r.nlines; i++)
		ctl_text_appendf(&t, "%s\n", r.lines[i]);
	rc = t.oom ? -ENOMEM : ctl_state_from_text(t.buf ? t.buf : "", t.len, st, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "ERROR router %s: its membership is unreadable: %s\n", sock, err);
out:
	ctl_text_release(&t);
	ctl_reply_clear(&r);
	ctl_reader_free(rd);
	close(fd);
	return rc;
}

/*
 * init: only when there is no membership; restore: over whatever is stored (a bad value).
 * The membership comes from a state file, or (@p router) from a running router's socket.
 */
static int cmd_init(struct fl_client *c, const struct fleet_opts *o, const char *src, bool router,
		    bool restore)
{
	struct ctl_state *st, *old = NULL;
	int64_t mod = 0, rev;
	char err[512];
	int rc;

	if (router) {
		if (load_router(src, o->timeout_ms, &st) < 0)
			return 1;
	} else if (ctl_state_load(src, &st, err, sizeof(err)) < 0) {
		fprintf(stderr, "ERROR %s\n", err);
		return 1;
	}
	/* Replacing an unreadable value is restore's purpose: a note, not an ERROR. */
	if (restore && read_membership_as(c, o, &old, &mod, &rev, "note:") == 2) {
		ctl_state_free(st);
		return 2;
	}
	ctl_state_free(old);
	rc = store(c, o, st, mod);
	ctl_state_free(st);
	return rc;
}

static int cmd_get(struct fl_client *c, const struct fleet_opts *o)
{
	struct ctl_state *st;
	struct ctl_text t = {0};
	int64_t mod, rev;
	int rc = read_membership(c, o, &st, &mod, &rev);

	if (rc != 0)
		return rc;
	if (st == NULL) {
		fprintf(stderr, "ERROR no membership at %s\n", o->key);
		return 1;
	}
	ctl_state_to_text(st, &t);
	printf("OK revision %" PRId64 " digest %016" PRIx64 " members %u\n%s", mod,
	       ctl_state_digest(st), ctl_state_count(st), t.buf ? t.buf : "");
	ctl_text_release(&t);
	ctl_state_free(st);
	return 0;
}

static int cmd_status(struct fl_client *c, const struct fleet_opts *o)
{
	struct ctl_state *st;
	struct fl_range r;
	char dir[FL_KEY_MAX], err[512];
	int64_t mod, rev;
	uint64_t digest;
	uint32_t agree = 0;
	int rc = read_membership(c, o, &st, &mod, &rev);
	struct timespec now;

	if (rc == 2)
		return rc;
	digest = st ? ctl_state_digest(st) : 0;
	ctl_state_free(st);
	fl_key_router(o->prefix, o->cluster, "", dir);
	if (fl_range(c, dir, true, &r, err, sizeof(err)) < 0) {
		fprintf(stderr, "ERROR etcd: %s\n", err);
		return 2;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	for (uint32_t i = 0; i < r.count; i++) {
		struct fl_report rep;

		if (fl_report_parse(r.kvs[i].value, r.kvs[i].value_len, &rep) == 0)
			agree += rep.revision == mod && rep.digest == digest;
	}
	printf("OK lines %u revision %" PRId64 " digest %016" PRIx64 " routers %u agree %u%s\n",
	       r.count, mod, digest, r.count, agree, rc == 1 ? " membership unreadable" : "");
	for (uint32_t i = 0; i < r.count; i++) {
		struct fl_report rep;
		const char *name = r.kvs[i].key + strlen(dir);

		if (fl_report_parse(r.kvs[i].value, r.kvs[i].value_len, &rep) < 0) {
			printf("name %s report unreadable agrees no\n", name);
			continue;
		}
		printf("name %s revision %" PRId64 " digest %016" PRIx64 " lag %" PRId64
		       " applied_ms %" PRId64 " agrees %s",
		       name, rep.revision, rep.digest, mod > rep.revision ? mod - rep.revision : 0,
		       rep.applied_ms, rep.revision == mod && rep.digest == digest ? "yes" : "no");
		if (rep.error[0] != '\0') {
			/* values never hold spaces: the reason with '_' for ' ' */
			for (char *p = rep.error; *p; p++)
				*p = *p == ' ' ? '_' : *p;
			printf(" refused %" PRId64 " error %s", rep.error_revision, rep.error);
		}
		printf("\n");
	}
	fl_range_clear(&r);
	return 0;
}

int ctl_etcd_main(int argc, char **argv)
{
	static const struct option longs[] = {
		{"etcd", required_argument, NULL, 'e'},
		{"cluster", required_argument, NULL, 'c'},
		{"prefix", required_argument, NULL, 'p'},
		{"timeout", required_argument, NULL, 'T'},
		{NULL, 0, NULL, 0},
	};
	struct fleet_opts o = {.prefix = "/ringway", .timeout_ms = 5000};
	struct fl_client *c;
	int ch, rc;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "+", longs, NULL)) != -1) {
		switch (ch) {
		case 'e':
			o.etcd = optarg;
			break;
		case 'c':
			o.cluster = optarg;
			break;
		case 'p':
			o.prefix = optarg;
			break;
		case 'T':
			o.timeout_ms = atoi(optarg);
			break;
		default:
			return usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (o.etcd == NULL || o.cluster == NULL || argc < 1 ||
	    fl_key_membership(o.prefix, o.cluster, o.key) < 0)
		return usage();
	if (fl_global_init() < 0 || (c = fl_client_new(o.etcd, o.timeout_ms)) == NULL) {
		fprintf(stderr, "ERROR bad --etcd '%s'\n", o.etcd);
		return 2;
	}
	if ((strcmp(argv[0], "init") == 0 || strcmp(argv[0], "restore") == 0) && argc == 2 &&
	    argv[1][0] != '-')
		rc = cmd_init(c, &o, argv[1], false, argv[0][0] == 'r');
	else if ((strcmp(argv[0], "init") == 0 || strcmp(argv[0], "restore") == 0) && argc == 3 &&
		 strcmp(argv[1], "--router") == 0)
		rc = cmd_init(c, &o, argv[2], true, argv[0][0] == 'r');
	else if (strcmp(argv[0], "get") == 0 && argc == 1)
		rc = cmd_get(c, &o);
	else if (strcmp(argv[0], "status") == 0 && argc == 1)
		rc = cmd_status(c, &o);
	else if (strcmp(argv[0], "add") == 0 || strcmp(argv[0], "remove") == 0 ||
		 strcmp(argv[0], "weight") == 0 || strcmp(argv[0], "replace") == 0 ||
		 (strcmp(argv[0], "plan") == 0 && argc >= 2))
		rc = cmd_change(c, &o, argc, argv);
	else
		rc = usage();
	fl_client_free(c);
	return rc;
}
