/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ringwayctl top: a live view of the router, like top(1).
 *
 *   ringwayctl [--socket PATH | --tcp ...] top [-b] [-d SECONDS] [-n FRAMES]
 *
 * Every interval it sends `stats` (router totals) and `list` (per-node counters) on one
 * connection and draws a frame from the difference between this sample and the previous one:
 * a header (epoch, members, totals/s, drops/s, the router's p99s) and one row per node sorted
 * by request rate. The first frame comes one interval after the start, so every frame has
 * rates. The router counts no hits or misses per node, so the view shows no hit ratio; RET/REQ
 * is reply datagrams returned per request forwarded over the interval (lost or timed-out
 * replies lower it; multi-datagram replies can lift it above 100 %).
 *
 * Interactive (stdout a terminal, no -b): the alternate screen, redrawn in place, `q` quits;
 * stdin in non-canonical mode without echo, restored on every exit path, SIGINT and SIGTERM
 * included. -b: plain frames one after another (for scripts), each ending with a blank line.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "top.h"

#define TOP_NAME_MAX 64
#define TOP_WORD_MAX 32

/* One node's counters in one sample. */
struct top_node {
	char name[TOP_NAME_MAX];
	char state[TOP_WORD_MAX];  /* membership state (active, ...) */
	char health[TOP_WORD_MAX]; /* the data plane's health, "-" when the router has none */
	uint64_t forwarded, returned, rtt_p99_ns, slow;
	bool counted; /* the router reported forwarded (a data plane behind the socket) */
	double req_rate, ret_rate; /* filled when the frame is drawn; < 0: no earlier sample */
};

/* One sample: router totals and the nodes, at time @c t (monotonic seconds). */
struct top_sample {
	double t;
	uint64_t epoch, members;
	uint64_t rx, forwarded, returned, dropped, rtt_p99_ns, router_p99_ns;
	uint32_t nnodes;
	struct top_node *nodes;
};

struct top_opts {
	bool batch;
	double delay_s;
	long frames; /* 0: until q */
};

static volatile sig_atomic_t top_stop;

static void on_stop(int sig)
{
	(void)sig;
	top_stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- parsing the replies ---- */

/* The value after the first word @p key in the `k v k v ...` line @p s, copied to @p out. */
static bool pair_text(const char *s, const char *key, char *out, size_t outlen)
{
	size_t kl = strlen(key);

	while (*s != '\0') {
		size_t wn;

		while (*s == ' ')
			s++;
		wn = strcspn(s, " ");
		if (wn == kl && strncmp(s, key, kl) == 0) {
			const char *v = s + wn + strspn(s + wn, " ");
			size_t vn = strcspn(v, " ");

			if (vn == 0 || vn >= outlen)
				return false;
			memcpy(out, v, vn);
			out[vn] = '\0';
			return true;
		}
		s += wn;
		s += strspn(s, " ");
		s += strcspn(s, " "); /* skip the value */
	}
	return false;
}

static bool pair_u64(const char *s, const char *key, uint64_t *v)
{
	char text[32], *end;

	if (!pair_text(s, key, text, sizeof(text)))
		return false;
	*v = strtoull(text, &end, 10);
	return *end == '\0';
}

/* `stats` lines are `key value`: the ones the header shows. */
static void parse_stats(const struct ctl_reply *r, struct top_sample *s)
{
	for (uint32_t i = 0; i < r->nlines; i++) {
		const char *l = r->lines[i];

		pair_u64(l, "rx", &s->rx);
		pair_u64(l, "forwarded", &s->forwarded);
		pair_u64(l, "returned", &s->returned);
		pair_u64(l, "dropped", &s->dropped);
		pair_u64(l, "rtt_p99_ns", &s->rtt_p99_ns);
		pair_u64(l, "router_p99_ns", &s->router_p99_ns);
	}
}

/* `list`: `OK lines N members M epoch E`, then a line a member. */
static int parse_list(const struct ctl_reply *r, struct top_sample *s)
{
	pair_u64(r->head, "members", &s->members);
	pair_u64(r->head, "epoch", &s->epoch);
	s->nodes = calloc(r->nlines + 1, sizeof(*s->nodes));
	if (s->nodes == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < r->nlines; i++) {
		struct top_node *n = &s->nodes[s->nnodes];
		const char *l = r->lines[i];

		if (!pair_text(l, "name", n->name, sizeof(n->name)))
			continue;
		if (!pair_text(l, "state", n->state, sizeof(n->state)))
			strcpy(n->state, "-");
		if (!pair_text(l, "health", n->health, sizeof(n->health)))
			strcpy(n->health, "-");
		n->counted = pair_u64(l, "forwarded", &n->forwarded);
		pair_u64(l, "returned", &n->returned);
		pair_u64(l, "rtt_p99_ns", &n->rtt_p99_ns);
		pair_u64(l, "slow", &n->slow);
		s->nnodes++;
	}
	return 0;
}

static void sample_clear(struct top_sample *s)
{
	free(s->nodes);
	memset(s, 0, sizeof(*s));
}

/* Ask @p cmd and wait for its reply: 0, or a negative errno with the reason in @p err. */
static int ask(int fd, struct ctl_reader *rd, const char *cmd, int timeout_ms, struct ctl_reply *r,
	       char *err, size_t errlen)
{
	size_t len = strlen(cmd);
	int rc;

	if (write(fd, cmd, len) != (ssize_t)len) {
		snprintf(err, errlen, "the server closed the connection");
		return -EPIPE;
	}
	rc = ctl_reader_next(rd, r, timeout_ms);
	if (rc < 0)
		snprintf(err, errlen, "%s",
			 rc == -EPIPE	    ? "the server closed the connection"
			 : rc == -ETIMEDOUT ? "no reply in time"
					    : "malformed reply");
	else if (!r->ok) {
		snprintf(err, errlen, "%.*s: ERROR %s", (int)len - 1, cmd, r->head);
		ctl_reply_clear(r);
		rc = -EPROTO;
	}
	return rc;
}

static int take_sample(int fd, struct ctl_reader *rd, int timeout_ms, struct top_sample *s,
		       char *err, size_t errlen)
{
	struct ctl_reply r;
	int rc;

	memset(s, 0, sizeof(*s));
	s->t = now_s();
	rc = ask(fd, rd, "stats\n", timeout_ms, &r, err, errlen);
	if (rc < 0)
		return rc;
	parse_stats(&r, s);
	ctl_reply_clear(&r);
	rc = ask(fd, rd, "list\n", timeout_ms, &r, err, errlen);
	if (rc < 0)
		return rc;
	rc = parse_list(&r, s);
	ctl_reply_clear(&r);
	if (rc < 0)
		snprintf(err, errlen, "out of memory");
	return rc;
}

/* ---- drawing ---- */

/* Per second over @p dt; a counter that went back (a router restart) counts from zero. */
static double rate(uint64_t now, uint64_t before, double dt)
{
	return dt > 0 ? (double)(now >= before ? now - before : now) / dt : 0;
}

static const struct top_node *find_node(const struct top_sample *s, const char *name)
{
	for (uint32_t i = 0; i < s->nnodes; i++)
		if (strcmp(s->nodes[i].name, name) == 0)
			return &s->nodes[i];
	return NULL;
}

static int by_rate(const void *a, const void *b)
{
	const struct top_node *x = a, *y = b;

	if (x->req_rate != y->req_rate)
		return x->req_rate < y->req_rate ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void fmt_us(char *buf, size_t len, uint64_t ns, bool known)
{
	if (!known)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f", (double)ns / 1000.0);
}

/* Write the frame for @p cur against @p prev into @p f; at most @p rows node rows (0: all).
 * @p eol ends each line (the interactive view also clears to the line's end). */
static void draw(FILE *f, struct top_sample *cur, const struct top_sample *prev, double delay_s,
		 uint32_t rows, const char *eol)
{
	double dt = cur->t - prev->t;
	char clock[16], p99[24], rp99[24];
	time_t wall = time(NULL);
	struct tm tm;

	localtime_r(&wall, &tm);
	strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
	fmt_us(p99, sizeof(p99), cur->rtt_p99_ns, true);
	fmt_us(rp99, sizeof(rp99), cur->router_p99_ns, true);
	fprintf(f, "ringwayctl top - %s  epoch %" PRIu64 "  members %" PRIu64 "  every %.1f s%s\n",
		clock, cur->epoch, cur->members, delay_s, eol);
	fprintf(f,
		"router: rx %.0f/s  fwd %.0f/s  ret %.0f/s  drops %.0f/s  node p99 %s us  "
		"router p99 %s us%s\n",
		rate(cur->rx, prev->rx, dt), rate(cur->forwarded, prev->forwarded, dt),
		rate(cur->returned, prev->returned, dt), rate(cur->dropped, prev->dropped, dt), p99,
		rp99, eol);
	fprintf(f, "%s\n", eol);
	for (uint32_t i = 0; i < cur->nnodes; i++) {
		struct top_node *n = &cur->nodes[i];
		const struct top_node *o = find_node(prev, n->name);

		n->req_rate = o && n->counted ? rate(n->forwarded, o->forwarded, dt) : -1;
		n->ret_rate = o && n->counted ? rate(n->returned, o->returned, dt) : -1;
	}
	qsort(cur->nodes, cur->nnodes, sizeof(*cur->nodes), by_rate);
	fprintf(f, "%-16s %-8s %-12s %10s %8s %10s %4s %14s%s\n", "NODE", "STATE", "HEALTH",
		"REQ/S", "RET/REQ", "P99(us)", "SLOW", "FORWARDED", eol);
	for (uint32_t i = 0; i < cur->nnodes && (rows == 0 || i < rows); i++) {
		const struct top_node *n = &cur->nodes[i];
		char req[24] = "-", ratio[16] = "-", np99[24], fwd[24] = "-";

		if (n->req_rate >= 0)
			snprintf(req, sizeof(req), "%.0f", n->req_rate);
		if (n->req_rate > 0)
			snprintf(ratio, sizeof(ratio), "%.1f%%", 100.0 * n->ret_rate / n->req_rate);
		fmt_us(np99, sizeof(np99), n->rtt_p99_ns, n->counted && n->rtt_p99_ns > 0);
		if (n->counted)
			snprintf(fwd, sizeof(fwd), "%" PRIu64, n->forwarded);
		fprintf(f, "%-16s %-8s %-12s %10s %8s %10s %4s %14s%s\n", n->name, n->state,
			n->health, req, ratio, np99, n->counted ? (n->slow ? "yes" : "no") : "-",
			fwd, eol);
	}
	if (rows != 0 && cur->nnodes > rows)
		fprintf(f, "... %u more nodes%s\n", cur->nnodes - rows, eol);
}

/* ---- the terminal ---- */

struct top_term {
	bool on;  /* interactive: the alternate screen is up */
	bool raw; /* stdin's mode was changed; @c saved restores it */
	struct termios saved;
};

static void term_enter(struct top_term *t)
{
	struct termios raw;

	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &t->saved) == 0) {
		raw = t->saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		t->raw = tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == 0;
	}
	fputs("\033[?1049h\033[?25l\033[H\033[2J", stdout); /* alternate screen, no cursor */
	fflush(stdout);
	t->on = true;
}

static void term_leave(struct top_term *t)
{
	if (t->on) {
		fputs("\033[?25h\033[?1049l", stdout);
		fflush(stdout);
	}
	if (t->raw)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &t->saved);
	t->on = t->raw = false;
}

/* Node rows that fit the terminal under the four header lines (and a "more" line). */
static uint32_t term_rows(void)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0 || ws.ws_row < 7)
		return 0;
	return ws.ws_row - 5u;
}

/* Wait until @p deadline (monotonic s); true when the user asked to quit (q, Ctrl-C). */
static bool wait_key(const struct top_term *t, double deadline)
{
	double left;

	while (!top_stop && (left = deadline - now_s()) > 0) {
		struct pollfd pf = {.fd = STDIN_FILENO, .events = POLLIN};
		int n = poll(&pf, t->raw ? 1 : 0, (int)(left * 1000) + 1);
		char c;

		if (n > 0 && read(STDIN_FILENO, &c, 1) == 1 && (c == 'q' || c == 'Q'))
			return true;
	}
	return top_stop != 0;
}

/* ---- the command ---- */

static int parse_top(int argc, char **argv, struct top_opts *o)
{
	char *end;
	int c;

	o->delay_s = 1.0;
	optind = 0; /* glibc: start over on this argv */
	while ((c = getopt(argc, argv, "+bd:n:")) != -1) {
		switch (c) {
		case 'b':
			o->batch = true;
			break;
		case 'd':
			o->delay_s = strtod(optarg, &end);
			if (*optarg == '\0' || *end != '\0' || !(o->delay_s >= 0.05) ||
			    o->delay_s > 3600) {
				fprintf(stderr,
					"ringwayctl top: bad -d '%s' (seconds, 0.05 to 3600)\n",
					optarg);
				return -1;
			}
			break;
		case 'n':
			o->frames = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || o->frames < 1) {
				fprintf(stderr, "ringwayctl top: bad -n '%s' (frames, 1 or more)\n",
					optarg);
				return -1;
			}
			break;
		default:
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ringwayctl top: unexpected '%s'\n", argv[optind]);
		return -1;
	}
	return 0;
}

int ctl_top_main(int fd, struct ctl_reader *rd, int timeout_ms, int argc, char **argv)
{
	struct top_sample prev = {0}, cur = {0};
	struct top_term term = {0};
	struct sigaction sa = {.sa_handler = on_stop};
	struct top_opts o = {0};
	char err[512] = "";
	double next;
	int rc = 0;

	if (parse_top(argc, argv, &o) < 0) {
		fprintf(stderr, "usage: ringwayctl [OPTIONS] top [-b] [-d SECONDS] [-n FRAMES]\n");
		return 2;
	}
	sigaction(SIGINT, &sa, NULL); /* no SA_RESTART: a signal ends the wait in poll() */
	sigaction(SIGTERM, &sa, NULL);
	if (take_sample(fd, rd, timeout_ms, &prev, err, sizeof(err)) < 0)
		goto out;
	if (!o.batch && isatty(STDOUT_FILENO)) {
		term_enter(&term);
		printf("ringwayctl top: first sample taken, rates in %.1f s (q quits)", o.delay_s);
		fflush(stdout);
	}
	next = prev.t + o.delay_s;
	for (long frame = 0; o.frames == 0 || frame < o.frames; frame++) {
		if (wait_key(&term, next))
			break;
		next += o.delay_s;
		if ((rc = take_sample(fd, rd, timeout_ms, &cur, err, sizeof(err))) < 0)
			break;
		if (term.on)
			fputs("\033[H", stdout);
		draw(stdout, &cur, &prev, o.delay_s, term.on ? term_rows() : 0,
		     term.on ? "\033[K" : "");
		fputs(term.on ? "\033[J" : "\n", stdout);
		fflush(stdout);
		sample_clear(&prev);
		prev = cur;
		memset(&cur, 0, sizeof(cur));
	}
out:
	term_leave(&term);
	sample_clear(&prev);
	sample_clear(&cur);
	if (err[0] != '\0') {
		fprintf(stderr, "ringwayctl top: %s\n", err);
		return 2;
	}
	return 0;
}
