/* SPDX-License-Identifier: BSD-3-Clause */
/* The tuner tables' core (docs/tuner.md): one context per NCCL communicator, holding the model
 * of jaccl's CollNet for that communicator's node count, and jaccl's cost for the CollNet
 * entries of NCCL's cost table.
 *
 * How NCCL runs a CollNet collective, which the cost follows: its kernels move the data
 * between the GPUs and host buffers, and its proxy hands the host buffers to jaccl in calls of
 * at most 8 channels' steps (512 KiB per channel for Direct, 256 KiB for Chain), one after
 * another; both stages overlap, call by call. */
#include <errno.h>
#include <stdlib.h>

#include "core/registry.h"
#include "core/tuner.h"
#include "util/log.h"
#include "util/param.h"

#define CALL_CHANNELS 8
#define STEP_DIRECT   (512u << 10)
#define STEP_CHAIN    (256u << 10)

/* The calls one collective becomes: NCCL's largest (the fewest calls, which is what a
 * collective that fills every channel gets), and at least one per pipelined operation. */
static size_t ncalls(size_t nbytes, int chain, int pipe_ops)
{
    size_t call = (size_t)CALL_CHANNELS * (chain ? STEP_CHAIN : STEP_DIRECT);
    size_t k = (nbytes + call - 1) / call;
    if (pipe_ops > 0 && k < (size_t)pipe_ops)
        k = (size_t)pipe_ops;
    return k ? k : 1;
}

/* Two stages over k calls: the first call passes both, then the slower stage sets the pace. */
static double pipeline(double a, double b, size_t k)
{
    double slow = a > b ? a : b;
    return (a + b) / (double)k + slow * (double)(k - 1) / (double)k;
}

/* NCCL's own CollNet estimate is the GPU side of that pipeline: it prices the data's way
 * between the GPUs and the plugin's buffers and assumes the network reduces for free (as a
 * SHARP switch does). jaccl's network time is the other stage. */
double jaccl_tuner_cost_us(const struct jaccl_tuner *t, enum algo_kind kind, int chain,
                           size_t nbytes, int pipe_ops, double nccl_us)
{
    size_t k = ncalls(nbytes, chain, pipe_ops);
    double call_s = jaccl_model_op(&t->m, kind, nbytes / k, ALGO_AUTO, NULL);
    return pipeline(nccl_us, (double)k * call_s * 1e6, k);
}

static struct jaccl_tuner *tuner_new(const struct jaccl_tuner_comm *comm)
{
    struct jaccl_tuner *t = calloc(1, sizeof(*t));
    if (!t) {
        JWARN("tuner: out of memory: NCCL's CollNet costs stay as NCCL computed them");
        return NULL;
    }
    t->comm = *comm;
    int rc = jaccl_model_init(&t->m, comm->nnodes, 1);
    if (rc == 0 && jaccl_reg_add(t, sizeof(*t), 1, JO_TUNER, NULL) != 0)
        rc = -ENOMEM;
    if (rc == -ENODEV)
        JINFO(NCCL_INIT | NCCL_TUNING,
              "tuner: no jaccl device to model (and NCCL_JACCL_TUNER_LINK_MBPS unset): NCCL's "
              "CollNet costs stay as NCCL computed them");
    else if (rc != 0)
        JWARN("tuner: cannot build the model (%s): NCCL's CollNet costs stay as NCCL computed "
              "them",
              rc == -ENOMEM ? "out of memory" : "error");
    if (rc != 0) {
        free(t);
        return NULL;
    }
    return t;
}

ncclResult_t jaccl_tuner_init(void **ctx, const struct jaccl_tuner_comm *comm,
                              ncclDebugLogger_t logFunction)
{
    if (ctx)
        *ctx = NULL;
    if (logFunction)
        jaccl_log_set(logFunction);
    if (!ctx || !comm)
        return ncclSuccess;
    if (jaccl_param_int(JP_TUNER) == 0) {
        JINFO(NCCL_INIT | NCCL_TUNING,
              "tuner off (NCCL_JACCL_TUNER=0): NCCL's CollNet costs stay as NCCL computed them");
        return ncclSuccess;
    }
    if (comm->nnodes < 2) {
        JINFO(NCCL_INIT | NCCL_TUNING,
              "tuner: communicator %#llx is on one node, where NCCL uses no CollNet: nothing "
              "to tune",
              (unsigned long long)comm->comm_id);
        return ncclSuccess;
    }
    struct jaccl_tuner *t = tuner_new(comm);
    if (t) {
        jaccl_tuner_log_init(t);
        *ctx = t;
    }
    return ncclSuccess;
}

static enum algo_kind kind_of(enum jaccl_tune_coll k)
{
    return k == JACCL_TUNE_REDUCESCATTER ? ALGO_REDUCESCATTER
           : k == JACCL_TUNE_ALLGATHER   ? ALGO_ALLGATHER
                                         : ALGO_ALLREDUCE;
}

void jaccl_tuner_collnet(void *ctx, enum jaccl_tune_coll kind, size_t nbytes, int numPipeOps,
                         double *direct_us, double *chain_us)
{
    const struct jaccl_tuner *t =
            ctx ? jaccl_reg_find(ctx, JO_TUNER, "tuner getCollInfo", NULL) : NULL;
    if (!t || nbytes == 0)
        return;
    if (*direct_us >= 0)
        *direct_us = jaccl_tuner_cost_us(t, kind_of(kind), 0, nbytes, numPipeOps, *direct_us);
    if (*chain_us >= 0)
        *chain_us = jaccl_tuner_cost_us(t, kind_of(kind), 1, nbytes, numPipeOps, *chain_us);
}

ncclResult_t jaccl_tuner_finalize(void *ctx)
{
    if (!ctx)
        return ncclSuccess;
    if (!jaccl_reg_take(ctx, JO_TUNER, "tuner finalize", NULL))
        return ncclSuccess; /* warned; an error here would leak NCCL's reference on the library */
    free(ctx);
    return ncclSuccess;
}
