/* SPDX-License-Identifier: BSD-3-Clause */
/* The collective algorithms (ring, mesh, local) as the core sees them, and the transport they
 * run on as they see it.
 *
 * An operation (struct jc_op) is a geometry (chunks.h) plus two buffers that map logical byte
 * offsets to memory. Algorithms are step functions: jc_*_start once, then jc_*_advance every
 * time completions arrived, until it returns 1 (done) or < 0 (failed). They never block.
 *
 * They run on a transport they see only as an ops table (struct algo_xport, algo/xport.h). */
#ifndef JACCL_ALGO_ALGO_H
#define JACCL_ALGO_ALGO_H

#include <stddef.h>
#include <stdint.h>

#include "algo/chunks.h"
#include "algo/kern_reduce.h"
#include "algo/xport.h"
#include "fabric/fabric.h"

#define JC_MAX_RANKS 256
#define JC_POST_MAX  4 /* receives posted ahead per stream */
#define JC_SEND_MAX  4 /* sends in flight per stream */
#define JC_SLOTS     2 /* staging slots per receiving stream: pipeline depth */

enum jc_algo { JC_ALGO_LOCAL, JC_ALGO_RING, JC_ALGO_MESH };

/* Memory holding the logical range [base, base + len). */
struct jc_buf {
    char *p;
    struct fab_mr *mr;
    size_t base, len;
};

static inline char *jc_at(const struct jc_buf *b, size_t logical)
{
    return b->p + (logical - b->base);
}

struct jc_op {
    struct jc_geom g;
    enum jc_algo algo;
    int dtype, redop;
    jaccl_reduce_fn fn; /* NULL for all-gather */
    struct jc_buf in, out;
    int in_place; /* out aliases in as the kind's in-place convention says */
    uint32_t sig; /* same on every rank for the same call: checked across ranks */
};

/* Events of one operation so far: a cumulative stream counter minus the value it had when the
 * operation started. 0 while an earlier operation's events are still being counted (two
 * operations may share a stream; its events complete in order). */
static inline uint32_t jc_since(uint32_t now, uint32_t base)
{
    int32_t d = (int32_t)(now - base);
    return d > 0 ? (uint32_t)d : 0;
}

/* ---- algorithms ---- */
struct jc_cur {
    int t;             /* step */
    size_t f;          /* frame within the step's part */
    struct jc_range r; /* step t's part, and its frames (while t < T: set when t changes) */
    size_t nf;
};

struct jc_rlane { /* one (direction, wire) of the ring */
    int d, w, lane, speer, rpeer;
    uint32_t sbase, rbase;       /* transport counters when the operation started */
    uint32_t nsend, nrecv, n0;   /* frames to send, to receive, sent at step 0 */
    uint32_t sent, posted, proc; /* relative progress */
    struct jc_cur sc, pc, qc;    /* next frame to send, to post, to process */
    int8_t slot_of[JC_POST_MAX]; /* receive j -> slot, at j % JC_POST_MAX (-1: direct) */
};

struct jc_ring_run {
    int T, nl;
    struct jc_buf acc; /* where partial sums live: the output (all-reduce) or scratch */
    struct jc_rlane l[JC_MAX_PARTS];
};

struct jc_mpeer {
    uint32_t sbase, rbase, nsend, nrecv, sent, posted;
    int8_t slot_of[JC_POST_MAX]; /* frame f -> staging slot, at f % JC_POST_MAX */
};

struct jc_mesh_run {
    struct jc_range red; /* the range reduced here */
    size_t nred, ff;     /* its frames; the frame being folded */
    int fk;              /* next rank to fold into frame ff */
    struct jc_mpeer p[JC_MAX_RANKS];
};

struct jc_run {
    struct jc_op *op;
    int idx; /* run slot: which scratch and own buffer are this run's */
    union {
        struct jc_ring_run ring;
        struct jc_mesh_run mesh;
    };
};

/* choose.c: the algorithm for an operation, identical on every rank for the same call. */
struct jc_choice {
    int mesh_connected;
    int force; /* 0 auto, JC_ALGO_RING, JC_ALGO_MESH */
    size_t mesh_max_bytes;
    int mesh_max_ranks;
    int wires;
};
void jc_algo_choose(struct jc_op *op, const struct jc_choice *ch);
const char *jc_algo_name(enum jc_algo a);
const char *jc_kind_name(enum jc_kind k);
uint32_t jc_op_sig(const struct jc_op *op);

/* An algorithm in steps, so that the next queued operation can start while the current one
 * finishes (operations share streams, whose receives and sends must stay in schedule order):
 *   start       posting state only: no side effect on the caller's buffers, no sends;
 *   post        posts receives as credits allow (all it may do until it is armed);
 *   posted_all  1 once every receive of the operation is posted;
 *   sent_all    1 once every send of the operation is posted;
 *   arm         may send, reduce and touch its buffers (the one before has posted everything);
 *   advance     1 done, 0 in progress (more completions needed), < 0 failed.
 * *progress says whether a call did anything, so the caller knows when to sleep. Calls that
 * return int return a negative errno-style code on failure (the one the transport's send or
 * receive returned, -ENOMEM for scratch memory; the comm is then broken); 1 is never an
 * error, only "done". */
struct jc_algo_ops {
    int (*start)(struct jc_run *run, struct algo_xport *x);
    int (*post)(struct jc_run *run, struct algo_xport *x, int *progress);
    int (*posted_all)(const struct jc_run *run);
    int (*sent_all)(const struct jc_run *run);
    int (*arm)(struct jc_run *run, struct algo_xport *x);
    int (*advance)(struct jc_run *run, struct algo_xport *x, int *progress);
};
extern const struct jc_algo_ops jc_ring_ops, jc_mesh_ops, jc_local_ops;
const struct jc_algo_ops *jc_algo_ops_of(enum jc_algo a);

/* The local chunk into the output, unless it is already there (all-gather; with one rank, the
 * whole operation). */
void jc_copy_own(const struct jc_op *op);

#endif
