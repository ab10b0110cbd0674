/* SPDX-License-Identifier: BSD-3-Clause */
/* Constants shared by every version of the net and CollNet tables (NCCL 2.28). */
#ifndef JACCL_NCCL_ABI_NET_COMMON_H
#define JACCL_NCCL_ABI_NET_COMMON_H

/* Bytes of the opaque listen handle that NCCL stores and exchanges between ranks. */
#define NCCL_NET_HANDLE_MAXSIZE 128

/* Bits of ncclNetProperties.ptrSupport, also the type argument of regMr. */
#define NCCL_PTR_HOST   0x1
#define NCCL_PTR_CUDA   0x2
#define NCCL_PTR_DMABUF 0x4

/* Requests NCCL may keep outstanding per comm (times maxRecvs on a send comm). */
#define NCCL_NET_MAX_REQUESTS 32

/* Size of vProps.devs[] in v9..v11 (v12: NCCL_NET_MAX_DEVS_PER_NIC_V12). */
#define NCCL_NET_MAX_DEVS_PER_NIC 4

/* Upper bound NCCL accepts for maxP2pBytes / maxCollBytes: 1 TiB. */
#define NCCL_MAX_NET_SIZE_BYTES (1 * 1024 * 1024 * 1024 * 1024L)

/* What NCCL may pre-store in *request before irecv: "completion of this recv is optional". */
#define NCCL_NET_OPTIONAL_RECV_COMPLETION 0x1
/* Defined by NCCL but unused by 2.28. */
#define NCCL_NET_MULTI_REQUEST 0x2

/* NCCL's v8 adapter limits: int-sized p2p messages, and the maxCollBytes it reports. */
#define MAX_NET_SIZE     (1024 * 1024 * 1024L)
#define MAX_COLLNET_SIZE (512 * 1024 * 1024L)

#endif
