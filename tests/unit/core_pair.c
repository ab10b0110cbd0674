/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p comm pairs for the core's unit tests (see core_pair.h). */
#include "core_pair.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "core/api.h"

double core_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void core_nap(void)
{
    nanosleep(&(struct timespec){0, 100000}, NULL);
}

void core_link_up(void *ctx, int dev, void *handle, void *lc, void **sc, void **rc)
{
    *sc = *rc = NULL;
    double t0 = core_now();
    while ((!*sc || !*rc) && core_now() - t0 < 30) {
        if (!*sc)
            assert_int_equal(jaccl_connect(ctx, dev, handle, sc, NULL), ncclSuccess);
        if (!*rc)
            assert_int_equal(jaccl_accept(lc, rc, NULL), ncclSuccess);
        if (!*sc || !*rc)
            core_nap();
    }
    assert_non_null(*sc);
    assert_non_null(*rc);
}

void core_exchange(void *sc, void *rc, char *sbuf, char *rbuf, void *smh, void *rmh)
{
    void *rreq = NULL, *sreq = NULL, *d = rbuf;
    size_t cap = CORE_PAIR_BUF;
    int tag = 3, done = 0, size = -1;
    assert_int_equal(jaccl_irecv(rc, 1, &d, &cap, &tag, &rmh, NULL, &rreq), ncclSuccess);
    assert_non_null(rreq);
    memset(sbuf, 0x5a, 100);
    double t0 = core_now();
    while (!sreq && core_now() - t0 < 30) {
        assert_int_equal(jaccl_isend(sc, sbuf, 100, 3, smh, NULL, &sreq), ncclSuccess);
        if (!sreq)
            core_nap();
    }
    assert_non_null(sreq);
    for (int n = 0; n < 2 && core_now() - t0 < 30;) {
        void *r = n == 0 ? sreq : rreq;
        assert_int_equal(jaccl_test(r, &done, &size), ncclSuccess);
        n += done;
        if (!done)
            core_nap();
    }
    assert_int_equal(size, 100);
    assert_int_equal(rbuf[99], 0x5a);
}

void core_pair_open(void *ctx, struct core_pair *p)
{
    assert_int_equal(jaccl_listen(ctx, 0, p->handle, &p->lc), ncclSuccess);
    core_link_up(ctx, 0, p->handle, p->lc, &p->sc, &p->rc);
    assert_int_equal(jaccl_reg_mr(p->sc, p->sbuf, CORE_PAIR_BUF, JACCL_MEM_HOST, &p->smh),
                     ncclSuccess);
    assert_int_equal(jaccl_reg_mr(p->rc, p->rbuf, CORE_PAIR_BUF, JACCL_MEM_HOST, &p->rmh),
                     ncclSuccess);
}

void core_pair_close(struct core_pair *p)
{
    assert_int_equal(jaccl_dereg_mr(p->sc, p->smh), ncclSuccess);
    assert_int_equal(jaccl_dereg_mr(p->rc, p->rmh), ncclSuccess);
    assert_int_equal(jaccl_close_send(p->sc), ncclSuccess);
    assert_int_equal(jaccl_close_recv(p->rc), ncclSuccess);
    assert_int_equal(jaccl_close_listen(p->lc), ncclSuccess);
}
