/* SPDX-License-Identifier: BSD-3-Clause */
/* The TCP fabric back end's own mechanics, driven through fab_tcp_ops by two endpoints in one
 * process over 127.0.0.1 and against raw sockets that play a broken or silent peer: framing,
 * heartbeats and liveness, the pollers' hand-off of reads, registration keys and their scope,
 * the orderly close of the sockets. What every back end promises (fabric.h) is the contract
 * suite's, run on TCP by test_fab_contract_tcp.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fab_contract.h"

#include "fabric/fabric.h"
#include "fabric/tcp/tcp.h"
#include "fabric/tcp/tcp_int.h"
#include "fabric/tcp/tcp_wire.h"
#include "util/clock.h"
#include "util/crowd.h"
#include "util/log.h"
#include "util/param.h"

static const struct fab_ops *F = &fab_tcp_ops;

#define MS 1000000ull

/* ---- helpers ---- */

struct pair {
    struct fab_domain *dom[2];
    struct fab_cq *cq[2];
    struct fab_ep *ep[2];
    int nlanes;
};

static struct fab_ep_attr attr_of(int nlanes, int wr, uint64_t liveness_ns)
{
    struct fab_ep_attr a = {.nlanes = nlanes,
                            .max_send_wr = wr,
                            .max_recv_wr = wr,
                            .liveness_ns = liveness_ns,
                            .peer_desc = "127.0.0.1:5000"};
    return a;
}

static void pair_create(struct pair *p, int nlanes, int wr, uint64_t liveness_ns)
{
    struct fab_ep_attr a = attr_of(nlanes, wr, liveness_ns);

    memset(p, 0, sizeof(*p));
    p->nlanes = nlanes;
    for (int s = 0; s < 2; s++) {
        assert_int_equal(F->domain_open(0, &p->dom[s]), 0);
        assert_int_equal(F->cq_create(p->dom[s], 8, &p->cq[s]), 0);
        assert_int_equal(F->side_socks(&a), nlanes);
        assert_int_equal(F->ep_create(p->dom[s], p->cq[s], &a, &p->ep[s]), 0);
        assert_int_equal(F->ep_local_info(p->ep[s], NULL, 0), 0);
    }
}

static void pair_connect(struct pair *p)
{
    int sa[FAB_MAX_LANES], sb[FAB_MAX_LANES];

    for (int i = 0; i < p->nlanes; i++)
        fc_tcp_pair(&sa[i], &sb[i]);
    assert_int_equal(F->ep_connect(p->ep[0], NULL, 0, sa, p->nlanes), 0);
    assert_int_equal(F->ep_connect(p->ep[1], NULL, 0, sb, p->nlanes), 0);
}

static void pair_open(struct pair *p, int nlanes, int wr, uint64_t liveness_ns)
{
    pair_create(p, nlanes, wr, liveness_ns);
    pair_connect(p);
}

static void pair_close(struct pair *p)
{
    for (int s = 0; s < 2; s++) {
        F->ep_close(p->ep[s]);
        F->cq_destroy(p->cq[s]);
        F->domain_close(p->dom[s]);
    }
}

/* One completion within ms milliseconds: 1, or 0 on timeout. */
static int get_wc(struct fab_cq *cq, struct fab_wc *wc, int ms)
{
    uint64_t dl = jaccl_now_ns() + (uint64_t)ms * MS;

    for (;;) {
        if (F->cq_poll(cq, wc, 1) == 1)
            return 1;
        if (F->cq_wait(cq, dl) == -ETIMEDOUT)
            return F->cq_poll(cq, wc, 1);
    }
}

static void expect_wc(struct fab_cq *cq, enum fab_wc_op op, enum fab_wc_status st, uint64_t wr_id,
                      uint32_t len)
{
    struct fab_wc wc;

    assert_int_equal(get_wc(cq, &wc, 5000), 1);
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

/* ---- waiting without betting on the scheduler ----
 * A test that waits for one of the fabric's threads to do something waits for the thing
 * itself, up to WAIT_NS of real time: on a loaded 2-core box a thread may not run for hundreds
 * of milliseconds, so a fixed sleep or a "within N ms" check fails there for no fault of the
 * plugin. Rules about elapsed time run on the test clock below instead, which moves only when
 * the test moves it. Both use jaccl_mono_ns(), which the test clock leaves alone. */
#define WAIT_NS (10000 * MS)

typedef int (*cond_fn)(const void *arg);

/* 1 once cond(arg) holds (looked at every 100 us), 0 if it still fails after WAIT_NS. */
static int wait_for(cond_fn cond, const void *arg)
{
    struct timespec gap = {.tv_nsec = 100000};
    uint64_t dl = jaccl_mono_ns() + WAIT_NS;

    while (!cond(arg)) {
        if (jaccl_mono_ns() >= dl)
            return cond(arg);
        nanosleep(&gap, NULL);
    }
    return 1;
}

/* One completion, polled for (no cq_wait, whose deadlines follow the test clock) for up to
 * WAIT_NS of real time: 1, or 0. */
static int poll_wc(struct fab_cq *cq, struct fab_wc *wc)
{
    struct timespec gap = {.tv_nsec = 100000};
    uint64_t dl = jaccl_mono_ns() + WAIT_NS;

    while (F->cq_poll(cq, wc, 1) != 1) {
        if (jaccl_mono_ns() >= dl)
            return F->cq_poll(cq, wc, 1);
        nanosleep(&gap, NULL);
    }
    return 1;
}

/* The test clock (util/clock.h): stands still unless the test advances it, so "a large message
 * within the last tick" or "silent for the liveness timeout" is true exactly as long as the test
 * says, however late the I/O threads get to look. */
static _Atomic uint64_t g_fake_ns;

static uint64_t fake_clock(void)
{
    return atomic_load(&g_fake_ns);
}

static void fake_clock_start(void)
{
    atomic_store(&g_fake_ns, jaccl_mono_ns());
    jaccl_clock_set(fake_clock);
}

static uint64_t fake_clock_advance(uint64_t ns)
{
    return atomic_fetch_add(&g_fake_ns, ns) + ns;
}

/* Teardown: the real clock back, also after a failed assertion. */
static int clock_restore(void **state)
{
    jaccl_clock_set(NULL);
    return 0;
}

/* ---- devices ---- */

static void test_devices(void **state)
{
    const struct jaccl_param_desc *d = jaccl_param_desc(JP_SOCKET_IFNAME);
    struct jaccl_link a;
    int n;

    setenv(d->name, "lo", 1);
    jaccl_param_reset();
    n = F->init();
    assert_int_equal(n, F->ndevs());
    assert_true(n >= 1);
    for (int i = 0; i < n; i++) {
        const struct fab_dev_info *info = F->dev_info(i);

        assert_non_null(info);
        assert_int_equal(info->guid, (uint64_t)i);
        assert_int_equal(info->port, 0);
        assert_true(info->speed_mbps > 0);
        assert_int_equal(info->max_comms, 65536);
        assert_int_equal(info->max_msg_bytes, (size_t)1 << 30);
        assert_int_equal(fab_tcp_dev_link(i, &a), 0);
        assert_true(a.addr.sa.sa_family == AF_INET || a.addr.sa.sa_family == AF_INET6);
        assert_true(a.prefix > 0); /* every interface has a netmask */
        for (int j = 0; j < i; j++)
            assert_string_not_equal(info->name, F->dev_info(j)->name);
    }
    assert_string_equal(F->dev_info(0)->name, "lo");
    assert_int_equal(F->dev_info(0)->speed_mbps, 10000); /* lo has no speed: fallback */
    assert_null(F->dev_info(n));
    assert_int_equal(fab_tcp_dev_link(n, &a), -EINVAL);
    F->fini();
    assert_int_equal(F->ndevs(), 0);
    unsetenv(d->name);
    jaccl_param_reset();
}

/* ---- sockets ---- */

/* The same endpoints over an AF_UNIX socketpair (no TCP options to set). */
static void test_unix_socketpair(void **state)
{
    char x[5] = "unix", y[5] = {0};
    struct pair p;
    int sv[2];

    pair_create(&p, 1, 4, 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_int_equal(F->ep_connect(p.ep[0], NULL, 0, &sv[0], 1), 0);
    assert_int_equal(F->ep_connect(p.ep[1], NULL, 0, &sv[1], 1), 0);
    assert_int_equal(F->post_recv(p.ep[1], 0, y, sizeof(y), NULL, 1), 0);
    assert_int_equal(F->post_send(p.ep[0], 0, x, sizeof(x), NULL, 2), 0);
    expect_wc(p.cq[1], FAB_WC_RECV, FAB_WC_OK, 1, sizeof(x));
    expect_wc(p.cq[0], FAB_WC_SEND, FAB_WC_OK, 2, sizeof(x));
    assert_string_equal(y, "unix");
    pair_close(&p);
}

/* ---- one-sided ---- */

/* What TCP allows beyond the contract (fab_contract.c has the rest): the whole 32-bit immediate
 * (verbs keeps the upper half for its sequence numbers) and local buffers nobody registered. */
static void test_write_imm_beyond_contract(void **state)
{
    enum { SZ = 4096, LEN = 1000 };
    unsigned char *dst = malloc(SZ), src[LEN];
    struct fab_remote_buf rb;
    struct fab_mr *mr;
    struct fab_wc wc;
    struct pair p;

    pair_open(&p, 1, 4, 0);
    fill(src, LEN, 5);
    assert_int_equal(F->mr_reg(p.dom[1], dst, SZ, &mr), 0);
    rb = F->mr_remote(mr, p.ep[1], dst);
    assert_int_equal(F->post_recv(p.ep[1], 0, NULL, 0, NULL, 7), 0);
    assert_int_equal(F->post_write_imm(p.ep[0], 0, src, LEN, NULL, rb, 0xdeadbeef, 9), 0);
    expect_wc(p.cq[0], FAB_WC_WRITE, FAB_WC_OK, 9, LEN);
    assert_int_equal(get_wc(p.cq[1], &wc, 5000), 1);
    assert_int_equal(wc.status, FAB_WC_OK);
    assert_int_equal(wc.op, FAB_WC_RECV_IMM);
    assert_int_equal(wc.imm, 0xdeadbeef);
    assert_int_equal(wc.len, LEN);
    assert_memory_equal(dst, src, LEN);
    assert_int_equal(F->post_send(p.ep[0], 5, src, 1, NULL, 11), -EINVAL); /* no such lane */
    F->mr_dereg(mr);
    pair_close(&p);
    free(dst);
}

/* The inverse of splitmix64's finaliser, the old key mixer: under it, consecutive keys of
 * the old scheme differed by exactly 1, so one key revealed all the others. */
static uint64_t inv_odd(uint64_t c)
{
    uint64_t x = c;
    for (int i = 0; i < 6; i++)
        x *= 2 - c * x;
    return x;
}

static uint64_t unmix64(uint64_t z)
{
    z ^= z >> 31 ^ z >> 62;
    z *= inv_odd(0x94d049bb133111ebull);
    z ^= z >> 27 ^ z >> 54;
    z *= inv_odd(0xbf58476d1ce4e5b9ull);
    z ^= z >> 30 ^ z >> 60;
    return z;
}

/* Keys are random: non-zero, distinct, no arithmetic relation between consecutive ones, and
 * each bit varies (64 keys with a bit stuck would be 2^-63 likely). */
static void test_keys_random(void **state)
{
    enum { N = 64 };
    static char buf[N];
    struct fab_mr *mr[N];
    uint64_t key[N], ones = 0, zeros = 0;
    struct pair p;

    pair_create(&p, 1, 4, 0);
    for (int i = 0; i < N; i++) {
        assert_int_equal(F->mr_reg(p.dom[0], buf + i, 1, &mr[i]), 0);
        key[i] = F->mr_remote(mr[i], p.ep[0], buf + i).rkey;
        assert_int_not_equal(key[i], 0);
        ones |= key[i];
        zeros |= ~key[i];
        for (int j = 0; j < i; j++)
            assert_int_not_equal(key[i], key[j]);
        if (i > 0)
            assert_int_not_equal(unmix64(key[i]) - unmix64(key[i - 1]), 1);
    }
    assert_int_equal(ones, UINT64_MAX);
    assert_int_equal(zeros, UINT64_MAX);
    /* Advertising again hands out the same key. */
    assert_int_equal(F->mr_remote(mr[0], p.ep[0], buf).rkey, key[0]);
    for (int i = 0; i < N; i++)
        F->mr_dereg(mr[i]);
    for (int s = 0; s < 2; s++) {
        F->ep_close(p.ep[s]);
        F->cq_destroy(p.cq[s]);
        F->domain_close(p.dom[s]);
    }
}

/* A registration advertised on many endpoints over a long job keeps only the live ones in its
 * scope: closing an endpoint drops it, the others keep their access. */
static void test_scope_pruned_on_close(void **state)
{
    static char buf[256];
    struct fab_ep_attr a = attr_of(1, 4, 0);
    struct fab_ep *extra[3];
    struct fab_mr *mr;
    struct tcp_mr *pinned;
    struct pair p;
    uint64_t key;

    pair_create(&p, 1, 4, 0);
    assert_int_equal(F->mr_reg(p.dom[0], buf, sizeof(buf), &mr), 0);
    key = F->mr_remote(mr, p.ep[0], buf).rkey;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(F->ep_create(p.dom[0], p.cq[0], &a, &extra[i]), 0);
        assert_int_equal(F->mr_remote(mr, extra[i], buf).rkey, key);
    }
    assert_int_equal(tcp_mr_of(mr)->nscope, 4);
    for (int i = 0; i < 3; i++)
        F->ep_close(extra[i]);
    assert_int_equal(tcp_mr_of(mr)->nscope, 1);
    assert_int_equal(fab_tcp_mr_pin(tcp_ep_of(p.ep[0]), key, (uint64_t)(uintptr_t)buf, 16, &pinned),
                     0);
    fab_tcp_mr_unpin(pinned);
    F->mr_dereg(mr);
    pair_close(&p);
}

/* A frame that is not one is the peer's fault: the endpoint fails with PEER_PROTO (which the
 * core reports as ncclRemoteError), on the RECV it would have consumed. */
static void test_corrupt_frame_is_peer_proto(void **state)
{
    struct fab_ep_attr a = attr_of(1, 4, 0);
    unsigned char junk[sizeof(struct tcp_hdr)];
    struct fab_domain *dom;
    struct fab_cq *cq;
    struct fab_ep *ep;
    const char *why;
    struct fab_wc wc;
    int s, raw;

    fc_tcp_pair(&raw, &s);
    assert_int_equal(F->domain_open(0, &dom), 0);
    assert_int_equal(F->cq_create(dom, 4, &cq), 0);
    assert_int_equal(F->ep_create(dom, cq, &a, &ep), 0);
    assert_int_equal(F->ep_connect(ep, NULL, 0, &s, 1), 0);
    assert_int_equal(F->post_recv(ep, 0, NULL, 0, NULL, 1), 0);
    memset(junk, 0x77, sizeof(junk));
    assert_int_equal(write(raw, junk, sizeof(junk)), sizeof(junk));
    assert_int_equal(get_wc(cq, &wc, 5000), 1);
    assert_int_equal(wc.wr_id, 1);
    assert_int_equal(wc.status, FAB_WC_PEER_PROTO);
    assert_int_equal(fc_ep_status(F, ep, &why), FAB_WC_PEER_PROTO);
    assert_non_null(strstr(why, "corrupt frame"));
    F->ep_close(ep);
    F->cq_destroy(cq);
    F->domain_close(dom);
    close(raw);
}

static int saw_one_eof(const void *arg)
{
    return atomic_load(&tcp_ep_of((struct fab_ep *)arg)->neof) == 1;
}

/* The peer closes its lanes one after the other (as a process exit does, in no set order): a
 * lane closed between frames fails nothing while another lane still delivers what was sent
 * before; only what did not get through fails, once every lane is closed. */
static void test_lane_eof_keeps_other_lanes(void **state)
{
    struct fab_ep_attr a = attr_of(2, 4, 0);
    unsigned char msg[300], got[300];
    struct fab_domain *dom;
    struct fab_cq *cq;
    struct fab_ep *ep;
    struct tcp_hdr h;
    struct fab_wc wc;
    int s[2], raw[2];

    for (int i = 0; i < 2; i++)
        fc_tcp_pair(&raw[i], &s[i]);
    assert_int_equal(F->domain_open(0, &dom), 0);
    assert_int_equal(F->cq_create(dom, 8, &cq), 0);
    assert_int_equal(F->ep_create(dom, cq, &a, &ep), 0);
    assert_int_equal(F->ep_connect(ep, NULL, 0, s, 2), 0);
    assert_int_equal(F->post_recv(ep, 1, got, sizeof(got), NULL, 1), 0);
    assert_int_equal(F->post_recv(ep, 0, got, sizeof(got), NULL, 2), 0);
    close(raw[0]);
    assert_true(wait_for(saw_one_eof, ep)); /* the I/O thread has seen lane 0's EOF ... */
    assert_int_equal(fc_ep_status(F, ep, NULL), FAB_WC_OK); /* ... and failed nothing */
    fill(msg, sizeof(msg), 9);
    h = tcp_hdr_make(TCP_OP_SEND, sizeof(msg), 0, 0, 0);
    assert_int_equal(write(raw[1], &h, sizeof(h)), sizeof(h));
    assert_int_equal(write(raw[1], msg, sizeof(msg)), sizeof(msg));
    close(raw[1]);
    assert_int_equal(get_wc(cq, &wc, 5000), 1);
    assert_int_equal(wc.wr_id, 1);
    assert_int_equal(wc.status, FAB_WC_OK);
    assert_int_equal(wc.len, sizeof(msg));
    assert_memory_equal(got, msg, sizeof(msg));
    assert_int_equal(get_wc(cq, &wc, 5000), 1);
    assert_int_equal(wc.wr_id, 2);
    assert_int_equal(wc.status, FAB_WC_PEER_LOST);
    F->ep_close(ep);
    F->cq_destroy(cq);
    F->domain_close(dom);
}

/* Both ends of a loopback connection: what one sent is read, nothing waits in either queue. */
struct socks_of {
    int rx, tx;
};

static int socks_drained(const void *arg)
{
    const struct socks_of *f = arg;
    int inq = 1, outq = 1;

    assert_int_equal(ioctl(f->rx, SIOCINQ, &inq), 0);
    assert_int_equal(ioctl(f->tx, SIOCOUTQ, &outq), 0);
    return inq == 0 && outq == 0;
}

/* A raw peer sends half of a big WRITE_IMM, the target deregisters, the peer sends the rest:
 * mr_dereg must not wait for the peer, and no byte may land after it returned. */
static void test_dereg_while_landing(void **state)
{
    enum { SZ = 1 << 20, HALF = SZ / 2 };
    unsigned char *dst = malloc(SZ), *src = malloc(SZ);
    struct fab_ep_attr a = attr_of(1, 4, 0);
    struct fab_domain *dom;
    struct fab_cq *cq;
    struct fab_ep *ep;
    struct fab_mr *mr;
    struct tcp_hdr h;
    struct fab_wc wc;
    int s, raw;

    fc_tcp_pair(&raw, &s);
    assert_int_equal(F->domain_open(0, &dom), 0);
    assert_int_equal(F->cq_create(dom, 4, &cq), 0);
    assert_int_equal(F->ep_create(dom, cq, &a, &ep), 0);
    assert_int_equal(F->ep_connect(ep, NULL, 0, &s, 1), 0);
    memset(dst, 0, SZ);
    memset(src, 0xab, SZ);
    assert_int_equal(F->mr_reg(dom, dst, SZ, &mr), 0);
    assert_int_equal(F->post_recv(ep, 0, NULL, 0, NULL, 1), 0);
    h = tcp_hdr_make(TCP_OP_WRITE_IMM, SZ, 1, (uint64_t)(uintptr_t)dst,
                     F->mr_remote(mr, ep, dst).rkey);
    assert_int_equal(write(raw, &h, sizeof(h)), sizeof(h));
    assert_int_equal(write(raw, src, HALF), HALF);
    /* Wait until the I/O thread has read it all (without touching dst, it is landing). */
    struct socks_of pair_fds = {s, raw};
    assert_true(wait_for(socks_drained, &pair_fds));
    F->mr_dereg(mr);
    for (int i = 0; i < HALF; i++)
        assert_int_equal(dst[i], 0xab);
    memset(dst, 0, SZ);
    assert_int_equal(write(raw, src, HALF), HALF);
    assert_int_equal(get_wc(cq, &wc, 5000), 1);
    assert_int_equal(wc.status, FAB_WC_REMOTE_ACCESS);
    F->ep_close(ep); /* its threads are gone: whatever could still land has landed */
    for (int i = 0; i < SZ; i++)
        assert_int_equal(dst[i], 0);
    close(raw);
    F->cq_destroy(cq);
    F->domain_close(dom);
    free(dst);
    free(src);
}

/* ---- protocol errors ---- */

static void test_no_recv(void **state)
{
    const char *why;
    struct fab_wc wc;
    char b = 1;
    struct pair p;

    pair_open(&p, 2, 4, 0);
    assert_int_equal(F->post_recv(p.ep[1], 1, &b, 1, NULL, 77), 0); /* other lane */
    assert_int_equal(F->post_recv(p.ep[0], 1, &b, 1, NULL, 78), 0);
    assert_int_equal(F->post_send(p.ep[0], 0, &b, 1, NULL, 5), 0);
    assert_int_equal(get_wc(p.cq[1], &wc, 5000), 1);
    assert_int_equal(wc.wr_id, 77);
    assert_int_equal(wc.status, FAB_WC_NO_RECV);
    assert_int_equal(fc_ep_status(F, p.ep[1], &why), FAB_WC_NO_RECV);
    assert_non_null(strstr(why, "no RECV posted (lane 0)"));
    assert_int_equal(F->post_send(p.ep[1], 0, &b, 1, NULL, 6), -ENOTCONN);
    assert_int_equal(F->post_recv(p.ep[1], 0, &b, 1, NULL, 6), -ENOTCONN);
    /* The sender's send went out; then its peer vanished. */
    expect_wc(p.cq[0], FAB_WC_SEND, FAB_WC_OK, 5, 1);
    assert_int_equal(get_wc(p.cq[0], &wc, 5000), 1);
    assert_int_equal(wc.wr_id, 78);
    assert_int_equal(wc.status, FAB_WC_PEER_LOST);
    assert_int_equal(fc_ep_status(F, p.ep[0], &why), FAB_WC_PEER_LOST);
    pair_close(&p);
}

/* ---- liveness ---- */

/* A peer that closes is logged as a close, not as "failed (peer lost)": every normal teardown
 * looks like this from the side that closes second. A liveness timeout still says failed. */
static pthread_mutex_t g_log_mu = PTHREAD_MUTEX_INITIALIZER;
static char g_log[4][256];
static int g_nlog;

static void capture_log(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                        const char *fmt, ...)
{
    va_list ap;

    pthread_mutex_lock(&g_log_mu);
    if (g_nlog < 4) {
        va_start(ap, fmt);
        vsnprintf(g_log[g_nlog++], sizeof(g_log[0]), fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&g_log_mu);
}

static void test_peer_close_logged_as_close(void **state)
{
    struct pair p;
    struct fab_wc wc;
    char b[8];

    g_nlog = 0;
    jaccl_log_set(capture_log);
    pair_open(&p, 1, 4, 0);
    assert_int_equal(F->post_recv(p.ep[1], 0, b, sizeof(b), NULL, 1), 0);
    F->ep_close(p.ep[0]);
    p.ep[0] = NULL;
    assert_int_equal(get_wc(p.cq[1], &wc, 5000), 1);
    assert_int_equal(wc.status, FAB_WC_PEER_LOST); /* still a loss for the layer above */
    jaccl_log_set(NULL);
    assert_int_equal(g_nlog, 1);
    assert_non_null(strstr(g_log[0], ": peer 127.0.0.1:5000 closed the connection (lane 0)"));
    assert_null(strstr(g_log[0], "failed"));
    pair_close(&p);
}

/* One frame header read off a raw peer socket within WAIT_NS of real time: its op, or -1. */
static int raw_frame_op(int raw)
{
    struct pollfd pf = {.fd = raw, .events = POLLIN};
    struct tcp_hdr h;
    struct tcp_msg m;

    if (poll(&pf, 1, (int)(WAIT_NS / MS)) != 1 ||
        recv(raw, &h, sizeof(h), MSG_WAITALL) != (ssize_t)sizeof(h) || tcp_frame_check(&h, &m))
        return -1;
    return m.op;
}

/* The peer socket stays open but nobody ever services it: silent for the liveness timeout (on
 * the test clock, give or take a millisecond) the endpoint fails, and not before. */
static void test_liveness_silent_peer(void **state)
{
    struct fab_ep_attr a = attr_of(1, 4, 300 * MS);
    struct fab_domain *dom;
    struct fab_cq *cq;
    struct fab_ep *ep;
    struct fab_wc wc;
    const char *why;
    int s, raw;
    char b[8];

    fake_clock_start();
    fc_tcp_pair(&raw, &s);
    assert_int_equal(F->domain_open(0, &dom), 0);
    assert_int_equal(F->cq_create(dom, 4, &cq), 0);
    assert_int_equal(F->ep_create(dom, cq, &a, &ep), 0);
    assert_int_equal(F->post_recv(ep, 0, b, sizeof(b), NULL, 1), 0);
    assert_int_equal(F->ep_connect(ep, NULL, 0, &s, 1), 0); /* silent since now */
    fake_clock_advance(299 * MS);
    /* No heartbeat was due before the clock moved (connecting counts as a write): the one
     * that comes was sent at this time, by the I/O thread right after it found the silence
     * short of the timeout. */
    assert_int_equal(raw_frame_op(raw), TCP_OP_HEARTBEAT);
    assert_int_equal(fc_ep_status(F, ep, NULL), FAB_WC_OK);
    fake_clock_advance(2 * MS);
    assert_int_equal(poll_wc(cq, &wc), 1);
    assert_int_equal(wc.status, FAB_WC_PEER_LOST);
    assert_int_equal(fc_ep_status(F, ep, &why), FAB_WC_PEER_LOST);
    assert_non_null(strstr(why, "liveness"));
    F->ep_close(ep);
    close(raw);
    F->cq_destroy(cq);
    F->domain_close(dom);
}

static int ep_failed(const void *arg)
{
    return F->ep_error((struct fab_ep *)arg, NULL) != 0;
}

/* Whether lane 0 of ep read something at the test clock's current time. */
static int lane0_heard_now(const void *arg)
{
    struct tcp_ep *ep = tcp_ep_of((struct fab_ep *)arg);
    return atomic_load(&ep->lane[0].last_rx_ns) == jaccl_now_ns();
}

/* Liveness is per lane: a connection whose lanes run over two cables (or two relays) fails when
 * one of them goes silent, even while the other keeps bringing heartbeats, and says which. */
static void test_liveness_per_lane(void **state)
{
    struct fab_ep_attr a = attr_of(2, 4, 300 * MS);
    struct fab_domain *dom;
    struct fab_cq *cq;
    struct fab_ep *ep;
    struct fab_wc wc;
    const char *why;
    int s[2], raw[2];

    fake_clock_start();
    fc_tcp_pair(&raw[0], &s[0]);
    fc_tcp_pair(&raw[1], &s[1]);
    assert_int_equal(F->domain_open(0, &dom), 0);
    assert_int_equal(F->cq_create(dom, 4, &cq), 0);
    assert_int_equal(F->ep_create(dom, cq, &a, &ep), 0);
    assert_int_equal(F->ep_connect(ep, NULL, 0, s, 2), 0);
    struct tcp_hdr hb = tcp_hdr_make(TCP_OP_HEARTBEAT, 0, 0, 0, 0);
    for (int i = 0; i < 2; i++) { /* lane 0 alive, lane 1 silent for 200 ms */
        fake_clock_advance(100 * MS);
        assert_int_equal(send(raw[0], &hb, sizeof(hb), 0), (ssize_t)sizeof(hb));
        assert_true(wait_for(lane0_heard_now, ep));
        assert_int_equal(fc_ep_status(F, ep, NULL), FAB_WC_OK);
    }
    fake_clock_advance(100 * MS); /* lane 1: 300 ms of silence */
    assert_int_equal(send(raw[0], &hb, sizeof(hb), 0), (ssize_t)sizeof(hb));
    assert_true(wait_for(lane0_heard_now, ep));
    assert_true(wait_for(ep_failed, ep)); /* the I/O thread checks on its own time */
    assert_int_equal(F->cq_poll(cq, &wc, 1), 0);
    assert_int_equal(fc_ep_status(F, ep, &why), FAB_WC_PEER_LOST);
    assert_non_null(strstr(why, "liveness"));
    assert_non_null(strstr(why, "(lane 1"));
    F->ep_close(ep);
    close(raw[0]);
    close(raw[1]);
    F->cq_destroy(cq);
    F->domain_close(dom);
}

/* Whether both endpoints of the pair read something on some lane at the test clock's current
 * time, and on every lane within the last step (a heartbeat that found its lane busy is sent
 * again a millisecond later, on the test clock, so at the next step). */
static int both_heard_now(const void *arg)
{
    const struct pair *p = arg;
    uint64_t now = jaccl_now_ns();

    for (int e = 0; e < 2; e++) {
        struct tcp_ep *ep = tcp_ep_of(p->ep[e]);
        int now_heard = 0;
        for (int i = 0; i < ep->nlanes; i++) {
            uint64_t t = atomic_load(&ep->lane[i].last_rx_ns);
            if (t + 100 * MS < now)
                return 0;
            now_heard |= t == now;
        }
        if (!now_heard)
            return 0;
    }
    return 1;
}

/* Three liveness timeouts of idle time, in steps shorter than one (longer than the heartbeat
 * period, a quarter of it): after each step both sides hear the other's heartbeats before the
 * clock moves on, and neither ever calls the other silent. */
static void test_heartbeats_keep_alive(void **state)
{
    struct fab_wc wc;
    char x = 'x', y = 0;
    struct pair p;

    fake_clock_start();
    pair_open(&p, 2, 4, 300 * MS);
    for (int i = 0; i < 9; i++) {
        fake_clock_advance(100 * MS);
        assert_true(wait_for(both_heard_now, &p));
    }
    assert_int_equal(fc_ep_status(F, p.ep[0], NULL), FAB_WC_OK);
    assert_int_equal(fc_ep_status(F, p.ep[1], NULL), FAB_WC_OK);
    assert_int_equal(F->cq_poll(p.cq[0], &wc, 1), 0); /* heartbeats complete nothing */
    assert_int_equal(F->cq_poll(p.cq[1], &wc, 1), 0);
    assert_int_equal(F->post_recv(p.ep[1], 1, &y, 1, NULL, 1), 0);
    assert_int_equal(F->post_send(p.ep[0], 1, &x, 1, NULL, 2), 0);
    assert_int_equal(poll_wc(p.cq[1], &wc), 1);
    assert_int_equal(wc.status, FAB_WC_OK);
    assert_int_equal(wc.op, FAB_WC_RECV);
    assert_int_equal(wc.wr_id, 1);
    assert_int_equal(wc.len, 1);
    assert_int_equal(y, 'x');
    pair_close(&p);
}

/* ---- close ---- */

/* NCCL closes a comm as soon as its own sends completed, and a send completes once its bytes
 * are in our kernel. Here the close happens while most of a message still sits in our socket
 * and the peer then sends a byte (a heartbeat, a CTS): a plain close() would answer that byte
 * with a reset that drops the queued bytes. ep_close returns at once (the socket waits on the
 * reaper: fab_sock_retire), and the peer still reads every byte and then a clean end of
 * stream, never ECONNRESET. */
static int reaper_empty(const void *arg)
{
    uint64_t held;
    fab_sock_retire_stats(&held, NULL);
    return held == 0;
}

static void test_close_delivers_queued_bytes(void **state)
{
    enum { SZ = 512 << 10 };
    struct fab_ep_attr a = attr_of(1, 4, 0);
    int raw, s, small = 16 << 10, big = 4 << 20;
    unsigned char *buf = malloc(SZ), sink[65536];
    uint64_t held0, held;
    struct fab_domain *dom;
    struct fab_cq *cq;
    struct fab_ep *ep;
    size_t total = 0;
    ssize_t n;

    fill(buf, SZ, 3);
    /* Earlier tests' retired sockets drain in the reaper's time: the count below must move by
     * this close alone (under make test-noisy the reaper still held two of theirs, and let one
     * go between the two reads). */
    assert_true(wait_for(reaper_empty, NULL));
    fc_tcp_pair(&raw, &s);
    assert_int_equal(setsockopt(raw, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
    assert_int_equal(setsockopt(s, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big)), 0);
    assert_int_equal(F->domain_open(0, &dom), 0);
    assert_int_equal(F->cq_create(dom, 4, &cq), 0);
    assert_int_equal(F->ep_create(dom, cq, &a, &ep), 0);
    assert_int_equal(F->ep_connect(ep, NULL, 0, &s, 1), 0);
    assert_int_equal(F->post_send(ep, 0, buf, SZ, NULL, 9), 0);
    expect_wc(cq, FAB_WC_SEND, FAB_WC_OK, 9, SZ);
    fab_sock_retire_stats(&held0, NULL);
    F->ep_close(ep); /* the peer has read nothing: the close cannot have waited for it */
    fab_sock_retire_stats(&held, NULL);
    assert_int_equal(held, held0 + 1);
    assert_int_equal(send(raw, "h", 1, 0), 1); /* reaches the retired socket */
    while ((n = recv(raw, sink, sizeof(sink), 0)) > 0)
        total += (size_t)n;
    assert_int_equal(n, 0); /* end of stream, not a reset */
    assert_int_equal(total, sizeof(struct tcp_hdr) + SZ);
    close(raw);
    F->cq_destroy(cq);
    F->domain_close(dom);
    free(buf);
}

/* ---- who reads: pollers or the I/O thread (util/crowd.h) ---- */

/* Polls cq without ever waiting in cq_wait (whose quiet() hands the reads back) until wr_id
 * completes, 100 us apart; 1, or 0 after WAIT_NS of real time. */
static int poll_for(struct fab_cq *cq, uint64_t wr_id)
{
    struct fab_wc wc;

    while (poll_wc(cq, &wc)) {
        assert_int_equal(wc.status, FAB_WC_OK);
        if (wc.wr_id == wr_id)
            return 1;
    }
    return 0;
}

/* One message of len bytes from ep[0] to ep[1], received by polling ep[1]'s CQ. */
static void exchange(struct pair *p, unsigned char *src, unsigned char *dst, size_t len,
                     uint64_t id)
{
    fill(src, len, (unsigned)id);
    assert_int_equal(F->post_recv(p->ep[1], 0, dst, len, NULL, id), 0);
    assert_int_equal(F->post_send(p->ep[0], 0, src, len, NULL, id), 0);
    assert_int_equal(poll_for(p->cq[1], id), 1);
    assert_int_equal(poll_for(p->cq[0], id), 1);
    assert_memory_equal(dst, src, len);
}

/* Small exchanges until ep[1]'s I/O thread shows `polled` (1: the pollers read), or WAIT_NS of
 * real time: the I/O thread switches on its own schedule, which a loaded box delays. */
static int reads_go_to(struct pair *p, unsigned char *src, unsigned char *dst, int polled,
                       uint64_t *id)
{
    uint64_t dl = jaccl_mono_ns() + WAIT_NS;

    while (jaccl_mono_ns() < dl) {
        exchange(p, src, dst, 64, (*id)++);
        if (atomic_load(&tcp_ep_of(p->ep[1])->io_polled) == polled)
            return 1;
    }
    return 0;
}

/* n small exchanges, the test clock moved by step before each; 1 if after every one of them
 * the reads were still the I/O thread's: in its own view (io_polled), and by the rule itself,
 * which a polling thread applies each time it drives the endpoint: it claims the reads by
 * stamping last_drive_ns with the time, and leaves them by storing 0. An empty cq_poll drives
 * for sure (one that finds a completion the I/O thread queued returns it without driving). */
static int io_keeps_reads(struct pair *p, unsigned char *src, unsigned char *dst, int n,
                          uint64_t step, uint64_t *id)
{
    struct fab_wc wc;

    for (int i = 0; i < n; i++) {
        fake_clock_advance(step);
        exchange(p, src, dst, 64, (*id)++);
        assert_int_equal(F->cq_poll(p->cq[1], &wc, 1), 0);
        if (atomic_load(&tcp_ep_of(p->ep[1])->last_drive_ns) != 0 ||
            atomic_load(&tcp_ep_of(p->ep[1])->io_polled) != 0)
            return 0;
    }
    return 1;
}

/* A crowded machine whose crowd is our own few ranks: pollers take the reads over while the
 * messages are small, hand them back to the I/O thread for a large one, and take them again
 * once a hand-off tick (TCP_HANDOFF_NS, 1 ms) passed without one. Too many ranks per CPU: the
 * I/O thread keeps them. The test clock stands still between the steps, so "within the tick"
 * lasts exactly as long as the test says, however late the I/O thread runs to look. */
/* The endpoints' fab_ep_attr.host_ranks, as a CollNet comm sets it at creation; changed here
 * between exchanges: only the polling thread (this one) reads it. */
static void set_host_ranks(struct pair *p, int n)
{
    tcp_ep_of(p->ep[0])->host_ranks = n;
    tcp_ep_of(p->ep[1])->host_ranks = n;
}

static void test_crowded_reads_follow_size(void **state)
{
    enum { BIG = 1 << 20 };
    unsigned char *src = malloc(BIG), *dst = malloc(BIG);
    uint64_t id = 1;
    struct pair p;

    jaccl_cpu_crowd_force(1);
    fake_clock_start();
    pair_open(&p, 2, 8, 0);
    set_host_ranks(&p, 1);
    assert_true(reads_go_to(&p, src, dst, 1, &id));
    assert_int_equal(atomic_load(&tcp_ep_of(p.ep[1])->big_rx_ns),
                     0); /* 64-byte messages only so far */
    exchange(&p, src, dst, BIG, id++);
    assert_true(atomic_load(&tcp_ep_of(p.ep[1])->big_rx_ns) > 0);
    assert_true(reads_go_to(&p, src, dst, 0, &id)); /* within the hand-off tick */
    /* And keeps them for the rest of the tick: half of it goes by over these exchanges. */
    assert_true(io_keeps_reads(&p, src, dst, 20, MS / 40, &id));
    fake_clock_advance(5 * MS); /* no large message since */
    assert_true(reads_go_to(&p, src, dst, 1, &id));
    set_host_ranks(&p, 2 * jaccl_cpus_usable() + 1);
    assert_true(reads_go_to(&p, src, dst, 0, &id));
    /* And it stays there, however much time passes: ticks go by between the exchanges. */
    assert_true(io_keeps_reads(&p, src, dst, 50, 2 * MS, &id));
    assert_int_equal(atomic_load(&tcp_ep_of(p.ep[1])->io_polled), 0);
    pair_close(&p);
    free(src);
    free(dst);
}

/* Also after a failed assertion: the tests after it must see this box's own crowding and the
 * real clock. */
static int crowd_restore(void **state)
{
    jaccl_cpu_crowd_force(-1);
    return clock_restore(state);
}

/* A peer that never reads: the socket fills, the lane's queue fills, the next post says so. */
static void test_queue_full(void **state)
{
    enum { WR = 4, SZ = 16 << 20 };
    struct fab_ep_attr a = attr_of(1, WR, 0);
    unsigned char *buf = calloc(1, SZ);
    struct fab_domain *dom;
    struct fab_cq *cq;
    struct fab_ep *ep;
    int s, raw;
    char r[WR + 1];

    fc_tcp_pair(&raw, &s);
    assert_int_equal(F->domain_open(0, &dom), 0);
    assert_int_equal(F->cq_create(dom, 4, &cq), 0);
    assert_int_equal(F->ep_create(dom, cq, &a, &ep), 0);
    for (int i = 0; i < WR; i++)
        assert_int_equal(F->post_recv(ep, 0, &r[i], 1, NULL, (uint64_t)i), 0);
    assert_int_equal(F->post_recv(ep, 0, &r[WR], 1, NULL, 9), -EAGAIN);
    assert_int_equal(F->ep_connect(ep, NULL, 0, &s, 1), 0);
    for (int i = 0; i < WR; i++)
        assert_int_equal(F->post_send(ep, 0, buf, SZ, NULL, (uint64_t)i), 0);
    assert_int_equal(F->post_send(ep, 0, buf, SZ, NULL, 9), -EAGAIN);
    assert_int_equal(F->post_send(ep, 0, buf, (1u << 30) + 1, NULL, 9), -EMSGSIZE);
    F->ep_close(ep);
    close(raw);
    F->cq_destroy(cq);
    F->domain_close(dom);
    free(buf);
}

/* attr.tclass marks every lane's socket (IP_TOS); 0 leaves the system default alone. */
static int sock_tos(int fd)
{
    int v = -1;
    socklen_t len = sizeof(v);

    assert_int_equal(getsockopt(fd, IPPROTO_IP, IP_TOS, &v, &len), 0);
    return v;
}

static void tclass_case(int tclass)
{
    struct fab_ep_attr a = attr_of(3, 4, 0);
    struct fab_domain *dom;
    struct fab_cq *cq;
    struct fab_ep *ep[2];
    int sa[3], sb[3];

    a.tclass = tclass;
    assert_int_equal(F->domain_open(0, &dom), 0);
    assert_int_equal(F->cq_create(dom, 8, &cq), 0);
    for (int i = 0; i < 3; i++)
        fc_tcp_pair(&sa[i], &sb[i]);
    assert_int_equal(F->ep_create(dom, cq, &a, &ep[0]), 0);
    a.tclass = 0; /* the other end is unmarked: only the sender's own socket carries it */
    assert_int_equal(F->ep_create(dom, cq, &a, &ep[1]), 0);
    assert_int_equal(F->ep_connect(ep[0], NULL, 0, sa, 3), 0);
    assert_int_equal(F->ep_connect(ep[1], NULL, 0, sb, 3), 0);
    for (int i = 0; i < 3; i++) { /* the fds now belong to the endpoints, still open */
        assert_int_equal(sock_tos(sa[i]), tclass);
        assert_int_equal(sock_tos(sb[i]), 0);
    }
    F->ep_close(ep[0]);
    F->ep_close(ep[1]);
    F->cq_destroy(cq);
    F->domain_close(dom);
}

static void test_traffic_class(void **state)
{
    tclass_case(0x28); /* DSCP 10 */
    tclass_case(0);
}

static void test_status_str(void **state)
{
    assert_string_equal(fab_wc_status_str(FAB_WC_OK), "success");
    for (int s = FAB_WC_OK; s <= FAB_WC_PEER_PROTO; s++)
        assert_non_null(fab_wc_status_str((enum fab_wc_status)s));
    assert_string_equal(fab_wc_status_str((enum fab_wc_status)99), "unknown status");
}

/* As the fabric's shutdown does: the reaper thread that ended these tests' connections in order
 * is joined (ThreadSanitizer reports a thread that exited unjoined). */
static int reaper_join(void **state)
{
    fab_sock_retire_fini();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_devices),
            cmocka_unit_test(test_status_str),
            cmocka_unit_test(test_traffic_class),
            cmocka_unit_test(test_unix_socketpair),
            cmocka_unit_test(test_write_imm_beyond_contract),
            cmocka_unit_test(test_keys_random),
            cmocka_unit_test(test_scope_pruned_on_close),
            cmocka_unit_test_teardown(test_liveness_per_lane, clock_restore),
            cmocka_unit_test(test_lane_eof_keeps_other_lanes),
            cmocka_unit_test(test_corrupt_frame_is_peer_proto),
            cmocka_unit_test(test_dereg_while_landing),
            cmocka_unit_test(test_no_recv),
            cmocka_unit_test(test_peer_close_logged_as_close),
            cmocka_unit_test_teardown(test_liveness_silent_peer, clock_restore),
            cmocka_unit_test_teardown(test_heartbeats_keep_alive, clock_restore),
            cmocka_unit_test(test_close_delivers_queued_bytes),
            cmocka_unit_test_teardown(test_crowded_reads_follow_size, crowd_restore),
            cmocka_unit_test(test_queue_full),
    };

    return cmocka_run_group_tests(tests, NULL, reaper_join);
}
