/* SPDX-License-Identifier: BSD-3-Clause */
/* Relays: a connection between two nodes that share no cable (opposite nodes of a ring of
 * four) goes through a node cabled to both, whose jaccl forwards its bytes.
 *
 * Every process whose fabric's lanes are sockets (tcp) runs a relay service while its fabric is
 * open (and NCCL_JACCL_RELAY=1): a UDP socket on NCCL_JACCL_RELAY_PORT that answers relay
 * queries, and a TCP listener that forwards. A connector that no cable takes to a listener
 * broadcasts a query on each of its cables (IPv4 subnet broadcast): "who reaches one of these
 * subnets?" (the listener's links, from its handle). A neighbour that has a link on one of them
 * answers with its service's port; the connector then opens its sockets to the answering
 * relays (spread over all of them: both neighbours of a ring of four), each starting with a
 * preamble that names the listener's address, and carries on as if connected directly: the
 * hello with its secret, the fabric's blob, then the lanes. The relay connects on from its link
 * on the listener's subnet and forwards each direction through a bounded buffer, reading from
 * one side only while the other takes what it has (TCP's own flow control does the rest).
 * An end of stream is passed on after the bytes before it, a reset as a reset: so a relay that
 * dies, or loses a cable, fails the relayed connections like a dead peer (EOF, reset, or the
 * heartbeats' silence), and their WARNs name the relay. Relays forward only to addresses on
 * their own links' subnets, and never hop further: a relayed pair is two cables apart. */
#ifndef JACCL_CORE_RELAY_H
#define JACCL_CORE_RELAY_H

#include <stddef.h>

#include "core/handle.h"
#include "core/route.h"

/* The relay service, with the fabric: started when it opens (links: its devices' links;
 * nothing starts without an IPv4 link that is not loopback, or with NCCL_JACCL_RELAY=0), and
 * told to stop when it closes; it then takes no new connection and its thread leaves once the
 * connections it relays have ended (it is never waited for). Under the core's init lock. */
void jaccl_relay_start(const struct jaccl_link *links, int n);
void jaccl_relay_stop(void);
/* Connections relayed so far, and relayed now, by this process (tests, logs). */
void jaccl_relay_stats(unsigned long *total, unsigned long *live);

/* Looking for relays to the listener of h. */
struct jaccl_relay_find;
/* -ENETUNREACH when this process cannot ask (relaying off, no IPv4 cable), with a WARN. */
int jaccl_relay_find_start(const struct jaccl_handle *h, struct jaccl_relay_find **out);
/* 1 with *r filled (relayed, a cable per relay found), 0 still asking, -EHOSTUNREACH when no
 * relay answered before the deadline (with a WARN naming the subnets asked for). */
int jaccl_relay_find_step(struct jaccl_relay_find *f, struct jaccl_route *r);
void jaccl_relay_find_free(struct jaccl_relay_find *f);

/* The preamble of a relayed socket, naming the listener's address: its length. */
#define JACCL_RELAY_PREAMBLE 28
void jaccl_relay_preamble(const union jaccl_sockaddr *target,
                          unsigned char out[JACCL_RELAY_PREAMBLE]);

#endif
