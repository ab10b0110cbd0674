/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p request bookkeeping through the internal API, in one process over the TCP fabric on lo:
 * slot exhaustion gives NULL requests, sends wait for clear-to-send, sizes and order are exact,
 * truncation fails both ends, bad pointers are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>

#include <cmocka.h>

#include "core/api.h"
#include "core/p2p.h"

struct pair {
    void *ctx, *lc, *sc, *rc;
    char *sbuf, *rbuf;
    void *smh, *rmh;
};

#define BUF (4u << 20)

static int setup(void **state)
{
    setenv("NCCL_JACCL_SOCKET_IFNAME", "lo", 1);
    setenv("NCCL_JACCL_NSOCKS", "3", 1);
    setenv("NCCL_JACCL_MIN_CHUNK", "4096", 1);
    struct pair *p = calloc(1, sizeof(*p));
    assert_int_equal(jaccl_init(&p->ctx, 7, NULL, NULL, NULL), ncclSuccess);
    int n = 0;
    assert_int_equal(jaccl_devices(&n), ncclSuccess);
    assert_true(n >= 1);
    char handle[128];
    assert_int_equal(jaccl_listen(p->ctx, 0, handle, &p->lc), ncclSuccess);
    for (int i = 0; i < 100000 && (!p->sc || !p->rc); i++) {
        if (!p->sc)
            assert_int_equal(jaccl_connect(p->ctx, 0, handle, &p->sc, NULL), ncclSuccess);
        if (!p->rc)
            assert_int_equal(jaccl_accept(p->lc, &p->rc, NULL), ncclSuccess);
    }
    assert_non_null(p->sc);
    assert_non_null(p->rc);
    assert_int_equal(jaccl_close_listen(p->lc), ncclSuccess);
    p->sbuf = malloc(BUF);
    p->rbuf = malloc(BUF);
    assert_int_equal(jaccl_reg_mr(p->sc, p->sbuf, BUF, JACCL_MEM_HOST, &p->smh), ncclSuccess);
    assert_int_equal(jaccl_reg_mr(p->rc, p->rbuf, BUF, JACCL_MEM_HOST, &p->rmh), ncclSuccess);
    *state = p;
    return 0;
}

static int teardown(void **state)
{
    struct pair *p = *state;
    jaccl_dereg_mr(p->sc, p->smh);
    jaccl_dereg_mr(p->rc, p->rmh);
    jaccl_close_send(p->sc);
    jaccl_close_recv(p->rc);
    jaccl_finalize(p->ctx);
    free(p->sbuf);
    free(p->rbuf);
    free(p);
    return 0;
}

static void *post_recv(struct pair *p, size_t off, size_t cap)
{
    void *d = p->rbuf + off, *req = (void *)1;
    int tag = 5;
    assert_int_equal(jaccl_irecv(p->rc, 1, &d, &cap, &tag, &p->rmh, NULL, &req), ncclSuccess);
    return req;
}

/* Bounded by time, not by tries: on a loaded 2-core box the peer's I/O thread may not run for
 * a while, and a try count would turn that into a spurious failure. */
static int before(const struct timespec *t0, double secs)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) * 1e-9 < secs;
}

static void *post_send(struct pair *p, size_t off, size_t size)
{
    void *req = NULL;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!req && before(&t0, 30)) {
        assert_int_equal(jaccl_isend(p->sc, p->sbuf + off, size, 5, p->smh, NULL, &req),
                         ncclSuccess);
        if (!req)
            sched_yield();
    }
    assert_non_null(req);
    return req;
}

static ncclResult_t wait_req(void *req, int *size)
{
    int done = 0;
    ncclResult_t rc = ncclSuccess;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!done && rc == ncclSuccess && before(&t0, 30)) {
        rc = jaccl_test(req, &done, size);
        if (!done)
            sched_yield();
    }
    assert_true(done || rc != ncclSuccess);
    return rc;
}

static void send_waits_for_cts(void **state)
{
    struct pair *p = *state;
    void *req = (void *)1;
    assert_int_equal(jaccl_isend(p->sc, p->sbuf, 10, 5, p->smh, NULL, &req), ncclSuccess);
    assert_null(req); /* nothing posted yet: NCCL must retry */
}

static void slots_run_out_then_free(void **state)
{
    struct pair *p = *state;
    void *r[P2P_NSLOTS + 1];
    for (int i = 0; i < P2P_NSLOTS; i++) {
        r[i] = post_recv(p, (size_t)i * 1000, 1000);
        assert_non_null(r[i]);
    }
    assert_null(post_recv(p, 0, 10)); /* every slot busy */
    for (int i = 0; i < P2P_NSLOTS; i++) {
        memset(p->sbuf + i * 1000, i + 1, 999);
        void *s = post_send(p, (size_t)i * 1000, 999 - (size_t)i);
        assert_non_null(s);
        int sz = -1;
        assert_int_equal(wait_req(s, &sz), ncclSuccess);
    }
    for (int i = 0; i < P2P_NSLOTS; i++) {
        int sz = -1;
        assert_int_equal(wait_req(r[i], &sz), ncclSuccess);
        assert_int_equal(sz, 999 - i); /* exact size, in posting order */
        assert_int_equal(p->rbuf[i * 1000], i + 1);
    }
    r[0] = post_recv(p, 0, 10);
    assert_non_null(r[0]);
    void *s0 = post_send(p, 0, 0);
    int sz = -1;
    assert_int_equal(wait_req(s0, &sz), ncclSuccess);
    assert_int_equal(wait_req(r[0], &sz), ncclSuccess);
    assert_int_equal(sz, 0);
}

static void striped_large(void **state)
{
    struct pair *p = *state;
    size_t n = BUF - 12345;
    for (size_t i = 0; i < n; i++)
        p->sbuf[i] = (char)(i * 31 + 7);
    memset(p->rbuf, 0, BUF);
    void *r = post_recv(p, 0, BUF);
    void *s = post_send(p, 0, n);
    int sz = -1, ssz = -1;
    assert_int_equal(wait_req(s, &ssz), ncclSuccess);
    assert_int_equal(wait_req(r, &sz), ncclSuccess);
    assert_int_equal(sz, (int)n);
    assert_memory_equal(p->rbuf, p->sbuf, n);
    assert_int_equal(p->rbuf[n], 0); /* nothing beyond the message */
}

static void bad_arguments(void **state)
{
    struct pair *p = *state;
    void *req = (void *)1, *d = p->rbuf;
    size_t cap = 10;
    int tag = 0, done;
    /* two buffers: jaccl reports maxRecvs = 1 */
    void *ds[2] = {d, d};
    size_t caps[2] = {1, 1};
    int tags[2] = {0, 0};
    void *mhs[2] = {p->rmh, p->rmh};
    assert_int_equal(jaccl_irecv(p->rc, 2, ds, caps, tags, mhs, NULL, &req), ncclInvalidUsage);
    assert_null(req);
    /* a buffer outside its registration */
    d = p->rbuf + BUF - 4;
    assert_int_equal(jaccl_irecv(p->rc, 1, &d, &cap, &tag, &p->rmh, NULL, &req), ncclInvalidUsage);
    /* wrong comm kinds and garbage */
    assert_int_equal(jaccl_isend(p->rc, p->sbuf, 1, 0, p->smh, NULL, &req), ncclInternalError);
    int junk[16] = {0};
    assert_int_equal(jaccl_test(junk, &done, NULL), ncclInternalError);
    assert_int_equal(jaccl_reg_mr(p->sc, p->sbuf, 16, NCCL_PTR_CUDA, &req), ncclInternalError);
}

/* Last: truncation breaks nothing but the two requests involved... and is sticky per NCCL. */
static void truncation_fails_both_ends(void **state)
{
    struct pair *p = *state;
    void *r = post_recv(p, 0, 100);
    void *s = post_send(p, 0, 101);
    int sz;
    assert_int_equal(wait_req(s, &sz), ncclInvalidUsage);
    assert_int_equal(wait_req(r, &sz), ncclInvalidUsage);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(send_waits_for_cts),
            cmocka_unit_test(slots_run_out_then_free),
            cmocka_unit_test(striped_large),
            cmocka_unit_test(bad_arguments),
            cmocka_unit_test(truncation_fails_both_ends),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
