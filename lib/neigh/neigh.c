/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rtnetlink neighbour queries. Every message from the kernel is length-checked before it
 * is read (NLMSG_OK / RTA_OK plus attribute sizes); replies of other sequences or other
 * senders are ignored.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "neigh.h"

#define NEIGH_RECV_BUF 32768

struct neigh {
	int fd;
	unsigned int ifindex;
	uint32_t seq;
	uint8_t buf[NEIGH_RECV_BUF];
};

static const char *const state_names[] = {
	[NEIGH_ABSENT] = "absent",
	[NEIGH_PENDING] = "pending",
	[NEIGH_FAILED] = "failed",
	[NEIGH_KNOWN] = "known",
};

const char *neigh_state_name(unsigned int state)
{
	return state < sizeof(state_names) / sizeof(state_names[0]) ? state_names[state] : NULL;
}

struct neigh *neigh_open(unsigned int ifindex, char *err, size_t errlen)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	struct timeval tv = {.tv_sec = 1};
	struct neigh *n;
	int one = 1, e;

	n = calloc(1, sizeof(*n));
	if (n == NULL) {
		snprintf(err, errlen, "neigh: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	n->ifindex = ifindex;
	n->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (n->fd < 0 || bind(n->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    setsockopt(n->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
		e = errno;
		snprintf(err, errlen, "neigh: netlink socket: %s", strerror(e));
		neigh_close(n);
		errno = e;
		return NULL;
	}
	/* Lets the kernel filter the dump by interface; older kernels ignore it. */
	(void)setsockopt(n->fd, SOL_NETLINK, NETLINK_GET_STRICT_CHK, &one, sizeof(one));
	return n;
}

void neigh_close(struct neigh *n)
{
	if (n == NULL)
		return;
	if (n->fd >= 0)
		close(n->fd);
	free(n);
}

static int send_req(struct neigh *n, struct nlmsghdr *h)
{
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	ssize_t rc;

	h->nlmsg_seq = ++n->seq;
	do
		rc = sendto(n->fd, h, h->nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel));
	while (rc < 0 && errno == EINTR);
	if (rc < 0)
		return -errno;
	return rc == (ssize_t)h->nlmsg_len ? 0 : -EIO;
}

static uint8_t map_state(uint16_t nud)
{
	if (nud & (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT | NUD_NOARP))
		return NEIGH_KNOWN;
	if (nud & NUD_FAILED)
		return NEIGH_FAILED;
	return NEIGH_PENDING; /* NUD_INCOMPLETE, NUD_NONE */
}

/* Apply one RTM_NEWNEIGH to the entries it names. */
static void apply_neigh(struct neigh *n, const struct nlmsghdr *h, struct neigh_entry *e,
			size_t count)
{
	const struct ndmsg *nd = NLMSG_DATA(h);
	int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*nd));
	const struct rtattr *a =
		(const struct rtattr *)((const uint8_t *)nd + NLMSG_ALIGN(sizeof(*nd)));
	const uint8_t *mac = NULL;
	struct inet_addr ip;
	bool has_ip = false;
	uint32_t v4;
	uint8_t st;
	size_t i;

	if (len < 0 || (nd->ndm_family != AF_INET && nd->ndm_family != AF_INET6) ||
	    nd->ndm_ifindex != (int)n->ifindex)
		return;
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == NDA_DST && nd->ndm_family == AF_INET && RTA_PAYLOAD(a) == 4) {
			memcpy(&v4, RTA_DATA(a), 4);
			inet_from_v4(&ip, v4);
			has_ip = true;
		} else if (a->rta_type == NDA_DST && nd->ndm_family == AF_INET6 &&
			   RTA_PAYLOAD(a) == 16) {
			inet_from_v6(&ip, RTA_DATA(a));
			/* the kernel's IPv6 table never holds a mapped address; refuse one as
			 * an IPv4 entry all the same */
			has_ip = !inet_is_v4(&ip);
		} else if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == 6) {
			mac = RTA_DATA(a);
		}
	}
	if (!has_ip)
		return;
	st = map_state(nd->ndm_state);
	if (st == NEIGH_KNOWN && mac == NULL)
		st = NEIGH_PENDING; /* no usable address yet */
	for (i = 0; i < count; i++) {
		if (!inet_equal(&e[i].addr, &ip))
			continue;
		e[i].state = st;
		if (st == NEIGH_KNOWN)
			memcpy(e[i].mac, mac, 6);
	}
}

/*
 * Read replies to sequence n->seq until NLMSG_DONE (dump) or the ACK (request). Returns 0,
 * the kernel's negative errno, or -EAGAIN on timeout.
 */
static int recv_replies(struct neigh *n, struct neigh_entry *e, size_t count, bool dump)
{
	for (;;) {
		struct sockaddr_nl from;
		socklen_t fl = sizeof(from);
		ssize_t got =
			recvfrom(n->fd, n->buf, sizeof(n->buf), 0, (struct sockaddr *)&from, &fl);
		struct nlmsghdr *h;
		size_t off;

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return errno == EWOULDBLOCK ? -EAGAIN : -errno;
		if (from.nl_pid != 0)
			continue; /* not from the kernel */
		/* NLMSG_OK/NEXT by hand, in size_t: each header and length checked before use. */
		for (off = 0; off + sizeof(*h) <= (size_t)got; off += NLMSG_ALIGN(h->nlmsg_len)) {
			h = (struct nlmsghdr *)(n->buf + off);
			if (h->nlmsg_len < sizeof(*h) || h->nlmsg_len > (size_t)got - off)
				break;
			if (h->nlmsg_seq != n->seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE) {
				int derr = 0;

				/* A dump the kernel refused ends with its error. */
				if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(derr)))
					memcpy(&derr, NLMSG_DATA(h), sizeof(derr));
				return derr < 0 ? derr : 0;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *me = NLMSG_DATA(h);

				if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*me)))
					return -EIO;
				if (me->error != 0 || !dump)
					return me->error;
				continue;
			}
			if (h->nlmsg_type == RTM_NEWNEIGH && dump)
				apply_neigh(n, h, e, count);
		}
	}
}

/* One dump of the kernel's table of @p family on the interface into @p e. */
static int dump_family(struct neigh *n, uint8_t family, struct neigh_entry *e, size_t count)
{
	struct {
		struct nlmsghdr h;
		struct ndmsg nd;
		struct rtattr ifa;
		uint32_t ifindex;
	} req;
	int rc;

	/* Strict dump checking wants the filter as NDA_IFINDEX and a zero header ifindex. */
	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = RTM_GETNEIGH;
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nd.ndm_family = family;
	req.ifa.rta_type = NDA_IFINDEX;
	req.ifa.rta_len = RTA_LENGTH(sizeof(req.ifindex));
	req.ifindex = n->ifindex;
	rc = send_req(n, &req.h);
	return rc < 0 ? rc : recv_replies(n, e, count, true);
}

int neigh_lookup(struct neigh *n, struct neigh_entry *e, size_t count)
{
	bool v4 = false, v6 = false;
	size_t i;
	int rc = 0;

	for (i = 0; i < count; i++) {
		e[i].state = NEIGH_ABSENT;
		memset(e[i].mac, 0, sizeof(e[i].mac));
		if (inet_is_v4(&e[i].addr))
			v4 = true;
		else
			v6 = true;
	}
	/* An empty request still asks the IPv4 table: an unusable socket shows at once. */
	if (v4 || !v6)
		rc = dump_family(n, AF_INET, e, count);
	if (rc == 0 && v6)
		rc = dump_family(n, AF_INET6, e, count);
	return rc;
}

int neigh_resolve(struct neigh *n, const struct inet_addr *addr)
{
	struct {
		struct nlmsghdr h;
		struct ndmsg nd;
		struct rtattr dst;
		uint8_t addr[16];
	} req;
	bool v4 = inet_is_v4(addr);
	size_t alen = v4 ? 4 : 16;
	int rc;

	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = (uint32_t)(NLMSG_LENGTH(sizeof(req.nd)) + RTA_LENGTH(alen));
	req.h.nlmsg_type = RTM_NEWNEIGH;
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE;
	req.nd.ndm_family = v4 ? AF_INET : AF_INET6;
	req.nd.ndm_ifindex = (int)n->ifindex;
	req.nd.ndm_state = NUD_NONE;
	req.nd.ndm_flags = NTF_USE;
	req.dst.rta_type = NDA_DST;
	req.dst.rta_len = (unsigned short)RTA_LENGTH(alen);
	memcpy(req.addr, v4 ? addr->b + 12 : addr->b, alen);
	rc = send_req(n, &req.h);
	return rc < 0 ? rc : recv_replies(n, NULL, 0, false);
}
