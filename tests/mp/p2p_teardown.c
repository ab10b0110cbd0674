/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p_teardown: send and receive comms torn down the way NCCL tears them down, every close call
 * timed.
 *
 * NCCL's proxy tears a connection down when *this* rank's requests on it are done: deregMr of
 * each buffer, then closeSend / closeRecv, then finalize, with nothing synchronising the ranks
 * first and no test() after a close. At abort the requests in flight are abandoned and closeSend
 * comes at once. Each call runs on the proxy thread that serves every other communicator, so it
 * must return within 100 ms, plus at most 2 s while this rank still has bytes queued toward a
 * live peer: every call is held to CLOSE_BOUND_S (stretched by JACCL_TEST_SAN / JACCL_TEST_SLOW)
 * and its duration printed, per rank. Messages of 1 B to 8 MiB (the large ones are still partly
 * in the kernels when a fast sender's last isend completes), each checked byte for byte with the
 * guard behind it.
 *
 *   - destroy: two ranks both ways, and a ring of four; each rank tears down right after its own
 *     requests are done; a clean end logs no WARN;
 *   - the sender leaves: one-way pairs; the sender tears down the instant its last isend
 *     completed while the receiver tests only every 2 ms: every byte must still arrive;
 *   - staggered: a ring of three, rank r tears down 2 r seconds after its own last request;
 *   - abort: the sender closes at once with a 128 MiB isend in flight while the receiver keeps
 *     testing every 2 ms: every send that completed before still arrives whole and right, the
 *     abandoned one arrives whole and right or fails, within the liveness timeout.
 * Arguments: scenario names or patterns (--list shows them; harness/mp_scenario.h). */
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mp.h"

#define CLOSE_BOUND_S 2.1 /* 100 ms, plus 2 s of draining toward a live peer */
#define NMSG          5
#define MAX_MSG       ((8u << 20) + 5)
#define ABORT_MSG     (128u << 20) /* the abandoned isend (see sender_aborts) */
#define SLOW_TEST_US  2000         /* the slow receivers' pause between two test() calls */
#define STAGGER_MS    2000
#define LIMIT_S       60
#define BUSY_S        10 /* the receiver tests this long after an abort, at most */

static const size_t sizes[NMSG + 1] = {1, 65537, (1u << 20) + 3, 4u << 20, MAX_MSG, ABORT_MSG};

enum { FLAG_STRIKE = 0 }; /* an aborting sender's: when its closeSend began, in us (monotonic) */

struct scenario {
    const char *name, *what;
    int nranks;
    int ring;       /* 1: each rank sends to rank + 1 and receives from rank - 1; 0: 2p -> 2p + 1 */
    int slow;       /* receivers test every 2 ms */
    int stagger_ms; /* rank r tears down r steps after its last request */
    int abort;      /* senders close with their last isend in flight */
};

/* One rank's connections: [0] receives from `from`, [1] sends to `to` (NULL when it has none). */
struct side {
    int to, from;
    void *comm[2];
    char *buf[2];
    void *mh[2];
    size_t bytes;
    struct mp_flow f[2];
};

static size_t size_of(int i, void *arg)
{
    return sizes[i];
}

static void peers_of(const struct scenario *s, int rank, struct side *sd)
{
    sd->to = sd->from = -1;
    if (s->ring) {
        sd->to = (rank + 1) % s->nranks;
        sd->from = (rank + s->nranks - 1) % s->nranks;
    } else if (rank % 2 == 0) {
        sd->to = rank + 1;
    } else {
        sd->from = rank - 1;
    }
}

/* Receivers listen, senders connect; closeListen timed (NCCL closes the listener once the
 * connection is up). */
static int link_up(const struct mp_net *n, struct side *sd, struct mp_closes *t)
{
    void *l = NULL;
    char h[NCCL_NET_HANDLE_MAXSIZE];
    if (sd->from >= 0 && mp_listen_publish(n, 0, &l) != 0)
        return -1;
    mp_barrier();
    if (sd->to >= 0)
        memcpy(h, mp_peer_handle(sd->to, 0), sizeof(h));
    int rc = mp_connect_accept(n, h, sd->to >= 0 ? &sd->comm[1] : NULL, l,
                               sd->from >= 0 ? &sd->comm[0] : NULL, mp_scaled(20));
    if (l)
        MP_CLOSE_TIMED(t, "closeListen", mp_net_close_listen(n, l));
    return rc;
}

/* A stream per comm: every message in flight at once, except in an abort, where each is posted
 * once the one before it completed, so the abandoned 128 MiB isend is the only one in flight. */
static int flows_new(const struct mp_net *n, const struct scenario *s, struct side *sd)
{
    int window = s->abort ? 1 : NMSG;
    size_t stride = (s->abort ? ABORT_MSG : MAX_MSG) + 8192;
    sd->bytes = (size_t)window * stride;
    for (int dir = 0; dir < 2; dir++) {
        if (!sd->comm[dir])
            continue;
        int src = dir ? mp_rank : sd->from;
        if (!(sd->buf[dir] = mp_alloc(sd->bytes)) ||
            !MP_OK(mp_net_regmr(n, sd->comm[dir], sd->buf[dir], sd->bytes, NCCL_PTR_HOST,
                                &sd->mh[dir])))
            return -1;
        sd->f[dir] = (struct mp_flow){.net = n,
                                      .comm = sd->comm[dir],
                                      .is_send = dir,
                                      .count = NMSG + s->abort,
                                      .window = window,
                                      .base = sd->buf[dir],
                                      .stride = stride,
                                      .mh = sd->mh[dir],
                                      .size_fn = size_of,
                                      .seed = (uint64_t)src * 1000,
                                      .check = 1,
                                      .tag = src};
    }
    return 0;
}

static void test_pause(int slow)
{
    if (slow)
        nanosleep(&(struct timespec){0, SLOW_TEST_US * 1000L}, NULL);
    else
        sched_yield();
}

/* One round over this rank's flows: 1 when every one is done, 0 in progress, -1 on an error. */
static int step_all(struct side *sd)
{
    int all = 1;
    for (int dir = 0; dir < 2; dir++) {
        if (!sd->comm[dir])
            continue;
        int r = mp_flow_step(&sd->f[dir]);
        if (r < 0)
            return -1;
        all &= r;
    }
    return all;
}

/* Steps until every flow is done, one fails, or limit_s passes (a slow rank pauses 2 ms between
 * rounds: with one-way pairs a rank has one flow, so that is between two test() calls). 0 when
 * all are done. */
static int run_flows(struct side *sd, int slow, int limit_s)
{
    double deadline = mp_now() + limit_s;
    int r;
    while ((r = step_all(sd)) == 0 && mp_now() < deadline)
        test_pause(slow);
    return r == 1 ? 0 : -1;
}

/* NCCL's order per connection: deregMr, then the close; finalize last. Then the memory goes: an
 * unmapped buffer turns any later access by the plugin into a crash. */
static void teardown(struct mp_net *n, struct side *sd, int dereg, struct mp_closes *t)
{
    for (int dir = 0; dir < 2; dir++) {
        if (!sd->comm[dir])
            continue;
        if (dereg)
            MP_CLOSE_TIMED(t, "deregMr", mp_net_deregmr(n, sd->comm[dir], sd->mh[dir]));
        if (dir)
            MP_CLOSE_TIMED(t, "closeSend", mp_net_close_send(n, sd->comm[dir]));
        else
            MP_CLOSE_TIMED(t, "closeRecv", mp_net_close_recv(n, sd->comm[dir]));
        mp_free(sd->buf[dir], sd->bytes);
    }
    MP_CLOSE_TIMED(t, "finalize", mp_net_fini(n));
}

/* ---- destroy, the sender leaves, staggered ---- */

static int clean_end(struct mp_net *n, const struct scenario *s, int rank, struct side *sd,
                     struct mp_closes *t)
{
    unsigned mark = mp_log_mark();
    int ok = MP_CHECK(run_flows(sd, s->slow && sd->from >= 0, mp_scaled(LIMIT_S)) == 0,
                      "the streams did not finish");
    for (int dir = 0; dir < 2; dir++)
        if (sd->comm[dir])
            ok &= MP_CHECK(sd->f[dir].err == ncclSuccess && sd->f[dir].bad == 0,
                           "%s: %s after %d of %d (%d wrong)", dir ? "send" : "recv",
                           mp_result_str(sd->f[dir].err), sd->f[dir].done, NMSG, sd->f[dir].bad);
    mp_sleep_ms(s->stagger_ms * rank);
    teardown(n, sd, 1, t);
    char label[80];
    snprintf(label, sizeof(label), "%s, teardown %.1f s after its last request",
             sd->comm[1] ? (sd->comm[0] ? "sends and receives" : "sender") : "receiver",
             s->stagger_ms * rank / 1000.0);
    mp_closes_print(t, label);
    /* A peer closing after our last request is a clean end: nothing to WARN about. */
    ok &= MP_CHECK(mp_warns_since(mark) == 0, "a clean end logged %u WARN(s)",
                   mp_warns_since(mark));
    return ok;
}

/* ---- abort ---- */

/* Every message but the last done, the last posted and tested once more (as the proxy would
 * have) before the close comes: 128 MiB is more than the inline write, both kernels (4 MiB send
 * and up to 32 MiB receive buffer per socket, two sockets) and the receiver's I/O thread can
 * take in the microseconds between the two calls, so it is in flight. */
static int sender_aborts(struct mp_net *n, struct side *sd, struct mp_closes *t)
{
    struct mp_flow *f = &sd->f[1];
    double deadline = mp_now() + mp_scaled(LIMIT_S);
    while (f->posted <= NMSG && mp_flow_step(f) == 0 && mp_now() < deadline)
        sched_yield();
    int r = mp_flow_test(f);
    int ok = MP_CHECK(f->err == ncclSuccess && f->done >= NMSG, "before the abort: %s, %d done",
                      mp_result_str(f->err), f->done);
    if (r == 1) /* only if this rank stalled between the two calls: nothing left to abort */
        mp_note("the %u MiB isend finished before the abort", ABORT_MSG >> 20);
    mp_flag_set(mp_rank, FLAG_STRIKE, (long)(mp_now() * 1e6));
    teardown(n, sd, 0, t); /* at once: the isend is abandoned, never tested again */
    mp_closes_print(t, "abort, closeSend with the last isend in flight");
    return ok;
}

/* Every send that completed before the abort arrives whole and right: its bytes were in the
 * kernels, and even an aborting close ends the connection in order behind them. The abandoned
 * one arrives whole and right too or fails, and the stream ends within the liveness timeout of
 * the sender's close. */
static int receiver_outlives(struct mp_net *n, struct side *sd, struct mp_closes *t)
{
    struct mp_flow *f = &sd->f[0];
    int r = run_flows(sd, 1, mp_scaled(LIMIT_S) + BUSY_S);
    MP_CHECK(mp_flag_wait(sd->from, FLAG_STRIKE, 1, mp_scaled(20) * 1000) == 0, "no abort");
    double took = mp_now() - (double)mp_flag_get(sd->from, FLAG_STRIKE) / 1e6;
    long tmo = mp_env_long("NCCL_JACCL_TIMEOUT", 3);
    int ok = MP_CHECK(r == 0 || f->err == ncclRemoteError || f->err == ncclSystemError,
                      "receives: %s after %d of %d", mp_result_str(f->err), f->done, f->count);
    ok &= MP_CHECK(f->done >= NMSG, "only %d of the %d completed sends arrived", f->done, NMSG);
    ok &= MP_CHECK(f->bad == 0, "%d receive(s) succeeded with the wrong bytes", f->bad);
    ok &= MP_CHECK(took < tmo + mp_scaled(2),
                   "the stream ended %.2f s after the abort (timeout %ld s)", took, tmo);
    mp_note("%d of %d received whole, then %s, %.2f s after the abort", f->done, f->count,
            mp_result_str(f->err), took);
    teardown(n, sd, 1, t);
    mp_closes_print(t, "receiver, teardown after the abort");
    return ok;
}

/* ---- scenarios ---- */

static int teardown_rank(int rank, int nranks, void *arg)
{
    const struct scenario *s = arg;
    struct mp_closes t;
    struct mp_net n;
    struct side sd;
    memset(&sd, 0, sizeof(sd));
    mp_closes_init(&t, mp_scaled_s(CLOSE_BOUND_S));
    peers_of(s, rank, &sd);
    if (mp_net_open(&n, 11) != 0 || link_up(&n, &sd, &t) != 0 || flows_new(&n, s, &sd) != 0)
        return 1;
    int ok;
    if (!s->abort)
        ok = clean_end(&n, s, rank, &sd, &t);
    else if (sd.comm[1])
        ok = sender_aborts(&n, &sd, &t);
    else
        ok = receiver_outlives(&n, &sd, &t);
    mp_closes_report(&t);
    mp_net_unload(&n);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    static const struct scenario sc[] = {
            {"destroy-pair", "destroy at once, 2 ranks both ways", 2, 1, 0, 0, 0},
            {"destroy-ring-4", "destroy at once, ring of 4", 4, 1, 0, 0, 0},
            {"leave-pair", "the sender leaves at once, the receiver tests every 2 ms, 1 pair", 2, 0,
             1, 0, 0},
            {"leave-2-pairs", "the sender leaves at once, the receiver tests every 2 ms, 2 pairs",
             4, 0, 1, 0, 0},
            {"stagger-ring-3", "staggered destroy (2 s steps), ring of 3", 3, 1, 0, STAGGER_MS, 0},
            {"abort-pair", "the sender aborts with a 128 MiB isend in flight, 1 pair", 2, 0, 1, 0,
             1},
            {"abort-2-pairs", "the senders abort with a 128 MiB isend in flight, 2 pairs", 4, 0, 1,
             0, 1},
    };
    int failed = 0;
    mp_begin("p2p_teardown", "p2p teardown as NCCL does it: every close call timed", argc, argv);
    for (int i = 0; i < (int)(sizeof(sc) / sizeof(sc[0])); i++)
        failed += mp_run(sc[i].name, sc[i].what, sc[i].nranks, mp_scaled(90), teardown_rank,
                         (void *)&sc[i]);
    return mp_end(failed);
}
