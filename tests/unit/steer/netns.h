/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_TEST_NETNS_H
#define RINGWAY_TEST_NETNS_H

/*
 * Throwaway network namespaces for root tests: a veth pair between namespace "<p>a"
 * (interface "<p>a0", 198.18.<net>.1/24) and "<p>b" ("<p>b0", 198.18.<net>.2/24), where
 * <p> is "rw" plus a tag and the pid, so parallel runs do not collide. Only addresses in
 * 198.18.0.0/15 are used. netns_down() removes both namespaces (and so the veth pair);
 * netns_up() registers it with atexit() too, so a failing test does not leave them.
 */

#include <stdbool.h>

struct netns_pair {
	char a[32], b[32];	 /* namespace names */
	char if_a[16], if_b[16]; /* interface names */
	char ip_a[20], ip_b[20]; /* dotted quads */
	char mac_b[18];		 /* the address given to if_b */
	int net;		 /* third octet */
	int home_fd;		 /* the test's own namespace */
};

/* Run a shell command; returns its exit status (or -1). Prints it on failure. */
int netns_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The same without printing: for commands whose failure is an answer (grep). */
int netns_test(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Create the pair; 0 or -1. */
int netns_up(struct netns_pair *p, const char *tag, int net);

/* Remove the pair (also called at exit). */
void netns_down(struct netns_pair *p);

/* Move the calling thread into namespace @name / back home. 0 or -1. */
int netns_enter(struct netns_pair *p, const char *name);
int netns_leave(struct netns_pair *p);

#endif
