/* SPDX-License-Identifier: BSD-3-Clause */
/* Subnets: which addresses a link reaches. Machines joined by cables rather than a switch give
 * every cable its own point-to-point subnet, so "shares a subnet with" is how jaccl tells which
 * of its links reaches a peer (docs/topologies.md). Pure functions but jaccl_local_prefix. */
#ifndef JACCL_UTIL_SUBNET_H
#define JACCL_UTIL_SUBNET_H

#include <sys/socket.h>

#include "util/sock.h"

/* Prefix length of a netmask (contiguous ones counted from the top); 0 for NULL or another
 * family than AF_INET / AF_INET6. */
int jaccl_mask_prefix(const struct sockaddr *mask);
/* 1 if a and b (same family) agree on their first `prefix` bits; prefix 0 agrees always. Ports
 * and IPv6 scope ids are ignored. */
int jaccl_same_subnet(const union jaccl_sockaddr *a, const union jaccl_sockaddr *b, int prefix);
/* 1 if a and b are the same host address (ports ignored). */
int jaccl_same_host(const union jaccl_sockaddr *a, const union jaccl_sockaddr *b);
/* 1 if the two links are on one subnet: the same prefix length, and their addresses agree on
 * it. Symmetric, so both ends of a cable decide alike. */
int jaccl_links_meet(const struct jaccl_link *a, const struct jaccl_link *b);
/* The prefix length of the interface of this host that carries `a`, or 0 if none does. */
int jaccl_local_prefix(const union jaccl_sockaddr *a);
/* "10.0.1.5/24" (the address without its port, and the prefix) into buf; returns buf. */
const char *jaccl_link_str(const struct jaccl_link *l, char *buf, size_t len);
/* "10.0.1.0/24" (port-less network address and prefix) into buf; returns buf. */
const char *jaccl_link_net_str(const struct jaccl_link *l, char *buf, size_t len);
/* 1 for a loopback address (127/8, ::1). */
int jaccl_is_loopback(const union jaccl_sockaddr *a);

#endif
