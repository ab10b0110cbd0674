/* SPDX-License-Identifier: BSD-3-Clause */
/* The plugin as NCCL sees it: a library found by name, one versioned table (v8..v12) and the
 * calls NCCL's proxy makes. Wrappers hide only the signature differences between versions
 * (int sizes in v8, no phandles before v10, ctx and config from v11, wider properties in v12); they
 * never add behaviour, so what a test observes is what NCCL would. */
#ifndef MP_NET_H
#define MP_NET_H

#include <stddef.h>

#include "abi/versions.h"
#include "mp_proc.h"
#include "nccl_abi/net.h"

#define MP_NET_TABLE_PTR(n) const ncclNet_v##n##_t *v##n;

struct mp_net {
    int version; /* JACCL_ABI_OLDEST .. JACCL_ABI_NEWEST */
    void *lib;
    const char *name; /* the name dlopen accepted */
    char path[256];   /* the file the loader picked */
    union {
        JACCL_ABI_VERSIONS(MP_NET_TABLE_PTR)
    } t;
    void *ctx; /* v11, v12: from mp_net_init */
    int dev;   /* device the helpers use: the one named "lo" (tests set SOCKET_IFNAME=lo) */
};

/* Which table versions a test runs through: all of them (plugin/abi/versions.h), or a sample
 * of the three shapes (the newest, the first with an init context, the oldest). */
enum mp_versions { MP_ALL_VERSIONS, MP_SAMPLE_VERSIONS };
/* Runs fn on nranks ranks once per version of the set (arg: a pointer to the version), as
 * scenario "<name>-vN" ("vN" when name is NULL) described as "<what>, ncclNetPlugin_vN" (what
 * may be NULL), each where the command line selects it (mp_run). Returns how many failed. */
int mp_run_versions(enum mp_versions set, const char *name, const char *what, int nranks,
                    int timeout_s, mp_rank_fn fn);

/* dlopen("jaccl"), then "libnccl-net-jaccl.so" (RTLD_NOW|RTLD_LOCAL) and dlsym of
 * ncclNetPlugin_v<version>. 0, or -1 with a note saying why. */
int mp_net_load(struct mp_net *n, int version);
void mp_net_unload(struct mp_net *n);
/* init with mp_logger (v11, v12: one ctx into n->ctx), then devices; picks n->dev. */
ncclResult_t mp_net_init(struct mp_net *n);
/* Shuts the v11/v12 ctx down (older tables have no finalize: NCCL never calls one). */
ncclResult_t mp_net_fini(struct mp_net *n);
/* Load + init, checking both; 0 or -1. */
int mp_net_open(struct mp_net *n, int version);

/* v11 and v12 only: a further init/finalize pair (NCCL calls one per communicator). */
ncclResult_t mp_net_init_ctx(struct mp_net *n, uint64_t comm_id, void **ctx);
ncclResult_t mp_net_finalize_ctx(struct mp_net *n, void *ctx);

ncclResult_t mp_net_devices(const struct mp_net *n, int *ndev);
/* Any version's properties, widened to the v12 layout (fields a version lacks are zero, railId
 * and planeId NCCL_NET_ID_UNDEF). */
ncclResult_t mp_net_props(const struct mp_net *n, int dev, ncclNetProperties_v12_t *p);

ncclResult_t mp_net_listen(const struct mp_net *n, int dev, void *handle, void **lcomm);
ncclResult_t mp_net_connect(const struct mp_net *n, int dev, void *handle, void **scomm);
ncclResult_t mp_net_accept(const struct mp_net *n, void *lcomm, void **rcomm);
ncclResult_t mp_net_regmr(const struct mp_net *n, void *comm, void *buf, size_t size, int type,
                          void **mh);
ncclResult_t mp_net_deregmr(const struct mp_net *n, void *comm, void *mh);
/* v8: size must fit an int. */
ncclResult_t mp_net_isend(const struct mp_net *n, void *comm, void *buf, size_t size, int tag,
                          void *mh, void **req);
/* One buffer; *req is passed through untouched, so a caller may preload it like NCCL does. */
ncclResult_t mp_net_irecv(const struct mp_net *n, void *comm, void *buf, size_t cap, int tag,
                          void *mh, void **req);
/* Grouped receive of nbufs buffers (for the maxRecvs checks). */
ncclResult_t mp_net_irecv_n(const struct mp_net *n, void *comm, int nbufs, void **bufs,
                            size_t *caps, int *tags, void **mhs, void **req);
ncclResult_t mp_net_test(const struct mp_net *n, void *req, int *done, int *size);
ncclResult_t mp_net_close_send(const struct mp_net *n, void *comm);
ncclResult_t mp_net_close_recv(const struct mp_net *n, void *comm);
ncclResult_t mp_net_close_listen(const struct mp_net *n, void *comm);

#endif
