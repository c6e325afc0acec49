/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_MCPROTO_H
#define RINGWAY_MCPROTO_H

/**
 * @file
 * Memcached protocol parsing: the UDP frame header, ASCII, meta and binary requests, and
 * replies of all three, streamed across datagrams.
 *
 * Zero-copy and allocation-free: every parser takes a buffer (`const uint8_t *p, size_t len`)
 * and fills a plain struct the caller owns (stack or per-lcore state) with offsets and lengths
 * into that buffer. Nothing is read outside `[p, p + len)`, whatever the input; no call keeps
 * a pointer to the buffer after it returns except where a contract says so (the reply parser
 * keeps the current datagram until the next mc_reply_feed()). No DPDK, no globals: any thread
 * may call any function on its own structs at any time.
 *
 * Errors: parsers return MC_OK (0) or one reason from MC_FOREACH_ERROR (positive), so a caller
 * can count drops in an array indexed by the reason; mc_err_name() gives the reason's name.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Size of the memcached UDP frame header in front of every datagram's payload. */
#define MC_FRAME_HDR_LEN 8
/** Size of a binary protocol request or response header. */
#define MC_BIN_HDR_LEN 24
/** Offset of the opaque (four bytes, echoed in the response) in a binary header. */
#define MC_BIN_OPAQUE_OFF 12
/** Longest key memcached accepts (ASCII, meta, binary). */
#define MC_KEY_MAX 250
/** Most keys one datagram's requests may carry together (a 40-key multi-get fits easily). */
#define MC_MAX_KEYS 256
/** Most requests one datagram may carry (pipelined meta or binary, e.g. GETKQ ... NOOP). */
#define MC_MAX_REQUESTS 128
/** Longest meta `O` value memcached accepts: the token, the letter O included, is at most 32
 * bytes (past that memcached 1.6 answers `CLIENT_ERROR opaque token too long`). */
#define MC_OPAQUE_MAX 31
/** Most UDP payload bytes (frame header included) in one datagram memcached sends. */
#define MC_UDP_PAYLOAD_MAX 1400
/** Longest reply header line (or binary header + extras + key) the reply parser reassembles. */
#define MC_REPLY_LINE_MAX 1024

/**
 * Reasons a request or reply is refused: enum constant suffix and the name used in counters.
 * MC_OK is 0 and not part of the list.
 */
/* clang-format off */
#define MC_FOREACH_ERROR(_)                                                                        \
	_(FRAME_SHORT, "frame_short")                 /* fewer than 8 bytes */                     \
	_(FRAME_MULTI, "frame_multi_datagram")        /* request with total != 1 */                \
	_(FRAME_SEQ, "frame_seq")                     /* request with seq != 0 */                  \
	_(EMPTY, "empty")                             /* no request after the frame header */      \
	_(LINE_UNTERMINATED, "line_unterminated")     /* command line without "\n" */              \
	_(UNKNOWN_COMMAND, "unknown_command")         /* not a memcached command */                \
	_(MIXED_PROTOCOLS, "mixed_protocols")         /* text and binary in one datagram */        \
	_(TOO_MANY_REQUESTS, "too_many_requests")     /* more than MC_MAX_REQUESTS */              \
	_(TOO_MANY_KEYS, "too_many_keys")             /* more than MC_MAX_KEYS */                  \
	_(KEY_MISSING, "key_missing")                 /* command needs a key */                    \
	_(KEY_TOO_LONG, "key_too_long")               /* more than 250 bytes */                    \
	_(KEY_BAD_CHAR, "key_bad_char")               /* control character in a text key */        \
	_(BAD_ARGUMENTS, "bad_arguments")             /* wrong number of tokens */                 \
	_(BAD_NUMBER, "bad_number")                   /* flags, exptime, bytes, cas, delta */      \
	_(DATA_TRUNCATED, "data_truncated")           /* data block shorter than <bytes> + 2 */    \
	_(DATA_BAD_END, "data_bad_end")               /* data block not followed by "\r\n" */      \
	_(META_BAD_FLAG, "meta_bad_flag")             /* unknown or malformed meta flag */         \
	_(META_BAD_BASE64, "meta_bad_base64")         /* `b` key is not valid base64 */            \
	_(META_OPAQUE_TOO_LONG, "meta_opaque_too_long") /* `O` value over 31 bytes */              \
	_(BIN_TRUNCATED_HEADER, "binary_truncated_header") /* fewer than 24 bytes */               \
	_(BIN_BAD_MAGIC, "binary_bad_magic")          /* not 0x80 (request) / 0x81 (reply) */      \
	_(BIN_BAD_OPCODE, "binary_bad_opcode")        /* opcode not supported */                   \
	_(BIN_BAD_DATATYPE, "binary_bad_datatype")    /* datatype other than raw bytes */          \
	_(BIN_BAD_LENGTHS, "binary_bad_lengths")      /* key + extras > body, or not per opcode */ \
	_(BIN_TRUNCATED_BODY, "binary_truncated_body") /* body runs past the datagram */           \
	_(REPLY_FRAME_ORDER, "reply_frame_order")     /* seq/total/request id out of step */       \
	_(REPLY_BAD_LINE, "reply_bad_line")           /* not a memcached reply line */             \
	_(REPLY_LINE_TOO_LONG, "reply_line_too_long") /* over MC_REPLY_LINE_MAX */                 \
	_(REPLY_DATA_BAD_END, "reply_data_bad_end")   /* value not followed by "\r\n" */
/* clang-format on */

/** Parse results: MC_OK or one reason from MC_FOREACH_ERROR. */
/* clang-format off */
enum mc_err {
	MC_OK = 0,
#define MC_ERR_ENUM(e, s) MC_E_##e,
	MC_FOREACH_ERROR(MC_ERR_ENUM)
#undef MC_ERR_ENUM
	MC_E_COUNT
};
/* clang-format on */

/** Wire protocol of one request or reply. */
enum mc_proto {
	MC_PROTO_ASCII, /**< classic text commands */
	MC_PROTO_META,	/**< meta text commands (mg, ms, ...) */
	MC_PROTO_BINARY /**< binary protocol, magic 0x80 / 0x81 */
};

/** What a request does, for routing: keyed kinds go to the key's owner. */
/* clang-format off */
#define MC_FOREACH_KIND(_)                                                                         \
	_(READ, "read")       /* get gets gat gats mg me, binary GET* GAT* */                     \
	_(WRITE, "write")     /* set add replace append prepend cas ms, binary SET* ... */        \
	_(DELETE, "delete")   /* delete md, binary DELETE* */                                     \
	_(ARITH, "arith")     /* incr decr ma, binary INCREMENT* DECREMENT* */                    \
	_(TOUCH, "touch")     /* touch, binary TOUCH */                                           \
	_(KEYLESS, "keyless") /* no key: version stats flush_all mn NOOP ... */
/* clang-format on */

/* clang-format off */
enum mc_kind {
#define MC_KIND_ENUM(e, s) MC_KIND_##e,
	MC_FOREACH_KIND(MC_KIND_ENUM)
#undef MC_KIND_ENUM
	MC_KIND_COUNT
};
/* clang-format on */

/**
 * Commands, by memcached's name: enum suffix, name, kind. Binary opcodes map to the same
 * commands (GETK/GETKQ -> GET with MC_REQ_F_KEY_IN_REPLY; quiet opcodes set MC_REQ_F_QUIET).
 */
/* clang-format off */
#define MC_FOREACH_CMD(_)                                                                          \
	_(GET, "get", READ)                                                                        \
	_(GETS, "gets", READ)                                                                      \
	_(GAT, "gat", READ)                                                                        \
	_(GATS, "gats", READ)                                                                      \
	_(SET, "set", WRITE)                                                                       \
	_(ADD, "add", WRITE)                                                                       \
	_(REPLACE, "replace", WRITE)                                                               \
	_(APPEND, "append", WRITE)                                                                 \
	_(PREPEND, "prepend", WRITE)                                                               \
	_(CAS, "cas", WRITE)                                                                       \
	_(DELETE, "delete", DELETE)                                                                \
	_(INCR, "incr", ARITH)                                                                     \
	_(DECR, "decr", ARITH)                                                                     \
	_(TOUCH, "touch", TOUCH)                                                                   \
	_(MG, "mg", READ)                                                                          \
	_(MS, "ms", WRITE)                                                                         \
	_(MD, "md", DELETE)                                                                        \
	_(MA, "ma", ARITH)                                                                         \
	_(ME, "me", READ)                                                                          \
	_(MN, "mn", KEYLESS)                                                                       \
	_(NOOP, "noop", KEYLESS) /* binary only */                                                 \
	_(VERSION, "version", KEYLESS)                                                             \
	_(VERBOSITY, "verbosity", KEYLESS)                                                         \
	_(STATS, "stats", KEYLESS)                                                                 \
	_(FLUSH_ALL, "flush_all", KEYLESS)                                                         \
	_(QUIT, "quit", KEYLESS)                                                                   \
	_(SHUTDOWN, "shutdown", KEYLESS)                                                           \
	_(CACHE_MEMLIMIT, "cache_memlimit", KEYLESS)                                               \
	_(MISBEHAVE, "misbehave", KEYLESS)                                                         \
	_(LRU_CRAWLER, "lru_crawler", KEYLESS)                                                     \
	_(LRU, "lru", KEYLESS)                                                                     \
	_(SLABS, "slabs", KEYLESS)                                                                 \
	_(WATCH, "watch", KEYLESS)                                                                 \
	_(EXTSTORE, "extstore", KEYLESS)                                                           \
	_(DEBUGTIME, "debugtime", KEYLESS)                                                         \
	_(SASL, "sasl", KEYLESS) /* binary SASL_LIST_MECHS / AUTH / STEP */
/* clang-format on */

/* clang-format off */
enum mc_cmd {
#define MC_CMD_ENUM(e, s, k) MC_CMD_##e,
	MC_FOREACH_CMD(MC_CMD_ENUM)
#undef MC_CMD_ENUM
	MC_CMD_COUNT
};
/* clang-format on */

/** Binary protocol opcodes ringway understands (protocol_binary.h numbering). */
enum mc_bin_opcode {
	MC_BIN_GET = 0x00,
	MC_BIN_SET = 0x01,
	MC_BIN_ADD = 0x02,
	MC_BIN_REPLACE = 0x03,
	MC_BIN_DELETE = 0x04,
	MC_BIN_INCREMENT = 0x05,
	MC_BIN_DECREMENT = 0x06,
	MC_BIN_QUIT = 0x07,
	MC_BIN_FLUSH = 0x08,
	MC_BIN_GETQ = 0x09,
	MC_BIN_NOOP = 0x0a,
	MC_BIN_VERSION = 0x0b,
	MC_BIN_GETK = 0x0c,
	MC_BIN_GETKQ = 0x0d,
	MC_BIN_APPEND = 0x0e,
	MC_BIN_PREPEND = 0x0f,
	MC_BIN_STAT = 0x10,
	MC_BIN_SETQ = 0x11,
	MC_BIN_ADDQ = 0x12,
	MC_BIN_REPLACEQ = 0x13,
	MC_BIN_DELETEQ = 0x14,
	MC_BIN_INCREMENTQ = 0x15,
	MC_BIN_DECREMENTQ = 0x16,
	MC_BIN_QUITQ = 0x17,
	MC_BIN_FLUSHQ = 0x18,
	MC_BIN_APPENDQ = 0x19,
	MC_BIN_PREPENDQ = 0x1a,
	MC_BIN_VERBOSITY = 0x1b,
	MC_BIN_TOUCH = 0x1c,
	MC_BIN_GAT = 0x1d,
	MC_BIN_GATQ = 0x1e,
	MC_BIN_SASL_LIST_MECHS = 0x20,
	MC_BIN_SASL_AUTH = 0x21,
	MC_BIN_SASL_STEP = 0x22,
	MC_BIN_GATK = 0x23,
	MC_BIN_GATKQ = 0x24,
};

/**
 * Binary response status codes (protocol_binary.h's PROTOCOL_BINARY_RESPONSE_*): the reply
 * parser tells hits from misses by them, the router answers its own refusals with them.
 */
enum mc_bin_status {
	MC_BIN_STATUS_OK = 0x0000,		/**< SUCCESS */
	MC_BIN_STATUS_KEY_NOT_FOUND = 0x0001,	/**< KEY_ENOENT */
	MC_BIN_STATUS_KEY_EXISTS = 0x0002,	/**< KEY_EEXISTS */
	MC_BIN_STATUS_TOO_LARGE = 0x0003,	/**< E2BIG */
	MC_BIN_STATUS_INVALID_ARGS = 0x0004,	/**< EINVAL */
	MC_BIN_STATUS_NOT_STORED = 0x0005,	/**< NOT_STORED */
	MC_BIN_STATUS_NON_NUMERIC = 0x0006,	/**< DELTA_BADVAL */
	MC_BIN_STATUS_AUTH_ERROR = 0x0020,	/**< AUTH_ERROR */
	MC_BIN_STATUS_AUTH_CONTINUE = 0x0021,	/**< AUTH_CONTINUE */
	MC_BIN_STATUS_UNKNOWN_COMMAND = 0x0081, /**< UNKNOWN_COMMAND */
	MC_BIN_STATUS_NO_MEMORY = 0x0082,	/**< ENOMEM: out of memory */
	MC_BIN_STATUS_NOT_SUPPORTED = 0x0083,	/**< NOT_SUPPORTED */
	MC_BIN_STATUS_INTERNAL_ERROR = 0x0084,	/**< EINTERNAL */
	MC_BIN_STATUS_BUSY = 0x0085,		/**< EBUSY */
	MC_BIN_STATUS_TEMP_FAILURE = 0x0086,	/**< ETMPFAIL: retrying may succeed */
};

/** The 8-byte memcached UDP frame header, in host byte order. */
struct mc_frame {
	uint16_t request_id; /**< echoed by the server in every reply datagram */
	uint16_t seq;	     /**< datagram number, 0-based */
	uint16_t total;	     /**< datagrams in this message */
	uint16_t reserved;   /**< must be 0 on the wire; reported, not checked */
};

/** One key, as it appears in the parsed buffer. */
struct mc_key {
	uint32_t off;	/**< offset of the key's first byte from the start of the parsed buffer */
	uint16_t len;	/**< 1..MC_KEY_MAX bytes (base64 text for meta `b` keys) */
	uint16_t req;	/**< index of the request it belongs to in mc_requests.req[] */
	uint8_t base64; /**< 1: meta `b` key; hash mc_key_decode()'s output, not the text */
};

/** Request flags (mc_request.flags). */
#define MC_REQ_F_QUIET	      0x01 /**< noreply, meta `q`, or a binary quiet opcode */
#define MC_REQ_F_BASE64	      0x02 /**< meta `b`: the key is base64 */
#define MC_REQ_F_OPAQUE	      0x04 /**< meta `O` given: see opaque_off / opaque_len */
#define MC_REQ_F_KEY_IN_REPLY 0x08 /**< meta `k`, binary GETK / GETKQ / GATK / GATKQ */
#define MC_REQ_F_VALUE	      0x10 /**< the request carries a value (data_off / data_len) */

/** One parsed request. Offsets count from the start of the buffer given to the parser. */
struct mc_request {
	uint32_t off;	     /**< first byte (command name or binary magic) */
	uint32_t len;	     /**< bytes up to and including the data block or binary body */
	uint32_t line_len;   /**< text: command line incl. "\r\n"; binary: 24 + extras + key */
	uint32_t data_off;   /**< value bytes (without the data block's "\r\n"), if F_VALUE */
	uint32_t data_len;   /**< length of the value */
	uint32_t args_off;   /**< meta: the flag tokens after the key (ms: after <datalen>);
				  gat/gats: the exptime; keyless text: all arguments;
				  binary: the extras */
	uint32_t args_len;   /**< length of that span (0 when none) */
	uint32_t opaque;     /**< binary: the header's opaque, as four bytes read big-endian */
	uint32_t opaque_off; /**< meta: the `O` token's value (after the letter O) */
	uint8_t opaque_len;  /**< meta: its length, 0..MC_OPAQUE_MAX */
	uint8_t proto;	     /**< enum mc_proto */
	uint8_t cmd;	     /**< enum mc_cmd */
	uint8_t kind;	     /**< enum mc_kind */
	uint8_t flags;	     /**< MC_REQ_F_* */
	uint8_t opcode;	     /**< binary: the opcode as sent (enum mc_bin_opcode) */
	uint16_t key_first;  /**< index of its first key in mc_requests.keys[] */
	uint16_t key_count;  /**< number of keys (0 for keyless commands) */
};

/**
 * The requests of one datagram (or of one text/binary buffer). Caller-allocated; the parser
 * writes the counts and the used array entries only, so it needs no zeroing.
 */
struct mc_requests {
	struct mc_frame frame; /**< filled by mc_parse_datagram() only */
	uint8_t proto;	       /**< enum mc_proto of the first request */
	uint16_t nreq;	       /**< requests parsed */
	uint16_t nkeys;	       /**< keys over all requests */
	uint32_t err_off;      /**< on error: offset where parsing stopped */
	struct mc_request req[MC_MAX_REQUESTS];
	struct mc_key keys[MC_MAX_KEYS];
};

/**
 * Name of a reason, e.g. "key_too_long"; "ok" for MC_OK, "unknown" out of range.
 * The returned string is static.
 */
const char *mc_err_name(enum mc_err err);
/** Name of a command (e.g. "flush_all"), "unknown" out of range. */
const char *mc_cmd_name(enum mc_cmd cmd);
/** Name of a kind (e.g. "read"), "unknown" out of range. */
const char *mc_kind_name(enum mc_kind kind);

/**
 * Read the 8-byte frame header at @p p. Checks only that @p len >= 8.
 * @return MC_OK, or MC_E_FRAME_SHORT.
 */
enum mc_err mc_frame_parse(const uint8_t *p, size_t len, struct mc_frame *f);

/** Write @p f as 8 bytes (network order) at @p p; the caller guarantees the room. */
void mc_frame_write(uint8_t *p, const struct mc_frame *f);

/**
 * Write a binary response header (magic 0x81, no key, no extras, raw data type, cas 0) as
 * MC_BIN_HDR_LEN bytes at @p h; the caller guarantees the room and writes the @p body_len body
 * bytes after it. @p status is an mc_bin_status, @p opaque the request's (mc_request.opaque).
 */
void mc_bin_response_write(uint8_t *h, uint8_t opcode, uint16_t status, uint32_t body_len,
			   uint32_t opaque);

/**
 * Check a key's bytes against memcached's text-protocol rules: 1..250 bytes, no byte
 * <= 0x20 (space, control characters) and no 0x7f.
 * @return MC_OK, MC_E_KEY_MISSING (empty), MC_E_KEY_TOO_LONG or MC_E_KEY_BAD_CHAR.
 */
enum mc_err mc_key_check(const uint8_t *k, size_t len);

/**
 * Parse the requests in a text or binary buffer without a frame header, e.g. the payload of a
 * datagram after its 8 bytes, or a test vector. The buffer must hold complete requests only
 * (memcached drops requests that span datagrams): one or more pipelined text commands
 * (classic and meta may be mixed) or one or more binary requests; never both.
 * Text rules: commands end in "\r\n" (a bare "\n" is accepted, as memcached does); tokens are
 * separated by one or more spaces; storage data blocks must be exactly <bytes> followed by
 * "\r\n". Keys obey mc_key_check() (binary keys: 1..250 bytes, any bytes).
 *
 * @param p    buffer; offsets in @p out count from @p p
 * @param len  its length
 * @param out  caller-owned result; valid only when MC_OK is returned, except err_off
 * @return MC_OK when every byte of the buffer belongs to a valid request, else the reason
 *         for the first problem (out->err_off says where).
 */
enum mc_err mc_parse_requests(const uint8_t *p, size_t len, struct mc_requests *out);

/**
 * Parse a request datagram's UDP payload: the frame header, which must say seq 0, total 1,
 * then mc_parse_requests() on the rest. Offsets in @p out count from @p p (the frame
 * header's first byte), so they index the datagram payload directly.
 * @return MC_OK or the reason (frame reasons first).
 */
enum mc_err mc_parse_datagram(const uint8_t *p, size_t len, struct mc_requests *out);

/**
 * Accept text and meta keys holding control characters (bytes < 0x20 and 0x7f other than the
 * line's own "\r\n"), as memcached itself does: its tokenizer splits on spaces only, and
 * clients such as memcaslap send such keys. Without the flag they are MC_E_KEY_BAD_CHAR, as
 * protocol.txt says. Length limits and the space rule hold either way.
 */
#define MC_PARSE_CTL_KEYS 0x1u

/** mc_parse_requests() with MC_PARSE_* @p flags. */
enum mc_err mc_parse_requests_flags(const uint8_t *p, size_t len, unsigned flags,
				    struct mc_requests *out);

/**
 * The router's fast lane: whether datagram @p p (@p len bytes, frame header included) is one
 * plain single-key read that expects its reply: exactly `get <key>\r\n`, one
 * `mg <key>[ <flags>]\r\n` line whose flags the parser takes at once and that has neither `q`
 * nor `b`, or one binary GET / GETK filling the datagram; frame seq 0 of 1 datagram. True with
 * the key's offset and length (plain bytes, 1..MC_KEY_MAX) in *@p koff / *@p klen, and then
 * mc_parse_datagram_flags() of the same bytes (any flags) returns MC_OK with one read
 * request, not quiet, of that one key. False: anything else (the full parser decides).
 */
bool mc_match_single_get(const uint8_t *p, uint32_t len, uint16_t *koff, uint16_t *klen);

/** mc_parse_datagram() with MC_PARSE_* @p flags. The commonest datagrams (one `get <key>` or
 * `mg <key>[ <flags>]` line, one binary GET) take a shorter way to the same result. */
enum mc_err mc_parse_datagram_flags(const uint8_t *p, size_t len, unsigned flags,
				    struct mc_requests *out);

/**
 * Decode a meta `b` key (base64 text, validated by the parser) into @p out, for hashing.
 * For a key without @c base64 set, copies it unchanged.
 * @param p    the buffer the key was parsed from
 * @param k    the key
 * @param out  room for MC_KEY_MAX bytes
 * @return the decoded length (1..187 for base64, 1..250 otherwise), or 0 if @p k's text is
 *         not valid base64 (cannot happen for keys from a successful parse).
 */
size_t mc_key_decode(const uint8_t *p, const struct mc_key *k, uint8_t out[MC_KEY_MAX]);

/**
 * memcached's REALTIME_MAXDELTA (30 days): an exptime up to it counts from now, one above it
 * is an absolute Unix time (one at or before the node's start expires at once).
 */
#define MC_EXPTIME_REL_MAX 2592000u
/** The largest exptime memcached's text protocol takes (its parser's signed 32 bits). */
#define MC_EXPTIME_MAX 2147483647u
/** An exptime every protocol can carry that memcached reads as long past: absolute 1970. */
#define MC_EXPTIME_PAST (MC_EXPTIME_REL_MAX + 1u)

/**
 * The exptime that makes an item live @p secs (>= 1) more seconds on a node whose clock reads
 * @p now_unix (Unix seconds): @p secs itself up to MC_EXPTIME_REL_MAX; beyond, the absolute
 * time @p now_unix + @p secs (at most MC_EXPTIME_MAX). With @p now_unix 0 (no clock) a longer
 * life is written as MC_EXPTIME_REL_MAX: shorter than asked, never already expired.
 */
uint32_t mc_exptime_write(uint64_t secs, uint64_t now_unix);

/** Room a delete line takes at most: `md <MC_KEY_MAX base64 characters> b q\r\n` (memcached
 * limits the key token, base64 or not, to MC_KEY_MAX characters). */
#define MC_DELETE_LINE_MAX (3 + MC_KEY_MAX + 6)

/** Whether mc_delete_line() writes @p key as a text `delete` (no space, CR, LF or NUL in
 *  it), which memcached never answers; else it is a meta `md ... q`, which memcached 1.6
 *  still answers with `NF` when the key is absent (quiet mode hides only `HD`). */
bool mc_delete_is_text(const uint8_t *key, size_t len);

/**
 * Write the quiet delete of raw key @p key (@p len bytes, 1..MC_KEY_MAX) to @p out: `delete
 * KEY noreply\r\n` when text can carry the key (mc_delete_is_text()), else meta `md B64 b
 * q\r\n` (memcached splits text keys on spaces; meta takes any bytes as base64). The text
 * form is never answered; the meta one is when the key is absent (`NF`). @return the length, or 0 when it does not fit @p cap (nothing useful
 * written), @p len is out of range, or the key needs base64 and its base64 is longer than
 * MC_KEY_MAX (memcached refuses such a token: keys over 186 bytes with a space, CR, LF or
 * NUL, which only the binary protocol carries, cannot be deleted by text or meta).
 */
size_t mc_delete_line(const uint8_t *key, size_t len, char *out, size_t cap);

/** What an exptime a client wrote means (mc_exptime_read). */
enum mc_exptime_kind {
	MC_EXPTIME_NONE,    /**< 0: no expiry */
	MC_EXPTIME_LEFT,    /**< expires in *left seconds (relative, or absolute in the future) */
	MC_EXPTIME_EXPIRED, /**< negative, or an absolute time not after @p now_unix */
	MC_EXPTIME_BAD      /**< not a number memcached takes: the node refuses the request */
};

/**
 * Read the text exptime @p t[0..n) (an optional sign, decimal digits, as memcached's own
 * parser takes them) against @p now_unix (0: no clock; an absolute time then counts as more
 * than 30 days left). *left: the seconds left for MC_EXPTIME_LEFT.
 */
enum mc_exptime_kind mc_exptime_read(const uint8_t *t, size_t n, uint64_t now_unix,
				     uint64_t *left);
/** The same for a binary request's 32-bit expiration. */
enum mc_exptime_kind mc_exptime_read_u32(uint32_t v, uint64_t now_unix, uint64_t *left);

/**
 * Copy the requests @p r parsed from @p p (@p len bytes, e.g. a datagram's payload with its
 * frame header, which is copied unchanged) into @p out so that every expiry a request sets
 * ends within @p ttl seconds (> 0): the router's writes to a stand-in node while the owner is
 * down. ASCII set/add/replace/cas and touch: the exptime token; gat/gats: theirs; meta ms: the
 * `T` flag's value, or ` T<ttl>` added at the end of the line; meta mg/ma: the `T` and `N`
 * (vivify) flags' values; binary SET/ADD/REPLACE and their quiet forms, TOUCH and GAT*: the
 * extras' expiration (in place). An expiry of 0 (none), more than @p ttl seconds away
 * (relative, or absolute read against @p now_unix, the router's Unix clock) becomes
 * mc_exptime_write(@p ttl); an absolute time already past becomes -1 (text) or
 * MC_EXPTIME_PAST (binary), a negative or a nearer one stays, one memcached refuses stays.
 * Everything else is copied byte for byte. The text forms may change length (at most 12 bytes
 * per request).
 * @return the bytes written, or 0 when they do not fit @p cap.
 */
size_t mc_cap_ttl(const uint8_t *p, size_t len, const struct mc_requests *r, uint32_t ttl,
		  uint64_t now_unix, uint8_t *out, size_t cap);

/** True when one of @p r's requests may set an expiry (what mc_cap_ttl() would cap). */
bool mc_sets_expiry(const uint8_t *p, const struct mc_requests *r);

/* ------------------------------------------------------------------------------------------ */
/* Replies                                                                                   */

/** Reply item types: enum suffix, name, result (see enum mc_result). */
/* clang-format off */
#define MC_FOREACH_REPLY(_)                                                                        \
	_(VALUE, "VALUE", HIT)               /* VALUE <key> <flags> <bytes> [<cas>] + data */      \
	_(END, "END", END)                   /* end of a retrieval or stats reply */               \
	_(STORED, "STORED", OK)                                                                    \
	_(NOT_STORED, "NOT_STORED", FAIL)                                                          \
	_(EXISTS, "EXISTS", FAIL)                                                                  \
	_(NOT_FOUND, "NOT_FOUND", MISS)                                                            \
	_(DELETED, "DELETED", OK)                                                                  \
	_(TOUCHED, "TOUCHED", OK)                                                                  \
	_(NUMBER, "number", OK)              /* incr / decr result */                              \
	_(OK, "OK", OK)                      /* flush_all, verbosity, ... */                       \
	_(VERSION, "VERSION", INFO)                                                                \
	_(STAT, "STAT", INFO)                                                                      \
	_(ERROR, "ERROR", ERROR)                                                                   \
	_(CLIENT_ERROR, "CLIENT_ERROR", ERROR)                                                     \
	_(SERVER_ERROR, "SERVER_ERROR", ERROR)                                                     \
	_(META_VA, "VA", HIT)                /* meta value + data */                               \
	_(META_HD, "HD", OK)                 /* meta success without value */                      \
	_(META_EN, "EN", MISS)               /* meta get miss */                                   \
	_(META_NF, "NF", MISS)               /* meta not found (md, ma) */                         \
	_(META_NS, "NS", FAIL)               /* meta not stored */                                 \
	_(META_EX, "EX", FAIL)               /* meta exists (cas mismatch) */                      \
	_(META_MN, "MN", END)                /* meta no-op: end of a pipeline */                   \
	_(META_ME, "ME", INFO)               /* meta debug */                                      \
	_(BINARY, "binary", OK)              /* a binary response; result from status/opcode */
/* clang-format on */

/* clang-format off */
enum mc_reply_type {
#define MC_REPLY_ENUM(e, s, r) MC_REPLY_##e,
	MC_FOREACH_REPLY(MC_REPLY_ENUM)
#undef MC_REPLY_ENUM
	MC_REPLY_COUNT
};
/* clang-format on */

/** What an item means for the client. */
enum mc_result {
	MC_RES_HIT,   /**< a value is returned */
	MC_RES_MISS,  /**< key not found */
	MC_RES_OK,    /**< write / delete / touch / arith done */
	MC_RES_FAIL,  /**< not stored, exists (cas) */
	MC_RES_ERROR, /**< ERROR, CLIENT_ERROR, SERVER_ERROR, binary error status */
	MC_RES_END,   /**< END, MN, binary NOOP response: a terminator */
	MC_RES_INFO,  /**< VERSION, STAT, ME */
};

/** Events returned by mc_reply_next(). */
enum mc_reply_ev {
	MC_EV_MORE = 0, /**< the current datagram is used up: feed the next one */
	MC_EV_ITEM,	/**< an item's header: type, result, key, value length */
	MC_EV_DATA,	/**< a piece of the current item's value (in the current datagram) */
};

/**
 * One event of the reply stream. @c data points into the datagram given to mc_reply_feed().
 * @c head, @c key and @c mopaque point into that datagram too, or, for a header split across
 * datagrams, into the parser's line buffer: use them before the next mc_reply_next() call.
 * A DATA event fills only data, data_len and last.
 */
struct mc_reply_event {
	uint8_t type;		/**< enum mc_reply_type of the item */
	uint8_t result;		/**< enum mc_result */
	uint8_t proto;		/**< enum mc_proto */
	uint8_t last;		/**< DATA: this piece ends the value */
	uint8_t opcode;		/**< binary: the response's opcode */
	uint16_t status;	/**< binary: the response's status */
	uint32_t opaque;	/**< binary: the header's opaque, read big-endian */
	const uint8_t *head;	/**< ITEM: the whole header line incl. "\r\n" / binary header +
				     extras + key */
	uint32_t head_len;	/**< its length */
	const uint8_t *key;	/**< ITEM: key echoed by the reply (VALUE, meta `k`, binary
				     key), else NULL */
	uint16_t key_len;	/**< its length */
	uint8_t opaque_len;	/**< meta: `O` token length, 0 if absent */
	const uint8_t *mopaque; /**< meta: the `O` token's value */
	uint32_t value_len;	/**< ITEM: total value bytes of the item (0: no DATA follows) */
	const uint8_t *data;	/**< DATA: the piece */
	uint32_t data_len;	/**< its length */
};

/**
 * Incremental parser for the reply to one request datagram. Caller-owned; treat the fields as
 * private. Header lines split across datagrams are reassembled in @c line; value bytes are
 * never copied.
 *
 * What memcached 1.6 sends over UDP (seen with 1.6.18, see tests/data/mcproto/): each response
 * of a request (one per pipelined command, one per hit of a multi-get, ...) goes out as its own
 * message with its own sequence numbers: datagrams seq 0..total-1, all with the request's id.
 * A response suppressed by a quiet flag may show up as an empty message (seq 0, total 0, no
 * payload). So seq/total alone do not say when a reply is complete: the parser counts the
 * responses it expects from the request (mc_reply_expect()).
 */
struct mc_reply_parser {
	const uint8_t *cur; /* current chunk */
	uint32_t cur_len;
	uint32_t cur_pos;
	uint32_t data_left; /* value bytes still to come in the current item */
	uint32_t items;	    /* items seen */
	uint8_t crlf_left;  /* bytes of the value's trailing "\r\n" still to come */
	uint8_t state;
	uint8_t framed; /* fed with mc_reply_feed_datagram() */
	uint8_t expect; /* how completion is judged (reply.c) */
	uint16_t request_id;
	uint16_t next_seq; /* next datagram of the current message */
	uint16_t total;	   /* datagrams in the current message */
	uint16_t line_len;
	uint16_t units; /* responses (or terminators) expected */
	uint16_t units_seen;
	uint8_t multi[MC_MAX_REQUESTS / 8]; /* bit i: response i ends with END (or an error) */
	uint8_t line[MC_REPLY_LINE_MAX];
};

/**
 * Reset @p rp for a new reply. Until mc_reply_expect() is called, mc_reply_done() only says
 * whether the stream is at a boundary.
 */
void mc_reply_init(struct mc_reply_parser *rp);

/**
 * Tell the parser which requests the reply answers, so mc_reply_done() can say when it is
 * complete: each request without noreply/q gets one response (ASCII retrieval and stats
 * responses run to END; an error line ends any response); when the last request is `mn` or a
 * binary NOOP, the reply ends with the response to it (quiet requests before it may or may
 * not answer). When quiet requests are not followed by `mn`/NOOP, or a command's reply cannot
 * be delimited (quit, shutdown, watch, lru_crawler, binary STAT), completion is unknown and
 * mc_reply_done() stays false: the caller's timeout decides.
 * @p reqs must be the result of a successful parse; it is not kept.
 */
void mc_reply_expect(struct mc_reply_parser *rp, const struct mc_requests *reqs);

/**
 * Whether the reply to @p reqs is exactly one message (datagrams seq 0..total-1 of one total),
 * so a router can forward it by the frame header alone, without a reply parser: true for a
 * single request that is not quiet and gets one response object from memcached (a get, gat
 * or meta/binary command of one key, a storage, delete, arith or touch command, version,
 * verbosity, flush_all, ...; values of any size). False for pipelines, multi-key gets (each
 * hit is its own message, and misses may add empty ones), quiet requests (no message, or an
 * empty one) and commands whose reply cannot be delimited: use mc_reply_expect() for those.
 * @p reqs must be the result of a successful parse.
 */
bool mc_reply_is_one_message(const struct mc_requests *reqs);

/**
 * Feed the next piece of the reply stream, without frame header (e.g. a TCP read or a test
 * vector). Only allowed once mc_reply_next() returned MC_EV_MORE (or right after init).
 * @p p must stay valid and unchanged until the next feed.
 */
void mc_reply_feed(struct mc_reply_parser *rp, const uint8_t *p, size_t len);

/**
 * Feed the next reply datagram's UDP payload, frame header included, in order: every datagram
 * must carry the request id of the first; a message starts at seq 0 and its datagrams follow
 * with seq one higher and the same total; an empty message (seq 0, total 0) must have no
 * payload.
 * @return MC_OK, MC_E_FRAME_SHORT or MC_E_REPLY_FRAME_ORDER (the parser is unchanged then).
 */
enum mc_err mc_reply_feed_datagram(struct mc_reply_parser *rp, const uint8_t *p, size_t len);

/**
 * Take the next event from the bytes fed so far.
 * @return MC_EV_MORE, MC_EV_ITEM or MC_EV_DATA as a non-negative int with @p ev filled for the
 *         last two; or a negative reason (-MC_E_REPLY_BAD_LINE, ...). After an error the parser
 *         keeps returning an error until mc_reply_init().
 */
int mc_reply_next(struct mc_reply_parser *rp, struct mc_reply_event *ev);

/**
 * True when the stream is at a boundary (every datagram of the messages fed so far was fed and
 * consumed, no item half-done) and, after mc_reply_expect(), every expected response has been
 * seen. With an unknown completion (see mc_reply_expect()) it stays false.
 */
bool mc_reply_done(const struct mc_reply_parser *rp);

#ifdef __cplusplus
}
#endif

#endif /* RINGWAY_MCPROTO_H */
