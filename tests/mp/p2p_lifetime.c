/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p_lifetime: load and leaks, through the ABI like NCCL.
 *   - 64 comm pairs between two ranks, 32 requests in flight on each, both ways at once;
 *   - 10,000 p2p connect/close cycles, 1,000 CollNet group create/destroy cycles (2 ranks) and
 *     1,000 init/finalize cycles, each while another init context stays open (so the
 *     refcounted state is never torn down): open file descriptors and threads must be the same
 *     after the cycles as before them, and memory may grow by at most RSS_BOUND (allocator
 *     noise; a comm kept after its close costs ~11 KB, so 10,000 of them would show).
 * Memory is the RSS, except in an ASan build, whose allocator keeps freed memory in quarantine
 * (RSS grows by design): there it is the heap bytes the allocator counts as live. There also
 * JACCL_TEST_SAN=1 divides the cycle counts by 10 and uses 16 comm pairs (sanitized code is
 * several times slower). Every wait sleeps (50 us) between tries instead of spinning. The
 * figures are in docs/reliability.md. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coll_harness.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SAN_HEAP 1
/* The sanitizer runtime's own count of live heap bytes (its header is not always installed):
 * RSS means nothing there, as ASan's quarantine and TSan's shadow memory grow by design. */
size_t __sanitizer_get_current_allocated_bytes(void);
#define MEM_WHAT "live heap"
#else
#define MEM_WHAT "RSS"
#endif

#define PAIRS     64
#define REQS      32
#define MSG       4096
#define RSS_BOUND (2u << 20) /* bytes */

static int san(void)
{
    return mp_env_long("JACCL_TEST_SAN", 0) == 1;
}

static int scaled_count(int n)
{
    return san() ? n / 10 : n;
}

static void nap(void)
{
    nanosleep(&(struct timespec){0, 50000}, NULL);
}

/* ---- what a cycle must give back ---- */

struct usage {
    int fds, threads;
    long mem; /* bytes: RSS, or live heap under a sanitizer */
};

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n - 1; /* the one opendir holds */
}

static long mem_bytes(void)
{
#if defined(SAN_HEAP)
    return (long)__sanitizer_get_current_allocated_bytes();
#endif
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f && fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = 0;
    if (f)
        fclose(f);
    return resident * sysconf(_SC_PAGESIZE);
}

static struct usage usage_now(void)
{
    int threads = mp_thread_count(); /* after the reaper left: its sockets are closed */
    return (struct usage){count_fds(), threads, mem_bytes()};
}

/* The same after the cycles: threads counted once down to `before`'s (those just joined may
 * still be exiting). */
static struct usage usage_after(struct usage before)
{
    int threads = mp_threads_down_to(before.threads);
    return (struct usage){count_fds(), threads, mem_bytes()};
}

/* Prints the figures and checks them flat. */
static int usage_flat(const char *what, int cycles, struct usage a, struct usage b)
{
    long grow = b.mem - a.mem;
    mp_note("%s: %d cycles: fds %d -> %d, threads %d -> %d, %s %ld -> %ld KiB (%+ld B/cycle)", what,
            cycles, a.fds, b.fds, a.threads, b.threads, MEM_WHAT, a.mem >> 10, b.mem >> 10,
            grow / (cycles ? cycles : 1));
    int ok = MP_CHECK(a.fds == b.fds, "%s: %d fds before, %d after", what, a.fds, b.fds);
    ok &= MP_CHECK(a.threads == b.threads, "%s: %d threads before, %d after", what, a.threads,
                   b.threads);
    return ok & MP_CHECK(grow <= (long)RSS_BOUND, "%s: %s grew by %ld KiB (bound %u KiB)", what,
                         MEM_WHAT, grow >> 10, RSS_BOUND >> 10);
}

/* ---- p2p set-up without spinning ---- */

/* Connects `ns` send comms to `handle` and accepts `nr` recv comms on lc, one at a time each,
 * both at once (the peer does the mirror image). 0 on success. */
static int link_many(const struct mp_net *n, void *handle, void **sc, int ns, void *lc, void **rc,
                     int nr)
{
    int s = 0, r = 0;
    double deadline = mp_now() + mp_scaled(60);
    while (s < ns || r < nr) {
        int moved = 0;
        if (s < ns) {
            sc[s] = NULL;
            if (!MP_OK(mp_net_connect(n, n->dev, handle, &sc[s])))
                return -1;
            moved += sc[s] != NULL;
            s += sc[s] != NULL;
        }
        if (r < nr) {
            rc[r] = NULL;
            if (!MP_OK(mp_net_accept(n, lc, &rc[r])))
                return -1;
            moved += rc[r] != NULL;
            r += rc[r] != NULL;
        }
        if (!MP_CHECK(mp_now() < deadline, "set-up: %d of %d connects, %d of %d accepts", s, ns, r,
                      nr))
            return -1;
        if (!moved)
            nap();
    }
    return 0;
}

/* ---- 64 comm pairs, 32 requests each in flight both ways ---- */

struct side {
    void *comm, *mh;
    char *buf;
};

static int side_open(const struct mp_net *n, struct side *x, void *comm)
{
    x->comm = comm;
    x->buf = mp_alloc((size_t)REQS * 2 * MSG);
    return MP_OK(mp_net_regmr(n, comm, x->buf, (size_t)REQS * 2 * MSG, NCCL_PTR_HOST, &x->mh)) ? 0
                                                                                               : -1;
}

static void side_close(const struct mp_net *n, struct side *x, int is_send)
{
    MP_OK(mp_net_deregmr(n, x->comm, x->mh));
    MP_OK(is_send ? mp_net_close_send(n, x->comm) : mp_net_close_recv(n, x->comm));
    mp_free(x->buf, (size_t)REQS * 2 * MSG);
}

static struct mp_flow flow_of(const struct mp_net *n, struct side *x, int is_send)
{
    return (struct mp_flow){.net = n,
                            .comm = x->comm,
                            .is_send = is_send,
                            .count = REQS,
                            .window = REQS,
                            .base = x->buf,
                            .stride = 2 * MSG,
                            .mh = x->mh,
                            .size = MSG,
                            .seed = 77,
                            .check = 1,
                            .tag = 9};
}

static int pairs_rank(int rank, int nranks, void *arg)
{
    int pairs = san() ? 16 : PAIRS;
    setenv("MP_POLL_SLEEP_US", "50", 1); /* mp_flows_run sleeps between rounds */
    struct mp_net n;
    void *lc = NULL, *sc[PAIRS], *rc[PAIRS];
    char h[NCCL_NET_HANDLE_MAXSIZE];
    if (mp_net_open(&n, 11) != 0 || mp_listen_publish(&n, 0, &lc) != 0)
        return 1;
    mp_barrier();
    memcpy(h, mp_peer_handle(1 - rank, 0), sizeof(h));
    if (link_many(&n, h, sc, pairs, lc, rc, pairs) != 0)
        return 1;
    MP_OK(mp_net_close_listen(&n, lc));
    struct side s[PAIRS], r[PAIRS];
    struct mp_flow f[2 * PAIRS];
    for (int i = 0; i < pairs; i++) {
        if (side_open(&n, &s[i], sc[i]) != 0 || side_open(&n, &r[i], rc[i]) != 0)
            return 1;
        f[2 * i] = flow_of(&n, &s[i], 1);
        f[2 * i + 1] = flow_of(&n, &r[i], 0);
    }
    double t0 = mp_now();
    int ok = MP_CHECK(mp_flows_run(f, 2 * pairs, mp_scaled(60)) == 0, "flows failed");
    int peak = 0, bad = 0;
    for (int i = 0; i < 2 * pairs; i++) {
        peak = f[i].peak > peak ? f[i].peak : peak;
        bad += f[i].bad;
    }
    ok &= MP_CHECK(bad == 0, "%d messages arrived wrong", bad);
    mp_note("%d send + %d recv comms, %d x %d-byte messages each, up to %d in flight per comm: "
            "%.2f s",
            pairs, pairs, REQS, MSG, peak, mp_now() - t0);
    for (int i = 0; i < pairs; i++) {
        side_close(&n, &s[i], 1);
        side_close(&n, &r[i], 0);
    }
    MP_OK(mp_net_fini(&n));
    return ok ? 0 : 1;
}

/* ---- p2p connect/close cycles: rank 0 connects, rank 1 accepts, each closes at once ---- */

static int p2p_cycle(const struct mp_net *n, int rank, void *h, void *lc)
{
    void *c = NULL;
    int ok = link_many(n, h, &c, rank == 0, lc, &c, rank == 1) == 0;
    return ok && MP_OK(rank == 0 ? mp_net_close_send(n, c) : mp_net_close_recv(n, c));
}

static int p2p_cycles_rank(int rank, int nranks, void *arg)
{
    int cycles = scaled_count(10000), warm = cycles / 20;
    struct mp_net n;
    void *lc = NULL;
    char h[NCCL_NET_HANDLE_MAXSIZE];
    if (mp_net_open(&n, 11) != 0 || (rank == 1 && mp_listen_publish(&n, 0, &lc) != 0))
        return 1;
    mp_barrier();
    memcpy(h, mp_peer_handle(1, 0), sizeof(h));
    int ok = 1;
    struct usage a = {0};
    for (int i = 0; ok && i < warm + cycles; i++) {
        if (i == warm)
            a = usage_now(); /* after the allocator has settled */
        ok &= p2p_cycle(&n, rank, h, lc);
    }
    ok = ok && usage_flat(rank == 0 ? "p2p connect + closeSend" : "p2p accept + closeRecv", cycles,
                          a, usage_after(a));
    if (lc)
        MP_OK(mp_net_close_listen(&n, lc));
    MP_OK(mp_net_fini(&n));
    return ok ? 0 : 1;
}

/* ---- CollNet group create/destroy cycles (2 ranks) ---- */

static int coll_cycle(struct cn *c, int rank, int i)
{
    char handle[NCCL_NET_HANDLE_MAXSIZE], peer[NCCL_NET_HANDLE_MAXSIZE];
    void *lc = NULL, *cc = NULL, *handles[2];
    if (!MP_OK(cn_listen(c, handle, &lc)))
        return 0;
    /* Alternate slots: the peer may still be reading the previous cycle's handle. */
    mp_publish_handle(i % 2, handle);
    mp_barrier();
    memcpy(peer, mp_peer_handle(1 - rank, i % 2), sizeof(peer));
    handles[rank] = handle;
    handles[1 - rank] = peer;
    int ok = MP_OK(cn_connect(c, handles, 2, rank, lc, &cc));
    ok &= MP_OK(cn_close_listen(c, lc));
    return ok && MP_OK(cn_close(c, cc));
}

static int coll_cycles_rank(int rank, int nranks, void *arg)
{
    int cycles = scaled_count(1000), warm = cycles / 20;
    struct cn c;
    if (cn_load(&c, 11) != 0)
        return 1;
    int ok = 1;
    struct usage a = {0};
    for (int i = 0; ok && i < warm + cycles; i++) {
        if (i == warm)
            a = usage_now();
        ok &= coll_cycle(&c, rank, i);
    }
    ok = ok && usage_flat("CollNet listen + connect + closeColl", cycles, a, usage_after(a));
    cn_unload(&c);
    return ok ? 0 : 1;
}

/* ---- init/finalize cycles (1 rank) beside a context that stays ---- */

static int init_cycles_rank(int rank, int nranks, void *arg)
{
    int cycles = scaled_count(1000), warm = cycles / 20;
    struct mp_net n;
    if (mp_net_open(&n, 11) != 0)
        return 1;
    int ok = 1;
    struct usage a = {0};
    for (int i = 0; ok && i < warm + cycles; i++) {
        if (i == warm)
            a = usage_now();
        void *ctx = NULL, *lc = NULL;
        char h[NCCL_NET_HANDLE_MAXSIZE];
        ok &= MP_OK(mp_net_init_ctx(&n, 5000 + (uint64_t)i, &ctx));
        void *keep = n.ctx;
        n.ctx = ctx; /* listen through the new context, as its communicator would */
        ok &= MP_OK(mp_net_listen(&n, n.dev, h, &lc)) && MP_OK(mp_net_close_listen(&n, lc));
        n.ctx = keep;
        ok &= MP_OK(mp_net_finalize_ctx(&n, ctx));
    }
    ok = ok && usage_flat("init + listen + closeListen + finalize", cycles, a, usage_after(a));
    MP_OK(mp_net_fini(&n));
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    int failed = 0;
    mp_begin("p2p_lifetime", "load and leaks: comm pairs under load, open/close cycles", argc,
             argv);
    if (san())
        mp_note("JACCL_TEST_SAN=1: cycle counts / 10, 16 comm pairs");
    /* Few lanes: the cycles open a connection per lane, and the pairs hold 2 x 64 at once. */
    setenv("NCCL_JACCL_NSOCKS", "2", 0);
    setenv("NCCL_JACCL_RING_WIRES", "1", 0);
    char what[4][96];
    snprintf(what[0], sizeof(what[0]), "%d comm pairs, %d requests in flight each way",
             san() ? 16 : PAIRS, REQS);
    snprintf(what[1], sizeof(what[1]), "%d p2p connect/close cycles", scaled_count(10000));
    snprintf(what[2], sizeof(what[2]), "%d CollNet group create/destroy cycles",
             scaled_count(1000));
    snprintf(what[3], sizeof(what[3]), "%d init/finalize cycles", scaled_count(1000));
    failed += mp_run("pairs", what[0], 2, mp_scaled(120), pairs_rank, NULL);
    failed += mp_run("p2p-cycles", what[1], 2, mp_scaled(240), p2p_cycles_rank, NULL);
    failed += mp_run("coll-cycles", what[2], 2, mp_scaled(240), coll_cycles_rank, NULL);
    failed += mp_run("init-cycles", what[3], 1, mp_scaled(120), init_cycles_rank, NULL);
    return mp_end(failed);
}
