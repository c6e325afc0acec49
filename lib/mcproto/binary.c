/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binary protocol requests: the 24-byte header (magic 0x80), then extras, key and value,
 * whose lengths must agree with the body length, the datagram and the opcode. And the response
 * header (magic 0x81) of the replies the router builds itself.
 */
#include <string.h>

#include "mcproto.h"
#include "mcproto_priv.h"

/* What an opcode carries. */
enum bin_key { KEY_NONE, KEY_REQUIRED, KEY_OPTIONAL, KEY_IGNORED };

struct bin_op {
	uint8_t valid;
	uint8_t cmd;	 /* enum mc_cmd */
	uint8_t extras;	 /* required extras length */
	uint8_t extras2; /* a second allowed extras length (FLUSH: 0 or 4), else = extras */
	uint8_t key;	 /* enum bin_key */
	uint8_t value;	 /* 1: a value may follow */
	uint8_t flags;	 /* MC_REQ_F_QUIET, MC_REQ_F_KEY_IN_REPLY */
};

/* clang-format off */
#define OP(c, ex, ex2, k, v, f) {1, MC_CMD_##c, ex, ex2, KEY_##k, v, f}
/* clang-format on */
#define Q MC_REQ_F_QUIET
#define K MC_REQ_F_KEY_IN_REPLY

/* Indexed by opcode (protocol_binary.h numbering). Unlisted opcodes are refused. */
static const struct bin_op bin_ops[256] = {
	[MC_BIN_GET] = OP(GET, 0, 0, REQUIRED, 0, 0),
	[MC_BIN_GETQ] = OP(GET, 0, 0, REQUIRED, 0, Q),
	[MC_BIN_GETK] = OP(GET, 0, 0, REQUIRED, 0, K),
	[MC_BIN_GETKQ] = OP(GET, 0, 0, REQUIRED, 0, Q | K),
	[MC_BIN_SET] = OP(SET, 8, 8, REQUIRED, 1, 0),
	[MC_BIN_SETQ] = OP(SET, 8, 8, REQUIRED, 1, Q),
	[MC_BIN_ADD] = OP(ADD, 8, 8, REQUIRED, 1, 0),
	[MC_BIN_ADDQ] = OP(ADD, 8, 8, REQUIRED, 1, Q),
	[MC_BIN_REPLACE] = OP(REPLACE, 8, 8, REQUIRED, 1, 0),
	[MC_BIN_REPLACEQ] = OP(REPLACE, 8, 8, REQUIRED, 1, Q),
	[MC_BIN_APPEND] = OP(APPEND, 0, 0, REQUIRED, 1, 0),
	[MC_BIN_APPENDQ] = OP(APPEND, 0, 0, REQUIRED, 1, Q),
	[MC_BIN_PREPEND] = OP(PREPEND, 0, 0, REQUIRED, 1, 0),
	[MC_BIN_PREPENDQ] = OP(PREPEND, 0, 0, REQUIRED, 1, Q),
	[MC_BIN_DELETE] = OP(DELETE, 0, 0, REQUIRED, 0, 0),
	[MC_BIN_DELETEQ] = OP(DELETE, 0, 0, REQUIRED, 0, Q),
	[MC_BIN_INCREMENT] = OP(INCR, 20, 20, REQUIRED, 0, 0),
	[MC_BIN_INCREMENTQ] = OP(INCR, 20, 20, REQUIRED, 0, Q),
	[MC_BIN_DECREMENT] = OP(DECR, 20, 20, REQUIRED, 0, 0),
	[MC_BIN_DECREMENTQ] = OP(DECR, 20, 20, REQUIRED, 0, Q),
	[MC_BIN_TOUCH] = OP(TOUCH, 4, 4, REQUIRED, 0, 0),
	[MC_BIN_GAT] = OP(GAT, 4, 4, REQUIRED, 0, 0),
	[MC_BIN_GATQ] = OP(GAT, 4, 4, REQUIRED, 0, Q),
	[MC_BIN_GATK] = OP(GAT, 4, 4, REQUIRED, 0, K),
	[MC_BIN_GATKQ] = OP(GAT, 4, 4, REQUIRED, 0, Q | K),
	[MC_BIN_QUIT] = OP(QUIT, 0, 0, NONE, 0, 0),
	[MC_BIN_QUITQ] = OP(QUIT, 0, 0, NONE, 0, Q),
	[MC_BIN_FLUSH] = OP(FLUSH_ALL, 0, 4, NONE, 0, 0),
	[MC_BIN_FLUSHQ] = OP(FLUSH_ALL, 0, 4, NONE, 0, Q),
	[MC_BIN_NOOP] = OP(NOOP, 0, 0, NONE, 0, 0),
	[MC_BIN_VERSION] = OP(VERSION, 0, 0, NONE, 0, 0),
	[MC_BIN_STAT] = OP(STATS, 0, 0, IGNORED, 0, 0),
	[MC_BIN_VERBOSITY] = OP(VERBOSITY, 4, 4, NONE, 0, 0),
	[MC_BIN_SASL_LIST_MECHS] = OP(SASL, 0, 0, NONE, 0, 0),
	[MC_BIN_SASL_AUTH] = OP(SASL, 0, 0, IGNORED, 1, 0),
	[MC_BIN_SASL_STEP] = OP(SASL, 0, 0, IGNORED, 1, 0),
};

#undef OP
#undef Q
#undef K

/* Lengths in the header against the opcode's rules and the buffer. */
static enum mc_err bin_lengths(const struct bin_op *op, uint32_t keylen, uint32_t extlen,
			       uint32_t bodylen, uint32_t avail)
{
	if (keylen + extlen > bodylen)
		return MC_E_BIN_BAD_LENGTHS;
	if (bodylen > avail)
		return MC_E_BIN_TRUNCATED_BODY;
	if (extlen != op->extras && extlen != op->extras2)
		return MC_E_BIN_BAD_LENGTHS;
	if (!op->value && bodylen != keylen + extlen)
		return MC_E_BIN_BAD_LENGTHS;
	if (op->key == KEY_REQUIRED && keylen == 0)
		return MC_E_KEY_MISSING;
	if (op->key == KEY_NONE && keylen != 0)
		return MC_E_BIN_BAD_LENGTHS;
	if (op->key == KEY_REQUIRED && keylen > MC_KEY_MAX)
		return MC_E_KEY_TOO_LONG;
	return MC_OK;
}

enum mc_err mc_parse_binary(const uint8_t *p, uint32_t len, uint32_t pos, struct mc_requests *out,
			    uint32_t *next)
{
	const uint8_t *h = p + pos;
	enum mc_err e;

	if (len - pos < MC_BIN_HDR_LEN)
		return MC_E_BIN_TRUNCATED_HEADER;
	if (h[0] != MC_BIN_REQ_MAGIC)
		return MC_E_BIN_BAD_MAGIC;
	const struct bin_op *op = &bin_ops[h[1]];
	if (!op->valid)
		return MC_E_BIN_BAD_OPCODE;
	if (h[5] != 0)
		return MC_E_BIN_BAD_DATATYPE;
	uint32_t keylen = mc_rd16(h + 2), extlen = h[4], bodylen = mc_rd32(h + 8);
	e = bin_lengths(op, keylen, extlen, bodylen, len - pos - MC_BIN_HDR_LEN);
	if (e != MC_OK)
		return e;
	if (out->nreq >= MC_MAX_REQUESTS)
		return MC_E_TOO_MANY_REQUESTS;
	bool has_key = op->key == KEY_REQUIRED;
	if (has_key && out->nkeys >= MC_MAX_KEYS)
		return MC_E_TOO_MANY_KEYS;

	uint32_t key_off = pos + MC_BIN_HDR_LEN + extlen;
	uint32_t val_off = key_off + keylen;
	struct mc_request *r = &out->req[out->nreq];
	*r = (struct mc_request){
		.off = pos,
		.len = MC_BIN_HDR_LEN + bodylen,
		.line_len = val_off - pos,
		.data_off = val_off,
		.data_len = bodylen - extlen - keylen,
		.args_off = pos + MC_BIN_HDR_LEN,
		.args_len = extlen,
		.opaque = mc_rd32(h + 12),
		.proto = MC_PROTO_BINARY,
		.cmd = op->cmd,
		.kind = mc_cmd_kind[op->cmd],
		.flags = (uint8_t)(op->flags | (op->value ? MC_REQ_F_VALUE : 0)),
		.opcode = h[1],
		.key_first = out->nkeys,
		.key_count = has_key ? 1 : 0,
	};
	if (!op->value)
		r->data_off = r->data_len = 0;
	if (has_key)
		out->keys[out->nkeys++] = (struct mc_key){
			.off = key_off,
			.len = (uint16_t)keylen,
			.req = out->nreq,
			.base64 = 0,
		};
	out->nreq++;
	*next = pos + MC_BIN_HDR_LEN + bodylen;
	return MC_OK;
}

bool mc_parse_binary_get(const uint8_t *p, uint32_t len, uint32_t pos, struct mc_requests *out)
{
	const uint8_t *h = p + pos;

	if (len - pos < MC_BIN_HDR_LEN)
		return false;
	const struct bin_op *op = &bin_ops[h[1]];
	/* GET family: no extras, a key of 1..MC_KEY_MAX bytes, no value, so body = key. */
	if (!op->valid || op->cmd != MC_CMD_GET || h[4] != 0 || h[5] != 0)
		return false;
	uint32_t keylen = mc_rd16(h + 2), bodylen = mc_rd32(h + 8);
	if (keylen == 0 || keylen > MC_KEY_MAX || bodylen != keylen ||
	    len - pos - MC_BIN_HDR_LEN != bodylen)
		return false;
	out->req[0] = (struct mc_request){
		.off = pos,
		.len = MC_BIN_HDR_LEN + bodylen,
		.line_len = MC_BIN_HDR_LEN + keylen,
		.args_off = pos + MC_BIN_HDR_LEN,
		.opaque = mc_rd32(h + 12),
		.proto = MC_PROTO_BINARY,
		.cmd = MC_CMD_GET,
		.kind = mc_cmd_kind[MC_CMD_GET],
		.flags = op->flags,
		.opcode = h[1],
		.key_count = 1,
	};
	out->keys[0] = (struct mc_key){.off = pos + MC_BIN_HDR_LEN, .len = (uint16_t)keylen};
	out->proto = MC_PROTO_BINARY;
	out->nreq = 1;
	out->nkeys = 1;
	return true;
}

void mc_bin_response_write(uint8_t *h, uint8_t opcode, uint16_t status, uint32_t body_len,
			   uint32_t opaque)
{
	memset(h, 0, MC_BIN_HDR_LEN); /* key length, extras, data type, cas */
	h[0] = MC_BIN_RES_MAGIC;
	h[1] = opcode;
	mc_wr16(h + 6, status);
	mc_wr32(h + 8, body_len);
	mc_wr32(h + 12, opaque);
}
