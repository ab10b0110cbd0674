/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p_regmr: registrations the way NCCL makes them, several sub-ranges of one allocation.
 *   - unaligned, adjacent and overlapping sub-ranges (and the whole) are registered on both
 *     the send and the receive comm, and each carries a message in both roles;
 *   - deregistering one range in any order leaves the overlapping ones working;
 *   - a buffer outside its registration is refused with an error and a WARN, and the comm
 *     keeps working; registering device memory (NCCL_PTR_CUDA) is refused, not crashed on. */
#include <string.h>

#include "mp.h"

#define TOTAL ((1u << 20) + 12288 + 13)

struct range {
    size_t off, len;
    const char *what;
};

static const struct range ranges[] = {
        {0, TOTAL, "the whole allocation"},
        {1, 4096, "[1, 4097): unaligned"},
        {4097, 4096, "[4097, 8193): adjacent to the previous"},
        {100, 300000, "[100, 300100): overlapping both"},
        {8193, 1u << 20, "[8193, +1 MiB): adjacent, large"},
        {5, 1, "[5, 6): one byte"},
        {3000, 2000, "[3000, 5000): across the boundary"},
};
#define NR ((int)(sizeof(ranges) / sizeof(ranges[0])))

/* Deregistration order per rank: the sender and the receiver drop ranges differently. */
static const int drop_order[2][NR] = {{3, 0, 6, 1, 5, 4, 2}, {2, 0, 1, 3, 4, 6, 5}};

/* Range r is still registered on `rank` after `step` deregistrations. */
static int alive(int rank, int r, int step)
{
    for (int k = 0; k < step; k++)
        if (drop_order[rank][k] == r)
            return 0;
    return 1;
}

/* One message per range registered on both sides: rank 0 sends it, rank 1 receives it. */
static void round_trip(const struct mp_net *n, int rank, void *comm, char *buf, void **mh, int step)
{
    for (int r = 0; r < NR; r++) {
        if (!alive(0, r, step) || !alive(1, r, step))
            continue;
        const struct range *g = &ranges[r];
        uint64_t seed = (uint64_t)(step * 100 + r);
        ncclResult_t rc;
        if (rank == 0) {
            mp_fill(buf + g->off, g->len, seed);
            rc = mp_send_wait(n, comm, buf + g->off, g->len, 0, mh[r], mp_scaled(10));
            MP_CHECK(rc == ncclSuccess, "step %d, send from %s: %s", step, g->what,
                     mp_result_str(rc));
            continue;
        }
        int got = -1;
        memset(buf + g->off, 0, g->len);
        rc = mp_recv_wait(n, comm, buf + g->off, g->len, 0, mh[r], &got, mp_scaled(10));
        MP_CHECK(rc == ncclSuccess && (size_t)got == g->len, "step %d, recv into %s: %s, %d bytes",
                 step, g->what, mp_result_str(rc), got);
        MP_CHECK(mp_verify(buf + g->off, g->len, seed) == (size_t)-1,
                 "step %d, recv into %s: wrong content", step, g->what);
    }
}

/* Misuse that NCCL never commits, but that must not bring the process down. */
static void misuse(const struct mp_net *n, int rank, void *comm, char *buf, void **mh)
{
    void *cuda_mh = NULL;
    ncclResult_t rc = mp_net_regmr(n, comm, buf, 4096, NCCL_PTR_CUDA, &cuda_mh);
    MP_CHECK(rc != ncclSuccess, "regMr of NCCL_PTR_CUDA memory succeeded on a host plugin");
    if (rc == ncclSuccess)
        MP_OK(mp_net_deregmr(n, comm, cuda_mh));
    if (rank != 0)
        return;
    unsigned mark = mp_log_mark();
    void *req = NULL;
    /* Range 5 is one byte at offset 5; a 4 KiB buffer at offset 5 is mostly outside it. */
    rc = mp_net_isend(n, comm, buf + ranges[5].off, 4096, 0, mh[5], &req);
    MP_CHECK(rc != ncclSuccess && req == NULL,
             "isend of 4096 bytes with a 1-byte registration: %s, request %p", mp_result_str(rc),
             req);
    MP_CHECK(mp_warns_since(mark) > 0, "isend outside its registration logged no WARN");
}

static int regmr_rank(int rank, int nranks, void *arg)
{
    struct mp_net n;
    if (mp_net_open(&n, 11) != 0)
        return 1;
    void *l = NULL, *comm = NULL, *mh[NR];
    char h[NCCL_NET_HANDLE_MAXSIZE];
    if (rank == 1 && mp_listen_publish(&n, 0, &l) != 0)
        return 1;
    mp_barrier();
    memcpy(h, mp_peer_handle(1, 0), sizeof(h));
    if (mp_connect_accept(&n, h, rank == 0 ? &comm : NULL, l, rank == 1 ? &comm : NULL,
                          mp_scaled(20)) != 0)
        return 1;
    if (l)
        MP_OK(mp_net_close_listen(&n, l));
    char *buf = mp_alloc(TOTAL);
    for (int r = 0; r < NR; r++)
        MP_OK(mp_net_regmr(&n, comm, buf + ranges[r].off, ranges[r].len, NCCL_PTR_HOST, &mh[r]));
    if (rank == 0)
        mp_note("%d overlapping/adjacent/unaligned ranges of one allocation, dropped one by one",
                NR);
    misuse(&n, rank, comm, buf, mh);
    for (int step = 0; step < NR && mp_failures() == 0; step++) {
        round_trip(&n, rank, comm, buf, mh, step);
        MP_OK(mp_net_deregmr(&n, comm, mh[drop_order[rank][step]]));
        mp_barrier(); /* both sides drop before the next round uses what is left */
    }
    MP_OK(rank == 0 ? mp_net_close_send(&n, comm) : mp_net_close_recv(&n, comm));
    MP_OK(mp_net_fini(&n));
    mp_free(buf, TOTAL);
    return 0;
}

int main(int argc, char **argv)
{
    mp_begin("p2p_regmr", "sub-range registrations: use, deregister in any order, misuse", argc,
             argv);
    return mp_end(mp_run("sub-ranges", "ncclNetPlugin_v11", 2, mp_scaled(60), regmr_rank, NULL));
}
