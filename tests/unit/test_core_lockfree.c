/* SPDX-License-Identifier: BSD-3-Clause */
/* The data path checks its pointers without the registry's process-wide lock (core/registry.c,
 * reg_index.c), and those checks stay right while other objects are created and closed on other
 * threads: test(), isend, irecv and the CollNet calls never take the writers' lock (counted by
 * the debug counters, not timed), a live object is always found however its bucket changes
 * around it, and a closed one never is. Under ASan and TSan (make test-asan, test-tsan) this
 * also proves that a lookup racing a close of another object reads no freed memory. */
#include <pthread.h>
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
#include "util/counters.h"
#include "util/log.h"

#define CHURN_OBJS   8192 /* distinct addresses churned: every bucket sees several */
#define CHURN_ROUNDS 16
#define PAIR_CYCLES  12

static atomic_int warns;
static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                   const char *fmt, ...)
{
    warns += level == NCCL_LOG_WARN;
}

static uint64_t counter(enum jaccl_counter k)
{
    uint64_t v[JACCL_CNT_NUM];
    jaccl_counters_read(v, NULL, JACCL_CNT_NUM);
    return v[k];
}

static int setup(void **state)
{
    setenv("NCCL_JACCL_SOCKET_IFNAME", "lo", 1);
    setenv("NCCL_JACCL_NSOCKS", "2", 1);
    setenv("NCCL_JACCL_DEBUG_COUNTERS", "1", 1); /* in memory: read with jaccl_counters_read */
    jaccl_log_set(logger);
    return 0;
}

/* ---- the registry alone: readers against a churning writer ---- */

struct watcher {
    void *single, *elem; /* live throughout: must always be found */
    atomic_int stop, started;
    long looks, misses;
};

static void *watch(void *arg)
{
    struct watcher *w = arg;
    atomic_store(&w->started, 1);
    while (!atomic_load(&w->stop)) {
        w->misses += jaccl_reg_find(w->single, JO_SEND, "watch", NULL) != w->single;
        w->misses += jaccl_reg_find(w->elem, JO_P2P_REQ, "watch", NULL) != w->elem;
        w->looks += 2;
    }
    return NULL;
}

/* Objects added and removed all around the watched ones: singles at every address of a block
 * (so every bucket changes, the watched ones' too) and arrays across its granules. A removed
 * object is never found, a live one always. */
static void churn(char *block)
{
    for (int r = 0; r < CHURN_ROUNDS; r++) {
        for (int i = 0; i < CHURN_OBJS; i++)
            assert_int_equal(jaccl_reg_add(block + i, 1, 1, JO_MH, NULL), 0);
        assert_int_equal(jaccl_reg_add(block + CHURN_OBJS, 64, 512, JO_COLL_REQ, NULL), 0);
        for (int i = 0; i < CHURN_OBJS; i += 2)
            jaccl_reg_del(block + i);
        for (int i = 0; i < CHURN_OBJS; i++)
            assert_true((jaccl_reg_find(block + i, JO_MH, "churn", NULL) != NULL) == (i % 2));
        for (int i = 1; i < CHURN_OBJS; i += 2)
            jaccl_reg_del(block + i);
        jaccl_reg_del(block + CHURN_OBJS);
        assert_null(jaccl_reg_find(block + CHURN_OBJS + 64, JO_COLL_REQ, "churn", NULL));
    }
}

static void registry_reads_while_others_change(void **state)
{
    size_t n0 = jaccl_reg_count();
    long single[2], arr[64];
    char *block = malloc(CHURN_OBJS + 64 * 512);
    struct watcher w = {.single = single, .elem = &arr[16]};
    assert_int_equal(jaccl_reg_add(single, sizeof(single), 1, JO_SEND, single), 0);
    assert_int_equal(jaccl_reg_add(arr, sizeof(arr[0]) * 8, 8, JO_P2P_REQ, single), 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, watch, &w), 0);
    while (!atomic_load(&w.started))
        core_nap();
    int w0 = warns;
    churn(block);
    atomic_store(&w.stop, 1);
    pthread_join(th, NULL);
    assert_int_equal(w.misses, 0);
    assert_true(w.looks > 0);
    assert_int_equal(warns - w0, CHURN_ROUNDS * CHURN_OBJS / 2 + CHURN_ROUNDS); /* churn's */
    jaccl_reg_del(single);
    jaccl_reg_del(arr);
    assert_null(jaccl_reg_find(single, JO_SEND, "t", NULL));
    assert_int_equal(jaccl_reg_count(), n0);
    free(block);
}

/* ---- the data path through the API ---- */

/* 100 bytes from sc into the receive req posted on its peer, both tested until done. */
static void send_into(void *sc, char *sbuf, void *smh, void *req)
{
    void *sreq = NULL;
    int done = 0, rdone = 0, size = -1;
    double t0 = core_now();
    while (!sreq && core_now() - t0 < 30)
        assert_int_equal(jaccl_isend(sc, sbuf, 100, 3, smh, NULL, &sreq), ncclSuccess);
    assert_non_null(sreq);
    while ((!done || !rdone) && core_now() - t0 < 30) {
        if (!done)
            assert_int_equal(jaccl_test(sreq, &done, NULL), ncclSuccess);
        if (!rdone)
            assert_int_equal(jaccl_test(req, &rdone, &size), ncclSuccess);
    }
    assert_true(done && rdone);
    assert_int_equal(size, 100);
}

/* test(), isend and irecv of a live pair: not one acquisition of the writers' lock. */
static void data_path_takes_no_process_lock(void **state)
{
    void *ctx, *req = NULL, *d;
    struct core_pair *p = calloc(1, sizeof(*p));
    size_t cap = CORE_PAIR_BUF;
    int tag = 3, done = 0;
    assert_int_equal(jaccl_init(&ctx, 1, NULL, NULL, NULL), ncclSuccess);
    core_pair_open(ctx, p);
    d = p->rbuf;
    uint64_t l0 = counter(JACCL_CNT_REG_LOCK), t0 = counter(JACCL_CNT_TEST);
    assert_int_equal(jaccl_irecv(p->rc, 1, &d, &cap, &tag, &p->rmh, NULL, &req), ncclSuccess);
    for (int i = 0; i < 1000; i++) {
        assert_int_equal(jaccl_test(req, &done, NULL), ncclSuccess);
        assert_int_equal(done, 0); /* nothing sent yet */
    }
    send_into(p->sc, p->sbuf, p->smh, req);
    assert_true(counter(JACCL_CNT_TEST) - t0 >= 1002);
    assert_int_equal(counter(JACCL_CNT_REG_LOCK) - l0, 0);
    core_pair_close(p);
    assert_int_equal(jaccl_finalize(ctx), ncclSuccess);
    free(p);
}

struct spinner {
    void *req;     /* a p2p receive nobody sends to while the spinner runs */
    void *cc, *mh; /* a one-rank CollNet comm and its buffer's handle */
    int32_t *buf;
    atomic_int stop, started;
    long tests, colls, errors;
};

/* One collective on the one-rank comm, tested until done: its i* call and test(). */
static int one_coll(struct spinner *s)
{
    void *req = NULL;
    int done = 0;
    if (jaccl_coll_iallreduce(s->cc, s->buf, s->buf, 16, ncclInt32, ncclSum, s->mh, s->mh, &req) !=
        ncclSuccess)
        return -1;
    while (req && !done)
        if (jaccl_coll_test(req, &done, NULL) != ncclSuccess)
            return -1;
    return 0;
}

static void *spin(void *arg)
{
    struct spinner *s = arg;
    atomic_store(&s->started, 1);
    while (!atomic_load(&s->stop)) {
        int done = 1;
        s->errors += jaccl_test(s->req, &done, NULL) != ncclSuccess || done;
        s->errors += one_coll(s) != 0;
        s->tests++;
        s->colls++;
    }
    return NULL;
}

static void open_coll(void *ctx, struct spinner *s)
{
    void *lc;
    char handle[128];
    void *handles[1] = {handle};
    assert_int_equal(jaccl_coll_listen(ctx, 0, handle, &lc), ncclSuccess);
    assert_int_equal(jaccl_coll_connect(handles, 1, 0, lc, &s->cc), ncclSuccess);
    assert_int_equal(jaccl_coll_close_listen(lc), ncclSuccess);
    assert_int_equal(jaccl_reg_mr(s->cc, s->buf, 16 * sizeof(int32_t), JACCL_MEM_HOST, &s->mh),
                     ncclSuccess);
}

/* NCCL creates and closes comms on one thread while its proxy spins on test() on another: the
 * spinner's calls never fail and never see its request done early, whatever the other thread
 * registers and frees meanwhile; then its request completes normally. */
static void test_spins_while_comms_come_and_go(void **state)
{
    void *ctx, *d;
    struct core_pair *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
    struct spinner s = {.buf = calloc(16, sizeof(int32_t))};
    size_t cap = CORE_PAIR_BUF, n0 = jaccl_reg_count();
    int tag = 3;
    assert_int_equal(jaccl_init(&ctx, 2, NULL, NULL, NULL), ncclSuccess);
    core_pair_open(ctx, a);
    open_coll(ctx, &s);
    d = a->rbuf;
    assert_int_equal(jaccl_irecv(a->rc, 1, &d, &cap, &tag, &a->rmh, NULL, &s.req), ncclSuccess);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, spin, &s), 0);
    while (!atomic_load(&s.started))
        core_nap();
    for (int i = 0; i < PAIR_CYCLES; i++) {
        core_pair_open(ctx, b);
        core_exchange(b->sc, b->rc, b->sbuf, b->rbuf, b->smh, b->rmh);
        core_pair_close(b);
    }
    atomic_store(&s.stop, 1);
    pthread_join(th, NULL);
    assert_int_equal(s.errors, 0);
    assert_true(s.tests > 0);
    send_into(a->sc, a->sbuf, a->smh, s.req);
    assert_int_equal(jaccl_coll_close(s.cc), ncclSuccess); /* s.mh released by the close */
    core_pair_close(a);
    assert_int_equal(jaccl_finalize(ctx), ncclSuccess);
    assert_int_equal(jaccl_reg_count(), n0);
    free(a);
    free(b);
    free(s.buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(registry_reads_while_others_change),
            cmocka_unit_test(data_path_takes_no_process_lock),
            cmocka_unit_test(test_spins_while_comms_come_and_go),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
