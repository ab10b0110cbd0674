/* SPDX-License-Identifier: BSD-3-Clause */
/* Measuring the ring neighbours' link through the plugin's p2p, as NCCL's proxy drives it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_calib.h"
#include "mp_check.h"
#include "mp_data.h"
#include "mp_flow.h"
#include "mp_link.h"
#include "mp_perf.h"
#include "mp_util.h"

/* Each figure is the median of BATCHES batches, so that a burst of other processes' load (on
 * the shared development box: often) decides one batch, not the figure. */
#define BATCHES    9
#define HOP_ROUNDS 25          /* tokens around the ring per batch */
#define BW_BYTES   (4u << 20)  /* NCCL's largest CollNet call */
#define BW_ROUNDS  3           /* exchanges per batch */
#define MEM_BYTES  (64u << 20) /* buffers a large operation streams through */
#define V_HOP      0           /* per-rank values */
#define V_BW       1
#define V_MEM      2
#define TAG        7

struct calib_bufs {
    char *s, *r; /* MEM_BYTES each; the first BW_BYTES are the hot messages */
    void *smh, *rmh;
    size_t at; /* where the next message from memory starts */
};

typedef double (*batch_fn)(const struct mp_net *n, const struct mp_ring *ring,
                           struct calib_bufs *b);

/* A token around the ring: rank 0 starts it, every other rank forwards what it got. Each
 * receive is posted (its clear-to-send on its way) while the token is elsewhere, so each hop
 * is one message's one-way time. Seconds per hop. */
static double hop_batch(const struct mp_net *n, const struct mp_ring *ring, struct calib_bufs *b)
{
    int timeout = mp_scaled(30);
    double t0 = mp_now();
    for (int i = 0; i < HOP_ROUNDS; i++) {
        if (mp_rank == 0 && !MP_OK(mp_send_wait(n, ring->scomm, b->s, 8, TAG, b->smh, timeout)))
            return -1;
        if (!MP_OK(mp_recv_wait(n, ring->rcomm, b->r, 8, TAG, b->rmh, NULL, timeout)))
            return -1;
        if (mp_rank != 0 && !MP_OK(mp_send_wait(n, ring->scomm, b->s, 8, TAG, b->smh, timeout)))
            return -1;
    }
    return (mp_now() - t0) / HOP_ROUNDS / mp_sh->nranks;
}

/* Every rank sends BW_BYTES to the right while it receives as many from the left, BW_ROUNDS
 * times, from and into buffers at offset `at` (or the same first BW_BYTES, hot, when `cold` is
 * 0): bytes per second each way. */
static double exchanges(const struct mp_net *n, const struct mp_ring *ring, struct calib_bufs *b,
                        int cold)
{
    struct mp_xchg x = {.net = n,
                        .scomm = ring->scomm,
                        .rcomm = ring->rcomm,
                        .smh = b->smh,
                        .rmh = b->rmh,
                        .size = BW_BYTES,
                        .tag = TAG};
    double t0 = mp_now();
    for (int i = 0; i < BW_ROUNDS; i++) {
        size_t at = cold ? b->at : 0;
        b->at = (b->at + BW_BYTES) % MEM_BYTES;
        x.sbuf = b->s + at;
        x.rbuf = b->r + at;
        if (!MP_OK(mp_exchange(&x, 0, mp_now() + mp_scaled(30))))
            return -1;
    }
    return (double)BW_BYTES * BW_ROUNDS / (mp_now() - t0);
}

static double rate_batch(const struct mp_net *n, const struct mp_ring *ring, struct calib_bufs *b)
{
    return exchanges(n, ring, b, 0);
}

static double mem_batch(const struct mp_net *n, const struct mp_ring *ring, struct calib_bufs *b)
{
    return exchanges(n, ring, b, 1);
}

/* The median of BATCHES calls of fn, every rank starting each batch together; -1 if one
 * failed. */
static double median_of(batch_fn fn, const struct mp_net *n, const struct mp_ring *ring,
                        struct calib_bufs *b)
{
    double v[BATCHES];
    for (int i = 0; i < BATCHES; i++) {
        mp_barrier();
        if ((v[i] = fn(n, ring, b)) < 0)
            return -1;
    }
    return mp_median(v, BATCHES);
}

static int measure(const struct mp_net *n, const struct mp_ring *ring, struct calib_bufs *b)
{
    if (!MP_OK(mp_net_regmr(n, ring->scomm, b->s, MEM_BYTES, NCCL_PTR_HOST, &b->smh)) ||
        !MP_OK(mp_net_regmr(n, ring->rcomm, b->r, MEM_BYTES, NCCL_PTR_HOST, &b->rmh)))
        return -1;
    double hop = median_of(hop_batch, n, ring, b);
    double bw = hop > 0 ? median_of(rate_batch, n, ring, b) : -1;
    double mem = bw > 0 ? median_of(mem_batch, n, ring, b) : -1;
    MP_OK(mp_net_deregmr(n, ring->scomm, b->smh));
    MP_OK(mp_net_deregmr(n, ring->rcomm, b->rmh));
    mp_value_set(V_HOP, hop);
    mp_value_set(V_BW, bw);
    mp_value_set(V_MEM, mem);
    return hop > 0 && bw > 0 && mem > 0 ? 0 : -1;
}

static double lowest(double a, double b)
{
    return a < b ? a : b;
}

/* The slowest rank's figures: the longest hop, the lowest rates. */
static void publish(const struct mp_calib_run *run)
{
    struct mp_calib c = {0, mp_value_get(0, V_BW), mp_value_get(0, V_MEM)};
    for (int r = 0; r < mp_sh->nranks; r++) {
        double hop = mp_value_get(r, V_HOP);
        c.hop_s = hop > c.hop_s ? hop : c.hop_s;
        c.link_Bps = lowest(c.link_Bps, mp_value_get(r, V_BW));
        c.mem_Bps = lowest(c.mem_Bps, mp_value_get(r, V_MEM));
    }
    *run->out = c;
}

int mp_calib_rank(int rank, int nranks, void *arg)
{
    const struct mp_calib_run *run = arg;
    struct mp_net n;
    struct mp_ring ring;
    struct calib_bufs b = {mp_alloc(MEM_BYTES), mp_alloc(MEM_BYTES), NULL, NULL, 0};
    int rc = -1;
    char lanes[16];
    snprintf(lanes, sizeof(lanes), "%d", run->lanes);
    if (run->lanes > 0)
        setenv("NCCL_JACCL_NSOCKS", lanes, 1); /* before the plugin reads it */
    if (b.s && b.r) { /* touched now, or the first pass would time the page faults */
        memset(b.s, 1, MEM_BYTES);
        memset(b.r, 0, MEM_BYTES);
    }
    if (b.s && b.r && mp_net_open(&n, run->version) == 0) {
        if (mp_ring_connect(&n, 0, &ring) == 0)
            rc = measure(&n, &ring, &b);
        mp_ring_close(&n, &ring);
        mp_barrier();
        if (rank == 0 && rc == 0)
            publish(run);
        mp_net_fini(&n);
        mp_net_unload(&n);
    }
    mp_free(b.s, MEM_BYTES);
    mp_free(b.r, MEM_BYTES);
    return rc == 0 ? 0 : 1;
}
