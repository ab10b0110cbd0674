/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer: a real TCP endpoint reading a byte stream its peer wrote. The input is a list of
 * records, each turned into bytes on the wire: a SEND, a WRITE_IMM into the registered window
 * (at any offset, so out of range too), a heartbeat, or raw bytes (corrupt or split headers).
 * Frames are encoded here (tcp_hdr_make) with the registration's real key, which random bytes
 * would never guess. The endpoint's I/O thread parses the stream from a socketpair; the writer
 * then closes its end, so every run ends with the endpoint failed (EOF at the latest).
 *
 * Checked: no crash, no sanitizer report, the endpoint fails within a deadline (never hangs),
 * and, while the stream holds only well-formed records, the completions are exactly those of
 * the messages before the first one that must fail, with their lengths, immediates and bytes. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fabric/fabric.h"
#include "fabric/tcp/tcp.h"
#include "fabric/tcp/tcp_wire.h"
#include "fuzz.h"
#include "util/clock.h"

#define NRECV    4    /* RECVs posted: the fifth data message has none */
#define RECV_CAP 512  /* bytes per RECV */
#define WIN      8192 /* registered window WRITE_IMMs target */
#define NREC_MAX 32
#define DEADLINE (5ull * 1000000000ull)

enum { R_SEND, R_WRITE, R_HB, R_RAW };

struct rec {
    int kind;
    uint32_t len, off, imm;
    const uint8_t *payload; /* `have` bytes of the payload are in the input */
    uint32_t have;
};

static const struct fab_ops *F = &fab_tcp_ops;
static struct fab_domain *g_dom;
static struct fab_cq *g_cq;
static struct fab_mr *g_mr;
static struct fab_remote_buf g_rb;
static unsigned char g_win[WIN], g_recv[NRECV][RECV_CAP];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    setenv("NCCL_JACCL_SOCKET_IFNAME", "lo", 1);
    F->init();
    FUZZ_CHECK(F->domain_open(0, &g_dom) == 0);
    FUZZ_CHECK(F->cq_create(g_dom, 1024, &g_cq) == 0);
    return 0;
}

static uint32_t get16(const uint8_t **p, size_t *n)
{
    uint32_t v = 0;
    for (int i = 0; i < 2 && *n; i++, (*p)++, (*n)--)
        v |= (uint32_t) * *p << (8 * i);
    return v;
}

/* Record: kind byte, then 16-bit length, offset and immediate, then the payload. */
static int parse(const uint8_t *d, size_t n, struct rec *r)
{
    int k = 0;
    while (n && k < NREC_MAX) {
        struct rec *x = &r[k++];
        x->kind = *d % 4;
        d++, n--;
        x->len = get16(&d, &n);
        x->off = get16(&d, &n);
        x->imm = get16(&d, &n);
        if (x->kind == R_HB)
            x->len = 0;
        if (x->kind == R_RAW)
            x->len %= 64;
        x->have = x->len < n ? x->len : (uint32_t)n;
        x->payload = d;
        d += x->have;
        n -= x->have;
    }
    return k;
}

static void put(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* the endpoint closed its end: it failed, which ends the run anyway */
        c += w;
        n -= (size_t)w;
    }
}

static void emit(int fd, const struct rec *x)
{
    struct tcp_hdr h;
    if (x->kind == R_RAW) {
        put(fd, x->payload, x->have);
        return;
    }
    if (x->kind == R_SEND)
        h = tcp_hdr_make(TCP_OP_SEND, x->len, 0, 0, 0);
    else if (x->kind == R_WRITE)
        h = tcp_hdr_make(TCP_OP_WRITE_IMM, x->len, x->imm, g_rb.addr + x->off, g_rb.rkey);
    else
        h = tcp_hdr_make(TCP_OP_HEARTBEAT, 0, 0, 0, 0);
    put(fd, &h, sizeof(h));
    put(fd, x->payload, x->have);
}

/* Data messages (records 0..k) the endpoint must complete, while every record is well formed:
 * they stop at the first that must fail (no RECV, too long, outside the window) or is cut. */
static int expect_ok(const struct rec *r, int n, int *clean)
{
    int ok = 0;
    *clean = 1;
    for (int i = 0; i < n; i++) {
        if (r[i].kind == R_RAW) {
            *clean = 0;
            return ok;
        }
        if (r[i].kind == R_HB)
            continue;
        int fits = r[i].kind == R_SEND ? r[i].len <= RECV_CAP
                                       : r[i].len == 0 || r[i].off + r[i].len <= WIN;
        if (ok == NRECV || !fits || r[i].have < r[i].len)
            return ok;
        ok++;
    }
    return ok;
}

/* The i-th data record, skipping heartbeats. */
static const struct rec *nth_data(const struct rec *r, int n, int i)
{
    for (int j = 0; j < n; j++)
        if (r[j].kind != R_HB && i-- == 0)
            return &r[j];
    return NULL;
}

/* A WRITE's bytes are checkable when no later record may have written over them. */
static int overwritten(const struct rec *r, int n, const struct rec *x)
{
    for (const struct rec *y = x + 1; y < r + n; y++)
        if (y->kind == R_WRITE && y->off < x->off + x->len && x->off < y->off + y->len)
            return 1;
    return 0;
}

static void check_wc(const struct fab_wc *wc, const struct rec *r, int n, int k)
{
    const struct rec *x = nth_data(r, n, k);
    FUZZ_CHECK(x != NULL);
    FUZZ_CHECK(wc->wr_id == (uint64_t)k && wc->len == x->len);
    if (x->kind == R_SEND) {
        FUZZ_CHECK(wc->op == FAB_WC_RECV);
        FUZZ_CHECK(memcmp(g_recv[k], x->payload, x->len) == 0);
    } else {
        FUZZ_CHECK(wc->op == FAB_WC_RECV_IMM && wc->imm == x->imm);
        FUZZ_CHECK(x->len == 0 || overwritten(r, n, x) ||
                   memcmp(g_win + x->off, x->payload, x->len) == 0);
    }
}

/* Waits for the endpoint to fail, then collects its completions (after ep_close: none left). */
static int drain(struct fab_ep *ep, const struct rec *r, int n, int clean, int want)
{
    uint64_t deadline = jaccl_deadline_ns(DEADLINE);
    struct fab_wc wc[16];
    const char *why;
    int got = 0, m;

    while (F->ep_error(ep, &why) == 0) {
        FUZZ_CHECK(!jaccl_expired(deadline)); /* a stream that ended must end the endpoint */
        F->cq_wait(g_cq, jaccl_deadline_ns(1000000));
        while ((m = F->cq_poll(g_cq, wc, 16)) > 0)
            for (int i = 0; i < m; i++)
                if (wc[i].status == FAB_WC_OK && clean)
                    check_wc(&wc[i], r, n, got++);
    }
    F->ep_close(ep);
    while ((m = F->cq_poll(g_cq, wc, 16)) > 0)
        for (int i = 0; i < m; i++)
            if (wc[i].status == FAB_WC_OK && clean)
                check_wc(&wc[i], r, n, got++);
    return !clean || got == want;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fab_ep_attr a = {.nlanes = 1, .max_send_wr = 4, .max_recv_wr = NRECV};
    struct rec r[NREC_MAX];
    struct fab_ep *ep;
    int sv[2], clean;

    int n = parse(data, size, r);
    int want = expect_ok(r, n, &clean);
    FUZZ_CHECK(F->ep_create(g_dom, g_cq, &a, &ep) == 0);
    /* A registration per input, advertised on this input's endpoint only (its scope). */
    FUZZ_CHECK(F->mr_reg(g_dom, g_win, sizeof(g_win), &g_mr) == 0);
    g_rb = F->mr_remote(g_mr, ep, g_win);
    for (int i = 0; i < NRECV; i++)
        FUZZ_CHECK(F->post_recv(ep, 0, g_recv[i], RECV_CAP, NULL, (uint64_t)i) == 0);
    FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    FUZZ_CHECK(F->ep_connect(ep, NULL, 0, &sv[0], 1) == 0);
    for (int i = 0; i < n; i++)
        emit(sv[1], &r[i]);
    shutdown(sv[1], SHUT_WR);
    FUZZ_CHECK(drain(ep, r, n, clean, want));
    F->mr_dereg(g_mr);
    close(sv[1]);
    return 0;
}
