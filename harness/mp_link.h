/* SPDX-License-Identifier: BSD-3-Clause */
/* Connection set-up the way NCCL's proxy does it: listen, pass the handle to the peer, then
 * call connect and accept again and again (same handle buffer) until each returns a comm. */
#ifndef MP_LINK_H
#define MP_LINK_H

#include "mp_net.h"

/* Listens on n->dev and publishes the handle in our `slot`. */
int mp_listen_publish(const struct mp_net *n, int slot, void **lcomm);

/* Drives connect (to `handle`, if scomm) and accept (on lcomm, if rcomm) together until both
 * are done, an error comes back, or timeout_s passes. `handle` must be the caller's own copy,
 * the one used for any earlier connect to it: NCCL passes that same buffer on every retry, and
 * a plugin may keep in-progress state keyed by it. 0 on success. */
int mp_connect_accept(const struct mp_net *n, void *handle, void **scomm, void *lcomm, void **rcomm,
                      int timeout_s);

/* Every rank: listen, publish in `slot`, barrier, connect to rank+1 and accept from rank-1,
 * closeListen. With 2 ranks both links go to the other rank. 0 on success. */
struct mp_ring {
    void *scomm; /* to the right neighbour */
    void *rcomm; /* from the left neighbour */
};
int mp_ring_connect(const struct mp_net *n, int slot, struct mp_ring *r);
void mp_ring_close(const struct mp_net *n, struct mp_ring *r);

#endif
