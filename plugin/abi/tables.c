/* SPDX-License-Identifier: BSD-3-Clause */
/* The ten tables NCCL looks up by name (ncclNetPlugin_vN, ncclCollNetPlugin_vN), the only
 * symbols the library exports (plugin/exports.map.in, for each version of abi/versions.h).
 * NCCL 2.30 takes v12, 2.28 v11; the older tables let NCCL 2.20 .. 2.27 load the same library. Each
 * slot is the internal API function itself when its signature names no versioned type, else the
 * oldest shim that fits (shims.h).
 *
 * NULL slots, all tolerated by NCCL: regMrDmaBuf (host memory only), getDeviceMr and
 * irecvConsumed (no device offload), makeVDevice (no NIC fusion). */
#include <stddef.h>

#include "abi/shims.h"
#include "abi/versions.h"
#include "core/api.h"
#include "nccl_abi/net.h"

#define JACCL_EXPORT __attribute__((visibility("default")))

/* What NCCL logs and matches NCCL_NET against. */
#define JACCL_NET_NAME "JACCL"

JACCL_EXPORT const ncclNet_v12_t ncclNetPlugin_v12 = {
        .name = JACCL_NET_NAME,
        .init = jaccl_v11_init,
        .devices = jaccl_devices,
        .getProperties = jaccl_v12_get_properties,
        .listen = jaccl_listen,
        .connect = jaccl_v11_connect,
        .accept = jaccl_v8_accept,
        .regMr = jaccl_reg_mr,
        .regMrDmaBuf = NULL,
        .deregMr = jaccl_dereg_mr,
        .isend = jaccl_isend,
        .irecv = jaccl_irecv,
        .iflush = jaccl_iflush,
        .test = jaccl_test,
        .closeSend = jaccl_close_send,
        .closeRecv = jaccl_close_recv,
        .closeListen = jaccl_close_listen,
        .getDeviceMr = NULL,
        .irecvConsumed = NULL,
        .makeVDevice = NULL,
        .finalize = jaccl_finalize,
        .setNetAttr = jaccl_v11_set_net_attr,
};

JACCL_EXPORT const ncclNet_v11_t ncclNetPlugin_v11 = {
        .name = JACCL_NET_NAME,
        .init = jaccl_v11_init,
        .devices = jaccl_devices,
        .getProperties = jaccl_v11_get_properties,
        .listen = jaccl_listen,
        .connect = jaccl_v11_connect,
        .accept = jaccl_v8_accept,
        .regMr = jaccl_reg_mr,
        .regMrDmaBuf = NULL,
        .deregMr = jaccl_dereg_mr,
        .isend = jaccl_isend,
        .irecv = jaccl_irecv,
        .iflush = jaccl_iflush,
        .test = jaccl_test,
        .closeSend = jaccl_close_send,
        .closeRecv = jaccl_close_recv,
        .closeListen = jaccl_close_listen,
        .getDeviceMr = NULL,
        .irecvConsumed = NULL,
        .makeVDevice = NULL,
        .finalize = jaccl_finalize,
        .setNetAttr = jaccl_v11_set_net_attr,
};

JACCL_EXPORT const ncclNet_v10_t ncclNetPlugin_v10 = {
        .name = JACCL_NET_NAME,
        .init = jaccl_v10_init,
        .devices = jaccl_devices,
        .getProperties = jaccl_v9_get_properties,
        .listen = jaccl_v8_listen,
        .connect = jaccl_v10_connect,
        .accept = jaccl_v8_accept,
        .regMr = jaccl_reg_mr,
        .regMrDmaBuf = NULL,
        .deregMr = jaccl_dereg_mr,
        .isend = jaccl_isend,
        .irecv = jaccl_irecv,
        .iflush = jaccl_iflush,
        .test = jaccl_test,
        .closeSend = jaccl_close_send,
        .closeRecv = jaccl_close_recv,
        .closeListen = jaccl_close_listen,
        .getDeviceMr = NULL,
        .irecvConsumed = NULL,
        .makeVDevice = NULL,
};

JACCL_EXPORT const ncclNet_v9_t ncclNetPlugin_v9 = {
        .name = JACCL_NET_NAME,
        .init = jaccl_v8_init,
        .devices = jaccl_devices,
        .getProperties = jaccl_v9_get_properties,
        .listen = jaccl_v8_listen,
        .connect = jaccl_v8_connect,
        .accept = jaccl_v8_accept,
        .regMr = jaccl_reg_mr,
        .regMrDmaBuf = NULL,
        .deregMr = jaccl_dereg_mr,
        .isend = jaccl_v9_isend,
        .irecv = jaccl_v9_irecv,
        .iflush = jaccl_iflush,
        .test = jaccl_test,
        .closeSend = jaccl_close_send,
        .closeRecv = jaccl_close_recv,
        .closeListen = jaccl_close_listen,
        .getDeviceMr = NULL,
        .irecvConsumed = NULL,
        .makeVDevice = NULL,
};

JACCL_EXPORT const ncclNet_v8_t ncclNetPlugin_v8 = {
        .name = JACCL_NET_NAME,
        .init = jaccl_v8_init,
        .devices = jaccl_devices,
        .getProperties = jaccl_v8_get_properties,
        .listen = jaccl_v8_listen,
        .connect = jaccl_v8_connect,
        .accept = jaccl_v8_accept,
        .regMr = jaccl_reg_mr,
        .regMrDmaBuf = NULL,
        .deregMr = jaccl_dereg_mr,
        .isend = jaccl_v8_isend,
        .irecv = jaccl_v8_irecv,
        .iflush = jaccl_iflush,
        .test = jaccl_test,
        .closeSend = jaccl_close_send,
        .closeRecv = jaccl_close_recv,
        .closeListen = jaccl_close_listen,
        .getDeviceMr = NULL,
        .irecvConsumed = NULL,
};

/* CollNet devices are the net devices (NCCL matches them by index and name), so
 * getProperties is the net one. */
JACCL_EXPORT const ncclCollNet_v12_t ncclCollNetPlugin_v12 = {
        .name = JACCL_NET_NAME,
        .init = jaccl_coll_init,
        .devices = jaccl_coll_devices,
        .getProperties = jaccl_v12_get_properties,
        .listen = jaccl_coll_listen,
        .connect = jaccl_coll_connect,
        .reduceSupport = jaccl_coll_reduce_support,
        .regMr = jaccl_reg_mr,
        .regMrDmaBuf = NULL,
        .deregMr = jaccl_dereg_mr,
        .iallreduce = jaccl_coll_iallreduce,
        .iallgather = jaccl_coll_v9_iallgather,
        .ireducescatter = jaccl_coll_v9_ireducescatter,
        .iflush = jaccl_coll_iflush,
        .test = jaccl_coll_test,
        .closeColl = jaccl_coll_close,
        .closeListen = jaccl_coll_close_listen,
        .makeVDevice = NULL,
        .finalize = jaccl_finalize,
};

JACCL_EXPORT const ncclCollNet_v11_t ncclCollNetPlugin_v11 = {
        .name = JACCL_NET_NAME,
        .init = jaccl_coll_init,
        .devices = jaccl_coll_devices,
        .getProperties = jaccl_v11_get_properties,
        .listen = jaccl_coll_listen,
        .connect = jaccl_coll_connect,
        .reduceSupport = jaccl_coll_reduce_support,
        .regMr = jaccl_reg_mr,
        .regMrDmaBuf = NULL,
        .deregMr = jaccl_dereg_mr,
        .iallreduce = jaccl_coll_iallreduce,
        .iallgather = jaccl_coll_v9_iallgather,
        .ireducescatter = jaccl_coll_v9_ireducescatter,
        .iflush = jaccl_coll_iflush,
        .test = jaccl_coll_test,
        .closeColl = jaccl_coll_close,
        .closeListen = jaccl_coll_close_listen,
        .makeVDevice = NULL,
        .finalize = jaccl_finalize,
};

JACCL_EXPORT const ncclCollNet_v10_t ncclCollNetPlugin_v10 = {
        .name = JACCL_NET_NAME,
        .init = jaccl_coll_v8_init,
        .devices = jaccl_coll_devices,
        .getProperties = jaccl_v9_get_properties,
        .listen = jaccl_coll_v8_listen,
        .connect = jaccl_coll_connect,
        .reduceSupport = jaccl_coll_reduce_support,
        .regMr = jaccl_reg_mr,
        .regMrDmaBuf = NULL,
        .deregMr = jaccl_dereg_mr,
        .iallreduce = jaccl_coll_iallreduce,
        .iallgather = jaccl_coll_v9_iallgather,
        .ireducescatter = jaccl_coll_v9_ireducescatter,
        .iflush = jaccl_coll_iflush,
        .test = jaccl_coll_test,
        .closeColl = jaccl_coll_close,
        .closeListen = jaccl_coll_close_listen,
        .makeVDevice = NULL,
};

JACCL_EXPORT const ncclCollNet_v9_t ncclCollNetPlugin_v9 = {
        .name = JACCL_NET_NAME,
        .init = jaccl_coll_v8_init,
        .devices = jaccl_coll_devices,
        .getProperties = jaccl_v9_get_properties,
        .listen = jaccl_coll_v8_listen,
        .connect = jaccl_coll_connect,
        .reduceSupport = jaccl_coll_reduce_support,
        .regMr = jaccl_reg_mr,
        .regMrDmaBuf = NULL,
        .deregMr = jaccl_dereg_mr,
        .iallreduce = jaccl_coll_iallreduce,
        .iallgather = jaccl_coll_v9_iallgather,
        .ireducescatter = jaccl_coll_v9_ireducescatter,
        .iflush = jaccl_coll_iflush,
        .test = jaccl_coll_test,
        .closeColl = jaccl_coll_close,
        .closeListen = jaccl_coll_close_listen,
        .makeVDevice = NULL,
};

JACCL_EXPORT const ncclCollNet_v8_t ncclCollNetPlugin_v8 = {
        .name = JACCL_NET_NAME,
        .init = jaccl_coll_v8_init,
        .devices = jaccl_coll_devices,
        .getProperties = jaccl_v8_get_properties,
        .listen = jaccl_coll_v8_listen,
        .connect = jaccl_coll_connect,
        .reduceSupport = jaccl_coll_reduce_support,
        .regMr = jaccl_reg_mr,
        .regMrDmaBuf = NULL,
        .deregMr = jaccl_dereg_mr,
        .iallreduce = jaccl_coll_v8_iallreduce,
        .iallgather = jaccl_coll_v8_iallgather,
        .ireducescatter = jaccl_coll_v8_ireducescatter,
        .iflush = jaccl_coll_iflush,
        .test = jaccl_coll_test,
        .closeColl = jaccl_coll_close,
        .closeListen = jaccl_coll_close_listen,
};

/* Every version of the list has both tables: one missing fails to compile here. */
#define JACCL_TABLES_OF(v) {v, &ncclNetPlugin_v##v, &ncclCollNetPlugin_v##v},
static const struct {
    int version;
    const void *net, *coll;
} g_tables[] __attribute__((used)) = {JACCL_ABI_VERSIONS(JACCL_TABLES_OF)};
