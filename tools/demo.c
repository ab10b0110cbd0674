/* SPDX-License-Identifier: BSD-3-Clause */
/* demo: a few local ranks load the plugin by its NCCL name ("jaccl", then
 * libnccl-net-jaccl.so) and pass data around a ring through its net table: every rank sends to
 * rank+1 and receives from rank-1 at the same time. Per size, a first pass checks every byte
 * (sizes, contents, order), then a second pass is timed without checking, and rank 0 prints
 * what the slowest rank measured.
 *
 *   demo [-n RANKS] [-V VERSION]      (default 4 ranks, ncclNetPlugin_v11) */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "mp.h"
#include "mp_perf.h"

#define WINDOW  4
#define CHECKED 4 /* messages per size in the checked pass */
#define V_TIME  0
#define V_BAD   1

static const size_t sizes[] = {4096, 256u << 10, 4u << 20, 16u << 20};
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))

static int msgs_for(size_t size)
{
    return size <= (256u << 10) ? 100 : 20;
}

static void intro(const struct mp_net *n, int nranks)
{
    ncclNetProperties_v12_t p;
    mp_net_props(n, n->dev, &p);
    printf("jaccl demo: %d ranks in a ring through ncclNetPlugin_v%d\n", nranks, n->version);
    printf("  loaded \"%s\" -> %s, device %d (%s)\n", n->name, n->path, n->dev,
           p.name ? p.name : "?");
    printf("  each rank sends to rank+1 and receives from rank-1 at once, %d requests in "
           "flight;\n  data: %d messages per size checked byte by byte, then the timed ones\n\n",
           WINDOW, CHECKED);
    printf("  %10s %6s %12s %12s %8s\n", "size", "msgs", "time_us/msg", "GB/s/rank", "data");
}

/* `count` messages each way around the ring; 0 when all went well (and checked, if asked). */
static int ring_pass(const struct mp_net *n, const struct mp_ring *r, char *sbuf, char *rbuf,
                     void *smh, void *rmh, size_t size, int count, int check)
{
    int rank = mp_rank, left = (rank + mp_sh->nranks - 1) % mp_sh->nranks;
    struct mp_flow f[2] = {
            {.net = n,
             .comm = r->rcomm,
             .count = count,
             .window = WINDOW,
             .base = rbuf,
             .stride = size + 4096,
             .mh = rmh,
             .size = size,
             .seed = (uint64_t)left << 32,
             .check = check,
             .tag = left},
            {.net = n,
             .comm = r->scomm,
             .is_send = 1,
             .count = count,
             .window = WINDOW,
             .base = sbuf,
             .stride = size + 4096,
             .mh = smh,
             .size = size,
             .seed = (uint64_t)rank << 32,
             .check = check,
             .tag = rank},
    };
    return mp_flows_run(f, 2, mp_scaled(60)) != 0 || f[0].bad;
}

/* One size around the ring; rank 0 prints the slowest rank's time. */
static void ring_size(const struct mp_net *n, const struct mp_ring *r, char *sbuf, char *rbuf,
                      void *smh, void *rmh, size_t size)
{
    int rank = mp_rank, nranks = mp_sh->nranks, count = msgs_for(size);
    mp_barrier();
    int bad = ring_pass(n, r, sbuf, rbuf, smh, rmh, size, CHECKED, 1);
    mp_barrier();
    double t0 = mp_now();
    bad |= ring_pass(n, r, sbuf, rbuf, smh, rmh, size, count, 0);
    mp_value_set(V_TIME, mp_now() - t0);
    mp_value_set(V_BAD, bad);
    mp_barrier();
    if (rank != 0)
        return;
    double worst = 0;
    bad = 0;
    for (int i = 0; i < nranks; i++) {
        double t = mp_value_get(i, V_TIME);
        worst = t > worst ? t : worst;
        bad += mp_value_get(i, V_BAD) != 0;
    }
    char b[16];
    printf("  %10s %6d %12.1f %12.3f %8s\n", mp_fmt_bytes(size, b, sizeof(b)), count,
           worst / count * 1e6, (double)size * count / worst / 1e9, bad ? "WRONG" : "ok");
}

static int demo_rank(int rank, int nranks, void *arg)
{
    struct mp_net n;
    struct mp_ring r;
    if (mp_net_open(&n, *(int *)arg) != 0 || mp_ring_connect(&n, 0, &r) != 0)
        return 1;
    size_t bytes = (size_t)WINDOW * (sizes[NSIZES - 1] + 4096);
    char *sbuf = mp_alloc(bytes), *rbuf = mp_alloc(bytes);
    void *smh = NULL, *rmh = NULL;
    MP_OK(mp_net_regmr(&n, r.scomm, sbuf, bytes, NCCL_PTR_HOST, &smh));
    MP_OK(mp_net_regmr(&n, r.rcomm, rbuf, bytes, NCCL_PTR_HOST, &rmh));
    if (rank == 0)
        intro(&n, nranks);
    for (int i = 0; i < NSIZES; i++)
        ring_size(&n, &r, sbuf, rbuf, smh, rmh, sizes[i]);
    mp_barrier();
    MP_OK(mp_net_deregmr(&n, r.scomm, smh));
    MP_OK(mp_net_deregmr(&n, r.rcomm, rmh));
    mp_ring_close(&n, &r);
    MP_OK(mp_net_fini(&n));
    mp_free(sbuf, bytes);
    mp_free(rbuf, bytes);
    return 0;
}

int main(int argc, char **argv)
{
    int nranks = 4, version = 11, c;
    while ((c = getopt(argc, argv, "n:V:")) != -1) {
        if (c == 'n')
            nranks = atoi(optarg);
        else if (c == 'V')
            version = atoi(optarg);
        else
            return 2;
    }
    if (nranks < 2 || nranks > MP_MAX_RANKS || version < 8 || version > 11) {
        fprintf(stderr, "usage: %s [-n 2..%d] [-V 8..11]\n", argv[0], MP_MAX_RANKS);
        return 2;
    }
    mp_begin("demo", "point-to-point ring through the net table", 0, NULL);
    return mp_end(
            mp_run("ring", "point-to-point ring", nranks, mp_scaled(120), demo_rank, &version));
}
