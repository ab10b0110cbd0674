/* SPDX-License-Identifier: BSD-3-Clause */
/* Teardown calls, timed. NCCL's proxy makes them (deregMr, closeSend / closeRecv / closeColl,
 * closeListen, finalize) on the thread that serves every other communicator of the process, so
 * each must return promptly whatever the peers are doing. A rank records each such call in one
 * struct mp_closes: a call that fails or takes longer than the bound fails the rank at once,
 * naming the call and its duration; the durations are printed one line per teardown, and
 * mp_closes_report prints the longest call of the whole group. */
#ifndef MP_CLOSES_H
#define MP_CLOSES_H

#include "mp_util.h"
#include "nccl_abi/net.h"

/* What a close call may take with nothing to hand over: longer ones are marked in the line. */
#define MP_CLOSES_PROMPT_S 0.1
#define MP_CLOSES_ENTRIES  16 /* per line; a call repeated back to back shares one entry */
/* The mp_value slot mp_closes_report publishes each rank's longest call in. */
#define MP_CLOSES_VALUE (MP_VALUES - 1)

struct mp_closes {
    double bound_s; /* every call must return within this */
    double max_s;   /* the longest call since init, over every line */
    const char *max_what;
    int n; /* entries in the current line */
    struct {
        const char *what;
        int calls;
        double max_s;
    } e[MP_CLOSES_ENTRIES];
};

void mp_closes_init(struct mp_closes *t, double bound_s);

/* One call's outcome: it must return ncclSuccess within bound_s. Returns 1 if it did. */
int mp_closes_add(struct mp_closes *t, const char *what, ncclResult_t rc, double took_s,
                  const char *file, int line);

/* Times `call`, an expression of type ncclResult_t, and records it under `what`. */
#define MP_CLOSE_TIMED(t, what, call)                                                \
    ({                                                                               \
        double mp_ct0_ = mp_now();                                                   \
        ncclResult_t mp_crc_ = (call);                                               \
        mp_closes_add((t), (what), mp_crc_, mp_now() - mp_ct0_, __FILE__, __LINE__); \
    })

/* Prints "[r] <label>: deregMr x4 <= 0.0 ms, closeColl 1.2 ms, finalize 0.3 ms" and starts an
 * empty line (the maximum is kept). */
void mp_closes_print(struct mp_closes *t, const char *label);

/* After this rank's last teardown, on every rank of the group (it ends with a barrier): rank 0
 * prints the longest call any rank made, against the bound. */
void mp_closes_report(const struct mp_closes *t);

#endif
