/* SPDX-License-Identifier: BSD-3-Clause */
/* Request parsing: frame header, keys, names. */
#include "mcproto.h"

static const char *const err_names[MC_E_COUNT] = {
	[MC_OK] = "ok",
#define MC_ERR_NAME(e, s) [MC_E_##e] = s,
	MC_FOREACH_ERROR(MC_ERR_NAME)
#undef MC_ERR_NAME
};

static const char *const cmd_names[MC_CMD_COUNT] = {
#define MC_CMD_NAME(e, s, k) [MC_CMD_##e] = s,
	MC_FOREACH_CMD(MC_CMD_NAME)
#undef MC_CMD_NAME
};

static const char *const kind_names[MC_KIND_COUNT] = {
#define MC_KIND_NAME(e, s) [MC_KIND_##e] = s,
	MC_FOREACH_KIND(MC_KIND_NAME)
#undef MC_KIND_NAME
};

const char *mc_err_name(enum mc_err err)
{
	return (unsigned)err < MC_E_COUNT ? err_names[err] : "unknown";
}

const char *mc_cmd_name(enum mc_cmd cmd)
{
	return (unsigned)cmd < MC_CMD_COUNT ? cmd_names[cmd] : "unknown";
}

const char *mc_kind_name(enum mc_kind kind)
{
	return (unsigned)kind < MC_KIND_COUNT ? kind_names[kind] : "unknown";
}

/* Parsers land in the next commits; until then every request is refused. */
enum mc_err mc_parse_requests(const uint8_t *p, size_t len, struct mc_requests *out)
{
	(void)p;
	(void)len;
	out->err_off = 0;
	return MC_E_UNKNOWN_COMMAND;
}

static inline uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

enum mc_err mc_frame_parse(const uint8_t *p, size_t len, struct mc_frame *f)
{
	if (len < MC_FRAME_HDR_LEN)
		return MC_E_FRAME_SHORT;
	f->request_id = rd16(p);
	f->seq = rd16(p + 2);
	f->total = rd16(p + 4);
	f->reserved = rd16(p + 6);
	return MC_OK;
}

static inline void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

void mc_frame_write(uint8_t *p, const struct mc_frame *f)
{
	wr16(p, f->request_id);
	wr16(p + 2, f->seq);
	wr16(p + 4, f->total);
	wr16(p + 6, f->reserved);
}

enum mc_err mc_key_check(const uint8_t *k, size_t len)
{
	if (len == 0)
		return MC_E_KEY_MISSING;
	if (len > MC_KEY_MAX)
		return MC_E_KEY_TOO_LONG;
	for (size_t i = 0; i < len; i++)
		if (k[i] <= 0x20 || k[i] == 0x7f)
			return MC_E_KEY_BAD_CHAR;
	return MC_OK;
}

enum mc_err mc_parse_datagram(const uint8_t *p, size_t len, struct mc_requests *out)
{
	(void)p;
	(void)len;
	out->err_off = 0;
	return MC_E_UNKNOWN_COMMAND;
}

size_t mc_key_decode(const uint8_t *p, const struct mc_key *k, uint8_t out[MC_KEY_MAX])
{
	(void)p;
	(void)k;
	(void)out;
	return 0;
}
