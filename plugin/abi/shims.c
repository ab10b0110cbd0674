/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-version adapters over jaccl's version-neutral internal API; see shims.h for which is
 * which.
 * Every shim is stateless except the once-per-process ctx of the pre-v11 init calls, which a
 * mutex guards, so all of them may be called from any NCCL thread. */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "core/api.h"
#include "core/err.h"
#include "abi/shims.h"
#include "nccl_abi/net.h"
#include "util/log.h"

/* The tables point regMr straight at jaccl_reg_mr, so jaccl's memory type must be NCCL's. */
_Static_assert(JACCL_MEM_HOST == NCCL_PTR_HOST, "JACCL_MEM_HOST must equal NCCL_PTR_HOST");

/* ---- the process-wide ctx of pre-v11 NCCL ---- */

/* NCCL before 2.28 never calls finalize, so the reference taken here is kept for the life of
 * the process. A failed init leaves ready == 0 so a later call may try again. */
struct legacy_ctx {
    pthread_mutex_t lock;
    int ready;
    void *ctx;
};

static struct legacy_ctx net_ctx = {PTHREAD_MUTEX_INITIALIZER, 0, NULL};
static struct legacy_ctx coll_ctx = {PTHREAD_MUTEX_INITIALIZER, 0, NULL};

/* jaccl_coll_init is jaccl_init without a profiler, so both kinds of ctx come from here. */
static ncclResult_t legacy_init(struct legacy_ctx *l, ncclDebugLogger_t logger,
                                ncclProfilerCallback_t prof)
{
    ncclResult_t res = ncclSuccess;

    pthread_mutex_lock(&l->lock);
    if (!l->ready) {
        res = jaccl_init(&l->ctx, 0, NULL, logger, prof);
        l->ready = res == ncclSuccess;
    }
    pthread_mutex_unlock(&l->lock);
    return res;
}

/* The ctx for a ctx-less listen/connect; ncclInvalidUsage if init has not succeeded yet. */
static ncclResult_t legacy_get(struct legacy_ctx *l, const char *what, void **ctx)
{
    int ready;

    pthread_mutex_lock(&l->lock);
    ready = l->ready;
    *ctx = l->ctx;
    pthread_mutex_unlock(&l->lock);
    if (ready)
        return ncclSuccess;
    JWARN("%s called before a successful init", what);
    return jaccl_err_to_nccl(-EINVAL);
}

/* NCCL reads *request even after an error on some paths; never leave it undefined. */
static ncclResult_t reject(void **request, ncclResult_t res)
{
    if (request)
        *request = NULL;
    return res;
}

/* ---- ncclNet ---- */

ncclResult_t jaccl_v10_init(ncclDebugLogger_t logFunction, ncclProfilerCallback_t profFunction)
{
    return legacy_init(&net_ctx, logFunction, profFunction);
}

ncclResult_t jaccl_v8_init(ncclDebugLogger_t logFunction)
{
    return legacy_init(&net_ctx, logFunction, NULL);
}

/* ---- properties: jaccl's struct into each version's ---- */

/* The fields every version has, in every version's names (v8's layout starts them all). */
#define PROPS_COMMON(out, p)                                                         \
    do {                                                                             \
        (out)->name = (char *)(p)->name;                                             \
        (out)->pciPath = (char *)(p)->pci_path;                                      \
        (out)->guid = (p)->guid;                                                     \
        (out)->ptrSupport = ((p)->mem_kinds & JACCL_MEM_HOST) ? NCCL_PTR_HOST : 0;   \
        (out)->regIsGlobal = (p)->reg_is_global;                                     \
        (out)->speed = (p)->speed_mbps;                                              \
        (out)->port = (p)->port;                                                     \
        (out)->latency = (p)->latency_us;                                            \
        (out)->maxComms = (p)->max_comms;                                            \
        (out)->maxRecvs = (p)->max_recvs;                                            \
        (out)->netDeviceType = NCCL_NET_DEVICE_HOST; /* a host plugin: no offload */ \
        (out)->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;                   \
    } while (0)

/* v9 on: forceFlush, the fused devices and the size limits. */
#define PROPS_V9(out, p)                                                                      \
    do {                                                                                      \
        PROPS_COMMON(out, p);                                                                 \
        (out)->forceFlush = (p)->force_flush;                                                 \
        (out)->vProps.ndevs = vdevs_fill((out)->vProps.devs,                                  \
                                         (int)(sizeof((out)->vProps.devs) / sizeof(int)), p); \
        (out)->maxP2pBytes = (p)->max_p2p_bytes;                                              \
        (out)->maxCollBytes = (p)->max_coll_bytes;                                            \
    } while (0)

/* Copies the fused-device list into a version's devs[cap]; returns ndevs. More than the
 * version holds cannot be told to NCCL, so the device is refused (ndevs 0) rather than cut. */
static int vdevs_fill(int *devs, int cap, const struct jaccl_props *p)
{
    if (p->nsubdevs > cap) {
        JWARN("getProperties: device %s fuses %d devices, this table version holds %d", p->name,
              p->nsubdevs, cap);
        return 0;
    }
    for (int i = 0; i < p->nsubdevs; i++)
        devs[i] = p->subdevs[i];
    return p->nsubdevs;
}

/* The core's answer for dev; a NULL out goes to the core as NULL, which rejects it. */
static ncclResult_t props_get(int dev, const void *out, struct jaccl_props *p)
{
    return jaccl_get_properties(dev, out ? p : NULL);
}

/* Every version's struct is zeroed first so padding and unknown fields never carry junk. */
ncclResult_t jaccl_v12_get_properties(int dev, ncclNetProperties_v12_t *props)
{
    struct jaccl_props p;
    ncclResult_t res = props_get(dev, props, &p);

    if (res != ncclSuccess)
        return res;
    memset(props, 0, sizeof(*props));
    PROPS_V9(props, &p);
    props->maxMultiRequestSize = p.max_multi_request;
    props->railId = (int16_t)p.rail_id;
    props->planeId = (int16_t)p.plane_id;
    return ncclSuccess;
}

ncclResult_t jaccl_v11_get_properties(int dev, ncclNetProperties_v11_t *props)
{
    struct jaccl_props p;
    ncclResult_t res = props_get(dev, props, &p);

    if (res != ncclSuccess)
        return res;
    memset(props, 0, sizeof(*props));
    PROPS_V9(props, &p);
    props->maxMultiRequestSize = p.max_multi_request;
    return ncclSuccess;
}

/* v9 and v10: no maxMultiRequestSize. */
ncclResult_t jaccl_v9_get_properties(int dev, ncclNetProperties_v9_t *props)
{
    struct jaccl_props p;
    ncclResult_t res = props_get(dev, props, &p);

    if (res != ncclSuccess)
        return res;
    memset(props, 0, sizeof(*props));
    PROPS_V9(props, &p);
    return ncclSuccess;
}

/* v8 has no forceFlush, vProps or size limits: NCCL's own v8 adapter supplies the limits. */
ncclResult_t jaccl_v8_get_properties(int dev, ncclNetProperties_v8_t *props)
{
    struct jaccl_props p;
    ncclResult_t res = props_get(dev, props, &p);

    if (res != ncclSuccess)
        return res;
    memset(props, 0, sizeof(*props));
    PROPS_COMMON(props, &p);
    return ncclSuccess;
}

/* ---- v11 / v12: per-communicator init ---- */

ncclResult_t jaccl_v11_init(void **ctx, uint64_t commId, ncclNetCommConfig_v11_t *config,
                            ncclDebugLogger_t logFunction, ncclProfilerCallback_t profFunction)
{
    /* NCCL_NET_TRAFFIC_CLASS_UNDEF and JACCL_ID_UNDEF are both -1: the value passes as is */
    struct jaccl_comm_config c = {.traffic_class = config ? config->trafficClass : JACCL_ID_UNDEF};

    return jaccl_init(ctx, commId, config ? &c : NULL, logFunction, profFunction);
}

/* The hints name nothing jaccl can act on; the core only checks the ctx. */
ncclResult_t jaccl_v11_set_net_attr(void *ctx, ncclNetAttr_v11_t *netAttr)
{
    (void)netAttr;
    return jaccl_set_net_attr(ctx);
}

/* Device handles pass through untouched: the core never fills one (a host plugin). */
ncclResult_t jaccl_v11_connect(void *ctx, int dev, void *handle, void **sendComm,
                               ncclNetDeviceHandle_v11_t **sendDevComm)
{
    return jaccl_connect(ctx, dev, handle, sendComm, (void **)sendDevComm);
}

ncclResult_t jaccl_v8_accept(void *listenComm, void **recvComm,
                             ncclNetDeviceHandle_v8_t **recvDevComm)
{
    return jaccl_accept(listenComm, recvComm, (void **)recvDevComm);
}

/* ---- v8 .. v10: ctx-less calls ---- */

ncclResult_t jaccl_v8_listen(int dev, void *handle, void **listenComm)
{
    void *ctx;
    ncclResult_t res = legacy_get(&net_ctx, "listen", &ctx);

    if (res != ncclSuccess)
        return reject(listenComm, res);
    return jaccl_listen(ctx, dev, handle, listenComm);
}

/* v10 passes trafficClass per connection (v11 moved it to init): it applies to this connect's
 * comm only. The accepting side has no config in v10, so it follows NCCL_JACCL_TC alone. */
ncclResult_t jaccl_v10_connect(int dev, ncclNetCommConfig_v10_t *config, void *handle,
                               void **sendComm, ncclNetDeviceHandle_v10_t **sendDevComm)
{
    void *ctx;
    ncclResult_t res = legacy_get(&net_ctx, "connect", &ctx);

    if (res != ncclSuccess)
        return reject(sendComm, res);
    return jaccl_connect_tclass(ctx, config ? config->trafficClass : JACCL_ID_UNDEF, dev, handle,
                                sendComm, (void **)sendDevComm);
}

ncclResult_t jaccl_v8_connect(int dev, void *handle, void **sendComm,
                              ncclNetDeviceHandle_v8_t **sendDevComm)
{
    void *ctx;
    ncclResult_t res = legacy_get(&net_ctx, "connect", &ctx);

    if (res != ncclSuccess)
        return reject(sendComm, res);
    return jaccl_connect(ctx, dev, handle, sendComm, (void **)sendDevComm);
}

ncclResult_t jaccl_v9_isend(void *sendComm, void *data, size_t size, int tag, void *mhandle,
                            void **request)
{
    return jaccl_isend(sendComm, data, size, tag, mhandle, NULL, request);
}

ncclResult_t jaccl_v9_irecv(void *recvComm, int n, void **data, size_t *sizes, int *tags,
                            void **mhandles, void **request)
{
    return jaccl_irecv(recvComm, n, data, sizes, tags, mhandles, NULL, request);
}

ncclResult_t jaccl_v8_isend(void *sendComm, void *data, int size, int tag, void *mhandle,
                            void **request)
{
    if (size < 0) {
        JWARN("isend: negative size %d", size);
        return reject(request, jaccl_err_to_nccl(-EMSGSIZE));
    }
    return jaccl_isend(sendComm, data, (size_t)size, tag, mhandle, NULL, request);
}

/* The core takes exactly one receive (maxRecvs = 1), so only one size is widened; it lives on
 * this stack frame only: jaccl_irecv copies what it keeps. */
ncclResult_t jaccl_v8_irecv(void *recvComm, int n, void **data, int *sizes, int *tags,
                            void **mhandles, void **request)
{
    if (n != 1) {
        JWARN("irecv: %d buffers requested; jaccl reports maxRecvs = 1", n);
        return reject(request, jaccl_err_to_nccl(-EMSGSIZE));
    }
    if (sizes && sizes[0] < 0) {
        JWARN("irecv: negative size %d", sizes[0]);
        return reject(request, jaccl_err_to_nccl(-EMSGSIZE));
    }
    size_t wide = sizes ? (size_t)sizes[0] : 0;
    return jaccl_irecv(recvComm, 1, data, sizes ? &wide : NULL, tags, mhandles, NULL, request);
}

/* ---- ncclCollNet ---- */

ncclResult_t jaccl_coll_v8_init(ncclDebugLogger_t logFunction)
{
    return legacy_init(&coll_ctx, logFunction, NULL);
}

ncclResult_t jaccl_coll_v8_listen(int dev, void *handle, void **listenComm)
{
    void *ctx;
    ncclResult_t res = legacy_get(&coll_ctx, "collnet listen", &ctx);

    if (res != ncclSuccess)
        return reject(listenComm, res);
    return jaccl_coll_listen(ctx, dev, handle, listenComm);
}

ncclResult_t jaccl_coll_v8_iallreduce(void *collComm, void *sendData, void *recvData, int count,
                                      ncclDataType_t dataType, ncclRedOp_t redOp, void *sendMhandle,
                                      void *recvMhandle, void **request)
{
    if (count < 0) {
        JWARN("iallreduce: negative count %d", count);
        return reject(request, jaccl_err_to_nccl(-EMSGSIZE));
    }
    return jaccl_coll_iallreduce(collComm, sendData, recvData, (size_t)count, dataType, redOp,
                                 sendMhandle, recvMhandle, request);
}

/* v9..v12: NCCL passes exactly one part. Only parts[0] is converted; n and a missing array
 * go to the core unchanged so that it rejects them with its own message. */
static const struct jaccl_sge *sge_from_v9(int n, const ncclNetSGE_v9_t *in, struct jaccl_sge *out)
{
    if (n < 1 || in == NULL)
        return NULL;
    out->mhandle = in->mhandle;
    out->address = in->address;
    out->size = in->size;
    return out;
}

ncclResult_t jaccl_coll_v9_iallgather(void *collComm, void *sendData, int nRecvParts,
                                      ncclNetSGE_v9_t *recvParts, size_t bytesPerRank,
                                      size_t windowOffset, size_t windowBytes, void *sendMhandle,
                                      void **request)
{
    struct jaccl_sge part;

    return jaccl_coll_iallgather(collComm, sendData, nRecvParts,
                                 sge_from_v9(nRecvParts, recvParts, &part), bytesPerRank,
                                 windowOffset, windowBytes, sendMhandle, request);
}

ncclResult_t jaccl_coll_v9_ireducescatter(void *collComm, int nSendParts,
                                          ncclNetSGE_v9_t *sendParts, void *recvData,
                                          size_t bytesPerRank, size_t windowOffset,
                                          size_t windowBytes, ncclDataType_t dataType,
                                          ncclRedOp_t redOp, void *recvMhandle, void **request)
{
    struct jaccl_sge part;

    return jaccl_coll_ireducescatter(
            collComm, nSendParts, sge_from_v9(nSendParts, sendParts, &part), recvData, bytesPerRank,
            windowOffset, windowBytes, dataType, redOp, recvMhandle, request);
}

/* v8: NCCL always passes exactly one part; more would need an SGE array, which nothing sends. */
static ncclResult_t sge_from_v8(const char *op, int n, const ncclNetSGE_v8_t *in,
                                struct jaccl_sge *out)
{
    if (n != 1 || in == NULL) {
        JWARN("%s: %d parts given, only 1 is supported", op, n);
        return jaccl_err_to_nccl(n != 1 ? -EMSGSIZE : -EFAULT);
    }
    out->mhandle = in->mhandle;
    out->address = in->address;
    out->size = in->size;
    return ncclSuccess;
}

ncclResult_t jaccl_coll_v8_iallgather(void *collComm, void *sendData, int nRecvParts,
                                      ncclNetSGE_v8_t *recvParts, size_t bytesPerRank,
                                      size_t windowOffset, size_t windowBytes, void *sendMhandle,
                                      void **request)
{
    struct jaccl_sge part;
    ncclResult_t res = sge_from_v8("iallgather", nRecvParts, recvParts, &part);

    if (res != ncclSuccess)
        return reject(request, res);
    return jaccl_coll_iallgather(collComm, sendData, 1, &part, bytesPerRank, windowOffset,
                                 windowBytes, sendMhandle, request);
}

ncclResult_t jaccl_coll_v8_ireducescatter(void *collComm, int nSendParts,
                                          ncclNetSGE_v8_t *sendParts, void *recvData,
                                          size_t bytesPerRank, size_t windowOffset,
                                          size_t windowBytes, ncclDataType_t dataType,
                                          ncclRedOp_t redOp, void *recvMhandle, void **request)
{
    struct jaccl_sge part;
    ncclResult_t res = sge_from_v8("ireducescatter", nSendParts, sendParts, &part);

    if (res != ncclSuccess)
        return reject(request, res);
    return jaccl_coll_ireducescatter(collComm, 1, &part, recvData, bytesPerRank, windowOffset,
                                     windowBytes, dataType, redOp, recvMhandle, request);
}
