/* SPDX-License-Identifier: BSD-3-Clause */
/* CollNet when things go wrong: bad arguments (clear WARN + error, the comm stays usable), a
 * comm used after close, garbage or foreign handles given to connect (error, nothing left
 * behind), a one-rank group, a rank killed in the middle of collectives (the others fail within
 * NCCL_JACCL_TIMEOUT, no hang), a rank that joins late (waited for, with a WARN), ranks that
 * disagree about an operation (both fail), idle helper threads that do not spin, CollNet
 * switched off, and a rank that closes its comm while the others still need it (they fail with
 * ncclRemoteError, never succeed with untouched output). */
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include "coll_harness.h"

/* A size, type or layout the comm cannot take: ncclInvalidUsage and a WARN. */
static int expect_invalid(ncclResult_t rc, unsigned mark, const char *needle, const char *what)
{
    int ok = MP_CHECK(rc == ncclInvalidUsage, "%s: returned %s, expected ncclInvalidUsage", what,
                      mp_result_str(rc));
    return ok & MP_CHECK(mp_warn_seen(mark, needle), "%s: no WARN mentioning '%s'", what, needle);
}

/* A pointer that is not (or no longer) a live object of the kind the call takes, or a NULL
 * buffer, is misuse: ncclInternalError and a WARN, and nothing is read through it (the ASan
 * build proves that). */
static int expect_misuse(ncclResult_t rc, unsigned mark, const char *needle, const char *what)
{
    int ok = MP_CHECK(rc == ncclInternalError, "%s: returned %s, expected ncclInternalError", what,
                      mp_result_str(rc));
    return ok & MP_CHECK(mp_warn_seen(mark, needle), "%s: no WARN mentioning '%s'", what, needle);
}

/* Every call here must fail on its own, before anything is queued. */
static int bad_reduce_args(struct cn *n, struct cn_buf *a, struct cn_buf *b)
{
    void *req = (void *)0x1;
    int ok = 1;
    unsigned m = mp_log_mark();
    ok &= expect_invalid(cn_allreduce(n, a->p, b->p, 4, 12, ncclSum, a->mh, b->mh, &req), m,
                         "unsupported", "unknown type");
    ok &= MP_CHECK(req == NULL, "a failed call must leave a NULL request");
    m = mp_log_mark();
    ok &= expect_invalid(cn_allreduce(n, a->p, b->p, 4, ncclFloat32, 7, a->mh, b->mh, &req), m,
                         "unsupported", "unknown reduction");
    m = mp_log_mark();
    ok &= expect_misuse(cn_allreduce(n, NULL, b->p, 4, ncclFloat32, ncclSum, a->mh, b->mh, &req), m,
                        "NULL", "NULL send buffer");
    m = mp_log_mark();
    ok &= expect_invalid(
            cn_allreduce(n, a->p + 64, b->p, a->len, ncclInt8, ncclSum, a->mh, b->mh, &req), m,
            "outside", "buffer beyond its registration");
    m = mp_log_mark();
    ok &= expect_invalid(cn_allreduce(n, a->p, a->p + 4, 16, ncclInt8, ncclSum, a->mh, a->mh, &req),
                         m, "overlap", "partly overlapping buffers");
    return ok;
}

static int bad_window_args(struct cn *n, struct cn_buf *a, struct cn_buf *b)
{
    void *req = NULL;
    size_t P = (size_t)n->nranks;
    int ok = 1;
    unsigned m = mp_log_mark();
    ok &= expect_invalid(
            cn_allgather(n, a->p, b->p, b->len, b->mh, 16, 16 * P - 8, 16, a->mh, &req), m,
            "outside", "all-gather window past the buffer");
    m = mp_log_mark();
    ok &= expect_invalid(
            cn_reducescatter(n, a->p, 8, a->mh, b->p, 16, 0, 16, ncclFloat32, ncclSum, b->mh, &req),
            m, "part", "reduce-scatter part smaller than the window");
    m = mp_log_mark();
    ok &= expect_invalid(
            cn_reducescatter(n, a->p, 64, a->mh, b->p, 6, 0, 6, ncclFloat32, ncclSum, b->mh, &req),
            m, "multiple", "reduce-scatter of a partial element");
    m = mp_log_mark();
    ok &= expect_misuse(cn_allgather(n, NULL, b->p, b->len, b->mh, 16, 0, 16 * P, a->mh, &req), m,
                        "NULL", "all-gather with a NULL send buffer");
    m = mp_log_mark();
    if (n->version == 11) {
        ncclNetSGE_v11_t parts[2] = {{b->mh, b->p, 8}, {b->mh, b->p + 8, 8}};
        ok &= expect_invalid(n->v11->iallgather(n->cc, a->p, 2, parts, 8, 0, 16, a->mh, &req), m,
                             "parts", "two parts");
    }
    return ok;
}

static int bad_calls(struct cn *n)
{
    struct cn_buf a, b;
    int ok = 1, done = 0;
    if (cn_buf_new(n, &a, 4096) || cn_buf_new(n, &b, 4096))
        return 0;
    ok &= bad_reduce_args(n, &a, &b);
    ok &= bad_window_args(n, &a, &b);
    unsigned m = mp_log_mark();
    ok &= expect_misuse(cn_test(n, NULL, &done, NULL), m, "request", "test(NULL)");
    m = mp_log_mark();
    ok &= expect_misuse(cn_test(n, a.p, &done, NULL), m, "request", "test(garbage)");
    int sup = -1;
    for (int t = 0; t < 12; t++)
        for (int op = 0; op < 4; op++)
            ok &= MP_CHECK(n->v11->reduceSupport(t, op, &sup) == ncclSuccess && sup == 1,
                           "reduceSupport(%d, %d) = %d", t, op, sup);
    ok &= MP_CHECK(n->v11->reduceSupport(12, 0, &sup) == ncclSuccess && sup == 0, "type 12");
    ok &= MP_CHECK(n->v11->reduceSupport(0, ncclAvg, &sup) == ncclSuccess && sup == 0, "avg");
    /* The comm is still healthy. */
    struct cn_case k = {0, ncclFloat32, ncclSum, 1000, 0, SIZE_MAX, 0, 7};
    ok &= cn_run(n, k);
    cn_buf_free(n, &a);
    cn_buf_free(n, &b);
    return ok;
}

static int after_close(struct cn *n)
{
    void *cc = n->cc, *req = NULL, *mh = NULL, *old = NULL;
    char buf[64];
    int ok = MP_OK(cn_regmr(n, buf, sizeof(buf), &mh));
    ok &= MP_OK(cn_allreduce(n, buf, buf, 4, ncclInt32, ncclSum, mh, mh, &old));
    ok &= MP_CHECK(old != NULL, "a first all-reduce on an idle comm must be queued");
    ok &= old && MP_OK(cn_wait(n, old, mp_scaled(20)));
    /* closed with the handle still registered: the close releases it */
    ok &= MP_OK(cn_close(n, cc));
    n->cc = NULL;
    unsigned m = mp_log_mark();
    ok &= expect_misuse(n->v11->iallreduce(cc, buf, buf, 4, ncclInt32, ncclSum, NULL, NULL, &req),
                        m, "closed", "iallreduce after close");
    m = mp_log_mark();
    ok &= expect_misuse(n->v11->regMr(cc, buf, 64, NCCL_PTR_HOST, &mh), m, "closed",
                        "regMr after close");
    m = mp_log_mark();
    int done = 0;
    ok &= expect_misuse(n->v11->test(old, &done, NULL), m, "closed",
                        "test of a closed comm's request");
    m = mp_log_mark();
    ok &= expect_misuse(n->v11->closeColl(cc), m, "closed", "closeColl twice");
    return ok;
}

static int rank_bad_args(int rank, int nranks, void *arg)
{
    struct cn n;
    if (cn_open_group(&n, 11, rank, nranks) != 0)
        return 1;
    int ok = bad_calls(&n);
    mp_barrier();
    ok &= after_close(&n);
    cn_unload(&n);
    return ok ? 0 : 1;
}

/* ---- connect with bad handles ---- */

static int try_connect(struct cn *n, void **handles, int nranks, int rank, void *lc,
                       const char *needle, const char *what)
{
    void *cc = NULL;
    int threads = mp_thread_count();
    unsigned m = mp_log_mark();
    ncclResult_t rc = cn_connect(n, handles, nranks, rank, lc, &cc);
    int ok = MP_CHECK(rc != ncclSuccess && cc == NULL, "%s: connect returned %s", what,
                      mp_result_str(rc));
    ok &= MP_CHECK(mp_warn_seen(m, needle), "%s: no WARN mentioning '%s'", what, needle);
    ok &= MP_CHECK(mp_threads_down_to(threads) == threads, "%s: threads left behind", what);
    return ok;
}

/* A group of one (this rank alone): every collective is a local copy. */
static int one_rank_group(struct cn *n)
{
    char mine[NCCL_NET_HANDLE_MAXSIZE];
    void *lc = NULL, *one[1] = {mine};
    int ok = MP_OK(cn_listen(n, mine, &lc));
    ok &= MP_OK(cn_connect(n, one, 1, 0, lc, &n->cc));
    MP_OK(cn_close_listen(n, lc));
    n->rank = 0;
    n->nranks = 1;
    for (int kind = 0; kind < 3 && n->cc; kind++) {
        struct cn_case k = {kind, ncclFloat32, ncclMax, 1001, 0, SIZE_MAX, kind == 1, 3};
        ok &= cn_run(n, k);
    }
    return ok;
}

static int rank_bad_handles(int rank, int nranks, void *arg)
{
    struct cn n;
    char garbage[NCCL_NET_HANDLE_MAXSIZE], mine[NCCL_NET_HANDLE_MAXSIZE];
    char other[NCCL_NET_HANDLE_MAXSIZE];
    void *lc = NULL, *lo = NULL, *handles[MP_MAX_RANKS];
    if (cn_load(&n, 11) != 0)
        return 1;
    for (size_t i = 0; i < sizeof(garbage); i++)
        garbage[i] = (char)cn_hash(i);
    int ok = MP_OK(cn_listen(&n, mine, &lc));
    ok &= MP_OK(cn_listen(&n, other, &lo)); /* valid, but nobody's in this group */
    for (int r = 0; r < nranks; r++)
        handles[r] = r == rank ? mine : r == (rank + 1) % nranks ? garbage : other;
    ok &= try_connect(&n, handles, nranks, rank, lc, "unusable", "garbage handle");
    for (int r = 0; r < nranks; r++)
        handles[r] = other;
    ok &= try_connect(&n, handles, nranks, rank, lc, "own handle", "own handle missing");
    MP_OK(cn_close_listen(&n, lc));
    MP_OK(cn_close_listen(&n, lo));
    ok &= one_rank_group(&n);
    cn_close_group(&n);
    return ok ? 0 : 1;
}

/* ---- a rank dies mid-collective ---- */

static int rank_killed(int rank, int nranks, void *arg)
{
    setenv("NCCL_JACCL_ALGO", (const char *)arg, 1);
    struct cn n;
    if (cn_open_group(&n, 11, rank, nranks) != 0)
        return 1;
    struct cn_buf s, r;
    size_t count = 8u << 20;
    if (cn_buf_new(&n, &s, count * 4) || cn_buf_new(&n, &r, count * 4))
        return 1;
    unsigned m = mp_log_mark();
    double t0 = mp_now();
    ncclResult_t rc = ncclSuccess;
    for (int i = 0; i < 50 && rc == ncclSuccess; i++) {
        void *req = NULL;
        rc = cn_allreduce(&n, s.p, r.p, count, ncclFloat32, ncclSum, s.mh, r.mh, &req);
        if (rank == 2 && i == 1) {
            mp_sleep_ms(20); /* well inside the collective */
            mp_kill_rank(2, SIGKILL);
        }
        if (rc == ncclSuccess)
            rc = cn_wait(&n, req, mp_scaled(30));
        if (rc == ncclSuccess)
            t0 = mp_now();
    }
    double took = mp_now() - t0;
    long tmo = mp_env_long("NCCL_JACCL_TIMEOUT", 3); /* the liveness deadline bounds it */
    int ok = MP_CHECK(rc != ncclSuccess, "the collectives went on without rank 2");
    ok &= MP_CHECK(took < tmo + mp_scaled(3), "failing took %.1f s (timeout %ld s)", took, tmo);
    ok &= MP_CHECK(mp_warn_seen(m, "rank"), "no WARN naming a rank");
    mp_note("failed with %s after %.2f s", mp_result_str(rc), took);
    cn_buf_free(&n, &s);
    cn_buf_free(&n, &r);
    cn_close_group(&n); /* must not hang either */
    return ok ? 0 : 1;
}

/* ---- a rank closes its comm (NCCL abort or destroy on that rank alone) ---- */

enum { CLOSE_FLAG = 0 }; /* the victim's flag: 1 about to close, 2 closed */

static int expect_closed(ncclResult_t rc, double took, unsigned m, const char *what)
{
    long tmo = mp_env_long("NCCL_JACCL_TIMEOUT", 3);
    int ok = MP_CHECK(rc == ncclRemoteError, "%s: got %s, expected ncclRemoteError", what,
                      mp_result_str(rc));
    ok &= MP_CHECK(took < tmo + mp_scaled(2), "%s: failing took %.1f s (timeout %ld s)", what, took,
                   tmo);
    /* With more ranks another survivor may give up first and close: then this rank's WARN is
     * about that connection, unless rank 1's goodbye was read before it. */
    if (mp_sh->nranks == 2)
        ok &= MP_CHECK(mp_warn_seen(m, "rank 1 (") && mp_warn_seen(m, "closed"),
                       "%s: no WARN saying rank 1 closed", what);
    else
        ok &= MP_CHECK(mp_warn_seen(m, "rank "), "%s: no WARN naming a peer", what);
    mp_note("%s: %s after %.2f s", what, mp_result_str(rc), took);
    return ok;
}

/* Rank 1's close, with req[1] in flight when mid. Its progress thread runs req[1] on its own, so
 * mid is only "mid" while the others have not issued theirs: until then they granted nothing for
 * it, so rank 1 can neither send its part nor receive theirs, and req[1] is provably unfinished
 * (with the others' req[1] issued too, rank 1 may finish it before its close under load, and
 * then their success is right). */
static int victim_closes(struct cn *n, void **req, int mid)
{
    int ok = 1, done = 1;
    if (!mid)
        ok &= MP_OK(cn_wait(n, req[1], mp_scaled(30)));
    else {
        ok &= MP_OK(cn_test(n, req[1], &done, NULL));
        ok &= MP_CHECK(!done, "req[1] done while the others never issued theirs");
    }
    mp_flag_set(1, CLOSE_FLAG, 1);
    ok &= MP_OK(cn_close(n, n->cc)); /* with req[1] in flight when mid */
    n->cc = NULL;
    mp_flag_set(1, CLOSE_FLAG, 2);
    cn_unload(n);
    return ok;
}

/* arg "ring" / "mesh". Rank 1 closes with an all-reduce in flight (mid), or once it is done and
 * before the next one (after): every later operation of the others must fail, not succeed. */
static int rank_closes(int rank, int nranks, void *arg, int mid)
{
    cn_config((const char *)arg, 0);
    struct cn n;
    if (cn_open_group(&n, 11, rank, nranks) != 0)
        return 1;
    struct cn_buf s, r;
    size_t count = 8u << 20;
    if (cn_buf_new(&n, &s, count * 4) || cn_buf_new(&n, &r, count * 4))
        return 1;
    memset(s.p, 0, count * 4);
    int ok = 1;
    void *req[2] = {NULL, NULL};
    /* When mid, the others issue req[1] only once rank 1 has closed (see victim_closes). */
    for (int i = 0; i < (mid && rank != 1 ? 1 : 2); i++)
        ok &= MP_OK(cn_allreduce(&n, s.p, r.p, count, ncclFloat32, ncclSum, s.mh, r.mh, &req[i]));
    unsigned m = mp_log_mark(); /* the failure may come as soon as req[0] is done */
    ncclResult_t rc0 = cn_wait(&n, req[0], mp_scaled(30));
    /* Beyond three ranks some survivors are not rank 1's neighbours: one that is may fail on
     * req[1] and close while req[0] still flows through it, which fails req[0] too. */
    if (rank == 1 || nranks <= 3)
        ok &= MP_OK(rc0);
    else
        ok &= MP_CHECK(rc0 == ncclSuccess || rc0 == ncclRemoteError, "req[0]: %s",
                       mp_result_str(rc0));
    if (rank == 1) {
        ok &= victim_closes(&n, req, mid);
        /* Gone like an aborting process: the registrations of the closed comm are abandoned
         * with it, which is not what this scenario checks (no leak report). */
        fflush(NULL);
        _exit(ok && mp_failures() == 0 ? 0 : 1);
    }
    double t0 = mp_now();
    ncclResult_t rc = ncclSuccess;
    if (mid) {
        ok &= MP_CHECK(mp_flag_wait(1, CLOSE_FLAG, 2, mp_scaled(20) * 1000) == 0, "no close");
        t0 = mp_now();
        memset(r.p, 0x5a, count * 4);
        rc = cn_allreduce(&n, s.p, r.p, count, ncclFloat32, ncclSum, s.mh, r.mh, &req[1]);
    }
    if (rc == ncclSuccess)
        rc = cn_wait(&n, req[1], mp_scaled(30));
    if (!mid) {
        ok &= MP_OK(rc);
        ok &= MP_CHECK(mp_flag_wait(1, CLOSE_FLAG, 2, mp_scaled(20) * 1000) == 0, "no close");
        t0 = mp_now(); /* the comm may break while idle already: keep the earlier mark */
        memset(r.p, 0x5a, count * 4);
        void *q = NULL;
        rc = cn_allreduce(&n, s.p, r.p, count, ncclFloat32, ncclSum, s.mh, r.mh, &q);
        if (rc == ncclSuccess)
            rc = cn_wait(&n, q, mp_scaled(30));
    }
    ok &= expect_closed(rc, mp_now() - t0, m, mid ? "rank 1 closed mid-operation" : "issued after");
    cn_buf_free(&n, &s);
    cn_buf_free(&n, &r);
    cn_close_group(&n);
    return ok ? 0 : 1;
}

static int rank_closes_mid(int rank, int nranks, void *arg)
{
    return rank_closes(rank, nranks, arg, 1);
}

static int rank_closes_between(int rank, int nranks, void *arg)
{
    return rank_closes(rank, nranks, arg, 0);
}

/* ---- a rank joins late: waited for, with a WARN ---- */

static int rank_late(int rank, int nranks, void *arg)
{
    setenv("NCCL_JACCL_TIMEOUT", "1", 1);
    struct cn n;
    if (cn_open_group(&n, 11, rank, nranks) != 0)
        return 1;
    unsigned m = mp_log_mark();
    if (rank == 1)
        mp_sleep_ms(2500);
    struct cn_case k = {0, ncclInt32, ncclSum, 100, 0, SIZE_MAX, 0, 5};
    int ok = cn_run(&n, k);
    if (rank == 0)
        ok &= MP_CHECK(mp_warn_seen(m, "still waiting"), "no 'still waiting' WARN");
    cn_close_group(&n);
    return ok ? 0 : 1;
}

/* ---- ranks disagree about an operation ---- */

static int rank_mismatch(int rank, int nranks, void *arg)
{
    setenv("NCCL_JACCL_ALGO", (const char *)arg, 1);
    struct cn n;
    unsigned m = mp_log_mark(); /* a fast peer may break the comm before our first call */
    if (cn_open_group(&n, 11, rank, nranks) != 0)
        return 1;
    struct cn_buf s, r;
    if (cn_buf_new(&n, &s, 1 << 20) || cn_buf_new(&n, &r, 1 << 20))
        return 1;
    void *req = NULL;
    size_t count = rank == 0 ? 1000 : 3000;
    /* The error may come from the call itself if the peer already broke the comm. */
    ncclResult_t rc = cn_allreduce(&n, s.p, r.p, count, ncclFloat32, ncclSum, s.mh, r.mh, &req);
    if (rc == ncclSuccess && req)
        rc = cn_wait(&n, req, mp_scaled(20));
    int ok = MP_CHECK(rc != ncclSuccess, "mismatched all-reduces both succeeded");
    ok &= MP_CHECK(mp_warn_seen(m, "rank"), "no WARN about the other rank");
    cn_buf_free(&n, &s);
    cn_buf_free(&n, &r);
    cn_close_group(&n);
    return ok ? 0 : 1;
}

/* ---- idle helper threads sleep ---- */

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
}

static int rank_idle(int rank, int nranks, void *arg)
{
    struct cn n;
    if (cn_open_group(&n, 11, rank, nranks) != 0)
        return 1;
    struct cn_case k = {0, ncclFloat32, ncclSum, 100000, 0, SIZE_MAX, 0, 9};
    int ok = cn_run(&n, k);
    double c0 = cpu_seconds();
    mp_sleep_ms(1000);
    double used = cpu_seconds() - c0;
    ok &= MP_CHECK(used < 0.05, "an idle rank used %.3f s of CPU in 1 s", used);
    mp_barrier();
    cn_close_group(&n);
    return ok ? 0 : 1;
}

/* ---- NCCL_JACCL_COLL_ENABLE=0: the CollNet tables offer no device ---- */

static int rank_disabled(int rank, int nranks, void *arg)
{
    setenv("NCCL_JACCL_COLL_ENABLE", "0", 1);
    void *lib = dlopen("libnccl-net-jaccl.so", RTLD_NOW | RTLD_LOCAL);
    const ncclCollNet_v11_t *t = lib ? dlsym(lib, "ncclCollNetPlugin_v11") : NULL;
    void *ctx = NULL;
    int ndev = -1;
    int ok = MP_CHECK(t != NULL, "no ncclCollNetPlugin_v11");
    ok = ok && MP_OK(t->init(&ctx, 1, mp_logger)) && MP_OK(t->devices(&ndev));
    ok &= MP_CHECK(ndev == 0, "%d CollNet devices with NCCL_JACCL_COLL_ENABLE=0", ndev);
    if (t && ctx)
        MP_OK(t->finalize(ctx));
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name, *what;
        int nranks, timeout_s;
        mp_rank_fn fn;
        const char *arg;
    } sc[] = {
            {"bad-args", "bad arguments, use after close", 2, 60, rank_bad_args, NULL},
            {"bad-handles", "bad handles, one-rank group", 3, 60, rank_bad_handles, NULL},
            {"killed-ring", "rank 2 killed, ring only", 4, 60, rank_killed, "ring"},
            {"killed-mesh", "rank 2 killed, mesh", 4, 60, rank_killed, "mesh"},
            {"late-join", "a rank joins late", 2, 60, rank_late, NULL},
            {"mismatch-ring", "ranks disagree, ring", 2, 60, rank_mismatch, "ring"},
            {"mismatch-mesh", "ranks disagree, mesh", 3, 60, rank_mismatch, "mesh"},
            {"idle-8", "8 idle ranks on 2 cores", 8, 60, rank_idle, NULL},
            {"disabled", "NCCL_JACCL_COLL_ENABLE=0", 1, 30, rank_disabled, NULL},
            {"close-mid-ring", "rank 1 closes mid-operation, ring", 2, 60, rank_closes_mid, "ring"},
            {"close-mid-mesh", "rank 1 closes mid-operation, mesh", 3, 60, rank_closes_mid, "mesh"},
            {"close-between-ring", "rank 1 closes between operations, ring", 2, 60,
             rank_closes_between, "ring"},
            {"close-between-mesh", "rank 1 closes between operations, mesh", 3, 60,
             rank_closes_between, "mesh"},
            {"close-mid-ring-8", "rank 1 closes mid-operation, ring, 8 ranks", 8, 90,
             rank_closes_mid, "ring"},
            {"close-between-mesh-8", "rank 1 closes between operations, mesh, 8 ranks", 8, 90,
             rank_closes_between, "mesh"},
            {"killed-rhd", "rank 2 killed, rhd", 4, 60, rank_killed, "rhd"},
            {"mismatch-rhd", "ranks disagree, rhd", 4, 60, rank_mismatch, "rhd"},
            {"close-mid-rhd-8", "rank 1 closes mid-operation, rhd, 8 ranks", 8, 90, rank_closes_mid,
             "rhd"},
            {"close-between-rhd", "rank 1 closes between operations, rhd", 4, 60,
             rank_closes_between, "rhd"},
    };
    int failed = 0;
    mp_begin("coll_fail", "CollNet: bad input, dead and late peers, idle threads", argc, argv);
    for (int i = 0; i < (int)(sizeof(sc) / sizeof(sc[0])); i++)
        failed += mp_run(sc[i].name, sc[i].what, sc[i].nranks, mp_scaled(sc[i].timeout_s), sc[i].fn,
                         (void *)sc[i].arg);
    return mp_end(failed);
}
