/* SPDX-License-Identifier: BSD-3-Clause */
/* One lifetime rule for every object NCCL holds, through the internal API in one process over
 * the TCP fabric on lo: a call with a closed, foreign or wrong-kind pointer WARNs and returns
 * ncclInternalError without reading through it (run under ASan to prove the last part); a
 * pending connect is resumed only by the same handle bytes and device; the last finalize with
 * comms open leaves them working, and their last close leaves no thread behind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <stdatomic.h>

#include "core/api.h"
#include "core/registry.h"
#include "core_pair.h"
#include "mp_util.h"
#include "util/log.h"

#define BUF CORE_PAIR_BUF

/* Every refusal must say why: WARNs are counted through NCCL's logger hook (atomic: the TCP
 * back end's I/O threads log too, e.g. a peer's close). */
static atomic_int warns;
static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                   const char *fmt, ...)
{
    warns += level == NCCL_LOG_WARN;
}

#define MISUSE(call)                                 \
    do {                                             \
        int w_ = warns;                              \
        assert_int_equal((call), ncclInternalError); \
        assert_true(warns > w_);                     \
    } while (0)

static int setup(void **state)
{
    setenv("NCCL_JACCL_SOCKET_IFNAME", "lo", 1);
    setenv("NCCL_JACCL_NSOCKS", "2", 1);
    jaccl_log_set(logger);
    return 0;
}

/* ---- the registry itself ---- */

static void registry_ranges_and_kinds(void **state)
{
    size_t n0 = jaccl_reg_count();
    long arr[8], single[2], owner;
    assert_int_equal(jaccl_reg_add(arr, sizeof(arr[0]) * 2, 4, JO_P2P_REQ, &owner), 0);
    assert_int_equal(jaccl_reg_add(single, sizeof(single), 1, JO_SEND, single), 0);
    void *o = NULL;
    assert_ptr_equal(jaccl_reg_find(&arr[6], JO_P2P_REQ, "t", &o), &arr[6]);
    assert_ptr_equal(o, &owner);
    assert_null(jaccl_reg_find(&arr[1], JO_P2P_REQ, "t", NULL));  /* between two elements */
    assert_null(jaccl_reg_find(&arr[6], JO_COLL_REQ, "t", NULL)); /* wrong kind */
    assert_ptr_equal(jaccl_reg_find(single, JO_SEND | JO_RECV, "t", NULL), single);
    assert_null(jaccl_reg_find(&single[1], JO_SEND, "t", NULL)); /* only its first address */
    assert_null(jaccl_reg_find(NULL, JO_SEND, "t", NULL));
    jaccl_reg_del(single);
    assert_null(jaccl_reg_find(single, JO_SEND, "t", NULL));
    jaccl_reg_del(arr);
    assert_null(jaccl_reg_find(arr, JO_P2P_REQ, "t", NULL));
    assert_int_equal(jaccl_reg_count(), n0);
}

static int drained;
static void count_drained(void *obj)
{
    drained++;
}

static void registry_drain_by_owner(void **state)
{
    size_t n0 = jaccl_reg_count();
    char objs[4], a, b;
    for (int i = 0; i < 4; i++)
        assert_int_equal(jaccl_reg_add(&objs[i], 1, 1, JO_MH, i % 2 ? &a : &b), 0);
    drained = 0;
    jaccl_reg_drain(&a, JO_MH, count_drained);
    assert_int_equal(drained, 2);
    assert_null(jaccl_reg_find(&objs[1], JO_MH, "t", NULL));
    assert_non_null(jaccl_reg_find(&objs[0], JO_MH, "t", NULL));
    jaccl_reg_drain(&b, JO_MH, count_drained);
    assert_int_equal(drained, 4);
    assert_int_equal(jaccl_reg_count(), n0);
}

/* ---- p2p objects after close ---- */

static void p2p_use_after_close(void **state)
{
    void *ctx, *lc, *sc, *rc, *smh, *rmh, *req = NULL, *d;
    char handle[128], *sbuf = calloc(1, BUF), *rbuf = calloc(1, BUF);
    size_t n0 = jaccl_reg_count();
    assert_int_equal(jaccl_init(&ctx, 1, NULL, NULL, NULL), ncclSuccess);
    assert_int_equal(jaccl_listen(ctx, 0, handle, &lc), ncclSuccess);
    core_link_up(ctx, 0, handle, lc, &sc, &rc);
    assert_int_equal(jaccl_reg_mr(sc, sbuf, BUF, JACCL_MEM_HOST, &smh), ncclSuccess);
    assert_int_equal(jaccl_reg_mr(rc, rbuf, BUF, JACCL_MEM_HOST, &rmh), ncclSuccess);
    /* wrong kinds */
    MISUSE(jaccl_close_recv(sc));
    MISUSE(jaccl_close_send(rc));
    MISUSE(jaccl_accept(sc, &d, NULL));
    MISUSE(jaccl_close_listen(rc));
    MISUSE(jaccl_test(smh, &(int){0}, NULL));
    /* a late accept on a closed listen comm */
    assert_int_equal(jaccl_close_listen(lc), ncclSuccess);
    MISUSE(jaccl_accept(lc, &d, NULL));
    assert_null(d);
    MISUSE(jaccl_close_listen(lc));
    /* a deregistered handle */
    core_exchange(sc, rc, sbuf, rbuf, smh, rmh);
    assert_int_equal(jaccl_dereg_mr(sc, smh), ncclSuccess);
    MISUSE(jaccl_dereg_mr(sc, smh));
    assert_int_equal(jaccl_isend(sc, sbuf, 10, 3, smh, NULL, &req), ncclInternalError);
    assert_int_equal(jaccl_dereg_mr(sc, rmh), ncclInternalError); /* another comm's */
    /* a request whose comm is closed with it in flight, and with rmh still registered */
    d = rbuf;
    size_t cap = BUF;
    int tag = 3, done = 0;
    assert_int_equal(jaccl_irecv(rc, 1, &d, &cap, &tag, &rmh, NULL, &req), ncclSuccess);
    assert_non_null(req);
    assert_int_equal(jaccl_close_recv(rc), ncclSuccess);
    MISUSE(jaccl_test(req, &done, NULL));
    MISUSE(jaccl_irecv(rc, 1, &d, &cap, &tag, &rmh, NULL, &req));
    MISUSE(jaccl_dereg_mr(rc, rmh));
    MISUSE(jaccl_close_recv(rc));
    void *freq = (void *)1;
    MISUSE(jaccl_iflush(rc, 1, &d, &(int){1}, &rmh, &freq));
    assert_null(freq);
    assert_int_equal(jaccl_close_send(sc), ncclSuccess);
    MISUSE(jaccl_close_send(sc));
    MISUSE(jaccl_reg_mr(sc, sbuf, BUF, JACCL_MEM_HOST, &smh));
    /* the init context too */
    assert_int_equal(jaccl_finalize(ctx), ncclSuccess);
    MISUSE(jaccl_finalize(ctx));
    MISUSE(jaccl_set_net_attr(ctx));
    MISUSE(jaccl_listen(ctx, 0, handle, &lc));
    assert_int_equal(jaccl_reg_count(), n0); /* nothing kept of any of them */
    free(sbuf);
    free(rbuf);
}

/* ---- a pending connect is resumed by its handle's contents, not its address ---- */

static void pending_connect_matches_contents(void **state)
{
    void *ctx, *la, *lb, *sc = NULL, *rc = NULL;
    char ha[128], hb[128], *buf = malloc(128);
    assert_int_equal(jaccl_init(&ctx, 2, NULL, NULL, NULL), ncclSuccess);
    assert_int_equal(jaccl_listen(ctx, 0, ha, &la), ncclSuccess);
    assert_int_equal(jaccl_listen(ctx, 0, hb, &lb), ncclSuccess);
    /* Start connecting to A and abandon it (A never accepts): it stays pending. */
    memcpy(buf, ha, 128);
    assert_int_equal(jaccl_connect(ctx, 0, buf, &sc, NULL), ncclSuccess);
    assert_null(sc);
    /* The same buffer now holds B's handle: the connect must go to B. */
    memcpy(buf, hb, 128);
    core_link_up(ctx, 0, buf, lb, &sc, &rc);
    char sbuf[BUF], rbuf[BUF];
    void *smh, *rmh;
    assert_int_equal(jaccl_reg_mr(sc, sbuf, BUF, JACCL_MEM_HOST, &smh), ncclSuccess);
    assert_int_equal(jaccl_reg_mr(rc, rbuf, BUF, JACCL_MEM_HOST, &rmh), ncclSuccess);
    core_exchange(sc, rc, sbuf, rbuf, smh, rmh);
    assert_int_equal(jaccl_close_send(sc), ncclSuccess);
    assert_int_equal(jaccl_close_recv(rc), ncclSuccess);
    assert_int_equal(jaccl_close_listen(la), ncclSuccess);
    assert_int_equal(jaccl_close_listen(lb), ncclSuccess);
    /* finalize drops the abandoned connect to A */
    assert_int_equal(jaccl_finalize(ctx), ncclSuccess);
    free(buf);
}

/* ---- the last finalize with comms open ---- */

static void finalize_with_comms_open(void **state)
{
    int t0 = mp_thread_count();
    size_t n0 = jaccl_reg_count();
    void *ctx, *lc, *sc, *rc, *smh, *rmh;
    char handle[128], sbuf[BUF], rbuf[BUF];
    assert_int_equal(jaccl_init(&ctx, 3, NULL, NULL, NULL), ncclSuccess);
    assert_int_equal(jaccl_listen(ctx, 0, handle, &lc), ncclSuccess);
    core_link_up(ctx, 0, handle, lc, &sc, &rc);
    assert_int_equal(jaccl_reg_mr(sc, sbuf, BUF, JACCL_MEM_HOST, &smh), ncclSuccess);
    assert_int_equal(jaccl_reg_mr(rc, rbuf, BUF, JACCL_MEM_HOST, &rmh), ncclSuccess);
    assert_true(mp_thread_count() > t0); /* the TCP endpoints' I/O threads */
    void *d = rbuf, *freq = (void *)1;
    assert_int_equal(jaccl_iflush(rc, 1, &d, &(int){1}, &rmh, &freq), ncclSuccess);
    assert_null(freq);
    assert_int_equal(jaccl_set_net_attr(ctx), ncclSuccess);
    assert_int_equal(jaccl_finalize(ctx), ncclSuccess);
    /* The comms keep the fabric: they still move data, and close cleanly. */
    core_exchange(sc, rc, sbuf, rbuf, smh, rmh);
    assert_int_equal(jaccl_dereg_mr(sc, smh), ncclSuccess);
    assert_int_equal(jaccl_close_send(sc), ncclSuccess);
    assert_int_equal(jaccl_close_recv(rc), ncclSuccess); /* rmh released by the close */
    assert_int_equal(jaccl_close_listen(lc), ncclSuccess);
    assert_int_equal(mp_threads_down_to(t0), t0);
    assert_int_equal(jaccl_reg_count(), n0);
    /* and the plugin starts again from scratch */
    int ndev = 0;
    assert_int_equal(jaccl_devices(&ndev), ncclSuccess);
    assert_int_equal(ndev, 0);
    assert_int_equal(jaccl_init(&ctx, 4, NULL, NULL, NULL), ncclSuccess);
    assert_int_equal(jaccl_devices(&ndev), ncclSuccess);
    assert_true(ndev >= 1);
    assert_int_equal(jaccl_finalize(ctx), ncclSuccess);
}

/* ---- CollNet: a one-rank group's request after closeColl ---- */

static void coll_request_after_close(void **state)
{
    void *ctx, *lc, *cc = NULL, *mh, *req = NULL;
    char handle[128];
    int32_t buf[16] = {1, 2, 3};
    assert_int_equal(jaccl_coll_init(&ctx, 5, NULL), ncclSuccess);
    assert_int_equal(jaccl_coll_listen(ctx, 0, handle, &lc), ncclSuccess);
    void *handles[1] = {handle};
    assert_int_equal(jaccl_coll_connect(handles, 1, 0, lc, &cc), ncclSuccess);
    assert_int_equal(jaccl_coll_close_listen(lc), ncclSuccess);
    void *late = (void *)1;
    MISUSE(jaccl_coll_connect(handles, 1, 0, lc, &late));
    assert_null(late);
    assert_int_equal(jaccl_reg_mr(cc, buf, sizeof(buf), JACCL_MEM_HOST, &mh), ncclSuccess);
    assert_int_equal(jaccl_coll_iallreduce(cc, buf, buf, 16, ncclInt32, ncclSum, mh, mh, &req),
                     ncclSuccess);
    assert_non_null(req);
    MISUSE(jaccl_test(req, &(int){0}, NULL));            /* not a p2p one */
    assert_int_equal(jaccl_coll_close(cc), ncclSuccess); /* with req and mh still live */
    int done = 0;
    MISUSE(jaccl_coll_test(req, &done, NULL));
    MISUSE(jaccl_dereg_mr(cc, mh));
    MISUSE(jaccl_coll_close(cc));
    MISUSE(jaccl_coll_iallreduce(cc, buf, buf, 16, ncclInt32, ncclSum, mh, mh, &req));
    assert_int_equal(jaccl_finalize(ctx), ncclSuccess);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(registry_ranges_and_kinds),
            cmocka_unit_test(registry_drain_by_owner),
            cmocka_unit_test(p2p_use_after_close),
            cmocka_unit_test(pending_connect_matches_contents),
            cmocka_unit_test(finalize_with_comms_open),
            cmocka_unit_test(coll_request_after_close),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
