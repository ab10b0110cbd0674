/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p_close_order: a clean job end, where each rank closes as soon as its own requests are done.
 *   - two ranks, each with 32 sends and 32 receives in flight (1 B .. 300 KiB) on one
 *     send/recv comm pair; a rank closes both comms the moment its last test() said done,
 *     without waiting for the other rank (NCCL's proxy does not synchronise either);
 *   - the rank that finishes second must see every one of its requests succeed: its last sends
 *     were taken by the peer before the peer closed, so the peer's close is no error for them;
 *   - the same with two comm pairs interleaved (v11), and through the v8 table;
 *   - each scenario repeats, because which rank finishes second, and how late, varies (before
 *     the fix about 40% of connections failed on TCP, so even the 6 of a slow run would show it).
 * Arguments: scenario names or patterns (--list shows them; harness/mp_scenario.h). */
#include <stdio.h>

#include "mp.h"

#define COUNT   96
#define WINDOW  32
#define MAX_MSG (300u << 10)
#define STRIDE  (MAX_MSG + 4096 + 64)
#define ROUNDS  20 /* connections per scenario; fewer on a slow fabric (JACCL_TEST_SLOW) */
#define MAXRING 2

static const size_t mix_sizes[] = {1, 300u << 10, 4097, 65536, 17, 200000, 128, 299999, 3};
#define NMIX ((int)(sizeof(mix_sizes) / sizeof(mix_sizes[0])))

static size_t size_of(int i, void *arg)
{
    return mix_sizes[(i * 5 + i / NMIX) % NMIX];
}

struct scenario {
    int version, nrings;
};

struct side {
    struct mp_ring ring[MAXRING];
    char *buf[MAXRING][2];
    void *mh[MAXRING][2];
    size_t bytes;
};

static void flows_for(const struct mp_net *n, struct side *sd, int k, int rank, int round,
                      struct mp_flow *f)
{
    for (int dir = 0; dir < 2; dir++) {
        int src = dir ? rank : 1 - rank; /* dir 0 receives from the peer, dir 1 sends */
        f[dir] = (struct mp_flow){.net = n,
                                  .comm = dir ? sd->ring[k].scomm : sd->ring[k].rcomm,
                                  .is_send = dir,
                                  .count = COUNT,
                                  .window = WINDOW,
                                  .base = sd->buf[k][dir],
                                  .stride = STRIDE,
                                  .mh = sd->mh[k][dir],
                                  .size_fn = size_of,
                                  .seed = (uint64_t)(src * 1000000 + round * 1000 + k * 100),
                                  .check = 1,
                                  .tag = src};
    }
}

static int open_side(const struct mp_net *n, struct side *sd, int nrings)
{
    for (int k = 0; k < nrings; k++) {
        if (mp_ring_connect(n, k, &sd->ring[k]) != 0)
            return -1;
        for (int dir = 0; dir < 2; dir++) {
            void *comm = dir ? sd->ring[k].scomm : sd->ring[k].rcomm;
            sd->buf[k][dir] = mp_alloc(sd->bytes);
            MP_OK(mp_net_regmr(n, comm, sd->buf[k][dir], sd->bytes, NCCL_PTR_HOST,
                               &sd->mh[k][dir]));
        }
    }
    return 0;
}

/* NCCL's order once its own work is done: deregister, close, free; no waiting for the peer. */
static void close_side(const struct mp_net *n, struct side *sd, int nrings)
{
    for (int k = 0; k < nrings; k++) {
        for (int dir = 0; dir < 2; dir++) {
            void *comm = dir ? sd->ring[k].scomm : sd->ring[k].rcomm;
            MP_OK(mp_net_deregmr(n, comm, sd->mh[k][dir]));
        }
        mp_ring_close(n, &sd->ring[k]);
        for (int dir = 0; dir < 2; dir++)
            mp_free(sd->buf[k][dir], sd->bytes);
    }
}

/* One connection lifetime: connect, move COUNT messages each way on every pair, close. */
static int one_round(const struct mp_net *n, const struct scenario *s, int rank, int round)
{
    struct side sd = {.bytes = (size_t)WINDOW * STRIDE + 64};
    struct mp_flow f[2 * MAXRING];
    if (open_side(n, &sd, s->nrings) != 0)
        return -1;
    for (int k = 0; k < s->nrings; k++)
        flows_for(n, &sd, k, rank, round, &f[2 * k]);
    int rc = mp_flows_run(f, 2 * s->nrings, mp_scaled(60));
    for (int i = 0; i < 2 * s->nrings; i++)
        MP_CHECK(f[i].err == ncclSuccess && f[i].done == COUNT && f[i].bad == 0,
                 "round %d, pair %d: %s %s after %d of %d (%d wrong)", round, i / 2,
                 f[i].is_send ? "send" : "recv", mp_result_str(f[i].err), f[i].done, COUNT,
                 f[i].bad);
    MP_CHECK(rc == 0 || mp_failures(), "round %d: the flows did not finish", round);
    close_side(n, &sd, s->nrings);
    /* Only the next round's connect waits for the peer, as a new NCCL communicator would; both
     * ranks stop after a round in which either failed. */
    mp_flag_set(rank, 0, mp_failures());
    mp_barrier();
    return mp_flag_get(0, 0) || mp_flag_get(1, 0) ? -1 : 0;
}

static int close_order_rank(int rank, int nranks, void *arg)
{
    const struct scenario *s = arg;
    struct mp_net n;
    if (mp_net_open(&n, s->version) != 0)
        return 1;
    /* Emulated soft-RoCE moves these bytes about a hundred times slower than loopback TCP. */
    long slow = mp_env_long("JACCL_TEST_SLOW", 1);
    int rounds = slow > 1 ? (int)(ROUNDS / slow) : ROUNDS;
    unsigned mark = mp_log_mark();
    int round = 0;
    while (round < rounds && one_round(&n, s, rank, round) == 0)
        round++;
    /* A peer closing after our last request is a clean end: nothing to WARN about. */
    MP_CHECK(mp_warns_since(mark) == 0, "%u WARN(s) logged", mp_warns_since(mark));
    if (round == rounds)
        mp_note("%d rounds of %d messages each way on %d pair(s): every request succeeded", rounds,
                COUNT, s->nrings);
    MP_OK(mp_net_fini(&n));
    return 0;
}

int main(int argc, char **argv)
{
    static struct scenario sc[] = {{11, 1}, {11, 2}, {8, 1}};
    static const char *names[] = {"v11-one-pair", "v11-two-pairs", "v8-one-pair"};
    static const char *whats[] = {"v11, one comm pair", "v11, two comm pairs interleaved",
                                  "v8, one comm pair"};
    int failed = 0;
    mp_begin("p2p_close_order", "each rank closes when its own requests are done: no errors", argc,
             argv);
    for (int i = 0; i < 3; i++)
        failed += mp_run(names[i], whats[i], 2, mp_scaled(120), close_order_rank, &sc[i]);
    return mp_end(failed);
}
