/* SPDX-License-Identifier: BSD-3-Clause */
/* The tuner model's constants, each from where docs/tuner.md says: the link from the knobs or
 * from jaccl's own devices, the reduction kernels from a measurement on this CPU, the algorithm
 * choice from the same settings a CollNet comm uses. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/api.h"
#include "core/coll_choice.h"
#include "core/tuner.h"
#include "util/param.h"

/* The slowest device's speed and the largest latency it reports: the devices NCCL may pair a
 * CollNet head with. */
struct dev_view {
    int n;
    int speed_mbps;
    double lat_us;
    char name[64];
};

/* Through the same calls NCCL makes: an init context holds the fabric while the properties are
 * read (opening it if nothing else did), and its finalize closes the fabric again if it was the
 * only holder. */
static void read_devices(struct dev_view *d)
{
    void *ctx = NULL;
    int n = 0;
    if (jaccl_init(&ctx, 0, NULL, NULL, NULL) != ncclSuccess)
        return;
    jaccl_devices(&n);
    for (int i = 0; i < n; i++) {
        struct jaccl_props p;
        if (jaccl_get_properties(i, &p) != ncclSuccess)
            continue;
        if (d->n++ == 0 || p.speed_mbps < d->speed_mbps) {
            d->speed_mbps = p.speed_mbps;
            snprintf(d->name, sizeof(d->name), "%s", p.name ? p.name : "?");
        }
        d->lat_us = p.latency_us > d->lat_us ? p.latency_us : d->lat_us;
    }
    jaccl_finalize(ctx);
}

/* The knob's hop, else the devices' largest latency, else the measured default. */
static void model_hop(struct jaccl_model *m, int64_t ns, const struct dev_view *d)
{
    const char *from = ns >= 0 ? "NCCL_JACCL_TUNER_LAT_NS" : d->lat_us > 0 ? "devices" : "default";
    double lat_ns = ns >= 0         ? (double)ns
                    : d->lat_us > 0 ? d->lat_us * 1e3
                                    : JACCL_TUNER_LAT_DEFAULT_NS;
    m->plat.hop_s = lat_ns * 1e-9;
    snprintf(m->lat_from, sizeof(m->lat_from), "%s", from);
}

/* Link, lane and hop from the knobs; the devices are read only for what the knobs leave out. */
static int model_link(struct jaccl_model *m)
{
    int64_t mbps = jaccl_param_int(JP_TUNER_LINK), ns = jaccl_param_int(JP_TUNER_LAT);
    struct dev_view d = {0};
    if (mbps == 0 || ns < 0)
        read_devices(&d);
    if (mbps == 0 && d.n == 0)
        return -ENODEV;
    m->dev_lat_us = d.lat_us;
    m->plat.link_Bps = (double)(mbps ? mbps : d.speed_mbps) * 1e6 / 8;
    m->plat.link_mem_Bps = (double)jaccl_param_int(JP_TUNER_MEM) * 1e6 / 8;
    m->plat.lane_Bps = (double)jaccl_param_int(JP_TUNER_LANE) * 1e6 / 8;
    if (mbps)
        snprintf(m->link_from, sizeof(m->link_from), "NCCL_JACCL_TUNER_LINK_MBPS");
    else
        snprintf(m->link_from, sizeof(m->link_from), "device %s", d.name);
    model_hop(m, ns, &d);
    return 0;
}

/* NCCL_JACCL_TUNER_DTYPE, or the slowest measured type when streaming (what large collectives
 * do, where the choice matters most). JD_NUM when nothing was measured. */
static enum jaccl_dtype model_dtype(const struct algo_kern_rates *r)
{
    const char *want = jaccl_param_str(JP_TUNER_DTYPE);
    int any = strcmp(want, "auto") == 0;
    enum jaccl_dtype pick = JD_NUM;
    for (int i = 0; i < JD_NUM; i++) {
        enum jaccl_dtype t = (enum jaccl_dtype)i;
        if (!algo_kern_rated(t) || r->cold_Bps[t] <= 0 || r->hot_Bps[t] <= 0)
            continue;
        if (!any && strcmp(want, jaccl_dtype_name(t)) == 0)
            return t;
        if (any && (pick == JD_NUM || r->cold_Bps[t] < r->cold_Bps[pick]))
            pick = t;
    }
    return pick;
}

static int model_kernels(struct jaccl_model *m)
{
    const struct algo_kern_rates *r = algo_kern_rates();
    m->dtype = model_dtype(r);
    if (m->dtype == JD_NUM)
        return -ENOMEM; /* the measurement could not allocate its buffers */
    m->plat.kern_hot_Bps = r->hot_Bps[m->dtype];
    m->plat.kern_cold_Bps = r->cold_Bps[m->dtype];
    m->plat.cache_bytes = r->cache_bytes;
    return 0;
}

/* Ranks that outnumber the cores get a share of one each: over loopback every transfer and
 * every reduction is a copy by some core (docs/tuner.md). */
static double cpu_share(int ranks_per_host)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > 0 && ranks_per_host > cpus ? (double)cpus / ranks_per_host : 1;
}

int jaccl_model_init(struct jaccl_model *m, int nranks, int ranks_per_host)
{
    memset(m, 0, sizeof(*m));
    m->nranks = nranks;
    coll_choice_init(&m->choice, nranks, (int)jaccl_param_int(JP_RING_WIRES));
    int rc = model_link(m);
    if (rc == 0)
        rc = model_kernels(m);
    /* One device per CollNet comm: its ring wires are more lanes over the same cable, which
     * help only where one lane cannot fill it (NCCL_JACCL_TUNER_LANE_MBPS). */
    m->plat.links = 1;
    m->plat.cpu_share = cpu_share(ranks_per_host);
    return rc;
}

double jaccl_model_op(const struct jaccl_model *m, enum algo_kind kind, size_t bytes,
                      int algo_force, int *algo)
{
    struct algo_choice ch = m->choice;
    if (algo_force != ALGO_AUTO) {
        ch.force = algo_force;
        ch.usable = algo_wanted(m->nranks, &ch);
    }
    size_t esz = kind == ALGO_ALLGATHER ? 1 : jaccl_dtype_size(m->dtype);
    return algo_predict(kind, m->nranks, bytes, esz, &ch, &m->plat, algo);
}
