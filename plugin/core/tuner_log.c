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

/* "from 256 KiB to 8 MiB, NCCL's ring above" and the like, for the sweep's sizes. */
static void ranges(const struct jaccl_tuner *t, char *out, size_t len)
{
    int lo = -1, n = 0, first = -1, last = -1;
    size_t used = 0;
    out[0] = '\0';
    for (int b = SWEEP_LO; b <= SWEEP_HI + 1; b++) {
        int win = b <= SWEEP_HI && collnet_wins(t, (size_t)1 << b);
        if (win && lo < 0)
            lo = b;
        if (win || lo < 0)
            continue;
        char a[16], z[16];
        size_str(a, sizeof(a), lo);
        size_str(z, sizeof(z), b - 1);
        used += (size_t)snprintf(out + used, used < len ? len - used : 0, "%sfrom %s to %s",
                                 n++ ? ", " : "", a, z);
        first = first < 0 ? lo : first;
        last = b - 1;
        lo = -1;
    }
    const char *rest = n == 0                                  ? "nowhere: NCCL's ring wins"
                       : first == SWEEP_LO && last == SWEEP_HI ? ""
                       : first == SWEEP_LO && n == 1           ? ", NCCL's ring above"
                       : last == SWEEP_HI && n == 1            ? ", NCCL's ring below"
                                                               : ", NCCL's ring elsewhere";
    snprintf(out + (used < len ? used : len - 1), used < len ? len - used : 1, "%s", rest);
}

void jaccl_tuner_log_init(const struct jaccl_tuner *t)
{
    const struct jaccl_model *m = &t->m;
    const struct algo_platform *p = &m->plat;
    char where[256] = "(NCCL passed no constants to compare with)";
    if (t->comm.have_consts)
        ranges(t, where, sizeof(where));
    JINFO(NCCL_INIT | NCCL_TUNING,
          "tuner: communicator %#llx, %d ranks on %d nodes: all-reduce on jaccl's CollNet "
          "chosen %s (estimated, 4 KiB - 16 GiB); model: link %.2f GB/s (%s), hop %.1f us "
          "(%s), %s sum %.1f GB/s in cache, %.1f GB/s from memory (above %zu KiB)",
          (unsigned long long)t->comm.comm_id, t->comm.nranks, t->comm.nnodes, where,
          p->link_Bps / 1e9, m->link_from, p->hop_s * 1e6, m->lat_from, jaccl_dtype_name(m->dtype),
          p->kern_hot_Bps / 1e9, p->kern_cold_Bps / 1e9, p->cache_bytes >> 10);
}
