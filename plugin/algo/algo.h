/* SPDX-License-Identifier: BSD-3-Clause */
/* The collective algorithms (ring, mesh, recursive halving-doubling, local) as the core sees them,
 * and the transport they run on as they see it.
 *
 * An operation (struct algo_op) is a geometry (chunks.h) plus two buffers that map logical byte
 * offsets to memory. Algorithms are step functions: algo_*_start once, then algo_*_advance every
 * time completions arrived, until it returns 1 (done) or < 0 (failed). They never block.
 *
 * They run on a transport they see only as an ops table (struct algo_xport, algo/xport.h). */
#ifndef JACCL_ALGO_ALGO_H
#define JACCL_ALGO_ALGO_H

#include <stddef.h>
#include <stdint.h>

#include "algo/chunks.h"
#include "algo/cost.h"
#include "algo/kern_reduce.h"
#include "algo/xport.h"
#include "fabric/fabric.h"

#define ALGO_POST_MAX 4 /* receives posted ahead per stream */
#define ALGO_SEND_MAX 4 /* sends in flight per stream */
#define ALGO_SLOTS    2 /* staging slots per receiving stream: pipeline depth */

/* In the order the logs list them. ALGO_AUTO: none forced (NCCL_JACCL_ALGO=auto). */
enum algo_id { ALGO_RING, ALGO_MESH, ALGO_RHD, ALGO_LOCAL, ALGO_NUM_IDS, ALGO_AUTO = -1 };
#define ALGO_RHD_MAX_STEPS 16 /* 2 log2(ALGO_MAX_RANKS) */

/* Memory holding the logical range [base, base + len). */
struct algo_buf {
    char *p;
    struct fab_mr *mr;
    size_t base, len;
};

static inline char *algo_at(const struct algo_buf *b, size_t logical)
{
    return b->p + (logical - b->base);
}

struct algo_op {
    struct algo_geom g;
    enum algo_id algo;
    int dtype, redop;
    jaccl_reduce_fn fn; /* NULL for all-gather */
    struct algo_buf in, out;
    int in_place; /* out aliases in as the kind's in-place convention says */
    uint32_t sig; /* same on every rank for the same call: checked across ranks */
};

/* Events of one operation so far: a cumulative stream counter minus the value it had when the
 * operation started. 0 while an earlier operation's events are still being counted (two
 * operations may share a stream; its events complete in order). */
static inline uint32_t algo_since(uint32_t now, uint32_t base)
{
    int32_t d = (int32_t)(now - base);
    return d > 0 ? (uint32_t)d : 0;
}

/* ---- algorithms ---- */
struct algo_cur {
    int t;               /* step */
    size_t f;            /* frame within the step's part */
    struct algo_range r; /* step t's part, and its frames (while t < T: set when t changes) */
    size_t nf;
};

struct algo_rlane { /* one (direction, wire) of the ring */
    int d, w, lane, speer, rpeer;
    uint32_t sbase, rbase;                     /* transport counters when the operation started */
    uint32_t nsend, nrecv, nsend0;             /* frames to send, to receive, sent at step 0 */
    uint32_t sent, posted, proc;               /* relative progress */
    struct algo_cur send_at, post_at, proc_at; /* next frame to send, to post, to process */
    int8_t slot_of[ALGO_POST_MAX]; /* receive j -> slot, at j % ALGO_POST_MAX (-1: direct) */
};

struct algo_ring_run {
    int T, nl;
    struct algo_buf acc; /* where partial sums live: the output (all-reduce) or scratch */
    struct algo_rlane l[ALGO_MAX_PARTS];
};

struct algo_mpeer {
    uint32_t sbase, rbase, nsend, nrecv, sent, posted;
    int8_t slot_of[ALGO_POST_MAX]; /* frame f -> staging slot, at f % ALGO_POST_MAX */
};

struct algo_mesh_run {
    struct algo_range red;          /* the range reduced here */
    size_t nred_frames, fold_frame; /* its frames; the frame being folded */
    int fold_rank;                  /* next rank to fold into frame fold_frame */
    struct algo_mpeer p[ALGO_MAX_RANKS];
};

struct algo_hstep {                /* one step of recursive halving-doubling */
    int peer, prev;                /* partner; the earlier step on the same stream (-1: none) */
    int reduces;                   /* what arrives is reduced (a reduce-scatter step) */
    struct algo_range s, r;        /* the ranges sent and received */
    uint32_t nsend, nrecv;         /* their frames */
    uint32_t sbase, rbase;         /* stream counters where this step's frames begin */
    uint32_t sent, posted, proc;   /* relative progress */
    int8_t slot_of[ALGO_POST_MAX]; /* receive j -> slot, at j % ALGO_POST_MAX (-1: direct) */
};

struct algo_rhd_run {
    int T, pt;           /* steps; the step whose receives are processed now */
    struct algo_buf acc; /* partial sums: the output (all-reduce) or scratch (reduce-scatter) */
    struct algo_hstep st[ALGO_RHD_MAX_STEPS];
};

struct algo_run {
    struct algo_op *op;
    int idx; /* run slot: which scratch and own buffer are this run's */
    union {
        struct algo_ring_run ring;
        struct algo_mesh_run mesh;
        struct algo_rhd_run rhd;
    };
};

/* choose.c: the algorithm for an operation, identical on every rank for the same call. */
struct algo_choice {
    /* The algorithms this group can run: a bit per algo_id whose peers (ops->talks) it is
     * connected to. The ring always is (its connections may go through relays). */
    unsigned usable;
    int force; /* ALGO_AUTO, or the algo_id NCCL_JACCL_ALGO names */
    size_t mesh_max_bytes;
    size_t rhd_min_bytes, rhd_max_bytes;
    int mesh_max_ranks;
    int wires;
    const struct algo_ring_order *ring; /* the ring's order (NULL: rank order) */
};
#define ALGO_BIT(a) (1u << (a))
void algo_choose(struct algo_op *op, const struct algo_choice *ch);
/* The algorithms a group of nranks with these settings may run at some size (a bit each): the
 * forced one where it fits, or what auto may pick (all-pairs algorithms only up to
 * mesh_max_ranks: the cap on a group's connections); the ring always, as everyone's fallback.
 * ch->usable is ignored: the caller connects what this asks for, where it can. */
unsigned algo_wanted(int nranks, const struct algo_choice *ch);
/* The algorithm NCCL_JACCL_ALGO's word names; ALGO_AUTO for "auto" or an unknown word. */
int algo_by_name(const char *name);
const char *algo_name(enum algo_id a);
const char *algo_kind_name(enum algo_kind k);
uint32_t algo_op_sig(const struct algo_op *op);

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
struct algo_ops {
    /* What it is, for the choice (choose.c), the connections and the logs: */
    const char *name; /* NCCL_JACCL_ALGO's word for it, and the logs' */
    /* 1 if ranks a and b of a group of nranks exchange data when it runs (ring order o): the
     * connections it needs, which the topology must carry without a relay (but the ring's). */
    int (*talks)(const struct algo_ring_order *o, int nranks, int a, int b);
    int all_pairs;           /* talks to every peer (for the group's connection cap) */
    int (*fits)(int nranks); /* can run a group of this size (when forced) */
    /* With NCCL_JACCL_ALGO=auto: how much it is wanted for g (0 not at all; the highest wins),
     * and whether it could be wanted at some size in a group of nranks. */
    int (*auto_rank)(const struct algo_geom *g, const struct algo_choice *ch);
    int (*auto_may)(int nranks, const struct algo_choice *ch);
    /* Sets the operation's frames and wires for it (NULL: nothing to set). */
    void (*shape)(struct algo_geom *g, const struct algo_choice *ch);
    /* What one operation of geometry g (shaped) costs each rank, for the tuner (algo/cost.h):
     * w->bytes is set; it fills the rest. */
    void (*work)(const struct algo_geom *g, struct algo_work *w);
    /* Running it: */
    int (*start)(struct algo_run *run, struct algo_xport *x);
    int (*post)(struct algo_run *run, struct algo_xport *x, int *progress);
    int (*posted_all)(const struct algo_run *run);
    int (*sent_all)(const struct algo_run *run);
    int (*arm)(struct algo_run *run, struct algo_xport *x);
    int (*advance)(struct algo_run *run, struct algo_xport *x, int *progress);
};
extern const struct algo_ops algo_ring_ops, algo_mesh_ops, algo_rhd_ops, algo_local_ops;
const struct algo_ops *algo_ops_of(enum algo_id a);

/* The local chunk into the output, unless it is already there (all-gather; with one rank, the
 * whole operation). */
void algo_copy_own(const struct algo_op *op);

#endif
