/* SPDX-License-Identifier: BSD-3-Clause */
/* What one operation costs, for the tuner's model (docs/tuner.md).
 *
 * Each algorithm describes the work one rank does for an operation of a given geometry
 * (algo_ops.work fills a struct algo_work: its steps, the bytes it sends, the bytes it
 * reduces); algo_time is the one formula that turns that work into seconds on a platform
 * (struct algo_platform: the link, the hop latency, the reduction kernels' measured speed).
 * Nothing else derives an algorithm's cost. */
#ifndef JACCL_ALGO_COST_H
#define JACCL_ALGO_COST_H

#include <stddef.h>

#include "algo/chunks.h"
#include "algo/kern_reduce.h"

/* One rank's share of one operation (every rank does the same). */
struct algo_work {
    size_t bytes;   /* the operation's bytes (algo_total): what decides whether it fits in cache */
    int hops;       /* messages on the critical path, one after another: the steps */
    double sent;    /* bytes it sends, all peers together (it receives as many) */
    double reduced; /* bytes its reduction kernels write */
    int peers;      /* distinct peers it sends to at the same time */
    int lanes;      /* lanes (sockets, queue pairs) it keeps sending on at the same time */
};

/* Where it runs. Rates in bytes per second, times in seconds. */
struct algo_platform {
    double link_Bps;      /* what one link carries each way */
    double link_mem_Bps;  /* the same for an operation larger than the cache (0: link_Bps) */
    double lane_Bps;      /* what one lane carries each way (0: as much as the link) */
    double hop_s;         /* one message to a peer and its handling there: wire plus software */
    double kern_hot_Bps;  /* reduction kernel output rate, operands in the cache */
    double kern_cold_Bps; /* the same, operands streaming from memory */
    size_t cache_bytes;   /* an operation larger than this streams from memory: the kernels'
                           * cold rate, and link_mem_Bps for its transfers */
    double cpu_share;     /* of a core, per rank: 1, less when ranks crowd a host's cores */
    int links;            /* separate cables a rank's traffic can spread over */
};

double algo_time(const struct algo_work *w, const struct algo_platform *p);

struct algo_choice;
/* The algorithm algo_choose takes for an operation of `kind` over `bytes` (all-reduce: the
 * vector; reduce-scatter and all-gather: all ranks' bytes) in a group of nranks, with elements
 * of esz bytes, and its time on p. *algo gets the algorithm. */
double algo_predict(enum algo_kind kind, int nranks, size_t bytes, size_t esz,
                    const struct algo_choice *ch, const struct algo_platform *p, int *algo);

/* Measured once per process, on first use (a few milliseconds): the sum kernel's output rate
 * for each dtype, in cache and streaming, and the cache size the model splits them at. */
struct algo_kern_rates {
    double hot_Bps[JD_NUM], cold_Bps[JD_NUM]; /* 0: not measured (not a training type) */
    size_t hot_bytes, cold_bytes;             /* operand sizes the two were measured on */
    size_t cache_bytes;                       /* per-core cache (L2), what separates them */
};
const struct algo_kern_rates *algo_kern_rates(void);
/* The types whose rates are measured: what NCCL all-reduces in training. */
int algo_kern_rated(enum jaccl_dtype t);

#endif
