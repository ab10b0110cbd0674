/* SPDX-License-Identifier: BSD-3-Clause */
/* The tuner's one INFO line per communicator: the all-reduce sizes at which jaccl's CollNet
 * beats NCCL's ring, and the model's constants. NCCL's cost table is not known at init (NCCL
 * builds it after the tuner's init, and hands it over one size at a time), so the ring is
 * estimated here with NCCL's own formula (docs/tuner.md, "The INFO line"); every actual
 * decision is NCCL's, on the table it passes to getCollInfo. */
#include <stdio.h>
#include <string.h>

#include "core/tuner.h"
#include "util/log.h"

#define SWEEP_LO 12 /* 4 KiB */
#define SWEEP_HI 34 /* 16 GiB */

/* NCCL's ring all-reduce (SIMPLE, across nodes) over links of the model's rate: latency from
 * the constants NCCL passed (with its 1.4 "plateau" factor, and the devices' latency twice per
 * network step), bandwidth the link's times R / 2(R-1). Intra-node steps are priced as NVLink
 * ones, but at least 3 us (NCCL's net overhead, SIMPLE). */
static double ring_us(const struct jaccl_tuner *t, size_t bytes)
{
    const struct jaccl_tuner_comm *c = &t->comm;
    int R = c->nranks, N = c->nnodes;
    double inter = (R == N ? c->tree_net_us : c->ring_net_us) + 2 * (double)(int)t->m.dev_lat_us;
    double intra = c->ring_nvl_us > 3 ? c->ring_nvl_us : 3;
    double lat = c->ring_base_us + (2.0 * (R - 1) - 2.0 * (N - 1)) * intra + 2.0 * (N - 1) * inter;
    double algbw_GBps = t->m.plat.link_Bps / 1e9 * R / (2.0 * (R - 1));
    return 1.4 * lat + (double)bytes / (1e3 * algbw_GBps);
}

/* Both stage through host memory (NCCL's ring over jaccl's net does too): staging left out. */
static int collnet_wins(const struct jaccl_tuner *t, size_t bytes)
{
    return jaccl_tuner_cost_us(t, ALGO_ALLREDUCE, 1, bytes, 1, 0) < ring_us(t, bytes);
}

static void size_str(char *buf, size_t len, int log2b)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB"};
    snprintf(buf, len, "%llu %s", 1ull << (log2b % 10), units[log2b / 10]);
}

/* The sweep's sizes where CollNet wins, as runs [lo, hi] of powers of two. */
struct runs {
    int n, lo[SWEEP_HI - SWEEP_LO + 1], hi[SWEEP_HI - SWEEP_LO + 1];
};

static void find_runs(const struct jaccl_tuner *t, struct runs *r)
{
    r->n = 0;
    for (int b = SWEEP_LO, open = 0; b <= SWEEP_HI; b++) {
        int win = collnet_wins(t, (size_t)1 << b);
        if (win && !open)
            r->lo[r->n++] = b;
        if (win)
            r->hi[r->n - 1] = b;
        open = win;
    }
}

/* Where NCCL's ring wins, said after the runs. */
static const char *ring_where(const struct runs *r)
{
    if (r->n == 0)
        return "at no size, NCCL's ring everywhere";
    int from_bottom = r->lo[0] == SWEEP_LO, to_top = r->hi[r->n - 1] == SWEEP_HI;
    if (from_bottom && to_top && r->n == 1)
        return "";
    if (r->n == 1)
        return from_bottom ? ", NCCL's ring above"
               : to_top    ? ", NCCL's ring below"
                           : ", NCCL's ring below and above";
    return ", NCCL's ring in between";
}

/* "from 256 KiB to 8 MiB, NCCL's ring above" and the like. */
static void ranges(const struct jaccl_tuner *t, char *out, size_t len)
{
    struct runs r;
    size_t used = 0;
    find_runs(t, &r);
    out[0] = '\0';
    for (int i = 0; i < r.n && used < len; i++) {
        char a[16], z[16];
        size_str(a, sizeof(a), r.lo[i]);
        size_str(z, sizeof(z), r.hi[i]);
        used += (size_t)snprintf(out + used, len - used, "%sfrom %s to %s", i ? ", " : "", a, z);
    }
    if (used < len)
        snprintf(out + used, len - used, "%s", ring_where(&r));
}

void jaccl_tuner_log_init(const struct jaccl_tuner *t)
{
    const struct jaccl_model *m = &t->m;
    const struct algo_platform *p = &m->plat;
    char where[256] = "(NCCL passed no constants to compare with)";
    if (t->comm.have_consts)
        ranges(t, where, sizeof(where));
    JINFO(NCCL_INIT | NCCL_TUNING,
          "tuner: communicator %#llx, %d ranks on %d nodes: jaccl's CollNet chosen for all-reduce "
          "%s (estimated over 4 KiB - 16 GiB); model: link %.2f GB/s (%s), hop %.1f us "
          "(%s), %s sum %.1f GB/s in cache, %.1f GB/s from memory (above %zu KiB)",
          (unsigned long long)t->comm.comm_id, t->comm.nranks, t->comm.nnodes, where,
          p->link_Bps / 1e9, m->link_from, p->hop_s * 1e6, m->lat_from, jaccl_dtype_name(m->dtype),
          p->kern_hot_Bps / 1e9, p->kern_cold_Bps / 1e9, p->cache_bytes >> 10);
}
