/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ringwayctl: send control commands to a running ringway and print the replies.
 *
 *   ringwayctl [--socket PATH | --tcp PORT --token-file FILE] [--json] [--timeout MS]
 *              COMMAND [ARG...]
 *   ringwayctl [...] -        commands from stdin, one per line, replies in order
 *   ringwayctl --etcd URL --cluster NAME ...   the fleet's membership in etcd (etcd.c)
 *   ringwayctl [...] top [-b] [-d SECONDS] [-n FRAMES]   a live view, like top(1) (top.c)
 *
 * `replace` alone reads the member lines from stdin and sends them as a replace block.
 * Exit status: 0 every reply was OK, 1 some reply was ERROR, 2 usage or connection error.
 */

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control.h"
#include "etcd_cli.h"
#include "top.h"

#define EXIT_ERROR_REPLY 1
#define EXIT_USAGE	 2

struct opts {
	const char *socket;
	int tcp_port;		/* -1: use the Unix socket */
	const char *token_file; /* --tcp: the router's shared secret */
	bool json;
	int timeout_ms;
};

static void usage(FILE *f)
{
	struct ctl_text cmds = {0};

	ctl_commands_usage(&cmds);
	fprintf(f,
		"usage: ringwayctl [--socket PATH | --tcp PORT --token-file FILE] [--json] "
		"[--timeout MS] COMMAND [ARG...]\n"
		"       ringwayctl [OPTIONS] -      (commands from stdin, one per line)\n"
		"       ringwayctl [OPTIONS] replace  (member lines from stdin)\n"
		"       ringwayctl [OPTIONS] top [-b] [-d SECONDS] [-n FRAMES]  (a live view: "
		"per-node request rate, replies, p99, health; q quits)\n"
		"       ringwayctl --etcd URL[,URL] --cluster NAME ...  (the fleet's membership in "
		"etcd: docs/fleets.md)\n"
		"commands:\n%s"
		"socket: --socket, else $RINGWAY_SOCKET, else %s\n"
		"tcp: 127.0.0.1:PORT, authenticated with the token in FILE (mode 0600)\n"
		"exit: 0 OK, 1 ERROR reply, 2 usage or connection error\n",
		cmds.buf != NULL ? cmds.buf : "  (out of memory)\n", CTL_DEFAULT_SOCKET);
	ctl_text_release(&cmds);
}

/* ---- output ---- */

/* A JSON number as the protocol prints them: -?(0|[1-9][0-9]*)(.[0-9]+)? */
static bool is_number(const char *s, size_t n)
{
	size_t i = 0, d;

	if (i < n && s[i] == '-')
		i++;
	for (d = i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		;
	if (i == d || (s[d] == '0' && i - d > 1))
		return false;
	if (i < n && s[i] == '.') {
		for (d = ++i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == d)
			return false;
	}
	return i == n;
}

static void json_string(const char *s, size_t n)
{
	putchar('"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void json_value(const char *s, size_t n)
{
	if (is_number(s, n))
		printf("%.*s", (int)n, s);
	else
		json_string(s, n);
}

static const char *next_word(const char *p, size_t *n)
{
	while (*p == ' ')
		p++;
	*n = strcspn(p, " ");
	return p;
}

/* `k1 v1 k2 v2 ...` as JSON members (no braces); a lone last word maps to true. */
static void json_pairs(const char *line, bool first)
{
	size_t kn, vn;
	const char *k = next_word(line, &kn);

	while (kn > 0) {
		const char *v = next_word(k + kn, &vn);

		printf("%s", first ? "" : ",");
		first = false;
		json_string(k, kn);
		putchar(':');
		if (vn > 0)
			json_value(v, vn);
		else
			printf("true");
		k = next_word(v + vn, &kn);
	}
}

/* The head without its `lines N` framing pair. */
static const char *head_text(const struct ctl_reply *r)
{
	const char *h = r->head;
	size_t n;

	if (r->ok && strncmp(h, "lines ", 6) == 0) {
		h = next_word(h + 6, &n);
		h = next_word(h + n, &n);
	}
	return h;
}

static void print_json(const struct ctl_reply *r)
{
	if (!r->ok) {
		printf("{\"ok\":false,\"error\":");
		json_string(r->head, strlen(r->head));
		printf("}\n");
		return;
	}
	printf("{\"ok\":true");
	json_pairs(head_text(r), false);
	if (strncmp(r->head, "lines ", 6) == 0) {
		printf(",\"items\":[");
		for (uint32_t i = 0; i < r->nlines; i++) {
			printf("%s{", i ? "," : "");
			json_pairs(r->lines[i], true);
			putchar('}');
		}
		putchar(']');
	}
	printf("}\n");
}

static void print_human(const struct ctl_reply *r)
{
	if (!r->ok) {
		fprintf(stderr, "ERROR %s\n", r->head);
		return;
	}
	if (*head_text(r) != '\0')
		printf("%s\n", head_text(r));
	for (uint32_t i = 0; i < r->nlines; i++)
		printf("%s\n", r->lines[i]);
}

/* ---- conversation ---- */

static int send_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int send_line(int fd, const char *line)
{
	int rc = send_all(fd, line, strlen(line));

	return rc < 0 ? rc : send_all(fd, "\n", 1);
}

/* Read and print one reply: 0 OK, 1 ERROR, 2 transport failure. */
static int await_reply(struct ctl_reader *rd, const struct opts *o)
{
	struct ctl_reply r;
	int rc = ctl_reader_next(rd, &r, o->timeout_ms);

	if (rc < 0) {
		fprintf(stderr, "ringwayctl: %s\n",
			rc == -EPIPE	   ? "the server closed the connection"
			: rc == -ETIMEDOUT ? "no reply in time"
			: rc == -EPROTO	   ? "malformed reply"
					   : strerror(-rc));
		return EXIT_USAGE;
	}
	if (o->json)
		print_json(&r);
	else
		print_human(&r);
	rc = r.ok ? 0 : EXIT_ERROR_REPLY;
	ctl_reply_clear(&r);
	fflush(stdout);
	return rc;
}

/* Does @p line open a replace block (`[if-epoch E] [plan] replace [epoch E]` and nothing
 * more)? */
static bool opens_block(const char *line)
{
	size_t n;
	const char *w = next_word(line, &n);

	if (n == 8 && strncmp(w, "if-epoch", 8) == 0) {
		w = next_word(w + n, &n);
		w = next_word(w + n, &n);
	}
	if (n == 4 && strncmp(w, "plan", 4) == 0)
		w = next_word(w + n, &n);
	if (n != 7 || strncmp(w, "replace", 7) != 0)
		return false;
	w = next_word(w + n, &n);
	if (n == 5 && strncmp(w, "epoch", 5) == 0) {
		w = next_word(w + n, &n);
		if (n == 0 || strspn(w, "0123456789") < n)
			return false; /* a member named epoch, or a malformed E the server reports
				       */
		w = next_word(w + n, &n);
	}
	return n == 0;
}

static bool is_end(const char *line)
{
	size_t n;
	const char *w = next_word(line, &n);

	if (n != 3 || strncmp(w, "end", 3) != 0)
		return false;
	next_word(w + n, &n);
	return n == 0;
}

/*
 * Send stdin line by line, waiting for each reply (lockstep, so neither side can fill the
 * other's buffers). @p prefix, when set, is sent first (a `replace` line) and stdin is then
 * the block's member lines; `end` is added at EOF.
 */
static int run_stdin(int fd, struct ctl_reader *rd, const struct opts *o, const char *prefix)
{
	bool in_block = prefix != NULL;
	char *line = NULL;
	size_t cap = 0;
	size_t wn;
	ssize_t n;
	int worst = 0, rc;

	if (prefix != NULL && send_line(fd, prefix) < 0)
		goto lost;
	while ((n = getline(&line, &cap, stdin)) >= 0) {
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (prefix != NULL && is_end(line))
			break;
		if (*next_word(line, &wn) == '\0')
			continue;
		if (send_line(fd, line) < 0)
			goto lost;
		if (in_block ? !is_end(line) : opens_block(line)) {
			in_block = true;
			continue;
		}
		in_block = false;
		rc = await_reply(rd, o);
		worst = rc > worst ? rc : worst;
		if (rc == EXIT_USAGE)
			break;
	}
	if (worst < EXIT_USAGE && in_block) {
		if (send_line(fd, "end") < 0)
			goto lost;
		rc = await_reply(rd, o);
		worst = rc > worst ? rc : worst;
	}
	free(line);
	return worst;
lost:
	free(line);
	fprintf(stderr, "ringwayctl: the server closed the connection\n");
	return EXIT_USAGE;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longs[] = {
		{"socket", required_argument, NULL, 's'},
		{"tcp", required_argument, NULL, 't'},
		{"json", no_argument, NULL, 'j'},
		{"timeout", required_argument, NULL, 'T'},
		{"help", no_argument, NULL, 'h'},
		{"token-file", required_argument, NULL, 'k'},
		{NULL, 0, NULL, 0},
	};
	char *end;
	long v;
	int c;

	o->socket = getenv("RINGWAY_SOCKET") ? getenv("RINGWAY_SOCKET") : CTL_DEFAULT_SOCKET;
	o->tcp_port = -1;
	o->timeout_ms = 60000;
	while ((c = getopt_long(argc, argv, "+s:jh", longs, NULL)) != -1) {
		switch (c) {
		case 's':
			o->socket = optarg;
			break;
		case 't':
		case 'T':
			v = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || v < 0 ||
			    v > (c == 't' ? 65535 : 86400000)) {
				fprintf(stderr, "ringwayctl: bad --%s '%s'\n",
					c == 't' ? "tcp" : "timeout", optarg);
				return -1;
			}
			*(c == 't' ? &o->tcp_port : &o->timeout_ms) = (int)v;
			break;
		case 'j':
			o->json = true;
			break;
		case 'k':
			o->token_file = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -1;
		}
	}
	if (o->tcp_port >= 0 && o->token_file == NULL) {
		fprintf(stderr, "ringwayctl: --tcp needs --token-file FILE (the router's "
				"tcp_token_file)\n");
		return -1;
	}
	return optind < argc ? 0 : -1;
}

/* Connect to the Unix socket, or to TCP and authenticate; a negative errno with @p err. */
static int connect_router(const struct opts *o, char *err, size_t errlen)
{
	char token[CTL_TOKEN_MAX + 1];
	int fd, rc;

	if (o->tcp_port < 0)
		return ctl_connect_unix(o->socket, err, errlen);
	rc = ctl_token_load(o->token_file, token, err, errlen);
	if (rc < 0)
		return rc;
	fd = ctl_connect_tcp((uint16_t)o->tcp_port, err, errlen);
	rc = fd < 0 ? fd : ctl_auth(fd, token, o->timeout_ms, err, errlen);
	memset(token, 0, sizeof(token));
	if (rc < 0 && fd >= 0)
		close(fd);
	return rc < 0 ? rc : fd;
}

/* The words after the options, joined by spaces; NULL when they cannot form one line. */
static char *join_words(int argc, char **argv)
{
	size_t len = 1;
	char *line;

	for (int i = 0; i < argc; i++) {
		if (strpbrk(argv[i], "\r\n") != NULL)
			return NULL;
		len += strlen(argv[i]) + 1;
	}
	if (len > CTL_LINE_MAX + 1 || (line = calloc(1, len)) == NULL)
		return NULL;
	for (int i = 0; i < argc; i++) {
		strcat(line, argv[i]);
		if (i + 1 < argc)
			strcat(line, " ");
	}
	return line;
}

int main(int argc, char **argv)
{
	struct opts o = {0};
	struct ctl_reader *rd = NULL;
	char err[512], *line = NULL;
	bool is_top;
	int fd, rc;

	signal(SIGPIPE, SIG_IGN); /* a closed connection is an error to report, not a kill */
	for (int i = 1; i < argc && argv[i][0] == '-'; i++)
		if (strcmp(argv[i], "--etcd") == 0 || strncmp(argv[i], "--etcd=", 7) == 0)
			return ctl_etcd_main(argc, argv); /* the fleet's membership in etcd */
	if (parse_opts(argc, argv, &o) < 0) {
		usage(stderr);
		return EXIT_USAGE;
	}
	argc -= optind;
	argv += optind;
	/* `--json` after the command too (`ringwayctl hotkeys --json 5`): no command has a word
	 * that starts with "--". */
	for (int i = 0; i < argc; i++)
		if (strcmp(argv[i], "--json") == 0) {
			o.json = true;
			memmove(&argv[i], &argv[i + 1], sizeof(*argv) * (size_t)(argc - i));
			argc--;
			i--;
		}
	is_top = strcmp(argv[0], "top") == 0;
	if (is_top && o.json) {
		fprintf(stderr, "ringwayctl: top has no --json (`--json list` and `--json stats` "
				"have the same counters)\n");
		return EXIT_USAGE;
	}
	if (!is_top && !(argc == 1 && strcmp(argv[0], "-") == 0) &&
	    (line = join_words(argc, argv)) == NULL) {
		fprintf(stderr, "ringwayctl: the command must be one line of at most %d bytes\n",
			CTL_LINE_MAX);
		return EXIT_USAGE;
	}
	fd = connect_router(&o, err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, "ringwayctl: %s\n", err);
		free(line);
		return EXIT_USAGE;
	}
	rd = ctl_reader_new(fd);
	if (rd == NULL)
		rc = EXIT_USAGE;
	else if (is_top)
		rc = ctl_top_main(fd, rd, o.timeout_ms, argc, argv);
	else if (line == NULL)
		rc = run_stdin(fd, rd, &o, NULL);
	else if (opens_block(line))
		rc = run_stdin(fd, rd, &o, line);
	else if (send_line(fd, line) < 0)
		rc = (fprintf(stderr, "ringwayctl: the server closed the connection\n"),
		      EXIT_USAGE);
	else
		rc = await_reply(rd, &o);
	ctl_reader_free(rd);
	close(fd);
	free(line);
	return rc;
}
