/* SPDX-License-Identifier: BSD-3-Clause */
/* What the endpoints of every back end share: the peer's description, named in each of their
 * log lines, and the endpoint's failure: the first cause sticks (util/sticky.h) as a negative
 * errno (fabric.h, enum fab_wc_status, says which errno for which cause) with the reason
 * "peer <peer> <what>", and is what fab_ops.ep_error reports. Where work completes because of
 * it, the back end gives the first item the status fab_wc_status_of(that errno).
 *
 * The endpoint's lock stays in each back end: tcp's orders only the failure bookkeeping of
 * its I/O thread, verbs' guards the whole endpoint.
 *
 * It lives inside each back end's endpoint (struct tcp_ep, struct vb_ep), not in the
 * endpoint's head (struct fab_ep in fabric.h, which holds only the ops): it is shared
 * implementation, not interface. Callers reach the failure through fab_ops.ep_error, and a
 * third back end may keep it differently. */
#ifndef JACCL_FABRIC_EP_BASE_H
#define JACCL_FABRIC_EP_BASE_H

#include "fabric/fabric.h"
#include "util/sticky.h"

struct fab_ep_base {
    char peer[128];
    struct jaccl_sticky fail; /* a negative errno; 0 while healthy */
};

void fab_ep_base_init(struct fab_ep_base *b, const char *peer_desc);

/* The failure: 0 while healthy, else a negative errno. */
static inline int fab_ep_base_err(const struct fab_ep_base *b)
{
    return jaccl_sticky_status(&b->fail);
}

/* Records err (a negative errno) with the reason "peer <peer> <what>" unless a failure is already
 * recorded, and logs it as an INFO of the `fabric` back end about endpoint ep (`orderly`: the
 * peer closed the connection, which every normal teardown looks like: not called a failure).
 * INFO, not WARN: the layer above WARNs with this reason when a request of its own fails.
 * Returns 1 for the call that recorded the failure. */
int fab_ep_base_fail(struct fab_ep_base *b, const char *fabric, const void *ep, int err,
                     int orderly, const char *what);

/* fab_ops.ep_error: the failure, and in *reason (if not NULL) the reason while failed, NULL
 * while healthy. Any thread, no lock. */
int fab_ep_base_error(const struct fab_ep_base *b, const char **reason);

#endif
