/* SPDX-License-Identifier: BSD-3-Clause */
/* rdma_p2p: point-to-point through the plugin's net table on real verbs devices, one rank per
 * device so every byte crosses the wire (run inside the rxe VM by tests/rdma/suite.sh).
 *
 *   rdma_p2p check      both directions at once, sizes 0 .. 4 MiB, every byte verified
 *   rdma_p2p loss       the same under packet loss: each run must either complete with every
 *                       byte right (retransmitted) or fail with an error before the deadline;
 *                       prints which. A wrong byte or a hang fails.
 *   rdma_p2p bench SIZE...   one direction, rank 0 -> rank 1: MB/s per size ("jaccl SIZE MBPS"),
 *                       RDMA_WINDOW (default 8) requests in flight
 *
 * Rank r uses NCCL_JACCL_HCA from JACCL_RDMA_HCA_<r> (default "=rxe<r>") and
 * NCCL_JACCL_FABRIC=verbs unless the environment says otherwise. RDMA_TIMEOUT (s, default 120)
 * bounds each run, RDMA_COUNT the messages per direction, RDMA_ITERS the benchmark's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp.h"
#include "mp_perf.h"

#define MAX_SIZE (4u << 20)
#define STRIDE   (MAX_SIZE + 4096)
#define WINDOW   4

static const size_t sizes[] = {0, 1, 4093, 65539, 1u << 20, MAX_SIZE, 40, 16384};
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))

struct job {
    const char *mode;
    size_t bench_size;
    int timeout_s;
};

static size_t size_of(int i, void *arg)
{
    return sizes[i % NSIZES];
}

static void rank_env(int rank)
{
    char name[64], def[32];

    snprintf(name, sizeof(name), "JACCL_RDMA_HCA_%d", rank);
    snprintf(def, sizeof(def), "=rxe%d", rank);
    setenv("NCCL_JACCL_HCA", getenv(name) ? getenv(name) : def, 1);
    setenv("NCCL_JACCL_FABRIC", "verbs", 0);
}

static void flow_init(struct mp_flow *f, const struct mp_net *n, void *comm, int is_send, char *buf,
                      void *mh, int count)
{
    memset(f, 0, sizeof(*f));
    f->net = n;
    f->comm = comm;
    f->is_send = is_send;
    f->count = count;
    f->window = WINDOW;
    f->base = buf;
    f->stride = STRIDE;
    f->mh = mh;
    f->size_fn = size_of;
    f->seed = is_send ? 1000u * (unsigned)mp_rank : 1000u * (unsigned)(1 - mp_rank);
    f->check = 1;
}

/* Both directions at once; returns 0 when everything arrived intact. In loss mode a clean
 * error (no wrong byte, before the deadline) is an accepted outcome, and reported as such. */
static int run_both(const struct mp_net *n, const struct mp_ring *r, const struct job *j)
{
    size_t len = (size_t)WINDOW * STRIDE;
    char *sb = mp_alloc(len), *rb = mp_alloc(len);
    void *smh = NULL, *rmh = NULL;
    struct mp_flow f[2];
    int count = (int)mp_env_long("RDMA_COUNT", 3 * NSIZES), rc;
    double t0;

    if (!MP_OK(mp_net_regmr(n, r->scomm, sb, len, NCCL_PTR_HOST, &smh)) ||
        !MP_OK(mp_net_regmr(n, r->rcomm, rb, len, NCCL_PTR_HOST, &rmh)))
        return -1;
    flow_init(&f[0], n, r->scomm, 1, sb, smh, count);
    flow_init(&f[1], n, r->rcomm, 0, rb, rmh, count);
    t0 = mp_now();
    rc = mp_flows_run(f, 2, j->timeout_s);
    MP_CHECK(f[1].bad == 0, "%d receives had a wrong size or wrong bytes", f[1].bad);
    if (rc == 0)
        mp_note("%s: %d messages each way intact in %.1f s", j->mode, count, mp_now() - t0);
    else if (strcmp(j->mode, "loss") == 0 && f[1].bad == 0 && mp_now() - t0 < j->timeout_s &&
             (f[0].err != ncclSuccess || f[1].err != ncclSuccess))
        mp_note("loss: failed cleanly after %.1f s (send %s, recv %s), no wrong byte",
                mp_now() - t0, mp_result_str(f[0].err), mp_result_str(f[1].err));
    else
        MP_CHECK(0, "%s: transfer did not complete (send %s, recv %s, %d/%d received)", j->mode,
                 mp_result_str(f[0].err), mp_result_str(f[1].err), f[1].done, count);
    mp_barrier();
    if (rc == 0) {
        mp_net_deregmr(n, r->scomm, smh);
        mp_net_deregmr(n, r->rcomm, rmh);
    }
    return 0;
}

/* One direction, RDMA_WINDOW requests in flight (default 8, NCCL's NCCL_NET_MAX_REQUESTS):
 * bytes per second at the receiver. */
static void bench(const struct mp_net *n, const struct mp_ring *r, size_t size)
{
    int window = (int)mp_env_long("RDMA_WINDOW", 8);
    size_t len = (size_t)window * (size + 4096);
    char *b = mp_alloc(len);
    void *comm = mp_rank == 0 ? r->scomm : r->rcomm, *mh = NULL;
    int iters = (int)mp_env_long("RDMA_ITERS", size >= (1u << 20) ? 32 : 256);
    struct mp_flow f;
    double t0, dt;

    if (!MP_OK(mp_net_regmr(n, comm, b, len, NCCL_PTR_HOST, &mh)))
        return;
    memset(&f, 0, sizeof(f));
    f.net = n;
    f.comm = comm;
    f.is_send = mp_rank == 0;
    f.window = window;
    f.base = b;
    f.stride = size + 4096;
    f.mh = mh;
    f.size = size;
    f.count = 4; /* warm-up */
    mp_barrier();
    MP_CHECK(mp_flows_run(&f, 1, 120) == 0, "bench warm-up failed");
    f.count = iters;
    f.posted = f.done = 0;
    mp_barrier();
    t0 = mp_now();
    MP_CHECK(mp_flows_run(&f, 1, 300) == 0, "bench of %zu bytes failed", size);
    dt = mp_now() - t0;
    if (mp_rank == 1)
        printf("jaccl %zu %.2f\n", size, (double)size * iters / dt / 1e6);
    mp_barrier();
    mp_net_deregmr(n, comm, mh);
    mp_free(b, len);
}

static int rank_main(int rank, int nranks, void *arg)
{
    const struct job *j = arg;
    struct mp_net n;
    struct mp_ring r;

    rank_env(rank);
    if (mp_net_open(&n, 11) != 0 || mp_ring_connect(&n, 0, &r) != 0)
        return 1;
    if (strcmp(j->mode, "bench") == 0)
        bench(&n, &r, j->bench_size);
    else
        run_both(&n, &r, j);
    mp_ring_close(&n, &r);
    mp_net_fini(&n);
    return 0;
}

int main(int argc, char **argv)
{
    struct job j = {.mode = argc > 1 ? argv[1] : "check",
                    .timeout_s = (int)mp_env_long("RDMA_TIMEOUT", 120)};
    int failed = 0;

    mp_begin("rdma_p2p", "point-to-point over verbs, one rank per device", 0, NULL);
    if (strcmp(j.mode, "bench") == 0) {
        for (int i = 2; i < argc; i++) {
            char name[48];
            j.bench_size = (size_t)strtoull(argv[i], NULL, 0);
            snprintf(name, sizeof(name), "bench-%zu", j.bench_size);
            failed +=
                    mp_run(name, "benchmark beside perftest", 2, j.timeout_s + 420, rank_main, &j);
        }
    } else {
        failed += mp_run(j.mode, j.mode, 2, j.timeout_s + 30, rank_main, &j);
    }
    return mp_end(failed);
}
