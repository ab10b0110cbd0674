/* SPDX-License-Identifier: BSD-3-Clause */
/* The software CQ's inline-progress sources (fabric/swcq.h): cq_poll drives what is attached
 * and nothing once detached, cq_wait spins through the sources (NCCL_JACCL_SPIN_US) and tells
 * them before it sleeps; one readiness check tells each source which of its watched sockets
 * hold bytes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "fabric/swcq.h"
#include "util/clock.h"
#include "util/crowd.h"
#include "util/param.h"

struct fake_src {
    struct fab_cq_src src;
    struct fab_cq *cq;
    int drives, quiets;
    int push_on;   /* the drive that pushes a completion (1-based); 0 = never */
    uint32_t seen; /* src.ready at its last drive */
};

static int fake_drive(struct fab_cq_src *s)
{
    struct fake_src *f = (struct fake_src *)s;
    struct fab_wc wc = {.wr_id = 42, .op = FAB_WC_RECV};

    f->seen = s->ready;
    if (++f->drives != f->push_on)
        return 0;
    fab_swcq_push(f->cq, &wc);
    return 1;
}

static void fake_quiet(struct fab_cq_src *s)
{
    ((struct fake_src *)s)->quiets++;
}

static struct fab_cq *make_cq(const char *spin_us)
{
    struct fab_cq *cq = NULL;

    setenv("NCCL_JACCL_SPIN_US", spin_us, 1);
    jaccl_param_reset();
    assert_int_equal(fab_swcq_create(NULL, 16, &cq), 0);
    return cq;
}

static void test_poll_drives_attached(void **state)
{
    struct fab_cq *cq = make_cq("0");
    struct fake_src f = {.src = {.drive = fake_drive, .quiet = fake_quiet}, .cq = cq, .push_on = 1};
    struct fab_wc wc[4];

    assert_int_equal(fab_swcq_poll(cq, wc, 4), 0); /* nothing attached: nothing driven */
    fab_swcq_attach(cq, &f.src);
    assert_int_equal(fab_swcq_poll(cq, wc, 4), 1); /* the drive's completion, same call */
    assert_int_equal(wc[0].wr_id, 42);
    assert_int_equal(f.drives, 1);
    fab_swcq_detach(cq, &f.src);
    assert_int_equal(fab_swcq_poll(cq, wc, 4), 0);
    assert_int_equal(f.drives, 1);
    fab_swcq_destroy(cq);
}

/* Two sources, two watched sockets each: a drive tells each which of its own hold bytes (one
 * readiness check for all); with nothing watched, every source reads everything. */
static void test_ready_per_source(void **state)
{
    struct fab_cq *cq = make_cq("0");
    struct fake_src a = {.src = {.drive = fake_drive}, .cq = cq};
    struct fake_src b = {.src = {.drive = fake_drive}, .cq = cq};
    int sp[4][2];
    struct fab_cq_fd ref[4] = {{&a.src, 1}, {&a.src, 2}, {&b.src, 1}, {&b.src, 2}};
    struct fab_wc wc[4];

    fab_swcq_attach(cq, &a.src);
    fab_swcq_attach(cq, &b.src);
    fab_swcq_poll(cq, wc, 4);
    assert_int_equal(a.seen, FAB_CQ_READY_ALL); /* nothing watched: it cannot tell */
    for (int i = 0; i < 4; i++) {
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp[i]), 0);
        assert_int_equal(fab_swcq_watch(cq, sp[i][0], &ref[i]), 0);
    }
    fab_swcq_poll(cq, wc, 4);
    assert_int_equal(a.seen, 0);
    assert_int_equal(b.seen, 0);
    assert_int_equal(write(sp[1][1], "x", 1), 1); /* a's second socket */
    assert_int_equal(write(sp[2][1], "y", 1), 1); /* b's first */
    fab_swcq_poll(cq, wc, 4);
    assert_int_equal(a.seen, 2);
    assert_int_equal(b.seen, 1);
    fab_swcq_poll(cq, wc, 4); /* level-triggered: still there until read */
    assert_int_equal(a.seen, 2);
    fab_swcq_unwatch(cq, sp[1][0]);
    fab_swcq_poll(cq, wc, 4);
    assert_int_equal(a.seen, 0);
    assert_int_equal(b.seen, 1);
    for (int i = 0; i < 4; i++) {
        fab_swcq_unwatch(cq, sp[i][0]);
        close(sp[i][0]);
        close(sp[i][1]);
    }
    fab_swcq_detach(cq, &a.src);
    fab_swcq_detach(cq, &b.src);
    fab_swcq_destroy(cq);
}

static void test_wait_quiets_before_sleeping(void **state)
{
    struct fab_cq *cq = make_cq("0");
    struct fake_src f = {.src = {.drive = fake_drive, .quiet = fake_quiet}, .cq = cq};

    fab_swcq_attach(cq, &f.src);
    assert_int_equal(fab_swcq_wait(cq, jaccl_now_ns() + 1000000), -ETIMEDOUT);
    assert_int_equal(f.quiets, 1);
    assert_int_equal(f.drives, 0); /* SPIN_US=0: no spin */
    fab_swcq_detach(cq, &f.src);
    fab_swcq_destroy(cq);
}

/* A test clock that moves 1 us each time it is read: a spin's budget becomes a number of rounds
 * (100 ms: tens of thousands), whatever the scheduler does between them. On the real clock a
 * loaded box can take the CPU away for the whole spin between two rounds. */
static _Atomic uint64_t g_ticks;

static uint64_t ticking_clock(void)
{
    return atomic_fetch_add(&g_ticks, 1000) + 1000;
}

static int clock_restore(void **state)
{
    jaccl_clock_set(NULL);
    return 0;
}

/* A completion the sources produce while cq_wait spins ends the wait without sleeping. */
static void test_wait_spin_finds_completion(void **state)
{
    struct fab_cq *cq = make_cq("100000");
    struct fake_src f = {.src = {.drive = fake_drive, .quiet = fake_quiet}, .cq = cq, .push_on = 3};
    struct fab_wc wc[4];

    jaccl_clock_set(ticking_clock);
    fab_swcq_attach(cq, &f.src);
    assert_int_equal(fab_swcq_wait(cq, jaccl_now_ns() + 5000000000ull), 0);
    assert_int_equal(f.drives, 3);
    assert_int_equal(f.quiets, 0);
    assert_int_equal(fab_swcq_poll(cq, wc, 4), 1);
    fab_swcq_detach(cq, &f.src);
    fab_swcq_destroy(cq);
}

/* Crowded CPUs: polls still drive, but cq_wait does not spin: it sleeps at once. */
static void test_crowded_no_inline(void **state)
{
    struct fab_cq *cq = make_cq("100000");
    struct fake_src f = {.src = {.drive = fake_drive, .quiet = fake_quiet}, .cq = cq};
    struct fab_wc wc[4];

    jaccl_cpu_crowd_force(1);
    fab_swcq_attach(cq, &f.src);
    f.push_on = 2; /* a spin's second drive would find it */
    assert_int_equal(fab_swcq_poll(cq, wc, 4), 0);
    assert_int_equal(f.drives, 1);
    assert_int_equal(fab_swcq_wait(cq, jaccl_now_ns() + 1000000), -ETIMEDOUT);
    assert_int_equal(f.drives, 1);
    assert_int_equal(f.quiets, 1);
    jaccl_cpu_crowd_force(0);
    fab_swcq_detach(cq, &f.src);
    fab_swcq_destroy(cq);
}

static int setup(void **state)
{
    jaccl_cpu_crowd_force(0); /* this box's load must not decide the outcome */
    return 0;
}

static int teardown(void **state)
{
    jaccl_cpu_crowd_force(-1);
    unsetenv("NCCL_JACCL_SPIN_US");
    jaccl_param_reset();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_poll_drives_attached),
            cmocka_unit_test(test_ready_per_source),
            cmocka_unit_test(test_wait_quiets_before_sleeping),
            cmocka_unit_test_teardown(test_wait_spin_finds_completion, clock_restore),
            cmocka_unit_test(test_crowded_no_inline),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
