/* SPDX-License-Identifier: BSD-3-Clause */
/* Loading the plugin like NCCL 2.28 / 2.30 (src/plugin/plugin_open.cc) and calling its table. */
#define _GNU_SOURCE /* dlinfo, RTLD_DI_LINKMAP */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "mp_check.h"
#include "mp_log.h"
#include "mp_net.h"

/* NCCL_NET_PLUGIN=jaccl: the name as given, then libnccl-net-<name>.so. */
static const char *const lib_names[] = {"jaccl", "libnccl-net-jaccl.so"};

/* A table slot whose signature is the same in every version. */
#define SAME_SLOT(n, slot, ...)                           \
    ((n)->version == 8    ? (n)->t.v8->slot(__VA_ARGS__)  \
     : (n)->version == 9  ? (n)->t.v9->slot(__VA_ARGS__)  \
     : (n)->version == 10 ? (n)->t.v10->slot(__VA_ARGS__) \
     : (n)->version == 11 ? (n)->t.v11->slot(__VA_ARGS__) \
                          : (n)->t.v12->slot(__VA_ARGS__))

#define MP_VERSION_OF(v) v,

static int g_all[] = {JACCL_ABI_VERSIONS(MP_VERSION_OF)};
static int g_sample[] = {JACCL_ABI_NEWEST, JACCL_ABI_CTX, JACCL_ABI_OLDEST};

static int mp_nversions(enum mp_versions set)
{
    return set == MP_ALL_VERSIONS ? (int)(sizeof(g_all) / sizeof(g_all[0]))
                                  : (int)(sizeof(g_sample) / sizeof(g_sample[0]));
}

int mp_run_versions(enum mp_versions set, const char *name, const char *what, int nranks,
                    int timeout_s, mp_rank_fn fn)
{
    int *v = set == MP_ALL_VERSIONS ? g_all : g_sample;
    int failed = 0;
    for (int i = 0; i < mp_nversions(set); i++) {
        char sc[64], desc[96];
        snprintf(sc, sizeof(sc), "%s%sv%d", name ? name : "", name ? "-" : "", v[i]);
        snprintf(desc, sizeof(desc), "%s%sncclNetPlugin_v%d", what ? what : "", what ? ", " : "",
                 v[i]);
        failed += mp_run(sc, desc, nranks, timeout_s, fn, &v[i]);
    }
    return failed;
}

int mp_net_load(struct mp_net *n, int version)
{
    memset(n, 0, sizeof(*n));
    n->version = version;
    const char *err = "";
    for (size_t i = 0; i < sizeof(lib_names) / sizeof(lib_names[0]) && !n->lib; i++) {
        n->lib = dlopen(lib_names[i], RTLD_NOW | RTLD_LOCAL);
        n->name = lib_names[i];
        if (!n->lib)
            err = dlerror();
    }
    if (!n->lib) {
        mp_note("cannot load the plugin (is LD_LIBRARY_PATH the build folder?): %s", err);
        return -1;
    }
    struct link_map *lm = NULL;
    if (dlinfo(n->lib, RTLD_DI_LINKMAP, &lm) == 0 && lm)
        snprintf(n->path, sizeof(n->path), "%s", lm->l_name);
    char sym[32];
    snprintf(sym, sizeof(sym), "ncclNetPlugin_v%d", version);
    const void *t = dlsym(n->lib, sym);
    if (!t || version < JACCL_ABI_OLDEST || version > JACCL_ABI_NEWEST) {
        mp_note("%s: no symbol %s", n->path, sym);
        dlclose(n->lib);
        n->lib = NULL;
        return -1;
    }
    n->t.v8 = t; /* every member of the union is a pointer to the same table */
    return 0;
}

void mp_net_unload(struct mp_net *n)
{
    if (n->lib)
        dlclose(n->lib);
    n->lib = NULL;
}

/* The device the tests run on: "lo" when the plugin offers it, else device 0. */
static int pick_dev(const struct mp_net *n, int ndev)
{
    for (int d = 0; d < ndev; d++) {
        ncclNetProperties_v12_t p;
        if (mp_net_props(n, d, &p) == ncclSuccess && p.name && strcmp(p.name, "lo") == 0)
            return d;
    }
    return 0;
}

ncclResult_t mp_net_init(struct mp_net *n)
{
    ncclResult_t rc;
    switch (n->version) {
    case 8:
        rc = n->t.v8->init(mp_logger);
        break;
    case 9:
        rc = n->t.v9->init(mp_logger);
        break;
    case 10:
        rc = n->t.v10->init(mp_logger, NULL);
        break;
    default:
        rc = mp_net_init_ctx(n, 0x6a6163636cull, &n->ctx);
    }
    int ndev = 0;
    if (rc == ncclSuccess)
        rc = mp_net_devices(n, &ndev);
    if (rc == ncclSuccess && ndev < 1) {
        mp_note("the plugin reports %d devices", ndev);
        rc = ncclSystemError;
    }
    if (rc == ncclSuccess)
        n->dev = pick_dev(n, ndev);
    return rc;
}

ncclResult_t mp_net_fini(struct mp_net *n)
{
    if (n->version < 11)
        return ncclSuccess;
    ncclResult_t rc = mp_net_finalize_ctx(n, n->ctx);
    n->ctx = NULL;
    return rc;
}

int mp_net_open(struct mp_net *n, int version)
{
    if (mp_net_load(n, version) != 0)
        return -1;
    if (!MP_OK(mp_net_init(n))) {
        mp_net_unload(n);
        return -1;
    }
    return 0;
}

ncclResult_t mp_net_init_ctx(struct mp_net *n, uint64_t comm_id, void **ctx)
{
    ncclNetCommConfig_v11_t config = {.trafficClass = NCCL_NET_TRAFFIC_CLASS_UNDEF};
    if (n->version == 12) {
        ncclNetCommConfig_v12_t config12 = {.trafficClass = NCCL_NET_TRAFFIC_CLASS_UNDEF};
        return n->t.v12->init(ctx, comm_id, &config12, mp_logger, NULL);
    }
    return n->t.v11->init(ctx, comm_id, &config, mp_logger, NULL);
}

ncclResult_t mp_net_finalize_ctx(struct mp_net *n, void *ctx)
{
    return n->version == 12 ? n->t.v12->finalize(ctx) : n->t.v11->finalize(ctx);
}

ncclResult_t mp_net_devices(const struct mp_net *n, int *ndev)
{
    return SAME_SLOT(n, devices, ndev);
}

/* The fields every version has: v8's layout, and a prefix of every later one's. */
#define PROPS_COMMON(s, p)                             \
    do {                                               \
        (p)->name = (s)->name;                         \
        (p)->pciPath = (s)->pciPath;                   \
        (p)->guid = (s)->guid;                         \
        (p)->ptrSupport = (s)->ptrSupport;             \
        (p)->regIsGlobal = (s)->regIsGlobal;           \
        (p)->speed = (s)->speed;                       \
        (p)->port = (s)->port;                         \
        (p)->latency = (s)->latency;                   \
        (p)->maxComms = (s)->maxComms;                 \
        (p)->maxRecvs = (s)->maxRecvs;                 \
        (p)->netDeviceType = (s)->netDeviceType;       \
        (p)->netDeviceVersion = (s)->netDeviceVersion; \
    } while (0)

/* v9..v11 on top: their vProps hold NCCL_NET_MAX_DEVS_PER_NIC devices, v12's twice that. */
#define PROPS_V9(s, p)                                         \
    do {                                                       \
        PROPS_COMMON(s, p);                                    \
        (p)->forceFlush = (s)->forceFlush;                     \
        (p)->vProps.ndevs = (s)->vProps.ndevs;                 \
        for (int i_ = 0; i_ < NCCL_NET_MAX_DEVS_PER_NIC; i_++) \
            (p)->vProps.devs[i_] = (s)->vProps.devs[i_];       \
        (p)->maxP2pBytes = (s)->maxP2pBytes;                   \
        (p)->maxCollBytes = (s)->maxCollBytes;                 \
    } while (0)

/* Each version is handed exactly its own struct, as NCCL's per-version adapters do. Fields a
 * version lacks stay zero, except railId / planeId: NCCL_NET_ID_UNDEF, as NCCL 2.30 itself
 * fills them in for tables before v12. */
ncclResult_t mp_net_props(const struct mp_net *n, int dev, ncclNetProperties_v12_t *p)
{
    ncclResult_t rc;

    memset(p, 0, sizeof(*p));
    p->railId = p->planeId = NCCL_NET_ID_UNDEF;
    if (n->version == 12)
        return n->t.v12->getProperties(dev, p);
    if (n->version == 11) {
        ncclNetProperties_v11_t s;
        memset(&s, 0, sizeof(s));
        rc = n->t.v11->getProperties(dev, &s);
        PROPS_V9(&s, p);
        p->maxMultiRequestSize = s.maxMultiRequestSize;
        return rc;
    }
    if (n->version >= 9) {
        ncclNetProperties_v9_t s;
        memset(&s, 0, sizeof(s));
        rc = n->version == 9 ? n->t.v9->getProperties(dev, &s) : n->t.v10->getProperties(dev, &s);
        PROPS_V9(&s, p);
        return rc;
    }
    ncclNetProperties_v8_t s;
    memset(&s, 0, sizeof(s));
    rc = n->t.v8->getProperties(dev, &s);
    PROPS_COMMON(&s, p);
    return rc;
}

ncclResult_t mp_net_listen(const struct mp_net *n, int dev, void *handle, void **lcomm)
{
    switch (n->version) {
    case 8:
        return n->t.v8->listen(dev, handle, lcomm);
    case 9:
        return n->t.v9->listen(dev, handle, lcomm);
    case 10:
        return n->t.v10->listen(dev, handle, lcomm);
    case 11:
        return n->t.v11->listen(n->ctx, dev, handle, lcomm);
    default:
        return n->t.v12->listen(n->ctx, dev, handle, lcomm);
    }
}

ncclResult_t mp_net_connect(const struct mp_net *n, int dev, void *handle, void **scomm)
{
    /* NCCL passes a pointer to a NULL device handle for host plugins. */
    ncclNetDeviceHandle_v11_t *dh = NULL;
    ncclNetCommConfig_v10_t config = {.trafficClass = NCCL_NET_TRAFFIC_CLASS_UNDEF};
    switch (n->version) {
    case 8:
        return n->t.v8->connect(dev, handle, scomm, &dh);
    case 9:
        return n->t.v9->connect(dev, handle, scomm, &dh);
    case 10:
        return n->t.v10->connect(dev, &config, handle, scomm, &dh);
    case 11:
        return n->t.v11->connect(n->ctx, dev, handle, scomm, &dh);
    default:
        return n->t.v12->connect(n->ctx, dev, handle, scomm, &dh);
    }
}

ncclResult_t mp_net_accept(const struct mp_net *n, void *lcomm, void **rcomm)
{
    ncclNetDeviceHandle_v11_t *dh = NULL;
    return SAME_SLOT(n, accept, lcomm, rcomm, &dh);
}

ncclResult_t mp_net_regmr(const struct mp_net *n, void *comm, void *buf, size_t size, int type,
                          void **mh)
{
    return SAME_SLOT(n, regMr, comm, buf, size, type, mh);
}

ncclResult_t mp_net_deregmr(const struct mp_net *n, void *comm, void *mh)
{
    return SAME_SLOT(n, deregMr, comm, mh);
}

ncclResult_t mp_net_isend(const struct mp_net *n, void *comm, void *buf, size_t size, int tag,
                          void *mh, void **req)
{
    switch (n->version) {
    case 8:
        if (size > INT_MAX)
            return ncclInvalidUsage; /* what the plugin says for sizes */
        return n->t.v8->isend(comm, buf, (int)size, tag, mh, req);
    case 9:
        return n->t.v9->isend(comm, buf, size, tag, mh, req);
    case 10:
        return n->t.v10->isend(comm, buf, size, tag, mh, NULL, req);
    case 11:
        return n->t.v11->isend(comm, buf, size, tag, mh, NULL, req);
    default:
        return n->t.v12->isend(comm, buf, size, tag, mh, NULL, req);
    }
}

ncclResult_t mp_net_irecv(const struct mp_net *n, void *comm, void *buf, size_t cap, int tag,
                          void *mh, void **req)
{
    return mp_net_irecv_n(n, comm, 1, &buf, &cap, &tag, &mh, req);
}

/* v8 takes int capacities: NCCL's v8 caller hands it an int array. */
static ncclResult_t irecv_v8(const struct mp_net *n, void *comm, int nbufs, void **bufs,
                             size_t *caps, int *tags, void **mhs, void **req)
{
    int icaps[64];
    if (nbufs > 64)
        return ncclInvalidUsage; /* what the plugin says for sizes */
    for (int i = 0; i < nbufs; i++) {
        if (caps[i] > INT_MAX)
            return ncclInvalidUsage; /* what the plugin says for sizes */
        icaps[i] = (int)caps[i];
    }
    return n->t.v8->irecv(comm, nbufs, bufs, icaps, tags, mhs, req);
}

ncclResult_t mp_net_irecv_n(const struct mp_net *n, void *comm, int nbufs, void **bufs,
                            size_t *caps, int *tags, void **mhs, void **req)
{
    void *ph[64] = {NULL};
    switch (n->version) {
    case 8:
        return irecv_v8(n, comm, nbufs, bufs, caps, tags, mhs, req);
    case 9:
        return n->t.v9->irecv(comm, nbufs, bufs, caps, tags, mhs, req);
    case 10:
        return n->t.v10->irecv(comm, nbufs, bufs, caps, tags, mhs, ph, req);
    case 11:
        return n->t.v11->irecv(comm, nbufs, bufs, caps, tags, mhs, ph, req);
    default:
        return n->t.v12->irecv(comm, nbufs, bufs, caps, tags, mhs, ph, req);
    }
}

ncclResult_t mp_net_test(const struct mp_net *n, void *req, int *done, int *size)
{
    return SAME_SLOT(n, test, req, done, size);
}

ncclResult_t mp_net_close_send(const struct mp_net *n, void *comm)
{
    return SAME_SLOT(n, closeSend, comm);
}

ncclResult_t mp_net_close_recv(const struct mp_net *n, void *comm)
{
    return SAME_SLOT(n, closeRecv, comm);
}

ncclResult_t mp_net_close_listen(const struct mp_net *n, void *comm)
{
    return SAME_SLOT(n, closeListen, comm);
}
