/* SPDX-License-Identifier: BSD-3-Clause */
/* The one place that answers "which bytes go where at step k" for every collective.
 *
 * Every operation is described in a *logical* byte space:
 *   all-reduce       [0, count*esz): the whole vector, split into nranks balanced chunks;
 *   reduce-scatter   the window [wo, wo+wb) of the nranks*bpr input; chunk c = window ∩ segment c;
 *   all-gather       the window [wo, wo+wb) of the nranks*bpr output; chunk c = window ∩ segment c.
 * The core maps logical offsets to the caller's buffers; this module never sees a pointer.
 *
 * Ring: chunk c is cut into `nparts` = ndirs * nwires element-aligned parts; part (d, w) travels
 * in direction d (0: to rank+1, 1: to rank-1) on wire w. Each part is moved in frames of
 * `frame` bytes. Reduce-scatter steps, then all-gather steps, rotate chunks so that rank r ends
 * the reduce-scatter owning chunk r and starts the all-gather with it:
 *   reduce-scatter step s, direction 0: send chunk r-1-s, receive chunk r-2-s (direction 1: +)
 *   all-gather     step s, direction 0: send chunk r-s,   receive chunk r-1-s
 * so what a rank sends at step t+1 is exactly what it received at step t, frame for frame.
 *
 * Mesh: every rank exchanges with every peer directly; see algo_mesh_send / algo_mesh_recv.
 *
 * Recursive halving-doubling (power-of-two nranks = 2^k): the reduce-scatter takes k steps; at
 * step s rank r pairs with r ^ (n >> (s+1)), keeps the half of its current block of chunks that
 * holds chunk r and sends the other half, so it ends owning chunk r, as after the ring. The
 * all-gather walks back: at step j rank r sends the aligned block of 2^j chunks it holds to
 * r ^ 2^j and receives that rank's block. Blocks are runs of consecutive chunks, so each step
 * moves one contiguous logical range each way. */
#ifndef JACCL_ALGO_CHUNKS_H
#define JACCL_ALGO_CHUNKS_H

#include <stddef.h>
#include <stdint.h>

#define ALGO_MAX_RANKS    256
#define ALGO_MAX_WIRES    4
#define ALGO_MAX_PARTS    (2 * ALGO_MAX_WIRES)
#define ALGO_FRAME_MIN    4096u
#define ALGO_FRAME_MAX    (512u * 1024u)
#define ALGO_MIN_SLICE    (256u * 1024u) /* a ring part smaller than this is not split further */
#define ALGO_FRAMES_SLICE 1              /* frame = largest class not above part / this */

enum algo_kind { ALGO_ALLREDUCE = 0, ALGO_REDUCESCATTER = 1, ALGO_ALLGATHER = 2 };

struct algo_range {
    size_t lo, len;
};

/* The ring's order: which rank stands at each position. On machines joined by cables the ring
 * follows them (core/coll_topo.c), so position order need not be rank order; chunks stay named
 * by rank (chunk r is rank r's part of the result), so results land where NCCL expects them
 * whatever the order. */
struct algo_ring_order {
    int16_t rank_at[ALGO_MAX_RANKS]; /* position -> rank */
    int16_t pos_of[ALGO_MAX_RANKS];  /* rank -> position */
};
/* Fills o from rank_at[0 .. n) (a permutation of 0 .. n-1; the caller checked). */
void algo_ring_order_set(struct algo_ring_order *o, const int16_t *rank_at, int n);

struct algo_geom {
    enum algo_kind kind;
    int nranks, rank;
    size_t esz;                          /* element size; 1 for all-gather */
    size_t count;                        /* all-reduce: elements */
    size_t bpr;                          /* reduce-scatter / all-gather: bytes per rank */
    size_t wo, wb;                       /* window: offset and length in the logical space */
    int ndirs, nwires;                   /* ring parts in use (1..2, 1..ALGO_MAX_WIRES) */
    size_t frame;                        /* bytes per frame, a multiple of esz */
    const struct algo_ring_order *order; /* the ring's; NULL: rank order */
};

/* ---- shape ---- */
void algo_geom_allreduce(struct algo_geom *g, int nranks, int rank, size_t count, size_t esz);
void algo_geom_window(struct algo_geom *g, enum algo_kind kind, int nranks, int rank, size_t esz,
                      size_t bpr, size_t wo, size_t wb);
/* Bytes the operation covers (all-reduce: the vector, else the window). */
size_t algo_total(const struct algo_geom *g);
/* Chooses directions, wires (at most `wires`) and frame size for the ring. */
void algo_geom_ring_shape(struct algo_geom *g, int wires);
/* Chooses the frame size for the mesh. */
void algo_geom_mesh_shape(struct algo_geom *g);
/* Largest power-of-two frame in [ALGO_FRAME_MIN, ALGO_FRAME_MAX] not above bytes / target. */
size_t algo_frame_class(size_t bytes, size_t target);

/* ---- chunks, parts, frames (logical byte ranges) ---- */
void algo_chunk(const struct algo_geom *g, int c, struct algo_range *out);
size_t algo_chunk_max(const struct algo_geom *g);
void algo_part(const struct algo_geom *g, int c, int d, int w, struct algo_range *out);
size_t algo_nframes(const struct algo_geom *g, const struct algo_range *r);
void algo_frame(const struct algo_geom *g, const struct algo_range *r, size_t f,
                struct algo_range *out);

/* ---- ring schedule ---- */
int algo_ring_steps(const struct algo_geom *g);
/* Chunk sent (recv = 0) or received (recv = 1) at step t in direction d. */
int algo_ring_chunk(const struct algo_geom *g, int t, int d, int recv);
/* Rank sent to (recv = 0) or received from (recv = 1) in direction d. */
int algo_ring_peer(const struct algo_geom *g, int d, int recv);
/* The same for `rank` of `nranks` in ring order o (NULL: rank order): direction 0 sends to the
 * next position, direction 1 to the one before. */
int algo_ring_neighbour(const struct algo_ring_order *o, int rank, int nranks, int d, int recv);
/* The transport lane that carries ring direction d on wire w, with `wires` wires. */
static inline int algo_ring_lane(int wires, int d, int w)
{
    return d * wires + w;
}
/* 1 if what arrives at step t is reduced with the local input (a reduce-scatter step). */
int algo_ring_reduces(const struct algo_geom *g, int t);
/* 1 if step t is the last reduce-scatter step: what arrives is final for chunk `rank`. */
int algo_ring_final(const struct algo_geom *g, int t);
/* The part of the chunk of step t for (d, w): the byte range that lane carries at that step. */
void algo_ring_part(const struct algo_geom *g, int t, int d, int w, int recv,
                    struct algo_range *out);

/* ---- recursive halving-doubling schedule ---- */
/* 1 if n is a power of two (>= 1). */
int algo_pow2(int n);
int algo_rhd_steps(const struct algo_geom *g);
/* Step t: the partner, the ranges sent and received; 1 if what arrives is reduced. */
int algo_rhd_step(const struct algo_geom *g, int t, int *peer, struct algo_range *send,
                  struct algo_range *recv);
/* Chooses the frame size for recursive halving-doubling. */
void algo_geom_rhd_shape(struct algo_geom *g);

/* ---- mesh schedule ---- */
/* What this rank sends to / receives from `peer`. */
void algo_mesh_send(const struct algo_geom *g, int peer, struct algo_range *out);
void algo_mesh_recv(const struct algo_geom *g, int peer, struct algo_range *out);
/* The range this rank reduces (all-reduce: everything; reduce-scatter: its chunk). */
void algo_mesh_reduced(const struct algo_geom *g, struct algo_range *out);

#endif
