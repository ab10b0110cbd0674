/* SPDX-License-Identifier: BSD-3-Clause */
/* A stream of messages over one comm, driven like NCCL's proxy drives it: post isend/irecv
 * while fewer than `window` requests are in flight (a NULL request means "try again later"),
 * and test the oldest request first, completing in posting order. Several flows (both
 * directions, several comms) progress together in mp_flows_run, which yields the CPU between
 * rounds rather than spinning: the box has two cores and the plugin has threads of its own. */
#ifndef MP_FLOW_H
#define MP_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "mp_net.h"

#define MP_MAX_WINDOW 128

struct mp_flow {
    /* ---- set by the caller ---- */
    const struct mp_net *net;
    void *comm;
    int is_send;
    int count;     /* messages to move */
    int window;    /* requests in flight at most, 1 .. MP_MAX_WINDOW */
    char *base;    /* message i lives at base + (i % window) * stride ... */
    size_t stride; /* ... which must leave room for the guard: stride > capacity */
    void *mh;      /* one registration covering every slot */
    size_t size;   /* bytes per message, unless size_fn is set */
    size_t (*size_fn)(int i, void *arg); /* bytes sent = bytes the receiver must see */
    size_t (*cap_fn)(int i, void *arg);  /* receive capacity (default: the size) */
    void *arg;
    uint64_t seed; /* message i carries mp_fill(seed + i) */
    int check;     /* fill sends; verify size, content and the untouched tail of receives */
    int preload;   /* preload *request with NCCL_NET_OPTIONAL_RECV_COMPLETION like NCCL */
    int tag;
    /* ---- results ---- */
    int posted, done;
    long retries;     /* NULL requests */
    int peak;         /* most requests in flight at once */
    ncclResult_t err; /* first error returned by isend/irecv/test */
    int bad;          /* receives with the wrong size or content, or a scribbled tail */
    /* ---- private ---- */
    int prepared; /* message index whose buffer is filled / guarded */
    void *req[MP_MAX_WINDOW];
};

/* One round: test in order, then post. 1 all done, 0 in progress, -1 error (f->err). */
int mp_flow_step(struct mp_flow *f);
/* Only the test half of a step: completions, nothing posted. Same return values. */
int mp_flow_test(struct mp_flow *f);
/* Only the post half, until a whole window (or every message, if fewer) is in flight: NULL
 * requests are posted again, nothing is tested. 0 once full; -1 on an error (f->err) or when
 * `deadline` (mp_now() seconds) passes first. For "the plugin holds this many requests at
 * once" checks: how soon the peer's clear-to-sends come is then no part of the verdict. */
int mp_flow_fill(struct mp_flow *f, double deadline);
/* Between two polls of the plugin: sleeps MP_POLL_SLEEP_US microseconds if it is set, else
 * def_us; 0 = sched_yield(), as NCCL's proxy progress thread does. */
void mp_poll_pause(long def_us);

/* Rounds over all flows until every one is done (0), one fails (-1: see its err), or timeout_s
 * passes (-1, with a note naming the stuck flows). Yields between rounds; MP_POLL_SLEEP_US=N
 * in the environment sleeps N us instead (an experiment knob for benchmarks). */
int mp_flows_run(struct mp_flow *flows, int nflows, int timeout_s);

/* One message, posted (a NULL request is retried) and tested until done. Returns the first
 * error from isend/irecv/test, ncclSuccess, or ncclInProgress if timeout_s passed first.
 * mp_recv_wait stores the size test reported in *got (if got). Nothing is printed. */
ncclResult_t mp_send_wait(const struct mp_net *n, void *comm, void *buf, size_t size, int tag,
                          void *mh, int timeout_s);
ncclResult_t mp_recv_wait(const struct mp_net *n, void *comm, void *buf, size_t cap, int tag,
                          void *mh, int *got, int timeout_s);

/* One exchange, as NCCL's proxy runs a send and a receive of the same step: post the receive,
 * then the send, and test both until both are done. A NULL request means "not now" (for
 * isend: the receiver's clear-to-send has not come) and that post is retried; it is never
 * taken for a finished operation, or the send would stay unposted and the next exchange's
 * send would fill this exchange's receive. */
struct mp_xchg {
    /* ---- set by the caller ---- */
    const struct mp_net *net;
    void *scomm, *rcomm;
    void *sbuf, *rbuf;
    void *smh, *rmh;
    size_t size; /* bytes sent; also the receive's capacity */
    int tag;
    /* ---- results ---- */
    long send_retries, recv_retries; /* posts that returned a NULL request */
    /* ---- private ---- */
    void *sreq, *rreq;
    int sdone, rdone;
};

/* post_only: return once both are posted (requests left in flight: x->sreq, x->rreq).
 * ncclSuccess, the first error of irecv/isend/test, or ncclInProgress at the deadline. */
ncclResult_t mp_exchange(struct mp_xchg *x, int post_only, double deadline);

#endif
