/* SPDX-License-Identifier: BSD-3-Clause */
/* Device-offload descriptors (NCCL 2.28). jaccl is a host plugin: it reports
 * NCCL_NET_DEVICE_HOST with version NCCL_NET_DEVICE_INVALID_VERSION and never fills a handle. */
#ifndef JACCL_NCCL_ABI_NET_DEVICE_H
#define JACCL_NCCL_ABI_NET_DEVICE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NCCL_NET_DEVICE_INVALID_VERSION 0x0
#define NCCL_NET_MTU_SIZE               4096
/* The only UNPACK version NCCL 2.28 accepts. */
#define NCCL_NET_DEVICE_UNPACK_VERSION 0x7

/* GIN_PROXY and GIN_GDAKI belong to NCCL's core header only (device-initiated networking). */
typedef enum {
    NCCL_NET_DEVICE_HOST = 0,
    NCCL_NET_DEVICE_UNPACK = 1,
    NCCL_NET_DEVICE_GIN_PROXY = 2,
    NCCL_NET_DEVICE_GIN_GDAKI = 3
} ncclNetDeviceType;

/* Unchanged from v7 to v12 (32 bytes), so every version names the same type: one accept()
 * then fits every table. */
typedef struct {
    ncclNetDeviceType netDeviceType;
    int netDeviceVersion;
    void *handle;
    size_t size;
    int needsProxyProgress;
} ncclNetDeviceHandle_v8_t;

typedef ncclNetDeviceHandle_v8_t ncclNetDeviceHandle_v9_t;
typedef ncclNetDeviceHandle_v8_t ncclNetDeviceHandle_v10_t;
typedef ncclNetDeviceHandle_v8_t ncclNetDeviceHandle_v11_t;
typedef ncclNetDeviceHandle_v8_t ncclNetDeviceHandle_v12_t;
typedef ncclNetDeviceHandle_v12_t ncclNetDeviceHandle_t;

#ifdef __cplusplus
}
#endif

#endif
