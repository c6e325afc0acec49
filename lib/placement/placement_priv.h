/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_PLACEMENT_PRIV_H
#define RINGWAY_PLACEMENT_PRIV_H

/*
 * Contract between the placement core (placement.c: continuum, index, walks, shares) and the
 * compatibility recipes (compat.c: libmemcached ketama, nutcracker ketama, their key hashes).
 */

#include <stddef.h>
#include <stdint.h>

#include "placement.h"

/* One point on a continuum: the hash value and the member that owns the arc ending there. */
struct pl_point {
	uint64_t value;
	uint32_t member;
};

/*
 * Continuum lookup rule, shared by every continuum algorithm: the owner of hash h is the
 * member of the first point (in array order) whose value is >= h, wrapping to point 0 when
 * h is above the last point. The core sorts the recipe's points with a *stable* sort by
 * value, so among equal values the recipe's emission order decides. A recipe whose real
 * lookup picks a different point among equal values must emit (or keep) the one the real
 * library would pick first, so that the rule above gives the library's answer.
 *
 * Recipe point generators: fill *out (malloc'd, caller frees) with every point of the
 * members with weight > 0, in emission order; *count is the number of points.
 * Return 0 or a negative errno (-ENOMEM, -EINVAL).
 */
int pl_ketama_points(const struct pl_member *members, uint32_t n, struct pl_point **out,
		     size_t *count);
int pl_twemproxy_points(const struct pl_member *members, uint32_t n, struct pl_point **out,
			size_t *count);

/*
 * Key hash of a recipe, as the real library computes it, widened to uint64_t
 * (32-bit hashes in the low bits). PL_HASH_XXH3 gives XXH3_64bits.
 * For PL_ALGO_KETAMA the key hash is libmemcached's ketama MD5 (first 4 digest bytes,
 * little-endian); use pl_ketama_key_hash for that.
 */
uint64_t pl_hash_bytes(enum pl_hash h, const void *key, size_t len);
uint64_t pl_ketama_key_hash(const void *key, size_t len);

/* MD5 of a buffer (RFC 1321), for the ketama recipes. */
void pl_md5(const void *data, size_t len, uint8_t digest[16]);

#endif /* RINGWAY_PLACEMENT_PRIV_H */
