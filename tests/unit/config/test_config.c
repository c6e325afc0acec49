/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ringway's configuration loader: what a config file accepts (with the defaults docs/config.md and
 * config.h promise), and for each kind of mistake the exact error: file, line, section, key.
 *
 * A bad config marks the line the error must name with the comment "#!" (comments do not
 * change what the loader reads); a config without a marker expects an error without a line.
 * Needs no EAL: rte_cfgfile is plain C.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "control.h"

#ifndef RW_SOURCE_DIR
#error "RW_SOURCE_DIR must name the source tree"
#endif

#define SAMPLE RW_SOURCE_DIR "/config/ringway.conf"
#define DOC    RW_SOURCE_DIR "/docs/config.md"

/* The smallest valid file, in pieces the cases combine. */
#define ROUTER	      "[router]\naddress = 198.18.0.1\nallowed_clients = 198.18.0.0/24\n"
#define NODE_A	      "[node a]\naddress = 198.18.1.1\n"
#define MINIMAL	      ROUTER NODE_A
#define NODE_A_MARKED "[node a]\naddress = 198.18.1.1 #!\n"

static char tmp_path[64];

/* Write @p len bytes of @p text to a fresh temporary file; its name is in tmp_path. */
static void write_tmp(const char *text, size_t len)
{
	int fd;

	snprintf(tmp_path, sizeof(tmp_path), "/tmp/rw-config-test-XXXXXX");
	fd = mkstemp(tmp_path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
}

static int load_text(const char *text, struct rw_config *cfg, char *err, size_t errlen)
{
	int ret;

	write_tmp(text, strlen(text));
	ret = rw_config_load(tmp_path, cfg, err, errlen);
	unlink(tmp_path);
	return ret;
}

static struct rw_config *load_ok(const char *text)
{
	struct rw_config *cfg = malloc(sizeof(*cfg));
	char err[512];
	int ret;

	assert_non_null(cfg);
	ret = load_text(text, cfg, err, sizeof(err));
	if (ret != 0)
		fail_msg("expected the config to load, got %d: %s", ret, err);
	return cfg;
}

/* Line (1-based) that carries the "#!" marker, or 0. */
static unsigned int marked_line(const char *text)
{
	const char *m = strstr(text, "#!");
	unsigned int line = 1;

	if (m == NULL)
		return 0;
	for (const char *p = text; p < m; p++)
		line += *p == '\n';
	return line;
}

/* Load @p text, expect -EINVAL and an error "<file>:<marked line>: <what>..." */
static void expect_error(const char *text, const char *what)
{
	struct rw_config *cfg = malloc(sizeof(*cfg));
	char err[512], prefix[128];
	unsigned int line = marked_line(text);
	int ret;

	assert_non_null(cfg);
	ret = load_text(text, cfg, err, sizeof(err));
	free(cfg);
	if (line)
		snprintf(prefix, sizeof(prefix), "%s:%u: ", tmp_path, line);
	else
		snprintf(prefix, sizeof(prefix), "%s: ", tmp_path);
	if (ret != -EINVAL || strncmp(err, prefix, strlen(prefix)) != 0 ||
	    strstr(err + strlen(prefix), what) != err + strlen(prefix))
		fail_msg("expected -EINVAL and\n  \"%s%s...\"\ngot %d and\n  \"%s\"", prefix, what,
			 ret, err);
}

/* ---- bad configs: one per mistake ---- */

struct bad_case {
	const char *name;
	const char *text;
	const char *what; /* the error after "file:line: " must start with this */
};

#define LONG50	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define LONG250 LONG50 LONG50 LONG50 LONG50 LONG50

static const struct bad_case bad_cases[] = {
	/* structure */
	{"unknown_section", MINIMAL "[routr] #!\n",
	 "section [routr]: unknown section (did you mean [router]?)"},
	{"unknown_section_far", MINIMAL "[frobnicate] #!\n",
	 "section [frobnicate]: unknown section (expected router"},
	{"nodes_section", MINIMAL "[nodes] #!\n",
	 "section [nodes]: unknown section (did you mean [node NAME]?)"},
	{"node_without_name", MINIMAL "[node] #!\naddress = 198.18.1.2\n",
	 "section [node]: expected [node NAME]"},
	{"node_bad_name", MINIMAL "[node a/b] #!\naddress = 198.18.1.2\n",
	 "section [node a/b]: expected [node NAME]"},
	{"node_name_with_space", MINIMAL "[node a b] #!\naddress = 198.18.1.2\n",
	 "section [node a b]: expected [node NAME]"},
	{"node_name_too_long", MINIMAL "[node " LONG50 "abcdefghi] #!\naddress = 198.18.1.2\n",
	 "section [node aaaa"},
	{"section_name_too_long", MINIMAL "[" LONG50 "abcdefghijklmn] #!\n",
	 "section [aaaaaaaaaaaaaaaaaaaa...]: name longer than 63 characters"},
	{"duplicate_section", MINIMAL "[router] #!\n",
	 "section [router]: appears twice (first at line 1)"},
	{"duplicate_node", MINIMAL "[node a] #!\naddress = 198.18.1.2\n",
	 "section [node a]: appears twice (first at line 4)"},
	{"duplicate_node_spacing", MINIMAL "[node   a] #!\naddress = 198.18.1.2\n",
	 "section [node   a]: appears twice (first at line 4)"},
	{"key_before_section", "address = 198.18.0.1 #!\n" MINIMAL,
	 "expected a [section] before the first key"},
	{"line_without_equals", ROUTER "mtu 1500 #!\n" NODE_A,
	 "expected 'key = value', '[section]' or a '#' comment"},
	{"unclosed_section", MINIMAL "[log #!\n", "expected ']' to close the section name"},
	{"text_after_section", MINIMAL "[log] level = info #!\n", "expected nothing after ']'"},
	{"empty_section_name", MINIMAL "[ ] #!\n", "expected a section name between '[' and ']'"},
	{"backslash", ROUTER "mtu = 15\\00 #!\n" NODE_A,
	 "a backslash is not allowed outside comments"},
	{"control_char", ROUTER "mtu = 15\00100 #!\n" NODE_A, "control character 0x01"},
	{"line_too_long", ROUTER "#! " LONG250 LONG50 "\n" NODE_A,
	 "line longer than 300 characters"},
	{"key_without_name", ROUTER " = 5 #!\n" NODE_A,
	 "expected a key name before '=' in [router]"},
	{"key_name_too_long", ROUTER LONG50 "abcdefghijklmn = 1 #!\n" NODE_A,
	 "key 'aaaaaaaaaaaaaaaaaaaa...' in [router]: name longer than 63"},
	{"value_too_long", "[control]\nstate_file = /" LONG250 "abcdef #!\n" MINIMAL,
	 "key 'state_file' in [control]: value longer than 255"},
	{"unknown_key_typo", ROUTER "adress = 198.18.0.1 #!\n" NODE_A,
	 "key 'adress' in [router]: unknown key (did you mean 'address'?)"},
	{"unknown_key_other_section", MINIMAL "[placement]\nmtu = 1500 #!\n",
	 "key 'mtu' in [placement]: unknown key (it belongs in [router])"},
	{"unknown_key", MINIMAL "[log]\nverbosity_of_everything = 3 #!\n",
	 "key 'verbosity_of_everything' in [log]: unknown key"},
	{"duplicate_key", ROUTER "address = 198.18.0.2 #!\n" NODE_A,
	 "key 'address' in [router]: appears twice (first at line 2)"},
	{"duplicate_node_key", MINIMAL "weight = 1\nweight = 2 #!\n",
	 "key 'weight' in [node a]: appears twice (first at line 6)"},
	/* required */
	{"no_router", NODE_A, "missing section [router] with key 'address'"},
	{"no_address", "[router] #!\nallowed_clients = 198.18.0.0/24\n" NODE_A,
	 "section [router]: missing key 'address' (a unicast IPv4 address)"},
	{"no_clients", "[router] #!\naddress = 198.18.0.1\n" NODE_A,
	 "section [router]: missing key 'allowed_clients'"},
	{"no_nodes", ROUTER, "no [node NAME] section: at least one node is needed"},
	{"node_without_address", MINIMAL "[node b] #!\nweight = 2\n",
	 "section [node b]: missing key 'address'"},
	/* [router] values */
	{"address_octet",
	 "[router]\naddress = 198.18.0.256 #!\nallowed_clients = 198.18.0.0/24\n" NODE_A,
	 "key 'address' in [router]: expected a unicast IPv4 address, got '198.18.0.256'"},
	{"address_short",
	 "[router]\naddress = 198.18.1 #!\nallowed_clients = 198.18.0.0/24\n" NODE_A,
	 "key 'address' in [router]: expected a unicast IPv4 address, got '198.18.1'"},
	{"address_loopback",
	 "[router]\naddress = 127.0.0.1 #!\nallowed_clients = 198.18.0.0/24\n" NODE_A,
	 "key 'address' in [router]: expected a unicast IPv4 address"},
	{"address_multicast",
	 "[router]\naddress = 224.0.0.1 #!\nallowed_clients = 198.18.0.0/24\n" NODE_A,
	 "key 'address' in [router]: expected a unicast IPv4 address"},
	{"address_zero", "[router]\naddress = 0.0.0.0 #!\nallowed_clients = 198.18.0.0/24\n" NODE_A,
	 "key 'address' in [router]: expected a unicast IPv4 address"},
	{"address_empty", "[router]\naddress = #!\nallowed_clients = 198.18.0.0/24\n" NODE_A,
	 "key 'address' in [router]: expected a unicast IPv4 address, got ''"},
	{"address_trailing",
	 "[router]\naddress = 198.18.0.1 x #!\nallowed_clients = 198.18.0.0/24\n" NODE_A,
	 "key 'address' in [router]: expected a unicast IPv4 address, got '198.18.0.1 x'"},
	{"address_ipv6",
	 "[router]\naddress = 2001:db8::1 #!\nallowed_clients = 198.18.0.0/24\n" NODE_A,
	 "key 'address' in [router]: expected a unicast IPv4 address"},
	{"port_range", ROUTER "port = 32 #!\n" NODE_A,
	 "key 'port' in [router]: expected an integer 0..31, got '32'"},
	{"mac_short", ROUTER "mac = 02:00:00:00:00 #!\n" NODE_A,
	 "key 'mac' in [router]: expected a unicast MAC address"},
	{"mac_multicast", ROUTER "mac = 01:00:5e:00:00:01 #!\n" NODE_A,
	 "key 'mac' in [router]: expected a unicast MAC address"},
	{"mac_zero", ROUTER "mac = 00:00:00:00:00:00 #!\n" NODE_A,
	 "key 'mac' in [router]: expected a unicast MAC address"},
	{"mac_dashes", ROUTER "mac = 02-00-00-00-00-01 #!\n" NODE_A,
	 "key 'mac' in [router]: expected a unicast MAC address"},
	{"mac_hex", ROUTER "mac = 02:00:00:00:00:0g #!\n" NODE_A,
	 "key 'mac' in [router]: expected a unicast MAC address"},
	{"listen_port_zero", ROUTER "listen_ports = 0 #!\n" NODE_A,
	 "key 'listen_ports' in [router]: expected a comma-separated list of 1..16 UDP ports "
	 "1..65535, got '0'"},
	{"listen_port_big", ROUTER "listen_ports = 11211, 65536 #!\n" NODE_A,
	 "key 'listen_ports' in [router]: expected a comma-separated list"},
	{"listen_port_trailing_comma", ROUTER "listen_ports = 11211, #!\n" NODE_A,
	 "key 'listen_ports' in [router]: expected a comma-separated list"},
	{"listen_port_empty_item", ROUTER "listen_ports = 11211,,11212 #!\n" NODE_A,
	 "key 'listen_ports' in [router]: expected a comma-separated list"},
	{"listen_port_word", ROUTER "listen_ports = memcache #!\n" NODE_A,
	 "key 'listen_ports' in [router]: expected a comma-separated list"},
	{"listen_port_twice", ROUTER "listen_ports = 11211, 11211 #!\n" NODE_A,
	 "key 'listen_ports' in [router]: port 11211 is listed twice"},
	{"listen_port_twice_lines",
	 ROUTER "listen_ports = 11211\nlisten_ports = 11212, 11211 #!\n" NODE_A,
	 "key 'listen_ports' in [router]: port 11211 is listed twice"},
	{"listen_ports_too_many",
	 ROUTER "listen_ports = 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17 #!\n" NODE_A,
	 "key 'listen_ports' in [router]: at most 16 ports"},
	{"listen_port_in_reply_range", ROUTER "listen_ports = 11211, 40000 #!\n" NODE_A,
	 "key 'listen_ports' in [router]: port 40000 lies in the reply range 32768..49151"},
	{"reply_base_low", ROUTER "reply_port_base = 1023 #!\n" NODE_A,
	 "key 'reply_port_base' in [router]: expected an integer 1024..65535, got '1023'"},
	{"reply_count_pow2", ROUTER "reply_port_count = 1000 #!\n" NODE_A,
	 "key 'reply_port_count' in [router]: expected a power of two 1..32768, got '1000'"},
	{"reply_range_past_end",
	 ROUTER "reply_port_count = 32768 #!\nreply_port_base = 40000\n" NODE_A,
	 "key 'reply_port_count' in [router]: reply_port_base 40000 + 32768 ports runs past port "
	 "65535"},
	{"client_host_bits",
	 "[router]\naddress = 198.18.0.1\nallowed_clients = 198.18.0.1/24 #!\n" NODE_A,
	 "key 'allowed_clients' in [router]: prefix '198.18.0.1/24' has host bits set (did you "
	 "mean 198.18.0.0/24?)"},
	{"client_host_bits_second",
	 "[router]\naddress = 198.18.0.1\nallowed_clients = 198.18.0.0/24, 198.19.0.0/8 "
	 "#!\n" NODE_A,
	 "key 'allowed_clients' in [router]: prefix '198.19.0.0/8' has host bits set (did you mean "
	 "198.0.0.0/8?)"},
	{"client_len_33",
	 "[router]\naddress = 198.18.0.1\nallowed_clients = 198.18.0.0/33 #!\n" NODE_A,
	 "key 'allowed_clients' in [router]: expected IPv4 prefixes a.b.c.d/len with len 0..32 "
	 "('198.18.0.0/33')"},
	{"client_no_len",
	 "[router]\naddress = 198.18.0.1\nallowed_clients = 198.18.0.0 #!\n" NODE_A,
	 "key 'allowed_clients' in [router]: expected IPv4 prefixes a.b.c.d/len"},
	{"client_empty_len",
	 "[router]\naddress = 198.18.0.1\nallowed_clients = 198.18.0.0/ #!\n" NODE_A,
	 "key 'allowed_clients' in [router]: expected IPv4 prefixes a.b.c.d/len"},
	{"client_bad_addr",
	 "[router]\naddress = 198.18.0.1\nallowed_clients = 198.18.0/24 #!\n" NODE_A,
	 "key 'allowed_clients' in [router]: expected IPv4 prefixes a.b.c.d/len ('198.18.0/24')"},
	{"client_twice",
	 "[router]\naddress = 198.18.0.1\nallowed_clients = 198.18.0.0/24\nallowed_clients = "
	 "198.18.0.0/24 #!\n" NODE_A,
	 "key 'allowed_clients' in [router]: prefix '198.18.0.0/24' is listed twice"},
	{"idle_word", ROUTER "idle = spin #!\n" NODE_A,
	 "key 'idle' in [router]: expected poll, backoff or adaptive, got 'spin'"},
	{"backoff_zero", ROUTER "backoff_us = 0 #!\n" NODE_A,
	 "key 'backoff_us' in [router]: expected an integer 1..100000, got '0'"},
	{"backoff_after_big", ROUTER "backoff_after = 1000001 #!\n" NODE_A,
	 "key 'backoff_after' in [router]: expected an integer 1..1000000"},
	{"mtu_small", ROUTER "mtu = 575 #!\n" NODE_A,
	 "key 'mtu' in [router]: expected an integer 576..9000, got '575'"},
	{"mtu_negative", ROUTER "mtu = -1500 #!\n" NODE_A,
	 "key 'mtu' in [router]: expected an integer 576..9000, got '-1500'"},
	{"mtu_plus", ROUTER "mtu = +1500 #!\n" NODE_A,
	 "key 'mtu' in [router]: expected an integer 576..9000, got '+1500'"},
	{"mtu_hex", ROUTER "mtu = 0x5dc #!\n" NODE_A,
	 "key 'mtu' in [router]: expected an integer 576..9000, got '0x5dc'"},
	{"mtu_overflow", ROUTER "mtu = 4294968796 #!\n" NODE_A,
	 "key 'mtu' in [router]: expected an integer 576..9000"},
	{"mtu_unit", ROUTER "mtu = 1500 bytes #!\n" NODE_A,
	 "key 'mtu' in [router]: expected an integer 576..9000, got '1500 bytes'"},
	/* [placement] */
	{"algorithm_unknown", MINIMAL "[placement]\nalgorithm = ketama_weighted #!\n",
	 "key 'algorithm' in [placement]: expected one of ring, ketama, twemproxy, jump, "
	 "rendezvous, maglev, modulo, got 'ketama_weighted'"},
	{"algorithm_case", MINIMAL "[placement]\nalgorithm = Ring #!\n",
	 "key 'algorithm' in [placement]: expected one of ring"},
	{"vnodes_zero", MINIMAL "[placement]\nvnodes = 0 #!\n",
	 "key 'vnodes' in [placement]: expected an integer 1..10000, got '0'"},
	{"vnodes_points",
	 ROUTER "[node a]\naddress = 198.18.1.1\nweight = 10000\n[placement]\nvnodes = 10000 #!\n",
	 "key 'vnodes' in [placement]: 10000 vnodes x total weight 10000 is more than 16777216 "
	 "ring points"},
	{"hash_tag_one", MINIMAL "[placement]\nhash_tag = { #!\n",
	 "key 'hash_tag' in [placement]: expected empty or two characters like {}, got '{'"},
	{"hash_tag_three", MINIMAL "[placement]\nhash_tag = {}} #!\n",
	 "key 'hash_tag' in [placement]: expected empty or two characters"},
	{"hash_tag_space", MINIMAL "[placement]\nhash_tag = { } #!\n",
	 "key 'hash_tag' in [placement]: expected empty or two characters"},
	{"key_hash_unknown", MINIMAL "[placement]\nkey_hash = sha1 #!\n",
	 "key 'key_hash' in [placement]: expected empty or a twemproxy hash"},
	{"key_hash_xxh3", MINIMAL "[placement]\nkey_hash = xxh3 #!\n",
	 "key 'key_hash' in [placement]: expected empty or a twemproxy hash"},
	{"key_hash_not_twemproxy", MINIMAL "[placement]\nalgorithm = ring\nkey_hash = md5 #!\n",
	 "key 'key_hash' in [placement]: applies only to algorithm twemproxy (algorithm is ring)"},
	{"maglev_not_prime", MINIMAL "[placement]\nmaglev_size = 65536 #!\n",
	 "key 'maglev_size' in [placement]: expected a prime 3..16777213, got '65536'"},
	{"maglev_too_small",
	 ROUTER NODE_A "[node b]\naddress = 198.18.1.2\n[node c]\naddress = "
		       "198.18.1.3\n[placement]\nalgorithm = maglev\nmaglev_size = 3 #!\n",
	 "key 'maglev_size' in [placement]: 3 must be larger than the number of nodes (3)"},
	/* [node NAME] */
	{"weight_zero", MINIMAL "weight = 0 #!\n",
	 "key 'weight' in [node a]: expected an integer 1..10000, got '0'"},
	{"weight_big", MINIMAL "weight = 10001 #!\n",
	 "key 'weight' in [node a]: expected an integer 1..10000, got '10001'"},
	{"weight_fraction", MINIMAL "weight = 1.5 #!\n",
	 "key 'weight' in [node a]: expected an integer 1..10000, got '1.5'"},
	{"node_port_zero", ROUTER "[node a]\naddress = 198.18.1.1:0 #!\n",
	 "key 'address' in [node a]: expected a unicast IPv4 address with an optional :port "
	 "(1..65535), got '198.18.1.1:0'"},
	{"node_port_big", ROUTER "[node a]\naddress = 198.18.1.1:65536 #!\n",
	 "key 'address' in [node a]: expected a unicast IPv4 address with an optional :port"},
	{"node_port_empty", ROUTER "[node a]\naddress = 198.18.1.1: #!\n",
	 "key 'address' in [node a]: expected a unicast IPv4 address with an optional :port"},
	{"node_hostname", ROUTER "[node a]\naddress = cache1:11211 #!\n",
	 "key 'address' in [node a]: expected a unicast IPv4 address with an optional :port"},
	{"node_broadcast", ROUTER "[node a]\naddress = 255.255.255.255 #!\n",
	 "key 'address' in [node a]: expected a unicast IPv4 address"},
	{"node_is_router", ROUTER "[node a]\naddress = 198.18.0.1:11211 #!\n",
	 "key 'address' in [node a]: 198.18.0.1 is the router's own address"},
	{"node_same_endpoint", MINIMAL "[node b]\naddress = 198.18.1.1:11211 #!\n",
	 "key 'address' in [node b]: 198.18.1.1:11211 is also node a (line 5)"},
	{"node_mac", MINIMAL "mac = ff:ff:ff:ff:ff:ff #!\n",
	 "key 'mac' in [node a]: expected a unicast MAC address"},
	{"node_unknown_key", MINIMAL "wieght = 2 #!\n",
	 "key 'wieght' in [node a]: unknown key (did you mean 'weight'?)"},
	{"node_port_key", MINIMAL "port = 11211 #!\n",
	 "key 'port' in [node a]: unknown key (it belongs in [router])"},
	/* [timeouts] */
	{"request_ms_zero", MINIMAL "[timeouts]\nrequest_ms = 0 #!\n",
	 "key 'request_ms' in [timeouts]: expected an integer 1..60000, got '0'"},
	{"arp_retry_small", MINIMAL "[timeouts]\narp_retry_ms = 9 #!\n",
	 "key 'arp_retry_ms' in [timeouts]: expected an integer 10..60000, got '9'"},
	{"arp_attempts_big", MINIMAL "[timeouts]\narp_attempts = 101 #!\n",
	 "key 'arp_attempts' in [timeouts]: expected an integer 1..100, got '101'"},
	{"arp_lifetime_big", MINIMAL "[timeouts]\narp_lifetime_s = 86401 #!\n",
	 "key 'arp_lifetime_s' in [timeouts]: expected an integer 1..86400"},
	/* [tables] */
	{"slots_pow2", MINIMAL "[tables]\nrequest_slots = 1000 #!\n",
	 "key 'request_slots' in [tables]: expected a power of two 64..65536, got '1000'"},
	{"slots_small", MINIMAL "[tables]\nrequest_slots = 32 #!\n",
	 "key 'request_slots' in [tables]: expected a power of two 64..65536, got '32'"},
	{"slots_big", MINIMAL "[tables]\nrequest_slots = 131072 #!\n",
	 "key 'request_slots' in [tables]: expected a power of two 64..65536"},
	{"generation_bits",
	 ROUTER "reply_port_count = 16\n" NODE_A "[tables]\nrequest_slots = 65536 #!\n",
	 "keys 'request_slots' in [tables] and 'reply_port_count' in [router]: 65536 slots over 16 "
	 "reply ports leave 4 generation bits in a request id, at least 12 are needed"},
	{"merged_datagrams",
	 ROUTER "mtu = 576\n" NODE_A "[tables]\nmultiget_buffer_kb = 65536 #!\n",
	 "keys 'multiget_buffer_kb' in [tables] and 'mtu' in [router]: the largest merged "
	 "multi-get reply (65536 KiB in datagrams of mtu 576) would take 124414 datagrams, more "
	 "than the 65535 a frame header can number"},
	{"send_burst_zero", MINIMAL "[tables]\nmultiget_send_burst = 0 #!\n",
	 "key 'multiget_send_burst' in [tables]: expected an integer 1..65535, got '0'"},
	{"mbufs_small", MINIMAL "[tables]\nmbufs = 1023 #!\n",
	 "key 'mbufs' in [tables]: expected an integer 1024..4194304, got '1023'"},
	{"mbuf_cache_big", MINIMAL "[tables]\nmbuf_cache = 513 #!\n",
	 "key 'mbuf_cache' in [tables]: expected an integer 0..512"},
	{"burst_zero", MINIMAL "[tables]\nburst = 0 #!\n",
	 "key 'burst' in [tables]: expected an integer 1..256, got '0'"},
	{"burst_vs_desc", MINIMAL "[tables]\nrx_desc = 64\nburst = 128 #!\n",
	 "key 'burst' in [tables]: 128 is more than rx_desc (64) or tx_desc (1024)"},
	{"rx_desc_pow2", MINIMAL "[tables]\nrx_desc = 1000 #!\n",
	 "key 'rx_desc' in [tables]: expected a power of two 64..16384"},
	{"tx_desc_big", MINIMAL "[tables]\ntx_desc = 32768 #!\n",
	 "key 'tx_desc' in [tables]: expected a power of two 64..16384"},
	{"handoff_small", MINIMAL "[tables]\nhandoff_ring = 32 #!\n",
	 "key 'handoff_ring' in [tables]: expected a power of two 64..65536"},
	{"neighbours_small", MINIMAL "[tables]\nneighbours = 15 #!\n",
	 "key 'neighbours' in [tables]: expected an integer 16..65536"},
	/* [control] */
	{"socket_relative", MINIMAL "[control]\nsocket = run/ringway.sock #!\n",
	 "key 'socket' in [control]: expected an absolute path of at most 107 bytes, got "
	 "'run/ringway.sock'"},
	{"socket_too_long", MINIMAL "[control]\nsocket = /" LONG50 LONG50 "abcdefg #!\n",
	 "key 'socket' in [control]: expected an absolute path of at most 107 bytes"},
	{"socket_dir", MINIMAL "[control]\nsocket = /run/ringway/ #!\n",
	 "key 'socket' in [control]: expected an absolute path"},
	{"state_file_empty", MINIMAL "[control]\nstate_file = #!\n",
	 "key 'state_file' in [control]: expected an absolute path of at most 255 bytes, got ''"},
	{"tcp_port_big", MINIMAL "[control]\ntcp_port = 65536 #!\n",
	 "key 'tcp_port' in [control]: expected an integer 0..65535"},
	{"tcp_port_in_reply_range", MINIMAL "[control]\ntcp_port = 32768 #!\n",
	 "key 'tcp_port' in [control]: port 32768 lies in the reply range 32768..49151"},
	/* issue 12: client identity and slots */
	{"client_mac_group", ROUTER "allowed_client_macs = 01:00:5e:00:00:01 #!\n" NODE_A,
	 "key 'allowed_client_macs' in [router]: expected empty or a comma-separated list of up "
	 "to 64 unicast MACs, got '01:00:5e:00:00:01'"},
	{"client_mac_twice",
	 ROUTER "allowed_client_macs = 02:00:00:00:00:01, 02:00:00:00:00:01 #!\n" NODE_A,
	 "key 'allowed_client_macs' in [router]: MAC '02:00:00:00:00:01' is listed twice"},
	{"client_mac_trailing_comma", ROUTER "allowed_client_macs = 02:00:00:00:00:01, #!\n" NODE_A,
	 "key 'allowed_client_macs' in [router]: expected empty or a comma-separated list"},
	{"quiet_read_over_request", MINIMAL "[timeouts]\nquiet_read_ms = 2000 #!\n",
	 "key 'quiet_read_ms' in [timeouts]: 2000 is more than request_ms (1000)"},
	{"client_slots_big", MINIMAL "[tables]\nclient_slots_max = 65537 #!\n",
	 "key 'client_slots_max' in [tables]: expected an integer 0..65536"},
	{"tcp_port_without_token", MINIMAL "[control]\ntcp_port = 7000 #!\n",
	 "key 'tcp_port' in [control]: the TCP listener needs 'tcp_token_file'"},
	/* [log] */
	{"log_level", MINIMAL "[log]\nlevel = verbose #!\n",
	 "key 'level' in [log]: expected emerg, alert, crit, err, warning, notice, info or debug, "
	 "got 'verbose'"},
	{"log_level_number", MINIMAL "[log]\nlevel = 7 #!\n",
	 "key 'level' in [log]: expected emerg"},
	{"vlan_big", ROUTER "vlan = 4095 #!\n" NODE_A,
	 "key 'vlan' in [router]: expected empty or an integer 0..4094, got '4095'"},
	{"vlan_word", ROUTER "vlan = ten #!\n" NODE_A,
	 "key 'vlan' in [router]: expected empty or an integer 0..4094"},
	{"node_port_alone", ROUTER "node_port = 1 #!\n" NODE_A,
	 "key 'node_port' in [router]: two ports need 'node_address'"},
	{"node_port_same", ROUTER "node_port = 0 #!\nnode_address = 198.18.1.254\n" NODE_A,
	 "key 'node_port' in [router]: 0 is also 'port'"},
	{"node_address_same", ROUTER "node_port = 1\nnode_address = 198.18.0.1 #!\n" NODE_A,
	 "key 'node_address' in [router]: the node port needs an address of its own"},
	{"node_at_node_address", ROUTER "node_port = 1\nnode_address = 198.18.1.1\n" NODE_A_MARKED,
	 "key 'address' in [node a]: 198.18.1.1 is the router's node_address"},
	{"client_port_one_port", ROUTER "client_port = 1 #!\n" NODE_A,
	 "key 'client_port' in [router]: needs node_port (two ports); one port is 'port'"},
	{"client_port_vs_port",
	 "[router]\nport = 0\naddress = 198.18.0.1\nallowed_clients = 198.18.0.0/24\n"
	 "node_port = 2\nnode_address = 198.18.1.254\nclient_port = 1 #!\n" NODE_A,
	 "keys 'client_port' and 'port' (line 2) in [router]: 1 and 0 name different client "
	 "ports; give one of them"},
	{"client_port_is_node_port",
	 ROUTER "client_port = 1\nnode_port = 1 #!\nnode_address = 198.18.1.254\n" NODE_A,
	 "key 'node_port' in [router]: 1 is also 'port'"},
	{"node_vlan_one_port", ROUTER "node_vlan = 5 #!\n" NODE_A,
	 "section [router]: node_address and node_vlan need node_port"},
	/* IPv6 (issue 19) */
	{"address6_multicast", ROUTER "address6 = ff02::1 #!\n" NODE_A,
	 "key 'address6' in [router]: expected empty or a unicast IPv6 address (not ::, ::1 or "
	 "multicast), got 'ff02::1'"},
	{"address6_v4", ROUTER "address6 = 198.18.0.1 #!\n" NODE_A,
	 "key 'address6' in [router]: expected empty or a unicast IPv6 address"},
	{"address6_mapped", ROUTER "address6 = ::ffff:198.18.0.1 #!\n" NODE_A,
	 "key 'address6' in [router]: expected empty or a unicast IPv6 address"},
	{"allowed6_host_bits",
	 "[router]\naddress = 198.18.0.1\n"
	 "allowed_clients = 198.18.0.0/24, 2001:2::100/64 #!\n" NODE_A,
	 "key 'allowed_clients' in [router]: expected IPv6 prefixes like 2001:db8::/64 "
	 "('2001:2::100/64': "},
	{"allowed6_twice",
	 "[router]\naddress = 198.18.0.1\n"
	 "allowed_clients = 2001:2::/64, 2001:2::/64 #!\n" NODE_A,
	 "key 'allowed_clients' in [router]: prefix '2001:2::/64' is listed twice"},
	/* IPv6-only: no `address`; IPv4 clients and nodes need one */
	{"no_address_either", "[router] #!\nallowed_clients = 2001:2::/64\n" NODE_A,
	 "section [router]: missing key 'address' (a unicast IPv4 address) or 'address6' (a "
	 "unicast IPv6 address): the router needs one of them or both"},
	{"v6only_ipv4_prefix",
	 "[router]\naddress6 = 2001:2::1\nallowed_clients = 2001:2::/64, 198.18.0.0/24 #!\n"
	 "[node a]\naddress = [2001:2::1:1]\n",
	 "key 'allowed_clients' in [router]: 198.18.0.0/24 is an IPv4 prefix and the router has "
	 "no IPv4 'address'"},
	{"v6only_ipv4_node",
	 "[router]\naddress6 = 2001:2::1\nallowed_clients = 2001:2::/64\n[node a]\n"
	 "address = [2001:2::1:1]\n[node b]\naddress = 198.18.1.2 #!\n",
	 "key 'address' in [node b]: an IPv4 node needs the router's IPv4 ('address' in [router]"},
	{"v6only_ipv4_gutter",
	 "[router]\naddress6 = 2001:2::1\nallowed_clients = 2001:2::/64\n[node a]\n"
	 "address = [2001:2::1:1]\n[gutter g]\naddress = 198.18.1.9:11300 #!\n",
	 "key 'address' in [gutter g]: an IPv4 node needs the router's IPv4"},
	{"v6only_two_ports_no_node_address",
	 "[router]\naddress6 = 2001:2::1\nallowed_clients = 2001:2::/64\nnode_port = 1 #!\n"
	 "[node a]\naddress = [2001:2::1:1]\n",
	 "key 'node_port' in [router]: two ports need 'node_address', the router's IPv4 on the "
	 "node network, or 'node_address6' (or both)"},
	{"two_ports_ipv4_node_no_node_address",
	 ROUTER "address6 = 2001:2::1\nnode_port = 1\nnode_address6 = 2001:3::1\n[node a]\n"
		"address = [2001:3::5]\n[node b]\naddress = 198.18.1.2 #!\n",
	 "key 'address' in [node b]: two ports and an IPv4 node need 'node_address' in [router]"},
	{"node6_no_address6", ROUTER "[node a]\naddress = [2001:2::1:1]:11211 #!\n",
	 "key 'address' in [node a]: an IPv6 node needs the router's IPv6 ('address6' in "
	 "[router])"},
	{"node6_bad", ROUTER "address6 = 2001:2::1\n[node a]\naddress = [2001:2::1:1]:0 #!\n",
	 "key 'address' in [node a]: expected a unicast IPv6 address in brackets with an "
	 "optional :port (1..65535) like [2001:db8::5]:11211, got '[2001:2::1:1]:0'"},
	{"node6_multicast", ROUTER "address6 = 2001:2::1\n[node a]\naddress = [ff02::1] #!\n",
	 "key 'address' in [node a]: expected a unicast IPv6 address in brackets"},
	{"node6_is_router", ROUTER "address6 = 2001:2::1\n[node a]\naddress = [2001:2::1] #!\n",
	 "key 'address' in [node a]: 2001:2::1 is the router's own address6"},
	{"node6_same_endpoint",
	 ROUTER "address6 = 2001:2::1\n[node a]\naddress = [2001:2::5]\n[node b]\n"
		"address = [2001:2:0::5]:11211 #!\n",
	 "key 'address' in [node b]: [2001:2::5]:11211 is also node a (line 6)"},
	{"node6_no_route",
	 ROUTER "address6 = 2001:2::1\n[route]\nstatic = 2001:2::/64 direct\n[node a]\n"
		"address = [2001:2:3::5] #!\n",
	 "key 'address' in [node a]: no route to 2001:2:3::5 (add a 'static' route or "
	 "'default_gateway6' in [route])"},
	{"default6_twice",
	 MINIMAL "[route]\nstatic = default6 via 2001:2::fe\ndefault_gateway6 = 2001:2::fd #!\n",
	 "key 'default_gateway6' in [route]: 'static' has an IPv6 default route already"},
	{"node_address6_one_port", ROUTER "node_address6 = 2001:2::9 #!\n" NODE_A,
	 "section [router]: node_address6 needs node_port (two ports)"},
	{"node6_two_ports_no_address6",
	 ROUTER "address6 = 2001:2::1\nnode_port = 1\nnode_address = 198.18.1.254\n"
		"[node a]\naddress = [2001:2::1:1] #!\n",
	 "key 'address' in [node a]: two ports and an IPv6 node need 'node_address6' in "
	 "[router]"},
	/* [route] */
	{"route_bad", MINIMAL "[route]\nstatic = 198.18.2.0/24 by 198.18.0.254 #!\n",
	 "key 'static' in [route]: expected 'via GW' or 'direct' after the prefix"},
	{"route_host_bits", MINIMAL "[route]\nstatic = 198.18.2.1/24 direct #!\n",
	 "key 'static' in [route]: prefix 198.18.2.1/24 has host bits set"},
	{"route_twice",
	 MINIMAL "[route]\nstatic = 198.18.2.0/24 direct\n"
		 "static = 198.18.2.0/24 via 198.18.0.9 #!\n",
	 "key 'static' in [route]: route '198.18.2.0/24 via 198.18.0.9': its prefix is listed"},
	{"route_gateway_off_segment",
	 MINIMAL
	 "[route]\nstatic = 198.18.0.0/24 direct #!\nstatic = 198.18.1.0/24 via 198.18.5.1\n",
	 "section [route]: route 198.18.1.0/24 via 198.18.5.1: gateway 198.18.5.1 is in no direct"},
	{"route_node_unreachable",
	 ROUTER "[node a]\naddress = 198.18.1.1 #!\n[route]\nstatic = 198.18.0.0/24 direct\n",
	 "key 'address' in [node a]: no route to 198.18.1.1 (add a 'static' route"},
	{"route_two_defaults",
	 MINIMAL "[route]\nstatic = default via 198.18.0.9\ndefault_gateway = 198.18.0.8 #!\n",
	 "key 'default_gateway' in [route]: 'static' has a default route already"},
	{"route_gateway_bad", MINIMAL "[route]\ndefault_gateway = 127.0.0.1 #!\n",
	 "key 'default_gateway' in [route]: expected empty or a unicast IPv4 address"},
};

static void test_bad(void **state)
{
	const struct bad_case *c = *state;

	expect_error(c->text, c->what);
}

/* ---- bad configs that need more than a string ---- */

static void test_exact_message(void **state)
{
	struct rw_config *cfg = malloc(sizeof(*cfg));
	char err[512], want[512];

	(void)state;
	assert_non_null(cfg);
	assert_int_equal(load_text(MINIMAL "weight = 0\n", cfg, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s:6: key 'weight' in [node a]: expected an integer 1..10000, got '0'", tmp_path);
	assert_string_equal(err, want);
	free(cfg);
}

/* [gutter NAME]: node keys, out of the members, in file order; names and addresses checked
 * against the nodes'; at least one [node NAME] still needed; dumped back as [gutter NAME]. */
static void test_gutter_sections(void **state)
{
	struct rw_config *cfg;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	cfg = load_ok(ROUTER "[gutter g1]\naddress = 198.18.1.50:11300\n" NODE_A
			     "[gutter g2]\naddress = 198.18.1.51\nweight = 2\n"
			     "[failover]\nmode = gutter\n");
	assert_int_equal(cfg->n_nodes, 1);
	assert_string_equal(cfg->nodes[0].member.name, "a");
	assert_int_equal(cfg->n_gutter, 2);
	assert_string_equal(cfg->gutter[0].member.name, "g1");
	assert_int_equal(cfg->gutter[0].member.port, 11300);
	assert_string_equal(cfg->gutter[1].member.name, "g2");
	assert_int_equal(cfg->gutter[1].member.weight, 2);
	assert_int_equal(cfg->failover.mode, DP_FAILOVER_GUTTER);
	f = open_memstream(&text, &len);
	assert_int_equal(rw_config_dump(cfg, f), 0);
	fclose(f);
	assert_non_null(strstr(text, "[gutter g2]\naddress = 198.18.1.51:11211\n"));
	free(text);
	free(cfg);
	expect_error(ROUTER NODE_A "[gutter a] #!\n", "section [gutter a]: appears twice");
	expect_error(ROUTER NODE_A "[gutter g]\naddress = 198.18.1.1 #!\n",
		     "key 'address' in [gutter g]: 198.18.1.1:11211 is also node a");
	expect_error(ROUTER "[gutter g]\naddress = 198.18.1.9\n",
		     "no [node NAME] section: at least one node is needed");
	expect_error(ROUTER NODE_A "[gutter g] #!\n", "section [gutter g]: missing key 'address'");
}

static void test_nul_byte(void **state)
{
	static const char text[] = ROUTER "mtu = 1500\0\n" NODE_A;
	struct rw_config *cfg = malloc(sizeof(*cfg));
	char err[512], want[256];

	(void)state;
	assert_non_null(cfg);
	write_tmp(text, sizeof(text) - 1);
	assert_int_equal(rw_config_load(tmp_path, cfg, err, sizeof(err)), -EINVAL);
	unlink(tmp_path);
	snprintf(want, sizeof(want), "%s:4: NUL byte in the file", tmp_path);
	assert_string_equal(err, want);
	free(cfg);
}

static void test_missing_file(void **state)
{
	struct rw_config *cfg = malloc(sizeof(*cfg));
	char err[512];

	(void)state;
	assert_non_null(cfg);
	assert_int_equal(rw_config_load("/nonexistent/ringway.conf", cfg, err, sizeof(err)),
			 -ENOENT);
	assert_string_equal(err,
			    "/nonexistent/ringway.conf: cannot open: No such file or directory");
	free(cfg);
}

static void test_small_error_buffer(void **state)
{
	struct rw_config *cfg = malloc(sizeof(*cfg));
	char err[8];

	(void)state;
	assert_non_null(cfg);
	memset(err, 'x', sizeof(err));
	assert_int_equal(load_text(ROUTER, cfg, err, sizeof(err)), -EINVAL);
	assert_int_equal(strlen(err), sizeof(err) - 1);
	assert_int_equal(load_text(ROUTER, cfg, NULL, 0), -EINVAL);
	free(cfg);
}

/* Builds a file with @p n nodes. */
static char *many_nodes(uint32_t n)
{
	size_t cap = 128 + (size_t)n * 64, o;
	char *text = malloc(cap);

	assert_non_null(text);
	o = (size_t)snprintf(text, cap, "%s", ROUTER);
	for (uint32_t i = 0; i < n; i++)
		o += (size_t)snprintf(text + o, cap - o, "[node n%u]\naddress = 198.19.%u.%u\n", i,
				      i / 250, i % 250 + 1);
	return text;
}

static void test_too_many_nodes(void **state)
{
	char *text = many_nodes(RW_CFG_NODES_MAX + 1);
	char what[64];
	/* the marker can't go in the text cheaply: node i's header is on line 4 + 2 * i */
	struct rw_config *cfg = malloc(sizeof(*cfg));
	char err[512], want[512];

	(void)state;
	assert_non_null(cfg);
	assert_int_equal(load_text(text, cfg, err, sizeof(err)), -EINVAL);
	snprintf(what, sizeof(what), "n%u", RW_CFG_NODES_MAX);
	snprintf(want, sizeof(want), "%s:%u: section [node %s]: more than %u nodes", tmp_path,
		 4 + 2 * RW_CFG_NODES_MAX, what, RW_CFG_NODES_MAX);
	assert_string_equal(err, want);
	free(cfg);
	free(text);
}

static void test_neighbours_vs_nodes(void **state)
{
	char *nodes = many_nodes(17), *text = malloc(strlen(nodes) + 64);

	(void)state;
	assert_non_null(text);
	/* ROUTER is 3 lines and each node 2: [tables] is line 38, neighbours line 39 */
	sprintf(text, "%s[tables]\nneighbours = 16 #!\n", nodes);
	assert_int_equal(marked_line(text), 39);
	expect_error(text, "key 'neighbours' in [tables]: 16 entries cannot hold the 17 nodes");
	free(text);
	free(nodes);
}

/* ---- good configs ---- */

static uint32_t ip(const char *s)
{
	struct in_addr a;

	assert_int_equal(inet_pton(AF_INET, s, &a), 1);
	return a.s_addr;
}

/* The client MAC binding accumulates over lines; the slot keys load. */
static void test_client_keys(void **state)
{
	struct rw_config *c = load_ok(ROUTER "allowed_client_macs = 02:00:00:00:00:01, "
					     "02:00:00:00:00:02\n"
					     "allowed_client_macs = 02:AB:00:00:00:03\n" NODE_A
					     "[timeouts]\nrequest_ms = 500\nquiet_read_ms = 500\n"
					     "[tables]\nclient_slots_max = 0\n");
	const uint8_t third[6] = {0x02, 0xab, 0, 0, 0, 0x03};

	(void)state;
	assert_int_equal(c->router.n_allowed_client_macs, 3);
	assert_memory_equal(c->router.allowed_client_macs[2], third, 6);
	assert_int_equal(c->timeouts.quiet_read_ms, 500);
	assert_int_equal(c->tables.client_slots_max, 0);
	free(c);
}

/* Every default as config.h and docs/config.md state it. */
static void test_defaults_applied(void **state)
{
	struct rw_config *c = load_ok(MINIMAL);

	(void)state;
	assert_int_equal(c->router.port, 0);
	assert_int_equal(c->router.address, ip("198.18.0.1"));
	assert_false(c->router.has_mac);
	assert_int_equal(c->router.n_listen_ports, 1);
	assert_int_equal(c->router.listen_ports[0], 11211);
	assert_int_equal(c->router.reply_port_base, 32768);
	assert_int_equal(c->router.reply_port_count, 16384);
	assert_int_equal(c->router.n_allowed_clients, 1);
	assert_int_equal(c->router.allowed_clients[0].addr, ip("198.18.0.0"));
	assert_int_equal(c->router.allowed_clients[0].mask, ip("255.255.255.0"));
	assert_int_equal(c->router.allowed_clients[0].len, 24);
	assert_int_equal(c->router.idle, DP_IDLE_POLL);
	assert_int_equal(c->router.backoff_us, 100);
	assert_int_equal(c->router.backoff_after, 1024);
	assert_int_equal(c->router.mtu, 1500);
	assert_int_equal(c->placement.algo, PL_ALGO_RING);
	assert_int_equal(c->placement.vnodes, 160);
	assert_int_equal(c->placement.hash_tag[0], '\0');
	assert_int_equal(c->placement.hash_tag[1], '\0');
	assert_int_equal(c->placement.key_hash, PL_HASH_XXH3);
	assert_int_equal(c->placement.maglev_size, 65537);
	assert_int_equal(c->n_nodes, 1);
	assert_string_equal(c->nodes[0].member.name, "a");
	assert_string_equal(c->nodes[0].member.addr, "198.18.1.1");
	assert_int_equal(c->nodes[0].member.port, 11211);
	assert_int_equal(c->nodes[0].member.weight, 1);
	assert_int_equal(c->nodes[0].ip, ip("198.18.1.1"));
	assert_false(c->nodes[0].has_mac);
	assert_int_equal(c->timeouts.request_ms, 1000);
	assert_int_equal(c->timeouts.quiet_read_ms, 20);
	assert_int_equal(c->tables.client_slots_max, 1024);
	assert_int_equal(c->router.n_allowed_client_macs, 0);
	assert_int_equal(c->timeouts.arp_retry_ms, 1000);
	assert_int_equal(c->timeouts.arp_attempts, 5);
	assert_int_equal(c->timeouts.arp_lifetime_s, 300);
	assert_int_equal(c->tables.request_slots, 4096);
	assert_int_equal(c->tables.mbufs, 16383);
	assert_int_equal(c->tables.mbuf_cache, 256);
	assert_int_equal(c->tables.burst, 32);
	assert_int_equal(c->tables.rx_desc, 1024);
	assert_int_equal(c->tables.tx_desc, 1024);
	assert_int_equal(c->tables.handoff_ring, 1024);
	assert_int_equal(c->tables.neighbours, 1024);
	/* ringway and ringwayctl default to the same socket: one constant, in control.h */
	assert_string_equal(c->control.socket, CTL_DEFAULT_SOCKET);
	assert_string_equal(CTL_DEFAULT_SOCKET, "/run/ringway/ctl.sock");
	assert_string_equal(c->control.state_file, "/var/lib/ringway/state");
	assert_int_equal(c->control.tcp_port, 0);
	assert_int_equal(c->log.level, 7);
	free(c);
}

static void test_defaults_function(void **state)
{
	struct rw_config *a = malloc(sizeof(*a));
	struct rw_config *b = load_ok(MINIMAL);

	(void)state;
	assert_non_null(a);
	rw_config_defaults(a);
	assert_int_equal(a->router.address, 0);
	assert_int_equal(a->router.n_allowed_clients, 0);
	assert_int_equal(a->n_nodes, 0);
	/* apart from the required values, the defaults are what a minimal file loads to */
	a->router.address = b->router.address;
	a->router.allowed_clients[0] = b->router.allowed_clients[0];
	a->router.n_allowed_clients = 1;
	a->nodes[0] = b->nodes[0];
	a->n_nodes = 1;
	assert_memory_equal(a, b, sizeof(*a));
	free(a);
	free(b);
}

static void test_every_value(void **state)
{
	struct rw_config *c = load_ok("# leading comment\n"
				      "  [ router ]  # spaces around the name\n"
				      "port=3\n"
				      "\taddress\t=\t198.18.0.9   \n"
				      "mac = 02:AB:cd:00:00:01\n"
				      "listen_ports = 11211,11212\n"
				      "listen_ports = 11213 # a second line adds to the first\n"
				      "reply_port_base = 32768\n"
				      "reply_port_count = 32768\n"
				      "allowed_clients = 0.0.0.0/0, 198.18.0.7/32\n"
				      "allowed_clients = 10.0.0.0/8\n"
				      "idle = backoff\n"
				      "backoff_us = 100000\n"
				      "backoff_after = 1\n"
				      "mtu = 9000\n"
				      "[placement]\n"
				      "algorithm = twemproxy\n"
				      "vnodes = 10000\n"
				      "hash_tag = ::\n"
				      "key_hash = murmur\n"
				      "maglev_size = 16777213\n"
				      "[node cache-1.a_b]\n"
				      "address = 198.19.255.254:1\n"
				      "weight = 10000\n"
				      "mac = 02:00:00:00:00:ff\n"
				      "[node 2]\n"
				      "address = 198.19.255.254:65535\n"
				      "[timeouts]\n"
				      "request_ms = 60000\n"
				      "arp_retry_ms = 10\n"
				      "arp_attempts = 100\n"
				      "arp_lifetime_s = 86400\n"
				      "[tables]\n"
				      "request_slots = 65536\n"
				      "mbufs = 4194304\n"
				      "mbuf_cache = 0\n"
				      "burst = 64\n"
				      "rx_desc = 64\n"
				      "tx_desc = 16384\n"
				      "handoff_ring = 65536\n"
				      "neighbours = 16\n"
				      "[control]\n"
				      "socket = /tmp/r.sock\n"
				      "state_file = /var/lib/ringway state/with space\n"
				      "tcp_port = 1\n"
				      "tcp_token_file = /etc/ringway/ctl.token\n"
				      "[log]\n"
				      "level = debug\n");

	(void)state;
	assert_int_equal(c->router.port, 3);
	assert_int_equal(c->router.address, ip("198.18.0.9"));
	assert_true(c->router.has_mac);
	assert_memory_equal(c->router.mac, ((uint8_t[]){0x02, 0xab, 0xcd, 0, 0, 1}), 6);
	assert_int_equal(c->router.n_listen_ports, 3);
	assert_int_equal(c->router.listen_ports[0], 11211);
	assert_int_equal(c->router.listen_ports[1], 11212);
	assert_int_equal(c->router.listen_ports[2], 11213);
	assert_int_equal(c->router.reply_port_base, 32768);
	assert_int_equal(c->router.reply_port_count, 32768);
	assert_int_equal(c->router.n_allowed_clients, 3);
	assert_int_equal(c->router.allowed_clients[0].addr, 0);
	assert_int_equal(c->router.allowed_clients[0].mask, 0);
	assert_int_equal(c->router.allowed_clients[0].len, 0);
	assert_int_equal(c->router.allowed_clients[1].addr, ip("198.18.0.7"));
	assert_int_equal(c->router.allowed_clients[1].mask, ip("255.255.255.255"));
	assert_int_equal(c->router.allowed_clients[2].addr, ip("10.0.0.0"));
	assert_int_equal(c->router.allowed_clients[2].mask, ip("255.0.0.0"));
	assert_int_equal(c->router.idle, DP_IDLE_BACKOFF);
	assert_int_equal(c->router.backoff_us, 100000);
	assert_int_equal(c->router.backoff_after, 1);
	assert_int_equal(c->router.mtu, 9000);
	assert_int_equal(c->placement.algo, PL_ALGO_TWEMPROXY);
	assert_int_equal(c->placement.vnodes, 10000);
	assert_memory_equal(c->placement.hash_tag, "::", 2);
	assert_int_equal(c->placement.key_hash, PL_HASH_MURMUR);
	assert_int_equal(c->placement.maglev_size, 16777213);
	assert_int_equal(c->n_nodes, 2);
	assert_string_equal(c->nodes[0].member.name, "cache-1.a_b");
	assert_string_equal(c->nodes[0].member.addr, "198.19.255.254");
	assert_int_equal(c->nodes[0].member.port, 1);
	assert_int_equal(c->nodes[0].member.weight, 10000);
	assert_true(c->nodes[0].has_mac);
	assert_memory_equal(c->nodes[0].mac, ((uint8_t[]){2, 0, 0, 0, 0, 0xff}), 6);
	assert_string_equal(c->nodes[1].member.name, "2");
	assert_int_equal(c->nodes[1].member.port, 65535);
	assert_int_equal(c->nodes[1].member.weight, 1);
	assert_false(c->nodes[1].has_mac);
	assert_int_equal(c->timeouts.request_ms, 60000);
	assert_int_equal(c->timeouts.arp_retry_ms, 10);
	assert_int_equal(c->timeouts.arp_attempts, 100);
	assert_int_equal(c->timeouts.arp_lifetime_s, 86400);
	assert_int_equal(c->tables.request_slots, 65536);
	assert_int_equal(c->tables.mbufs, 4194304);
	assert_int_equal(c->tables.mbuf_cache, 0);
	assert_int_equal(c->tables.burst, 64);
	assert_int_equal(c->tables.rx_desc, 64);
	assert_int_equal(c->tables.tx_desc, 16384);
	assert_int_equal(c->tables.handoff_ring, 65536);
	assert_int_equal(c->tables.neighbours, 16);
	assert_string_equal(c->control.socket, "/tmp/r.sock");
	assert_string_equal(c->control.state_file, "/var/lib/ringway state/with space");
	assert_int_equal(c->control.tcp_port, 1);
	assert_string_equal(c->control.tcp_token_file, "/etc/ringway/ctl.token");
	assert_int_equal(c->log.level, 8);
	free(c);
}

static void test_crlf_and_empty_optional(void **state)
{
	struct rw_config *c = load_ok("[router]\r\naddress = 198.18.0.1\r\n"
				      "allowed_clients = 198.18.0.0/15\r\n"
				      "[placement]\r\nhash_tag =\r\nkey_hash = \r\n"
				      "[node a]\r\naddress = 198.18.1.1\r\n");

	(void)state;
	assert_int_equal(c->router.allowed_clients[0].len, 15);
	assert_int_equal(c->placement.hash_tag[0], '\0');
	assert_int_equal(c->placement.key_hash, PL_HASH_XXH3);
	assert_int_equal(c->n_nodes, 1);
	free(c);
}

/* Routes: the nodes' next hops as the router resolves them. */
static void test_routes(void **state)
{
	struct rw_config *cfg = load_ok(ROUTER "[node a]\naddress = 198.18.2.7\n"
					       "[node b]\naddress = 198.18.0.7\n"
					       "[node c]\naddress = 198.19.0.7\n"
					       "[route]\nstatic = 198.18.0.0/24 direct, "
					       "198.18.2.0/24 via 198.18.0.254\n"
					       "default_gateway = 198.18.0.253\n");
	struct rt_table t;
	struct inet_addr a[3], nh;

	(void)state;
	rw_config_routes(cfg, &t);
	assert_int_equal(t.n, 3);
	assert_false(cfg->router.has_vlan); /* unset: any VLAN */
	for (int i = 0; i < 3; i++)
		inet_from_v4(&a[i], cfg->nodes[i].ip);
	assert_int_equal(rt_lookup(&t, &a[0], &nh), 0);
	assert_int_equal(inet_v4(&nh), htonl(0xc61200fe));
	assert_int_equal(rt_lookup(&t, &a[1], &nh), 0);
	assert_int_equal(inet_v4(&nh), cfg->nodes[1].ip);
	assert_int_equal(rt_lookup(&t, &a[2], &nh), 0);
	assert_int_equal(inet_v4(&nh), htonl(0xc61200fd));
	free(cfg);
}

static void test_vlan(void **state)
{
	struct rw_config *cfg = load_ok(ROUTER "vlan = 0\n" NODE_A);

	(void)state;
	assert_true(cfg->router.has_vlan);
	assert_int_equal(cfg->router.vlan, 0);
	free(cfg);
	cfg = load_ok(ROUTER "vlan = 4094\n" NODE_A);
	assert_true(cfg->router.has_vlan);
	assert_int_equal(cfg->router.vlan, 4094);
	free(cfg);
}

static void test_two_ports(void **state)
{
	struct rw_config *cfg = load_ok(ROUTER "node_port = 1\nnode_address = 198.18.1.254\n"
					       "node_vlan = 7\n" NODE_A);

	(void)state;
	assert_true(cfg->router.has_node_port);
	assert_int_equal(cfg->router.node_port, 1);
	assert_int_equal(cfg->router.node_address, htonl(0xc61201fe));
	assert_true(cfg->router.has_node_vlan);
	assert_int_equal(cfg->router.node_vlan, 7);
	assert_false(cfg->router.has_client_port);
	assert_int_equal(cfg->router.port, 0);
	free(cfg);
	/* client_port, the two-port name of `port`: alone, or with `port` of the same id. */
	cfg = load_ok(ROUTER
		      "client_port = 3\nnode_port = 1\nnode_address = 198.18.1.254\n" NODE_A);
	assert_true(cfg->router.has_client_port);
	assert_int_equal(cfg->router.port, 3);
	assert_int_equal(cfg->router.node_port, 1);
	free(cfg);
	cfg = load_ok("[router]\nport = 2\naddress = 198.18.0.1\nallowed_clients = 198.18.0.0/24\n"
		      "client_port = 2\nnode_port = 0\nnode_address = 198.18.1.254\n" NODE_A);
	assert_int_equal(cfg->router.port, 2);
	assert_int_equal(cfg->router.node_port, 0);
	free(cfg);
}

/* IPv6: address6, IPv6 prefixes beside IPv4 ones, IPv6 nodes (member text without
 * brackets, default port), the dump printing them back. */
static void test_ipv6_keys(void **state)
{
	struct rw_config *cfg = load_ok("[router]\naddress = 198.18.0.1\naddress6 = 2001:2::1\n"
					"allowed_clients = 198.18.0.0/24, 2001:2::100/121\n"
					"[node a]\naddress = [2001:2::1:1]:11300\n"
					"[node b]\naddress = [2001:2::1:2]\n"
					"[node c]\naddress = 198.18.1.3\n");
	const uint8_t want[16] = {0x20, 0x01, 0, 2, [15] = 1};
	char *dump = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&dump, &len);

	(void)state;
	assert_memory_equal(cfg->router.address6, want, 16);
	assert_int_equal(cfg->router.n_allowed_clients, 2);
	assert_false(cfg->router.allowed_clients[0].v6);
	assert_true(cfg->router.allowed_clients[1].v6);
	assert_int_equal(cfg->router.allowed_clients[1].len, 121);
	assert_string_equal(cfg->nodes[0].member.addr, "2001:2::1:1");
	assert_int_equal(cfg->nodes[0].member.port, 11300);
	assert_int_equal(cfg->nodes[0].ip, 0);
	assert_false(inet_is_v4(&cfg->nodes[0].addr));
	assert_string_equal(cfg->nodes[1].member.addr, "2001:2::1:2");
	assert_int_equal(cfg->nodes[1].member.port, 11211);
	assert_true(inet_is_v4(&cfg->nodes[2].addr));
	assert_non_null(m);
	rw_config_dump(cfg, m);
	fclose(m);
	assert_non_null(strstr(dump, "address6 = 2001:2::1\n"));
	assert_non_null(strstr(dump, "allowed_clients = 198.18.0.0/24, 2001:2::100/121\n"));
	assert_non_null(strstr(dump, "address = [2001:2::1:1]:11300\n"));
	free(dump);
	free(cfg);
}

/* An IPv6-only router: no `address`, IPv6 prefixes and nodes, one port and two; the dump
 * leaves the IPv4 address out and loads again. */
static void test_ipv6_only(void **state)
{
	static const char one[] = "[router]\naddress6 = 2001:2::1\nallowed_clients = 2001:2::/64\n"
				  "[node a]\naddress = [2001:2::1:1]\n"
				  "[gutter g]\naddress = [2001:2::1:9]\n";
	static const char two[] = "[router]\naddress6 = 2001:2::1\nallowed_clients = 2001:2::/64\n"
				  "node_port = 1\nnode_address6 = 2001:3::1\n"
				  "[node a]\naddress = [2001:3::5]\n";
	struct rw_config *cfg = load_ok(one), *again;
	char *dump = NULL, path[] = "/tmp/rw-config-v6only-XXXXXX", err[512];
	size_t len = 0;
	FILE *m = open_memstream(&dump, &len);
	int fd;

	(void)state;
	assert_int_equal(cfg->router.address, 0);
	assert_int_equal(cfg->n_nodes, 1);
	assert_int_equal(cfg->n_gutter, 1);
	assert_non_null(m);
	rw_config_dump(cfg, m);
	fclose(m);
	assert_null(strstr(dump, "\naddress = 0.0.0.0"));
	assert_non_null(strstr(dump, "[router]\nport = 0\naddress6 = 2001:2::1\n"));
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, dump, len), (ssize_t)len);
	close(fd);
	again = malloc(sizeof(*again));
	assert_non_null(again);
	if (rw_config_load(path, again, err, sizeof(err)) != 0)
		fail_msg("the dump of an IPv6-only config does not load: %s", err);
	unlink(path);
	assert_int_equal(again->router.address, 0);
	free(again);
	free(dump);
	free(cfg);
	cfg = load_ok(two);
	assert_int_equal(cfg->router.address, 0);
	assert_int_equal(cfg->router.node_address, 0);
	assert_true(cfg->router.has_node_port);
	free(cfg);
}

/* IPv6 nodes behind an IPv6 gateway: a static route or default_gateway6 reaches them. */
static void test_ipv6_routes(void **state)
{
	struct rw_config *cfg = load_ok("[router]\naddress = 198.18.0.1\naddress6 = 2001:2::1\n"
					"allowed_clients = 198.18.0.0/24\n"
					"[node a]\naddress = [2001:2:2::5]\n"
					"[node b]\naddress = [2001:2:3::5]\n"
					"[route]\nstatic = 2001:2:2::/64 via 2001:2::fe\n"
					"default_gateway6 = 2001:2::fd\n");
	struct rt_table t;
	struct inet_addr a, nh, want;

	(void)state;
	rw_config_routes(cfg, &t);
	assert_int_equal(inet_parse("2001:2:3::5", 11, &a), 0);
	assert_int_equal(rt_lookup(&t, &a, &nh), 0);
	assert_int_equal(inet_parse("2001:2::fd", 10, &want), 0);
	assert_true(inet_equal(&nh, &want));
	free(cfg);
}

static void test_max_nodes(void **state)
{
	char *text = many_nodes(RW_CFG_NODES_MAX);
	struct rw_config *c = load_ok(text);
	struct pl_member *m = calloc(RW_CFG_NODES_MAX, sizeof(*m));

	(void)state;
	assert_non_null(m);
	assert_int_equal(c->n_nodes, RW_CFG_NODES_MAX);
	assert_string_equal(c->nodes[RW_CFG_NODES_MAX - 1].member.name, "n1023");
	assert_string_equal(c->nodes[RW_CFG_NODES_MAX - 1].member.addr, "198.19.4.24");
	rw_config_members(c, m);
	for (uint32_t i = 0; i < c->n_nodes; i++)
		assert_memory_equal(&m[i], &c->nodes[i].member, sizeof(m[i]));
	free(m);
	free(c);
	free(text);
}

static void test_sample_loads(void **state)
{
	struct rw_config *c = malloc(sizeof(*c));
	char err[512];
	int ret;

	(void)state;
	assert_non_null(c);
	ret = rw_config_load(SAMPLE, c, err, sizeof(err));
	if (ret != 0)
		fail_msg("%s", err);
	assert_int_equal(c->router.address, ip("198.18.0.1"));
	assert_int_equal(c->n_nodes, 4);
	assert_string_equal(c->nodes[2].member.name, "cache3");
	assert_int_equal(c->nodes[2].member.weight, 2);
	assert_true(c->nodes[2].has_mac);
	free(c);
}

/* Every key the loader knows is set (not commented out) in the sample, in its section. */
static void test_sample_covers_every_key(void **state)
{
	FILE *f = fopen(SAMPLE, "r");
	char line[512], section[64] = "";
	size_t n = rw_config_key_count();
	bool *seen = calloc(n, sizeof(*seen));

	(void)state;
	assert_non_null(f);
	assert_non_null(seen);
	while (fgets(line, sizeof(line), f)) {
		char key[64];

		if (sscanf(line, "[%63[a-z]", section) == 1)
			continue;
		if (sscanf(line, "%63[a-z_0-9] =", key) != 1 || strchr(line, '=') == NULL)
			continue;
		for (size_t i = 0; i < n; i++) {
			const char *s, *k;

			assert_int_equal(rw_config_key_at(i, &s, &k), 0);
			if (strcmp(s, section) == 0 && strcmp(k, key) == 0)
				seen[i] = true;
		}
	}
	fclose(f);
	for (size_t i = 0; i < n; i++) {
		const char *s, *k;

		rw_config_key_at(i, &s, &k);
		if (!seen[i])
			fail_msg("key '%s' in [%s] is missing from %s", k, s, SAMPLE);
	}
	free(seen);
	assert_int_equal(rw_config_key_at(n, &(const char *){NULL}, &(const char *){NULL}),
			 -ENOENT);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long len;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	buf[len] = '\0';
	fclose(f);
	return buf;
}

/* docs/config.md holds the reference the key table generates, unchanged. */
static void test_doc_matches_table(void **state)
{
	char *doc = slurp(DOC), *ref = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&ref, &len);

	(void)state;
	assert_non_null(m);
	assert_int_equal(rw_config_write_reference(m), 0);
	fclose(m);
	if (strstr(doc, ref) == NULL)
		fail_msg("%s is out of date; regenerate its table with:\n%s", DOC, ref);
	free(ref);
	free(doc);
}

/* --check prints a file that loads back to the same configuration. */
static void test_dump_round_trip(void **state)
{
	struct rw_config *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	char err[512], *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(m);
	assert_int_equal(rw_config_load(SAMPLE, a, err, sizeof(err)), 0);
	assert_int_equal(rw_config_dump(a, m), 0);
	fclose(m);
	if (load_text(text, b, err, sizeof(err)) != 0)
		fail_msg("dump does not load: %s\n%s", err, text);
	assert_memory_equal(a, b, sizeof(*a));
	assert_non_null(strstr(text, "[node cache3]\naddress = 198.18.1.3:11211\nweight = 2\n"
				     "mac = 02:00:c6:12:01:03\n"));
	free(text);
	free(a);
	free(b);
}

/* One random edit of @p buf (length *len, capacity cap): a byte, a syntax character, a
 * deletion, or a copy of a stretch of @p base. */
static void mutate(char *buf, size_t *len, size_t cap, const char *base, size_t n,
		   unsigned int *seed)
{
	static const char syntax[] = " =[]#\n,:/.0123456789abcdef\\\r\t";
	size_t pos = (size_t)rand_r(seed) % *len, cnt, src;

	switch (rand_r(seed) % 4) {
	case 0:
		buf[pos] = (char)(rand_r(seed) % 256);
		break;
	case 1:
		buf[pos] = syntax[(size_t)rand_r(seed) % (sizeof(syntax) - 1)];
		break;
	case 2:
		if (*len > 1) {
			memmove(buf + pos, buf + pos + 1, *len - pos - 1);
			(*len)--;
		}
		break;
	default:
		src = (size_t)rand_r(seed) % n;
		cnt = (size_t)rand_r(seed) % 300;
		if (cnt > n - src)
			cnt = n - src;
		if (*len + cnt > cap)
			break;
		memmove(buf + pos + cnt, buf + pos, *len - pos);
		memcpy(buf + pos, base + src, cnt);
		*len += cnt;
	}
}

/*
 * Randomly damaged copies of the sample: the loader never crashes, every refusal names the
 * file, and every file it accepts dumps to a file that loads back to the same configuration.
 */
static void test_mutations(void **state)
{
	char *base = slurp(SAMPLE), *buf, *dump = NULL, err[512];
	size_t n = strlen(base), cap = n + 4096, len, dlen;
	struct rw_config *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	unsigned int seed = 20261130, accepted = 0;

	(void)state;
	buf = malloc(cap);
	assert_non_null(buf);
	assert_non_null(a);
	assert_non_null(b);
	for (int it = 0; it < 1000; it++) {
		FILE *m;
		int edits = 1 + rand_r(&seed) % 4;

		memcpy(buf, base, n);
		len = n;
		for (int k = 0; k < edits; k++)
			mutate(buf, &len, cap, base, n, &seed);
		write_tmp(buf, len);
		if (rw_config_load(tmp_path, a, err, sizeof(err)) != 0) {
			unlink(tmp_path);
			if (strncmp(err, tmp_path, strlen(tmp_path)) != 0)
				fail_msg("iteration %d: error does not name the file: %s", it, err);
			continue;
		}
		unlink(tmp_path);
		accepted++;
		m = open_memstream(&dump, &dlen);
		assert_non_null(m);
		assert_int_equal(rw_config_dump(a, m), 0);
		fclose(m);
		if (load_text(dump, b, err, sizeof(err)) != 0)
			fail_msg("iteration %d: dump does not load back: %s", it, err);
		if (memcmp(a, b, sizeof(*a)) != 0) {
			size_t at = 0;

			while (((const char *)a)[at] == ((const char *)b)[at])
				at++;
			fail_msg("iteration %d: dump loads back different, first at byte %zu of "
				 "struct rw_config:\n%s",
				 it, at, dump);
		}
		free(dump);
		dump = NULL;
	}
	/* the edits must leave some files valid, or the round trip was not exercised */
	assert_true(accepted > 50);
	free(buf);
	free(base);
	free(a);
	free(b);
}

int main(void)
{
	size_t nb = sizeof(bad_cases) / sizeof(bad_cases[0]);
	const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_exact_message),
		cmocka_unit_test(test_gutter_sections),
		cmocka_unit_test(test_nul_byte),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_small_error_buffer),
		cmocka_unit_test(test_too_many_nodes),
		cmocka_unit_test(test_neighbours_vs_nodes),
		cmocka_unit_test(test_defaults_applied),
		cmocka_unit_test(test_defaults_function),
		cmocka_unit_test(test_every_value),
		cmocka_unit_test(test_crlf_and_empty_optional),
		cmocka_unit_test(test_max_nodes),
		cmocka_unit_test(test_routes),
		cmocka_unit_test(test_vlan),
		cmocka_unit_test(test_two_ports),
		cmocka_unit_test(test_ipv6_keys),
		cmocka_unit_test(test_ipv6_routes),
		cmocka_unit_test(test_ipv6_only),
		cmocka_unit_test(test_sample_loads),
		cmocka_unit_test(test_sample_covers_every_key),
		cmocka_unit_test(test_doc_matches_table),
		cmocka_unit_test(test_client_keys),
		cmocka_unit_test(test_dump_round_trip),
		cmocka_unit_test(test_mutations),
	};
	size_t nf = sizeof(fixed) / sizeof(fixed[0]);
	struct CMUnitTest *tests = calloc(nb + nf, sizeof(*tests));
	int ret;

	if (tests == NULL)
		return 1;
	memcpy(tests, fixed, sizeof(fixed));
	for (size_t i = 0; i < nb; i++) {
		tests[nf + i].name = bad_cases[i].name;
		tests[nf + i].test_func = test_bad;
		tests[nf + i].initial_state = (void *)&bad_cases[i];
	}
	ret = _cmocka_run_group_tests("config", tests, nb + nf, NULL, NULL);
	free(tests);
	return ret;
}
