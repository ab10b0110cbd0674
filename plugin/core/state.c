/* SPDX-License-Identifier: BSD-3-Clause */
/* Process-wide state: refcounted init/finalize over one fabric and its devices. Which back end
 * that is, and why, is the fabric registry's business (fab_select in fabric/fabric.h).
 *
 * NCCL 2.28 calls v11 init/finalize once per communicator, from several threads, and dlcloses
 * the library after the last finalize. The fabric is opened by the first init and held by
 * every init context, every listen comm and every domain (which every other comm holds); it
 * is closed (the fabric joins its threads there) when the last of them goes. So a finalize
 * with comms still open leaves the fabric to them, and their last close shuts it down.
 *
 * Which back end serves a device is recorded once, under g_lock, when the fabric is opened
 * (g_dev[].ops: the registry's choice today, one back end for every device; nothing here
 * assumes that). Everything made later carries its ops (fabric.h): a comm reaches the fabric
 * through its domain, endpoint and registrations, never through this file. The few readers
 * here (device count, properties, side-channel address, which back end a device has) take
 * g_lock: they run at set-up, never on the data path.
 *
 * g_lock is a plain mutex: nothing called under it comes back here (the back ends cannot reach
 * the core, and finalize frees its abandoned connects, which give their domains back, before
 * it takes the lock). The *_locked helpers are the pieces the entry points share. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/api.h"
#include "core/err.h"
#include "core/p2p.h"
#include "core/registry.h"
#include "core/relay.h"
#include "core/state.h"
#include "core/version.h"
#include "util/counters.h"
#include "util/log.h"
#include "util/param.h"

#define MAX_DEVS 64

/* What init hands NCCL, one per call (registered as JO_CTX): finalize unregisters and frees
 * it and drops that call's reference. Its connects in progress are keyed by it. It keeps what
 * NCCL configured for that communicator: listen and connect get the ctx and apply it to the
 * comms they make (accept and the data path do not, so comms copy it). */
struct jaccl_ctx {
    int traffic_class; /* -1 = none given */
};

#define SL_MAX 15 /* a service level is 4 bits */

int jaccl_ctx_traffic_class(const void *ctx)
{
    return ctx ? ((const struct jaccl_ctx *)ctx)->traffic_class : -1;
}

void jaccl_qos_fill(int ctx_tc, struct fab_ep_attr *attr)
{
    int tc = (int)jaccl_param_int(JP_TC);
    int sl = (int)jaccl_param_int(JP_SL);
    if (tc < 0)
        tc = ctx_tc >= 0 && ctx_tc <= 255 ? ctx_tc : 0;
    if (sl < 0)
        sl = ctx_tc >= 0 && ctx_tc <= SL_MAX ? ctx_tc : 0;
    attr->tclass = tc;
    attr->sl = sl;
}

/* Everything below is under g_lock. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_ctxs;                  /* live init contexts */
static int g_holds;                 /* listen comms */
static const struct fab_ops *g_ops; /* the back end the registry opened; NULL while closed */
static int g_ndevs;
static struct {
    const struct fab_ops *ops; /* the back end serving this device */
    int fdev;                  /* the device's number in that back end */
    struct fab_domain *dom;
    int refs;
} g_dev[MAX_DEVS];

/* Whether dev names a device of the open fabric. */
static int dev_ok_locked(int dev)
{
    return g_ops && dev >= 0 && dev < g_ndevs;
}

const struct fab_ops *jaccl_fabric(void)
{
    pthread_mutex_lock(&g_lock);
    const struct fab_ops *ops = g_ops;
    pthread_mutex_unlock(&g_lock);
    return ops;
}

const struct fab_ops *jaccl_dev_ops(int dev)
{
    pthread_mutex_lock(&g_lock);
    const struct fab_ops *ops = dev_ok_locked(dev) ? g_dev[dev].ops : NULL;
    pthread_mutex_unlock(&g_lock);
    return ops;
}

int jaccl_ndevs(void)
{
    pthread_mutex_lock(&g_lock);
    int n = g_ndevs;
    pthread_mutex_unlock(&g_lock);
    return n;
}

const char *jaccl_dev_name(int dev)
{
    pthread_mutex_lock(&g_lock);
    const char *name = dev_ok_locked(dev) ? g_dev[dev].ops->dev_info(g_dev[dev].fdev)->name : "?";
    pthread_mutex_unlock(&g_lock);
    return name;
}

int jaccl_dev_speed(int dev)
{
    pthread_mutex_lock(&g_lock);
    int s = dev_ok_locked(dev) ? g_dev[dev].ops->dev_info(g_dev[dev].fdev)->speed_mbps : 0;
    pthread_mutex_unlock(&g_lock);
    return s;
}

uint64_t jaccl_timeout_ns(void)
{
    return (uint64_t)jaccl_param_int(JP_TIMEOUT) * 1000000000ull;
}

int jaccl_dev_link(int dev, struct jaccl_link *out)
{
    pthread_mutex_lock(&g_lock);
    int rc = dev_ok_locked(dev) ? g_dev[dev].ops->dev_link(g_dev[dev].fdev, out) : -EINVAL;
    pthread_mutex_unlock(&g_lock);
    return rc;
}

int jaccl_links(struct jaccl_link *links, int *devs, int max)
{
    int n = 0;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; g_ops && i < g_ndevs && n < max; i++) {
        if (g_dev[i].ops->dev_link(g_dev[i].fdev, &links[n]) != 0)
            continue;
        if (devs)
            devs[n] = i;
        n++;
    }
    pthread_mutex_unlock(&g_lock);
    return n;
}

/* The lines that prove jaccl is in use and say what it offers NCCL (once per load). Caller
 * holds g_lock. */
static void log_init_locked(void)
{
    char list[512] = "";
    for (int i = 0; i < g_ndevs; i++) {
        size_t len = strlen(list);
        snprintf(list + len, sizeof(list) - len, " [%d]%s", i,
                 g_dev[i].ops->dev_info(g_dev[i].fdev)->name);
    }
    JINFO(NCCL_INIT | NCCL_NET, "jaccl %s, fabric %s (%s), %d device(s):%s", JACCL_VERSION_STR,
          g_ops->name, fab_why(), g_ndevs, list);
    JINFO(NCCL_INIT | NCCL_NET,
          "buffers are host memory only: NCCL stages GPU data through host memory (no GPUDirect "
          "RDMA)");
    if (jaccl_param_int(JP_COLL_ENABLE) == 0) {
        JINFO(NCCL_INIT | NCCL_NET, "CollNet disabled (NCCL_JACCL_COLL_ENABLE=0)");
        return;
    }
    const char *nccl = getenv("NCCL_COLLNET_ENABLE");
    int on = nccl && strcmp(nccl, "1") == 0;
    JINFO(NCCL_INIT | NCCL_NET,
          "CollNet offered (all-reduce, reduce-scatter, all-gather, algorithm %s); NCCL uses it "
          "only across nodes and with NCCL_COLLNET_ENABLE=1%s",
          jaccl_param_str(JP_ALGO), on ? "" : ", which is not set here");
}

/* Has the registry pick the back end and discover its devices (it logs why, and any failure),
 * and records which back end serves each device. Caller holds g_lock. */
static int fabric_open_locked(void)
{
    jaccl_counters_init(); /* before any fabric thread can count */
    int n = fab_select(&g_ops);
    if (n == -ENODEV) /* NCCL_JACCL_FABRIC named a back end with no usable device */
        return -EINVAL;
    if (n < 0)
        return -EIO;
    g_ndevs = n > MAX_DEVS ? MAX_DEVS : n;
    struct jaccl_link links[MAX_DEVS];
    int nlinks = 0;
    for (int i = 0; i < g_ndevs; i++) {
        g_dev[i].ops = g_ops;
        g_dev[i].fdev = i;
        nlinks += g_ops->dev_link(i, &links[nlinks]) == 0;
    }
    log_init_locked();
    if (g_ops->lanes_are_socks) /* a relay forwards bytes: socket lanes only */
        jaccl_relay_start(links, nlinks);
    return 0;
}

/* Closes the fabric once nothing holds it: no init context, listener or domain. Caller holds
 * g_lock. */
static void teardown_if_unused_locked(void)
{
    if (!g_ops || g_ctxs > 0 || g_holds > 0)
        return;
    for (int i = 0; i < g_ndevs; i++)
        if (g_dev[i].refs > 0)
            return;
    jaccl_relay_stop();
    fab_shutdown();
    jaccl_counters_fini(); /* the fabric's threads have stopped counting */
    g_ops = NULL;
    for (int i = 0; i < g_ndevs; i++)
        g_dev[i].ops = NULL;
    g_ndevs = 0;
    jaccl_param_reset();
}

ncclResult_t jaccl_init(void **ctx, uint64_t commId, const struct jaccl_comm_config *config,
                        ncclDebugLogger_t logFunction, ncclProfilerCallback_t profFunction)
{
    if (ctx)
        *ctx = NULL;
    if (logFunction)
        jaccl_log_set(logFunction);
    struct jaccl_ctx *c = calloc(1, sizeof(*c));
    if (!c)
        return jaccl_err_to_nccl(-ENOMEM);
    c->traffic_class = config ? config->traffic_class : JACCL_ID_UNDEF;
    if (c->traffic_class >= 0)
        JINFO(NCCL_INIT | NCCL_NET,
              "communicator %#llx: NCCL's trafficClass %d applies to its connections unless "
              "NCCL_JACCL_TC / NCCL_JACCL_SL are set",
              (unsigned long long)commId, c->traffic_class);
    int rc = 0;
    pthread_mutex_lock(&g_lock);
    if (!g_ops)
        rc = fabric_open_locked();
    if (rc == 0 && ctx && jaccl_reg_add(c, sizeof(*c), 1, JO_CTX, NULL) != 0)
        rc = -ENOMEM;
    if (rc == 0)
        g_ctxs++;
    else
        teardown_if_unused_locked();
    pthread_mutex_unlock(&g_lock);
    if (rc != 0 || !ctx) {
        free(c);
        return jaccl_err_to_nccl(rc);
    }
    *ctx = c;
    return ncclSuccess;
}

ncclResult_t jaccl_finalize(void *ctx)
{
    if (!ctx)
        return ncclSuccess; /* NCCL calls finalize even after a failed init */
    if (!jaccl_reg_take(ctx, JO_CTX, "finalize", NULL))
        return jaccl_err_to_nccl(-EBADF);
    jaccl_p2p_abandon(ctx);
    free(ctx);
    pthread_mutex_lock(&g_lock);
    if (g_ctxs > 0 && --g_ctxs == 0 && g_ops) {
        int open = g_holds;
        for (int i = 0; i < g_ndevs; i++)
            open += g_dev[i].refs;
        if (open)
            JINFO(NCCL_INIT | NCCL_NET,
                  "last finalize with %d comm(s) or listener(s) still open: the fabric stays up "
                  "until the last of them is closed",
                  open);
        teardown_if_unused_locked();
    }
    pthread_mutex_unlock(&g_lock);
    return ncclSuccess;
}

ncclResult_t jaccl_devices(int *ndev)
{
    if (!ndev)
        return jaccl_err_to_nccl(-EFAULT);
    pthread_mutex_lock(&g_lock);
    *ndev = g_ctxs > 0 ? g_ndevs : 0;
    pthread_mutex_unlock(&g_lock);
    return ncclSuccess;
}

ncclResult_t jaccl_get_properties(int dev, struct jaccl_props *props)
{
    pthread_mutex_lock(&g_lock);
    int ndevs = g_ndevs;
    /* Points into the back end's device table, which stays put while the fabric is open. */
    const struct fab_dev_info *d =
            props && dev_ok_locked(dev) ? g_dev[dev].ops->dev_info(g_dev[dev].fdev) : NULL;
    pthread_mutex_unlock(&g_lock);
    if (!d) {
        JWARN("getProperties: invalid device %d (have %d)", dev, ndevs);
        return jaccl_err_to_nccl(props ? -EINVAL : -EFAULT);
    }
    memset(props, 0, sizeof(*props));
    props->name = d->name;
    props->pci_path = d->pci_path;
    props->guid = d->guid;
    props->mem_kinds = JACCL_MEM_HOST;
    props->reg_is_global = 0;
    props->force_flush = 0;
    props->speed_mbps = d->speed_mbps;
    props->port = d->port;
    props->latency_us = d->latency_us;
    props->max_comms = d->max_comms;
    props->max_recvs = 1; /* no grouped receives: keeps NCCL from sharing comms */
    props->nsubdevs = 1;
    props->subdevs[0] = dev;
    props->max_p2p_bytes = d->max_msg_bytes;
    props->max_coll_bytes = d->max_msg_bytes;
    props->max_multi_request = 1;
    props->rail_id = JACCL_ID_UNDEF; /* no rail/plane topology of its own to report */
    props->plane_id = JACCL_ID_UNDEF;
    return ncclSuccess;
}

ncclResult_t jaccl_set_net_attr(void *ctx)
{
    /* hints only; the fabric has no per-flow knobs to turn yet */
    return jaccl_err_to_nccl(jaccl_reg_find(ctx, JO_CTX, "setNetAttr", NULL) ? 0 : -EBADF);
}

struct fab_domain *jaccl_domain_get(int dev)
{
    struct fab_domain *d = NULL;
    pthread_mutex_lock(&g_lock);
    if (dev_ok_locked(dev)) {
        /* The one place a comm's fabric is chosen: the domain carries its back end's ops, and
         * the comm reaches the fabric through it (and what it makes from it) from now on. */
        if (g_dev[dev].refs == 0 &&
            g_dev[dev].ops->domain_open(g_dev[dev].fdev, &g_dev[dev].dom) != 0)
            g_dev[dev].dom = NULL;
        if (g_dev[dev].dom) {
            g_dev[dev].refs++;
            d = g_dev[dev].dom;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return d;
}

void jaccl_domain_put(int dev)
{
    pthread_mutex_lock(&g_lock);
    if (dev >= 0 && dev < MAX_DEVS && g_dev[dev].refs > 0 && --g_dev[dev].refs == 0) {
        struct fab_domain *dom = g_dev[dev].dom;
        dom->ops->domain_close(dom);
        g_dev[dev].dom = NULL;
        teardown_if_unused_locked();
    }
    pthread_mutex_unlock(&g_lock);
}

int jaccl_state_hold(void)
{
    pthread_mutex_lock(&g_lock);
    int ok = g_ops != NULL;
    g_holds += ok;
    pthread_mutex_unlock(&g_lock);
    return ok ? 0 : -ENODEV; /* no fabric: nothing was initialised */
}

void jaccl_state_put(void)
{
    pthread_mutex_lock(&g_lock);
    if (g_holds > 0) {
        g_holds--;
        teardown_if_unused_locked();
    }
    pthread_mutex_unlock(&g_lock);
}
