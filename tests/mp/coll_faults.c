/* SPDX-License-Identifier: BSD-3-Clause */
/* The fault matrix: one rank (the victim) leaves a group while the others (the survivors) keep
 * going, for p2p (a ring of send/receive comms), the CollNet ring and the CollNet mesh, with 2,
 * 3 and 4 ranks. The victim is SIGKILLed, closes its comms (NCCL's abort), calls finalize with
 * them open, or is SIGSTOPped; before the first operation, in the middle of one, or between
 * two. CollNet cells rotate through the three collectives.
 *
 * Per cell, every survivor checks that each of its requests ends (no hang), that a request that
 * succeeds has every byte right, that an operation issued after the strike fails (CollNet: with
 * ncclRemoteError; p2p: the rank that receives from the victim; a send to it may complete), that
 * the first error comes within NCCL_JACCL_TIMEOUT plus a small slack, and that a WARN names a peer.
 * Survivors close their comms as soon as their own requests ended, as NCCL does; nobody waits for
 * anybody else. The program ends with the matrix: the seconds from the strike until the last
 * survivor's requests had all ended, and beside it how long the victim's own close (abort:
 * closeColl, or closeSend/closeRecv, with the operation in flight when mid) or finalize call
 * took; it must return within the close bound (docs/reliability.md: 100 ms, plus at most 2 s
 * while bytes are queued toward a live peer), stretched for sanitizers and slow machines.
 *
 *   BUILD=build tests/run_coll.sh faults            every cell
 *   BUILD=build tests/run_coll.sh faults:0,1,2      cells 0, 1 and 2 (numbered as printed) */
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "coll_harness.h"

enum xport { X_P2P, X_RING, X_MESH, X_N };
enum fault { F_KILL, F_CLOSE, F_FINI, F_STOP, F_N };
enum when { W_BEFORE, W_MID, W_BETWEEN, W_N };
#define MIN_RANKS 2
#define MAX_RANKS 4
#define NSIZES    (MAX_RANKS - MIN_RANKS + 1)

static const char *xport_name[] = {"p2p", "ring", "mesh"};
static const char *fault_name[] = {"kill", "close", "finalize", "stop"};
static const char *when_name[] = {"before", "mid", "between"};

/* Flags: the victim's strike time; each survivor's verdict for rank 0's report. */
enum { FL_STRIKE = 0, FL_DONE, FL_END_MS, FL_FAIL_MS, FL_NAMED, FL_CLOSE_US };

#define ELEMS     (2u << 20) /* float32 elements a collective moves (8 MiB) */
#define P2P_BYTES (8u << 20)

struct cell {
    enum xport x;
    int nranks;
    enum fault f;
    enum when w;
    int kind; /* CollNet: 0 allreduce, 1 reducescatter, 2 allgather */
};

struct record { /* rank 0 to the parent, through an inherited file */
    struct cell c;
    int ok;
    double secs;
    double close_s; /* the victim's close or finalize call; -1 for kill and stop */
};

static int g_rec_fd = -1;

static int victim_of(int nranks)
{
    return nranks / 2;
}

static long now_ms(void)
{
    return (long)(mp_now() * 1000.0);
}

static double tmo_s(void)
{
    return (double)mp_env_long("NCCL_JACCL_TIMEOUT", 3);
}

/* The error must come within the liveness deadline plus this (a stopped peer is noticed by
 * its silence, the rest at once; a ring with 4 ranks takes a hop more). */
static double slack_s(void)
{
    return (double)mp_scaled(2);
}

/* ---- the victim ---- */

struct victim_io {
    void (*close_all)(void *arg);
    void (*finalize)(void *arg);
    void *arg;
};

/* The bound on a close or finalize call (reliability.md), stretched like every deadline. */
static double close_bound_s(void)
{
    return 2.1 * mp_scaled(1);
}

/* The victim's close or finalize, timed: the survivors keep going meanwhile, so a call that
 * waited for them would show here. */
static void timed_leave(void (*leave)(void *), void *arg)
{
    double t0 = mp_now();
    leave(arg);
    double took = mp_now() - t0;
    mp_flag_set(mp_rank, FL_CLOSE_US, (long)(took * 1e6) + 1);
    MP_CHECK(took <= close_bound_s(), "the victim's close took %.3f s (bound %.1f s)", took,
             close_bound_s());
}

/* The victim's end: kill and stop strike the process itself; close and finalize leave it. */
__attribute__((noreturn)) static void strike(const struct cell *c, const struct victim_io *io)
{
    mp_flag_set(mp_rank, FL_STRIKE, now_ms());
    switch (c->f) {
    case F_KILL:
        mp_kill_rank(mp_rank, SIGKILL);
        break;
    case F_STOP:
        mp_kill_rank(mp_rank, SIGSTOP); /* rank 0 kills it once the survivors are done */
        break;
    case F_CLOSE:
        timed_leave(io->close_all, io->arg);
        break;
    default:
        timed_leave(io->finalize, io->arg);
        break;
    }
    /* Gone like an aborting process: whatever it still holds (registrations of closed comms,
     * comms left open at finalize) is abandoned, so the leak checker has nothing to say here;
     * a crash in close or finalize still fails the cell. */
    fflush(NULL);
    _exit(mp_failures() ? 1 : 0);
}

/* ---- survivors' bookkeeping ---- */

struct verdict {
    double t_fail, t_end; /* first error, last request ended (absolute seconds) */
    unsigned mark;        /* taken before the group is set up: a fast failure may beat us */
};

static double strike_time(int nranks)
{
    int v = victim_of(nranks);
    if (mp_flag_wait(v, FL_STRIKE, 1, mp_scaled(30) * 1000) != 0)
        return -1;
    return (double)mp_flag_get(v, FL_STRIKE) / 1000.0;
}

static void note_error(struct verdict *vd, ncclResult_t rc)
{
    if (rc != ncclSuccess && vd->t_fail == 0)
        vd->t_fail = mp_now();
}

/* Publishes this survivor's verdict, and checks the timing against the strike. */
static int judge(const struct cell *c, struct verdict *vd, int must_fail, const char *peer_match)
{
    double ts = strike_time(c->nranks);
    vd->t_end = mp_now();
    int ok = MP_CHECK(ts > 0, "the victim never struck");
    if (must_fail)
        ok &= MP_CHECK(vd->t_fail > 0, "every request succeeded although the victim left");
    double limit = tmo_s() + slack_s();
    if (vd->t_fail > 0)
        ok &= MP_CHECK(vd->t_fail - ts < limit,
                       "the first error came %.2f s after the strike "
                       "(limit %.1f s)",
                       vd->t_fail - ts, limit);
    ok &= MP_CHECK(vd->t_end - ts < limit,
                   "the requests ended %.2f s after the strike (limit %.1f s)", vd->t_end - ts,
                   limit);
    int named = mp_warn_seen(vd->mark, peer_match);
    if (vd->t_fail > 0)
        ok &= MP_CHECK(named || mp_warn_seen(vd->mark, "rank "), "no WARN names a peer");
    mp_flag_set(mp_rank, FL_END_MS, (long)((vd->t_end - ts) * 1000));
    mp_flag_set(mp_rank, FL_NAMED, named);
    return ok;
}

/* Rank 0: waits for the other survivors, records the cell, and ends a stopped victim. */
static void report(const struct cell *c, int ok)
{
    int v = victim_of(c->nranks);
    double worst = (double)mp_flag_get(0, FL_END_MS) / 1000.0;
    for (int r = 1; r < c->nranks; r++) {
        if (r == v)
            continue;
        if (mp_flag_wait(r, FL_DONE, 1, mp_scaled(30) * 1000) != 0) {
            ok = 0;
            continue;
        }
        ok &= mp_flag_get(r, FL_DONE) == 1;
        double t = (double)mp_flag_get(r, FL_END_MS) / 1000.0;
        worst = t > worst ? t : worst;
    }
    if (c->f == F_STOP)
        mp_kill_rank(v, SIGKILL);
    long us = mp_flag_get(v, FL_CLOSE_US); /* set before the victim's exit, which we waited on */
    struct record rec = {*c, ok, worst, us > 0 ? (double)(us - 1) / 1e6 : -1};
    if (g_rec_fd >= 0 && write(g_rec_fd, &rec, sizeof(rec)) != (ssize_t)sizeof(rec))
        mp_note("cannot record the cell");
}

static void finish(const struct cell *c, int ok)
{
    mp_flag_set(mp_rank, FL_DONE, ok ? 1 : 2);
    if (mp_rank == 0)
        report(c, ok);
}

/* ---- CollNet cells ---- */

struct cn_cell {
    struct cn n;
    struct cn_buf s, r;
    size_t cnt; /* elements per rank */
};

static size_t total_elems(const struct cn_cell *k)
{
    return k->cnt * (size_t)k->n.nranks;
}

/* Operation `seq` of kind `kind`: rank r's input is cn_fill(..., r, seed = seq + 1). */
static ncclResult_t cn_issue(struct cn_cell *k, int kind, int seq, void **req)
{
    struct cn *n = &k->n;
    size_t T = total_elems(k), lo = (size_t)n->rank * k->cnt;
    *req = NULL;
    memset(k->r.p, 0x5a, k->r.len);
    if (kind == 0) {
        cn_fill(ncclFloat32, ncclSum, n->rank, (uint64_t)seq + 1, k->s.p, 0, T);
        return cn_allreduce(n, k->s.p, k->r.p, T, ncclFloat32, ncclSum, k->s.mh, k->r.mh, req);
    }
    if (kind == 1) {
        cn_fill(ncclFloat32, ncclSum, n->rank, (uint64_t)seq + 1, k->s.p, 0, T);
        return cn_reducescatter(n, k->s.p, T * 4, k->s.mh, k->r.p, k->cnt * 4, 0, T * 4,
                                ncclFloat32, ncclSum, k->r.mh, req);
    }
    cn_fill(ncclFloat32, ncclSum, n->rank, (uint64_t)seq + 1, k->s.p, lo, k->cnt);
    return cn_allgather(n, k->s.p, k->r.p, T * 4, k->r.mh, k->cnt * 4, 0, T * 4, k->s.mh, req);
}

/* Every byte of a completed operation. */
static int cn_result_ok(struct cn_cell *k, int kind, int seq)
{
    struct cn *n = &k->n;
    size_t T = total_elems(k), lo = (size_t)n->rank * k->cnt, len = kind == 1 ? k->cnt : T;
    float *ref = malloc(T * 4);
    uint64_t seed = (uint64_t)seq + 1;
    if (kind == 0)
        cn_reference(ncclFloat32, ncclSum, n->nranks, seed, ref, 0, T);
    else if (kind == 1)
        cn_reference(ncclFloat32, ncclSum, n->nranks, seed, ref, lo, k->cnt);
    else
        for (int q = 0; q < n->nranks; q++)
            cn_fill(ncclFloat32, ncclSum, q, seed, ref + (size_t)q * k->cnt, (size_t)q * k->cnt,
                    k->cnt);
    long d = cn_diff(k->r.p, ref, len, 4);
    free(ref);
    return MP_CHECK(d < 0, "%s #%d succeeded with element %ld wrong", cn_kind_name(kind), seq, d) &
           MP_CHECK(cn_buf_guards_ok(&k->r), "%s #%d wrote past its buffer", cn_kind_name(kind),
                    seq);
}

static void cn_victim_close(void *arg)
{
    struct cn_cell *k = arg;
    MP_OK(cn_close(&k->n, k->n.cc)); /* with the operation in flight when mid */
    k->n.cc = NULL;
    cn_unload(&k->n);
}

static void cn_victim_fini(void *arg)
{
    struct cn_cell *k = arg;
    MP_OK(k->n.v11->finalize(k->n.ctx)); /* the comm is still open */
    k->n.ctx = NULL;
}

static void cn_victim(const struct cell *c, struct cn_cell *k)
{
    struct victim_io io = {cn_victim_close, cn_victim_fini, k};
    void *req = NULL;
    if (c->w != W_BEFORE)
        MP_OK(cn_issue(k, c->kind, 0, &req));
    if (c->w == W_BETWEEN)
        MP_OK(cn_wait(&k->n, req, mp_scaled(30)));
    strike(c, &io);
}

/* Issues one operation and waits for it; `after`: issued once the victim had struck. */
static void cn_one(const struct cell *c, struct cn_cell *k, int seq, struct verdict *vd, int after,
                   int *ok)
{
    void *req = NULL;
    ncclResult_t rc = cn_issue(k, c->kind, seq, &req);
    if (rc == ncclSuccess && req)
        rc = cn_wait(&k->n, req, (int)(2 * tmo_s()) + mp_scaled(10));
    note_error(vd, rc);
    if (rc == ncclSuccess) {
        *ok &= MP_CHECK(!after, "%s #%d succeeded without the victim", cn_kind_name(c->kind), seq);
        *ok &= cn_result_ok(k, c->kind, seq);
        return;
    }
    *ok &= MP_CHECK(rc == ncclRemoteError, "%s #%d failed with %s, expected ncclRemoteError",
                    cn_kind_name(c->kind), seq, mp_result_str(rc));
}

static int cn_survivor(const struct cell *c, struct cn_cell *k, unsigned mark)
{
    struct verdict vd = {.mark = mark};
    int ok = 1;
    if (c->w == W_BEFORE)
        strike_time(c->nranks);
    cn_one(c, k, 0, &vd, c->w == W_BEFORE, &ok);
    strike_time(c->nranks);
    cn_one(c, k, 1, &vd, 1, &ok);
    char who[32];
    snprintf(who, sizeof(who), "rank %d (", victim_of(c->nranks));
    ok &= judge(c, &vd, 1, who);
    return ok;
}

static int cn_cell_rank(int rank, int nranks, void *arg)
{
    const struct cell *c = arg;
    cn_config(c->x == X_MESH ? "mesh" : "ring", 0);
    struct cn_cell k;
    memset(&k, 0, sizeof(k));
    k.cnt = ELEMS / (size_t)nranks;
    unsigned mark = mp_log_mark();
    if (cn_open_group(&k.n, 11, rank, nranks) != 0)
        return 1;
    size_t bytes = k.cnt * (size_t)nranks * 4;
    if (cn_buf_new(&k.n, &k.s, bytes) || cn_buf_new(&k.n, &k.r, bytes))
        return 1;
    if (rank == victim_of(nranks))
        cn_victim(c, &k); /* does not return */
    int ok = cn_survivor(c, &k, mark);
    cn_buf_free(&k.n, &k.s);
    cn_buf_free(&k.n, &k.r);
    cn_close_group(&k.n);
    finish(c, ok && mp_failures() == 0);
    return ok ? 0 : 1;
}

/* ---- p2p cells: each rank sends to its right neighbour and receives from its left ---- */

struct p2p_cell {
    struct mp_net n;
    struct mp_ring ring;
    char *sbuf, *rbuf;
    void *smh, *rmh;
};

static unsigned char p2p_byte(int src, int seq)
{
    return (unsigned char)(src * 31 + seq * 7 + 1);
}

static void p2p_victim_close(void *arg)
{
    struct p2p_cell *k = arg;
    mp_ring_close(&k->n, &k->ring); /* with the transfer in flight when mid */
    MP_OK(mp_net_fini(&k->n));
}

static void p2p_victim_fini(void *arg)
{
    struct p2p_cell *k = arg;
    MP_OK(mp_net_fini(&k->n)); /* the comms are still open */
}

static struct mp_xchg p2p_xchg(struct p2p_cell *k)
{
    return (struct mp_xchg){.net = &k->n,
                            .scomm = k->ring.scomm,
                            .rcomm = k->ring.rcomm,
                            .sbuf = k->sbuf,
                            .rbuf = k->rbuf,
                            .smh = k->smh,
                            .rmh = k->rmh,
                            .size = P2P_BYTES};
}

/* One exchange: send to the right, receive from the left, wait for both (mp_exchange retries
 * an isend that found no clear-to-send yet, as NCCL's proxy does). */
static ncclResult_t p2p_exchange(struct p2p_cell *k, int seq, int wait_s, ncclResult_t *first)
{
    struct mp_xchg x = p2p_xchg(k);
    memset(k->sbuf, p2p_byte(mp_rank, seq), P2P_BYTES);
    memset(k->rbuf, 0, P2P_BYTES);
    ncclResult_t rc = mp_exchange(&x, 0, mp_now() + wait_s);
    if (rc == ncclInProgress) {
        mp_note("exchange #%d not done after %d s", seq, wait_s);
        rc = ncclSystemError;
    }
    *first = rc;
    return rc;
}

static void p2p_victim(const struct cell *c, struct p2p_cell *k)
{
    struct victim_io io = {p2p_victim_close, p2p_victim_fini, k};
    struct mp_xchg x = p2p_xchg(k);
    ncclResult_t rc = ncclSuccess;
    /* mid: both requests posted and left in flight; between: exchange #0 ends before the strike */
    if (c->w != W_BEFORE) {
        memset(k->sbuf, p2p_byte(mp_rank, 0), P2P_BYTES);
        rc = mp_exchange(&x, c->w == W_MID, mp_now() + mp_scaled(30));
    }
    MP_CHECK(rc == ncclSuccess, "the victim's exchange #0 did not %s: %s",
             c->w == W_MID ? "start" : "finish", mp_result_str(rc));
    strike(c, &io);
}

/* Only a receive needs the victim: a send to it may complete once the kernel holds its bytes. */
static int p2p_receives_from_victim(int rank, int nranks)
{
    return (victim_of(nranks) + 1) % nranks == rank;
}

static void p2p_one(struct p2p_cell *k, int seq, struct verdict *vd, int *ok)
{
    ncclResult_t rc;
    p2p_exchange(k, seq, (int)(2 * tmo_s()) + mp_scaled(10), &rc);
    note_error(vd, rc);
    if (rc != ncclSuccess) {
        *ok &= MP_CHECK(rc == ncclRemoteError || rc == ncclSystemError,
                        "exchange #%d failed with %s", seq, mp_result_str(rc));
        return;
    }
    int left = (mp_rank + mp_sh->nranks - 1) % mp_sh->nranks;
    unsigned char want = p2p_byte(left, seq);
    size_t bad = P2P_BYTES;
    for (size_t i = 0; i < P2P_BYTES && bad == P2P_BYTES; i++)
        if ((unsigned char)k->rbuf[i] != want)
            bad = i;
    *ok &= MP_CHECK(bad == P2P_BYTES, "exchange #%d succeeded with byte %zu wrong (%u, not %u)",
                    seq, bad, bad < P2P_BYTES ? (unsigned char)k->rbuf[bad] : 0u, want);
}

static int p2p_survivor(const struct cell *c, struct p2p_cell *k, unsigned mark)
{
    struct verdict vd = {.mark = mark};
    int ok = 1;
    int dead = 0; /* once a comm failed, later exchanges would only repeat the error */
    if (c->w == W_BEFORE)
        strike_time(c->nranks);
    p2p_one(k, 0, &vd, &ok);
    dead = vd.t_fail > 0;
    strike_time(c->nranks);
    if (!dead)
        p2p_one(k, 1, &vd, &ok);
    const char *peer = getenv("JACCL_TEST_PEER_MATCH");
    ok &= judge(c, &vd, p2p_receives_from_victim(mp_rank, c->nranks),
                peer && *peer ? peer : "127.0.0.1");
    return ok;
}

static int p2p_cell_rank(int rank, int nranks, void *arg)
{
    const struct cell *c = arg;
    struct p2p_cell k;
    memset(&k, 0, sizeof(k));
    unsigned mark = mp_log_mark();
    if (mp_net_open(&k.n, 11) != 0 || mp_ring_connect(&k.n, 0, &k.ring) != 0)
        return 1;
    k.sbuf = mp_alloc(P2P_BYTES);
    k.rbuf = mp_alloc(P2P_BYTES);
    int ok = MP_OK(mp_net_regmr(&k.n, k.ring.scomm, k.sbuf, P2P_BYTES, NCCL_PTR_HOST, &k.smh));
    ok &= MP_OK(mp_net_regmr(&k.n, k.ring.rcomm, k.rbuf, P2P_BYTES, NCCL_PTR_HOST, &k.rmh));
    if (rank == victim_of(nranks)) {
        p2p_victim(c, &k); /* does not return */
    } else {
        ok &= p2p_survivor(c, &k, mark);
        MP_OK(mp_net_deregmr(&k.n, k.ring.scomm, k.smh));
        MP_OK(mp_net_deregmr(&k.n, k.ring.rcomm, k.rmh));
        mp_ring_close(&k.n, &k.ring);
        MP_OK(mp_net_fini(&k.n));
        finish(c, ok && mp_failures() == 0);
    }
    mp_free(k.sbuf, P2P_BYTES);
    mp_free(k.rbuf, P2P_BYTES);
    return ok ? 0 : 1;
}

/* ---- the matrix ---- */

static int cell_index(const struct cell *c)
{
    return (((int)c->x * NSIZES + (c->nranks - MIN_RANKS)) * F_N + (int)c->f) * W_N + (int)c->w;
}

static struct cell cell_at(int i)
{
    struct cell c;
    c.w = (enum when)(i % W_N);
    c.f = (enum fault)(i / W_N % F_N);
    c.nranks = MIN_RANKS + i / (W_N * F_N) % NSIZES;
    c.x = (enum xport)(i / (W_N * F_N * NSIZES));
    c.kind = (c.nranks + (int)c.f + (int)c.w) % 3; /* every collective in every column */
    return c;
}

/* One table: the seconds per cell that `secs` picks from a record, "-" where not run. */
static void print_table(char cells[][16], const char *title)
{
    printf("\n%s\n\n%-9s", title, "");
    for (int f = 0; f < F_N; f++)
        printf("| %-20s", fault_name[f]);
    printf("\n%-9s", "");
    for (int f = 0; f < F_N; f++)
        printf("| %-6s %-6s %-6s", "before", "mid", "betw.");
    printf("\n");
    for (int x = 0; x < X_N; x++) {
        for (int s = 0; s < NSIZES; s++) {
            printf("%-4s %d r ", xport_name[x], MIN_RANKS + s);
            for (int f = 0; f < F_N; f++) {
                printf("|");
                for (int w = 0; w < W_N; w++) {
                    struct cell c = {(enum xport)x, MIN_RANKS + s, (enum fault)f, (enum when)w, 0};
                    const char *t = cells[cell_index(&c)];
                    printf(" %-6s", *t ? t : "  -");
                }
            }
            printf("\n");
        }
    }
}

static void print_matrix(int fd)
{
    static const char kind_letter[] = {'A', 'R', 'G'};
    static char ends[X_N * NSIZES * F_N * W_N][16], closes[X_N * NSIZES * F_N * W_N][16];
    struct record rec;
    lseek(fd, 0, SEEK_SET);
    while (read(fd, &rec, sizeof(rec)) == (ssize_t)sizeof(rec)) {
        int i = cell_index(&rec.c);
        char k = rec.c.x == X_P2P ? ' ' : kind_letter[rec.c.kind];
        if (rec.ok)
            snprintf(ends[i], sizeof(ends[i]), "%5.2f%c", rec.secs, k);
        else
            snprintf(ends[i], sizeof(ends[i]), " FAIL%c", k);
        if (rec.close_s >= 0)
            snprintf(closes[i], sizeof(closes[i]), "%6.3f", rec.close_s);
        else
            snprintf(closes[i], sizeof(closes[i]), "   n/a");
    }
    printf("\nFault matrix: seconds from the strike until every survivor's requests had ended\n"
           "(NCCL_JACCL_TIMEOUT=%.0f s; collective: A all-reduce, R reduce-scatter, G all-gather;\n"
           " FAIL: a check failed, blank: not run)\n",
           tmo_s());
    print_table(ends, "");
    print_table(closes, "The victim's own close (close) or finalize (finalize) call, seconds "
                        "(n/a: killed or stopped)");
}

int main(int argc, char **argv)
{
    int failed = 0, n = X_N * NSIZES * F_N * W_N;
    char path[] = "/tmp/jaccl-faults-XXXXXX";
    /* Short, so the stop cells (noticed by silence) stay quick; a little longer when the run is
     * slowed down, so a live but starved rank is not taken for a silent one. */
    setenv("NCCL_JACCL_TIMEOUT", mp_scaled(1) > 1 ? "3" : "2", 1);
    mp_begin("coll_faults", "the fault matrix: a peer killed, closed, finalized or stopped", argc,
             argv);
    g_rec_fd = mkstemp(path);
    if (g_rec_fd >= 0)
        unlink(path);
    for (int i = 0; i < n; i++) {
        struct cell c = cell_at(i);
        char name[48], what[96];
        /* The matrix's coordinates: "ring-3-kill-mid" */
        snprintf(name, sizeof(name), "%s-%d-%s-%s", xport_name[c.x], c.nranks, fault_name[c.f],
                 when_name[c.w]);
        snprintf(what, sizeof(what), "cell %d: %s, %s, %s %s", i, xport_name[c.x],
                 c.x == X_P2P ? "send/recv" : cn_kind_name(c.kind), fault_name[c.f],
                 when_name[c.w]);
        failed += mp_run(name, what, c.nranks, mp_scaled(60),
                         c.x == X_P2P ? p2p_cell_rank : cn_cell_rank, &c);
    }
    if (g_rec_fd >= 0 && !mp_listing())
        print_matrix(g_rec_fd);
    return mp_end(failed);
}
