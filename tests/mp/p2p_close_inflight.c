/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p_close_inflight: tearing down the way NCCL's abort path and communicator destruction do
 * (sendProxyFree / recvProxyFree: deregMr of each buffer, then closeSend / closeRecv, then the
 * buffers are freed).
 *   - deregMr + closeSend with isends in flight return ncclSuccess promptly, and the plugin
 *     never touches the buffers afterwards (they are unmapped at once, so it would crash);
 *     the receiver gets an error (or completions), never a hang, and tears down the same way
 *     with its requests pending;
 *   - the same with closeRecv first;
 *   - after the last finalize no plugin thread is left (counted in /proc/self/task);
 *   - v11 init/finalize are refcounted: three ctxs, the plugin keeps working after one is
 *     finalized, finalize(NULL) is harmless, the library can be dlclosed after the last
 *     finalize and loaded and used again (NCCL does that for its next communicator). */
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "mp.h"

#define MSG     (16u << 20)
#define NMSG    8
#define LOOPMSG 300000

/* ---- closing with requests in flight (2 ranks; `closer` closes first) ---- */

static void *link_0_to_1(const struct mp_net *n, int rank)
{
    void *l = NULL, *c = NULL;
    char h[NCCL_NET_HANDLE_MAXSIZE];
    if (rank == 1 && mp_listen_publish(n, 0, &l) != 0)
        return NULL;
    mp_barrier();
    memcpy(h, mp_peer_handle(1, 0), sizeof(h));
    mp_connect_accept(n, h, rank == 0 ? &c : NULL, l, rank == 1 ? &c : NULL, mp_scaled(20));
    if (l)
        MP_OK(mp_net_close_listen(n, l));
    return c;
}

/* NCCL's order: deregister, close, free. Unmapping right after the close turns any later
 * access by the plugin into a crash of this rank. */
static double teardown(const struct mp_net *n, int rank, struct mp_flow *f, size_t bytes)
{
    double t0 = mp_now();
    MP_OK(mp_net_deregmr(n, f->comm, f->mh));
    MP_OK(rank == 0 ? mp_net_close_send(n, f->comm) : mp_net_close_recv(n, f->comm));
    double took = mp_now() - t0;
    mp_free(f->base, bytes);
    return took;
}

/* Posts everything, waits for the first completion, then tears down with the rest in flight. */
static void close_early(const struct mp_net *n, int rank, struct mp_flow *f, size_t bytes)
{
    while (mp_flow_step(f) == 0 && f->done < 1)
        sched_yield();
    MP_CHECK(f->err == ncclSuccess, "before the close: %s", mp_result_str(f->err));
    int inflight = f->posted - f->done;
    double took = teardown(n, rank, f, bytes);
    MP_CHECK(took < mp_scaled_s(2.1), "deregMr + close with %d requests in flight took %.2f s",
             inflight, took);
    mp_note("%s comm: deregMr + close with %d request(s) in flight took %.3f s",
            rank == 0 ? "send" : "recv", inflight, took);
}

/* The other side: every request either completes or fails; then tears down the rest. */
static void outlive(const struct mp_net *n, int rank, struct mp_flow *f, size_t bytes)
{
    double limit = (double)mp_env_long("NCCL_JACCL_TIMEOUT", 30) + 5, t0 = mp_now();
    int r;
    while ((r = mp_flow_step(f)) == 0 && mp_now() - t0 < limit)
        sched_yield();
    MP_CHECK(r != 0, "peer closed, yet %d of %d requests still pending after %.0f s",
             f->posted - f->done, NMSG, limit);
    mp_note("peer's close seen: %d of %d done, then %s after %.2f s", f->done, NMSG,
            mp_result_str(f->err), mp_now() - t0);
    teardown(n, rank, f, bytes);
}

static int close_rank(int rank, int nranks, void *arg)
{
    int closer = *(int *)arg, threads0 = mp_thread_count();
    struct mp_net n;
    if (mp_net_open(&n, 11) != 0)
        return 1;
    void *c = link_0_to_1(&n, rank), *mh = NULL;
    size_t bytes = (size_t)NMSG * MSG;
    char *buf = mp_alloc(bytes);
    if (!c)
        return 1;
    MP_OK(mp_net_regmr(&n, c, buf, bytes, NCCL_PTR_HOST, &mh));
    struct mp_flow f = {.net = &n,
                        .comm = c,
                        .is_send = rank == 0,
                        .count = NMSG,
                        .window = NMSG,
                        .base = buf,
                        .stride = MSG,
                        .mh = mh,
                        .size = MSG};
    mp_barrier();
    if (rank == closer)
        close_early(&n, rank, &f, bytes);
    else
        outlive(&n, rank, &f, bytes);
    MP_OK(mp_net_fini(&n));
    int threads = mp_threads_down_to(threads0);
    MP_CHECK(threads == threads0, "%d thread(s) before init, %d after the last finalize", threads0,
             threads);
    mp_net_unload(&n);
    return 0;
}

/* ---- init / finalize / dlclose cycles (1 rank, connections to itself) ---- */

static void loopback(struct mp_net *n, void *ctx, uint64_t seed)
{
    void *l = NULL, *s = NULL, *r = NULL, *smh = NULL, *rmh = NULL;
    char h[NCCL_NET_HANDLE_MAXSIZE];
    char *buf = mp_alloc(2 * LOOPMSG);
    n->ctx = ctx;
    if (!MP_OK(mp_net_listen(n, n->dev, h, &l)) ||
        mp_connect_accept(n, h, &s, l, &r, mp_scaled(20)) != 0)
        return;
    MP_OK(mp_net_close_listen(n, l));
    MP_OK(mp_net_regmr(n, s, buf, LOOPMSG, NCCL_PTR_HOST, &smh));
    MP_OK(mp_net_regmr(n, r, buf + LOOPMSG, LOOPMSG, NCCL_PTR_HOST, &rmh));
    mp_fill(buf, LOOPMSG, seed);
    struct mp_flow f[2] = {
            {.net = n,
             .comm = r,
             .count = 1,
             .window = 1,
             .base = buf + LOOPMSG,
             .stride = LOOPMSG,
             .mh = rmh,
             .size = LOOPMSG},
            {.net = n,
             .comm = s,
             .is_send = 1,
             .count = 1,
             .window = 1,
             .base = buf,
             .stride = LOOPMSG,
             .mh = smh,
             .size = LOOPMSG},
    };
    MP_CHECK(mp_flows_run(f, 2, mp_scaled(20)) == 0, "loopback transfer failed");
    MP_CHECK(mp_verify(buf + LOOPMSG, LOOPMSG, seed) == (size_t)-1, "loopback data wrong");
    MP_OK(mp_net_deregmr(n, s, smh));
    MP_OK(mp_net_deregmr(n, r, rmh));
    MP_OK(mp_net_close_send(n, s));
    MP_OK(mp_net_close_recv(n, r));
    mp_free(buf, 2 * LOOPMSG);
}

static void three_ctx_cycle(struct mp_net *n)
{
    void *ctx[3] = {NULL, NULL, NULL};
    MP_OK(mp_net_finalize_ctx(n, NULL)); /* NCCL does this after a failed init */
    for (int i = 0; i < 3; i++) {
        MP_OK(mp_net_init_ctx(n, 1000 + (uint64_t)i, &ctx[i]));
        MP_CHECK(ctx[i] != NULL, "init %d returned no ctx", i);
    }
    int ndev = 0;
    MP_OK(mp_net_devices(n, &ndev));
    MP_CHECK(ndev > 0, "%d devices with 3 ctxs", ndev);
    loopback(n, ctx[1], 1);
    MP_OK(mp_net_finalize_ctx(n, ctx[0]));
    loopback(n, ctx[2], 2); /* two references left: still fully working */
    MP_OK(mp_net_finalize_ctx(n, ctx[2]));
    MP_OK(mp_net_finalize_ctx(n, ctx[1]));
    MP_OK(mp_net_finalize_ctx(n, NULL));
    n->ctx = NULL;
}

static int cycles_rank(int rank, int nranks, void *arg)
{
    int threads0 = mp_thread_count();
    for (int round = 0; round < 2; round++) {
        struct mp_net n;
        if (mp_net_load(&n, 11) != 0)
            return 1;
        char path[sizeof(n.path)];
        memcpy(path, n.path, sizeof(path));
        /* mp_net_init picks the device; these extra ctxs come on top of it. */
        if (!MP_OK(mp_net_init(&n)))
            return 1;
        void *first = n.ctx;
        three_ctx_cycle(&n);
        MP_OK(mp_net_finalize_ctx(&n, first));
        int threads = mp_threads_down_to(threads0);
        MP_CHECK(threads == threads0,
                 "round %d: %d thread(s) before init, %d after the last "
                 "finalize",
                 round, threads0, threads);
        MP_CHECK(dlclose(n.lib) == 0, "dlclose failed: %s", dlerror());
        void *still = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
        /* Only a note: the library is linked -z nodelete on purpose, so it stays mapped. */
        mp_note("round %d: 4 init, 4 finalize + finalize(NULL); %d threads left; library %s "
                "after dlclose",
                round, threads - threads0, still ? "still mapped (nodelete)" : "unmapped");
        if (still)
            dlclose(still);
    }
    return 0;
}

int main(int argc, char **argv)
{
    static int closer[] = {0, 1};
    int failed = 0;
    mp_begin("p2p_close_inflight", "closing comms with requests in flight; init/fini cycles", argc,
             argv);
    failed += mp_run("close-send", "closeSend with 16 MiB isends in flight", 2, mp_scaled(60),
                     close_rank, &closer[0]);
    failed += mp_run("close-recv", "closeRecv with 16 MiB irecvs in flight", 2, mp_scaled(60),
                     close_rank, &closer[1]);
    failed += mp_run("init-cycles", "v11 init x4, finalize x4 + NULL, dlclose, reload", 1,
                     mp_scaled(60), cycles_rank, NULL);
    return mp_end(failed);
}
