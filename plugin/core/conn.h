/* SPDX-License-Identifier: BSD-3-Clause */
/* Connection set-up between two processes, shared by p2p comms and CollNet comms.
 *
 * A connection = side-channel sockets (as many as the fabric asks for) opened by the connector
 * to the listener's address. Every socket starts with a hello carrying the listen secret, a
 * random connection id, its index and a caller tag; the listener groups sockets by connection
 * id, answers on socket 0 with an ack and its fabric blob, and both ends hand the sockets to
 * the fabric. All steps are non-blocking so NCCL's connect/accept retry protocol works; a
 * blocking caller (CollNet) simply loops with a deadline.
 *
 * Before a side hands its sockets to the fabric, `post_initial` runs: the caller posts the
 * receives its peer may target first. The peer cannot send before that, because it only
 * connects after the ack (listener side) or after its own post_initial (connector side). */
#ifndef JACCL_CORE_CONN_H
#define JACCL_CORE_CONN_H

#include <stdint.h>

#include "core/handle.h"
#include "core/route.h"
#include "fabric/fabric.h"

struct jaccl_conn_setup {
    const struct fab_ops *ops; /* dom's (the comm's), named in every hello */
    struct fab_domain *dom;
    struct fab_cq *cq;
    struct fab_ep_attr attr; /* nlanes comes from the handle for connectors */
    int (*post_initial)(struct fab_ep *ep, void *arg);
    void *arg;
    /* Connectors: where the route taken is described once connected (jaccl_route_str, for
     * the caller's INFO line), and the peer as WARNs should name it (its address, and the
     * relay of a relayed connection); NULL: not wanted. */
    char *route, *peer;
    size_t route_len, peer_len;
};

/* ---- listener ---- */
struct jaccl_listener;

/* Binds an ephemeral port on every link of this process (device dev's first: the one NCCL
 * named), so that a peer on any of our subnets can reach it, and fills `h` (secret, links,
 * fabric, dev; the caller set kind and nlanes). Links beyond what a handle holds are left out
 * with a WARN. The listener keeps the back end serving the device (jaccl_dev_ops), accepts only
 * hellos that name it, and expects side_socks(nlanes) sockets per connection. Returns 0 or
 * -errno (-EINVAL: no such device, -EADDRNOTAVAIL: no link could be bound). */
int jaccl_listener_open(int dev, struct jaccl_handle *h, struct jaccl_listener **out);
void jaccl_listener_close(struct jaccl_listener *l);
/* Connections from now on bring nsocks sockets (a CollNet comm settles its lanes once it knows
 * the cables). */
void jaccl_listener_expect(struct jaccl_listener *l, int nsocks);

/* The set-up for a connection that arrived by device dev's link: the caller's domain, CQ and
 * receives for it (a comm of queue pairs lives on the device its cable leaves by). 0 or
 * -errno; called once per connection, when all its sockets are in. */
typedef int (*jaccl_setup_fn)(void *arg, int dev, struct jaccl_conn_setup *out);

/* Progress incoming connections, one at a time. Returns 1 and fills *ep / *tag when one
 * completed, 0 if none is ready yet, -errno on a listener failure (a stranger or a broken
 * connection attempt only logs and is dropped: it never fails the listener). */
int jaccl_listener_accept(struct jaccl_listener *l, jaccl_setup_fn get_setup, void *arg,
                          struct fab_ep **ep, uint32_t *tag, char *peer, size_t peerlen);

/* ---- connector ---- */
struct jaccl_connector;

/* Connects to the listener of h over route r (core/route.h): socket i over cable
 * i % r->ncables, through the relay where r is relayed. r NULL: no cable reaches the listener;
 * the connector first asks its cable neighbours for a relay (core/relay.h). */
int jaccl_connector_start(const struct jaccl_handle *h, const struct jaccl_route *r, uint32_t tag,
                          const struct jaccl_conn_setup *setup, struct jaccl_connector **out);
/* 1 done (*ep set, connector freed), 0 in progress, -errno failed (connector freed). */
int jaccl_connector_step(struct jaccl_connector *c, struct fab_ep **ep);
void jaccl_connector_abort(struct jaccl_connector *c);

#endif
