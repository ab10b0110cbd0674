/* SPDX-License-Identifier: BSD-3-Clause */
/* topo_p2p: point-to-point between every ordered pair of ranks, driven the way NCCL's proxy
 * drives the plugin, for the direct-cable topologies of tests/net/topo.sh (one rank per network
 * namespace, --rank/--nranks/--root) and, forked, on one host's loopback.
 *
 *   mp_topo_p2p [-N ranks] [-V version] [scenario...]       the test (forked: 4 ranks on lo;
 *                                                             scenarios by name, pattern, index)
 *   mp_topo_p2p stream A B [-b size] [-n count] [-W window]   ranks A and B stream both ways,
 *                                                             every byte checked; the others idle
 *   mp_topo_p2p bw [-b size] [-n count] [-W window] [-R rounds] A:B ...
 *                                                             one-way bandwidth of each pair
 *
 * The test: every rank listens once per peer (NCCL listens once per receiving connection),
 * the handles go round through the harness (the rendezvous when hosted), then every rank
 * connects to every other rank and accepts from it, all at once, connect and accept retried
 * non-blocking until each returns a comm. Every rank then streams to every other rank while it
 * receives from all of them: sizes 0 B .. 4 MiB (odd ones among them), every byte checked and
 * the bytes behind each receive guarded, some receives posted larger than the message (test()
 * must report the exact size). No barrier comes before the closes: each rank closes its comms
 * as soon as its own requests are done, as NCCL does; the process (and the plugin in it) stays
 * until every rank is done, because another pair's traffic may be relayed through it.
 *
 * Scenarios:
 *   default-device   every listen and connect on the device the harness picks (lo when it is
 *                    a device, else device 0): what NCCL does with one NIC per node;
 *   device-per-peer  rank r listens for peer p on device p % ndev and connects
 *                    to p on device (r + p + 1) % ndev, so listener and connector name
 *                    different devices where a node has several: whatever device NCCL
 *                    names, the connection must work.
 *
 * stream: the fault tests' load: A and B stream -n messages of -b bytes to each other (1 MiB,
 * 1200 by default), and print "streaming" once connected; every other rank loads the plugin,
 * listens like NCCL would, and waits (its plugin may be the relay between A and B).
 *
 * bw: each pair A:B (A sends, B receives) in turn, -R rounds of every pair interleaved; rank 0
 * prints each pair's median MB/s (payload bytes / the receiver's time). */
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp.h"
#include "mp_host.h"
#include "mp_perf.h"

#define MAX_PEERS  (MP_MAX_RANKS - 1)
#define GUARD      8192 /* room behind every receive for the flow's guard bytes */
#define CONNECT_S  30   /* connect + accept of every pair, before scaling */
#define DATA_S     120  /* the data phase */
#define MAX_ROUNDS 64
#define MAX_PAIRS  12
#define V_SECONDS  0 /* bw: the receiver's seconds for the current pair */

enum mode { M_TEST, M_STREAM, M_BW };

struct opts {
    enum mode mode;
    int nranks, version;
    int dev_mode; /* test: 0 default device, 1 device per peer */
    size_t size;  /* stream, bw: bytes per message */
    int count, window, rounds;
    int a, b; /* stream: the two ranks */
    int npairs, pair[MAX_PAIRS][2];
};

/* ---- the test's messages ---- */

static const size_t sizes[] = {0, 1, 3, 4096, 65536, 65537, (1u << 20) + 3, 4u << 20};
#define NSIZES    ((int)(sizeof(sizes) / sizeof(sizes[0])))
#define REPS      2 /* each size this many times per flow */
#define TEST_MAX  (4u << 20)
#define TEST_WIN  2
#define TEST_CAPX 1000 /* every third receive is posted this much larger */

static size_t size_of(int i, void *arg)
{
    return sizes[i % NSIZES];
}

static size_t cap_of(int i, void *arg)
{
    return sizes[i % NSIZES] + (i % 3 == 1 ? TEST_CAPX : 0);
}

/* Message contents name the pair and the scenario, so a message delivered to the wrong peer's
 * receive fails verification. */
static uint64_t seed_of(int from, int to, int salt)
{
    return ((uint64_t)(from + 1) << 40) ^ ((uint64_t)(to + 1) << 24) ^ (uint64_t)salt * 7919;
}

/* ---- one connection per ordered pair ---- */

struct peer {
    int rank;
    int ldev, cdev; /* device we listen on for it, and connect to it on */
    void *lcomm;
    char h[NCCL_NET_HANDLE_MAXSIZE]; /* our copy of its handle for us, for every retry */
    void *s, *r;                     /* send comm to it, recv comm from it */
    int want_s, want_r;
    char *sbuf, *rbuf;
    size_t bytes;
    void *smh, *rmh;
};

struct conns {
    struct mp_net n;
    int ndev;
    struct peer p[MAX_PEERS];
    int np;
};

/* The slot a rank publishes its listen handle for `peer` in: its index among the others. */
static int slot_for(int self, int peer)
{
    return peer < self ? peer : peer - 1;
}

static int dev_for(const struct conns *c, int dev_mode, int rank, int peer, int listen)
{
    if (dev_mode == 0 || c->ndev < 2)
        return c->n.dev;
    return listen ? peer % c->ndev : (rank + peer + 1) % c->ndev;
}

/* Loads the plugin, and listens once for every peer (idle ranks of stream/bw too: NCCL's ranks
 * all do), publishing each handle in its slot. Then the barrier that exchanges them. */
static int open_and_listen(struct conns *c, const struct opts *o, int rank, int nranks)
{
    memset(c, 0, sizeof(*c));
    if (mp_net_open(&c->n, o->version) != 0 || !MP_OK(mp_net_devices(&c->n, &c->ndev)))
        return -1;
    for (int q = 0; q < nranks; q++) {
        if (q == rank)
            continue;
        struct peer *p = &c->p[c->np++];
        char h[NCCL_NET_HANDLE_MAXSIZE] = {0};
        p->rank = q;
        p->ldev = dev_for(c, o->dev_mode, rank, q, 1);
        p->cdev = dev_for(c, o->dev_mode, rank, q, 0);
        if (!MP_OK(mp_net_listen(&c->n, p->ldev, h, &p->lcomm)) ||
            !MP_CHECK(p->lcomm, "listen for rank %d gave no comm", q))
            return -1;
        mp_publish_handle(slot_for(rank, q), h);
    }
    mp_barrier();
    for (int i = 0; i < c->np; i++)
        memcpy(c->p[i].h, mp_peer_handle(c->p[i].rank, slot_for(c->p[i].rank, rank)),
               NCCL_NET_HANDLE_MAXSIZE);
    return 0;
}

/* Every wanted connect and accept at once, each retried until it returns a comm, as NCCL's
 * proxy does; then the listen comms are closed. */
static int connect_all(struct conns *c, int rank)
{
    double t0 = mp_now(), deadline = t0 + mp_scaled(CONNECT_S);
    for (;;) {
        int pending = 0;
        for (int i = 0; i < c->np; i++) {
            struct peer *p = &c->p[i];
            if (p->want_s && !p->s) {
                if (!MP_CHECK(mp_net_connect(&c->n, p->cdev, p->h, &p->s) == ncclSuccess,
                              "connect to rank %d (device %d) failed", p->rank, p->cdev))
                    return -1;
                pending += !p->s;
            }
            if (p->want_r && !p->r) {
                if (!MP_CHECK(mp_net_accept(&c->n, p->lcomm, &p->r) == ncclSuccess,
                              "accept from rank %d (device %d) failed", p->rank, p->ldev))
                    return -1;
                pending += !p->r;
            }
        }
        if (!pending)
            break;
        if (mp_now() > deadline) {
            for (int i = 0; i < c->np; i++) {
                struct peer *p = &c->p[i];
                MP_CHECK(!p->want_s || p->s, "connect %d -> %d not done after %d s", rank, p->rank,
                         mp_scaled(CONNECT_S));
                MP_CHECK(!p->want_r || p->r, "accept %d <- %d not done after %d s", rank, p->rank,
                         mp_scaled(CONNECT_S));
            }
            return -1;
        }
        mp_poll_pause(0);
    }
    for (int i = 0; i < c->np; i++) {
        MP_OK(mp_net_close_listen(&c->n, c->p[i].lcomm));
        c->p[i].lcomm = NULL;
    }
    mp_note("rank %d: %s connected in %.2f s", rank, c->np ? "every wanted pair" : "nothing",
            mp_now() - t0);
    return 0;
}

/* Buffers for `window` messages of up to `max` bytes each way, registered on the comms. */
static int buffers(struct conns *c, size_t max, int window)
{
    for (int i = 0; i < c->np; i++) {
        struct peer *p = &c->p[i];
        if (!p->s && !p->r)
            continue;
        p->bytes = (max + GUARD) * (size_t)window;
        p->sbuf = p->s ? mp_alloc(p->bytes) : NULL;
        p->rbuf = p->r ? mp_alloc(p->bytes) : NULL;
        if (!MP_CHECK((!p->s || p->sbuf) && (!p->r || p->rbuf), "%zu bytes of buffers", p->bytes))
            return -1;
        if (p->s)
            MP_OK(mp_net_regmr(&c->n, p->s, p->sbuf, p->bytes, NCCL_PTR_HOST, &p->smh));
        if (p->r)
            MP_OK(mp_net_regmr(&c->n, p->r, p->rbuf, p->bytes, NCCL_PTR_HOST, &p->rmh));
    }
    return mp_failures() ? -1 : 0;
}

/* This rank's comms, as soon as its own requests are done (no barrier: NCCL has none here). */
static void close_mine(struct conns *c)
{
    for (int i = 0; i < c->np; i++) {
        struct peer *p = &c->p[i];
        if (p->lcomm)
            MP_OK(mp_net_close_listen(&c->n, p->lcomm));
        if (p->smh)
            MP_OK(mp_net_deregmr(&c->n, p->s, p->smh));
        if (p->rmh)
            MP_OK(mp_net_deregmr(&c->n, p->r, p->rmh));
        if (p->s)
            MP_OK(mp_net_close_send(&c->n, p->s));
        if (p->r)
            MP_OK(mp_net_close_recv(&c->n, p->r));
        p->lcomm = p->s = p->r = p->smh = p->rmh = NULL;
    }
}

/* After every rank is done (its plugin may have been relaying others' traffic until then). */
static void finish(struct conns *c)
{
    mp_barrier();
    MP_OK(mp_net_fini(&c->n));
    for (int i = 0; i < c->np; i++) {
        mp_free(c->p[i].sbuf, c->p[i].bytes);
        mp_free(c->p[i].rbuf, c->p[i].bytes);
    }
    mp_net_unload(&c->n);
}

static struct mp_flow flow_send(struct conns *c, struct peer *p, int rank, int salt)
{
    return (struct mp_flow){.net = &c->n,
                            .comm = p->s,
                            .is_send = 1,
                            .base = p->sbuf,
                            .stride = p->bytes / (size_t)TEST_WIN,
                            .mh = p->smh,
                            .seed = seed_of(rank, p->rank, salt),
                            .check = 1,
                            .tag = rank};
}

static struct mp_flow flow_recv(struct conns *c, struct peer *p, int rank, int salt)
{
    return (struct mp_flow){.net = &c->n,
                            .comm = p->r,
                            .is_send = 0,
                            .base = p->rbuf,
                            .stride = p->bytes / (size_t)TEST_WIN,
                            .mh = p->rmh,
                            .seed = seed_of(p->rank, rank, salt),
                            .check = 1,
                            .tag = p->rank};
}

/* ---- the test ---- */

static int test_rank(int rank, int nranks, void *arg)
{
    const struct opts *o = arg;
    struct conns c;
    if (open_and_listen(&c, o, rank, nranks) != 0)
        return 1;
    unsigned mark = mp_log_mark();
    for (int i = 0; i < c.np; i++)
        c.p[i].want_s = c.p[i].want_r = 1;
    if (rank == 0)
        mp_note("%d ranks, %d devices here; every ordered pair, %d sizes 0 B .. 4 MiB x %d each",
                nranks, c.ndev, NSIZES, REPS);
    if (connect_all(&c, rank) != 0 || buffers(&c, TEST_MAX + TEST_CAPX, TEST_WIN) != 0)
        return 1;
    struct mp_flow f[2 * MAX_PEERS];
    for (int i = 0; i < c.np; i++) {
        f[2 * i] = flow_send(&c, &c.p[i], rank, o->dev_mode);
        f[2 * i + 1] = flow_recv(&c, &c.p[i], rank, o->dev_mode);
        f[2 * i + 1].cap_fn = cap_of;
        for (int k = 0; k < 2; k++) {
            f[2 * i + k].count = NSIZES * REPS;
            f[2 * i + k].window = TEST_WIN;
            f[2 * i + k].size_fn = size_of;
        }
    }
    double t0 = mp_now();
    int rc = mp_flows_run(f, 2 * c.np, mp_scaled(DATA_S));
    double took = mp_now() - t0;
    for (int i = 0; i < c.np; i++) {
        MP_CHECK(f[2 * i].err == ncclSuccess && f[2 * i].done == f[2 * i].count,
                 "send %d -> %d: %s, %d of %d done", rank, c.p[i].rank, mp_result_str(f[2 * i].err),
                 f[2 * i].done, f[2 * i].count);
        MP_CHECK(f[2 * i + 1].err == ncclSuccess && f[2 * i + 1].done == f[2 * i + 1].count,
                 "recv %d <- %d: %s, %d of %d done", rank, c.p[i].rank,
                 mp_result_str(f[2 * i + 1].err), f[2 * i + 1].done, f[2 * i + 1].count);
        MP_CHECK(f[2 * i + 1].bad == 0, "recv %d <- %d: %d bad messages", rank, c.p[i].rank,
                 f[2 * i + 1].bad);
    }
    if (rc == 0)
        mp_note("rank %d: sent to and received from %d ranks, every byte right, %.2f s", rank, c.np,
                took);
    close_mine(&c);
    MP_CHECK(mp_warns_since(mark) == 0, "a clean run logged %u WARN(s)", mp_warns_since(mark));
    finish(&c);
    return rc ? 1 : 0;
}

/* ---- stream: the fault tests' load ---- */

static int stream_rank(int rank, int nranks, void *arg)
{
    const struct opts *o = arg;
    struct conns c;
    if (open_and_listen(&c, o, rank, nranks) != 0)
        return 1;
    int other = rank == o->a ? o->b : rank == o->b ? o->a : -1;
    struct peer *p = NULL;
    for (int i = 0; i < c.np; i++)
        if (c.p[i].rank == other) {
            p = &c.p[i];
            p->want_s = p->want_r = 1;
        }
    int rc = 0;
    if (connect_all(&c, rank) != 0 || buffers(&c, o->size, o->window) != 0)
        return 1;
    if (p) {
        mp_note("rank %d: streaming to rank %d and from it: %d x %zu bytes each way", rank, other,
                o->count, o->size);
        struct mp_flow f[2] = {flow_send(&c, p, rank, 0), flow_recv(&c, p, rank, 0)};
        for (int k = 0; k < 2; k++) {
            f[k].count = o->count;
            f[k].window = o->window;
            f[k].stride = p->bytes / (size_t)o->window;
            f[k].size = o->size;
        }
        double t0 = mp_now();
        rc = mp_flows_run(f, 2, mp_scaled(DATA_S) + o->count / 10);
        MP_CHECK(rc == 0, "stream %d <-> %d: send %s (%d of %d), recv %s (%d of %d)", rank, other,
                 mp_result_str(f[0].err), f[0].done, o->count, mp_result_str(f[1].err), f[1].done,
                 o->count);
        MP_CHECK(f[1].bad == 0, "stream %d <- %d: %d bad messages", rank, other, f[1].bad);
        if (rc == 0)
            mp_note("rank %d: stream done, %.1f MB/s received", rank,
                    (double)o->size * o->count / (mp_now() - t0) / 1e6);
    } else {
        mp_note("rank %d: idle (a possible relay) while %d and %d stream", rank, o->a, o->b);
    }
    close_mine(&c);
    if (rc != 0 || mp_failures())
        return 1; /* the peers learn it at the rendezvous and stop */
    finish(&c);
    return 0;
}

/* ---- bw: one-way bandwidth of chosen pairs, in interleaved rounds ---- */

static int bw_rank(int rank, int nranks, void *arg)
{
    const struct opts *o = arg;
    struct conns c;
    if (open_and_listen(&c, o, rank, nranks) != 0)
        return 1;
    for (int k = 0; k < o->npairs; k++)
        for (int i = 0; i < c.np; i++) {
            if (rank == o->pair[k][0] && c.p[i].rank == o->pair[k][1])
                c.p[i].want_s = 1;
            if (rank == o->pair[k][1] && c.p[i].rank == o->pair[k][0])
                c.p[i].want_r = 1;
        }
    if (connect_all(&c, rank) != 0 || buffers(&c, o->size, o->window) != 0)
        return 1;
    static double secs[MAX_PAIRS][MAX_ROUNDS];
    int rc = 0;
    for (int round = 0; round < o->rounds && rc == 0; round++)
        for (int k = 0; k < o->npairs && rc == 0; k++) {
            int from = o->pair[k][0], to = o->pair[k][1];
            struct peer *p = NULL;
            for (int i = 0; i < c.np; i++)
                if ((rank == from && c.p[i].rank == to) || (rank == to && c.p[i].rank == from))
                    p = &c.p[i];
            mp_barrier(); /* the receiver writes V_SECONDS only after this one */
            if (p) {
                struct mp_flow f = rank == from ? flow_send(&c, p, rank, round)
                                                : flow_recv(&c, p, rank, round);
                f.count = o->count;
                f.window = o->window;
                f.stride = p->bytes / (size_t)o->window;
                f.size = o->size;
                f.check = 0; /* timed; the test mode checks the bytes */
                double t0 = mp_now();
                rc = mp_flows_run(&f, 1, mp_scaled(DATA_S));
                MP_CHECK(rc == 0, "bw %d -> %d: %s", from, to, mp_result_str(f.err));
                if (rank == to)
                    mp_value_set(V_SECONDS, mp_now() - t0);
            }
            mp_barrier();
            secs[k][round] = mp_value_get(to, V_SECONDS);
        }
    if (rank == 0 && rc == 0) {
        printf("# bw: one-way, %d x %zu bytes per measurement, window %d, median of %d rounds\n",
               o->count, o->size, o->window, o->rounds);
        printf("#%6s %10s %10s %10s\n", "pair", "MB/s", "min", "max");
        for (int k = 0; k < o->npairs; k++) {
            double mb[MAX_ROUNDS];
            for (int r = 0; r < o->rounds; r++)
                mb[r] = (double)o->size * o->count / secs[k][r] / 1e6;
            double med = mp_median(mb, o->rounds); /* sorts mb */
            printf("  %2d->%-2d %10.1f %10.1f %10.1f\n", o->pair[k][0], o->pair[k][1], med, mb[0],
                   mb[o->rounds - 1]);
        }
        fflush(stdout);
    }
    close_mine(&c);
    if (rc != 0)
        return 1;
    finish(&c);
    return 0;
}

/* ---- options ---- */

static void usage(void)
{
    fprintf(stderr, "usage: mp_topo_p2p [-N ranks] [-V version] [scenario...]\n"
                    "       mp_topo_p2p stream A B [-b size] [-n count] [-W window]\n"
                    "       mp_topo_p2p bw [-b size] [-n count] [-W window] [-R rounds] A:B ...\n");
    mp_host_usage();
}

static int parse_rank(const char *s, int nranks, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < 0 || v >= nranks)
        return -1;
    *out = (int)v;
    return 0;
}

/* Options, then the mode's words; `pos` gets the test's scenario words (argv[0] first). */
static int parse(int argc, char **argv, struct opts *o, char **pos, int *npos)
{
    *o = (struct opts){.mode = M_TEST,
                       .nranks = mp_hosted() ? mp_host_get()->nranks : 4,
                       .version = JACCL_ABI_NEWEST,
                       .size = 1u << 20,
                       .count = 1200,
                       .window = 4,
                       .rounds = 5};
    int first = 1, c, bad = 0, nlist = 0;
    for (int i = 1, k = 0; i < argc; i++) {
        if (strcmp(argv[i], "--list") == 0)
            k++;
        else
            argv[i - k] = argv[i];
        if (i == argc - 1) {
            argc -= k;
            nlist = k > 0;
        }
    }
    argv[argc] = NULL;
    if (argc > 1 && strcmp(argv[1], "stream") == 0)
        o->mode = M_STREAM;
    else if (argc > 1 && strcmp(argv[1], "bw") == 0)
        o->mode = M_BW;
    if (o->mode == M_BW) {
        o->size = 4u << 20;
        o->count = 16;
    }
    if (o->mode != M_TEST)
        first = 2;
    optind = first;
    while ((c = getopt(argc, argv, "N:V:b:n:W:R:")) != -1) {
        switch (c) {
        case 'N':
            if (!mp_hosted())
                o->nranks = atoi(optarg);
            break;
        case 'V':
            o->version = atoi(optarg);
            break;
        case 'b':
            bad |= mp_perf_size(optarg, &o->size);
            break;
        case 'n':
            o->count = atoi(optarg);
            break;
        case 'W':
            o->window = atoi(optarg);
            break;
        case 'R':
            o->rounds = atoi(optarg);
            break;
        default:
            return -1;
        }
    }
    pos[0] = argv[0];
    *npos = nlist + 1; /* --list (taken out before getopt) goes to the scenario filter */
    if (nlist)
        pos[1] = "--list";
    for (int i = optind; i < argc; i++)
        pos[(*npos)++] = argv[i];
    if (o->nranks < 2 || o->nranks > MAX_PEERS + 1 || o->nranks > MP_SLOTS + 1) {
        fprintf(stderr, "2 .. %d ranks (one listen slot per peer)\n", MP_SLOTS + 1);
        return -1;
    }
    if (bad || o->count < 1 || o->window < 1 || o->window > MP_MAX_WINDOW || o->rounds < 1 ||
        o->rounds > MAX_ROUNDS || o->version < JACCL_ABI_OLDEST || o->version > JACCL_ABI_NEWEST)
        return -1;
    if (o->mode == M_STREAM)
        return *npos == 3 && parse_rank(pos[1], o->nranks, &o->a) == 0 &&
                               parse_rank(pos[2], o->nranks, &o->b) == 0 && o->a != o->b
                       ? 0
                       : -1;
    if (o->mode == M_BW) {
        for (int i = 1; i < *npos; i++) {
            char *colon = strchr(pos[i], ':');
            if (!colon || o->npairs == MAX_PAIRS)
                return -1;
            *colon = 0;
            if (parse_rank(pos[i], o->nranks, &o->pair[o->npairs][0]) ||
                parse_rank(colon + 1, o->nranks, &o->pair[o->npairs][1]) ||
                o->pair[o->npairs][0] == o->pair[o->npairs][1])
                return -1;
            o->npairs++;
        }
        return o->npairs ? 0 : -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o;
    char *pos[64];
    int npos = 0;
    int hosted = mp_host_setup(&argc, argv);
    if (hosted < 0 || argc > 60 || parse(argc, argv, &o, pos, &npos) != 0) {
        usage();
        return 2;
    }
    if (hosted) /* the plugin picks the interfaces, unless told; loopback is for forked ranks */
        setenv("NCCL_JACCL_SOCKET_IFNAME", "", 0);
    int failed = 0;
    if (o.mode == M_STREAM) {
        mp_begin("topo_p2p", "a long stream between two ranks, the others idle", 0, NULL);
        char what[64];
        snprintf(what, sizeof(what), "stream %d <-> %d", o.a, o.b);
        failed = mp_run("stream", what, o.nranks, mp_scaled(DATA_S + CONNECT_S) + o.count / 10 + 30,
                        stream_rank, &o);
    } else if (o.mode == M_BW) {
        mp_begin("topo_p2p", "one-way bandwidth of chosen pairs", 0, NULL);
        failed = mp_run("bw", "one-way bandwidth of chosen pairs", o.nranks,
                        mp_scaled(DATA_S + CONNECT_S) * o.rounds, bw_rank, &o);
    } else {
        static const struct {
            const char *name, *what;
        } sc[] = {{"default-device", "all pairs, default device"},
                  {"device-per-peer", "all pairs, device per peer"}};
        mp_begin("topo_p2p", "p2p between every ordered pair of ranks, every byte checked", npos,
                 pos);
        for (int s = 0; s < 2; s++) {
            char what[96];
            o.dev_mode = s;
            snprintf(what, sizeof(what), "%s, ncclNetPlugin_v%d", sc[s].what, o.version);
            failed += mp_run(sc[s].name, what, o.nranks, mp_scaled(CONNECT_S + DATA_S + 30),
                             test_rank, &o);
        }
    }
    return mp_end(failed);
}
