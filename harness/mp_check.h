/* SPDX-License-Identifier: BSD-3-Clause */
/* Assertions that count instead of aborting, so one rank reports every broken promise and the
 * rank's exit status says whether any failed. */
#ifndef MP_CHECK_H
#define MP_CHECK_H

#include "nccl_abi/net.h"

/* Failures recorded by this process so far. */
int mp_failures(void);

/* Records a failure when !ok; prints "[rank] FAIL file:line: message". Returns ok. */
int mp_check_at(int ok, const char *file, int line, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* Prints "[rank] message" to stdout: what a test is about to check, or what it measured. */
void mp_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

const char *mp_result_str(ncclResult_t rc);

#define MP_CHECK(ok, ...) mp_check_at(!!(ok), __FILE__, __LINE__, __VA_ARGS__)

/* The call must return exactly `want`. */
#define MP_EXPECT_RC(call, want)                                                                \
    ({                                                                                          \
        ncclResult_t mp_rc_ = (call);                                                           \
        mp_check_at(mp_rc_ == (want), __FILE__, __LINE__, "%s returned %s, expected %s", #call, \
                    mp_result_str(mp_rc_), mp_result_str(want));                                \
    })

/* The call must succeed. */
#define MP_OK(call) MP_EXPECT_RC(call, ncclSuccess)

#endif
