/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ringway-plan: run a key sample through a fleet's placement before and after a membership
 * change, and see what the change costs, per algorithm, before making it.
 *
 *   ringway-plan compare --nodes FILE|N (--add NAME[=ADDR[:PORT]] | --remove NAME |
 *                        --weight NAME=W)... [--keys FILE | --generate N] [--algo LIST] [--json]
 *   ringway-plan assign  --nodes FILE|N --algo A [--keys FILE | --generate N]
 *
 * What it says about each algorithm (names, which options it reads, why its movement is not
 * minimal) comes from the placement library's table (pl_algo_info), not from lists here.
 *
 * Exit status: 0 done, 1 failure (unreadable or bad file, placement cannot be built, output
 * error), 2 usage error (bad option or option value, unknown member name).
 */

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"

#define EXIT_USAGE	 2
#define DEFAULT_GENERATE 100000u
#define GENERATE_MAX	 50000000u
#define CHANGES_MAX	 64
#define FILE_MAX	 (256u << 20)

enum change_op {
	CHANGE_ADD,
	CHANGE_REMOVE,
	CHANGE_WEIGHT,
};

static const char *const change_names[] = {"add", "remove", "weight"};

/* One requested membership change; applied in command-line order. */
struct change {
	enum change_op op;
	char name[PL_NAME_MAX + 1];
	char addr[PL_ADDR_MAX + 1]; /* add: empty = next free generated address */
	uint16_t port;
	uint32_t weight;
};

struct fleet {
	struct pl_member *m;
	uint32_t n;
};

/* Keys live in one buffer; key i is buf[off[i]] .. buf[off[i] + len[i]). */
struct keys {
	char *buf;
	size_t *off;
	uint8_t *len;
	size_t n;
	char source[96];
};

struct opts {
	bool compare;
	const char *nodes;
	struct change changes[CHANGES_MAX];
	unsigned nchanges;
	const char *keys_file;
	uint32_t generate;
	bool algo_set[PL_ALGO_COUNT];
	unsigned nalgos;
	enum pl_algo algos[PL_ALGO_COUNT];
	bool algo_default;    /* no --algo: an algorithm that cannot be built is left out */
	struct pl_config cfg; /* algo filled in per run */
	bool json;
};

/* Load statistics over the members that have weight. */
struct load {
	uint32_t members;
	uint64_t min, max;
	double mean, stddev, max_over_mean;
};

/* What one algorithm does with the change. */
struct result {
	enum pl_algo algo;
	const struct pl_config *cfg;
	uint64_t points_before, points_after;
	size_t moved, moved_unchanged, unowned_before, unowned_after;
	bool has_space;
	double space;
	struct load before, after;
	uint64_t *moved_to;   /* per member of after */
	uint64_t *moved_from; /* per member of before */
};

static const char *prog = "ringway-plan";

__attribute__((format(printf, 1, 2))) static void errmsg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* How the planner shows each parameter; the library says which algorithm reads which. */
static const struct {
	const char *pre, *post; /* settings line: "<algo><pre><value><post>" */
	const char *einval;	/* why a build may refuse the value, or NULL */
} param_show[PL_PARAM_COUNT] = {
	[PL_PARAM_VNODES] = {" ", " vnodes per unit of weight", NULL},
	[PL_PARAM_MAGLEV_SIZE] =
		{" table ", "",
		 " (the table size must be a prime, at least the members with weight)"},
	[PL_PARAM_KEY_HASH] = {" key hash ", "", NULL},
};

static bool reads(enum pl_algo a, enum pl_param p)
{
	return (pl_algo_info(a)->params & PL_PARAM_BIT(p)) != 0;
}

/* Parameter @p p of @p c as text (in @p buf or static); *quoted: a string in JSON. */
static const char *param_value(const struct pl_config *c, enum pl_param p, char *buf, size_t len,
			       bool *quoted)
{
	*quoted = p == PL_PARAM_KEY_HASH;
	switch (p) {
	case PL_PARAM_VNODES:
		snprintf(buf, len, "%u", c->vnodes);
		return buf;
	case PL_PARAM_MAGLEV_SIZE:
		snprintf(buf, len, "%u", c->maglev_size);
		return buf;
	case PL_PARAM_KEY_HASH:
		return pl_hash_name(c->key_hash);
	default:
		return "?";
	}
}

/* Append @p word to @p buf, after @p sep unless it is the first. */
static void join(char *buf, size_t len, const char *sep, const char *word)
{
	size_t used = strlen(buf);

	snprintf(buf + used, len - used, "%s%s", used ? sep : "", word);
}

/* Every algorithm name, from the library's list: "ring, ketama, ..., maglev<last>modulo". */
static const char *algo_list(char *buf, size_t len, const char *last)
{
	buf[0] = '\0';
	for (unsigned a = 0; a < PL_ALGO_COUNT; a++)
		join(buf, len, a + 1 < PL_ALGO_COUNT ? ", " : last, pl_algo_name((enum pl_algo)a));
	return buf;
}

/* The algorithms that read parameter @p p ("ring"); *first (when not NULL): the first. */
static void algos_reading(enum pl_param p, char *buf, size_t len, enum pl_algo *first)
{
	buf[0] = '\0';
	for (unsigned a = PL_ALGO_COUNT; a-- > 0;)
		if (reads((enum pl_algo)a, p) && first != NULL)
			*first = (enum pl_algo)a;
	for (unsigned a = 0; a < PL_ALGO_COUNT; a++)
		if (reads((enum pl_algo)a, p))
			join(buf, len, ", ", pl_algo_name((enum pl_algo)a));
}

/* Print @p text from column @p col on, wrapping at spaces before column 80 under the option
 * descriptions (column 21). */
static void print_wrapped(FILE *f, size_t col, const char *text)
{
	const size_t width = 80, indent = 21;
	bool first = true;

	while (*text != '\0') {
		size_t w = strcspn(text, " ");

		if (!first && col + 1 + w > width) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
		} else if (!first) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", (int)w, text);
		col += w;
		text += w + (text[w] == ' ');
		first = false;
	}
	fputc('\n', f);
}

static void usage(FILE *f)
{
	char algos[256], hashes[256], vn[64], mg[64], kh[64], line[128];
	enum pl_algo with_key_hash = (enum pl_algo)0;

	algos_reading(PL_PARAM_KEY_HASH, kh, sizeof(kh), &with_key_hash);
	algos_reading(PL_PARAM_VNODES, vn, sizeof(vn), NULL);
	algos_reading(PL_PARAM_MAGLEV_SIZE, mg, sizeof(mg), NULL);
	hashes[0] = '\0';
	for (unsigned h = 0; h < PL_HASH_COUNT; h++)
		if (h != PL_HASH_XXH3) /* xxh3 in pl_config.key_hash: the algorithm's default */
			join(hashes, sizeof(hashes), ", ", pl_hash_name((enum pl_hash)h));
	fprintf(f,
		"usage: ringway-plan compare --nodes FILE|N CHANGE... [--keys FILE | --generate "
		"N]\n"
		"                            [--algo LIST] [--json] [OPTIONS]\n"
		"       ringway-plan assign  --nodes FILE|N --algo A [--keys FILE | --generate N]\n"
		"                            [OPTIONS]\n"
		"\n"
		"  --nodes FILE       nodes file: one member a line, 'name address[:port] "
		"[weight]'\n"
		"                     (IPv6 in brackets: [2001:db8::1]:11211)\n"
		"  --nodes N          node0..node{N-1} at 198.18.1.1, .2, ... :11211 (254 a /24,\n"
		"                     then 198.18.2.1 and on, into 198.19.x.y past 198.18.255.x)\n"
		"  CHANGE (compare, one or more, applied in order):\n"
		"    --add NAME[=ADDR[:PORT]]   add a member of weight 1 (default address: the "
		"next\n"
		"                               generated address no member uses; IPv6 in\n"
		"                               brackets: NAME=[2001:db8::1]:11211)\n"
		"    --remove NAME              remove a member\n"
		"    --weight NAME=W            set a member's weight (0 drains it)\n"
		"  --keys FILE        keys, one a line (empty lines skipped)\n"
		"  --generate N       keys user:0 .. user:{N-1} (default: --generate %u)\n"
		"  --algo LIST        comma-separated algorithms (compare default: all of them)\n"
		"                     ",
		DEFAULT_GENERATE);
	print_wrapped(f, 21, algo_list(algos, sizeof(algos), ", "));
	fprintf(f,
		"  --json             compare: machine-readable output\n"
		"OPTIONS\n"
		"  --vnodes N         %s: tokens per unit of weight (default %d)\n"
		"  --maglev-size P    %s: lookup table size, a prime (default %d)\n",
		vn, PL_DEFAULT_VNODES, mg, PL_DEFAULT_MAGLEV_TABLE);
	snprintf(line, sizeof(line), "  --key-hash H       %s: its 'hash:' (default %s): ", kh,
		 pl_hash_name(pl_algo_info(with_key_hash)->default_key_hash));
	fputs(line, f);
	print_wrapped(f, strlen(line), hashes);
	fprintf(f,
		"  --hash-tag XY      hash only the text between X and Y when a key has it, e.g. "
		"{}\n"
		"\n"
		"Exit status: 0 done, 1 failure, 2 usage error.\n");
}

/* A decimal number 0..max with nothing after it. */
static bool parse_u32(const char *s, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > max)
		return false;
	*out = (uint32_t)v;
	return true;
}

static bool is_all_digits(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* Read a whole file into a malloc'd buffer. 0, or -1 after printing why. */
static int read_file(const char *path, char **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, n = 0;
	char *buf = NULL;
	int rc = -1;

	if (f == NULL) {
		errmsg("%s: %s", path, strerror(errno));
		return -1;
	}
	for (;;) {
		char *nb;
		size_t got;

		if (n == cap || buf == NULL) {
			if (buf != NULL)
				cap *= 2;
			if (cap > FILE_MAX) {
				errmsg("%s: larger than %u bytes", path, FILE_MAX);
				goto out;
			}
			nb = realloc(buf, cap);
			if (nb == NULL) {
				errmsg("%s: out of memory", path);
				goto out;
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		errmsg("%s: %s", path, strerror(errno));
		goto out;
	}
	*out = buf;
	*len = n;
	buf = NULL;
	rc = 0;
out:
	free(buf);
	fclose(f);
	return rc;
}

/* Generated address of node @p i: 198.18.1.1 .. 198.18.1.254, 198.18.2.1, ... 198.19.x.y. */
static void generated_addr(uint32_t i, char *addr, size_t len)
{
	uint32_t t = 1 + i / 254;

	snprintf(addr, len, "198.%u.%u.%u", 18 + t / 256, t % 256, 1 + i % 254);
}

static int load_fleet(const char *arg, struct fleet *fl)
{
	char err[256], *text = NULL;
	size_t len = 0;
	uint32_t i, n;
	int rc;

	if (is_all_digits(arg)) {
		if (!parse_u32(arg, PL_MEMBERS_MAX, &n) || n == 0) {
			errmsg("--nodes %s: expected a nodes file or a count 1..%d", arg,
			       PL_MEMBERS_MAX);
			return EXIT_USAGE;
		}
		fl->m = calloc(n, sizeof(*fl->m));
		if (fl->m == NULL) {
			errmsg("out of memory");
			return EXIT_FAILURE;
		}
		for (i = 0; i < n; i++) {
			snprintf(fl->m[i].name, sizeof(fl->m[i].name), "node%u", i);
			generated_addr(i, fl->m[i].addr, sizeof(fl->m[i].addr));
			fl->m[i].port = 11211;
			fl->m[i].weight = 1;
		}
		fl->n = n;
		return 0;
	}
	if (read_file(arg, &text, &len) != 0)
		return EXIT_FAILURE;
	rc = pl_members_parse(text, len, &fl->m, &fl->n, err, sizeof(err));
	free(text);
	if (rc != 0) {
		errmsg("%s: %s", arg, err);
		return EXIT_FAILURE;
	}
	return 0;
}

static int find_member(const struct fleet *fl, const char *name)
{
	uint32_t i;

	for (i = 0; i < fl->n; i++)
		if (strcmp(fl->m[i].name, name) == 0)
			return (int)i;
	return -1;
}

static bool addr_in_use(const struct fleet *fl, const char *addr, uint16_t port)
{
	uint32_t i;

	for (i = 0; i < fl->n; i++)
		if (fl->m[i].port == port && strcmp(fl->m[i].addr, addr) == 0)
			return true;
	return false;
}

/* Apply one change to @p fl (a copy of the fleet). 0, or an exit status after printing why. */
static int apply_change(struct fleet *fl, struct change *c)
{
	int idx = find_member(fl, c->name);
	struct pl_member *m;
	uint32_t i;

	if (c->op != CHANGE_ADD && idx < 0) {
		errmsg("--%s %s: no member named '%s'", change_names[c->op], c->name, c->name);
		return EXIT_USAGE;
	}
	if (c->op == CHANGE_REMOVE) {
		memmove(&fl->m[idx], &fl->m[idx + 1], (fl->n - (uint32_t)idx - 1) * sizeof(*fl->m));
		fl->n--;
		return 0;
	}
	if (c->op == CHANGE_WEIGHT) {
		fl->m[idx].weight = c->weight;
		return 0;
	}
	if (idx >= 0) {
		errmsg("--add %s: a member named '%s' already exists", c->name, c->name);
		return EXIT_USAGE;
	}
	if (fl->n >= PL_MEMBERS_MAX) {
		errmsg("--add %s: the fleet already has %d members", c->name, PL_MEMBERS_MAX);
		return EXIT_USAGE;
	}
	if (c->addr[0] == '\0') {
		for (i = fl->n;; i++) {
			generated_addr(i, c->addr, sizeof(c->addr));
			if (!addr_in_use(fl, c->addr, 11211))
				break;
		}
		c->port = 11211;
	}
	m = realloc(fl->m, (fl->n + 1) * sizeof(*fl->m));
	if (m == NULL) {
		errmsg("out of memory");
		return EXIT_FAILURE;
	}
	fl->m = m;
	m = &fl->m[fl->n++];
	memset(m, 0, sizeof(*m));
	memcpy(m->name, c->name, sizeof(m->name));
	memcpy(m->addr, c->addr, sizeof(m->addr));
	m->port = c->port;
	m->weight = c->weight;
	return 0;
}

/* NAME[=ADDR[:PORT]]: NAME and ADDR checked by the nodes-file parser itself. */
static int parse_add(const char *arg, struct change *c)
{
	const char *eq = strchr(arg, '=');
	char line[256], err[200];
	struct pl_member *m = NULL;
	uint32_t n;

	if (strlen(arg) > PL_NAME_MAX + PL_ADDR_MAX + 8) {
		errmsg("--add %.40s...: too long", arg);
		return EXIT_USAGE;
	}
	if (eq == NULL)
		snprintf(line, sizeof(line), "%s 0.0.0.0", arg);
	else
		snprintf(line, sizeof(line), "%.*s %s", (int)(eq - arg), arg, eq + 1);
	if (pl_members_parse(line, strlen(line), &m, &n, err, sizeof(err)) != 0 || n != 1) {
		/* the message's "line 1: " prefix means nothing on a command line */
		errmsg("--add %s: %s", arg, strncmp(err, "line 1: ", 8) == 0 ? err + 8 : err);
		free(m);
		return EXIT_USAGE;
	}
	c->op = CHANGE_ADD;
	memcpy(c->name, m[0].name, sizeof(c->name));
	if (eq != NULL) {
		memcpy(c->addr, m[0].addr, sizeof(c->addr));
		c->port = m[0].port;
	}
	c->weight = 1;
	free(m);
	return 0;
}

static int parse_named(const char *opt, const char *arg, size_t len, char name[PL_NAME_MAX + 1])
{
	size_t i;

	if (len == 0 || len > PL_NAME_MAX) {
		errmsg("--%s %s: expected a member name of 1..%d bytes", opt, arg, PL_NAME_MAX);
		return EXIT_USAGE;
	}
	for (i = 0; i < len; i++)
		if (strchr(" \t#=:", arg[i]) != NULL) {
			errmsg("--%s %s: expected a member name", opt, arg);
			return EXIT_USAGE;
		}
	memcpy(name, arg, len);
	name[len] = '\0';
	return 0;
}

static int parse_change(int opt, const char *arg, struct opts *o)
{
	struct change *c;
	const char *eq;
	int rc;

	if (o->nchanges == CHANGES_MAX) {
		errmsg("at most %d changes", CHANGES_MAX);
		return EXIT_USAGE;
	}
	c = &o->changes[o->nchanges];
	memset(c, 0, sizeof(*c));
	if (opt == 'a')
		rc = parse_add(arg, c);
	else if (opt == 'r') {
		c->op = CHANGE_REMOVE;
		rc = parse_named("remove", arg, strlen(arg), c->name);
	} else {
		c->op = CHANGE_WEIGHT;
		eq = strchr(arg, '=');
		if (eq == NULL) {
			errmsg("--weight %s: expected NAME=W", arg);
			return EXIT_USAGE;
		}
		rc = parse_named("weight", arg, (size_t)(eq - arg), c->name);
		if (rc == 0 && !parse_u32(eq + 1, 1000000, &c->weight)) {
			errmsg("--weight %s: expected a weight 0..1000000 after '='", arg);
			rc = EXIT_USAGE;
		}
	}
	if (rc == 0)
		o->nchanges++;
	return rc;
}

static int parse_algos(const char *arg, struct opts *o)
{
	char buf[256], names[256], *save = NULL, *tok;
	enum pl_algo a;

	if (strlen(arg) >= sizeof(buf)) {
		errmsg("--algo: list too long");
		return EXIT_USAGE;
	}
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (pl_algo_parse(tok, &a) != 0) {
			errmsg("--algo: unknown algorithm '%s' (expected %s)", tok,
			       algo_list(names, sizeof(names), " or "));
			return EXIT_USAGE;
		}
		if (!o->algo_set[a]) {
			o->algo_set[a] = true;
			o->algos[o->nalgos++] = a;
		}
	}
	if (o->nalgos == 0) {
		errmsg("--algo: expected at least one algorithm");
		return EXIT_USAGE;
	}
	return 0;
}

enum {
	OPT_VNODES = 256,
	OPT_MAGLEV,
	OPT_KEY_HASH,
	OPT_HASH_TAG,
};

static const struct option long_opts[] = {
	{"nodes", required_argument, NULL, 'n'},
	{"add", required_argument, NULL, 'a'},
	{"remove", required_argument, NULL, 'r'},
	{"weight", required_argument, NULL, 'w'},
	{"keys", required_argument, NULL, 'k'},
	{"generate", required_argument, NULL, 'g'},
	{"algo", required_argument, NULL, 'A'},
	{"json", no_argument, NULL, 'j'},
	{"vnodes", required_argument, NULL, OPT_VNODES},
	{"maglev-size", required_argument, NULL, OPT_MAGLEV},
	{"key-hash", required_argument, NULL, OPT_KEY_HASH},
	{"hash-tag", required_argument, NULL, OPT_HASH_TAG},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static int parse_option(int c, const char *arg, struct opts *o)
{
	switch (c) {
	case 'n':
		o->nodes = arg;
		return 0;
	case 'a':
	case 'r':
	case 'w':
		if (!o->compare) {
			errmsg("assign takes no membership change (--add, --remove, --weight)");
			return EXIT_USAGE;
		}
		return parse_change(c, arg, o);
	case 'k':
		o->keys_file = arg;
		return 0;
	case 'g':
		if (!parse_u32(arg, GENERATE_MAX, &o->generate) || o->generate == 0) {
			errmsg("--generate %s: expected a key count 1..%u", arg, GENERATE_MAX);
			return EXIT_USAGE;
		}
		return 0;
	case 'A':
		return parse_algos(arg, o);
	case 'j':
		o->json = true;
		return 0;
	case OPT_VNODES:
		if (!parse_u32(arg, 100000, &o->cfg.vnodes) || o->cfg.vnodes == 0) {
			errmsg("--vnodes %s: expected 1..100000", arg);
			return EXIT_USAGE;
		}
		return 0;
	case OPT_MAGLEV:
		if (!parse_u32(arg, UINT32_MAX, &o->cfg.maglev_size) || o->cfg.maglev_size < 2) {
			errmsg("--maglev-size %s: expected a prime table size", arg);
			return EXIT_USAGE;
		}
		return 0;
	case OPT_KEY_HASH:
		if (pl_hash_parse(arg, &o->cfg.key_hash) != 0) {
			errmsg("--key-hash %s: unknown hash (see --help)", arg);
			return EXIT_USAGE;
		}
		return 0;
	case OPT_HASH_TAG:
		if (strlen(arg) != 2 || arg[0] <= ' ' || arg[0] > '~' || arg[1] <= ' ' ||
		    arg[1] > '~') {
			errmsg("--hash-tag %s: expected two printable characters, such as {}", arg);
			return EXIT_USAGE;
		}
		memcpy(o->cfg.hash_tag, arg, 2);
		return 0;
	case 'h':
		usage(stdout);
		exit(EXIT_SUCCESS);
	default:
		usage(stderr);
		return EXIT_USAGE;
	}
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	int c, rc;

	if (argc < 2 || (strcmp(argv[1], "compare") != 0 && strcmp(argv[1], "assign") != 0)) {
		if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
			usage(stdout);
			exit(EXIT_SUCCESS);
		}
		errmsg("expected a command: compare or assign");
		usage(stderr);
		return EXIT_USAGE;
	}
	o->compare = strcmp(argv[1], "compare") == 0;
	optind = 2;
	while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		rc = parse_option(c, optarg, o);
		if (rc != 0)
			return rc;
	}
	if (optind < argc) {
		errmsg("unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if (o->nodes == NULL) {
		errmsg("%s needs --nodes FILE|N", argv[1]);
		return EXIT_USAGE;
	}
	if (o->keys_file != NULL && o->generate != 0) {
		errmsg("--keys and --generate exclude each other");
		return EXIT_USAGE;
	}
	if (o->compare && o->nchanges == 0) {
		errmsg("compare needs a change: --add NAME[=ADDR], --remove NAME or --weight "
		       "NAME=W");
		return EXIT_USAGE;
	}
	if (!o->compare && o->nalgos != 1) {
		errmsg("assign needs exactly one algorithm: --algo A");
		return EXIT_USAGE;
	}
	if (!o->compare && o->json) {
		errmsg("--json is for compare; assign prints key<TAB>member lines");
		return EXIT_USAGE;
	}
	if (o->nalgos == 0) {
		o->algo_default = true;
		for (c = 0; c < PL_ALGO_COUNT; c++)
			o->algos[o->nalgos++] = (enum pl_algo)c;
	}
	return 0;
}

static int keys_reserve(struct keys *k, size_t n, size_t bytes)
{
	k->buf = malloc(bytes ? bytes : 1);
	k->off = malloc(n * sizeof(*k->off));
	k->len = malloc(n * sizeof(*k->len));
	if (k->buf == NULL || k->off == NULL || k->len == NULL) {
		errmsg("out of memory for %zu keys", n);
		return EXIT_FAILURE;
	}
	return 0;
}

static int generate_keys(uint32_t count, struct keys *k)
{
	size_t pos = 0;
	uint32_t i;

	if (keys_reserve(k, count, (size_t)count * 16) != 0)
		return EXIT_FAILURE;
	for (i = 0; i < count; i++) {
		int len = snprintf(k->buf + pos, 16, "user:%u", i);

		k->off[i] = pos;
		k->len[i] = (uint8_t)len;
		pos += (size_t)len;
	}
	k->n = count;
	snprintf(k->source, sizeof(k->source), "generated user:0..user:%u", count - 1);
	return 0;
}

/* Keys file: one key a line; CR before LF dropped; empty lines skipped. */
static int read_keys(const char *path, struct keys *k)
{
	size_t len, pos = 0, lines = 0, line = 0;
	char *text;

	if (read_file(path, &text, &len) != 0)
		return EXIT_FAILURE;
	for (pos = 0; pos < len; pos++)
		lines += text[pos] == '\n';
	if (keys_reserve(k, lines + 1, 0) != 0) {
		free(text);
		return EXIT_FAILURE;
	}
	free(k->buf);
	k->buf = text;
	for (pos = 0; pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len, klen, i;

		line++;
		klen = end - pos;
		if (klen > 0 && text[end - 1] == '\r')
			klen--;
		for (i = 0; i < klen; i++)
			if ((unsigned char)text[pos + i] <= ' ' || text[pos + i] == 0x7f) {
				errmsg("%s: line %zu: a key cannot hold spaces or control "
				       "characters",
				       path, line);
				return EXIT_FAILURE;
			}
		if (klen > PL_KEY_MAX) {
			errmsg("%s: line %zu: key of %zu bytes: expected at most %d", path, line,
			       klen, PL_KEY_MAX);
			return EXIT_FAILURE;
		}
		if (klen > 0) {
			k->off[k->n] = pos;
			k->len[k->n++] = (uint8_t)klen;
		}
		pos = end + 1;
	}
	if (k->n == 0) {
		errmsg("%s: no keys", path);
		return EXIT_FAILURE;
	}
	snprintf(k->source, sizeof(k->source), "from %.80s", path);
	return 0;
}

static struct pl_placement *build(const struct opts *o, enum pl_algo a, const struct fleet *fl,
				  const char *which)
{
	struct pl_config cfg = o->cfg;
	struct pl_placement *p;
	const char *hint = "";
	int err;

	cfg.algo = a;
	if (!reads(a, PL_PARAM_KEY_HASH)) /* the others hash keys their own way */
		cfg.key_hash = PL_HASH_XXH3;
	p = pl_build(&cfg, fl->m, fl->n);
	if (p != NULL)
		return p;
	err = errno;
	for (unsigned i = 0; i < PL_PARAM_COUNT && err == EINVAL; i++)
		if (reads(a, (enum pl_param)i) && param_show[i].einval != NULL)
			hint = param_show[i].einval;
	errmsg("%s: cannot build the %splacement (%u members): %s%s", pl_algo_name(a), which, fl->n,
	       strerror(err), hint);
	return NULL;
}

static void load_stats(const struct pl_placement *p, const uint64_t *count, struct load *l)
{
	uint32_t i, n = pl_member_count(p);
	double sum = 0, sq = 0;

	memset(l, 0, sizeof(*l));
	for (i = 0; i < n; i++) {
		if (pl_member_at(p, i)->weight == 0)
			continue;
		if (l->members == 0 || count[i] < l->min)
			l->min = count[i];
		if (count[i] > l->max)
			l->max = count[i];
		sum += (double)count[i];
		l->members++;
	}
	if (l->members == 0)
		return;
	l->mean = sum / l->members;
	for (i = 0; i < n; i++)
		if (pl_member_at(p, i)->weight != 0)
			sq += ((double)count[i] - l->mean) * ((double)count[i] - l->mean);
	l->stddev = sqrt(sq / l->members);
	l->max_over_mean = l->mean > 0 ? (double)l->max / l->mean : 0;
}

/* A member is unchanged when it is in both fleets with the same address, port and weight. */
static bool *unchanged_map(const struct pl_placement *from, const struct pl_placement *to,
			   int32_t *to_index)
{
	uint32_t i, n = pl_member_count(from);
	bool *same = calloc(n + 1, sizeof(*same));

	if (same == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		const struct pl_member *a = pl_member_at(from, i), *b;

		to_index[i] = pl_member_find(to, a->name);
		if (to_index[i] < 0)
			continue;
		b = pl_member_at(to, (uint32_t)to_index[i]);
		same[i] = a->weight == b->weight && a->port == b->port &&
			  strcmp(a->addr, b->addr) == 0;
	}
	return same;
}

static int compare_one(const struct keys *k, const struct pl_placement *from,
		       const struct pl_placement *to, struct result *r)
{
	uint32_t nf = pl_member_count(from), nt = pl_member_count(to);
	uint64_t *cnt_from = calloc(nf, sizeof(uint64_t)), *cnt_to = calloc(nt, sizeof(uint64_t));
	int32_t *to_index = calloc(nf, sizeof(int32_t));
	bool *same = unchanged_map(from, to, to_index), *same_to = calloc(nt, sizeof(bool));
	int rc = EXIT_FAILURE;
	size_t i;

	r->moved_to = calloc(nt, sizeof(uint64_t));
	r->moved_from = calloc(nf, sizeof(uint64_t));
	if (!cnt_from || !cnt_to || !to_index || !same || !same_to || !r->moved_to ||
	    !r->moved_from) {
		errmsg("out of memory");
		goto out;
	}
	for (i = 0; i < nf; i++)
		if (same[i])
			same_to[to_index[i]] = true;
	for (i = 0; i < k->n; i++) {
		const char *key = k->buf + k->off[i];
		int32_t a = pl_lookup(from, key, k->len[i]), b = pl_lookup(to, key, k->len[i]);

		if (a >= 0)
			cnt_from[a]++;
		else
			r->unowned_before++;
		if (b >= 0)
			cnt_to[b]++;
		else
			r->unowned_after++;
		if (a < 0 && b < 0)
			continue;
		if (a >= 0 && b >= 0 && to_index[a] == b)
			continue;
		r->moved++;
		if (a >= 0)
			r->moved_from[a]++;
		if (b >= 0)
			r->moved_to[b]++;
		if (a >= 0 && b >= 0 && same[a] && same_to[b])
			r->moved_unchanged++;
	}
	load_stats(from, cnt_from, &r->before);
	load_stats(to, cnt_to, &r->after);
	r->has_space = pl_moved_fraction(from, to, &r->space) == 0;
	r->points_before = pl_point_count(from);
	r->points_after = pl_point_count(to);
	rc = 0;
out:
	free(cnt_from);
	free(cnt_to);
	free(to_index);
	free(same);
	free(same_to);
	return rc;
}

/* Weight share that changes hands: what a perfectly minimal, weight-fair algorithm moves. */
static double ideal_fraction(const struct fleet *from, const struct fleet *to)
{
	double wf = 0, wt = 0, moved = 0;
	uint32_t i;

	for (i = 0; i < from->n; i++)
		wf += from->m[i].weight;
	for (i = 0; i < to->n; i++)
		wt += to->m[i].weight;
	if (wf == 0 || wt == 0)
		return wf == wt ? 0 : 1;
	for (i = 0; i < to->n; i++) {
		int j = find_member(from, to->m[i].name);
		double before = j < 0 ? 0 : from->m[j].weight / wf, after = to->m[i].weight / wt;

		if (after > before)
			moved += after - before;
	}
	return moved;
}

static void print_config_json(const struct pl_config *c)
{
	char buf[16];
	bool quoted;

	printf("\"algo\": \"%s\"", pl_algo_name(c->algo));
	for (unsigned i = 0; i < PL_PARAM_COUNT; i++) {
		const char *v;

		if (!reads(c->algo, (enum pl_param)i))
			continue;
		v = param_value(c, (enum pl_param)i, buf, sizeof(buf), &quoted);
		printf(quoted ? ", \"%s\": \"%s\"" : ", \"%s\": %s",
		       pl_param_name((enum pl_param)i), v);
	}
	if (c->hash_tag[0] != '\0') /* printable ASCII (see --hash-tag): escape " and \ */
		printf(", \"hash_tag\": \"%s%c%s%c\"", strchr("\"\\", c->hash_tag[0]) ? "\\" : "",
		       c->hash_tag[0], strchr("\"\\", c->hash_tag[1]) ? "\\" : "", c->hash_tag[1]);
}

static void print_load_json(const char *name, const struct load *l)
{
	printf("\"%s\": {\"members\": %u, \"min\": %llu, \"max\": %llu, \"mean\": %.3f, "
	       "\"stddev\": %.3f, \"max_over_mean\": %.4f}",
	       name, l->members, (unsigned long long)l->min, (unsigned long long)l->max, l->mean,
	       l->stddev, l->max_over_mean);
}

/* {"name": count, ...} for members with a non-zero count. Names are [A-Za-z0-9._-]. */
static void print_counts_json(const char *name, const struct pl_placement *p, const uint64_t *count)
{
	uint32_t i, n = pl_member_count(p);
	bool first = true;

	printf("\"%s\": {", name);
	for (i = 0; i < n; i++) {
		if (count[i] == 0)
			continue;
		printf("%s\"%s\": %llu", first ? "" : ", ", pl_member_at(p, i)->name,
		       (unsigned long long)count[i]);
		first = false;
	}
	printf("}");
}

static void print_json(const struct opts *o, const struct fleet *from, const struct fleet *to,
		       const struct keys *k, const struct result *res,
		       struct pl_placement *const *pf, struct pl_placement *const *pt)
{
	unsigned i;

	printf("{\n  \"command\": \"compare\",\n  \"members_before\": %u,\n"
	       "  \"members_after\": %u,\n  \"changes\": [",
	       from->n, to->n);
	for (i = 0; i < o->nchanges; i++) {
		const struct change *c = &o->changes[i];

		printf("%s{\"op\": \"%s\", \"name\": \"%s\"", i ? ", " : "", change_names[c->op],
		       c->name);
		if (c->op == CHANGE_ADD)
			printf(", \"addr\": \"%s\", \"port\": %u", c->addr, c->port);
		if (c->op != CHANGE_REMOVE)
			printf(", \"weight\": %u", c->weight);
		printf("}");
	}
	printf("],\n  \"keys\": %zu,\n  \"ideal_fraction\": %.6f,\n  \"algorithms\": [\n", k->n,
	       ideal_fraction(from, to));
	for (i = 0; i < o->nalgos; i++) {
		const struct result *r = &res[i];

		printf("    {");
		print_config_json(r->cfg);
		printf(", \"points_before\": %llu, \"points_after\": %llu, \"moved\": %zu, "
		       "\"moved_fraction\": %.6f, \"moved_between_unchanged\": %zu, "
		       "\"unowned_before\": %zu, \"unowned_after\": %zu, ",
		       (unsigned long long)r->points_before, (unsigned long long)r->points_after,
		       r->moved, (double)r->moved / (double)k->n, r->moved_unchanged,
		       r->unowned_before, r->unowned_after);
		if (r->has_space)
			printf("\"hash_space_fraction\": %.6f,\n      ", r->space);
		else
			printf("\"hash_space_fraction\": null,\n      ");
		print_counts_json("moved_from", pf[i], r->moved_from);
		printf(",\n      ");
		print_counts_json("moved_to", pt[i], r->moved_to);
		printf(",\n      ");
		print_load_json("load_before", &r->before);
		printf(",\n      ");
		print_load_json("load_after", &r->after);
		printf("}%s\n", i + 1 < o->nalgos ? "," : "");
	}
	printf("  ]\n}\n");
}

static void print_change_text(const struct opts *o)
{
	unsigned i;

	for (i = 0; i < o->nchanges; i++) {
		const struct change *c = &o->changes[i];

		printf("%s%s %s", i ? ", " : "", change_names[c->op], c->name);
		if (c->op == CHANGE_ADD && strchr(c->addr, ':') != NULL)
			printf(" [%s]:%u weight %u", c->addr, c->port, c->weight);
		else if (c->op == CHANGE_ADD)
			printf(" %s:%u weight %u", c->addr, c->port, c->weight);
		else if (c->op == CHANGE_WEIGHT)
			printf("=%u", c->weight);
	}
}

static void print_load_text(const struct load *l)
{
	printf("%7llu %7llu %9.1f %8.1f %8.3f", (unsigned long long)l->min,
	       (unsigned long long)l->max, l->mean, l->stddev, l->max_over_mean);
}

/* The settings that shaped the figures: defaults as the library filled them in. */
static void print_settings_text(const struct opts *o, const struct result *res)
{
	const char *sep = "settings: ";
	unsigned i;

	char buf[16];
	bool quoted;

	for (i = 0; i < o->nalgos; i++) {
		const struct pl_config *c = res[i].cfg;

		for (unsigned p = 0; p < PL_PARAM_COUNT; p++) {
			if (!reads(c->algo, (enum pl_param)p))
				continue;
			printf("%s%s%s%s%s", sep, pl_algo_name(c->algo), param_show[p].pre,
			       param_value(c, (enum pl_param)p, buf, sizeof(buf), &quoted),
			       param_show[p].post);
			sep = "; ";
		}
	}
	if (o->cfg.hash_tag[0] != '\0')
		printf("%shash tag %c%c", sep, o->cfg.hash_tag[0], o->cfg.hash_tag[1]);
	printf("%s\n", sep[0] == ';' || o->cfg.hash_tag[0] ? "\n" : "");
}

/* Why an algorithm moved keys between members the change did not touch, by its class. */
static void print_movement_note(const struct result *r)
{
	switch (pl_algo_info(r->algo)->movement) {
	case PL_MOVES_MOST:
		printf(" (hash mod N: reference only).");
		break;
	case PL_MOVES_NEAR_MINIMAL:
		printf(" (Maglev refills its whole table: nearly minimal by design).");
		break;
	case PL_MOVES_REPOINTED:
		printf(" (its weighted formula gives every member a new point count when the fleet "
		       "changes: %llu -> %llu points).",
		       (unsigned long long)r->points_before, (unsigned long long)r->points_after);
		break;
	default: /* minimal, or jump's renumbering after a member that is not the last */
		printf(".");
		break;
	}
}

static void print_text(const struct opts *o, const struct fleet *from, const struct fleet *to,
		       const struct keys *k, const struct result *res)
{
	unsigned i;

	printf("change: ");
	print_change_text(o);
	printf("\nmembers: %u -> %u; keys: %zu (%s)\n", from->n, to->n, k->n, k->source);
	printf("ideal movement (weight share that changes hands): %.2f%%\n",
	       100 * ideal_fraction(from, to));
	print_settings_text(o, res);
	printf("%-11s %9s %8s %18s %12s\n", "algorithm", "moved", "moved%", "between-unchanged",
	       "hash-space%");
	for (i = 0; i < o->nalgos; i++) {
		const struct result *r = &res[i];
		char space[16] = "n/a";

		if (r->has_space)
			snprintf(space, sizeof(space), "%.2f%%", 100 * r->space);
		printf("%-11s %9zu %7.2f%% %18zu %12s\n", pl_algo_name(r->algo), r->moved,
		       100.0 * (double)r->moved / (double)k->n, r->moved_unchanged, space);
	}
	printf("\nkeys per member with weight\n%-11s %-47s %s\n", "", "before", "after");
	printf("%-11s %7s %7s %9s %8s %8s    %7s %7s %9s %8s %8s\n", "algorithm", "min", "max",
	       "mean", "stddev", "max/mean", "min", "max", "mean", "stddev", "max/mean");
	for (i = 0; i < o->nalgos; i++) {
		printf("%-11s ", pl_algo_name(res[i].algo));
		print_load_text(&res[i].before);
		printf("    ");
		print_load_text(&res[i].after);
		printf("\n");
	}
	for (i = 0; i < o->nalgos; i++) {
		const struct result *r = &res[i];

		if (r->moved_unchanged == 0)
			continue;
		printf("\n%s: %zu keys moved between members the change did not touch: its "
		       "movement is not minimal",
		       pl_algo_name(r->algo), r->moved_unchanged);
		print_movement_note(r);
	}
	printf("\n");
}

static int run_compare(struct opts *o, const struct fleet *from, const struct keys *k)
{
	struct pl_placement *pf[PL_ALGO_COUNT] = {0}, *pt[PL_ALGO_COUNT] = {0};
	struct result res[PL_ALGO_COUNT];
	struct fleet to = {0};
	int rc = EXIT_FAILURE;
	unsigned i;

	memset(res, 0, sizeof(res));
	to.m = malloc(from->n * sizeof(*to.m));
	if (to.m == NULL) {
		errmsg("out of memory");
		return EXIT_FAILURE;
	}
	memcpy(to.m, from->m, from->n * sizeof(*to.m));
	to.n = from->n;
	for (i = 0; i < o->nchanges; i++) {
		/* apply_change fills in the default address of an add, for the report */
		rc = apply_change(&to, &o->changes[i]);
		if (rc != 0)
			goto out;
	}
	if (to.n == 0) {
		errmsg("the change leaves no members");
		rc = EXIT_USAGE;
		goto out;
	}
	rc = EXIT_FAILURE;
	for (i = 0; i < o->nalgos; i++) {
		pf[i] = build(o, o->algos[i], from, "current ");
		pt[i] = pf[i] ? build(o, o->algos[i], &to, "changed ") : NULL;
		if (pt[i] == NULL && o->algo_default && o->nalgos > 1) {
			/* e.g. maglev's table smaller than the fleet: report the others */
			errmsg("%s left out of the comparison", pl_algo_name(o->algos[i]));
			pl_free(pf[i]);
			pf[i] = NULL;
			memmove(&o->algos[i], &o->algos[i + 1],
				(o->nalgos - i - 1) * sizeof(o->algos[0]));
			o->nalgos--;
			i--;
			continue;
		}
		if (pt[i] == NULL)
			goto out;
		res[i].algo = o->algos[i];
		res[i].cfg = pl_config_of(pf[i]);
		if (compare_one(k, pf[i], pt[i], &res[i]) != 0)
			goto out;
	}
	if (o->json)
		print_json(o, from, &to, k, res, pf, pt);
	else
		print_text(o, from, &to, k, res);
	rc = 0;
out:
	for (i = 0; i < PL_ALGO_COUNT; i++) {
		pl_free(pf[i]);
		pl_free(pt[i]);
		free(res[i].moved_to);
		free(res[i].moved_from);
	}
	free(to.m);
	return rc;
}

static int run_assign(const struct opts *o, const struct fleet *fl, const struct keys *k)
{
	struct pl_placement *p = build(o, o->algos[0], fl, "");
	size_t i;

	if (p == NULL)
		return EXIT_FAILURE;
	for (i = 0; i < k->n; i++) {
		const char *key = k->buf + k->off[i];
		int32_t owner = pl_lookup(p, key, k->len[i]);

		printf("%.*s\t%s\n", (int)k->len[i], key,
		       owner >= 0 ? pl_member_at(p, (uint32_t)owner)->name : "-");
	}
	pl_free(p);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct fleet fl = {0};
	struct keys k;
	int rc;

	memset(&o, 0, sizeof(o));
	memset(&k, 0, sizeof(k));
	rc = parse_args(argc, argv, &o);
	if (rc == 0)
		rc = load_fleet(o.nodes, &fl);
	if (rc == 0)
		rc = o.keys_file ? read_keys(o.keys_file, &k)
				 : generate_keys(o.generate ? o.generate : DEFAULT_GENERATE, &k);
	if (rc == 0)
		rc = o.compare ? run_compare(&o, &fl, &k) : run_assign(&o, &fl, &k);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		errmsg("writing the output: %s", strerror(errno));
		rc = rc ? rc : EXIT_FAILURE;
	}
	free(fl.m);
	free(k.buf);
	free(k.off);
	free(k.len);
	return rc;
}
