/* SPDX-License-Identifier: BSD-3-Clause */
/* CollNet test helpers (coll_harness.c, compiled once; the ranks, barrier, logger and checks
 * come from the p2p harness beside it).
 *
 * The plugin is reached only as NCCL reaches it: dlopen by name, dlsym ncclCollNetPlugin_v12, _v11
 * or _v8, then the table's calls. A group is built like NCCL's proxy builds it: every rank listens,
 * the handles are exchanged (through the shared region), every rank calls connect with the full
 * array. Data is chosen so that the reduction is exact in any order (small integers, powers of
 * two, integer wrap-around), which lets every algorithm be checked bit for bit against a
 * sequential rank-order reference computed with the same element-wise kernels. */
#ifndef MP_COLL_HARNESS_H
#define MP_COLL_HARNESS_H

#include <dlfcn.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "algo/kern_reduce.h"
#include "mp.h"
#include "nccl_abi/net.h"

#define CN_GUARD 64 /* guard bytes around every buffer: nothing may be written there */

struct cn {
    int version; /* 12, 11 or 8 */
    void *lib;
    const ncclCollNet_v12_t *v12;
    const ncclCollNet_v11_t *v11;
    const ncclCollNet_v8_t *v8;
    void *ctx;
    int dev;
    void *cc; /* the collComm */
    int nranks, rank;
};

/* ---- loading ---- */

int cn_load(struct cn *n, int version);

void cn_unload(struct cn *n);

/* ---- thin wrappers over the two table shapes ---- */

ncclResult_t cn_listen(struct cn *n, void *handle, void **lc);

ncclResult_t cn_connect(struct cn *n, void **handles, int nranks, int rank, void *lc, void **cc);

ncclResult_t cn_close_listen(struct cn *n, void *lc);

ncclResult_t cn_close(struct cn *n, void *cc);

ncclResult_t cn_regmr(struct cn *n, void *p, size_t len, void **mh);

ncclResult_t cn_deregmr(struct cn *n, void *mh);

/* finalize of the init context (v11, v12; nothing for v8), which is then gone: cn_unload
 * finalizes nothing more. */
ncclResult_t cn_finalize(struct cn *n);

ncclResult_t cn_test(struct cn *n, void *req, int *done, int *size);

ncclResult_t cn_allreduce(struct cn *n, void *s, void *r, size_t count, int type, int op, void *smh,
                          void *rmh, void **req);

ncclResult_t cn_allgather(struct cn *n, void *s, void *r, size_t rsize, void *rmh, size_t bpr,
                          size_t wo, size_t wb, void *smh, void **req);

ncclResult_t cn_reducescatter(struct cn *n, void *s, size_t ssize, void *smh, void *r, size_t bpr,
                              size_t wo, size_t wb, int type, int op, void *rmh, void **req);

/* Tests req until done, an error, or timeout_s; sleeps CN_POLL_SLEEP_US between tests unless
 * MP_POLL_SLEEP_US says otherwise (0: sched_yield(), as NCCL's proxy does: MP_POLL_SLEEP_US=0
 * runs the CollNet suites that way, and jaccl-coll-perf sets it by default). */
ncclResult_t cn_wait(struct cn *n, void *req, int timeout_s);
#define CN_POLL_SLEEP_US 20

/* ---- the group ---- */

/* The rank's CollNet configuration, set before the plugin is loaded: NCCL_JACCL_ALGO (unless
 * algo is NULL) and NCCL_JACCL_RING_WIRES (unless wires <= 0). */
void cn_config(const char *algo, int wires);

int cn_open_group(struct cn *n, int version, int rank, int nranks);

void cn_close_group(struct cn *n);

/* ---- buffers with guards ---- */

struct cn_buf {
    char *raw, *p;
    size_t len;
    void *mh;
};

int cn_buf_new(struct cn *n, struct cn_buf *b, size_t len);

int cn_buf_guards_ok(const struct cn_buf *b);

void cn_buf_free(struct cn *n, struct cn_buf *b);

/* ---- data that reduces exactly in any order ---- */

uint64_t cn_hash(uint64_t x);

/* Rank r's contribution for element i (absolute index in the operation's logical vector). */
void cn_fill(int type, int op, int r, uint64_t seed, void *dst, size_t first, size_t n);

/* Rank-order reference of elements [first, first + n): ((c0 op c1) op c2) ... */
void cn_reference(int type, int op, int nranks, uint64_t seed, void *out, size_t first, size_t n);

/* First differing element, or -1. */
long cn_diff(const void *a, const void *b, size_t n, size_t esz);

const char *cn_type_name(int t);

/* ---- one collective, checked ---- */

struct cn_case {
    int kind; /* 0 allreduce, 1 reducescatter, 2 allgather */
    int type, op;
    size_t count;  /* allreduce: elements; else elements per rank */
    size_t wo, wb; /* windows in elements (wb = SIZE_MAX: the whole buffer) */
    int in_place;
    uint64_t seed;
};

const char *cn_kind_name(int k);

/* Runs one case; a window of SIZE_MAX elements means the whole nranks * count buffer. */
int cn_run(struct cn *n, struct cn_case k);

#endif
