/* SPDX-License-Identifier: BSD-3-Clause */
/* The transport the collective algorithms run on, as they need it: an object that is only an
 * ops table to them. The core implements it (embedded in its comm, core/coll_xport.c); the unit
 * tests implement it in memory. Nothing in algo/ knows which.
 *
 * It is a set of ordered streams, one per (peer, lane), with cumulative counters. It hides
 * credits: can_send says whether the peer has a receive posted for the next message, can_recv
 * whether another receive may be posted. Messages on one stream arrive in order, and the
 * receiver posts its receives in the order the sender sends: both sides walk the same
 * schedule. Every function but wires and own/scratch names a stream by (peer, lane). */
#ifndef JACCL_ALGO_XPORT_H
#define JACCL_ALGO_XPORT_H

#include <stddef.h>
#include <stdint.h>

struct fab_mr;
struct algo_xport;

struct algo_xport_ops {
    /* Wires of the ring (lanes per direction). */
    int (*wires)(const struct algo_xport *x);
    /* 1 if the next send on the stream may be posted now (credit and send depth). */
    int (*can_send)(struct algo_xport *x, int peer, int lane);
    int (*send)(struct algo_xport *x, int peer, int lane, const void *buf, size_t len,
                struct fab_mr *mr);
    /* 1 if another receive may be posted on the stream now. */
    int (*can_recv)(struct algo_xport *x, int peer, int lane);
    int (*recv)(struct algo_xport *x, int peer, int lane, void *buf, size_t len, struct fab_mr *mr);
    /* Cumulative counts: sends posted, sends completed, receives posted, receives landed. */
    uint32_t (*sent)(struct algo_xport *x, int peer, int lane);
    uint32_t (*sdone)(struct algo_xport *x, int peer, int lane);
    uint32_t (*posted)(struct algo_xport *x, int peer, int lane);
    uint32_t (*landed)(struct algo_xport *x, int peer, int lane);
    /* Staging slot i (< ALGO_SLOTS, ALGO_FRAME_MAX bytes) of the stream coming in from (peer,
     * lane); take returns a free one (-1: none free), give hands it back. Slots belong to the
     * stream, not to an operation: the next operation may post into them while this one finishes.
     */
    char *(*slot)(struct algo_xport *x, int peer, int lane, int i, struct fab_mr **mr);
    int (*slot_take)(struct algo_xport *x, int peer, int lane);
    void (*slot_give)(struct algo_xport *x, int peer, int lane, int i);
    /* Buffers of run slot `idx` (two operations may run at once, each in its own slot): one
     * ALGO_FRAME_MAX buffer for the local contribution (mesh, in place), and registered scratch
     * of at least len bytes, kept across operations (NULL if out of memory). */
    char *(*own)(struct algo_xport *x, int idx);
    char *(*scratch)(struct algo_xport *x, int idx, size_t len, struct fab_mr **mr);
};

/* Implementations embed this and find themselves again with container_of. */
struct algo_xport {
    const struct algo_xport_ops *ops;
};

static inline int ax_wires(const struct algo_xport *x)
{
    return x->ops->wires(x);
}
static inline int ax_can_send(struct algo_xport *x, int peer, int lane)
{
    return x->ops->can_send(x, peer, lane);
}
static inline int ax_send(struct algo_xport *x, int peer, int lane, const void *buf, size_t len,
                          struct fab_mr *mr)
{
    return x->ops->send(x, peer, lane, buf, len, mr);
}
static inline int ax_can_recv(struct algo_xport *x, int peer, int lane)
{
    return x->ops->can_recv(x, peer, lane);
}
static inline int ax_recv(struct algo_xport *x, int peer, int lane, void *buf, size_t len,
                          struct fab_mr *mr)
{
    return x->ops->recv(x, peer, lane, buf, len, mr);
}
static inline uint32_t ax_sent(struct algo_xport *x, int peer, int lane)
{
    return x->ops->sent(x, peer, lane);
}
static inline uint32_t ax_sdone(struct algo_xport *x, int peer, int lane)
{
    return x->ops->sdone(x, peer, lane);
}
static inline uint32_t ax_posted(struct algo_xport *x, int peer, int lane)
{
    return x->ops->posted(x, peer, lane);
}
static inline uint32_t ax_landed(struct algo_xport *x, int peer, int lane)
{
    return x->ops->landed(x, peer, lane);
}
static inline char *ax_slot(struct algo_xport *x, int peer, int lane, int i, struct fab_mr **mr)
{
    return x->ops->slot(x, peer, lane, i, mr);
}
static inline int ax_slot_take(struct algo_xport *x, int peer, int lane)
{
    return x->ops->slot_take(x, peer, lane);
}
static inline void ax_slot_give(struct algo_xport *x, int peer, int lane, int i)
{
    x->ops->slot_give(x, peer, lane, i);
}
static inline char *ax_own(struct algo_xport *x, int idx)
{
    return x->ops->own(x, idx);
}
static inline char *ax_scratch(struct algo_xport *x, int idx, size_t len, struct fab_mr **mr)
{
    return x->ops->scratch(x, idx, len, mr);
}

#endif
