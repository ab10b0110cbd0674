/* SPDX-License-Identifier: BSD-3-Clause */
/* Windowed message streams over one comm, progressed like NCCL's proxy progresses them. */
#include <stdatomic.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "mp_check.h"
#include "mp_data.h"
#include "mp_flow.h"
#include "mp_util.h"

/* Bytes of message i, and its receive capacity (the size when there is no cap_fn). */
static size_t mp_flow_size(const struct mp_flow *f, int i)
{
    return f->size_fn ? f->size_fn(i, f->arg) : f->size;
}

static size_t mp_flow_cap(const struct mp_flow *f, int i)
{
    return f->cap_fn ? f->cap_fn(i, f->arg) : mp_flow_size(f, i);
}

/* Bytes after a receive's capacity that must stay untouched. */
#define GUARD_TAIL 4096

static char *slot_buf(const struct mp_flow *f, int i)
{
    return f->base + (size_t)(i % f->window) * f->stride;
}

static size_t guard_end(const struct mp_flow *f, int i)
{
    size_t end = mp_flow_cap(f, i) + GUARD_TAIL;
    return end < f->stride ? end : f->stride;
}

/* Once per message, however often the post is retried: the payload for a send; for a receive
 * the guard pattern over its capacity and GUARD_TAIL bytes behind it, so any byte written past
 * the message shows. */
static void prepare(struct mp_flow *f, int i)
{
    if (!f->check || f->prepared == i + 1)
        return;
    if (f->is_send)
        mp_fill(slot_buf(f, i), mp_flow_size(f, i), f->seed + (uint64_t)i);
    else
        memset(slot_buf(f, i), MP_GUARD_BYTE, guard_end(f, i));
    f->prepared = i + 1;
}

/* A receive completed with `got` bytes: right size, right bytes, nothing written after them. */
static void verify_recv(struct mp_flow *f, int i, int got)
{
    size_t want = mp_flow_size(f, i);
    const char *b = slot_buf(f, i);
    if (!MP_CHECK(got >= 0 && (size_t)got == want, "recv #%d: test reported %d bytes, sent %zu", i,
                  got, want)) {
        f->bad++;
        return;
    }
    if (!f->check)
        return;
    size_t bad = mp_verify(b, want, f->seed + (uint64_t)i);
    size_t tail = mp_guard_check(b + want, guard_end(f, i) - want);
    if (!MP_CHECK(bad == (size_t)-1, "recv #%d (%zu bytes): wrong content from byte %zu", i, want,
                  bad) ||
        !MP_CHECK(tail == (size_t)-1,
                  "recv #%d (%zu bytes, capacity %zu): byte %zu after the message was written", i,
                  want, mp_flow_cap(f, i), want + tail))
        f->bad++;
}

static int test_in_order(struct mp_flow *f)
{
    while (f->done < f->posted) {
        int done = 0, size = -1;
        ncclResult_t rc = mp_net_test(f->net, f->req[f->done % f->window], &done, &size);
        if (rc != ncclSuccess) {
            f->err = rc;
            return -1;
        }
        if (!done)
            break;
        if (!f->is_send)
            verify_recv(f, f->done, size);
        f->done++;
    }
    return 0;
}

static int post_more(struct mp_flow *f)
{
    while (f->posted < f->count && f->posted - f->done < f->window) {
        int i = f->posted;
        void **req = &f->req[i % f->window];
        char *buf = slot_buf(f, i);
        ncclResult_t rc;
        prepare(f, i);
        *req = f->preload ? (void *)NCCL_NET_OPTIONAL_RECV_COMPLETION : NULL;
        if (f->is_send)
            rc = mp_net_isend(f->net, f->comm, buf, mp_flow_size(f, i), f->tag, f->mh, req);
        else
            rc = mp_net_irecv(f->net, f->comm, buf, mp_flow_cap(f, i), f->tag, f->mh, req);
        if (rc != ncclSuccess) {
            f->err = rc;
            return -1;
        }
        if (!MP_CHECK(*req != (void *)NCCL_NET_OPTIONAL_RECV_COMPLETION,
                      "irecv #%d left the preloaded 0x1 in *request", i)) {
            f->err = ncclInternalError;
            return -1;
        }
        if (!*req) {
            f->retries++;
            break;
        }
        f->posted++;
        if (f->posted - f->done > f->peak)
            f->peak = f->posted - f->done;
    }
    return 0;
}

int mp_flow_test(struct mp_flow *f)
{
    if (f->err != ncclSuccess || test_in_order(f) != 0)
        return -1;
    return f->done == f->count;
}

int mp_flow_fill(struct mp_flow *f, double deadline)
{
    int want = f->count - f->done < f->window ? f->count - f->done : f->window;

    for (;;) {
        if (f->err != ncclSuccess || post_more(f) != 0)
            return -1;
        if (f->posted - f->done >= want)
            return 0;
        if (mp_now() > deadline)
            return -1;
        mp_poll_pause(0);
    }
}

int mp_flow_step(struct mp_flow *f)
{
    if (mp_flow_test(f) < 0 || post_more(f) != 0)
        return -1;
    return f->done == f->count;
}

/* The env value is read once; -2 = not read yet, -1 = unset. */
static _Atomic long g_poll_env = -2;

void mp_poll_pause(long def_us)
{
    long us = g_poll_env;
    if (us == -2)
        g_poll_env = us = mp_env_long("MP_POLL_SLEEP_US", -1);
    if (us < 0)
        us = def_us;
    if (us > 0) {
        struct timespec ts = {0, us * 1000};
        nanosleep(&ts, NULL);
    } else {
        sched_yield();
    }
}

int mp_flows_run(struct mp_flow *flows, int nflows, int timeout_s)
{
    double deadline = mp_now() + timeout_s;
    for (;;) {
        int all = 1;
        for (int i = 0; i < nflows; i++) {
            int r = mp_flow_step(&flows[i]);
            if (r < 0)
                return -1;
            all &= r;
        }
        if (all)
            return 0;
        if (mp_now() > deadline)
            break;
        mp_poll_pause(0);
    }
    for (int i = 0; i < nflows; i++)
        if (flows[i].done < flows[i].count)
            mp_note("flow %d (%s) stuck after %d s: %d of %d posted, %d done", i,
                    flows[i].is_send ? "send" : "recv", timeout_s, flows[i].posted, flows[i].count,
                    flows[i].done);
    return -1;
}

/* Tests one posted request until done, an error, or timeout_s (ncclInProgress). */
static ncclResult_t mp_test_wait(const struct mp_net *n, void *req, int *got, int timeout_s)
{
    double deadline = mp_now() + timeout_s;
    for (;;) {
        int done = 0, size = -1;
        ncclResult_t rc = mp_net_test(n, req, &done, &size);
        if (rc != ncclSuccess)
            return rc;
        if (done) {
            if (got)
                *got = size;
            return ncclSuccess;
        }
        if (mp_now() > deadline)
            return ncclInProgress;
        sched_yield();
    }
}

/* Posts until the plugin hands out a request; the caller's deadline covers the wait. */
static ncclResult_t post_wait(const struct mp_net *n, void *comm, int is_send, void *buf,
                              size_t size, int tag, void *mh, void **req, double deadline)
{
    for (;;) {
        ncclResult_t rc = is_send ? mp_net_isend(n, comm, buf, size, tag, mh, req)
                                  : mp_net_irecv(n, comm, buf, size, tag, mh, req);
        if (rc != ncclSuccess || *req)
            return rc;
        if (mp_now() > deadline)
            return ncclInProgress;
        sched_yield();
    }
}

ncclResult_t mp_send_wait(const struct mp_net *n, void *comm, void *buf, size_t size, int tag,
                          void *mh, int timeout_s)
{
    void *req = NULL;
    double t0 = mp_now();
    ncclResult_t rc = post_wait(n, comm, 1, buf, size, tag, mh, &req, t0 + timeout_s);
    if (rc != ncclSuccess)
        return rc;
    return mp_test_wait(n, req, NULL, timeout_s - (int)(mp_now() - t0));
}

ncclResult_t mp_recv_wait(const struct mp_net *n, void *comm, void *buf, size_t cap, int tag,
                          void *mh, int *got, int timeout_s)
{
    void *req = NULL;
    double t0 = mp_now();
    ncclResult_t rc = post_wait(n, comm, 0, buf, cap, tag, mh, &req, t0 + timeout_s);
    if (rc != ncclSuccess)
        return rc;
    return mp_test_wait(n, req, got, timeout_s - (int)(mp_now() - t0));
}

/* Posts one side of an exchange if it has no request yet, else tests it. */
static ncclResult_t xchg_step(struct mp_xchg *x, int is_send)
{
    void **req = is_send ? &x->sreq : &x->rreq;
    int *done = is_send ? &x->sdone : &x->rdone;
    if (*done)
        return ncclSuccess;
    if (!*req) {
        ncclResult_t rc =
                is_send ? mp_net_isend(x->net, x->scomm, x->sbuf, x->size, x->tag, x->smh, req)
                        : mp_net_irecv(x->net, x->rcomm, x->rbuf, x->size, x->tag, x->rmh, req);
        if (rc == ncclSuccess && !*req)
            ++*(is_send ? &x->send_retries : &x->recv_retries);
        return rc;
    }
    ncclResult_t rc = mp_net_test(x->net, *req, done, NULL);
    if (rc != ncclSuccess || *done)
        *req = NULL; /* the plugin freed it */
    return rc;
}

ncclResult_t mp_exchange(struct mp_xchg *x, int post_only, double deadline)
{
    x->sreq = x->rreq = NULL;
    x->sdone = x->rdone = 0;
    for (;;) {
        ncclResult_t rc = xchg_step(x, 0);
        if (rc == ncclSuccess)
            rc = xchg_step(x, 1);
        if (rc != ncclSuccess)
            return rc;
        int posted = (x->sreq || x->sdone) && (x->rreq || x->rdone);
        if (post_only ? posted : x->sdone && x->rdone)
            return ncclSuccess;
        if (mp_now() > deadline)
            return ncclInProgress;
        nanosleep(&(struct timespec){0, 20000}, NULL);
    }
}
