/* SPDX-License-Identifier: BSD-3-Clause */
/* The fabric contract suite (fab_contract.h): every test reaches the back end only through the
 * ops in its harness, registers every buffer it posts (verbs needs it; TCP accepts it), and
 * connects endpoints the way the core does. */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fab_contract.h"
#include "util/clock.h"

/* ---- helpers ---- */

enum fab_wc_status fc_ep_status(const struct fab_ops *ops, struct fab_ep *ep, const char **why)
{
    int err = ops->ep_error(ep, why);
    assert_true(err <= 0);
    return fab_wc_status_of(err);
}

void fc_tcp_pair(int *a, int *b)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(sa);
    int l = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(l >= 0);
    assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(l, 16), 0);
    assert_int_equal(getsockname(l, (struct sockaddr *)&sa, &len), 0);
    *a = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(connect(*a, (struct sockaddr *)&sa, sizeof(sa)), 0);
    *b = accept(l, NULL, NULL);
    assert_true(*b >= 0);
    close(l);
}

void fc_unix_pair(int *a, int *b)
{
    int sv[2];

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    *a = sv[0];
    *b = sv[1];
}

struct pair {
    const struct fc_harness *h;
    const struct fab_ops *F;
    struct fab_domain *dom[2];
    struct fab_cq *cq[2];
    struct fab_ep *ep[2];
    struct fab_ep_attr attr;
    int shared; /* one domain and one CQ for both endpoints */
};

static struct fab_ep_attr attr_of(int nlanes, int wr, uint64_t liveness_ns)
{
    struct fab_ep_attr a = {.nlanes = nlanes,
                            .max_send_wr = wr,
                            .max_recv_wr = wr,
                            .liveness_ns = liveness_ns,
                            .peer_desc = FC_PEER};
    return a;
}

static void pair_create_attr(struct pair *p, const struct fc_harness *h,
                             const struct fab_ep_attr *a, int shared)
{
    const struct fab_ops *F = h->ops;

    memset(p, 0, sizeof(*p));
    p->h = h;
    p->F = F;
    p->attr = *a;
    p->shared = shared;
    for (int s = 0; s < 2; s++) {
        if (s == 0 || !shared) {
            assert_int_equal(F->domain_open(h->dev, &p->dom[s]), 0);
            assert_int_equal(F->cq_create(p->dom[s], 8, &p->cq[s]), 0);
        } else {
            p->dom[1] = p->dom[0];
            p->cq[1] = p->cq[0];
        }
        assert_int_equal(F->ep_create(p->dom[s], p->cq[s], a, &p->ep[s]), 0);
    }
}

static void pair_create(struct pair *p, const struct fc_harness *h, int nlanes, int wr,
                        uint64_t liveness_ns)
{
    struct fab_ep_attr a = attr_of(nlanes, wr, liveness_ns);

    pair_create_attr(p, h, &a, 0);
}

/* As the core does: the blobs cross (here in memory), then each end adopts side_socks()
 * sockets connected to the other's. */
static void pair_connect(struct pair *p)
{
    const struct fab_ops *F = p->F;
    int n = F->side_socks(&p->attr);
    unsigned char blob[2][FAB_CONN_INFO_MAX];
    int len[2], sk[2][FAB_MAX_LANES];

    assert_true(n >= 1 && n <= FAB_MAX_LANES);
    for (int s = 0; s < 2; s++) {
        len[s] = F->ep_local_info(p->ep[s], blob[s], sizeof(blob[s]));
        assert_true(len[s] >= 0 && len[s] <= FAB_CONN_INFO_MAX);
    }
    for (int i = 0; i < n; i++)
        p->h->sock_pair(&sk[0][i], &sk[1][i]);
    for (int s = 0; s < 2; s++)
        assert_int_equal(F->ep_connect(p->ep[s], blob[!s], (size_t)len[!s], sk[s], n), 0);
}

static void pair_open(struct pair *p, const struct fc_harness *h, int nlanes, int wr,
                      uint64_t liveness_ns)
{
    pair_create(p, h, nlanes, wr, liveness_ns);
    pair_connect(p);
}

static void pair_close(struct pair *p)
{
    for (int s = 0; s < 2; s++)
        p->F->ep_close(p->ep[s]);
    for (int s = 0; s < 2; s++) {
        if (s == 1 && p->shared)
            break;
        p->F->cq_destroy(p->cq[s]);
        p->F->domain_close(p->dom[s]);
    }
}

static struct fab_mr *reg(const struct pair *p, int side, void *buf, size_t len)
{
    struct fab_mr *mr;

    assert_int_equal(p->F->mr_reg(p->dom[side], buf, len, &mr), 0);
    return mr;
}

static void msleep(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* One completion, polled for up to FC_WAIT_NS of real time (cq_wait's deadlines follow the
 * test clock, which one test stops): 1, or 0. */
static int poll_wc(const struct fab_ops *F, struct fab_cq *cq, struct fab_wc *wc)
{
    struct timespec gap = {.tv_nsec = 100000};
    uint64_t dl = jaccl_mono_ns() + FC_WAIT_NS;

    while (F->cq_poll(cq, wc, 1) != 1) {
        if (jaccl_mono_ns() >= dl)
            return F->cq_poll(cq, wc, 1);
        nanosleep(&gap, NULL);
    }
    return 1;
}

/* One completion, sleeping in cq_wait between polls: 1, or 0 after FC_WAIT_NS. */
static int get_wc(const struct fab_ops *F, struct fab_cq *cq, struct fab_wc *wc)
{
    uint64_t dl = jaccl_now_ns() + FC_WAIT_NS;

    for (;;) {
        if (F->cq_poll(cq, wc, 1) == 1)
            return 1;
        if (F->cq_wait(cq, dl) == -ETIMEDOUT)
            return F->cq_poll(cq, wc, 1);
    }
}

static void expect_wc(const struct fab_ops *F, struct fab_cq *cq, enum fab_wc_op op,
                      enum fab_wc_status st, uint64_t wr_id, uint32_t len)
{
    struct fab_wc wc;

    assert_int_equal(get_wc(F, cq, &wc), 1);
    assert_int_equal(wc.status, st);
    assert_int_equal(wc.wr_id, wr_id);
    if (st == FAB_WC_OK) {
        assert_int_equal(wc.op, op);
        assert_int_equal(wc.len, len);
    }
}

static void fill(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(i * 131 + seed * 7 + (i >> 12));
}

/* The harness of a test, or a skip that says why. */
static const struct fc_harness *harness(void **state, enum fc_test t)
{
    const struct fc_harness *h = *state;

    if (h->skip[t]) {
        print_message("[  SKIP    ] on %s: %s\n", h->name, h->skip[t]);
        skip();
    }
    return h;
}

/* ---- two-sided ---- */

static void fc_send_recv_sizes(void **state)
{
    const struct fc_harness *h = harness(state, FC_SEND_RECV_SIZES);
    static const size_t sizes[] = {0, 1, 4097, 1u << 20, 8u << 20};
    size_t max = 8u << 20;
    unsigned char *src = malloc(max), *dst = malloc(max + 1);
    const struct fab_ops *F = h->ops;
    struct fab_mr *smr, *dmr;
    struct pair p;

    pair_open(&p, h, 1, 8, 0);
    smr = reg(&p, 0, src, max);
    dmr = reg(&p, 1, dst, max);
    for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        size_t n = sizes[k];

        fill(src, n, k);
        memset(dst, 0xee, max + 1);
        assert_int_equal(F->post_recv(p.ep[1], 0, dst, max, dmr, 100 + k), 0);
        assert_int_equal(F->post_send(p.ep[0], 0, src, n, smr, 200 + k), 0);
        expect_wc(F, p.cq[0], FAB_WC_SEND, FAB_WC_OK, 200 + k, (uint32_t)n);
        expect_wc(F, p.cq[1], FAB_WC_RECV, FAB_WC_OK, 100 + k, (uint32_t)n);
        if (n)
            assert_memory_equal(dst, src, n);
        assert_int_equal(dst[n], 0xee); /* nothing past the message */
    }
    F->mr_dereg(smr);
    F->mr_dereg(dmr);
    pair_close(&p);
    free(src);
    free(dst);
}

/* post_send_imm: the RECV's completion carries the 16 bits, a plain SEND's carries 0, and more
 * than 16 bits are refused at post time. */
static void fc_send_imm(void **state)
{
    const struct fc_harness *h = harness(state, FC_SEND_IMM);
    unsigned char src[64], dst[64];
    const struct fab_ops *F = h->ops;
    struct fab_wc wc;
    struct pair p;

    assert_non_null(F->post_send_imm); /* else the harness says why it has none */
    pair_open(&p, h, 2, 8, 0);
    struct fab_mr *smr = reg(&p, 0, src, sizeof(src)), *dmr = reg(&p, 1, dst, sizeof(dst));
    fill(src, sizeof(src), 5);
    assert_int_equal(F->post_recv(p.ep[1], 1, dst, sizeof(dst), dmr, 1), 0);
    assert_int_equal(F->post_recv(p.ep[1], 1, dst, sizeof(dst), dmr, 2), 0);
    assert_int_equal(F->post_send_imm(p.ep[0], 1, src, 40, smr, FAB_IMM_MAX + 1, 9), -EINVAL);
    assert_int_equal(F->post_send_imm(p.ep[0], 1, src, 40, smr, 0xbeef, 10), 0);
    assert_int_equal(F->post_send(p.ep[0], 1, src, 8, smr, 11), 0);
    expect_wc(F, p.cq[0], FAB_WC_SEND, FAB_WC_OK, 10, 40);
    expect_wc(F, p.cq[0], FAB_WC_SEND, FAB_WC_OK, 11, 8);
    assert_int_equal(get_wc(F, p.cq[1], &wc), 1);
    assert_int_equal(wc.op, FAB_WC_RECV);
    assert_int_equal(wc.wr_id, 1);
    assert_int_equal(wc.len, 40);
    assert_int_equal(wc.imm, 0xbeef);
    assert_int_equal(wc.lane, 1);
    assert_int_equal(get_wc(F, p.cq[1], &wc), 1);
    assert_int_equal(wc.wr_id, 2);
    assert_int_equal(wc.imm, 0);
    assert_memory_equal(dst, src, 8);
    F->mr_dereg(smr);
    F->mr_dereg(dmr);
    pair_close(&p);
}

/* Many small messages back to back (TCP: frames batched in one read and one write). */
static void fc_small_burst(void **state)
{
    const struct fc_harness *h = harness(state, FC_SMALL_BURST);
    enum { N = 200 };
    static uint32_t in[N], out[N];
    const struct fab_ops *F = h->ops;
    struct fab_mr *imr, *omr;
    struct fab_wc wc;
    struct pair p;

    pair_open(&p, h, 1, N, 0);
    imr = reg(&p, 1, in, sizeof(in));
    omr = reg(&p, 0, out, sizeof(out));
    for (uint32_t i = 0; i < N; i++) {
        out[i] = i * 2654435761u;
        assert_int_equal(F->post_recv(p.ep[1], 0, &in[i], sizeof(in[i]), imr, i), 0);
    }
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(F->post_send(p.ep[0], 0, &out[i], sizeof(out[i]), omr, i), 0);
    for (uint32_t i = 0; i < N; i++) {
        assert_int_equal(get_wc(F, p.cq[1], &wc), 1);
        assert_int_equal(wc.status, FAB_WC_OK);
        assert_int_equal(wc.wr_id, i);
        assert_int_equal(in[i], out[i]);
    }
    for (uint32_t i = 0; i < N; i++)
        expect_wc(F, p.cq[0], FAB_WC_SEND, FAB_WC_OK, i, sizeof(uint32_t));
    F->mr_dereg(imr);
    F->mr_dereg(omr);
    pair_close(&p);
}

/* Lanes run side by side; each keeps its own order and reports each message's length. */
static void fc_lanes_order(void **state)
{
    const struct fc_harness *h = harness(state, FC_LANES_ORDER);
    enum { L = 3, N = 100, SZ = 3000 };
    static unsigned char src[L][N][SZ], dst[L][N][SZ];
    const struct fab_ops *F = h->ops;
    int next[L] = {0}, sent = 0;
    struct fab_mr *smr, *dmr;
    struct fab_wc wc;
    struct pair p;

    pair_open(&p, h, L, N, 0);
    smr = reg(&p, 0, src, sizeof(src));
    dmr = reg(&p, 1, dst, sizeof(dst));
    for (int l = 0; l < L; l++)
        for (int i = 0; i < N; i++) {
            fill(src[l][i], SZ, (unsigned)(l * N + i));
            assert_int_equal(F->post_recv(p.ep[1], l, dst[l][i], SZ, dmr, (uint64_t)(l * N + i)),
                             0);
        }
    for (int i = 0; i < N; i++) /* interleaved, so the lanes run side by side */
        for (int l = 0; l < L; l++)
            assert_int_equal(
                    F->post_send(p.ep[0], l, src[l][i], SZ - (size_t)i, smr, (uint64_t)(l * N + i)),
                    0);
    for (int k = 0; k < L * N; k++) {
        assert_int_equal(get_wc(F, p.cq[1], &wc), 1);
        assert_int_equal(wc.status, FAB_WC_OK);
        assert_true(wc.lane >= 0 && wc.lane < L);
        assert_int_equal(wc.wr_id, (uint64_t)(wc.lane * N + next[wc.lane]));
        assert_int_equal(wc.len, SZ - next[wc.lane]);
        assert_memory_equal(dst[wc.lane][next[wc.lane]], src[wc.lane][next[wc.lane]], wc.len);
        next[wc.lane]++;
    }
    while (sent < L * N && get_wc(F, p.cq[0], &wc) == 1) {
        assert_int_equal(wc.status, FAB_WC_OK);
        sent++;
    }
    assert_int_equal(sent, L * N);
    F->mr_dereg(smr);
    F->mr_dereg(dmr);
    pair_close(&p);
}

/* Posts queue until the endpoint is connected, then go. */
static void fc_post_before_connect(void **state)
{
    const struct fc_harness *h = harness(state, FC_POST_BEFORE_CONNECT);
    static char x[3] = "ab", y[3];
    const struct fab_ops *F = h->ops;
    struct fab_mr *xm, *ym;
    struct pair p;

    memset(y, 0, sizeof(y));
    pair_create(&p, h, 1, 4, 0);
    xm = reg(&p, 0, x, sizeof(x));
    ym = reg(&p, 1, y, sizeof(y));
    assert_int_equal(F->post_recv(p.ep[1], 0, y, 3, ym, 1), 0);
    assert_int_equal(F->post_send(p.ep[0], 0, x, 3, xm, 2), 0);
    pair_connect(&p);
    expect_wc(F, p.cq[0], FAB_WC_SEND, FAB_WC_OK, 2, 3);
    expect_wc(F, p.cq[1], FAB_WC_RECV, FAB_WC_OK, 1, 3);
    assert_string_equal(y, "ab");
    F->mr_dereg(xm);
    F->mr_dereg(ym);
    pair_close(&p);
}

struct poster {
    const struct fab_ops *F;
    struct fab_ep *ep;
    struct fab_mr *mr;
    int lane, n;
    uint32_t *vals;
};

/* Posts n sends, retrying while the lane's queue is full. */
static void *post_thread(void *arg)
{
    struct poster *t = arg;

    for (int i = 0; i < t->n; i++) {
        int rc;

        while ((rc = t->F->post_send(t->ep, t->lane, &t->vals[i], sizeof(uint32_t), t->mr,
                                     (uint64_t)i)) == -EAGAIN)
            msleep(1);
        assert_int_equal(rc, 0);
    }
    return NULL;
}

/* Two threads post on two lanes while this one polls a CQ both endpoints share. */
static void fc_concurrent_post_poll(void **state)
{
    const struct fc_harness *h = harness(state, FC_CONCURRENT_POST_POLL);
    enum { N = 2000 };
    struct fab_ep_attr a = attr_of(2, 8, 0);
    static uint32_t out[2][N], in[2][N];
    const struct fab_ops *F = h->ops;
    int next[2] = {0}, sends = 0;
    struct fab_mr *omr, *imr;
    struct poster t[2];
    pthread_t th[2];
    struct fab_wc wc;
    struct pair p;

    a.max_recv_wr = N;
    pair_create_attr(&p, h, &a, 1);
    omr = reg(&p, 0, out, sizeof(out));
    imr = reg(&p, 1, in, sizeof(in));
    for (int l = 0; l < 2; l++)
        for (int i = 0; i < N; i++) {
            out[l][i] = (uint32_t)(l * N + i);
            assert_int_equal(F->post_recv(p.ep[1], l, &in[l][i], 4, imr, (uint64_t)i), 0);
        }
    pair_connect(&p);
    for (int l = 0; l < 2; l++) {
        t[l] = (struct poster){.F = F, .ep = p.ep[0], .mr = omr, .lane = l, .n = N, .vals = out[l]};
        assert_int_equal(pthread_create(&th[l], NULL, post_thread, &t[l]), 0);
    }
    while (next[0] + next[1] + sends < 4 * N) {
        assert_int_equal(get_wc(F, p.cq[0], &wc), 1);
        assert_int_equal(wc.status, FAB_WC_OK);
        if (wc.ep == p.ep[0]) {
            assert_int_equal(wc.op, FAB_WC_SEND);
            sends++;
            continue;
        }
        assert_ptr_equal(wc.ep, p.ep[1]);
        assert_int_equal(wc.wr_id, (uint64_t)next[wc.lane]);
        assert_int_equal(in[wc.lane][next[wc.lane]], out[wc.lane][next[wc.lane]]);
        next[wc.lane]++;
    }
    for (int l = 0; l < 2; l++)
        pthread_join(th[l], NULL);
    F->mr_dereg(omr);
    F->mr_dereg(imr);
    pair_close(&p);
}

/* ---- one-sided ---- */

static void fc_write_imm(void **state)
{
    const struct fc_harness *h = harness(state, FC_WRITE_IMM);
    enum { SZ = 65536, OFF = 100, LEN = 5000 };
    unsigned char *dst = malloc(SZ), *src = malloc(LEN);
    const struct fab_ops *F = h->ops;
    struct fab_remote_buf rb;
    struct fab_mr *mr, *smr;
    struct fab_wc wc;
    struct pair p;

    pair_open(&p, h, 1, 4, 0);
    memset(dst, 0x5a, SZ);
    fill(src, LEN, 3);
    mr = reg(&p, 1, dst, SZ);
    smr = reg(&p, 0, src, LEN);
    rb = F->mr_remote(mr, p.ep[1], dst + OFF);
    assert_int_equal(rb.addr, (uint64_t)(uintptr_t)(dst + OFF));
    assert_int_equal(F->post_recv(p.ep[1], 0, NULL, 0, NULL, 7), 0);
    assert_int_equal(F->post_write_imm(p.ep[0], 0, src, LEN, smr, rb, 0xbeef, 9), 0);
    expect_wc(F, p.cq[0], FAB_WC_WRITE, FAB_WC_OK, 9, LEN);
    assert_int_equal(get_wc(F, p.cq[1], &wc), 1);
    assert_int_equal(wc.status, FAB_WC_OK);
    assert_int_equal(wc.op, FAB_WC_RECV_IMM);
    assert_int_equal(wc.wr_id, 7);
    assert_int_equal(wc.len, LEN);
    assert_int_equal(wc.imm, 0xbeef);
    assert_ptr_equal(wc.ep, p.ep[1]);
    assert_memory_equal(dst + OFF, src, LEN);
    assert_int_equal(dst[OFF - 1], 0x5a);
    assert_int_equal(dst[OFF + LEN], 0x5a);

    /* Zero-length write: only the immediate travels (no rkey check, as on verbs). */
    struct fab_remote_buf none = {0, 0};
    assert_int_equal(F->post_recv(p.ep[1], 0, NULL, 0, NULL, 8), 0);
    assert_int_equal(F->post_write_imm(p.ep[0], 0, NULL, 0, NULL, none, 42, 10), 0);
    expect_wc(F, p.cq[0], FAB_WC_WRITE, FAB_WC_OK, 10, 0);
    assert_int_equal(get_wc(F, p.cq[1], &wc), 1);
    assert_int_equal(wc.op, FAB_WC_RECV_IMM);
    assert_int_equal(wc.imm, 42);
    assert_int_equal(wc.len, 0);

    /* A local buffer outside the mr it names is refused at post time (the lkey check). */
    assert_int_equal(F->post_send(p.ep[0], 0, src + 1, LEN, smr, 11), -EINVAL);
    assert_int_equal(F->post_send(p.ep[0], 0, src, LEN, mr, 11), -EINVAL); /* other domain */
    assert_int_equal(F->post_send(p.ep[0], 5, src, 1, smr, 11), -EINVAL);
    F->mr_dereg(smr);
    F->mr_dereg(mr);
    pair_close(&p);
    free(dst);
    free(src);
}

enum oob_kind { OOB_ADDR, OOB_KEY, OOB_DEREG, OOB_OTHER_DOMAIN, OOB_OTHER_EP };

/* The remote buffer a rejected write names, by kind; *mr2 and *other are what it made. */
static struct fab_remote_buf bad_dst(struct pair *p, enum oob_kind kind, unsigned char *dst,
                                     size_t sz, struct fab_mr *mr, struct fab_mr **mr2,
                                     struct fab_ep **other)
{
    const struct fab_ops *F = p->F;
    struct fab_remote_buf rb = {0, 0};

    if (kind == OOB_ADDR) /* 256 bytes from here cross the end, into the next page */
        rb = F->mr_remote(mr, p->ep[1], dst + sz - 100);
    if (kind == OOB_KEY || kind == OOB_DEREG || kind == OOB_OTHER_DOMAIN)
        rb = F->mr_remote(mr, p->ep[1], dst);
    if (kind == OOB_KEY)
        rb.rkey ^= 1;
    if (kind == OOB_DEREG)
        F->mr_dereg(mr);
    if (kind == OOB_OTHER_DOMAIN) { /* a valid key, but of the sender's domain */
        *mr2 = reg(p, 0, dst, sz);
        rb = F->mr_remote(*mr2, p->ep[0], dst);
    }
    if (kind == OOB_OTHER_EP) { /* a live key of the target's domain, advertised elsewhere */
        assert_int_equal(F->ep_create(p->dom[1], p->cq[1], &p->attr, other), 0);
        rb = F->mr_remote(mr, *other, dst);
        assert_int_not_equal(rb.rkey, 0);
    }
    return rb;
}

/* The writer learns its peer is gone: its RECV fails; its WRITE completes, OK where writes
 * complete once sent (then before the RECV's failure), else OK or failed. */
static void writer_sees_loss(const struct pair *p, size_t len)
{
    const struct fab_ops *F = p->F;
    int seen_write = 0, seen_recv = 0;
    struct fab_wc wc;

    if (p->h->writes_done_when_sent)
        expect_wc(F, p->cq[0], FAB_WC_WRITE, FAB_WC_OK, 3, (uint32_t)len);
    while (!seen_recv || (!p->h->writes_done_when_sent && !seen_write)) {
        assert_int_equal(get_wc(F, p->cq[0], &wc), 1);
        if (wc.wr_id == 3 && !p->h->writes_done_when_sent) {
            assert_false(seen_write);
            seen_write = 1;
            continue;
        }
        assert_int_equal(wc.wr_id, 4);
        assert_int_not_equal(wc.status, FAB_WC_OK);
        if (p->h->writes_done_when_sent)
            assert_int_equal(wc.status, FAB_WC_PEER_LOST);
        seen_recv = 1;
    }
    assert_int_not_equal(fc_ep_status(F, p->ep[0], NULL), FAB_WC_OK);
}

static void check_write_rejected(const struct fc_harness *h, enum oob_kind kind)
{
    enum { SZ = 4096, PG = 4096 };
    /* Page-aligned and a page long: verbs registers whole pages, so only a write past the
     * page is outside what the NIC knows. The 64 bytes after it are canaries. */
    unsigned char *dst = aligned_alloc(PG, SZ + PG);
    static unsigned char src[256];
    const struct fab_ops *F = h->ops;
    struct fab_mr *mr, *mr2 = NULL, *smr;
    struct fab_ep *other = NULL;
    struct fab_remote_buf rb;
    const char *why;
    struct fab_wc wc;
    struct pair p;

    pair_open(&p, h, 1, 4, 0);
    memset(dst, 0xc3, SZ + 64);
    memset(src, 0x11, sizeof(src));
    mr = reg(&p, 1, dst, SZ);
    smr = reg(&p, 0, src, sizeof(src));
    rb = bad_dst(&p, kind, dst, SZ, mr, &mr2, &other);
    assert_int_equal(F->post_recv(p.ep[1], 0, NULL, 0, NULL, 1), 0);
    assert_int_equal(F->post_recv(p.ep[1], 0, NULL, 0, NULL, 2), 0);
    assert_int_equal(F->post_recv(p.ep[0], 0, NULL, 0, NULL, 4), 0);
    assert_int_equal(F->post_write_imm(p.ep[0], 0, src, sizeof(src), smr, rb, 5, 3), 0);
    assert_int_equal(get_wc(F, p.cq[1], &wc), 1);
    assert_int_equal(wc.status, FAB_WC_REMOTE_ACCESS);
    assert_int_equal(wc.wr_id, 1);
    assert_int_equal(get_wc(F, p.cq[1], &wc), 1);
    assert_int_equal(wc.status, FAB_WC_FLUSHED);
    assert_int_equal(wc.wr_id, 2);
    assert_int_equal(fc_ep_status(F, p.ep[1], &why), FAB_WC_REMOTE_ACCESS);
    assert_int_equal(F->ep_error(p.ep[1], NULL), -EACCES); /* fabric.h's table */
    assert_non_null(strstr(why, FC_PEER));
    assert_non_null(strstr(why, h->lane0));
    for (int i = 0; i < SZ + 64; i++)
        assert_int_equal(dst[i], 0xc3);
    writer_sees_loss(&p, sizeof(src));
    assert_int_equal(F->post_recv(p.ep[1], 0, NULL, 0, NULL, 9), -ENOTCONN);
    if (kind != OOB_DEREG)
        F->mr_dereg(mr);
    if (mr2)
        F->mr_dereg(mr2);
    F->mr_dereg(smr);
    if (other)
        F->ep_close(other);
    pair_close(&p);
    free(dst);
}

static void fc_write_out_of_bounds(void **state)
{
    check_write_rejected(harness(state, FC_WRITE_OUT_OF_BOUNDS), OOB_ADDR);
}

static void fc_write_bad_key(void **state)
{
    check_write_rejected(harness(state, FC_WRITE_BAD_KEY), OOB_KEY);
}

static void fc_write_deregistered(void **state)
{
    check_write_rejected(harness(state, FC_WRITE_DEREGISTERED), OOB_DEREG);
}

static void fc_write_other_domain(void **state)
{
    check_write_rejected(harness(state, FC_WRITE_OTHER_DOMAIN), OOB_OTHER_DOMAIN);
}

/* A peer connected on one endpoint cannot write into what was advertised on another. */
static void fc_write_other_endpoint(void **state)
{
    check_write_rejected(harness(state, FC_WRITE_OTHER_ENDPOINT), OOB_OTHER_EP);
}

/* ---- errors, limits ---- */

/* A SEND longer than the RECV it lands in fails that RECV, and the endpoint. */
static void fc_len_err(void **state)
{
    const struct fc_harness *h = harness(state, FC_LEN_ERR);
    static char small[10], big[100];
    const struct fab_ops *F = h->ops;
    struct fab_mr *sm, *bm;
    struct pair p;

    pair_open(&p, h, 1, 4, 0);
    sm = reg(&p, 1, small, sizeof(small));
    bm = reg(&p, 0, big, sizeof(big));
    assert_int_equal(F->post_recv(p.ep[1], 0, small, sizeof(small), sm, 1), 0);
    assert_int_equal(F->post_recv(p.ep[1], 0, small, sizeof(small), sm, 2), 0);
    assert_int_equal(F->post_send(p.ep[0], 0, big, sizeof(big), bm, 3), 0);
    expect_wc(F, p.cq[1], FAB_WC_RECV, FAB_WC_LEN_ERR, 1, 0);
    expect_wc(F, p.cq[1], FAB_WC_RECV, FAB_WC_FLUSHED, 2, 0);
    assert_int_equal(fc_ep_status(F, p.ep[1], NULL), FAB_WC_LEN_ERR);
    assert_int_equal(F->ep_error(p.ep[1], NULL), -EMSGSIZE); /* fabric.h's table */
    F->mr_dereg(sm);
    F->mr_dereg(bm);
    pair_close(&p);
}

/* A lane takes max_recv_wr RECVs and max_send_wr sends, then says -EAGAIN: before the endpoint
 * is connected nothing can leave, so the queues are sure to be full. */
static void fc_queue_full(void **state)
{
    const struct fc_harness *h = harness(state, FC_QUEUE_FULL);
    enum { WR = 4 };
    struct fab_ep_attr a = attr_of(1, WR, 0);
    static char r[WR + 1], s[WR + 1];
    const struct fab_ops *F = h->ops;
    struct fab_domain *dom;
    struct fab_mr *rm, *sm;
    struct fab_cq *cq;
    struct fab_ep *ep;

    assert_int_equal(F->domain_open(h->dev, &dom), 0);
    assert_int_equal(F->cq_create(dom, 4, &cq), 0);
    assert_int_equal(F->ep_create(dom, cq, &a, &ep), 0);
    assert_int_equal(F->mr_reg(dom, r, sizeof(r), &rm), 0);
    assert_int_equal(F->mr_reg(dom, s, sizeof(s), &sm), 0);
    for (int i = 0; i < WR; i++)
        assert_int_equal(F->post_recv(ep, 0, &r[i], 1, rm, (uint64_t)i), 0);
    assert_int_equal(F->post_recv(ep, 0, &r[WR], 1, rm, 9), -EAGAIN);
    for (int i = 0; i < WR; i++)
        assert_int_equal(F->post_send(ep, 0, &s[i], 1, sm, (uint64_t)i), 0);
    assert_int_equal(F->post_send(ep, 0, &s[WR], 1, sm, 9), -EAGAIN);
    assert_int_equal(F->post_send(ep, 0, s, (1u << 30) + 1, sm, 9), -EMSGSIZE);
    F->ep_close(ep);
    F->mr_dereg(rm);
    F->mr_dereg(sm);
    F->cq_destroy(cq);
    F->domain_close(dom);
}

/* ---- the CQ ---- */

static void fc_cq_wait_timeout(void **state)
{
    const struct fc_harness *h = harness(state, FC_CQ_WAIT_TIMEOUT);
    const struct fab_ops *F = h->ops;
    struct fab_domain *dom;
    struct fab_cq *cq;
    uint64_t t0, dt;

    assert_int_equal(F->domain_open(h->dev, &dom), 0);
    assert_int_equal(F->cq_create(dom, 1, &cq), 0);
    t0 = jaccl_now_ns();
    assert_int_equal(F->cq_wait(cq, t0 + 100 * FC_MS), -ETIMEDOUT);
    dt = jaccl_now_ns() - t0;
    assert_true(dt >= 100 * FC_MS);
    /* Its own deadline ended the wait, not a later one; how soon after it this thread got the
     * CPU back is the scheduler's business, so the bound only catches a wait that runs on. */
    assert_true(dt < FC_WAIT_NS / 2);
    assert_int_equal(F->cq_wait(cq, t0), -ETIMEDOUT); /* already past */
    F->cq_wake(cq);                                   /* nobody waiting: kept for the next waiter */
    assert_int_equal(F->cq_wait(cq, UINT64_MAX), 0);
    F->cq_destroy(cq);
    F->domain_close(dom);
}

struct delayed {
    struct pair *p;
    char *b;
    struct fab_mr *mr;
    int wake_only;
};

static void *delayed_post(void *arg)
{
    struct delayed *d = arg;

    msleep(100);
    if (d->wake_only)
        d->p->F->cq_wake(d->p->cq[1]);
    else
        assert_int_equal(d->p->F->post_send(d->p->ep[0], 0, d->b, 1, d->mr, 1), 0);
    return NULL;
}

static void fc_cq_wait_wakes(void **state)
{
    const struct fc_harness *h = harness(state, FC_CQ_WAIT_WAKES);
    static char b = 'b', r;
    const struct fab_ops *F = h->ops;
    struct delayed d = {.b = &b};
    struct fab_mr *rm;
    struct fab_wc wc;
    struct pair p;
    pthread_t t;
    uint64_t t0, dt;

    r = 0;
    pair_open(&p, h, 1, 4, 0);
    d.p = &p;
    d.mr = reg(&p, 0, &b, 1);
    rm = reg(&p, 1, &r, 1);
    assert_int_equal(F->post_recv(p.ep[1], 0, &r, 1, rm, 1), 0);
    for (int wake_only = 0; wake_only < 2; wake_only++) {
        d.wake_only = wake_only;
        t0 = jaccl_now_ns();
        assert_int_equal(pthread_create(&t, NULL, delayed_post, &d), 0);
        /* 0, not -ETIMEDOUT: the post or the wake ended the wait, however late the threads ran
         * (the deadline is only a hang detector). */
        assert_int_equal(F->cq_wait(p.cq[1], t0 + FC_WAIT_NS), 0);
        dt = jaccl_now_ns() - t0;
        pthread_join(t, NULL);
        assert_true(dt >= 90 * FC_MS); /* it did wait for them */
        assert_int_equal(F->cq_poll(p.cq[1], &wc, 1), !wake_only);
    }
    assert_int_equal(r, 'b');
    /* The send's own completion (verbs: once acknowledged) */
    expect_wc(F, p.cq[0], FAB_WC_SEND, FAB_WC_OK, 1, 1);
    F->mr_dereg(d.mr);
    F->mr_dereg(rm);
    pair_close(&p);
}

/* ---- the peer's close, our close ---- */

/* The test clock (util/clock.h) stands still unless a test moves it. */
static _Atomic uint64_t g_fake_ns;

static uint64_t fake_clock(void)
{
    return atomic_load(&g_fake_ns);
}

/* The close itself is what the survivor hears, not a timer: the test clock stands still, so
 * no deadline of any kind can pass before the failure comes. */
static void fc_peer_close(void **state)
{
    const struct fc_harness *h = harness(state, FC_PEER_CLOSE);
    const struct fab_ops *F = h->ops;
    static char b[4][8];
    char want[128];
    struct fab_mr *bm;
    const char *why;
    struct fab_wc wc;
    struct pair p;

    atomic_store(&g_fake_ns, jaccl_mono_ns());
    jaccl_clock_set(fake_clock);
    pair_open(&p, h, 2, 4, 0);
    bm = reg(&p, 1, b, sizeof(b));
    for (int i = 0; i < 4; i++)
        assert_int_equal(F->post_recv(p.ep[1], i % 2, b[i], 8, bm, (uint64_t)i), 0);
    F->ep_close(p.ep[0]);
    p.ep[0] = NULL;
    assert_int_equal(poll_wc(F, p.cq[1], &wc), 1);
    assert_int_equal(wc.status, FAB_WC_PEER_LOST);
    for (int i = 1; i < 4; i++) {
        assert_int_equal(poll_wc(F, p.cq[1], &wc), 1);
        assert_int_equal(wc.status, FAB_WC_FLUSHED);
    }
    assert_int_equal(fc_ep_status(F, p.ep[1], &why), FAB_WC_PEER_LOST);
    snprintf(want, sizeof(want), "peer %s %s", FC_PEER, h->closed_why);
    assert_non_null(strstr(why, want));
    F->mr_dereg(bm);
    pair_close(&p);
}

/* Both ends close while large messages are in flight: whatever completes does so before the
 * close returns, never after. */
static void fc_close_in_flight(void **state)
{
    const struct fc_harness *h = harness(state, FC_CLOSE_IN_FLIGHT);
    enum { N = 8, SZ = 8 << 20 };
    unsigned char *buf = malloc(SZ), *rbuf = malloc(SZ);
    const struct fab_ops *F = h->ops;
    struct fab_mr *bm, *rm;
    struct fab_wc wc;
    struct pair p;

    memset(buf, 1, SZ);
    pair_open(&p, h, 2, N, 300 * FC_MS);
    bm = reg(&p, 0, buf, SZ);
    rm = reg(&p, 1, rbuf, SZ);
    for (int i = 0; i < N; i++) {
        assert_int_equal(F->post_recv(p.ep[1], i % 2, rbuf, SZ, rm, (uint64_t)i), 0);
        assert_int_equal(F->post_send(p.ep[0], i % 2, buf, SZ, bm, (uint64_t)i), 0);
    }
    F->ep_close(p.ep[1]); /* receiver first: the sender is mid-stream to a dead peer */
    p.ep[1] = NULL;
    msleep(10);
    F->ep_close(p.ep[0]);
    p.ep[0] = NULL;
    for (int s = 0; s < 2; s++)
        while (F->cq_poll(p.cq[s], &wc, 1) == 1)
            assert_true(wc.wr_id < N);
    msleep(50);
    assert_int_equal(F->cq_poll(p.cq[0], &wc, 1), 0); /* nothing after close returned */
    assert_int_equal(F->cq_poll(p.cq[1], &wc, 1), 0);
    F->mr_dereg(bm);
    F->mr_dereg(rm);
    pair_close(&p);
    free(buf);
    free(rbuf);
}

/* ---- running it ---- */

static int fc_setup(void **state)
{
    const struct fc_harness *h = *state;

    if (h->setup)
        h->setup();
    return 0;
}

/* Also after a failed assertion: the real clock back, the harness's own teardown. */
static int fc_teardown(void **state)
{
    const struct fc_harness *h = *state;

    jaccl_clock_set(NULL);
    if (h->silent_drops)
        assert_int_equal(h->silent_drops(), 0);
    if (h->teardown)
        h->teardown();
    return 0;
}

#define FC_TEST(f, h) cmocka_unit_test_prestate_setup_teardown(f, fc_setup, fc_teardown, (void *)h)

int fc_run(const struct fc_harness *h)
{
    const struct CMUnitTest tests[] = {
            FC_TEST(fc_send_recv_sizes, h),      FC_TEST(fc_small_burst, h),
            FC_TEST(fc_lanes_order, h),          FC_TEST(fc_post_before_connect, h),
            FC_TEST(fc_concurrent_post_poll, h), FC_TEST(fc_write_imm, h),
            FC_TEST(fc_write_out_of_bounds, h),  FC_TEST(fc_write_bad_key, h),
            FC_TEST(fc_write_deregistered, h),   FC_TEST(fc_write_other_domain, h),
            FC_TEST(fc_write_other_endpoint, h), FC_TEST(fc_len_err, h),
            FC_TEST(fc_queue_full, h),           FC_TEST(fc_cq_wait_timeout, h),
            FC_TEST(fc_cq_wait_wakes, h),        FC_TEST(fc_peer_close, h),
            FC_TEST(fc_close_in_flight, h),      FC_TEST(fc_send_imm, h),
    };

    _Static_assert(sizeof(tests) / sizeof(tests[0]) == FC_NTESTS, "one entry per enum fc_test");
    return cmocka_run_group_tests_name(h->name, tests, NULL, NULL);
}
