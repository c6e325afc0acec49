/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-request cost of the load generator's request builder, old (lg_frame_build_ref: every
 * byte, full checksums) against new (lg_tmpl_write: template + incremental checksums), for
 * callgrind: run it twice with two counts and divide the difference of the instructions by
 * the difference of the counts (start-up cancels out).
 *
 *   bench_loadgen_frames ref|tmpl ascii|meta|binary VALUE_SIZE COUNT [MULTIGET]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadgen.h"

int main(int argc, char **argv)
{
	struct lg_opts o;
	struct lg_keys k;
	struct lg_req q;
	struct lg_tmpl t[2];
	struct rte_ether_addr sm = {{2, 0, 0, 0, 0, 1}}, dm = {{2, 0, 0, 0, 0, 2}};
	struct lg_rng r = {.s = 12345};
	uint8_t hdr[LG_HDR_LEN], *buf;
	uint64_t sink = 0;
	bool ref;
	unsigned long n;

	if (argc < 5) {
		fprintf(stderr, "usage: %s ref|tmpl ascii|meta|binary VALUE_SIZE COUNT [MULTIGET]\n",
			argv[0]);
		return 2;
	}
	ref = strcmp(argv[1], "ref") == 0;
	memset(&o, 0, sizeof(o));
	o.proto = strcmp(argv[2], "meta") == 0	   ? MC_PROTO_META
		  : strcmp(argv[2], "binary") == 0 ? MC_PROTO_BINARY
						   : MC_PROTO_ASCII;
	o.value_size = (uint32_t)strtoul(argv[3], NULL, 10);
	n = strtoul(argv[4], NULL, 10);
	o.multiget = argc > 5 ? (uint16_t)strtoul(argv[5], NULL, 10) : 1;
	o.keys = 100000; /* linerate.py's key space and prefix */
	strcpy(o.key_prefix, "key:");
	o.src_ip = 0x1400a8c0;
	o.dst_ip = 0x0100a8c0;
	o.dst_port = 11211;
	o.sport_base = 10000;
	o.sport_count = 1000;
	if (lg_keys_init(&k, &o) != 0 || lg_req_init(&q, &k, &o) != 0)
		return 1;
	lg_frame_hdr_init(hdr, &sm, &dm, &o);
	if (lg_tmpl_init(&t[0], &q, LG_OP_GET, hdr) != 0 || lg_tmpl_init(&t[1], &q, LG_OP_SET, hdr))
		return 1;
	buf = malloc(65536);
	for (unsigned long i = 0; i < n; i++) {
		uint32_t key = lg_keys_pick(&k, &r);
		uint16_t sport = (uint16_t)(o.sport_base + i % o.sport_count);
		uint32_t len = ref ? lg_frame_build_ref(&q, hdr, LG_OP_GET, key, (uint32_t)i, sport,
							(uint16_t)i, buf)
				   : lg_tmpl_write(&t[0], key, (uint32_t)i, sport, (uint16_t)i, buf);

		sink += len + buf[40];
	}
	printf("%llu\n", (unsigned long long)sink);
	free(buf);
	lg_tmpl_free(&t[0]);
	lg_tmpl_free(&t[1]);
	lg_req_free(&q);
	lg_keys_free(&k);
	return 0;
}
