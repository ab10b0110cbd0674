/* SPDX-License-Identifier: BSD-3-Clause */
/* The table of core/err.h, in one switch so that a code cannot map two ways. */
#include <errno.h>

#include "core/err.h"

ncclResult_t jaccl_err_to_nccl(int err)
{
    switch (err) {
    case 0:
        return ncclSuccess;
    case -EFAULT:
    case -EBADF:
    case -EALREADY:
        return ncclInternalError;
    case -EMSGSIZE:
    case -EINVAL:
        return ncclInvalidUsage;
    case -ECONNRESET:
    case -ECONNREFUSED:
    case -ECONNABORTED:
    case -EPIPE:
    case -ENOTCONN:
    case -EHOSTUNREACH:
    case -ENETUNREACH:
    case -EPROTO:
    case -ETIMEDOUT:
        return ncclRemoteError;
    default:
        /* a positive value here is a progress count leaking out: a bug of ours */
        return err > 0 ? ncclInternalError : ncclSystemError;
    }
}
