/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Key hashes of the compatibility recipes: published test vectors where they exist (RFC 1321
 * for MD5, the FNV reference vectors, the CRC-32 check value, XXH3's empty-input value), then a
 * cross-check of every twemproxy hash with libhashkit's (libmemcached 1.1.4) over many keys,
 * including bytes >= 0x80. twemproxy took these functions from libhashkit; the one it has and
 * libhashkit lacks, crc32a (the standard CRC-32), is tied to libhashkit's crc32, which returns
 * bits 16..30 of that same CRC. (The live nutcracker test checks each hash end to end.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <libhashkit-1.0/hashkit.h>

#include "compat_keys.h"
#include "placement.h"
#include "placement_priv.h"

static void md5_hex(const char *s, size_t len, char out[33])
{
	uint8_t d[16];

	pl_md5(s, len, d);
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* RFC 1321, appendix A.5 ("MD5 test suite"). */
static void test_md5_rfc1321(void **state)
{
	static const char *const v[][2] = {
		{"", "d41d8cd98f00b204e9800998ecf8427e"},
		{"a", "0cc175b9c0f1b6a831c399e269772661"},
		{"abc", "900150983cd24fb0d6963f7d28e17f72"},
		{"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
		{"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
		{"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
		 "d174ab98d277d9f5a5611c2c9f419d9f"},
		{"1234567890123456789012345678901234567890123456789012345678901234567890123456"
		 "7890",
		 "57edf4a22be3c955ac49da2e2107b67a"},
	};
	char hex[33];

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		md5_hex(v[i][0], strlen(v[i][0]), hex);
		assert_string_equal(hex, v[i][1]);
	}
}

/* Every length across the padding boundaries (55, 56, 63, 64, 119, 120, ...) vs libhashkit. */
static void test_md5_all_lengths_vs_libhashkit(void **state)
{
	unsigned char buf[1100], mine[16], theirs[16];
	uint64_t s = 1;

	(void)state;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)compat_splitmix64(&s);
	for (size_t len = 0; len <= sizeof(buf); len++) {
		pl_md5(buf, len, mine);
		libhashkit_md5_signature(buf, len, theirs);
		if (memcmp(mine, theirs, 16) != 0)
			fail_msg("MD5 differs from libhashkit at length %zu", len);
	}
}

/* FNV reference vectors (the FNV authors' test suite); twemproxy keeps the low 32 bits. */
static void test_fnv_reference(void **state)
{
	(void)state;
	assert_int_equal(pl_hash_bytes(PL_HASH_FNV1_32, "", 0), 0x811c9dc5);
	assert_int_equal(pl_hash_bytes(PL_HASH_FNV1_32, "a", 1), 0x050c5d7e);
	assert_int_equal(pl_hash_bytes(PL_HASH_FNV1_32, "foobar", 6), 0x31f0b262);
	assert_int_equal(pl_hash_bytes(PL_HASH_FNV1A_32, "a", 1), 0xe40c292c);
	assert_int_equal(pl_hash_bytes(PL_HASH_FNV1A_32, "foobar", 6), 0xbf9cf968);
	/* 64-bit: 0xaf63bd4c8601b7be, 0x340d8765a4dda9c2, 0xaf63dc4c8601ec8c, 0x85944171f73967e8 */
	assert_int_equal(pl_hash_bytes(PL_HASH_FNV1_64, "", 0), 0x84222325);
	assert_int_equal(pl_hash_bytes(PL_HASH_FNV1_64, "a", 1), 0x8601b7be);
	assert_int_equal(pl_hash_bytes(PL_HASH_FNV1_64, "foobar", 6), 0xa4dda9c2);
	assert_int_equal(pl_hash_bytes(PL_HASH_FNV1A_64, "a", 1), 0x8601ec8c);
	assert_int_equal(pl_hash_bytes(PL_HASH_FNV1A_64, "foobar", 6), 0xf73967e8);
}

static void test_crc_check_value(void **state)
{
	(void)state;
	/* The CRC-32 check value of "123456789"; libmemcached's crc32 is its bits 16..30. */
	assert_int_equal(pl_hash_bytes(PL_HASH_CRC32A, "123456789", 9), 0xcbf43926);
	assert_int_equal(pl_hash_bytes(PL_HASH_CRC32, "123456789", 9), (0xcbf43926 >> 16) & 0x7fff);
}

static void test_other_published(void **state)
{
	static const char fox[] = "The quick brown fox jumps over the lazy dog";

	(void)state;
	/* Jenkins one-at-a-time, the values its Wikipedia article gives. */
	assert_int_equal(pl_hash_bytes(PL_HASH_ONE_AT_A_TIME, "a", 1), 0xca2e9442);
	assert_int_equal(pl_hash_bytes(PL_HASH_ONE_AT_A_TIME, fox, strlen(fox)), 0x519e91f5);
	/* XXH3_64bits of the empty input, from xxHash's own sanity table. */
	assert_true(pl_hash_bytes(PL_HASH_XXH3, "", 0) == UINT64_C(0x2d06800538d394c2));
	/* ketama's key hash is MD5's first word, little-endian: md5("a") = 0cc175b9... */
	assert_int_equal(pl_ketama_key_hash("a", 1), 0xb975c10c);
	assert_int_equal(pl_hash_bytes(PL_HASH_MD5, "a", 1), 0xb975c10c);
}

typedef uint32_t (*lhk_fn)(const char *key, size_t len);

struct lhk_pair {
	enum pl_hash ours;
	lhk_fn theirs;
	hashkit_hash_algorithm_t algo;
};

/* twemproxy's hashes against libhashkit's, over keys with and without bytes >= 0x80. */
static void test_vs_libhashkit(void **state)
{
	const struct lhk_pair pairs[] = {
		{PL_HASH_MD5, libhashkit_md5, HASHKIT_HASH_MD5},
		{PL_HASH_FNV1A_64, libhashkit_fnv1a_64, HASHKIT_HASH_FNV1A_64},
		{PL_HASH_FNV1_64, libhashkit_fnv1_64, HASHKIT_HASH_FNV1_64},
		{PL_HASH_FNV1A_32, libhashkit_fnv1a_32, HASHKIT_HASH_FNV1A_32},
		{PL_HASH_FNV1_32, libhashkit_fnv1_32, HASHKIT_HASH_FNV1_32},
		{PL_HASH_ONE_AT_A_TIME, libhashkit_one_at_a_time, HASHKIT_HASH_DEFAULT},
		{PL_HASH_CRC32, libhashkit_crc32, HASHKIT_HASH_CRC},
		{PL_HASH_HSIEH, libhashkit_hsieh, HASHKIT_HASH_HSIEH},
		{PL_HASH_MURMUR, libhashkit_murmur, HASHKIT_HASH_MURMUR},
		{PL_HASH_JENKINS, libhashkit_jenkins, HASHKIT_HASH_JENKINS},
	};
	char key[256 + 8];
	uint64_t compared = 0;

	(void)state;
	for (size_t a = 0; a < sizeof(pairs) / sizeof(pairs[0]); a++) {
		/*
		 * A libhashkit built without an algorithm returns 0 for it: no reference there.
		 * Debian's is built without hsieh; nutcracker has it, and the live nutcracker
		 * test (compat_nutcracker.py) checks it end to end.
		 */
		if (!libhashkit_has_algorithm(pairs[a].algo)) {
			assert_int_equal(pairs[a].ours, PL_HASH_HSIEH);
			print_message("# libhashkit lacks %s: checked against nutcracker only\n",
				      pl_hash_name(pairs[a].ours));
			continue;
		}
		for (uint64_t i = 0; i < 60000; i++) {
			size_t len = compat_key(i, key + (i & 7)); /* vary alignment (jenkins) */
			const char *k = key + (i & 7);
			uint64_t mine = pl_hash_bytes(pairs[a].ours, k, len);
			uint32_t theirs = pairs[a].theirs(k, len);

			if (mine != theirs)
				fail_msg(
					"%s differs on key %llu (len %zu): ours %08llx, libhashkit "
					"%08x",
					pl_hash_name(pairs[a].ours), (unsigned long long)i, len,
					(unsigned long long)mine, theirs);
			compared++;
		}
		/* Empty and short keys: the tail cases of every block hash. */
		for (size_t len = 0; len <= 13; len++) {
			memcpy(key,
			       "\x80\xff"
			       "abcdefghijklmn",
			       16);
			assert_true(pl_hash_bytes(pairs[a].ours, key, len) ==
				    pairs[a].theirs(key, len));
		}
	}
	print_message("# %llu hashes equal to libhashkit's\n", (unsigned long long)compared);
}

/* crc32a is the whole CRC-32 whose bits 16..30 libhashkit's crc32 returns. */
static void test_crc32a_vs_libhashkit(void **state)
{
	char key[256];

	(void)state;
	for (uint64_t i = 0; i < 60000; i++) {
		size_t len = compat_key(i, key);
		uint64_t full = pl_hash_bytes(PL_HASH_CRC32A, key, len);

		assert_int_equal((full >> 16) & 0x7fff, libhashkit_crc32(key, len));
	}
}

/* All 32-bit recipes' values fit in 32 bits (zero-extended into the uint64_t). */
static void test_widths(void **state)
{
	char key[256];

	(void)state;
	for (int h = 0; h < PL_HASH_COUNT; h++) {
		uint64_t any_high = 0;

		for (uint64_t i = 0; i < 2000; i++) {
			size_t len = compat_key(i, key);

			any_high |= pl_hash_bytes((enum pl_hash)h, key, len) >> 32;
		}
		if (h == PL_HASH_XXH3)
			assert_true(any_high != 0);
		else
			assert_true(any_high == 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_md5_rfc1321),
		cmocka_unit_test(test_md5_all_lengths_vs_libhashkit),
		cmocka_unit_test(test_fnv_reference),
		cmocka_unit_test(test_crc_check_value),
		cmocka_unit_test(test_other_published),
		cmocka_unit_test(test_vs_libhashkit),
		cmocka_unit_test(test_crc32a_vs_libhashkit),
		cmocka_unit_test(test_widths),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
