/* SPDX-License-Identifier: BSD-3-Clause */
/* The one internal API, in jaccl's own terms: plugin/core implements it, and plugin/abi (the
 * only code that knows NCCL's table versions) adapts every exported table to it, converting
 * jaccl's structs below to and from each version's types. Adding a table version therefore
 * touches plugin/abi and include/nccl_abi only. NCCL's unversioned enums and callbacks
 * (ncclResult_t, ncclDataType_t, the logger) are used as they are. */
#ifndef JACCL_CORE_API_H
#define JACCL_CORE_API_H

#include <stddef.h>
#include <stdint.h>

#include "nccl_abi/nccl_types.h"

/* ---- jaccl's view of what the tables pass and report ---- */

/* Bits of jaccl_props.mem_kinds, and jaccl_reg_mr's type: the memory regMr accepts. Equal to
 * NCCL's NCCL_PTR_* in every version (plugin/abi checks), so regMr needs no shim. */
#define JACCL_MEM_HOST 0x1

/* Most physical devices one device reports fused behind it (jaccl never fuses: 1). */
#define JACCL_MAX_SUBDEVS 8

/* "Not known" for rail_id / plane_id and for jaccl_comm_config.traffic_class. */
#define JACCL_ID_UNDEF (-1)

/* One device as jaccl describes it; each table's getProperties converts it. jaccl is a host
 * plugin (no device offload), which plugin/abi reports as NCCL_NET_DEVICE_HOST. */
struct jaccl_props {
    const char *name;
    const char *pci_path;
    uint64_t guid;
    int mem_kinds;     /* JACCL_MEM_* */
    int reg_is_global; /* a registration is valid on every comm of the device */
    int force_flush;
    int speed_mbps;
    int port;
    float latency_us;
    int max_comms;
    int max_recvs; /* grouped receives per irecv */
    int nsubdevs;
    int subdevs[JACCL_MAX_SUBDEVS];
    size_t max_p2p_bytes;
    size_t max_coll_bytes;
    int max_multi_request;
    int rail_id;  /* JACCL_ID_UNDEF: NCCL groups rails itself */
    int plane_id; /* JACCL_ID_UNDEF */
};

/* What NCCL configures for one communicator at init. */
struct jaccl_comm_config {
    int traffic_class; /* JACCL_ID_UNDEF = none */
};

/* One scatter-gather part of a CollNet window. */
struct jaccl_sge {
    void *mhandle;
    void *address;
    size_t size;
};

/* ---- process-wide state (plugin/core/state.c) ---- */
/* Refcounted: every call takes a reference, finalize drops it; the last one tears down every
 * device, thread and registration. *ctx is written first thing (NULL on failure). config may
 * be NULL (tables before v11, CollNet). */
ncclResult_t jaccl_init(void **ctx, uint64_t commId, const struct jaccl_comm_config *config,
                        ncclDebugLogger_t logFunction, ncclProfilerCallback_t profFunction);
ncclResult_t jaccl_finalize(void *ctx); /* NULL is fine */
ncclResult_t jaccl_devices(int *ndev);
ncclResult_t jaccl_get_properties(int dev, struct jaccl_props *props);
/* NCCL's network attribute hints: checks ctx; the fabric has no per-flow knobs to turn. */
ncclResult_t jaccl_set_net_attr(void *ctx);

/* ---- point-to-point (plugin/core/p2p_*.c) ---- */
/* devComm: NCCL's device-offload handle, passed through opaquely; jaccl never fills it. */
ncclResult_t jaccl_listen(void *ctx, int dev, void *handle, void **listenComm);
ncclResult_t jaccl_connect(void *ctx, int dev, void *handle, void **sendComm, void **sendDevComm);
/* jaccl_connect with a per-connection trafficClass (>= 0 replaces the ctx's). */
ncclResult_t jaccl_connect_tclass(void *ctx, int trafficClass, int dev, void *handle,
                                  void **sendComm, void **sendDevComm);
ncclResult_t jaccl_accept(void *listenComm, void **recvComm, void **recvDevComm);
ncclResult_t jaccl_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle);
ncclResult_t jaccl_dereg_mr(void *comm, void *mhandle);
ncclResult_t jaccl_isend(void *sendComm, void *data, size_t size, int tag, void *mhandle,
                         void *phandle, void **request);
ncclResult_t jaccl_irecv(void *recvComm, int n, void **data, size_t *sizes, int *tags,
                         void **mhandles, void **phandles, void **request);
ncclResult_t jaccl_iflush(void *recvComm, int n, void **data, int *sizes, void **mhandles,
                          void **request);
ncclResult_t jaccl_test(void *request, int *done, int *sizes);
ncclResult_t jaccl_close_send(void *sendComm);
ncclResult_t jaccl_close_recv(void *recvComm);
ncclResult_t jaccl_close_listen(void *listenComm);

/* ---- CollNet (plugin/core/coll_*.c) ---- */
ncclResult_t jaccl_coll_init(void **ctx, uint64_t commId, ncclDebugLogger_t logFunction);
ncclResult_t jaccl_coll_devices(int *ndev);
ncclResult_t jaccl_coll_listen(void *ctx, int dev, void *handle, void **listenComm);
ncclResult_t jaccl_coll_connect(void *handles[], int nranks, int rank, void *listenComm,
                                void **collComm);
ncclResult_t jaccl_coll_reduce_support(ncclDataType_t dataType, ncclRedOp_t redOp, int *supported);
ncclResult_t jaccl_coll_iallreduce(void *collComm, void *sendData, void *recvData, size_t count,
                                   ncclDataType_t dataType, ncclRedOp_t redOp, void *sendMhandle,
                                   void *recvMhandle, void **request);
/* Exactly one part (NCCL never passes more). */
ncclResult_t jaccl_coll_iallgather(void *collComm, void *sendData, int nRecvParts,
                                   const struct jaccl_sge *recvParts, size_t bytesPerRank,
                                   size_t windowOffset, size_t windowBytes, void *sendMhandle,
                                   void **request);
ncclResult_t jaccl_coll_ireducescatter(void *collComm, int nSendParts,
                                       const struct jaccl_sge *sendParts, void *recvData,
                                       size_t bytesPerRank, size_t windowOffset, size_t windowBytes,
                                       ncclDataType_t dataType, ncclRedOp_t redOp,
                                       void *recvMhandle, void **request);
ncclResult_t jaccl_coll_iflush(void *collComm, void *data, int size, void *mhandle, void **request);
ncclResult_t jaccl_coll_test(void *request, int *done, int *size);
ncclResult_t jaccl_coll_close(void *collComm);
ncclResult_t jaccl_coll_close_listen(void *listenComm);

/* ---- tuner (plugin/core/tuner.c) ---- */
/* What NCCL's tuner init says about a communicator, in jaccl's terms. The NCCL constants feed
 * only the crossover estimate logged at init (microseconds, SIMPLE protocol; have_consts 0
 * when NCCL passed none). */
struct jaccl_tuner_comm {
    uint64_t comm_id;
    int nranks, nnodes;
    int have_consts;
    double ring_base_us, ring_net_us, tree_net_us, ring_nvl_us;
};

/* The collectives CollNet runs. */
enum jaccl_tune_coll { JACCL_TUNE_ALLREDUCE, JACCL_TUNE_REDUCESCATTER, JACCL_TUNE_ALLGATHER };

/* Never fails a communicator: with NCCL_JACCL_TUNER=0, one node, or no model, *ctx is NULL
 * and the tables leave NCCL's costs alone. */
ncclResult_t jaccl_tuner_init(void **ctx, const struct jaccl_tuner_comm *comm,
                              ncclDebugLogger_t logFunction);
/* jaccl's costs in microseconds for the CollNet entries of one collective of `kind` over
 * nbytes (NCCL's nBytes; numPipeOps as NCCL passed it), in place: *direct_us and *chain_us hold
 * what NCCL priced CollNet Direct and Chain at and get jaccl's; a negative one (NCCL will not
 * run it) is left alone, and so are both when ctx is NULL or not a live context. Safe from any
 * thread. */
void jaccl_tuner_collnet(void *ctx, enum jaccl_tune_coll kind, size_t nbytes, int numPipeOps,
                         double *direct_us, double *chain_us);
ncclResult_t jaccl_tuner_finalize(void *ctx); /* NULL is fine */

#endif
