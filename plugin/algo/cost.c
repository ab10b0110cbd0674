/* SPDX-License-Identifier: BSD-3-Clause */
/* The tuner's formula: an algorithm's work (its own algo_ops.work) on a platform, in seconds.
 * docs/tuner.md derives it and says where each constant comes from. */
#include "algo/cost.h"

#include "algo/algo.h"

/* What the rank's transfers move per second: its cables, as many as it has peers to spread
 * over, unless its lanes carry less (one TCP stream does not fill a fast link, nor one socket
 * over loopback, where the copies of several lanes run on several threads). An operation larger
 * than the cache streams from memory, which slows transfers that copy (TCP), not DMA. */
static double send_rate(const struct algo_work *w, const struct algo_platform *p)
{
    int links = w->peers < p->links ? w->peers : p->links;
    int mem = w->bytes > p->cache_bytes && p->link_mem_Bps > 0;
    double rate = (mem ? p->link_mem_Bps : p->link_Bps) * (links > 1 ? links : 1);
    double lanes = p->lane_Bps * (w->lanes > 1 ? w->lanes : 1);
    return p->lane_Bps > 0 && lanes < rate ? lanes : rate;
}

/* Sums rather than overlaps the transfers and the reductions: over TCP both are copies by the
 * same CPU; over RDMA the NIC moves the next frame while the CPU reduces this one, so this
 * over-states by at most the smaller of the two (docs/tuner.md, "What the model leaves out").
 * A lone operation first waits one control message for its credits (docs/collectives.md,
 * section 12): one hop more than its steps. A rank with a share of a core copies at that share
 * of a core's speed; the hop is what a message takes in the group as it runs (a crowded host's
 * hop is longer, and measured so: jaccl-coll-perf -P -c). */
double algo_time(const struct algo_work *w, const struct algo_platform *p)
{
    if (w->hops == 0)
        return 0;
    double share = p->cpu_share > 0 && p->cpu_share < 1 ? p->cpu_share : 1;
    double link = send_rate(w, p) * share;
    double kern = (w->bytes > p->cache_bytes ? p->kern_cold_Bps : p->kern_hot_Bps) * share;
    double t = (w->hops + 1) * p->hop_s;
    if (w->sent > 0)
        t += w->sent / link;
    if (w->reduced > 0)
        t += w->reduced / kern;
    return t;
}

/* The geometry the core would build for the call (rank 0: every rank does the same work). */
static void geom_of(struct algo_geom *g, enum algo_kind kind, int nranks, size_t bytes, size_t esz)
{
    if (kind == ALGO_ALLREDUCE) {
        algo_geom_allreduce(g, nranks, 0, bytes / esz, esz);
        return;
    }
    size_t bpr = bytes / (size_t)nranks / esz * esz;
    algo_geom_window(g, kind, nranks, 0, kind == ALGO_ALLGATHER ? 1 : esz, bpr, 0,
                     bpr * (size_t)nranks);
}

double algo_predict(enum algo_kind kind, int nranks, size_t bytes, size_t esz,
                    const struct algo_choice *ch, const struct algo_platform *p, int *algo)
{
    struct algo_op op = {.algo = ALGO_RING};
    geom_of(&op.g, kind, nranks > 0 ? nranks : 1, bytes, esz ? esz : 1);
    algo_choose(&op, ch);
    if (algo)
        *algo = op.algo;
    struct algo_work w = {.bytes = algo_total(&op.g)};
    algo_ops_of(op.algo)->work(&op.g, &w);
    return algo_time(&w, p);
}
