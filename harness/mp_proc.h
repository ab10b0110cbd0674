/* SPDX-License-Identifier: BSD-3-Clause */
/* Ranks as forked processes, sharing one MAP_SHARED anonymous region: a process-shared barrier,
 * listen handles, pids, and a few flags. The parent only forks and waits; it never loads the
 * plugin (plugin threads would not survive fork). */
#ifndef MP_PROC_H
#define MP_PROC_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "mp_scenario.h"
#include "nccl_abi/net.h"

#define MP_MAX_RANKS    8
#define MP_SLOTS        4  /* listen handles each rank may publish at once */
#define MP_FLAGS        16 /* integers each rank may publish; MP_FLAG_HARNESS.. are the harness's */
#define MP_FLAG_HARNESS 12
#define MP_VALUES       16 /* measurements each rank may publish */

struct mp_shared {
    pthread_barrier_t barrier;
    int nranks;
    pid_t pid[MP_MAX_RANKS];
    int expect_kill[MP_MAX_RANKS]; /* the test kills this rank on purpose */
    char handle[MP_MAX_RANKS][MP_SLOTS][NCCL_NET_HANDLE_MAXSIZE];
    long flag[MP_MAX_RANKS][MP_FLAGS];     /* accessed with __atomic builtins */
    double value[MP_MAX_RANKS][MP_VALUES]; /* written before a barrier, read after it */
    char scratch[4096];                    /* free-form, the test's own layout */
};

extern struct mp_shared *mp_sh;
extern int mp_rank; /* -1 in the parent */

/* A rank's body. Return 0 for success; any check failure also fails the rank. */
typedef int (*mp_rank_fn)(int rank, int nranks, void *arg);

/* Scenario `name` (mp_scenario.h: kebab-case, unique in the program; `what` describes it for
 * people): when the command line selects it, forks `nranks` ranks running fn under
 * alarm(timeout_s), waits for them (a little longer than timeout_s) and prints its result
 * line. Returns 0 if every rank passed or it was not selected, 1 if not (or its name breaks
 * the rules). */
int mp_run(const char *name, const char *what, int nranks, int timeout_s, mp_rank_fn fn, void *arg);

void mp_barrier(void);

/* Listen handles: publish ours in `slot`, read a peer's (a pointer into the shared region). */
void mp_publish_handle(int slot, const void *handle);
const void *mp_peer_handle(int rank, int slot);

void mp_flag_set(int rank, int idx, long value);
long mp_flag_get(int rank, int idx);
/* Waits until rank's flag idx >= value; 0, or -1 after timeout_ms. */
int mp_flag_wait(int rank, int idx, long value, int timeout_ms);

/* A measurement for the other ranks; they read it after the next barrier. */
void mp_value_set(int idx, double v);
double mp_value_get(int rank, int idx);

/* Marks rank as killed on purpose (so the parent does not count it), then sends sig. */
int mp_kill_rank(int rank, int sig);

#endif
