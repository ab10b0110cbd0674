/* SPDX-License-Identifier: BSD-3-Clause */
/* jaccl-perf: benchmarks through the plugin's ABI, loaded the way NCCL loads it.
 *
 *   jaccl-perf p2p [-b 8] [-e 64M] [-f 2] [-n iters] [-w warmup] [-W window] [-r 2] [-V 11] [-t 2]
 *   jaccl-perf p2p --rank R --nranks 2 --root HOST:PORT [options]     one rank per host
 *
 * p2p: two ranks, forked here, or one per host with --rank/--nranks/--root (or under mpirun,
 * see mp_host.h; then the pump runs between the hosts too). Rank 0 isends, rank 1 irecvs, `window`
 * requests in flight (NCCL keeps up to NCCL_STEPS = 8 per connection); one line per size in
 * nccl-tests' style: time per message, algbw, and the one-way latency of a ping-pong of that size.
 * Each size is timed in `-R` passes and the median pass is reported: on this shared 2-core box one
 * burst of foreign load would otherwise decide a whole row. A raw TCP socket pump runs in the same
 * processes before and after the sweep, and for sizes >= 4 MiB the last column is jaccl's bandwidth
 * divided by the raw one (mean of the two pumps; the target is >= 0.90). The pump reuses one 4 MiB
 * buffer, so in-flight messages get their own slots only while those fit in MAX_STAGING; larger
 * ones share one buffer per side, like the pump. Messages larger than the cache cannot stay in it
 * the way the pump's buffer does, so a third pump cycles its 4 MiB writes through a buffer as large
 * as the largest message, and `vs_span` compares with that: where vs_span is near 1 but vs_raw is
 * not, memory is the limit.
 *
 * New modes go in the `modes` table at the bottom: each gets the parsed options and runs its
 * own ranks through mp_run. */
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mp.h"
#include "mp_cnt.h"
#include "mp_host.h"
#include "mp_perf.h"
#include "mp_pump.h"

#define RATIO_FROM  (4u << 20) /* the 90 % target applies from here up */
#define MAX_STAGING (16u << 20)
#define MAX_ROWS    64
#define V_BW_TIME   0          /* rank 1: seconds for the timed messages of the current size */
#define V_CNT       1          /* V_CNT + CNT_*: a rank's debug counters over the ping-pong */
#define RAW_PP_MAX  (1u << 20) /* raw ping-pongs for sizes up to here (cheap) */

/* Debug-counter groups shown per message (the plugin's counter names, util/counters.h). */
enum {
    CNT_TX,
    CNT_RX,
    CNT_RX_POLL,
    CNT_WAKE,
    CNT_STAGE,
    CNT_TEST,
    CNT_REG,
    CNT_SIDE,
    CNT_ADV,
    CNT_CTL,
    CNT_N
};
static const char *const cnt_src[CNT_N][4] = {
        [CNT_TX] = {"sendmsg"},           [CNT_RX] = {"recvmsg_io"},
        [CNT_RX_POLL] = {"recvmsg_poll"}, [CNT_WAKE] = {"epoll_wake", "eventfd_wake", "cq_signal"},
        [CNT_STAGE] = {"stage_bytes"},    [CNT_TEST] = {"test"},
        [CNT_REG] = {"reg_lock"},         [CNT_SIDE] = {"side_tx"},
        [CNT_ADV] = {"rdma_adv"},         [CNT_CTL] = {"rdma_ctl"},
};
static const char *const cnt_label[CNT_N] = {"sendmsg",
                                             "recvmsg(io thread)",
                                             "recvmsg(poller)",
                                             "wake-ups",
                                             "staged bytes",
                                             "test() calls",
                                             "registry lock (process)",
                                             "verbs side frames",
                                             "verbs RDMA adverts",
                                             "verbs RDMA ACKs/credits"};

struct row {
    size_t size;
    int iters;
    double per_s, lat_s;  /* seconds per streamed message, one-way ping-pong seconds */
    double tcp_s, busy_s; /* raw socket ping-pong, one-way: blocking, MSG_DONTWAIT spin */
    double cnt[CNT_N];    /* debug counters per one-way message, both ranks; < 0: none */
};

struct p2p_run {
    const struct mp_perf_opts *o;
    struct mp_net net;
    struct mp_ring ring;
    char *sbuf, *rbuf;
    void *smh, *rmh;
    size_t bytes;
    double raw[2];     /* GB/s before and after the sweep */
    double span;       /* GB/s of the pump cycling through max_bytes */
    struct mp_cnt cnt; /* the plugin's debug counters, when asked for */
    struct row rows[MAX_ROWS];
    int nrows;
};

/* Slots of one size while `window` of them fit the staging buffer; past that every request
 * shares one buffer (contents are not checked here, only timed). */
static size_t stride_for(const struct p2p_run *p, size_t size, int window)
{
    return size * (size_t)window <= p->bytes ? size : 0;
}

/* `count` messages from rank 0 to rank 1 with the window full; returns seconds. */
static double stream(struct p2p_run *p, size_t size, int count)
{
    int tx = mp_rank == 0;
    struct mp_flow f = {.net = &p->net,
                        .comm = tx ? p->ring.scomm : p->ring.rcomm,
                        .is_send = tx,
                        .count = count,
                        .window = p->o->window,
                        .base = tx ? p->sbuf : p->rbuf,
                        .stride = stride_for(p, size, p->o->window),
                        .mh = tx ? p->smh : p->rmh,
                        .size = size,
                        .tag = 0};
    mp_barrier();
    double t0 = mp_now();
    if (mp_flows_run(&f, 1, mp_scaled(120)) != 0)
        MP_CHECK(0, "%zu-byte stream: %s", size, mp_result_str(f.err));
    return mp_now() - t0;
}

/* This rank's counter groups now, from the plugin's counters file (all zero without one). */
static void counters_now(const struct p2p_run *p, double *out)
{
    for (int g = 0; g < CNT_N; g++)
        out[g] = mp_cnt_sum(&p->cnt, cnt_src[g]);
}

/* Ping-pong: rank 0 sends, rank 1 echoes. Each side keeps -r receives posted (NCCL's proxy
 * posts its receives ahead, up to NCCL_STEPS), and a round answers first and posts its next
 * receive after: with one receive ahead, the clear-to-send for message i+1 goes out just before
 * the echo of i and lies on the path. Returns one-way seconds. */
static double pingpong(struct p2p_run *p, size_t size, int iters)
{
    struct mp_flow rf = {.net = &p->net,
                         .comm = p->ring.rcomm,
                         .count = iters,
                         .window = p->o->ahead,
                         .base = p->rbuf,
                         .stride = stride_for(p, size, p->o->ahead),
                         .mh = p->rmh,
                         .size = size,
                         .tag = 0};
    struct mp_flow sf = {.net = &p->net,
                         .comm = p->ring.scomm,
                         .is_send = 1,
                         .count = 0,
                         .window = 1,
                         .base = p->sbuf,
                         .mh = p->smh,
                         .size = size,
                         .tag = 0};
    mp_barrier();
    double t0 = mp_now(), deadline = t0 + mp_scaled(120);
    while ((rf.done < iters || sf.done < iters) && mp_now() < deadline) {
        if (mp_flow_test(&rf) < 0)
            break;
        /* Rank 0 may send message i once the echo of i-1 is back; rank 1 once i arrived. */
        int gate = mp_rank == 0 ? rf.done + 1 : rf.done;
        sf.count = gate < iters ? gate : iters;
        if (mp_flow_step(&sf) < 0 || mp_flow_step(&rf) < 0)
            break;
        sched_yield();
    }
    MP_CHECK(rf.done == iters && sf.done == iters, "%zu-byte ping-pong: %s / %s", size,
             mp_result_str(rf.err), mp_result_str(sf.err));
    return (mp_now() - t0) / iters / 2;
}

static void print_header(const struct p2p_run *p, double raw)
{
    const char *ns = getenv("NCCL_JACCL_NSOCKS");
    ncclNetProperties_v12_t props;
    mp_net_props(&p->net, p->net.dev, &props);
    printf("# jaccl-perf p2p: 2 ranks, %s, ncclNetPlugin_v%d, device %d (%s)\n", p->net.path,
           p->net.version, p->net.dev, props.name ? props.name : "?");
    printf("# NCCL_JACCL_NSOCKS=%s, window %d, warmup %d, iterations %s, median of %d "
           "passes\n",
           ns && *ns ? ns : "(default)", p->o->window, p->o->warmup,
           p->o->iters ? "fixed (-n)" : "scaled by size", p->o->repeats);
    char b[16];
    printf("# raw TCP %s pump (1 stream, 4 MiB writes): %.2f GB/s before the sweep, "
           "%.2f after, mean %.2f\n",
           mp_hosted() ? "host-to-host" : "loopback", p->raw[0], p->raw[1], raw);
    printf("# the same pump cycling through %s (memory traffic of the largest message): "
           "%.2f GB/s\n#\n",
           mp_fmt_bytes(p->o->max_bytes, b, sizeof(b)), p->span);
    printf("# lat_us: jaccl ping-pong, one-way, %d receive(s) kept posted (-r); tcp_us / "
           "busy_us: a plain\n# TCP_NODELAY socket's in the same run, blocking / spinning on "
           "MSG_DONTWAIT; vs_tcp = lat_us / tcp_us\n# (target <= 1.5); kmsg/s: %d in flight\n#\n",
           p->o->ahead, p->o->window);
    printf("# %10s %8s %11s %11s %9s %11s %8s %8s %7s %8s %8s\n", "size", "iters", "time_us",
           "algbw_GB/s", "kmsg/s", "lat_us", "tcp_us", "busy_us", "vs_tcp", "vs_raw", "vs_span");
}

/* One line per size with the plugin's debug counters per one-way ping-pong message (both
 * ranks' system calls and wake-ups together), when NCCL_JACCL_DEBUG_COUNTERS=1 counted any. */
static void print_counters(const struct p2p_run *p)
{
    const char *on = getenv("NCCL_JACCL_DEBUG_COUNTERS");
    if (!mp_cnt_on(&p->cnt) || !on || strcmp(on, "1") != 0) {
        printf("#\n# syscalls/msg: not counted (NCCL_JACCL_DEBUG_COUNTERS=1 counts them)\n");
        return;
    }
    printf("#\n# syscalls/msg: per one-way ping-pong message, both ranks\n");
    for (int i = 0; i < p->nrows; i++) {
        const struct row *r = &p->rows[i];
        printf("# syscalls/msg %10zu:", r->size);
        for (int g = 0; g < CNT_N; g++)
            printf(" %s %.2f%s", cnt_label[g], r->cnt[g], g + 1 < CNT_N ? "," : "\n");
    }
}

/* Rank 0 prints the whole table once the second pump has run. */
static void print_table(const struct p2p_run *p)
{
    double raw = p->raw[0] > 0 && p->raw[1] > 0 ? (p->raw[0] + p->raw[1]) / 2 : p->raw[0];
    double worst = 0;
    print_header(p, raw);
    for (int i = 0; i < p->nrows; i++) {
        const struct row *r = &p->rows[i];
        double bw = (double)r->size / r->per_s / 1e9;
        char ratio[16] = "-", vspan[16] = "-";
        if (r->size >= RATIO_FROM && raw > 0) {
            snprintf(ratio, sizeof(ratio), "%.2f", bw / raw);
            if (worst == 0 || bw / raw < worst)
                worst = bw / raw;
        }
        if (r->size >= RATIO_FROM && p->span > 0)
            snprintf(vspan, sizeof(vspan), "%.2f", bw / p->span);
        char tcp[16] = "-", busy[16] = "-", vtcp[16] = "-";
        if (r->tcp_s > 0) {
            snprintf(tcp, sizeof(tcp), "%.2f", r->tcp_s * 1e6);
            snprintf(vtcp, sizeof(vtcp), "%.2f", r->lat_s / r->tcp_s);
        }
        if (r->busy_s > 0)
            snprintf(busy, sizeof(busy), "%.2f", r->busy_s * 1e6);
        printf("  %10zu %8d %11.2f %11.3f %9.1f %11.2f %8s %8s %7s %8s %8s\n", r->size, r->iters,
               r->per_s * 1e6, bw, 1e-3 / r->per_s, r->lat_s * 1e6, tcp, busy, vtcp, ratio, vspan);
    }
    print_counters(p);
    if (worst > 0)
        printf("#\n# jaccl / raw at >= 4 MiB: worst %.2f (target >= 0.90): %s\n", worst,
               worst >= 0.9 ? "met" : "NOT met");
}

static void one_size(struct p2p_run *p, size_t size)
{
    int iters = mp_perf_iters(p->o, size), n = p->o->repeats;
    int lat_iters = iters < 200 ? iters : 200;
    double t[100];
    if (p->o->warmup > 0)
        stream(p, size, p->o->warmup);
    for (int i = 0; i < n; i++)
        t[i] = stream(p, size, iters);
    double med = mp_median(t, n);
    if (mp_rank == 1)
        mp_value_set(V_BW_TIME, med);
    double c0[CNT_N], c1[CNT_N];
    counters_now(p, c0);
    double lat = pingpong(p, size, lat_iters);
    counters_now(p, c1);
    for (int g = 0; g < CNT_N; g++)
        mp_value_set(V_CNT + g, c1[g] - c0[g]);
    mp_barrier();
    MP_CHECK(med > 0, "%zu bytes: no time measured", size);
    struct row r = {.size = size,
                    .iters = iters,
                    .per_s = mp_value_get(1, V_BW_TIME) / iters,
                    .lat_s = lat,
                    .tcp_s = -1,
                    .busy_s = -1};
    for (int g = 0; g < CNT_N; g++) /* 2 * lat_iters one-way messages in all */
        r.cnt[g] = (mp_value_get(0, V_CNT + g) + mp_value_get(1, V_CNT + g)) / (2.0 * lat_iters);
    mp_barrier(); /* the values are read before the raw ping-pongs reuse them */
    if (size <= RAW_PP_MAX) {
        r.tcp_s = mp_pingpong_tcp(0, 1, size, lat_iters, 0);
        r.busy_s = mp_pingpong_tcp(0, 1, size, lat_iters, 1);
    }
    if (mp_rank == 0 && p->nrows < MAX_ROWS)
        p->rows[p->nrows++] = r;
}

static int setup(struct p2p_run *p)
{
    const struct mp_perf_opts *o = p->o;
    int rc = mp_net_open(&p->net, o->version);
    mp_cnt_map(&p->cnt, rc == 0);
    if (rc != 0 || mp_ring_connect(&p->net, 0, &p->ring) != 0)
        return -1;
    /* Slots for every message of the window while that fits MAX_STAGING, else MAX_STAGING
     * (smaller sizes keep their own slots) or one largest message. */
    size_t per = o->max_bytes * (size_t)o->window;
    p->bytes = per <= MAX_STAGING ? per : o->max_bytes > MAX_STAGING ? o->max_bytes : MAX_STAGING;
    p->sbuf = mp_alloc(p->bytes);
    p->rbuf = mp_alloc(p->bytes);
    if (!p->sbuf || !p->rbuf)
        return -1;
    memset(p->sbuf, 1, p->bytes); /* no first-touch page faults inside the timing */
    memset(p->rbuf, 2, p->bytes);
    MP_OK(mp_net_regmr(&p->net, p->ring.scomm, p->sbuf, p->bytes, NCCL_PTR_HOST, &p->smh));
    MP_OK(mp_net_regmr(&p->net, p->ring.rcomm, p->rbuf, p->bytes, NCCL_PTR_HOST, &p->rmh));
    return mp_failures() ? -1 : 0;
}

static void teardown(struct p2p_run *p)
{
    mp_barrier();
    MP_OK(mp_net_deregmr(&p->net, p->ring.scomm, p->smh));
    MP_OK(mp_net_deregmr(&p->net, p->ring.rcomm, p->rmh));
    mp_ring_close(&p->net, &p->ring);
    MP_OK(mp_net_fini(&p->net));
    mp_free(p->sbuf, p->bytes);
    mp_free(p->rbuf, p->bytes);
    mp_cnt_unmap(&p->cnt);
}

static int p2p_rank(int rank, int nranks, void *arg)
{
    struct p2p_run p = {.o = arg};
    mp_cnt_ask(&p.cnt, "jaccl-perf");
    if (setup(&p) != 0)
        return 1;
    if (p.o->pump_s > 0)
        p.raw[0] = mp_pump_tcp(0, 1, p.o->pump_s, MP_PUMP_CHUNK);
    for (size_t s = p.o->min_bytes; s <= p.o->max_bytes && mp_failures() == 0;
         s = s ? s * p.o->factor : 1)
        one_size(&p, s);
    if (p.o->pump_s > 0) {
        p.raw[1] = mp_pump_tcp(0, 1, p.o->pump_s, MP_PUMP_CHUNK);
        p.span = mp_pump_tcp(0, 1, p.o->pump_s, p.o->max_bytes);
    }
    if (rank == 0)
        print_table(&p);
    teardown(&p);
    return 0;
}

static int mode_p2p(const struct mp_perf_opts *o)
{
    struct mp_load load;
    mp_load_start(&load);
    int failed = mp_run("p2p", "p2p bandwidth and latency", 2, 600, p2p_rank, (void *)o);
    printf("# other processes used %.2f cores during the run (2 = the whole box)\n",
           mp_load_foreign(&load));
    return failed;
}

/* ---- check: every byte verified, both directions at once ---- */

#define CHECK_GUARD 4096 /* room behind each receive slot for mp_flow's guard */

struct check_run {
    struct mp_net net;
    struct mp_ring ring;
    char *sbuf, *rbuf;
    void *smh, *rmh;
    size_t bytes, stride;
};

static int check_setup(struct check_run *c, const struct mp_perf_opts *o)
{
    c->stride = o->max_bytes + CHECK_GUARD;
    c->bytes = c->stride * (size_t)o->window;
    if (mp_net_open(&c->net, o->version) != 0 || mp_ring_connect(&c->net, 0, &c->ring) != 0)
        return -1;
    c->sbuf = mp_alloc(c->bytes);
    c->rbuf = mp_alloc(c->bytes);
    if (!MP_CHECK(c->sbuf && c->rbuf, "%zu bytes of buffers", 2 * c->bytes))
        return -1;
    MP_OK(mp_net_regmr(&c->net, c->ring.scomm, c->sbuf, c->bytes, NCCL_PTR_HOST, &c->smh));
    MP_OK(mp_net_regmr(&c->net, c->ring.rcomm, c->rbuf, c->bytes, NCCL_PTR_HOST, &c->rmh));
    return mp_failures() ? -1 : 0;
}

/* One size: this rank streams `count` messages to its ring neighbour while it receives as
 * many from the other side; every received byte and the guard behind it are checked. */
static int check_size(struct check_run *c, const struct mp_perf_opts *o, size_t size, int count)
{
    int next = (mp_rank + 1) % mp_sh->nranks, prev = (mp_rank + mp_sh->nranks - 1) % mp_sh->nranks;
    struct mp_flow f[2] = {{.net = &c->net,
                            .comm = c->ring.scomm,
                            .is_send = 1,
                            .base = c->sbuf,
                            .mh = c->smh,
                            .seed = ((uint64_t)size << 8) + (uint64_t)mp_rank * 1000003},
                           {.net = &c->net,
                            .comm = c->ring.rcomm,
                            .base = c->rbuf,
                            .mh = c->rmh,
                            .seed = ((uint64_t)size << 8) + (uint64_t)prev * 1000003}};
    for (int i = 0; i < 2; i++) {
        f[i].count = count;
        f[i].window = o->window;
        f[i].stride = c->stride;
        f[i].size = size;
        f[i].check = 1;
    }
    double t0 = mp_now();
    int rc = mp_flows_run(f, 2, mp_scaled(300));
    double t = mp_now() - t0;
    MP_CHECK(rc == 0, "%zu-byte check to rank %d / from rank %d: %s / %s", size, next, prev,
             mp_result_str(f[0].err), mp_result_str(f[1].err));
    printf("  %4d %10zu %8d %8d %11.2f %6d\n", mp_rank, size, count, f[1].done,
           (double)size * count / t / 1e6, f[1].bad);
    fflush(stdout);
    return rc == 0 && f[1].bad == 0 ? 0 : -1;
}

static int check_rank(int rank, int nranks, void *arg)
{
    const struct mp_perf_opts *o = arg;
    struct check_run c = {0};
    int rc = check_setup(&c, o);
    if (rank == 0 || mp_hosted())
        printf("# jaccl-perf check: %d ranks, window %d; per rank and size: messages sent, "
               "received, MB/s received, #bad\n#%5s %10s %8s %8s %11s %6s\n",
               nranks, o->window, "rank", "size", "sent", "recvd", "MB/s", "#bad");
    for (size_t s = o->min_bytes; rc == 0 && s <= o->max_bytes; s = s ? s * o->factor : 1)
        rc = check_size(&c, o, s, o->iters > 0 ? o->iters : mp_perf_iters(o, s) / 8 + 1);
    /* No barrier before closing: each rank closes once its own requests are done, like NCCL. */
    if (c.smh)
        MP_OK(mp_net_deregmr(&c.net, c.ring.scomm, c.smh));
    if (c.rmh)
        MP_OK(mp_net_deregmr(&c.net, c.ring.rcomm, c.rmh));
    mp_ring_close(&c.net, &c.ring);
    MP_OK(mp_net_fini(&c.net));
    mp_free(c.sbuf, c.bytes);
    mp_free(c.rbuf, c.bytes);
    return rc ? 1 : 0;
}

static int mode_check(const struct mp_perf_opts *o)
{
    int n = mp_hosted() ? mp_host_get()->nranks : 2;
    return mp_run("check", "p2p, every byte checked", n, 900, check_rank, (void *)o);
}

static const struct {
    const char *name;
    int (*run)(const struct mp_perf_opts *o);
    const char *help;
} modes[] = {
        {"p2p", mode_p2p, "point-to-point bandwidth and latency, 2 ranks, vs a raw socket"},
        {"check", mode_check,
         "ring streams in both directions, every byte verified (-n messages per size)"},
};

int main(int argc, char **argv)
{
    struct mp_perf_opts o;
    int hosted = mp_host_setup(&argc, argv);
    if (hosted < 0)
        return 2;
    if (hosted) /* the plugin picks the interface, unless told; loopback is for forked ranks */
        setenv("NCCL_JACCL_SOCKET_IFNAME", "", 0);
    for (size_t i = 0; argc > 1 && i < sizeof(modes) / sizeof(modes[0]); i++) {
        if (strcmp(argv[1], modes[i].name) != 0)
            continue;
        if (mp_perf_parse(argc - 1, argv + 1, &o) != 0)
            return 2;
        mp_begin("jaccl-perf", modes[i].help, 0, NULL);
        return mp_end(modes[i].run(&o));
    }
    mp_perf_usage(argv[0]);
    mp_host_usage();
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
        fprintf(stderr, "  mode %-6s %s\n", modes[i].name, modes[i].help);
    return 2;
}
