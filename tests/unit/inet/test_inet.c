/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/inet: both families parse, print back in one spelling, and stay apart in prefixes. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <arpa/inet.h>
#include <errno.h>

#include <cmocka.h>

#include "inet.h"

static struct inet_addr addr(const char *s)
{
	struct inet_addr a;

	assert_int_equal(inet_parse(s, strlen(s), &a), 0);
	return a;
}

static void round_trip(const char *in, const char *out)
{
	struct inet_addr a = addr(in);
	char t[INET_TEXT_MAX];

	inet_format(&a, t);
	assert_string_equal(t, out);
}

static void test_parse_format(void **state)
{
	struct inet_addr a;
	(void)state;

	round_trip("198.18.0.1", "198.18.0.1");
	round_trip("2001:2::1", "2001:2::1");
	round_trip("2001:0002:0000:0000:0000:0000:0000:0001", "2001:2::1");
	round_trip("2001:2:0:0:1:0:0:1", "2001:2::1:0:0:1"); /* RFC 5952: first longest run */
	a = addr("198.18.0.1");
	assert_true(inet_is_v4(&a));
	assert_int_equal(inet_v4(&a), htonl(0xc6120001));
	a = addr("2001:2::1");
	assert_false(inet_is_v4(&a));
	assert_int_equal(a.b[0], 0x20);
	assert_int_equal(a.b[15], 1);
	/* refused: octal-looking, short IPv4, mapped IPv6 (IPv4 is written as IPv4), zones,
	 * brackets, embedded NUL, too long */
	assert_int_equal(inet_parse("010.0.0.1", 9, &a), -EINVAL);
	assert_int_equal(inet_parse("10.1", 4, &a), -EINVAL);
	assert_int_equal(inet_parse("::ffff:10.0.0.1", 15, &a), -EINVAL);
	assert_int_equal(inet_parse("fe80::1%eth0", 12, &a), -EINVAL);
	assert_int_equal(inet_parse("[2001:2::1]", 11, &a), -EINVAL);
	assert_int_equal(inet_parse("10.0.0.1\0", 9, &a), -EINVAL);
	assert_int_equal(inet_parse("", 0, &a), -EINVAL);
	assert_int_equal(inet_parse("2001:2::1:2001:2::1:2001:2::1:2001:2::1:ffff", 44, &a),
			 -EINVAL);
}

static void test_prefix(void **state)
{
	struct inet_addr p, a;
	char t[INET_PREFIX_TEXT_MAX], err[96];
	uint8_t len;
	(void)state;

	assert_int_equal(inet_parse_prefix("198.18.2.0/24", 13, &p, &len, err, sizeof(err)), 0);
	assert_int_equal(len, 24);
	inet_format_prefix(&p, len, t);
	assert_string_equal(t, "198.18.2.0/24");
	a = addr("198.18.2.77");
	assert_true(inet_prefix_has(&p, len, &a));
	a = addr("198.18.3.1");
	assert_false(inet_prefix_has(&p, len, &a));
	/* a family's prefix never holds the other family, even /0 */
	assert_int_equal(inet_parse_prefix("0.0.0.0/0", 9, &p, &len, err, sizeof(err)), 0);
	a = addr("2001:2::1");
	assert_false(inet_prefix_has(&p, len, &a));
	assert_int_equal(inet_parse_prefix("::/0", 4, &p, &len, err, sizeof(err)), 0);
	a = addr("2001:2::1");
	assert_true(inet_prefix_has(&p, len, &a));
	a = addr("198.18.0.1");
	assert_false(inet_prefix_has(&p, len, &a));
	/* IPv6 with a length that ends inside a byte */
	assert_int_equal(inet_parse_prefix("2001:2:0:80::/57", 16, &p, &len, err, sizeof(err)), 0);
	a = addr("2001:2:0:ff::1");
	assert_true(inet_prefix_has(&p, len, &a));
	a = addr("2001:2:0:7f::1");
	assert_false(inet_prefix_has(&p, len, &a));
	inet_format_prefix(&p, len, t);
	assert_string_equal(t, "2001:2:0:80::/57");
	/* errors name the text */
	assert_int_equal(inet_parse_prefix("198.18.2.1/24", 13, &p, &len, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "host bits"));
	assert_int_equal(inet_parse_prefix("198.18.2.0/33", 13, &p, &len, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "198.18.2.0/33"));
	assert_int_equal(inet_parse_prefix("2001:2::/129", 12, &p, &len, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(inet_parse_prefix("2001:2::", 8, &p, &len, err, sizeof(err)), -EINVAL);
	assert_int_equal(inet_parse_prefix("2001:2::/x", 10, &p, &len, err, sizeof(err)), -EINVAL);
}

static void endpoint_ok(const char *in, bool opt, const char *out, uint16_t port)
{
	struct inet_addr a;
	uint16_t p = 11211;
	char t[INET_ENDPOINT_TEXT_MAX];

	assert_int_equal(inet_parse_endpoint(in, strlen(in), opt, &a, &p), 0);
	assert_int_equal(p, port);
	inet_format_endpoint(&a, p, t);
	assert_string_equal(t, out);
}

static void endpoint_bad(const char *in, bool opt)
{
	struct inet_addr a;
	uint16_t p = 0;

	assert_int_equal(inet_parse_endpoint(in, strlen(in), opt, &a, &p), -EINVAL);
}

static void test_endpoint(void **state)
{
	(void)state;

	endpoint_ok("198.18.1.2:11311", false, "198.18.1.2:11311", 11311);
	endpoint_ok("[2001:2::5]:11311", false, "[2001:2::5]:11311", 11311);
	endpoint_ok("198.18.1.2", true, "198.18.1.2:11211", 11211);
	endpoint_ok("[2001:2::5]", true, "[2001:2::5]:11211", 11211);
	endpoint_ok("2001:2::5", true, "[2001:2::5]:11211", 11211);
	endpoint_bad("198.18.1.2", false);
	endpoint_bad("[2001:2::5]", false);
	endpoint_bad("2001:2::5:11311", false); /* a port needs brackets */
	endpoint_bad("[198.18.1.2]:1", true);	/* brackets hold IPv6 only */
	endpoint_bad("[2001:2::5]:0", true);
	endpoint_bad("[2001:2::5]:65536", true);
	endpoint_bad("[2001:2::5]x", true);
	endpoint_bad("[2001:2::5", true);
	endpoint_bad("198.18.1.2:", true);
	endpoint_bad("198.18.1.2:1x", true);
	endpoint_bad("", true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_format),
		cmocka_unit_test(test_prefix),
		cmocka_unit_test(test_endpoint),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
