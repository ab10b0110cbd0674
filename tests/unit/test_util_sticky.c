/* SPDX-License-Identifier: BSD-3-Clause */
/* The sticky error (util/sticky.h) and the one error rule's table (core/err.h): the first
 * failure wins, from any number of threads at once, its reason is the one read back and it is
 * WARNed once; every code maps to the ncclResult_t of its class. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/err.h"
#include "util/sticky.h"

static void first_failure_sticks(void **state)
{
    struct jaccl_sticky s = {0};
    const char *why = "untouched";
    assert_int_equal(jaccl_sticky_get(&s, &why), 0);
    assert_string_equal(why, "untouched"); /* healthy: *reason is left alone */
    assert_int_equal(jaccl_sticky_warn_once(&s), 0);
    assert_int_equal(jaccl_sticky_set(&s, 0, "not a failure"), 0);
    assert_int_equal(jaccl_sticky_status(&s), 0);
    assert_int_equal(jaccl_sticky_set(&s, -ECONNRESET, "peer %s went away", "x"), 1);
    assert_int_equal(jaccl_sticky_set(&s, -ENOMEM, "a consequence"), 0);
    assert_int_equal(jaccl_sticky_get(&s, &why), -ECONNRESET);
    assert_string_equal(why, "peer x went away");
    assert_int_equal(jaccl_sticky_warn_once(&s), 1);
    assert_int_equal(jaccl_sticky_warn_once(&s), 0);
    jaccl_sticky_init(&s);
    assert_int_equal(jaccl_sticky_status(&s), 0);
}

#define RACERS 8

struct race {
    struct jaccl_sticky *s;
    pthread_barrier_t *go;
    int id, won, warned;
};

static void *racer(void *arg)
{
    struct race *r = arg;
    pthread_barrier_wait(r->go);
    r->won = jaccl_sticky_set(r->s, -(100 + r->id), "racer %d", r->id);
    const char *why = NULL;
    /* whoever reads, winner or not, sees a recorded failure with a complete reason */
    int st = jaccl_sticky_get(r->s, &why);
    if (st == 0 || !why || strncmp(why, "racer ", 6) != 0)
        r->won = -1;
    r->warned = jaccl_sticky_warn_once(r->s);
    return NULL;
}

static void one_winner_among_threads(void **state)
{
    for (int round = 0; round < 200; round++) {
        struct jaccl_sticky s = {0};
        pthread_barrier_t go;
        pthread_t t[RACERS];
        struct race r[RACERS];
        pthread_barrier_init(&go, NULL, RACERS);
        for (int i = 0; i < RACERS; i++) {
            r[i] = (struct race){.s = &s, .go = &go, .id = i};
            assert_int_equal(pthread_create(&t[i], NULL, racer, &r[i]), 0);
        }
        int winners = 0, warns = 0, winner = -1;
        for (int i = 0; i < RACERS; i++) {
            pthread_join(t[i], NULL);
            assert_true(r[i].won >= 0);
            winners += r[i].won;
            warns += r[i].warned;
            if (r[i].won)
                winner = i;
        }
        pthread_barrier_destroy(&go);
        assert_int_equal(winners, 1);
        assert_int_equal(warns, 1);
        const char *why = NULL;
        char want[32];
        snprintf(want, sizeof(want), "racer %d", winner);
        assert_int_equal(jaccl_sticky_get(&s, &why), -(100 + winner));
        assert_string_equal(why, want);
    }
}

static void error_classes(void **state)
{
    assert_int_equal(jaccl_err_to_nccl(0), ncclSuccess);
    static const int misuse[] = {-EFAULT, -EBADF, -EALREADY};
    static const int usage[] = {-EMSGSIZE, -EINVAL};
    static const int remote[] = {-ECONNRESET,   -ECONNREFUSED, -ECONNABORTED, -EPIPE,    -ENOTCONN,
                                 -EHOSTUNREACH, -ENETUNREACH,  -EPROTO,       -ETIMEDOUT};
    static const int sys[] = {-ENOMEM, -EIO, -EAGAIN, -EADDRINUSE, -ENODEV};
    for (size_t i = 0; i < sizeof(misuse) / sizeof(misuse[0]); i++)
        assert_int_equal(jaccl_err_to_nccl(misuse[i]), ncclInternalError);
    for (size_t i = 0; i < sizeof(usage) / sizeof(usage[0]); i++)
        assert_int_equal(jaccl_err_to_nccl(usage[i]), ncclInvalidUsage);
    for (size_t i = 0; i < sizeof(remote) / sizeof(remote[0]); i++)
        assert_int_equal(jaccl_err_to_nccl(remote[i]), ncclRemoteError);
    for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]); i++)
        assert_int_equal(jaccl_err_to_nccl(sys[i]), ncclSystemError);
    /* a progress count is not an error code: leaking one is our bug */
    assert_int_equal(jaccl_err_to_nccl(1), ncclInternalError);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(first_failure_sticks),
            cmocka_unit_test(one_winner_among_threads),
            cmocka_unit_test(error_classes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
