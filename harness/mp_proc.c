/* SPDX-License-Identifier: BSD-3-Clause */
/* Forking ranks, the shared region, and judging how each rank ended. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mp_check.h"
#include "mp_host.h"
#include "mp_proc.h"
#include "mp_scenario.h"
#include "mp_util.h"

struct mp_shared *mp_sh;
int mp_rank = -1;

#define FAIL_GRACE_S 5

/* Async-signal-safe: a rank that hangs says so and leaves with a status the parent knows. */
static void on_alarm(int sig)
{
    char msg[96];
    int n = snprintf(msg, sizeof(msg), "[%d] TIMEOUT: rank hung, giving up (alarm)\n", mp_rank);
    if (write(STDOUT_FILENO, msg, (size_t)n) < 0)
        _exit(125);
    _exit(124);
}

/* JACCL_TEST_RANK_ENV_<r>="NAME=VALUE NAME=VALUE": per-rank settings, applied before the rank
 * loads the plugin (the verbs suite puts rank r on device rxe<r> this way). */
static void apply_rank_env(int rank)
{
    char name[64], buf[1024];
    snprintf(name, sizeof(name), "JACCL_TEST_RANK_ENV_%d", rank);
    const char *spec = getenv(name);
    if (!spec || snprintf(buf, sizeof(buf), "%s", spec) >= (int)sizeof(buf))
        return;
    char *save = NULL;
    for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '=');
        if (eq && eq != tok) {
            *eq = 0;
            setenv(tok, eq + 1, 1);
        }
    }
}

static void rank_main(int rank, int nranks, int timeout_s, mp_rank_fn fn, void *arg)
{
    mp_rank = rank;
    apply_rank_env(rank);
    mp_sh->pid[rank] = getpid();
    signal(SIGALRM, on_alarm);
    alarm((unsigned)timeout_s);
    int rc = fn(rank, nranks, arg);
    fflush(NULL);
    /* exit, not _exit: the leak checker of sanitizer builds runs at exit. */
    exit(rc != 0 || mp_failures() != 0 ? 1 : 0);
}

static struct mp_shared *shared_new(int nranks)
{
    struct mp_shared *sh =
            mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED)
        return NULL;
    pthread_barrierattr_t ba;
    pthread_barrierattr_init(&ba);
    pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
    pthread_barrier_init(&sh->barrier, &ba, (unsigned)nranks);
    pthread_barrierattr_destroy(&ba);
    sh->nranks = nranks;
    return sh;
}

/* One line per rank that did not end well; returns 1 if this rank failed. */
static int judge(int rank, int status, int hung)
{
    if (hung) {
        mp_note("rank %d hung: killed by the parent", rank);
        return 1;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (WIFSIGNALED(status) && mp_sh->expect_kill[rank])
        return 0;
    if (WIFEXITED(status))
        mp_note("rank %d exited with %d%s", rank, WEXITSTATUS(status),
                WEXITSTATUS(status) == 124 ? " (timed out)" : "");
    else if (WIFSIGNALED(status))
        mp_note("rank %d killed by signal %d (%s)", rank, WTERMSIG(status),
                strsignal(WTERMSIG(status)));
    return 1;
}

/* Reaps every rank; past the deadline the rest are killed and count as hung. Once a rank has
 * failed, its peers are most likely waiting for it, so they get a few seconds to report
 * their side and are then stopped rather than left to their alarm. */
static int wait_ranks(const pid_t *pids, int nranks, double deadline)
{
    int left = nranks, failed = 0, hung[MP_MAX_RANKS] = {0};
    while (left > 0) {
        int st;
        pid_t p = waitpid(-1, &st, WNOHANG);
        if (p < 0 && errno != EINTR)
            break;
        for (int r = 0; p > 0 && r < nranks; r++) {
            if (pids[r] == p) {
                failed |= judge(r, st, hung[r]);
                left--;
            }
        }
        if (failed && deadline > mp_now() + FAIL_GRACE_S)
            deadline = mp_now() + FAIL_GRACE_S;
        if (p > 0)
            continue;
        if (mp_now() > deadline) {
            for (int r = 0; r < nranks; r++)
                if (!hung[r] && kill(pids[r], SIGKILL) == 0)
                    hung[r] = 1;
            deadline = mp_now() + 3600;
        }
        mp_sleep_ms(5);
    }
    return failed;
}

/* Multi-host: this process is one rank; its region is private and kept in step by the
 * rendezvous at each barrier. */
static int run_hosted(const char *what, int nranks, int timeout_s, mp_rank_fn fn, void *arg)
{
    double t0 = mp_now();
    int rank = mp_host_get()->rank;
    if (!(mp_sh = calloc(1, sizeof(*mp_sh)))) {
        mp_note("FAIL %s: out of memory", what);
        return 1;
    }
    mp_sh->nranks = nranks;
    mp_rank = rank;
    apply_rank_env(rank);
    mp_sh->pid[rank] = getpid();
    signal(SIGALRM, on_alarm);
    alarm((unsigned)timeout_s);
    int failed = mp_host_run(nranks, timeout_s, fn, arg);
    alarm(0);
    fflush(NULL);
    /* This rank's verdict, besides the scenario's result line (tests/net/netns.sh reads it). */
    mp_note("%s %s (%.1f s, rank %d of %d)", failed ? "FAIL" : "PASS", what, mp_now() - t0, rank,
            nranks);
    free(mp_sh);
    mp_sh = NULL;
    return failed;
}

static int run_forked(const char *what, int nranks, int timeout_s, mp_rank_fn fn, void *arg)
{
    pid_t pids[MP_MAX_RANKS];
    double t0 = mp_now();
    if (nranks < 1 || nranks > MP_MAX_RANKS || !(mp_sh = shared_new(nranks))) {
        mp_note("FAIL %s: cannot set up %d ranks", what, nranks);
        return 1;
    }
    fflush(NULL); /* or the children inherit and repeat our buffered output */
    int started = 0;
    for (; started < nranks; started++) {
        pids[started] = fork();
        if (pids[started] == 0)
            rank_main(started, nranks, timeout_s, fn, arg);
        if (pids[started] < 0)
            break;
        mp_sh->pid[started] = pids[started];
    }
    int failed = started < nranks;
    if (failed)
        mp_note("fork failed: %s", strerror(errno));
    failed |= wait_ranks(pids, started, t0 + timeout_s + 5);
    pthread_barrier_destroy(&mp_sh->barrier);
    munmap(mp_sh, sizeof(*mp_sh));
    mp_sh = NULL;
    return failed;
}

int mp_run(const char *name, const char *what, int nranks, int timeout_s, mp_rank_fn fn, void *arg)
{
    int sel = mp_scenario_begin(name, what, nranks);
    if (sel <= 0)
        return sel < 0;
    double t0 = mp_now();
    int failed = mp_hosted() ? run_hosted(what, nranks, timeout_s, fn, arg)
                             : run_forked(what, nranks, timeout_s, fn, arg);
    mp_scenario_end(name, failed, mp_now() - t0);
    return failed;
}

void mp_barrier(void)
{
    if (mp_hosted()) {
        mp_host_barrier();
        return;
    }
    pthread_barrier_wait(&mp_sh->barrier);
}

void mp_publish_handle(int slot, const void *handle)
{
    memcpy(mp_sh->handle[mp_rank][slot], handle, NCCL_NET_HANDLE_MAXSIZE);
}

const void *mp_peer_handle(int rank, int slot)
{
    return mp_sh->handle[rank][slot];
}

void mp_flag_set(int rank, int idx, long value)
{
    __atomic_store_n(&mp_sh->flag[rank][idx], value, __ATOMIC_SEQ_CST);
}

long mp_flag_get(int rank, int idx)
{
    return __atomic_load_n(&mp_sh->flag[rank][idx], __ATOMIC_SEQ_CST);
}

int mp_flag_wait(int rank, int idx, long value, int timeout_ms)
{
    double deadline = mp_now() + timeout_ms / 1000.0;
    while (mp_flag_get(rank, idx) < value) {
        if (mp_now() > deadline)
            return -1;
        mp_sleep_ms(1);
    }
    return 0;
}

void mp_value_set(int idx, double v)
{
    mp_sh->value[mp_rank][idx] = v;
}

double mp_value_get(int rank, int idx)
{
    return mp_sh->value[rank][idx];
}

int mp_kill_rank(int rank, int sig)
{
    mp_sh->expect_kill[rank] = 1;
    return kill(mp_sh->pid[rank], sig);
}
