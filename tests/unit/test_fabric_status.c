/* SPDX-License-Identifier: BSD-3-Clause */
/* An endpoint's failure is a negative errno (the error rule); the work it fails completes with
 * the status fab_wc_status_of gives it (fabric.h's table, the one mapping). Verbs' completion
 * errors become errnos that map back to the statuses they always had. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fabric/fabric.h"
#include "fabric/verbs/verbs_int.h"

static void test_table(void **st)
{
    assert_int_equal(fab_wc_status_of(0), FAB_WC_OK);
    assert_int_equal(fab_wc_status_of(-ECANCELED), FAB_WC_FLUSHED);
    assert_int_equal(fab_wc_status_of(-EMSGSIZE), FAB_WC_LEN_ERR);
    assert_int_equal(fab_wc_status_of(-EACCES), FAB_WC_REMOTE_ACCESS);
    assert_int_equal(fab_wc_status_of(-ENOMSG), FAB_WC_NO_RECV);
    assert_int_equal(fab_wc_status_of(-EPROTO), FAB_WC_PEER_PROTO);
    assert_int_equal(fab_wc_status_of(-EIO), FAB_WC_LOCAL_ERR);
}

/* What a socket says when its connection breaks is the peer's loss; any other errno of a
 * system call is ours. */
static void test_socket_errnos(void **st)
{
    static const int lost[] = {ECONNRESET,   ETIMEDOUT, ECONNABORTED, EPIPE,    ECONNREFUSED,
                               EHOSTUNREACH, EHOSTDOWN, ENETUNREACH,  ENETDOWN, ENOTCONN};
    static const int local[] = {ENOMEM, ENOBUFS, EBADF, EINVAL, EFAULT, EAGAIN};
    for (size_t i = 0; i < sizeof(lost) / sizeof(lost[0]); i++)
        assert_int_equal(fab_wc_status_of(-lost[i]), FAB_WC_PEER_LOST);
    for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++)
        assert_int_equal(fab_wc_status_of(-local[i]), FAB_WC_LOCAL_ERR);
}

/* The statuses verbs' completion errors gave before they were recorded as errnos. */
static void test_verbs_completion_errors(void **st)
{
    static const struct {
        enum ibv_wc_status ibv;
        enum fab_wc_status fab;
    } map[] = {
            {IBV_WC_SUCCESS, FAB_WC_OK},
            {IBV_WC_WR_FLUSH_ERR, FAB_WC_FLUSHED},
            {IBV_WC_LOC_LEN_ERR, FAB_WC_LEN_ERR},
            {IBV_WC_REM_ACCESS_ERR, FAB_WC_REMOTE_ACCESS},
            {IBV_WC_REM_INV_REQ_ERR, FAB_WC_REMOTE_ACCESS},
            {IBV_WC_RETRY_EXC_ERR, FAB_WC_PEER_LOST},
            {IBV_WC_RNR_RETRY_EXC_ERR, FAB_WC_PEER_LOST},
            {IBV_WC_REM_OP_ERR, FAB_WC_PEER_LOST},
            {IBV_WC_REM_ABORT_ERR, FAB_WC_PEER_LOST},
            {IBV_WC_LOC_PROT_ERR, FAB_WC_LOCAL_ERR},
            {IBV_WC_GENERAL_ERR, FAB_WC_LOCAL_ERR},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
        int err = vb_wc_err(map[i].ibv);
        assert_true(err < 0 || map[i].ibv == IBV_WC_SUCCESS);
        assert_int_equal(fab_wc_status_of(err), map[i].fab);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_table),
            cmocka_unit_test(test_socket_errnos),
            cmocka_unit_test(test_verbs_completion_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
