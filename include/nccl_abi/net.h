/* SPDX-License-Identifier: BSD-3-Clause */
/* The NCCL net / CollNet plugin ABI (NCCL 2.20 .. 2.30, x86-64), tables v8..v12. The one header the
 * plugin includes; written from the documented ABI with NCCL's type names, no CUDA.
 * Layouts are pinned by tests/unit/test_abi_layout.c.
 *
 * Where two versions share a layout, the newer type is an alias of the older one (props v9 =
 * v10, SGE v9 .. v12, device handle v8 .. v12, vProps v9 .. v11, config v10 .. v12, attributes
 * v11 = v12), so a function written for one fits every table that uses that layout. */
#ifndef JACCL_NCCL_ABI_NET_H
#define JACCL_NCCL_ABI_NET_H

#include "nccl_abi/nccl_types.h"
#include "nccl_abi/net_common.h"
#include "nccl_abi/net_device.h"
#include "nccl_abi/net_v8.h"
#include "nccl_abi/net_v9.h"
#include "nccl_abi/net_v10.h"
#include "nccl_abi/net_v11.h"
#include "nccl_abi/net_v12.h"

/* Unversioned names = the newest version, as in NCCL's own headers. */
typedef ncclNetProperties_v12_t ncclNetProperties_t;
typedef ncclNetVDeviceProps_v12_t ncclNetVDeviceProps_t;
typedef ncclNetSGE_v12_t ncclNetSGE_t;
typedef ncclNetCommConfig_v12_t ncclNetCommConfig_t;
typedef ncclNetCommAttr_v12_t ncclNetCommAttr_t;
typedef ncclNetAttr_v12_t ncclNetAttr_t;
typedef ncclNet_v12_t ncclNet_t;
typedef ncclCollNet_v12_t ncclCollNet_t;

#endif
