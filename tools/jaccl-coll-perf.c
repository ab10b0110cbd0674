/* SPDX-License-Identifier: BSD-3-Clause */
/* jaccl-coll-perf: CollNet benchmarks through the plugin's ABI, in nccl-tests' columns.
 *
 *   jaccl-coll-perf allreduce|reducescatter|allgather [-N ranks] [-b 128K] [-e 1M] [-f 2] [-L]
 *                   [-n iters] [-w warmup] [-W 1,8] [-a auto|ring|mesh|rhd] [-r wires] [-V 11]
 *   jaccl-coll-perf ceiling [-N ranks] [-b ..] [-e ..] [-f ..] [-L]
 *   jaccl-coll-perf allreduce|reducescatter|allgather -P [-R rounds] [-a ring,mesh,rhd] [-c] ...
 *
 *   jaccl-coll-perf MODE --rank R --nranks N --root HOST:PORT [options]   one rank per host
 *
 * N local ranks are forked (or this process is rank R of N on separate hosts, joined through
 * the rendezvous of mp_host.h, also under mpirun); each loads the plugin by name (LD_LIBRARY_PATH),
 * builds a CollNet group like NCCL's proxy, and runs float32 sum collectives out of place, `window`
 * requests in flight (NCCL keeps up to 64 per collComm). The default is the regime NCCL's CollNet
 * proxy creates: it cuts every collective into steps of 32 KiB (its smallest per channel) to
 * 512 KiB with up to 8 in flight, so sizes 32 KiB .. 1 MiB, each with 1 and with 8 in flight (-W
 * takes a list: one column group per window, the first one in nccl-tests' place). -L is the long
 * sweep, 4 KiB .. 256 MiB by 4, for what a single large call costs. Between tests of a request each
 * rank calls sched_yield(), as NCCL's proxy progress thread does; -p US sleeps US microseconds
 * instead (what the test suites do, so that 8 ranks on 2 cores do not spin). size = bytes of the
 * whole vector (all-reduce), of the nranks * bytesPerRank input (reduce-scatter) or output
 * (all-gather); count = its floats. time = the slowest rank's mean per operation; algbw = size /
 * time; busbw = algbw * 2(n-1)/n (all-reduce) or (n-1)/n (the other two), like nccl-tests. #wrong
 * counts result elements that differ from the exact expected value (data are small integers, so
 * every summation order gives the same bits). The last columns, one per window, are the CPU time of
 * all ranks per operation (cpu_us: each rank's getrusage over its timed operations, every thread of
 * it, summed; tools/mpi/mpi-coll.c prints the same for Open MPI). With NCCL_JACCL_DEBUG_COUNTERS=1
 * each row is followed by the plugin's debug counters (util/counters.h) per operation and rank, for
 * each window: system calls, wake-ups, control messages, progress-thread rounds, test() calls,
 * registry locks.
 *
 * -P: the tuner's model checked (docs/tuner.md): -R rounds (default 5), each one sweep per
 * algorithm with one operation at a time, interleaved; each size's median beside the model's time
 * for that algorithm, built as a communicator's tuner builds it (float32; the ranks of this host
 * sharing its cores). -c measures the link and hop in every round through jaccl's own p2p (a
 * token around the ring; 4 MiB exchanges with both neighbours, over NCCL_JACCL_NSOCKS lanes and
 * over one, from one buffer and in turn from 64 MiB ones, among the group's own ranks,
 * harness/mp_calib.c) and uses their medians instead of the devices' or the knobs' figures: the
 * values to give NCCL_JACCL_TUNER_LINK_MBPS, _MEM_MBPS, _LANE_MBPS and _LAT_NS. -q CORES: each
 * round first waits (2 minutes at most) for a second in which other processes used fewer than
 * CORES cores, and rounds are run (3 x -R at most) until -R of them ran while other processes
 * used fewer than CORES cores; the -R quietest are reported.
 *
 * ceiling: the plain socket ring exchange the collectives are judged against. Every rank sends
 * `size` bytes to rank+1 and receives `size` from rank-1 at the same time over blocking TCP
 * sockets on 127.0.0.1 (between the hosts' addresses when hosted); GB/s = bytes per rank per
 * direction / time (the slowest rank). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "coll_harness.h"
#include "core/tuner.h"
#include "mp_calib.h"
#include "mp_cnt.h"
#include "mp_host.h"
#include "mp_perf.h"

#define MAX_WINDOW 64
#define MAX_WINS   4               /* windows measured side by side (-W list) */
#define V_TIME     0               /* per-rank value: seconds per operation */
#define V_CNT      1               /* V_CNT + CNT_*: a rank's debug counters per operation */
#define V_CPU      (V_CNT + CNT_N) /* a rank's CPU seconds per operation, all its threads */
#define F_WRONG    1               /* per-rank flags */
#define F_PORT     2

struct opts {
    int kind; /* 0 allreduce, 1 reducescatter, 2 allgather, 3 ceiling */
    int nranks, iters, warmup, version, wires;
    int window[MAX_WINS], nwin; /* requests in flight, one column group each */
    size_t min_bytes, max_bytes, factor;
    const char *algo;
    int predict, rounds; /* -P: the tuner's model beside the measured times, -R rounds */
    int calibrate;       /* -c: the model's link and hop measured in every round */
    double quiet;        /* -q: before a round, wait for a second with less foreign load */
    double *record;      /* where rank 0 keeps each size's time (-P), in shared memory */
};

/* Debug-counter groups shown per operation and rank (the plugin's names, util/counters.h). */
enum {
    CNT_TX,
    CNT_RX_POLL,
    CNT_RX_IO,
    CNT_WAKE,
    CNT_READY,
    CNT_CTRL,
    CNT_THREAD,
    CNT_TEST,
    CNT_REG,
    CNT_N
};
static const char *const cnt_src[CNT_N][4] = {
        [CNT_TX] = {"sendmsg"},         [CNT_RX_POLL] = {"recvmsg_poll"},
        [CNT_RX_IO] = {"recvmsg_io"},   [CNT_WAKE] = {"epoll_wake", "eventfd_wake", "cq_signal"},
        [CNT_READY] = {"poll_ready"},   [CNT_CTRL] = {"coll_ctrl"},
        [CNT_THREAD] = {"coll_thread"}, [CNT_TEST] = {"test"},
        [CNT_REG] = {"reg_lock"},
};
static const char *const cnt_label[CNT_N] = {
        "sendmsg",       "recvmsg(poller)", "recvmsg(io thread)",
        "wake-ups",      "epoll(poller)",   "control msgs",
        "thread rounds", "test()",          "registry locks"};

/* ---- shared reporting ---- */

static void put_time(double t)
{
    mp_value_set(V_TIME, t);
}

static double max_time(int nranks)
{
    double m = 0;
    for (int r = 0; r < nranks; r++) {
        double t = mp_value_get(r, V_TIME);
        m = t > m ? t : m;
    }
    return m;
}

static int iters_for(const struct opts *o, size_t size)
{
    if (o->iters > 0)
        return o->iters;
    size_t n = (256u << 20) / (size ? size : 1);
    return n < 5 ? 5 : n > 200 ? 200 : (int)n;
}

/* ---- collectives ---- */

static float value(int r, size_t j)
{
    return (float)((int)((j * 7 + (size_t)r * 3) % 13) - 6);
}

struct bench {
    struct cn n;
    struct cn_buf s, r;
    const struct opts *o;
    struct mp_cnt cnt;              /* the plugin's debug counters, when asked for */
    double per_op[MAX_WINS][CNT_N]; /* rank 0: counters per operation and rank, each window */
    double cpu[MAX_WINS];           /* rank 0: every rank's CPU seconds per operation, summed */
};

/* Sizes of one step: count of the whole vector and floats per rank (multiples of nranks). */
static size_t per_rank(const struct opts *o, size_t size)
{
    return o->kind == 0 ? size / 4 : size / 4 / (size_t)o->nranks;
}

static void fill(struct bench *b, size_t pr)
{
    float *s = (float *)b->s.p;
    size_t n = b->o->kind == 0 ? pr : b->o->kind == 1 ? pr * (size_t)b->o->nranks : pr;
    size_t base = b->o->kind == 2 ? (size_t)mp_rank * pr : 0;
    for (size_t i = 0; i < n; i++)
        s[i] = value(mp_rank, base + i);
}

static long count_wrong(struct bench *b, size_t pr)
{
    const float *out = (const float *)b->r.p;
    int P = b->o->nranks, kind = b->o->kind;
    size_t n = kind == 1 ? pr : kind == 0 ? pr : pr * (size_t)P;
    long wrong = 0;
    for (size_t i = 0; i < n; i++) {
        float want = 0;
        if (kind == 2) {
            want = value((int)(i / pr), i);
        } else {
            size_t j = kind == 1 ? (size_t)mp_rank * pr + i : i;
            for (int q = 0; q < P; q++)
                want += value(q, j);
        }
        wrong += out[i] != want;
    }
    return wrong;
}

static ncclResult_t issue(struct bench *b, size_t pr, void **req)
{
    size_t P = (size_t)b->o->nranks, bpr = pr * 4;
    if (b->o->kind == 0)
        return cn_allreduce(&b->n, b->s.p, b->r.p, pr, ncclFloat32, ncclSum, b->s.mh, b->r.mh, req);
    if (b->o->kind == 1)
        return cn_reducescatter(&b->n, b->s.p, bpr * P, b->s.mh, b->r.p, bpr, 0, bpr * P,
                                ncclFloat32, ncclSum, b->r.mh, req);
    return cn_allgather(&b->n, b->s.p, b->r.p, bpr * P, b->r.mh, bpr, 0, bpr * P, b->s.mh, req);
}

/* `iters` operations with up to `window` in flight; seconds per operation, or -1. */
static double run_ops(struct bench *b, size_t pr, int iters, int w)
{
    void *req[MAX_WINDOW];
    int head = 0, tail = 0;
    double t0 = mp_now();
    while (head < iters) {
        if (tail < iters && tail - head < w) {
            void *r = NULL;
            if (issue(b, pr, &r) != ncclSuccess)
                return -1;
            if (r) {
                req[tail++ % MAX_WINDOW] = r;
                continue;
            }
        }
        if (cn_wait(&b->n, req[head++ % MAX_WINDOW], 600) != ncclSuccess)
            return -1;
    }
    return (mp_now() - t0) / iters;
}

/* time(us) algbw busbw of one window's column group */
static void print_times(const struct opts *o, size_t size, double t)
{
    double n = o->nranks, algbw = (double)size / t / 1e9;
    double busbw = algbw * (o->kind == 0 ? 2 * (n - 1) / n : (n - 1) / n);
    printf(" %10.1f %7.2f %7.2f", t * 1e6, algbw, busbw);
}

/* nccl-tests' columns for the first window, then one group per further window. */
/* nccl-tests' columns for the first window, then one group per further window, then the CPU
 * time of all ranks per operation for each window (last, so that the columns before keep
 * their places). */
static void print_row(const struct opts *o, size_t size, const double *t, long wrong,
                      const double *cpu)
{
    static const char *const op[] = {"sum", "sum", "none"};
    printf("%12zu %12zu %8s %6s", size, size / 4, "float", op[o->kind]);
    print_times(o, size, t[0]);
    printf(" %6ld", wrong);
    for (int i = 1; i < o->nwin; i++)
        print_times(o, size, t[i]);
    for (int i = 0; i < o->nwin; i++)
        printf(" %10.1f", cpu[i] * 1e6);
    printf("\n");
    fflush(stdout);
}

/* This process's CPU seconds so far: its thread and the plugin's (I/O, progress). */
static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
}

static void counters_now(const struct bench *b, double *out)
{
    for (int g = 0; g < CNT_N; g++)
        out[g] = mp_cnt_sum(&b->cnt, cnt_src[g]);
}

/* Rank 0: the ranks' counters per operation, averaged over the ranks (after the barrier). */
static void gather_counters(struct bench *b, int win)
{
    for (int g = 0; g < CNT_N; g++) {
        double sum = 0;
        for (int r = 0; r < b->o->nranks; r++)
            sum += mp_value_get(r, V_CNT + g);
        b->per_op[win][g] = sum / b->o->nranks;
    }
}

static void print_counters(const struct bench *b, size_t size)
{
    for (int i = 0; i < b->o->nwin; i++) {
        printf("#   per op and rank, %zu B, W%d:", size, b->o->window[i]);
        for (int g = 0; g < CNT_N; g++)
            printf(" %s %.2f%s", cnt_label[g], b->per_op[i][g], g + 1 < CNT_N ? "," : "\n");
    }
}

/* Warm-up and timed operations with `w` in flight (column group `win`): the slowest rank's
 * seconds per operation (read after the barrier by every rank), or -1. */
static double timed(struct bench *b, size_t pr, size_t real, int win)
{
    int w = b->o->window[win], iters = iters_for(b->o, real);
    double c0[CNT_N], c1[CNT_N];
    if (run_ops(b, pr, b->o->warmup, w) < 0)
        return -1;
    mp_barrier();
    counters_now(b, c0);
    double cpu0 = cpu_seconds(), t = run_ops(b, pr, iters, w);
    if (t < 0)
        return -1;
    mp_value_set(V_CPU, (cpu_seconds() - cpu0) / iters);
    counters_now(b, c1);
    put_time(t);
    for (int g = 0; g < CNT_N; g++)
        mp_value_set(V_CNT + g, (c1[g] - c0[g]) / iters);
    mp_barrier();
    double m = max_time(b->o->nranks);
    if (mp_rank == 0) {
        gather_counters(b, win);
        b->cpu[win] = 0;
        for (int r = 0; r < b->o->nranks; r++)
            b->cpu[win] += mp_value_get(r, V_CPU);
    }
    mp_barrier(); /* nobody publishes the next time before everyone read this one */
    return m;
}

static int bench_size(struct bench *b, size_t size, int idx)
{
    const struct opts *o = b->o;
    size_t pr = per_rank(o, size);
    size_t real = o->kind == 0 ? pr * 4 : pr * 4 * (size_t)o->nranks;
    fill(b, pr);
    double t[MAX_WINS];
    for (int i = 0; i < o->nwin; i++)
        if ((t[i] = timed(b, pr, real, i)) < 0)
            return -1;
    /* The timed operations all share one pair of buffers, which NCCL never does with operations
     * in flight together (each uses its own staging slot), so their output is not a result.
     * The check runs one more operation alone, on a cleared output. */
    memset(b->r.p, 0xff, o->kind == 2 || o->kind == 0 ? real : pr * 4);
    if (run_ops(b, pr, 1, 1) < 0)
        return -1;
    mp_flag_set(mp_rank, F_WRONG, count_wrong(b, pr));
    mp_barrier();
    long wrong = 0;
    for (int r = 0; r < o->nranks; r++)
        wrong += mp_flag_get(r, F_WRONG);
    if (mp_rank == 0 && o->record)
        o->record[idx] = t[0];
    else if (mp_rank == 0)
        print_row(o, real, t, wrong, b->cpu);
    if (mp_rank == 0 && !o->record && mp_cnt_on(&b->cnt))
        print_counters(b, real);
    mp_barrier();
    return wrong ? -2 : 0;
}

static int coll_rank(int rank, int nranks, void *arg)
{
    const struct opts *o = arg;
    struct bench b = {.o = o};
    cn_config(o->algo, o->wires);
    mp_cnt_ask(&b.cnt, "jaccl-coll-perf");
    int opened = cn_open_group(&b.n, o->version, rank, nranks) == 0;
    mp_cnt_map(&b.cnt, opened);
    if (!opened || cn_buf_new(&b.n, &b.s, o->max_bytes) || cn_buf_new(&b.n, &b.r, o->max_bytes))
        return 1;
    int rc = 0, idx = 0;
    for (size_t size = o->min_bytes; size <= o->max_bytes && rc == 0; size *= o->factor)
        rc = bench_size(&b, size, idx++);
    cn_buf_free(&b.n, &b.s);
    cn_buf_free(&b.n, &b.r);
    cn_close_group(&b.n);
    mp_cnt_unmap(&b.cnt);
    return rc ? 1 : 0;
}

/* ---- the plain socket ring exchange ---- */

struct pump {
    int fd;
    char *buf;
    size_t bytes;
};

static void *send_all(void *arg)
{
    struct pump *p = arg;
    for (size_t done = 0; done < p->bytes;) {
        size_t chunk = p->bytes - done < (4u << 20) ? p->bytes - done : (4u << 20);
        ssize_t k = write(p->fd, p->buf, chunk);
        if (k <= 0)
            return (void *)1;
        done += (size_t)k;
    }
    return NULL;
}

static int recv_all(int fd, char *buf, size_t bytes)
{
    for (size_t done = 0; done < bytes;) {
        size_t chunk = bytes - done < (4u << 20) ? bytes - done : (4u << 20);
        ssize_t k = read(fd, buf, chunk);
        if (k <= 0)
            return -1;
        done += (size_t)k;
    }
    return 0;
}

static in_port_t *port_of(struct sockaddr_storage *a)
{
    return a->ss_family == AF_INET6 ? &((struct sockaddr_in6 *)a)->sin6_port
                                    : &((struct sockaddr_in *)a)->sin_port;
}

/* Listens (127.0.0.1, or any address when hosted), publishes the port, connects to the right
 * neighbour, accepts the left. */
static int ring_sockets(int rank, int nranks, int *to, int *from)
{
    struct sockaddr_storage a;
    socklen_t len;
    mp_host_listen_addr(&a, &len);
    int l = socket(a.ss_family, SOCK_STREAM, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&a, len) || listen(l, 4) ||
        getsockname(l, (struct sockaddr *)&a, &len))
        return -1;
    mp_flag_set(rank, F_PORT, ntohs(*port_of(&a)));
    mp_barrier();
    int right = (rank + 1) % nranks;
    mp_host_addr(right, &a, &len);
    *port_of(&a) = htons((uint16_t)mp_flag_get(right, F_PORT));
    *to = socket(a.ss_family, SOCK_STREAM, 0);
    if (*to < 0 || connect(*to, (struct sockaddr *)&a, len))
        return -1;
    *from = accept(l, NULL, NULL);
    close(l);
    return *from < 0 ? -1 : 0;
}

static int ceiling_rank(int rank, int nranks, void *arg)
{
    const struct opts *o = arg;
    int to, from;
    struct pump p = {.buf = malloc(4u << 20)};
    char *in = malloc(4u << 20);
    if (!p.buf || !in || ring_sockets(rank, nranks, &to, &from) != 0)
        return 1;
    memset(p.buf, 1, 4u << 20);
    p.fd = to;
    for (size_t size = o->min_bytes; size <= o->max_bytes; size *= o->factor) {
        int iters = iters_for(o, size);
        p.bytes = size * (size_t)iters;
        mp_barrier();
        pthread_t th;
        double t0 = mp_now();
        pthread_create(&th, NULL, send_all, &p);
        int bad = recv_all(from, in, p.bytes);
        void *tx_bad = NULL;
        pthread_join(th, &tx_bad);
        if (bad || tx_bad)
            return 1;
        put_time((mp_now() - t0) / iters);
        mp_barrier();
        if (rank == 0) {
            double t = max_time(nranks);
            printf("%12zu %10.1f %7.2f\n", size, t * 1e6, (double)size / t / 1e9);
            fflush(stdout);
        }
    }
    close(to);
    close(from);
    free(p.buf);
    free(in);
    return 0;
}

/* ---- -P: the tuner's model beside the measured times ---- */

#define MAX_SIZES    48
#define MAX_ALGOS    3
#define MAX_ROUNDS   15
#define MAX_TRIES    (3 * MAX_ROUNDS) /* rounds run, with -q, to find -R quiet ones */
#define QUIET_WAIT_S 120

/* Rounds are stored as run ("tries"); the -R of them reported are sel[0 .. rounds). */
struct predict {
    struct jaccl_model m;
    int nalgo, algo[MAX_ALGOS], nsizes;
    double *t;              /* [try][algo][size], shared with the forked rank 0 */
    struct mp_calib *cal;   /* [try] (-c), shared too: the link's figures */
    struct mp_calib *lane;  /* [try] (-c): the same over one lane (NCCL_JACCL_NSOCKS=1) */
    double load[MAX_TRIES]; /* cores other processes used during each try */
    int tries, sel[MAX_ROUNDS];
};

/* -a's comma list ("ring,mesh"), or every algorithm that runs this group. -1 if malformed. */
static int predict_algos(const struct opts *o, struct predict *p)
{
    const char *list = o->algo ? o->algo : algo_pow2(o->nranks) ? "ring,mesh,rhd" : "ring,mesh";
    char buf[64];
    snprintf(buf, sizeof(buf), "%s", list);
    p->nalgo = 0;
    for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        int a = algo_by_name(w);
        if (a == ALGO_AUTO || a == ALGO_LOCAL || p->nalgo == MAX_ALGOS)
            return -1;
        p->algo[p->nalgo++] = a;
    }
    return p->nalgo ? 0 : -1;
}

static size_t real_size(const struct opts *o, size_t size)
{
    size_t pr = per_rank(o, size);
    return o->kind == 0 ? pr * 4 : pr * 4 * (size_t)o->nranks;
}

/* The model as the tuner builds it, for float32 (what is measured), with the ranks of this
 * host sharing its cores: before any rank is forked (it may open the fabric to read the
 * devices, and closes it again). */
static int predict_model(const struct opts *o, struct predict *p, int hosted)
{
    setenv("NCCL_JACCL_TUNER_DTYPE", "float32", 1);
    if (o->algo == NULL)
        unsetenv("NCCL_JACCL_ALGO");
    int rc = jaccl_model_init(&p->m, o->nranks, hosted ? 1 : o->nranks);
    if (rc != 0)
        fprintf(stderr, "jaccl-coll-perf: no model (%s)\n",
                rc == -ENODEV ? "no device, NCCL_JACCL_TUNER_LINK_MBPS unset" : "no memory");
    return rc;
}

/* -c: the model's link (from cache and from memory), lane and hop are the medians of the
 * rounds' measurements, in place of the devices' or the knobs'. They are measured among the
 * group's own ranks, so a crowded host's hop is measured in the crowd (the scheduler, not a
 * formula, says how much longer it gets); a rate measured so is what a rank with a core to
 * itself would get times its share of one: divided back out, since the model multiplies it in
 * again for the group it prices. */
static void predict_calibrated(const struct opts *o, struct predict *p)
{
    double hop[MAX_ROUNDS], bw[MAX_ROUNDS], lane[MAX_ROUNDS], mem[MAX_ROUNDS];
    for (int r = 0; r < o->rounds; r++) {
        hop[r] = p->cal[p->sel[r]].hop_s;
        bw[r] = p->cal[p->sel[r]].link_Bps;
        lane[r] = p->lane[p->sel[r]].link_Bps;
        mem[r] = p->cal[p->sel[r]].mem_Bps;
    }
    double share = p->m.plat.cpu_share;
    p->m.plat.hop_s = mp_median(hop, o->rounds);
    p->m.plat.link_Bps = mp_median(bw, o->rounds) / share;
    p->m.plat.lane_Bps = mp_median(lane, o->rounds) / share;
    p->m.plat.link_mem_Bps = mp_median(mem, o->rounds) / share;
    snprintf(p->m.link_from, sizeof(p->m.link_from), "measured: p2p ring exchange, %d ranks",
             o->nranks);
    snprintf(p->m.lat_from, sizeof(p->m.lat_from), "measured: p2p token ring, %d ranks", o->nranks);
}

static void predict_header(const struct opts *o, const struct predict *p, const char *mode)
{
    const struct algo_platform *pl = &p->m.plat;
    printf("# jaccl %s, %d ranks, window 1, %d interleaved rounds: median measured time beside "
           "the tuner's model\n",
           mode, o->nranks, o->rounds);
    printf("# model: link %.2f GB/s (%s), %.2f GB/s from memory, lane %.2f GB/s, hop %.1f us "
           "(%s), float32 sum %.1f GB/s in cache, %.1f GB/s from memory (above %zu KiB), cpu "
           "share %.2f\n",
           pl->link_Bps / 1e9, p->m.link_from, pl->link_mem_Bps / 1e9, pl->lane_Bps / 1e9,
           pl->hop_s * 1e6, p->m.lat_from, pl->kern_hot_Bps / 1e9, pl->kern_cold_Bps / 1e9,
           pl->cache_bytes >> 10, pl->cpu_share);
    printf("# cores other processes used, round by round:");
    for (int r = 0; r < o->rounds; r++)
        printf(" %.2f", p->load[p->sel[r]]);
    printf(" (%d round(s) run, the %d quietest kept)\n", p->tries, o->rounds);
    for (int r = 0; p->cal && r < o->rounds; r++) {
        const struct mp_calib *c = &p->cal[p->sel[r]], *l = &p->lane[p->sel[r]];
        printf("# round %d: link %.2f GB/s, from memory %.2f GB/s, one lane %.2f GB/s, hop %.1f "
               "us\n",
               r + 1, c->link_Bps / 1e9, c->mem_Bps / 1e9, l->link_Bps / 1e9, c->hop_s * 1e6);
    }
    printf("#%11s %5s %12s %12s %7s  %s\n", "size", "algo", "measured_us", "predicted_us", "error",
           "rounds_us");
}

static double *slot(const struct predict *p, int r, int a)
{
    return p->t + ((size_t)r * (size_t)p->nalgo + (size_t)a) * (size_t)p->nsizes;
}

/* size, algorithm, median, model, the model's error, then every round's time in its order */
static void predict_row(const struct opts *o, const struct predict *p, int a, int i, size_t size)
{
    double v[MAX_ROUNDS];
    for (int r = 0; r < o->rounds; r++)
        v[r] = slot(p, p->sel[r], a)[i];
    size_t real = real_size(o, size);
    double pred = jaccl_model_op(&p->m, (enum algo_kind)o->kind, real, p->algo[a], NULL);
    printf("%12zu %5s", real, algo_name((enum algo_id)p->algo[a]));
    char rounds[MAX_ROUNDS * 12] = "";
    for (int r = 0, n = 0; r < o->rounds; r++)
        n += snprintf(rounds + n, sizeof(rounds) - (size_t)n, " %.0f", v[r] * 1e6);
    double med = mp_median(v, o->rounds);
    printf(" %12.1f %12.1f %+6.0f%% %s\n", med * 1e6, pred * 1e6, (pred / med - 1) * 100, rounds);
}

/* -c: the link with the ranks' own lanes, then over one lane. 0, or 1 when a run failed. */
static int predict_link(const struct opts *o, struct predict *p, int r)
{
    struct mp_calib_run link = {.version = o->version, .out = &p->cal[r]};
    struct mp_calib_run lane = {.version = o->version, .lanes = 1, .out = &p->lane[r]};
    return mp_run("link", "the link", o->nranks, 600, mp_calib_rank, &link) ||
           mp_run("one-lane", "one lane", o->nranks, 600, mp_calib_rank, &lane);
}

/* -q: on a shared box, a round that runs while other jobs do is mostly their noise. Each round
 * waits (QUIET_WAIT_S at most) for a second in which other processes used fewer than max_load
 * cores, and a round during which they used more is run again (predict_rounds). */
static void wait_quiet(double max_load)
{
    for (int i = 0; max_load > 0 && i < QUIET_WAIT_S; i++) {
        struct mp_load l;
        mp_load_start(&l);
        sleep(1);
        if (mp_load_foreign(&l) < max_load)
            return;
    }
}

/* One round: the link (-c), then one sweep per algorithm. 0, or 1 when a run failed. */
static int predict_round(struct opts *o, struct predict *p, int r)
{
    struct mp_load load;
    wait_quiet(o->quiet);
    mp_load_start(&load);
    int failed = p->cal ? predict_link(o, p, r) : 0;
    for (int a = 0; a < p->nalgo && !failed; a++) {
        struct opts one = *o;
        one.algo = algo_name((enum algo_id)p->algo[a]);
        one.record = slot(p, r, a);
        failed = mp_run(one.algo, one.algo, o->nranks, 3600, coll_rank, &one);
    }
    p->load[r] = mp_load_foreign(&load);
    return failed;
}

/* The -R tries with the least foreign load, in the order they ran. */
static void pick_quietest(const struct opts *o, struct predict *p)
{
    int used[MAX_TRIES] = {0};
    for (int r = 0; r < o->rounds; r++) {
        int best = -1;
        for (int t = 0; t < p->tries; t++)
            if (!used[t] && (best < 0 || p->load[t] < p->load[best]))
                best = t;
        used[best] = 1;
    }
    for (int t = 0, r = 0; t < p->tries; t++)
        if (used[t])
            p->sel[r++] = t;
}

/* Runs rounds until -R of them had less foreign load than -q (at most 3 x -R; without -q
 * exactly -R). 0, or 1 when a run failed. */
static int predict_rounds(struct opts *o, struct predict *p)
{
    int quiet = 0, max = o->quiet > 0 ? 3 * o->rounds : o->rounds;
    for (p->tries = 0; p->tries < max && quiet < o->rounds; p->tries++) {
        if (predict_round(o, p, p->tries))
            return 1;
        quiet += o->quiet <= 0 || p->load[p->tries] < o->quiet;
    }
    pick_quietest(o, p);
    return 0;
}

/* Rounds of one sweep per algorithm, interleaved (round 1: ring, mesh; round 2: ...) so that
 * every algorithm sees the box's load of the same minutes; then each size's median. */
static int predict_main(struct opts *o, int hosted, const char *mode)
{
    struct predict p = {0};
    for (size_t size = o->min_bytes; size <= o->max_bytes; size *= o->factor)
        p.nsizes++;
    size_t len = sizeof(double) * (size_t)(MAX_TRIES * MAX_ALGOS * p.nsizes) +
                 2 * sizeof(struct mp_calib) * MAX_TRIES;
    if (p.nsizes > MAX_SIZES || predict_algos(o, &p) != 0 || predict_model(o, &p, hosted) != 0)
        return 2;
    p.t = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p.t == MAP_FAILED)
        return 1;
    p.cal = o->calibrate ? (struct mp_calib *)(p.t + MAX_TRIES * MAX_ALGOS * p.nsizes) : NULL;
    p.lane = p.cal ? p.cal + MAX_TRIES : NULL;
    o->nwin = 1;
    o->window[0] = 1;
    int failed = predict_rounds(o, &p);
    if (!failed && p.cal)
        predict_calibrated(o, &p);
    if (!failed)
        predict_header(o, &p, mode);
    for (int a = 0; a < p.nalgo && !failed; a++) {
        int i = 0;
        for (size_t size = o->min_bytes; size <= o->max_bytes; size *= o->factor)
            predict_row(o, &p, a, i++, size);
    }
    munmap(p.t, len);
    return failed;
}

/* ---- options ---- */

static void usage(void)
{
    fprintf(stderr, "usage: jaccl-coll-perf allreduce|reducescatter|allgather|ceiling [-N ranks] "
                    "[-b min] [-e max] [-f factor] [-L] [-n iters] [-w warmup] [-W w1,w2,..] "
                    "[-a auto|ring|mesh|rhd] [-r wires] [-V 11|8] [-p sleep_us] "
                    "[-P [-R rounds] [-a ring,mesh,..] [-c] [-q cores]]\n"
                    "  default: 32K .. 1M by 2 (NCCL's CollNet steps), windows 1 and 8; "
                    "-L: 4K .. 256M by 4; -p: sleep between tests (default 0: sched_yield)\n"
                    "  -P: each algorithm's median time (one operation at a time) over -R "
                    "interleaved rounds (default 5) beside the tuner's model of it; -c: with "
                    "the link and hop measured in every round through jaccl's p2p; -q: each round "
                    "waits (2 min at most) for a second in which other processes used fewer "
                    "cores, and rounds are run (3 x -R at most) until -R ran with less foreign "
                    "load than that\n");
    mp_host_usage();
}

/* "1,8": up to MAX_WINS windows, each 1..MAX_WINDOW; -1 if malformed. */
static int parse_windows(const char *arg, struct opts *o)
{
    o->nwin = 0;
    for (const char *p = arg; *p;) {
        char *end;
        long w = strtol(p, &end, 10);
        if (end == p || w < 1 || w > MAX_WINDOW || o->nwin == MAX_WINS)
            return -1;
        o->window[o->nwin++] = (int)w;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return o->nwin ? 0 : -1;
}

/* Sizes not given take the sweep's: NCCL's regime, or the long one with -L. */
static void default_sweep(struct opts *o, int longs)
{
    if (!o->min_bytes)
        o->min_bytes = longs ? 4096 : 32u << 10;
    if (!o->max_bytes)
        o->max_bytes = longs ? 256u << 20 : 1u << 20;
    if (!o->factor)
        o->factor = longs ? 4 : 2;
}

static int parse(int argc, char **argv, struct opts *o)
{
    static const char *const modes[] = {"allreduce", "reducescatter", "allgather", "ceiling"};
    *o = (struct opts){.kind = -1,
                       .nranks = 2,
                       .warmup = 3,
                       .window = {1, 8},
                       .nwin = 2,
                       .version = 11,
                       .rounds = 5};
    for (int i = 0; argc > 1 && i < 4; i++)
        if (strcmp(argv[1], modes[i]) == 0)
            o->kind = i;
    int c, bad = 0, longs = 0;
    optind = 2;
    /* NCCL's proxy: test() in a loop, sched_yield() in between (unless the caller said) */
    setenv("MP_POLL_SLEEP_US", "0", 0);
    while ((c = getopt(argc, argv, "N:b:e:f:Ln:w:W:a:r:V:p:PR:cq:")) != -1) {
        switch (c) {
        case 'P':
            o->predict = 1;
            break;
        case 'c':
            o->calibrate = 1;
            break;
        case 'q':
            o->quiet = atof(optarg);
            break;
        case 'R':
            o->rounds = atoi(optarg);
            break;
        case 'p':
            setenv("MP_POLL_SLEEP_US", optarg, 1);
            break;
        case 'N':
            o->nranks = atoi(optarg);
            break;
        case 'b':
            bad |= mp_perf_size(optarg, &o->min_bytes);
            break;
        case 'e':
            bad |= mp_perf_size(optarg, &o->max_bytes);
            break;
        case 'f':
            bad |= mp_perf_size(optarg, &o->factor);
            break;
        case 'n':
            o->iters = atoi(optarg);
            break;
        case 'w':
            o->warmup = atoi(optarg);
            break;
        case 'L':
            longs = 1;
            break;
        case 'W':
            bad |= parse_windows(optarg, o);
            break;
        case 'a':
            o->algo = optarg;
            break;
        case 'r':
            o->wires = atoi(optarg);
            break;
        case 'V':
            o->version = atoi(optarg);
            break;
        default:
            return -1;
        }
    }
    default_sweep(o, longs);
    bad |= o->predict && (o->kind > 2 || o->rounds < 1 || o->rounds > MAX_ROUNDS);
    return bad || o->kind < 0 || o->nranks < 1 || o->nranks > MP_MAX_RANKS || o->factor < 2 ||
                           o->min_bytes < 4
                   ? -1
                   : 0;
}

int main(int argc, char **argv)
{
    struct opts o;
    int hosted = mp_host_setup(&argc, argv);
    if (hosted < 0 || parse(argc, argv, &o) != 0) {
        usage();
        return 2;
    }
    if (hosted) { /* the job decides the rank count; the plugin picks the interface */
        o.nranks = mp_host_get()->nranks;
        setenv("NCCL_JACCL_SOCKET_IFNAME", "", 0);
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    setenv("NCCL_JACCL_TIMEOUT", "60", 0); /* before mp_default_env's 3 s for the tests */
    mp_default_env();
    if (o.predict)
        return predict_main(&o, hosted, argv[1]);
    struct mp_load load;
    mp_load_start(&load);
    if (o.kind == 3) {
        printf("# ceiling: plain TCP ring exchange %s, %d ranks\n",
               hosted ? "between the hosts" : "on 127.0.0.1", o.nranks);
        printf("#%11s %10s %7s\n", "size", "time(us)", "GB/s");
    } else {
        const char *algo = o.algo ? o.algo : getenv("NCCL_JACCL_ALGO");
        printf("# jaccl %s, %d ranks, algo %s, wires %d (0 = default), window", argv[1], o.nranks,
               algo ? algo : "auto", o.wires);
        for (int i = 0; i < o.nwin; i++)
            printf("%s%d", i ? "," : " ", o.window[i]);
        printf(", table v%d\n", o.version);
        printf("#%11s %12s %8s %6s %10s %7s %7s %6s", "size", "count", "type", "redop", "time(us)",
               "algbw", "busbw", "#wrong");
        for (int i = 1; i < o.nwin; i++) {
            char tw[16], bw[16];
            snprintf(tw, sizeof(tw), "us@W%d", o.window[i]);
            snprintf(bw, sizeof(bw), "busbw@W%d", o.window[i]);
            printf(" %10s %7s %7s", tw, "algbw", bw);
        }
        for (int i = 0; i < o.nwin; i++) {
            char cw[16];
            snprintf(cw, sizeof(cw), "cpu_us@W%d", o.window[i]);
            printf(" %10s", cw);
        }
        printf("\n");
    }
    int failed =
            mp_run(argv[1], argv[1], o.nranks, 3600, o.kind == 3 ? ceiling_rank : coll_rank, &o);
    printf("# foreign load: %.2f cores\n", mp_load_foreign(&load));
    return failed;
}
