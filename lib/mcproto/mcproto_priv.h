/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared between the parser files of lib/mcproto; not installed, not for callers. */
#ifndef RINGWAY_MCPROTO_PRIV_H
#define RINGWAY_MCPROTO_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "mcproto.h"

#define MC_BIN_REQ_MAGIC 0x80
#define MC_BIN_RES_MAGIC 0x81

/* Kind of each command, from MC_FOREACH_CMD. */
extern const uint8_t mc_cmd_kind[MC_CMD_COUNT];

static inline uint16_t mc_rd16(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

static inline uint32_t mc_rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void mc_wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void mc_wr32(uint8_t *p, uint32_t v)
{
	mc_wr16(p, (uint16_t)(v >> 16));
	mc_wr16(p + 2, (uint16_t)v);
}

/*
 * Parse one binary request at @p pos of [p, p + len) into out->req[out->nreq] and its key;
 * on success count it and set *next past its body. Offsets are relative to @p p.
 */
enum mc_err mc_parse_binary(const uint8_t *p, uint32_t len, uint32_t pos, struct mc_requests *out,
			    uint32_t *next);

/*
 * mc_parse_binary() for the commonest binary datagram: one GET, GETQ, GETK or GETKQ at @p pos
 * whose body ends at @p len. True with @p out (empty before) as mc_parse_requests() leaves it
 * for such a buffer (proto, one request, its key); false, nreq and nkeys untouched, for
 * anything else (mc_parse_binary() decides).
 */
bool mc_parse_binary_get(const uint8_t *p, uint32_t len, uint32_t pos, struct mc_requests *out);

#endif /* RINGWAY_MCPROTO_PRIV_H */
