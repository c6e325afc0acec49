/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Compatibility recipes: key placement exactly as libmemcached's weighted ketama and as
 * nutcracker's (twemproxy's) `distribution: ketama` compute it, and the key hashes those
 * peers offer. Every detail here is there because a peer does it that way; the tests in
 * tests/unit/placement/test_compat_*.c compare against the real peers, not against us.
 *
 * Peer facts this file relies on (libmemcached 1.1.4 hosts.cc update_continuum, twemproxy
 * 0.5.0 src/hashkit/nc_ketama.c ketama_update):
 *  - points per server = floor(weight/total * 160/4 * live_servers + 1e-10) * 4, computed
 *    in single precision (pct is a float); 4 points from each MD5 digest of "<host>-<i>",
 *    i counting from 0, each point the little-endian 32-bit word j (j = 0..3) of the digest;
 *  - libmemcached's host string is "<host>-<i>" when the port is 11211, else
 *    "<host>:<port>-<i>"; nutcracker's is "<name>-<i>", where the name is the one given in the
 *    servers list or, without one, "<host>" for port 11211 and "<host>:<port>" otherwise;
 *  - both look a key up with a lower-bound binary search (first point >= hash, wrapping);
 *  - among equal point values, libmemcached's qsort comparator orders by server index and
 *    nutcracker's glibc qsort (a stable merge sort) keeps emission order: in both cases the
 *    point emitted first, from the lowest server index, comes first. Emitting in server order
 *    and letting the core sort stably therefore reproduces both.
 *  - twemproxy hashes keys through plain `char`, which is signed on x86-64: in its fnv,
 *    one_at_a_time and hsieh hashes a byte >= 0x80 enters sign-extended. We reproduce the
 *    x86-64 build (the Debian amd64 package); hashes of ASCII keys are unaffected.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "placement_priv.h"

/* ---- MD5 (RFC 1321) ---------------------------------------------------------------- */

struct md5_state {
	uint32_t h[4];
};

/* K[i] = floor(|sin(i + 1)| * 2^32), RFC 1321 section 3.4. */
/* clang-format off */
static const uint32_t md5_k[64] = {
	0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee,
	0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
	0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be,
	0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
	0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa,
	0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
	0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
	0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
	0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c,
	0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
	0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05,
	0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
	0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039,
	0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
	0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1,
	0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};
/* clang-format on */

/* Left-rotation amounts per round and step (RFC 1321 section 3.4). */
static const uint8_t md5_s[4][4] = {
	{7, 12, 17, 22},
	{5, 9, 14, 20},
	{4, 11, 16, 23},
	{6, 10, 15, 21},
};

static inline uint32_t rotl32(uint32_t x, unsigned int r)
{
	return (x << r) | (x >> ((32 - r) & 31));
}

static inline uint32_t load_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void md5_block(struct md5_state *st, const uint8_t block[64])
{
	uint32_t x[16];
	uint32_t a = st->h[0], b = st->h[1], c = st->h[2], d = st->h[3];

	for (int i = 0; i < 16; i++)
		x[i] = load_le32(block + 4 * i);
	for (unsigned int i = 0; i < 64; i++) {
		unsigned int round = i / 16, g;
		uint32_t f, t;

		switch (round) {
		case 0:
			f = (b & c) | (~b & d);
			g = i;
			break;
		case 1:
			f = (b & d) | (c & ~d);
			g = (5 * i + 1) & 15;
			break;
		case 2:
			f = b ^ c ^ d;
			g = (3 * i + 5) & 15;
			break;
		default:
			f = c ^ (b | ~d);
			g = (7 * i) & 15;
			break;
		}
		t = d;
		d = c;
		c = b;
		b = b + rotl32(a + f + md5_k[i] + x[g], md5_s[round][i & 3]);
		a = t;
	}
	st->h[0] += a;
	st->h[1] += b;
	st->h[2] += c;
	st->h[3] += d;
}

void pl_md5(const void *data, size_t len, uint8_t digest[16])
{
	struct md5_state st = {{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476}};
	const uint8_t *p = data;
	uint8_t tail[128];
	size_t rest = len % 64, pad;
	uint64_t bits = (uint64_t)len * 8;

	for (size_t off = 0; off + 64 <= len; off += 64)
		md5_block(&st, p + off);
	/* Padding: 0x80, zeros up to 56 mod 64, then the bit length, little-endian. */
	memset(tail, 0, sizeof(tail));
	if (rest)
		memcpy(tail, p + (len - rest), rest);
	tail[rest] = 0x80;
	pad = rest < 56 ? 64 : 128;
	for (int i = 0; i < 8; i++)
		tail[pad - 8 + i] = (uint8_t)(bits >> (8 * i));
	md5_block(&st, tail);
	if (pad == 128)
		md5_block(&st, tail + 64);
	for (int i = 0; i < 4; i++) {
		digest[4 * i] = (uint8_t)st.h[i];
		digest[4 * i + 1] = (uint8_t)(st.h[i] >> 8);
		digest[4 * i + 2] = (uint8_t)(st.h[i] >> 16);
		digest[4 * i + 3] = (uint8_t)(st.h[i] >> 24);
	}
}

/* ---- Key hashes, as twemproxy (and libhashkit) compute them -------------------------- */

/* A key byte read through x86-64's signed `char` and widened, as twemproxy does. */
static inline uint32_t sext8(uint8_t b)
{
	return b & 0x80 ? (uint32_t)b | 0xffffff00u : (uint32_t)b;
}

#define FNV_64_INIT  UINT64_C(0xcbf29ce484222325)
#define FNV_64_PRIME UINT64_C(0x100000001b3)
#define FNV_32_INIT  UINT32_C(2166136261)
#define FNV_32_PRIME UINT32_C(16777619)

/*
 * twemproxy's "64-bit" FNV hashes return the low 32 bits. The low 32 bits of a 64-bit
 * product depend only on the low 32 bits of its factors, so 32-bit arithmetic with the
 * truncated offset basis and prime gives them exactly (fnv1a_64 is written that way there).
 */
static uint32_t hash_fnv1_64(const uint8_t *p, size_t len)
{
	uint32_t h = (uint32_t)FNV_64_INIT;

	for (size_t i = 0; i < len; i++) {
		h *= (uint32_t)FNV_64_PRIME;
		h ^= sext8(p[i]);
	}
	return h;
}

static uint32_t hash_fnv1a_64(const uint8_t *p, size_t len)
{
	uint32_t h = (uint32_t)FNV_64_INIT;

	for (size_t i = 0; i < len; i++) {
		h ^= sext8(p[i]);
		h *= (uint32_t)FNV_64_PRIME;
	}
	return h;
}

static uint32_t hash_fnv1_32(const uint8_t *p, size_t len)
{
	uint32_t h = FNV_32_INIT;

	for (size_t i = 0; i < len; i++) {
		h *= FNV_32_PRIME;
		h ^= sext8(p[i]);
	}
	return h;
}

static uint32_t hash_fnv1a_32(const uint8_t *p, size_t len)
{
	uint32_t h = FNV_32_INIT;

	for (size_t i = 0; i < len; i++) {
		h ^= sext8(p[i]);
		h *= FNV_32_PRIME;
	}
	return h;
}

/* Jenkins' one-at-a-time hash. */
static uint32_t hash_one_at_a_time(const uint8_t *p, size_t len)
{
	uint32_t h = 0;

	for (size_t i = 0; i < len; i++) {
		h += sext8(p[i]);
		h += h << 10;
		h ^= h >> 6;
	}
	h += h << 3;
	h ^= h >> 11;
	h += h << 15;
	return h;
}

/* Reflected CRC-32 (polynomial 0xEDB88320) table. */
/* clang-format off */
static const uint32_t crc32_table[256] = {
	0x00000000, 0x77073096, 0xee0e612c, 0x990951ba, 0x076dc419, 0x706af48f,
	0xe963a535, 0x9e6495a3, 0x0edb8832, 0x79dcb8a4, 0xe0d5e91e, 0x97d2d988,
	0x09b64c2b, 0x7eb17cbd, 0xe7b82d07, 0x90bf1d91, 0x1db71064, 0x6ab020f2,
	0xf3b97148, 0x84be41de, 0x1adad47d, 0x6ddde4eb, 0xf4d4b551, 0x83d385c7,
	0x136c9856, 0x646ba8c0, 0xfd62f97a, 0x8a65c9ec, 0x14015c4f, 0x63066cd9,
	0xfa0f3d63, 0x8d080df5, 0x3b6e20c8, 0x4c69105e, 0xd56041e4, 0xa2677172,
	0x3c03e4d1, 0x4b04d447, 0xd20d85fd, 0xa50ab56b, 0x35b5a8fa, 0x42b2986c,
	0xdbbbc9d6, 0xacbcf940, 0x32d86ce3, 0x45df5c75, 0xdcd60dcf, 0xabd13d59,
	0x26d930ac, 0x51de003a, 0xc8d75180, 0xbfd06116, 0x21b4f4b5, 0x56b3c423,
	0xcfba9599, 0xb8bda50f, 0x2802b89e, 0x5f058808, 0xc60cd9b2, 0xb10be924,
	0x2f6f7c87, 0x58684c11, 0xc1611dab, 0xb6662d3d, 0x76dc4190, 0x01db7106,
	0x98d220bc, 0xefd5102a, 0x71b18589, 0x06b6b51f, 0x9fbfe4a5, 0xe8b8d433,
	0x7807c9a2, 0x0f00f934, 0x9609a88e, 0xe10e9818, 0x7f6a0dbb, 0x086d3d2d,
	0x91646c97, 0xe6635c01, 0x6b6b51f4, 0x1c6c6162, 0x856530d8, 0xf262004e,
	0x6c0695ed, 0x1b01a57b, 0x8208f4c1, 0xf50fc457, 0x65b0d9c6, 0x12b7e950,
	0x8bbeb8ea, 0xfcb9887c, 0x62dd1ddf, 0x15da2d49, 0x8cd37cf3, 0xfbd44c65,
	0x4db26158, 0x3ab551ce, 0xa3bc0074, 0xd4bb30e2, 0x4adfa541, 0x3dd895d7,
	0xa4d1c46d, 0xd3d6f4fb, 0x4369e96a, 0x346ed9fc, 0xad678846, 0xda60b8d0,
	0x44042d73, 0x33031de5, 0xaa0a4c5f, 0xdd0d7cc9, 0x5005713c, 0x270241aa,
	0xbe0b1010, 0xc90c2086, 0x5768b525, 0x206f85b3, 0xb966d409, 0xce61e49f,
	0x5edef90e, 0x29d9c998, 0xb0d09822, 0xc7d7a8b4, 0x59b33d17, 0x2eb40d81,
	0xb7bd5c3b, 0xc0ba6cad, 0xedb88320, 0x9abfb3b6, 0x03b6e20c, 0x74b1d29a,
	0xead54739, 0x9dd277af, 0x04db2615, 0x73dc1683, 0xe3630b12, 0x94643b84,
	0x0d6d6a3e, 0x7a6a5aa8, 0xe40ecf0b, 0x9309ff9d, 0x0a00ae27, 0x7d079eb1,
	0xf00f9344, 0x8708a3d2, 0x1e01f268, 0x6906c2fe, 0xf762575d, 0x806567cb,
	0x196c3671, 0x6e6b06e7, 0xfed41b76, 0x89d32be0, 0x10da7a5a, 0x67dd4acc,
	0xf9b9df6f, 0x8ebeeff9, 0x17b7be43, 0x60b08ed5, 0xd6d6a3e8, 0xa1d1937e,
	0x38d8c2c4, 0x4fdff252, 0xd1bb67f1, 0xa6bc5767, 0x3fb506dd, 0x48b2364b,
	0xd80d2bda, 0xaf0a1b4c, 0x36034af6, 0x41047a60, 0xdf60efc3, 0xa867df55,
	0x316e8eef, 0x4669be79, 0xcb61b38c, 0xbc66831a, 0x256fd2a0, 0x5268e236,
	0xcc0c7795, 0xbb0b4703, 0x220216b9, 0x5505262f, 0xc5ba3bbe, 0xb2bd0b28,
	0x2bb45a92, 0x5cb36a04, 0xc2d7ffa7, 0xb5d0cf31, 0x2cd99e8b, 0x5bdeae1d,
	0x9b64c2b0, 0xec63f226, 0x756aa39c, 0x026d930a, 0x9c0906a9, 0xeb0e363f,
	0x72076785, 0x05005713, 0x95bf4a82, 0xe2b87a14, 0x7bb12bae, 0x0cb61b38,
	0x92d28e9b, 0xe5d5be0d, 0x7cdcefb7, 0x0bdbdf21, 0x86d3d2d4, 0xf1d4e242,
	0x68ddb3f8, 0x1fda836e, 0x81be16cd, 0xf6b9265b, 0x6fb077e1, 0x18b74777,
	0x88085ae6, 0xff0f6a70, 0x66063bca, 0x11010b5c, 0x8f659eff, 0xf862ae69,
	0x616bffd3, 0x166ccf45, 0xa00ae278, 0xd70dd2ee, 0x4e048354, 0x3903b3c2,
	0xa7672661, 0xd06016f7, 0x4969474d, 0x3e6e77db, 0xaed16a4a, 0xd9d65adc,
	0x40df0b66, 0x37d83bf0, 0xa9bcae53, 0xdebb9ec5, 0x47b2cf7f, 0x30b5ffe9,
	0xbdbdf21c, 0xcabac28a, 0x53b39330, 0x24b4a3a6, 0xbad03605, 0xcdd70693,
	0x54de5729, 0x23d967bf, 0xb3667a2e, 0xc4614ab8, 0x5d681b02, 0x2a6f2b94,
	0xb40bbe37, 0xc30c8ea1, 0x5a05df1b, 0x2d02ef8d,
};
/* clang-format on */

static uint32_t crc32_update(const uint8_t *p, size_t len)
{
	uint32_t crc = UINT32_MAX;

	for (size_t i = 0; i < len; i++)
		crc = (crc >> 8) ^ crc32_table[(crc ^ p[i]) & 0xff];
	return ~crc;
}

/* libmemcached's "crc32": bits 16..30 of the CRC-32, not the CRC itself (twemproxy copies it). */
static uint32_t hash_crc32(const uint8_t *p, size_t len)
{
	return (crc32_update(p, len) >> 16) & 0x7fff;
}

/* The standard CRC-32 (twemproxy's crc32a). */
static uint32_t hash_crc32a(const uint8_t *p, size_t len)
{
	return crc32_update(p, len);
}

static inline uint32_t load_le16(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

/* Paul Hsieh's SuperFastHash; the third byte of a 3-byte tail enters sign-extended. */
static uint32_t hash_hsieh(const uint8_t *p, size_t len)
{
	uint32_t h = 0;

	if (len == 0)
		return 0;
	for (size_t blocks = len / 4; blocks > 0; blocks--, p += 4) {
		h += load_le16(p);
		h = (h << 16) ^ ((load_le16(p + 2) << 11) ^ h);
		h += h >> 11;
	}
	switch (len & 3) {
	case 3:
		h += load_le16(p);
		h ^= h << 16;
		h ^= sext8(p[2]) << 18;
		h += h >> 11;
		break;
	case 2:
		h += load_le16(p);
		h ^= h << 11;
		h += h >> 17;
		break;
	case 1:
		h += p[0];
		h ^= h << 10;
		h += h >> 1;
		break;
	default:
		break;
	}
	h ^= h << 3;
	h += h >> 5;
	h ^= h << 4;
	h += h >> 17;
	h ^= h << 25;
	h += h >> 6;
	return h;
}

/* MurmurHash2 with libmemcached's seed (0xdeadbeef * length). */
static uint32_t hash_murmur(const uint8_t *p, size_t len)
{
	const uint32_t m = 0x5bd1e995;
	uint32_t h = (UINT32_C(0xdeadbeef) * (uint32_t)len) ^ (uint32_t)len;

	for (; len >= 4; len -= 4, p += 4) {
		uint32_t k = load_le32(p);

		k *= m;
		k ^= k >> 24;
		k *= m;
		h *= m;
		h ^= k;
	}
	if (len > 0) {
		if (len == 3)
			h ^= (uint32_t)p[2] << 16;
		if (len >= 2)
			h ^= (uint32_t)p[1] << 8;
		h ^= p[0];
		h *= m;
	}
	h ^= h >> 13;
	h *= m;
	h ^= h >> 15;
	return h;
}

/* lookup3's mix(): reversible mixing of three 32-bit words. */
static inline void jenkins_mix(uint32_t *a, uint32_t *b, uint32_t *c)
{
	*a -= *c;
	*a ^= rotl32(*c, 4);
	*c += *b;
	*b -= *a;
	*b ^= rotl32(*a, 6);
	*a += *c;
	*c -= *b;
	*c ^= rotl32(*b, 8);
	*b += *a;
	*a -= *c;
	*a ^= rotl32(*c, 16);
	*c += *b;
	*b -= *a;
	*b ^= rotl32(*a, 19);
	*a += *c;
	*c -= *b;
	*c ^= rotl32(*b, 4);
	*b += *a;
}

/* lookup3's final(): final mixing of three 32-bit words into c. */
static inline void jenkins_final(uint32_t *a, uint32_t *b, uint32_t *c)
{
	*c ^= *b;
	*c -= rotl32(*b, 14);
	*a ^= *c;
	*a -= rotl32(*c, 11);
	*b ^= *a;
	*b -= rotl32(*a, 25);
	*c ^= *b;
	*c -= rotl32(*b, 16);
	*a ^= *c;
	*a -= rotl32(*c, 4);
	*b ^= *a;
	*b -= rotl32(*a, 14);
	*c ^= *b;
	*c -= rotl32(*b, 24);
}

/* Little-endian word of up to 4 bytes, missing bytes zero. */
static inline uint32_t load_le_partial(const uint8_t *p, size_t n)
{
	uint32_t v = 0;

	for (size_t i = 0; i < n && i < 4; i++)
		v |= (uint32_t)p[i] << (8 * i);
	return v;
}

/* Bob Jenkins' lookup3 hashlittle() with initval 13, as libmemcached seeds it. */
static uint32_t hash_jenkins(const uint8_t *p, size_t len)
{
	uint32_t a, b, c;

	a = b = c = UINT32_C(0xdeadbeef) + (uint32_t)len + 13;
	for (; len > 12; len -= 12, p += 12) {
		a += load_le32(p);
		b += load_le32(p + 4);
		c += load_le32(p + 8);
		jenkins_mix(&a, &b, &c);
	}
	if (len == 0)
		return c;
	a += load_le_partial(p, len);
	if (len > 4)
		b += load_le_partial(p + 4, len - 4);
	if (len > 8)
		c += load_le_partial(p + 8, len - 8);
	jenkins_final(&a, &b, &c);
	return c;
}

/* First four digest bytes, little-endian: twemproxy's hash_md5 and libhashkit's md5. */
static uint32_t hash_md5(const uint8_t *p, size_t len)
{
	uint8_t d[16];

	pl_md5(p, len, d);
	return load_le32(d);
}

uint64_t pl_hash_bytes(enum pl_hash h, const void *key, size_t len)
{
	const uint8_t *p = key;

	switch (h) {
	case PL_HASH_XXH3:
		return XXH3_64bits(key, len);
	case PL_HASH_MD5:
		return hash_md5(p, len);
	case PL_HASH_FNV1A_64:
		return hash_fnv1a_64(p, len);
	case PL_HASH_FNV1_64:
		return hash_fnv1_64(p, len);
	case PL_HASH_FNV1A_32:
		return hash_fnv1a_32(p, len);
	case PL_HASH_FNV1_32:
		return hash_fnv1_32(p, len);
	case PL_HASH_ONE_AT_A_TIME:
		return hash_one_at_a_time(p, len);
	case PL_HASH_CRC32:
		return hash_crc32(p, len);
	case PL_HASH_CRC32A:
		return hash_crc32a(p, len);
	case PL_HASH_HSIEH:
		return hash_hsieh(p, len);
	case PL_HASH_MURMUR:
		return hash_murmur(p, len);
	case PL_HASH_JENKINS:
		return hash_jenkins(p, len);
	case PL_HASH_COUNT:
		break;
	}
	return 0;
}

uint64_t pl_ketama_key_hash(const void *key, size_t len)
{
	return hash_md5(key, len);
}

/* ---- Continuum points ---------------------------------------------------------------- */

#define KETAMA_POINTS_PER_SERVER 160
#define KETAMA_POINTS_PER_HASH	 4
#define MEMCACHED_DEFAULT_PORT	 11211

/*
 * libmemcached: pct = (float)weight / (float)total;
 * points = floor((float)(pct * 160 / 4 * (float)live + 0.0000000001F)) * 4, all in float.
 * The volatile intermediates keep every step a rounded float: no excess precision and no
 * fused multiply-add, whatever the target, as in the peer's baseline x86-64 build.
 */
static uint32_t ketama_points_libmemcached(uint32_t weight, uint64_t total, uint32_t live)
{
	volatile float pct = (float)weight / (float)total;
	volatile float x = pct * KETAMA_POINTS_PER_SERVER;

	x = x / 4;
	x = x * (float)live;
	x = x + 0.0000000001F;
	return (uint32_t)(floorf(x) * 4);
}

/*
 * nutcracker: the same, but the 1e-10 is a double constant, so the last addition happens in
 * double before the cast back to float; and its total weight is a uint32_t.
 */
static uint32_t ketama_points_twemproxy(uint32_t weight, uint32_t total, uint32_t live)
{
	volatile float pct = (float)weight / (float)total;
	volatile float x = pct * KETAMA_POINTS_PER_SERVER;
	volatile double y;

	x = x / 4;
	x = x * (float)live;
	y = (double)x + 0.0000000001;
	x = (float)y;
	return (uint32_t)(floorf(x) * 4);
}

/* Append the 4 points of one digest of @p host to @p pts. */
static void ketama_digest_points(const char *host, size_t len, uint32_t member,
				 struct pl_point *pts, size_t *at)
{
	uint8_t d[16];

	pl_md5(host, len, d);
	for (int j = 0; j < KETAMA_POINTS_PER_HASH; j++) {
		pts[*at].value = load_le32(d + 4 * j);
		pts[*at].member = member;
		(*at)++;
	}
}

enum ketama_flavour {
	KETAMA_LIBMEMCACHED,
	KETAMA_TWEMPROXY,
};

/* The string hashed for point group @p i of member @p m. */
static int ketama_host(enum ketama_flavour fl, const struct pl_member *m, uint32_t i, char *buf,
		       size_t size)
{
	if (fl == KETAMA_TWEMPROXY)
		return snprintf(buf, size, "%s-%u", m->name, i);
	if (m->port == MEMCACHED_DEFAULT_PORT)
		return snprintf(buf, size, "%s-%u", m->addr, i);
	return snprintf(buf, size, "%s:%u-%u", m->addr, (unsigned int)m->port, i);
}

static int ketama_points(enum ketama_flavour fl, const struct pl_member *members, uint32_t n,
			 struct pl_point **out, size_t *count)
{
	uint64_t total = 0;
	uint32_t total32 = 0, live = 0;
	uint32_t *per = NULL;
	size_t npoints = 0, at = 0;
	struct pl_point *pts = NULL;
	char host[PL_ADDR_MAX + PL_NAME_MAX + 32];
	int rc = 0;

	*out = NULL;
	*count = 0;
	if (members == NULL && n > 0)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		if (members[i].weight == 0)
			continue;
		live++;
		total += members[i].weight;
		total32 += members[i].weight;
	}
	if (live == 0)
		return 0;
	per = calloc(n, sizeof(*per));
	if (per == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		if (members[i].weight == 0)
			continue;
		per[i] = fl == KETAMA_TWEMPROXY
				 ? ketama_points_twemproxy(members[i].weight, total32, live)
				 : ketama_points_libmemcached(members[i].weight, total, live);
		npoints += per[i];
	}
	if (npoints == 0)
		goto out;
	pts = malloc(npoints * sizeof(*pts));
	if (pts == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		for (uint32_t g = 0; g < per[i] / KETAMA_POINTS_PER_HASH; g++) {
			int len = ketama_host(fl, &members[i], g, host, sizeof(host));

			if (len < 0 || (size_t)len >= sizeof(host)) {
				rc = -EINVAL;
				goto out;
			}
			ketama_digest_points(host, (size_t)len, i, pts, &at);
		}
	}
	*out = pts;
	*count = at;
	pts = NULL;
out:
	free(pts);
	free(per);
	return rc;
}

int pl_ketama_points(const struct pl_member *members, uint32_t n, struct pl_point **out,
		     size_t *count)
{
	return ketama_points(KETAMA_LIBMEMCACHED, members, n, out, count);
}

int pl_twemproxy_points(const struct pl_member *members, uint32_t n, struct pl_point **out,
			size_t *count)
{
	return ketama_points(KETAMA_TWEMPROXY, members, n, out, count);
}
