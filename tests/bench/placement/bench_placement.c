/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Placement benchmark: lookup cost of every algorithm at 10 / 100 / 1,000 / 10,000 equal-weight
 * members, against plain binary search over the same points and against libmemcached's own
 * ketama lookup (memcached_generate_hash) on the same servers; build time and memory.
 *
 *   bench_placement [--quick] [--out FILE]
 *
 * Method: 65536 random keys ("key:" + 16 hex digits) are made once; their hashes are computed
 * once per placement (pl_key_hash), so the "lookup" figures exclude the key hash and the RNG,
 * and "with_hash" figures run pl_lookup() on the keys themselves. Each figure comes from 101
 * timed runs (CLOCK_MONOTONIC) of back-to-back independent lookups over the arrays, each run
 * long enough (>= 1 ms) that clock overhead vanishes and short enough to fit in one scheduler
 * slice; the fastest run counts, because on a shared machine other processes only ever add
 * time (the median is reported too). Every answer is summed into a volatile sink so the
 * compiler cannot drop the calls. This is throughput per lookup as a worker sees it on a burst,
 * not the latency of one isolated lookup.
 *
 * Correctness, checked on every run (non-zero exit when broken, never on time): the index's
 * answer equals binary search for every key hash and for as many raw random hashes; pl_lookup
 * equals pl_lookup_hash(pl_key_hash). The share of keys where libmemcached and our ketama agree
 * is reported (the compat unit tests are the place that requires 100%).
 */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_LIBMEMCACHED
#include <libmemcached/memcached.h>
#endif

#include "placement.h"

#define NKEYS	      (1u << 16)
#define KEY_MASK      (NKEYS - 1)
#define KEY_LEN	      20 /* "key:" + 16 hex digits */
#define REPEATS_FULL  101
#define REPEATS_QUICK 3
#define LOOPS_MAX     4

static const uint32_t sizes[] = {10, 100, 1000, 10000};

struct bench {
	bool quick;
	uint64_t min_ns; /* shortest timed run */
	unsigned repeats;
	char (*keys)[KEY_LEN + 1];
	uint64_t *hashes; /* per placement: pl_key_hash of each key */
	uint64_t *raw;	  /* random hash values (not from keys), for the bsearch check */
	int32_t *owners;  /* libmemcached check: our owner of each key */
	FILE *out;
	bool failed;
};

/* Every lookup result lands here, so no timed loop can be optimised away. */
static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Timed loops: n lookups starting at key index `from`; one per kind so nothing is indirect. */
enum loop {
	LOOP_INDEX,	/* pl_lookup_hash on precomputed hashes */
	LOOP_BSEARCH,	/* pl_lookup_hash_bsearch on the same hashes */
	LOOP_WITH_HASH, /* pl_lookup on the keys */
	LOOP_KEY_HASH,	/* pl_key_hash alone, for reference */
	LOOP_LIBMEMCACHED,
};

struct target {
	const struct pl_placement *p;
#ifdef HAVE_LIBMEMCACHED
	const memcached_st *mc;
#endif
};

static uint64_t run_loop(const struct bench *b, const struct target *t, enum loop kind, uint64_t n)
{
	uint64_t sum = 0, i;

	switch (kind) {
	case LOOP_INDEX:
		for (i = 0; i < n; i++)
			sum += (uint64_t)pl_lookup_hash(t->p, b->hashes[i & KEY_MASK]);
		break;
	case LOOP_BSEARCH:
		for (i = 0; i < n; i++)
			sum += (uint64_t)pl_lookup_hash_bsearch(t->p, b->hashes[i & KEY_MASK]);
		break;
	case LOOP_WITH_HASH:
		for (i = 0; i < n; i++)
			sum += (uint64_t)pl_lookup(t->p, b->keys[i & KEY_MASK], KEY_LEN);
		break;
	case LOOP_KEY_HASH:
		for (i = 0; i < n; i++)
			sum += pl_key_hash(t->p, b->keys[i & KEY_MASK], KEY_LEN);
		break;
	case LOOP_LIBMEMCACHED:
#ifdef HAVE_LIBMEMCACHED
		for (i = 0; i < n; i++)
			sum += memcached_generate_hash(t->mc, b->keys[i & KEY_MASK], KEY_LEN);
#endif
		break;
	}
	return sum;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct timing {
	double min, median; /* ns per lookup over the repeats */
};

/* Lookups per timed run: doubled until one run lasts min_ns. */
static uint64_t calibrate(const struct bench *b, const struct target *t, enum loop kind)
{
	uint64_t n = 256, t0, dt;

	for (;;) {
		t0 = now_ns();
		sink += run_loop(b, t, kind, n);
		dt = now_ns() - t0;
		if (dt >= b->min_ns)
			return n;
		n *= dt < b->min_ns / 8 ? 8 : 2;
	}
}

/*
 * ns per lookup of each loop in @p kinds. The loops take turns run by run, so that every loop
 * sees the same moments of the machine (other processes, clock boost) and their ratios hold
 * even when the absolute figures move.
 */
static void measure_set(const struct bench *b, const struct target *t, const enum loop *kinds,
			unsigned k, struct timing *out)
{
	double runs[LOOPS_MAX][REPEATS_FULL];
	uint64_t n[LOOPS_MAX], t0;
	unsigned j, r;

	for (j = 0; j < k; j++)
		n[j] = calibrate(b, t, kinds[j]);
	for (r = 0; r < b->repeats; r++)
		for (j = 0; j < k; j++) {
			t0 = now_ns();
			sink += run_loop(b, t, kinds[j], n[j]);
			runs[j][r] = (double)(now_ns() - t0) / (double)n[j];
		}
	for (j = 0; j < k; j++) {
		qsort(runs[j], b->repeats, sizeof(runs[j][0]), cmp_double);
		out[j] = (struct timing){runs[j][0], runs[j][b->repeats / 2]};
	}
}

/* node{i} at 198.18.1.1 .. (the planner's --nodes N fleet), weight 1. */
static struct pl_member *make_members(uint32_t n)
{
	struct pl_member *m = calloc(n, sizeof(*m));
	uint32_t i;

	if (m == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		uint32_t t = 1 + i / 254;

		snprintf(m[i].name, sizeof(m[i].name), "node%u", i);
		snprintf(m[i].addr, sizeof(m[i].addr), "198.%u.%u.%u", 18 + t / 256, t % 256,
			 1 + i % 254);
		m[i].port = 11211;
		m[i].weight = 1;
	}
	return m;
}

static bool is_continuum(enum pl_algo a)
{
	return a == PL_ALGO_RING || a == PL_ALGO_KETAMA || a == PL_ALGO_TWEMPROXY;
}

/* Index vs binary search on every key hash and every raw hash; pl_lookup vs the split form. */
static bool check_answers(struct bench *b, const struct pl_placement *p, enum pl_algo a,
			  uint64_t *checked)
{
	uint64_t mask = (a == PL_ALGO_KETAMA || a == PL_ALGO_TWEMPROXY) ? UINT32_MAX : UINT64_MAX;
	/* rendezvous costs O(members) a lookup: check fewer keys at large sizes */
	uint32_t i, n = a == PL_ALGO_RENDEZVOUS ? NKEYS * 16 / pl_member_count(p) : NKEYS;
	bool ok = true;

	if (n > NKEYS)
		n = NKEYS;
	if (n < 1024)
		n = 1024;
	for (i = 0; i < n; i++) {
		int32_t own = pl_lookup_hash(p, b->hashes[i]);

		b->owners[i] = own;
		if (own < 0 || pl_lookup(p, b->keys[i], KEY_LEN) != own)
			ok = false;
		if (is_continuum(a) && (pl_lookup_hash_bsearch(p, b->hashes[i]) != own ||
					pl_lookup_hash(p, b->raw[i] & mask) !=
						pl_lookup_hash_bsearch(p, b->raw[i] & mask)))
			ok = false;
	}
	*checked = is_continuum(a) ? 2 * (uint64_t)n : n;
	return ok;
}

struct lm_result {
	bool have;
	struct timing ns, ours; /* libmemcached's and our ketama's key -> server, interleaved */
	double build_ms;
	double agree; /* share of keys where libmemcached's server index equals our ketama owner */
};

#ifdef HAVE_LIBMEMCACHED
/* A KETAMA_WEIGHTED memcached_st over the same servers, in the same order (one push, so the
 * continuum is built once, not once per server). */
static memcached_st *lm_build(const struct pl_member *m, uint32_t n, double *build_ms)
{
	memcached_server_st *list = NULL;
	memcached_return_t rc = MEMCACHED_SUCCESS;
	memcached_st *mc = memcached_create(NULL);
	uint64_t t0;
	uint32_t i;

	if (mc == NULL)
		return NULL;
	if (memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1) != MEMCACHED_SUCCESS)
		goto fail;
	for (i = 0; i < n && rc == MEMCACHED_SUCCESS; i++)
		list = memcached_server_list_append_with_weight(list, m[i].addr, m[i].port,
								m[i].weight, &rc);
	if (list == NULL || rc != MEMCACHED_SUCCESS)
		goto fail;
	t0 = now_ns();
	rc = memcached_server_push(mc, list);
	*build_ms = (double)(now_ns() - t0) / 1e6;
	memcached_server_list_free(list);
	list = NULL;
	if (rc != MEMCACHED_SUCCESS)
		goto fail;
	return mc;
fail:
	memcached_server_list_free(list);
	memcached_free(mc);
	return NULL;
}
#endif

/* libmemcached's lookup on the ketama fleet; b->owners holds our ketama answers. */
static void lm_measure(struct bench *b, const struct pl_placement *ketama,
		       const struct pl_member *m, uint32_t n, struct lm_result *r)
{
#ifdef HAVE_LIBMEMCACHED
	struct timing ns[2];
	struct target t = {0};
	memcached_st *mc;
	uint32_t i, same = 0;

	/* libmemcached asserts (and aborts) beyond MEMCACHED_CONTINUUM_SIZE / 100 servers */
	if ((uint64_t)n * MEMCACHED_POINTS_PER_SERVER > MEMCACHED_CONTINUUM_SIZE)
		return;
	mc = lm_build(m, n, &r->build_ms);
	if (mc == NULL) {
		fprintf(stderr, "bench_placement: libmemcached: cannot build %u servers\n", n);
		return;
	}
	for (i = 0; i < NKEYS; i++)
		same += memcached_generate_hash(mc, b->keys[i], KEY_LEN) == (uint32_t)b->owners[i];
	r->agree = (double)same / NKEYS;
	t.p = ketama;
	t.mc = mc;
	measure_set(b, &t, (const enum loop[]){LOOP_WITH_HASH, LOOP_LIBMEMCACHED}, 2, ns);
	r->ours = ns[0];
	r->ns = ns[1];
	r->have = true;
	memcached_free(mc);
#else
	(void)b;
	(void)ketama;
	(void)m;
	(void)n;
	(void)r;
#endif
}

static void json_num(FILE *f, const char *name, bool have, double v, const char *fmt)
{
	fprintf(f, "\"%s\": ", name);
	if (have)
		fprintf(f, fmt, v);
	else
		fputs("null", f);
}

struct algo_result {
	double build_ms;
	struct timing ns_index, ns_bsearch, ns_with_hash, ns_key_hash;
	size_t memory;
	uint64_t points, checked;
	bool correct;
};

static int bench_algo(struct bench *b, enum pl_algo a, const struct pl_member *m, uint32_t n,
		      struct algo_result *r, struct lm_result *lm)
{
	struct pl_config cfg = {.algo = a};
	struct pl_placement *p = NULL;
	struct target t = {0};
	unsigned rep, reps = b->quick ? 1 : 3;
	uint32_t i;

	r->build_ms = 1e300;
	for (rep = 0; rep < reps; rep++) { /* best of reps: the build is deterministic */
		uint64_t t0 = now_ns();
		struct pl_placement *q = pl_build(&cfg, m, n);
		double ms = (double)(now_ns() - t0) / 1e6;

		if (q == NULL) {
			fprintf(stderr, "bench_placement: %s, %u members: pl_build: %s\n",
				pl_algo_name(a), n, strerror(errno));
			pl_free(p);
			return -1;
		}
		if (ms < r->build_ms)
			r->build_ms = ms;
		pl_free(p);
		p = q;
	}
	r->memory = pl_memory(p);
	r->points = pl_point_count(p);
	for (i = 0; i < NKEYS; i++)
		b->hashes[i] = pl_key_hash(p, b->keys[i], KEY_LEN);
	r->correct = check_answers(b, p, a, &r->checked);
	if (!r->correct) {
		fprintf(stderr,
			"bench_placement: %s, %u members: index and binary search (or "
			"pl_lookup) disagree\n",
			pl_algo_name(a), n);
		b->failed = true;
	}
	t.p = p;
	if (is_continuum(a)) {
		struct timing ns[4];

		measure_set(b, &t,
			    (const enum loop[]){LOOP_INDEX, LOOP_BSEARCH, LOOP_WITH_HASH,
						LOOP_KEY_HASH},
			    4, ns);
		r->ns_index = ns[0];
		r->ns_bsearch = ns[1];
		r->ns_with_hash = ns[2];
		r->ns_key_hash = ns[3];
	} else {
		struct timing ns[3];

		measure_set(b, &t, (const enum loop[]){LOOP_INDEX, LOOP_WITH_HASH, LOOP_KEY_HASH},
			    3, ns);
		r->ns_index = ns[0];
		r->ns_with_hash = ns[1];
		r->ns_key_hash = ns[2];
	}
	if (a == PL_ALGO_KETAMA) /* b->owners holds ketama's answers now */
		lm_measure(b, p, m, n, lm);
	pl_free(p);
	return 0;
}

static void print_algo(FILE *f, enum pl_algo a, const struct algo_result *r,
		       const struct lm_result *lm, bool last)
{
	bool cont = is_continuum(a);

	fprintf(f,
		"        {\"algo\": \"%s\", \"build_ms\": %.3f, \"memory_bytes\": %zu, "
		"\"points\": %" PRIu64 ",\n         ",
		pl_algo_name(a), r->build_ms, r->memory, r->points);
	json_num(f, "ns_lookup", true, r->ns_index.min, "%.2f");
	fputs(", ", f);
	json_num(f, "ns_lookup_median", true, r->ns_index.median, "%.2f");
	fputs(", ", f);
	json_num(f, "ns_lookup_with_hash", true, r->ns_with_hash.min, "%.2f");
	fputs(", ", f);
	json_num(f, "ns_lookup_with_hash_median", true, r->ns_with_hash.median, "%.2f");
	fputs(", ", f);
	json_num(f, "ns_key_hash", true, r->ns_key_hash.min, "%.2f");
	fputs(", ", f);
	json_num(f, "ns_bsearch", cont, r->ns_bsearch.min, "%.2f");
	fputs(",\n         ", f);
	json_num(f, "index_vs_bsearch", cont, r->ns_bsearch.min / r->ns_index.min, "%.2f");
	fputs(", ", f);
	json_num(f, "vs_libmemcached", lm->have, lm->ns.min / r->ns_with_hash.min, "%.2f");
	fprintf(f, ", \"index_equals_bsearch\": %s, \"answers_checked\": %" PRIu64 "}%s\n",
		cont ? (r->correct ? "true" : "false") : (r->correct ? "null" : "false"),
		r->checked, last ? "" : ",");
}

static int bench_size(struct bench *b, uint32_t n, bool last, struct algo_result *ring)
{
	struct algo_result res[PL_ALGO_COUNT];
	struct pl_member *m = make_members(n);
	struct lm_result lm = {0};
	int a;

	if (m == NULL)
		return -1;
	for (a = 0; a < PL_ALGO_COUNT; a++) {
		if (bench_algo(b, (enum pl_algo)a, m, n, &res[a], &lm) != 0) {
			free(m);
			return -1;
		}
		fprintf(stderr, "bench_placement: %5u members %-10s %8.2f ns/lookup\n", n,
			pl_algo_name((enum pl_algo)a), res[a].ns_index.min);
	}
	fprintf(b->out, "    {\"nodes\": %u,\n      \"libmemcached\": ", n);
	if (lm.have)
		fprintf(b->out,
			"{\"ns_with_hash\": %.2f, \"ns_with_hash_median\": %.2f, \"build_ms\": "
			"%.3f, "
			"\"agrees_with_ketama\": %.6f, \"ours_ketama_ns_with_hash\": %.2f, "
			"\"ketama_speedup\": %.2f},\n",
			lm.ns.min, lm.ns.median, lm.build_ms, lm.agree, lm.ours.min,
			lm.ns.min / lm.ours.min);
	else
		fputs("null,\n", b->out);
	fputs("      \"algorithms\": [\n", b->out);
	for (a = 0; a < PL_ALGO_COUNT; a++)
		print_algo(b->out, (enum pl_algo)a, &res[a], &lm, a + 1 == PL_ALGO_COUNT);
	fprintf(b->out, "      ]}%s\n", last ? "" : ",");
	*ring = res[PL_ALGO_RING];
	free(m);
	return 0;
}

static void machine(FILE *f)
{
	char line[256], model[128] = "unknown";
	FILE *c = fopen("/proc/cpuinfo", "r");
	double load1;

	while (c != NULL && fgets(line, sizeof(line), c) != NULL) {
		char *v = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && v != NULL) {
			snprintf(model, sizeof(model), "%s", v + 2);
			model[strcspn(model, "\n\"\\")] = '\0';
			break;
		}
	}
	if (c != NULL)
		fclose(c);
	/* the load when the run started: on a shared machine it explains slow figures */
	c = fopen("/proc/loadavg", "r");
	if (c == NULL || fscanf(c, "%lf", &load1) != 1)
		load1 = -1;
	if (c != NULL)
		fclose(c);
	fprintf(f,
		"  \"machine\": {\"cpu\": \"%s\", \"online_cpus\": %ld, \"loadavg_1min\": %.2f},\n",
		model, sysconf(_SC_NPROCESSORS_ONLN), load1);
}

static int setup(struct bench *b)
{
	uint64_t s = UINT64_C(20260401);
	uint32_t i;

	b->keys = malloc(NKEYS * sizeof(*b->keys));
	b->hashes = malloc(NKEYS * sizeof(*b->hashes));
	b->raw = malloc(NKEYS * sizeof(*b->raw));
	b->owners = malloc(NKEYS * sizeof(*b->owners));
	if (!b->keys || !b->hashes || !b->raw || !b->owners)
		return -1;
	for (i = 0; i < NKEYS; i++) {
		snprintf(b->keys[i], KEY_LEN + 1, "key:%016" PRIx64, splitmix64(&s));
		b->raw[i] = splitmix64(&s);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct bench b = {.out = stdout};
	struct algo_result ring[sizeof(sizes) / sizeof(sizes[0])];
	const char *out = NULL;
	size_t i, nsizes = sizeof(sizes) / sizeof(sizes[0]);
	int rc = 0;

	for (i = 1; i < (size_t)argc; i++) {
		if (strcmp(argv[i], "--quick") == 0)
			b.quick = true;
		else if (strcmp(argv[i], "--out") == 0 && i + 1 < (size_t)argc)
			out = argv[++i];
		else {
			fprintf(stderr, "usage: %s [--quick] [--out FILE]\n", argv[0]);
			return 2;
		}
	}
	b.min_ns = 1000000;
	b.repeats = b.quick ? REPEATS_QUICK : REPEATS_FULL;
	if (setup(&b) != 0) {
		fprintf(stderr, "bench_placement: out of memory\n");
		return 1;
	}
	if (out != NULL && (b.out = fopen(out, "w")) == NULL) {
		fprintf(stderr, "bench_placement: %s: %s\n", out, strerror(errno));
		return 1;
	}
	fprintf(b.out, "{\n  \"benchmark\": \"placement\",\n  \"mode\": \"%s\",\n",
		b.quick ? "quick" : "full");
	machine(b.out);
	fprintf(b.out,
		"  \"method\": \"%u random keys of %d bytes; ns per lookup = fastest of %u "
		"timed runs (*_median: their median) of independent back-to-back lookups "
		"(CLOCK_MONOTONIC, runs >= %" PRIu64 " ms); ns_lookup excludes the key hash, "
		"ns_lookup_with_hash includes it; equal weights, %d vnodes for ring\",\n",
		NKEYS, KEY_LEN, b.repeats, b.min_ns / 1000000, PL_DEFAULT_VNODES);
#ifdef HAVE_LIBMEMCACHED
	fprintf(b.out, "  \"libmemcached\": \"%s\",\n  \"libmemcached_max_servers\": %d,\n",
		LIBMEMCACHED_VERSION_STRING,
		MEMCACHED_CONTINUUM_SIZE / MEMCACHED_POINTS_PER_SERVER);
#else
	fprintf(b.out, "  \"libmemcached\": null,\n  \"libmemcached_max_servers\": null,\n");
#endif
	fprintf(b.out, "  \"sizes\": [\n");
	for (i = 0; i < nsizes && rc == 0; i++)
		rc = bench_size(&b, sizes[i], i + 1 == nsizes, &ring[i]);
	if (rc == 0) {
		/* issue 2's targets, reported, never enforced: 1,000 members x 160 vnodes */
		const struct algo_result *r = &ring[2];

		fprintf(b.out,
			"  ],\n  \"targets\": {\"ring_1000_ns_lookup\": %.2f, "
			"\"ring_1000_le_10ns\": %s, \"ring_1000_index_vs_bsearch\": %.2f, "
			"\"ring_1000_ge_3x\": %s, \"ring_10000_build_ms\": %.1f, "
			"\"ring_10000_build_lt_1s\": %s},\n",
			r->ns_index.min, r->ns_index.min <= 10 ? "true" : "false",
			r->ns_bsearch.min / r->ns_index.min,
			r->ns_bsearch.min / r->ns_index.min >= 3 ? "true" : "false",
			ring[3].build_ms, ring[3].build_ms < 1000 ? "true" : "false");
		fprintf(b.out, "  \"all_answers_correct\": %s\n}\n", b.failed ? "false" : "true");
	}
	if (out != NULL && fclose(b.out) != 0)
		rc = -1;
	free(b.keys);
	free(b.hashes);
	free(b.raw);
	free(b.owners);
	return rc != 0 || b.failed ? 1 : 0;
}
