/* SPDX-License-Identifier: BSD-3-Clause */
/* Nodes-file parser: what a nodes file accepts, and the line-naming errors for what it does not. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "placement.h"

struct parsed {
	struct pl_member *m;
	uint32_t n;
	char err[256];
	int rc;
};

static void parse(const char *text, struct parsed *p)
{
	memset(p, 0, sizeof(*p));
	p->rc = pl_members_parse(text, strlen(text), &p->m, &p->n, p->err, sizeof(p->err));
}

/* The text must fail with -EINVAL, leave *out NULL and say "line L: " plus @p want. */
static void expect_error(const char *text, unsigned line, const char *want)
{
	struct parsed p;
	char prefix[32];

	parse(text, &p);
	snprintf(prefix, sizeof(prefix), "line %u: ", line);
	if (p.rc != -EINVAL || strncmp(p.err, prefix, strlen(prefix)) != 0 ||
	    strstr(p.err, want) == NULL)
		fail_msg("input %s\n  rc %d, error '%s'\n  wanted 'line %u: ...%s...'", text, p.rc,
			 p.err, line, want);
	assert_null(p.m);
	assert_int_equal(p.n, 0);
}

static void test_full_file(void **state)
{
	struct parsed p;
	(void)state;

	parse("# fleet\n"
	      "\n"
	      "cache-a 198.18.1.1:11211 1\n"
	      "  cache_b\t198.18.1.2:11311\t3   # bigger box\n"
	      "cache.c mc3.example.net 0\r\n"
	      "d 10.0.0.4\n",
	      &p);
	assert_int_equal(p.rc, 0);
	assert_string_equal(p.err, "");
	assert_int_equal(p.n, 4);
	assert_string_equal(p.m[0].name, "cache-a");
	assert_string_equal(p.m[0].addr, "198.18.1.1");
	assert_int_equal(p.m[0].port, 11211);
	assert_int_equal(p.m[0].weight, 1);
	assert_string_equal(p.m[1].name, "cache_b");
	assert_int_equal(p.m[1].port, 11311);
	assert_int_equal(p.m[1].weight, 3);
	assert_string_equal(p.m[2].addr, "mc3.example.net");
	assert_int_equal(p.m[2].port, 11211);
	assert_int_equal(p.m[2].weight, 0);
	assert_string_equal(p.m[3].name, "d");
	assert_int_equal(p.m[3].port, 11211);
	assert_int_equal(p.m[3].weight, 1);
	free(p.m);
}

static void test_limits_accepted(void **state)
{
	char text[512];
	struct parsed p;
	(void)state;

	/* 63-byte name and host name, port 65535 and 1, weight PL_WEIGHT_MAX, no final newline */
	snprintf(text, sizeof(text), "%.63s %.31s.%.31s:65535 10000\nx 0.0.0.0:1",
		 "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn",
		 "hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh", "iiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiii");
	parse(text, &p);
	assert_int_equal(p.rc, 0);
	assert_int_equal(p.n, 2);
	assert_int_equal(strlen(p.m[0].name), PL_NAME_MAX);
	assert_int_equal(strlen(p.m[0].addr), PL_ADDR_MAX);
	assert_int_equal(p.m[0].port, 65535);
	assert_int_equal(p.m[0].weight, PL_WEIGHT_MAX);
	assert_int_equal(p.m[1].port, 1);
	free(p.m);
}

static void test_not_nul_terminated(void **state)
{
	const char text[] = {'a', ' ', '1', '.', '2', '.', '3', '.', '4', ':', '5'};
	struct pl_member *m = NULL;
	uint32_t n = 0;
	char err[64];
	(void)state;

	/* The port must stop at the buffer's end, not run into whatever follows. */
	assert_int_equal(pl_members_parse(text, sizeof(text), &m, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(m[0].port, 5);
	free(m);
}

static void test_bad_names(void **state)
{
	(void)state;
	expect_error("a 1.2.3.4\nb@d 1.2.3.4\n", 2, "bad name 'b@d'");
	expect_error("n/1 1.2.3.4\n", 1, "bad name");
	expect_error("a 1.2.3.4\n"
		     "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn 1.2.3.4\n",
		     2, "expected at most 63 bytes");
	/* non-printable bytes are shown as '?' */
	expect_error("a\x01z 1.2.3.4\n", 1, "bad name 'a?z'");
}

static void test_missing_address(void **state)
{
	(void)state;
	expect_error("a 1.2.3.4\n\n# c\nlonely   # no address\n", 4,
		     "expected an address after the name 'lonely'");
}

static void test_bad_addresses(void **state)
{
	(void)state;
	expect_error("a 1.2.3\n", 1, "bad address '1.2.3'");
	expect_error("a 1.2.3.256\n", 1, "bad address '1.2.3.256'");
	expect_error("a 1..3.4\n", 1, "bad address");
	expect_error("a 1.2.3.4.5\n", 1, "bad address");
	expect_error("a :11211\n", 1, "bad address");
	expect_error("a -host.example\n", 1, "bad address '-host.example'");
	expect_error("a host..example\n", 1, "bad address");
	expect_error("a host_x\n", 1, "bad address");
	expect_error("a [::1:11211\n", 1, "expected ']' after an IPv6 address");
	expect_error("a 10.0.0.010\n", 1, "bad address '10.0.0.010'"); /* octal to inet_aton */
	expect_error("a h.hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh\n", 1,
		     "bad address");
}

/* IPv6 members: in brackets, stored without them in RFC 5952 form; the port after ']'. */
static void test_ipv6(void **state)
{
	struct parsed p;
	char ep[PL_ENDPOINT_MAX];
	(void)state;

	parse("a [2001:2::1:1]:11311 2\n"
	      "b [2001:0002:0000::1:2]\n"
	      "c 198.18.1.3:11211\n"
	      "d [2001:2:2::ffff:1]:1\n",
	      &p);
	assert_int_equal(p.rc, 0);
	assert_int_equal(p.n, 4);
	assert_string_equal(p.m[0].addr, "2001:2::1:1");
	assert_int_equal(p.m[0].port, 11311);
	assert_int_equal(p.m[0].weight, 2);
	assert_string_equal(p.m[1].addr, "2001:2::1:2");
	assert_int_equal(p.m[1].port, 11211);
	assert_string_equal(p.m[3].addr, "2001:2:2::ffff:1");
	assert_int_equal(p.m[3].port, 1);
	/* What every printer of a member's address shows, and what parses back. */
	pl_member_endpoint(&p.m[0], ep);
	assert_string_equal(ep, "[2001:2::1:1]:11311");
	pl_member_endpoint(&p.m[1], ep);
	assert_string_equal(ep, "[2001:2::1:2]:11211");
	pl_member_endpoint(&p.m[2], ep);
	assert_string_equal(ep, "198.18.1.3:11211");
	free(p.m);
	expect_error("a 2001:2::1\n", 1, "an IPv6 address goes in brackets");
	expect_error("a 2001:2::1:11211\n", 1, "an IPv6 address goes in brackets");
	expect_error("a [2001:2::1]11211\n", 1, "expected ':PORT' after ']'");
	expect_error("a [2001:2::1]:0\n", 1, "bad port '0'");
	expect_error("a [2001:2::1]:65536\n", 1, "bad port '65536'");
	expect_error("a [2001:2::1]:\n", 1, "bad port ''");
	expect_error("a [2001:2::g]:11211\n", 1, "bad address '[2001:2::g]'");
	expect_error("a [2001:2:::1]\n", 1, "expected an IPv6 address in brackets");
	expect_error("a [198.18.1.1]:11211\n", 1, "expected an IPv6 address in brackets");
	expect_error("a [::ffff:198.18.1.1]\n", 1, "expected an IPv6 address in brackets");
	expect_error("a [fe80::1%eth0]\n", 1, "expected an IPv6 address in brackets");
	expect_error("a []:11211\n", 1, "bad address '[]'");
	expect_error("a [2001:2::1]:11211:1\n", 1, "bad port '11211:1'");
}

static void test_bad_ports(void **state)
{
	(void)state;
	expect_error("a 1.2.3.4:0\n", 1, "bad port '0'");
	expect_error("a 1.2.3.4:65536\n", 1, "bad port '65536'");
	expect_error("a 1.2.3.4:99999999999\n", 1, "bad port");
	expect_error("a 1.2.3.4:http\n", 1, "bad port 'http'");
	expect_error("a 1.2.3.4:\n", 1, "bad port ''");
	expect_error("a 1.2.3.4:-1\n", 1, "bad port");
	expect_error("a 1.2.3.4:11211:1\n", 1, "bad port '11211:1'");
}

static void test_bad_weights(void **state)
{
	(void)state;
	expect_error("a 1.2.3.4 -1\n", 1, "bad weight '-1'");
	expect_error("a 1.2.3.4 1.5\n", 1, "bad weight '1.5'");
	expect_error("a 1.2.3.4 heavy\n", 1, "bad weight 'heavy'");
	expect_error("a 1.2.3.4 10001\n", 1, "bad weight '10001'");
	expect_error("a 1.2.3.4 4294967296\n", 1, "bad weight");
}

static void test_duplicates_and_fields(void **state)
{
	(void)state;
	expect_error("a 1.2.3.4\nb 1.2.3.5\n\na 1.2.3.6\n", 4,
		     "duplicate name 'a' (first on line 1)");
	expect_error("a 1.2.3.4 1 extra\n", 1, "too many fields");
	expect_error("a 1.2.3.4 1 # fine\nb 1.2.3.4 1 2 3 4\n", 2, "too many fields");
}

static void test_empty(void **state)
{
	(void)state;
	expect_error("", 1, "no members");
	expect_error("# only a comment\n\n   \n", 3, "no members");
}

static void test_many_members_and_duplicate_late(void **state)
{
	size_t cap = 3000 * 32, len = 0;
	char *text = malloc(cap);
	struct parsed p;
	uint32_t i;
	(void)state;

	assert_non_null(text);
	for (i = 0; i < 3000; i++)
		len += (size_t)snprintf(text + len, cap - len, "n%u 10.0.%u.%u:%u %u\n", i, i / 250,
					i % 250, 1000 + i, i % 7);
	parse(text, &p);
	assert_int_equal(p.rc, 0);
	assert_int_equal(p.n, 3000);
	for (i = 0; i < 3000; i++) {
		char name[16];
		snprintf(name, sizeof(name), "n%u", i);
		assert_string_equal(p.m[i].name, name);
		assert_int_equal(p.m[i].port, 1000 + i);
		assert_int_equal(p.m[i].weight, i % 7);
	}
	free(p.m);
	/* a duplicate of an early name after the array has grown several times */
	len += (size_t)snprintf(text + len, cap - len, "n17 1.1.1.1\n");
	parse(text, &p);
	assert_int_equal(p.rc, -EINVAL);
	assert_string_equal(p.err, "line 3001: duplicate name 'n17' (first on line 18): "
				   "expected unique names");
	free(text);
}

static void test_small_error_buffer(void **state)
{
	struct pl_member *m = NULL;
	uint32_t n = 0;
	char err[8];
	(void)state;

	memset(err, 'x', sizeof(err));
	assert_int_equal(pl_members_parse("a 1.2.3.4:0", 11, &m, &n, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "line 1:");
	assert_null(m);
	/* no error buffer at all is fine */
	assert_int_equal(pl_members_parse("a 1.2.3.4:0", 11, &m, &n, NULL, 0), -EINVAL);
	assert_int_equal(pl_members_parse("a 1.2.3.4", 9, NULL, &n, err, sizeof(err)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_file),
		cmocka_unit_test(test_limits_accepted),
		cmocka_unit_test(test_not_nul_terminated),
		cmocka_unit_test(test_bad_names),
		cmocka_unit_test(test_missing_address),
		cmocka_unit_test(test_bad_addresses),
		cmocka_unit_test(test_ipv6),
		cmocka_unit_test(test_bad_ports),
		cmocka_unit_test(test_bad_weights),
		cmocka_unit_test(test_duplicates_and_fields),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_many_members_and_duplicate_late),
		cmocka_unit_test(test_small_error_buffer),
	};

	return cmocka_run_group_tests_name("members", tests, NULL, NULL);
}
