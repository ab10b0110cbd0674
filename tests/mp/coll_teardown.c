/* SPDX-License-Identifier: BSD-3-Clause */
/* coll_teardown: CollNet comms torn down the way NCCL tears them down, every close call timed.
 *
 * NCCL's proxy destroys a communicator when *this* rank's operations are done: it tests each
 * until done, then calls deregMr for every buffer, closeColl, and finalize. Nothing synchronises
 * the ranks first, and nothing is tested after a close. At abort the operations in flight are
 * abandoned (never tested again) and closeColl comes at once. These calls run on the proxy
 * thread that serves every other communicator of the process, so each must return within
 * 100 ms, plus at most 2 s while this rank still has bytes queued toward a live peer: every call
 * is held to CLOSE_BOUND_S (stretched by JACCL_TEST_SAN / JACCL_TEST_SLOW, mp_scaled_s) and its
 * duration printed, per rank.
 *
 *   - destroy: every rank tears down right after its own last of NOPS operations;
 *   - staggered: rank r tears down 2 r seconds after its own last operation, like ranks whose
 *     destroy comes at different times: no rank may wait for a later one;
 *   - leaver: one rank tears down the instant its last of NOPS back-to-back operations is done
 *     while the others test theirs only every 2 ms; several rounds, fresh comms each, another
 *     leaver each round, every result checked on the slow ranks;
 *   - abort: rank 1 closes with an operation in flight; the others keep testing theirs, which
 *     must fail with ncclRemoteError within the liveness timeout (never succeed), then tear
 *     down;
 *   - abort while the others are idle: the same, but the others issue theirs only once rank 1's
 *     closeColl returned, so nobody answers its goodbye while it is in there.
 * Ring, mesh and rhd (NCCL_JACCL_ALGO) on 2, 3, 4 and 8 ranks. Every finished operation is
 * checked element by element against a rank-order reference, and its guard bytes.
 * Arguments: scenario names or patterns (--list shows them; harness/mp_scenario.h). */
#include <stdio.h>

#include "coll_harness.h"

#define CLOSE_BOUND_S 2.1 /* 100 ms, plus 2 s of draining toward a live peer */
#define NOPS          8
#define LARGE         (1u << 20) /* elements of every fourth operation: 4 MiB of float32 */
#define SLOW_TEST_US  2000       /* the slow ranks' pause between two test() calls */
#define STAGGER_MS    2000       /* rank r's destroy comes r steps after its last operation */
#define ROUNDS        3          /* leaver rounds, each with fresh comms */
#define OP_TIMEOUT_S  60
#define BUSY_S        10 /* the others test their operation this long after an abort, at most */
/* Rank 0 issues its aborted operation this long after rank 1's closeColl began: rank 1's
 * progress thread, which would otherwise finish the operation with rank 0's part, has stopped
 * running operations by then unless rank 1 was descheduled between two lines for all of it. */
#define HOLDOUT_MS 100

enum shape { DESTROY, STAGGER, LEAVER, ABORT, ABORT_IDLE };
enum { ABORTER = 1, HOLDOUT = 0 };
/* The aborter's flags: when its closeColl began, in us (monotonic); 1 once it returned. */
enum { FLAG_STRIKE = 0, FLAG_CLOSED = 1 };

struct scenario {
    const char *name, *what, *algo;
    int nranks;
    enum shape shape;
};

/* One operation with everything needed to check it. */
struct top {
    struct cn_case k;
    struct cn_buf s, r; /* input and output, registered until the teardown */
    char *ref;          /* the output this rank must see */
    void *req;
};

/* ---- operations ---- */

/* Operation i of a round: the three collectives in turn, three types, every fourth large (so
 * some bytes are still on their way when a fast rank closes). */
static struct cn_case op_case(int i, int round, int nranks)
{
    static const int types[] = {ncclFloat32, ncclInt32, ncclBfloat16};
    struct cn_case k = {.kind = i % 3,
                        .type = types[(i / 3) % 3],
                        .op = ncclSum,
                        .count = 1000 + 37 * (size_t)i,
                        .wb = SIZE_MAX,
                        .seed = (uint64_t)(round * 100 + i + 1)};
    if (i % 4 == 3)
        k.count = k.kind == 0 ? LARGE : LARGE / (size_t)nranks;
    return k;
}

/* Elements of the input and of the output (the windows are always the whole buffer). */
static size_t elems_in(const struct cn_case *k, int nranks)
{
    return k->kind == 1 ? (size_t)nranks * k->count : k->count;
}

static size_t elems_out(const struct cn_case *k, int nranks)
{
    return k->kind == 2 ? (size_t)nranks * k->count : k->count;
}

/* This rank's input and its reference output. */
static void op_data(const struct cn *n, struct top *o)
{
    const struct cn_case *k = &o->k;
    size_t esz = jaccl_dtype_size(k->type), c = k->count, P = (size_t)n->nranks;
    size_t me = (size_t)n->rank;
    if (k->kind == 0) {
        cn_fill(k->type, k->op, n->rank, k->seed, o->s.p, 0, c);
        cn_reference(k->type, k->op, n->nranks, k->seed, o->ref, 0, c);
    } else if (k->kind == 1) {
        cn_fill(k->type, k->op, n->rank, k->seed, o->s.p, 0, P * c);
        cn_reference(k->type, k->op, n->nranks, k->seed, o->ref, me * c, c);
    } else {
        for (size_t q = 0; q < P; q++)
            cn_fill(k->type, k->op, (int)q, k->seed, o->ref + q * c * esz, q * c, c);
        memcpy(o->s.p, o->ref + me * c * esz, c * esz);
    }
}

static ncclResult_t op_issue(struct cn *n, struct top *o)
{
    const struct cn_case *k = &o->k;
    size_t esz = jaccl_dtype_size(k->type), c = k->count, all = (size_t)n->nranks * c * esz;
    if (k->kind == 0)
        return cn_allreduce(n, o->s.p, o->r.p, c, k->type, k->op, o->s.mh, o->r.mh, &o->req);
    if (k->kind == 1)
        return cn_reducescatter(n, o->s.p, all, o->s.mh, o->r.p, c * esz, 0, all, k->type, k->op,
                                o->r.mh, &o->req);
    return cn_allgather(n, o->s.p, o->r.p, all, o->r.mh, c * esz, 0, all, o->s.mh, &o->req);
}

/* Issues o; a NULL request (queue full) is retried, as NCCL does. The error of a comm that has
 * already failed may come from the call itself. */
static ncclResult_t op_post(struct cn *n, struct top *o)
{
    double deadline = mp_now() + mp_scaled(OP_TIMEOUT_S);
    ncclResult_t rc;
    o->req = NULL;
    while ((rc = op_issue(n, o)) == ncclSuccess && !o->req) {
        if (mp_now() > deadline)
            return ncclInProgress;
        mp_poll_pause(CN_POLL_SLEEP_US);
    }
    return rc;
}

static int op_check(const struct cn *n, struct top *o, int i)
{
    size_t out = elems_out(&o->k, n->nranks);
    long d = cn_diff(o->r.p, o->ref, out, jaccl_dtype_size(o->k.type));
    int ok = MP_CHECK(d < 0, "op #%d (%s %s, %zu elements out): element %ld differs", i,
                      cn_kind_name(o->k.kind), cn_type_name(o->k.type), out, d);
    return ok & MP_CHECK(cn_buf_guards_ok(&o->s) && cn_buf_guards_ok(&o->r),
                         "op #%d wrote outside its buffers", i);
}

/* Buffers (registered as NCCL registers them, before the operations) and data of ops first ..
 * first + nops - 1 of a round. */
static int ops_new(struct cn *n, struct top *o, int nops, int first, int round)
{
    for (int i = 0; i < nops; i++) {
        memset(&o[i], 0, sizeof(o[i]));
        o[i].k = op_case(first + i, round, n->nranks);
        size_t esz = jaccl_dtype_size(o[i].k.type);
        if (cn_buf_new(n, &o[i].s, elems_in(&o[i].k, n->nranks) * esz) ||
            cn_buf_new(n, &o[i].r, elems_out(&o[i].k, n->nranks) * esz) ||
            !(o[i].ref = malloc(elems_out(&o[i].k, n->nranks) * esz)))
            return -1;
        op_data(n, &o[i]);
    }
    return 0;
}

/* The memory only: the registrations went with the teardown's deregMr or with the close. */
static void ops_free(struct cn *n, struct top *o, int nops)
{
    for (int i = 0; i < nops; i++) {
        o[i].s.mh = o[i].r.mh = NULL;
        cn_buf_free(n, &o[i].s);
        cn_buf_free(n, &o[i].r);
        free(o[i].ref);
    }
}

static ncclResult_t ops_post(struct cn *n, struct top *o, int nops)
{
    ncclResult_t rc = ncclSuccess;
    for (int i = 0; i < nops && rc == ncclSuccess; i++)
        rc = op_post(n, &o[i]);
    return rc;
}

/* pause_us between two test() calls; 0: sched_yield(), as NCCL's proxy does. */
static void test_pause(long pause_us)
{
    if (pause_us > 0)
        nanosleep(&(struct timespec){pause_us / 1000000, (pause_us % 1000000) * 1000}, NULL);
    else
        sched_yield();
}

/* Tests the operations in order, as the proxy does, checking each the moment it is done; a
 * done request is never tested again. The first error, ncclSuccess, or ncclInProgress once
 * limit_s passed. */
static ncclResult_t ops_wait(struct cn *n, struct top *o, int nops, long pause_us, int limit_s)
{
    double deadline = mp_now() + limit_s;
    for (int i = 0; i < nops;) {
        int done = 0;
        ncclResult_t rc = cn_test(n, o[i].req, &done, NULL);
        if (rc != ncclSuccess)
            return rc;
        if (done) {
            op_check(n, &o[i], i);
            if (++i == nops)
                break;
        }
        if (mp_now() > deadline)
            return ncclInProgress;
        test_pause(pause_us);
    }
    return ncclSuccess;
}

/* ---- the group and its teardown ---- */

/* cn_open_group, with closeListen timed: NCCL closes the listener once connect returned. Slot
 * alternates between rounds, so a fast rank's next handle never overwrites one a slow rank may
 * still read. */
static int open_group(struct cn *n, int rank, int nranks, int slot, struct mp_closes *t)
{
    char handle[NCCL_NET_HANDLE_MAXSIZE];
    void *lc = NULL, *handles[MP_MAX_RANKS];
    if (cn_load(n, 11) != 0)
        return -1;
    n->rank = rank;
    n->nranks = nranks;
    if (!MP_OK(cn_listen(n, handle, &lc)))
        return -1;
    mp_publish_handle(slot, handle);
    mp_barrier();
    for (int r = 0; r < nranks; r++)
        handles[r] = (void *)mp_peer_handle(r, slot);
    int ok = MP_OK(cn_connect(n, handles, nranks, rank, lc, &n->cc));
    ok &= MP_CLOSE_TIMED(t, "closeListen", cn_close_listen(n, lc));
    return ok ? 0 : -1;
}

static void close_comm(struct cn *n, struct mp_closes *t)
{
    MP_CLOSE_TIMED(t, "closeColl", cn_close(n, n->cc));
    n->cc = NULL;
    MP_CLOSE_TIMED(t, "finalize", cn_finalize(n));
}

/* NCCL's destroy on this rank: deregMr of every buffer, closeColl, finalize; then the memory
 * is freed (the plugin must not touch it any more). */
static void teardown(struct cn *n, struct top *o, int nops, struct mp_closes *t)
{
    for (int i = 0; i < nops; i++) {
        MP_CLOSE_TIMED(t, "deregMr", cn_deregmr(n, o[i].s.mh));
        MP_CLOSE_TIMED(t, "deregMr", cn_deregmr(n, o[i].r.mh));
    }
    close_comm(n, t);
    ops_free(n, o, nops);
}

/* ---- destroy, staggered ---- */

static int destroy(int rank, int nranks, int stagger_ms, struct mp_closes *t)
{
    struct cn n;
    struct top o[NOPS];
    if (open_group(&n, rank, nranks, 0, t) != 0 || ops_new(&n, o, NOPS, 0, 0) != 0)
        return 0;
    int ok = MP_OK(ops_post(&n, o, NOPS));
    ok = ok && MP_OK(ops_wait(&n, o, NOPS, CN_POLL_SLEEP_US, mp_scaled(OP_TIMEOUT_S)));
    mp_sleep_ms(stagger_ms * rank);
    teardown(&n, o, NOPS, t);
    char label[64];
    snprintf(label, sizeof(label), "teardown %.1f s after its last operation",
             stagger_ms * rank / 1000.0);
    mp_closes_print(t, label);
    return ok;
}

/* ---- one rank leaves at once, the others test slowly ---- */

static int leaver_round(int rank, int nranks, int round, struct mp_closes *t)
{
    struct cn n;
    struct top o[NOPS];
    int leaver = round % nranks;
    if (open_group(&n, rank, nranks, round % 2, t) != 0 || ops_new(&n, o, NOPS, 0, round) != 0)
        return 0;
    int ok = MP_OK(ops_post(&n, o, NOPS));
    long pause_us = rank == leaver ? 0 : SLOW_TEST_US;
    ok = ok && MP_OK(ops_wait(&n, o, NOPS, pause_us, mp_scaled(OP_TIMEOUT_S)));
    teardown(&n, o, NOPS, t);
    char label[64];
    snprintf(label, sizeof(label), "round %d, %s", round,
             rank == leaver ? "the leaver, at once" : "tested every 2 ms");
    mp_closes_print(t, label);
    return ok;
}

static int leaver(int rank, int nranks, struct mp_closes *t)
{
    int ok = 1;
    for (int round = 0; round < ROUNDS && ok; round++)
        ok &= leaver_round(rank, nranks, round, t);
    return ok;
}

/* ---- abort ---- */

/* Rank 1 closes at once with o in flight. It is provably unfinished: rank 0 (when idle, every
 * other rank) issues its own only after this close began, and every algorithm needs rank 0's
 * part at rank 1. */
static int aborter(struct cn *n, struct top *o, struct mp_closes *t)
{
    int done = 1;
    int ok = MP_OK(op_post(n, o));
    ok = ok && MP_OK(cn_test(n, o->req, &done, NULL));
    ok &= MP_CHECK(!done, "rank 1's operation done although rank 0 never issued its own");
    mp_flag_set(ABORTER, FLAG_STRIKE, (long)(mp_now() * 1e6));
    close_comm(n, t); /* the request is abandoned: never tested again */
    mp_flag_set(ABORTER, FLAG_CLOSED, 1);
    mp_closes_print(t, "abort, closeColl with an operation in flight");
    return ok;
}

static const char *issued_when(int rank, int idle)
{
    if (idle)
        return "after the close returned";
    return rank == HOLDOUT ? "after the close began" : "before the close";
}

/* The others: rank 0 issues its operation just after rank 1's close began (when idle, all
 * of them once it returned), the rest had issued theirs before; each keeps testing it (every
 * 2 ms, up to BUSY_S), and it must fail. */
static int survivor(struct cn *n, int rank, int idle, struct top *o, unsigned m)
{
    if (idle) {
        MP_CHECK(mp_flag_wait(ABORTER, FLAG_CLOSED, 1, mp_scaled(60) * 1000) == 0, "no close");
    } else if (rank == HOLDOUT) {
        MP_CHECK(mp_flag_wait(ABORTER, FLAG_STRIKE, 1, mp_scaled(20) * 1000) == 0, "no abort");
        mp_sleep_ms((int)(mp_scaled_s(HOLDOUT_MS / 1000.0) * 1000));
    }
    ncclResult_t rc = op_post(n, o);
    if (rc == ncclSuccess)
        rc = ops_wait(n, o, 1, SLOW_TEST_US, mp_scaled(BUSY_S));
    double strike = (double)mp_flag_get(ABORTER, FLAG_STRIKE) / 1e6, took = mp_now() - strike;
    long tmo = mp_env_long("NCCL_JACCL_TIMEOUT", 3);
    int ok = MP_CHECK(rc == ncclRemoteError, "operation after the abort: %s, expected %s",
                      mp_result_str(rc), mp_result_str(ncclRemoteError));
    ok &= MP_CHECK(took < tmo + mp_scaled(2), "failing took %.2f s after the abort (timeout %ld s)",
                   took, tmo);
    ok &= MP_CHECK(mp_warn_seen(m, "rank "), "no WARN naming a peer");
    mp_note("survivor, issued %s: %s %.2f s after the abort", issued_when(rank, idle),
            mp_result_str(rc), took);
    return ok;
}

static int abort_run(int rank, int nranks, int idle, struct mp_closes *t)
{
    struct cn n;
    struct top o[2]; /* a small one everyone finishes, then a large one rank 1 abandons */
    if (open_group(&n, rank, nranks, 0, t) != 0 || ops_new(&n, o, 2, 2, 0) != 0)
        return 0;
    unsigned m = mp_log_mark(); /* the WARN may come as soon as rank 1's o[0] is done */
    int ok = MP_OK(op_post(&n, &o[0]));
    ok = ok && MP_OK(ops_wait(&n, o, 1, CN_POLL_SLEEP_US, mp_scaled(OP_TIMEOUT_S)));
    if (!ok) { /* every rank finished sending o[0]: nothing excuses a failure */
        teardown(&n, o, 2, t);
        return 0;
    }
    if (rank == ABORTER) {
        ok &= aborter(&n, &o[1], t);
        ops_free(&n, o, 2);
        return ok;
    }
    ok &= survivor(&n, rank, idle, &o[1], m);
    teardown(&n, o, 2, t);
    mp_closes_print(t, "teardown after the failure");
    return ok;
}

/* ---- scenarios ---- */

static int teardown_rank(int rank, int nranks, void *arg)
{
    const struct scenario *s = arg;
    struct mp_closes t;
    int ok;
    cn_config(s->algo, 0);
    mp_closes_init(&t, mp_scaled_s(CLOSE_BOUND_S));
    if (s->shape == LEAVER)
        ok = leaver(rank, nranks, &t);
    else if (s->shape == ABORT || s->shape == ABORT_IDLE)
        ok = abort_run(rank, nranks, s->shape == ABORT_IDLE, &t);
    else
        ok = destroy(rank, nranks, s->shape == STAGGER ? STAGGER_MS : 0, &t);
    mp_closes_report(&t);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    static const struct scenario sc[] = {
            {"destroy-ring", "destroy at once, ring", "ring", 2, DESTROY},
            {"destroy-mesh", "destroy at once, mesh", "mesh", 3, DESTROY},
            {"destroy-rhd-8", "destroy at once, rhd, 8 ranks", "rhd", 8, DESTROY},
            {"stagger-ring", "staggered destroy (2 s steps), ring", "ring", 3, STAGGER},
            {"stagger-mesh", "staggered destroy (2 s steps), mesh", "mesh", 4, STAGGER},
            {"stagger-rhd-8", "staggered destroy (2 s steps), rhd, 8 ranks", "rhd", 8, STAGGER},
            {"leave-ring", "a rank leaves after its 8th op, the others test slowly, ring", "ring",
             2, LEAVER},
            {"leave-mesh", "a rank leaves after its 8th op, the others test slowly, mesh", "mesh",
             3, LEAVER},
            {"leave-rhd-8", "a rank leaves after its 8th op, the others test slowly, rhd, 8 ranks",
             "rhd", 8, LEAVER},
            {"abort-ring", "rank 1 aborts with an operation in flight, ring", "ring", 2, ABORT},
            {"abort-mesh", "rank 1 aborts with an operation in flight, mesh", "mesh", 3, ABORT},
            {"abort-rhd", "rank 1 aborts with an operation in flight, rhd", "rhd", 4, ABORT},
            {"abort-ring-8", "rank 1 aborts with an operation in flight, ring, 8 ranks", "ring", 8,
             ABORT},
            {"abort-idle-ring", "rank 1 aborts while the others are idle, ring", "ring", 2,
             ABORT_IDLE},
            {"abort-idle-mesh", "rank 1 aborts while the others are idle, mesh", "mesh", 4,
             ABORT_IDLE},
    };
    int failed = 0;
    mp_begin("coll_teardown", "CollNet teardown as NCCL does it: every close call timed", argc,
             argv);
    for (int i = 0; i < (int)(sizeof(sc) / sizeof(sc[0])); i++)
        failed += mp_run(sc[i].name, sc[i].what, sc[i].nranks, mp_scaled(90), teardown_rank,
                         (void *)&sc[i]);
    return mp_end(failed);
}
