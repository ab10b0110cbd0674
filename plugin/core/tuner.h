/* SPDX-License-Identifier: BSD-3-Clause */
/* The tuner's model of jaccl's CollNet (docs/tuner.md): its constants for this host, where each
 * came from, and jaccl's time for one operation. The tuner tables (core/tuner.c) build one per
 * communicator; jaccl-info prints it and jaccl-coll-perf sets it beside measured times. */
#ifndef JACCL_CORE_TUNER_H
#define JACCL_CORE_TUNER_H

#include "algo/algo.h"
#include "core/api.h"

struct jaccl_model {
    struct algo_platform plat; /* the kernel rates are those of `dtype` */
    struct algo_choice choice; /* what a CollNet group of nranks chooses by */
    int nranks;                /* the group: one rank per node under NCCL */
    enum jaccl_dtype dtype;
    double dev_lat_us; /* the devices' reported latency (0: none), what NCCL adds to its own */
    char link_from[96], lat_from[96]; /* where the link rate and the hop latency came from */
};

/* The model for a group of nranks, ranks_per_host of which share this host's cores (1 under
 * NCCL: one CollNet rank per node). Link and latency from the knobs, else from jaccl's devices
 * (which it opens and closes again when nothing else holds them: no thread is left behind);
 * kernel rates measured on first use. 0, -ENODEV (no knob and no device says how fast the link
 * is) or -ENOMEM (the kernels could not be measured). */
int jaccl_model_init(struct jaccl_model *m, int nranks, int ranks_per_host);
/* jaccl's time in seconds for one operation of `kind` over `bytes` (all-reduce: the vector;
 * the other two: all ranks' bytes), with the algorithm the group's settings pick for it
 * (algo_force: that one, or ALGO_AUTO). *algo: the algorithm that runs (may be NULL). */
double jaccl_model_op(const struct jaccl_model *m, enum algo_kind kind, size_t bytes,
                      int algo_force, int *algo);

/* ---- the tuner tables' context (core/tuner.c, core/tuner_log.c) ---- */
/* One per NCCL communicator with two nodes or more: read-only once made, so any thread may use
 * it while NCCL's getCollInfo calls of other communicators run. */
struct jaccl_tuner {
    struct jaccl_model m; /* a group of comm.nnodes ranks, one per host */
    struct jaccl_tuner_comm comm;
};

/* jaccl's cost in microseconds for an NCCL collective of nbytes that NCCL priced at nccl_us as
 * CollNet Chain (chain 1) or Direct (docs/tuner.md, "From jaccl's time to NCCL's table"). */
double jaccl_tuner_cost_us(const struct jaccl_tuner *t, enum algo_kind kind, int chain,
                           size_t nbytes, int pipe_ops, double nccl_us);
/* The INFO line at init: where CollNet beats NCCL's ring, and the model's constants. */
void jaccl_tuner_log_init(const struct jaccl_tuner *t);

#endif
