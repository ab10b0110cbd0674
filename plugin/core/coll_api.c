/* SPDX-License-Identifier: BSD-3-Clause */
/* CollNet entry points that need no peer: init, devices, reduceSupport and closing comms.
 * Memory registration and finalize are the net ones (jaccl_reg_mr, jaccl_dereg_mr,
 * jaccl_finalize), which take CollNet comms too. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/api.h"
#include "core/coll.h"
#include "core/err.h"
#include "core/state.h"
#include "util/log.h"
#include "util/param.h"

ncclResult_t jaccl_coll_init(void **ctx, uint64_t commId, ncclDebugLogger_t logFunction)
{
    return jaccl_init(ctx, commId, NULL, logFunction, NULL);
}

/* CollNet devices are the net devices: NCCL pairs them by index and name. */
ncclResult_t jaccl_coll_devices(int *ndev)
{
    if (!ndev)
        return jaccl_err_to_nccl(-EFAULT);
    if (jaccl_param_int(JP_COLL_ENABLE) == 0) {
        *ndev = 0;
        return ncclSuccess;
    }
    return jaccl_devices(ndev);
}

ncclResult_t jaccl_coll_reduce_support(ncclDataType_t dataType, ncclRedOp_t redOp, int *supported)
{
    if (!supported)
        return jaccl_err_to_nccl(-EFAULT);
    *supported = jaccl_reduce_fn_get((enum jaccl_dtype)dataType, (enum jaccl_redop)redOp) != NULL;
    return ncclSuccess;
}

/* Proof that collectives really ran through jaccl, and how: one line per comm. */
static void log_stats(const struct coll_comm *c)
{
    char by[160];
    size_t off = 0;
    for (int a = 0; a < ALGO_NUM_IDS && off < sizeof(by); a++)
        off += (size_t)snprintf(by + off, sizeof(by) - off, "%s%llu %s", a ? ", " : "",
                                (unsigned long long)c->stats.by_algo[a], algo_name(a));
    JINFO(NCCL_NET | NCCL_COLL,
          "CollNet closeColl: rank %d of %d: %llu operation(s), %llu byte(s) through CollNet "
          "(%s), %llu failed",
          c->rank, c->nranks, (unsigned long long)c->stats.ops, (unsigned long long)c->stats.bytes,
          by, (unsigned long long)c->stats.failed);
}

/* The progress thread says goodbye to every peer (say_goodbye in coll_progress.c) and leaves
 * without waiting for theirs; the endpoints' close hands our last bytes to the background.
 * After the join nothing touches the comm but us. */
ncclResult_t jaccl_coll_close(void *collComm)
{
    struct coll_comm *c = coll_handle_take(collComm, COMM_COLL, "CollNet closeColl");
    if (!c)
        return jaccl_err_to_nccl(-EBADF);
    if (c->started) {
        atomic_store(&c->closing, 1);
        c->ops->cq_wake(c->cq);
        pthread_join(c->thread, NULL);
    }
    uint64_t pending = c->q_tail - c->q_exec;
    if (pending)
        JWARN("CollNet closeColl: rank %d closes with %llu operation(s) unfinished", c->rank,
              (unsigned long long)pending);
    log_stats(c);
    coll_comm_free(c);
    return ncclSuccess;
}

ncclResult_t jaccl_coll_close_listen(void *listenComm)
{
    struct coll_listen *l = coll_handle_take(listenComm, COMM_COLL_LISTEN, "CollNet closeListen");
    if (!l)
        return jaccl_err_to_nccl(-EBADF);
    coll_handle_kill(l->h);
    jaccl_listener_close(l->listener);
    free(l);
    jaccl_state_put();
    return ncclSuccess;
}
