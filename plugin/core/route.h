/* SPDX-License-Identifier: BSD-3-Clause */
/* How this process reaches a listener: the cables, or a relay.
 *
 * A cable is a pair (one of our links, one of the listener's) on one subnet: on machines joined
 * by cables every cable is its own subnet, on a switched network every pair of links on the
 * switch's subnet is one (docs/topologies.md). A connection spreads its side-channel sockets,
 * which on tcp are its lanes, over every cable to the listener: socket i takes cable
 * i % ncables. Where no link of ours meets one of the listener's, a node cabled to both relays
 * the connection (core/relay.h): the cables then lead to relays. */
#ifndef JACCL_CORE_ROUTE_H
#define JACCL_CORE_ROUTE_H

#include <stddef.h>

#include "core/handle.h"
#include "util/sock.h"

#define JACCL_CABLES_MAX 8

struct jaccl_cable {
    int dev;                     /* our device whose link it leaves by */
    struct jaccl_link local;     /* that link (port 0) */
    union jaccl_sockaddr remote; /* where it arrives: the listener's address and port, or a
                                  * relay's service */
    union jaccl_sockaddr target; /* relayed: the listener's address the relay connects on to */
};

struct jaccl_route {
    int ncables;
    int relayed;
    struct jaccl_cable cable[JACCL_CABLES_MAX];
};

/* The cables between our links mine[] (of devices devs[]) and theirs[]: each link of either
 * side used once, in order, starting with the link of device `pref` (the one NCCL named), at
 * most max. Loopback links meet only when both ends are one host (same_host: their
 * jaccl_host_id()s are equal): every host has 127.0.0.1. Pure: both ends of a pair of nodes
 * match alike. Returns the count. */
int jaccl_cables_match(const struct jaccl_link *mine, const int *devs, int nmine,
                       const struct jaccl_link *theirs, int ntheirs, int same_host, int pref,
                       struct jaccl_cable *out, int max);
/* Whether links a and b (of hosts that are the same host or not) are joined: on one subnet,
 * and not loopback unless the hosts are one. */
int jaccl_links_join(const struct jaccl_link *a, const struct jaccl_link *b, int same_host);

/* The listener's address as log lines name it before a connection says more: its first link
 * that is not loopback (which every host has), if it has one. */
const union jaccl_sockaddr *jaccl_handle_addr(const struct jaccl_handle *h);

/* Which of our devices a connection may leave by: any (its lanes are sockets: tcp), one (the
 * first cable's: a connection of queue pairs lives on one device), or only device pref (a
 * CollNet comm of queue pairs, whose every connection shares its domain). */
enum jaccl_route_devs { JACCL_ROUTE_ANY, JACCL_ROUTE_ONE, JACCL_ROUTE_PREF };

/* The direct route to the listener of h from this process's links (state.h), preferring device
 * pref. 0, or -ENETUNREACH when no link of ours (that `devs` allows) meets one of the
 * listener's. */
int jaccl_route_direct(const struct jaccl_handle *h, int pref, enum jaccl_route_devs devs,
                       struct jaccl_route *r);

/* For INFO lines: "eth1 10.77.1.1 > 10.77.1.2:4000, eth2 ..." or, relayed,
 * "relayed via 10.77.1.2 (eth1) to 10.77.2.3:4000". */
const char *jaccl_route_str(const struct jaccl_route *r, char *buf, size_t len);

#endif
