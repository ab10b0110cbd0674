/* SPDX-License-Identifier: BSD-3-Clause */
/* NCCL's tuner plugin ABI, the versions jaccl exports: v5 (NCCL 2.28) and v6 (2.30). NCCL
 * finds a tuner in the net plugin's own library when NCCL_TUNER_PLUGIN is unset and no
 * libnccl-tuner.so opens, and takes the first of ncclTunerPlugin_v6, _v5 (, _v4 ...) that the
 * library exports. Older versions (v2 .. v4) are not written here: jaccl does not export them,
 * and NCCL 2.28 and 2.30 never look for them when v5 is there. Layouts are pinned by
 * tests/unit/test_abi_layout.c. */
#ifndef JACCL_NCCL_ABI_TUNER_H
#define JACCL_NCCL_ABI_TUNER_H

#include "nccl_abi/tuner_common.h"
#include "nccl_abi/tuner_v5.h"
#include "nccl_abi/tuner_v6.h"

/* Unversioned names = the newest version, as in NCCL's own headers. */
typedef ncclNvlDomainInfo_v6_t ncclNvlDomainInfo_t;
typedef ncclTunerConstants_v6_t ncclTunerConstants_t;
typedef ncclTuner_v6_t ncclTuner_t;

#endif
