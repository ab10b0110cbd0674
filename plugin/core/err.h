/* SPDX-License-Identifier: BSD-3-Clause */
/* The one error rule. Inside the plugin (core, algo, fabric, util) a function that can fail
 * returns 0 or a negative errno-style code; only the API edge (the jaccl_* entry points of
 * core/api.h and the plugin/abi shims) turns one into an ncclResult_t, through
 * jaccl_err_to_nccl() and nowhere else. The code says whose fault the failure is, because
 * that is what NCCL's result codes mean:
 *
 *   class    codes                                        ncclResult_t
 *   misuse   -EFAULT (NULL, freed or foreign pointer;      ncclInternalError
 *            an internal invariant broken), -EBADF
 *            (closed comm or handle, wrong kind),
 *            -EALREADY (call order: a call repeated or
 *            made in the wrong state)
 *   usage    -EMSGSIZE (truncation, a size or count out    ncclInvalidUsage
 *            of range), -EINVAL (a configuration or
 *            argument mismatch: bad device, datatype, op,
 *            tag mismatch, init not done)
 *   remote   -ECONNRESET, -ECONNREFUSED, -ECONNABORTED,    ncclRemoteError
 *            -EPIPE, -ENOTCONN, -EHOSTUNREACH, -ENETUNREACH
 *            (the peer is gone), -EPROTO (it sent
 *            something malformed), -ETIMEDOUT (it stopped
 *            answering)
 *   system   anything else: -ENOMEM, -EIO, a failed       ncclSystemError
 *            syscall's -errno
 *
 * NCCL's "invalid argument" result is never returned (its plugin documentation asks plugins
 * not to use it). Positive values are not errors: conn's steps return 1 for "done" and algo's
 * progress functions 1 for "made progress" (see core/conn.h, algo/xport.h); they never reach
 * this function. */
#ifndef JACCL_CORE_ERR_H
#define JACCL_CORE_ERR_H

#include "nccl_abi/nccl_types.h"

ncclResult_t jaccl_err_to_nccl(int err);

#endif
