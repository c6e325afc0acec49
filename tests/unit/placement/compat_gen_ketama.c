/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * compat_gen_ketama: records golden owner vectors from libmemcached itself.
 *
 *   compat_gen_ketama equal|weighted|ports > tests/data/placement/compat_ketama_<case>.tsv
 *
 * Builds a memcached_st with MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA and KETAMA_WEIGHTED,
 * adds the case's servers with their weights and writes, for 3,000 keys (cut to 32 bytes), the
 * server index memcached_generate_hash() returns. No ringway code decides any owner written here.
 */
#include <stdio.h>
#include <string.h>

#include <libmemcached/memcached.h>

#include "compat_golden.h"
#include "compat_keys.h"

#define GOLDEN_KEYS 3000

struct server {
	const char *host;
	unsigned int port;
	unsigned int weight;
};

static const struct server equal_fleet[] = {
	{"10.0.0.1", 11211, 1},	 {"10.0.0.2", 11211, 1}, {"10.0.0.3", 11211, 1},
	{"10.0.0.4", 11211, 1},	 {"10.0.0.5", 11211, 1}, {"10.0.0.6", 11211, 1},
	{"10.0.0.7", 11211, 1},	 {"10.0.0.8", 11211, 1}, {"10.0.0.9", 11211, 1},
	{"10.0.0.10", 11211, 1},
};

static const struct server weighted_fleet[] = {
	{"192.168.1.11", 11211, 1}, {"192.168.1.12", 11211, 2},	  {"192.168.1.13", 11211, 3},
	{"192.168.1.14", 11211, 5}, {"192.168.1.15", 11211, 8},	  {"192.168.1.16", 11211, 13},
	{"192.168.1.17", 11211, 1}, {"192.168.1.18", 11211, 100},
};

static const struct server ports_fleet[] = {
	{"10.9.0.1", 11211, 1},
	{"10.9.0.1", 11212, 1},
	{"10.9.0.1", 22122, 2},
	{"10.9.0.2", 11211, 3},
	{"cache-a.example.net", 11211, 1},
	{"cache-b.example.net", 20000, 4},
};

static int record(const struct server *s, size_t n, const char *label)
{
	memcached_st *memc = memcached_create(NULL);
	char key[PL_KEY_MAX + 1], esc[3 * PL_KEY_MAX + 1];

	if (memc == NULL ||
	    memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_DISTRIBUTION,
				   MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA) != MEMCACHED_SUCCESS ||
	    memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1) !=
		    MEMCACHED_SUCCESS) {
		fprintf(stderr, "cannot set up libmemcached\n");
		return 1;
	}
	printf("# Golden owners for the `ketama` algorithm, case %s, recorded from libmemcached "
	       "%s\n"
	       "# (DISTRIBUTION_CONSISTENT_KETAMA + KETAMA_WEIGHTED, memcached_generate_hash) by\n"
	       "# tests/unit/placement/compat_gen_ketama. Format: compat_golden.h. Do not edit.\n",
	       label, memcached_lib_version());
	for (size_t i = 0; i < n; i++) {
		if (memcached_server_add_with_weight(memc, s[i].host, (in_port_t)s[i].port,
						     s[i].weight) != MEMCACHED_SUCCESS) {
			fprintf(stderr, "cannot add %s:%u\n", s[i].host, s[i].port);
			return 1;
		}
		printf("member\tm%zu\t%s\t%u\t%u\n", i, s[i].host, s[i].port, s[i].weight);
	}
	for (uint64_t i = 0; i < GOLDEN_KEYS; i++) {
		size_t len = compat_key(i, key);

		/* Short keys keep the files small; long keys are covered by test_compat_ketama. */
		if (len > 32)
			len = 32;
		compat_escape(key, len, esc);
		printf("key\t%s\t%u\n", esc, memcached_generate_hash(memc, key, len));
	}
	memcached_free(memc);
	return fflush(stdout) != 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "equal") == 0)
		return record(equal_fleet, sizeof(equal_fleet) / sizeof(equal_fleet[0]), argv[1]);
	if (argc == 2 && strcmp(argv[1], "weighted") == 0)
		return record(weighted_fleet, sizeof(weighted_fleet) / sizeof(weighted_fleet[0]),
			      argv[1]);
	if (argc == 2 && strcmp(argv[1], "ports") == 0)
		return record(ports_fleet, sizeof(ports_fleet) / sizeof(ports_fleet[0]), argv[1]);
	fprintf(stderr, "usage: compat_gen_ketama equal|weighted|ports\n");
	return 2;
}
