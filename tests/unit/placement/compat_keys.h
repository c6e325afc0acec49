/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_TEST_COMPAT_KEYS_H
#define RINGWAY_TEST_COMPAT_KEYS_H

/*
 * Deterministic key corpus for the compatibility tests: a third "user:N" keys, a third random
 * printable keys of 1..64 bytes, a third random keys of 1..250 bytes that may hold bytes
 * >= 0x80 (legal memcached key bytes: no controls, no space). Header-only so the tests and the
 * golden-vector generators draw the same keys.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

static inline uint64_t compat_splitmix64(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Writes key number @p i to @p buf (at least 251 bytes); returns its length. */
static inline size_t compat_key(uint64_t i, char *buf)
{
	uint64_t s = i * 7919 + 17;
	size_t len;

	switch (i % 3) {
	case 0:
		return (size_t)snprintf(buf, 251, "user:%llu", (unsigned long long)i);
	case 1:
		len = 1 + compat_splitmix64(&s) % 64;
		for (size_t k = 0; k < len; k++)
			buf[k] = (char)(0x21 + compat_splitmix64(&s) % (0x7f - 0x21));
		break;
	default:
		len = 1 + compat_splitmix64(&s) % 250;
		for (size_t k = 0; k < len; k++) {
			/* 0x21..0x7e and 0x80..0xff */
			unsigned int b = 0x21 + (unsigned int)(compat_splitmix64(&s) %
							       (0x7e - 0x21 + 1 + 128));

			buf[k] = (char)(b <= 0x7e ? b : b + 1);
		}
		break;
	}
	buf[len] = '\0';
	return len;
}

#endif /* RINGWAY_TEST_COMPAT_KEYS_H */
