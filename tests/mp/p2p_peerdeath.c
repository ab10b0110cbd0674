/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p_peerdeath: the peer goes away in the middle of a large transfer; rank 0 survives.
 *   - SIGKILL: the sockets close, so the survivor's test (or isend/irecv) must fail quickly,
 *     well inside NCCL_JACCL_TIMEOUT;
 *   - SIGSTOP: the sockets stay open but the peer falls silent, so the failure must come from
 *     the liveness deadline, about NCCL_JACCL_TIMEOUT after the stop (then SIGCONT + SIGKILL);
 *   - both with the survivor receiving and with the survivor sending;
 *   - the error is ncclRemoteError or ncclSystemError, a WARN names the peer, later calls keep
 *     failing instead of hanging, and closing the broken comm is clean. */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp.h"

#define MSG     (64u << 20)
#define WINDOW  2
#define FOREVER 1000000

struct death {
    const char *name, *what;
    int survivor_sends;
    int sig;
};

static const struct death cases[] = {
        {"kill-sender", "SIGKILL the sender mid-transfer", 0, SIGKILL},
        {"kill-receiver", "SIGKILL the receiver mid-transfer", 1, SIGKILL},
        {"stop-sender", "SIGSTOP the sender mid-transfer", 0, SIGSTOP},
        {"stop-receiver", "SIGSTOP the receiver mid-transfer", 1, SIGSTOP},
};

/* The receiver listens, the sender connects. */
static void *link_up(const struct mp_net *n, int i_send)
{
    void *l = NULL, *c = NULL;
    char h[NCCL_NET_HANDLE_MAXSIZE];
    if (!i_send && mp_listen_publish(n, 0, &l) != 0)
        return NULL;
    mp_barrier();
    memcpy(h, mp_peer_handle(i_send ? 1 - mp_rank : mp_rank, 0), sizeof(h));
    mp_connect_accept(n, h, i_send ? &c : NULL, l, i_send ? NULL : &c, mp_scaled(20));
    if (l)
        MP_OK(mp_net_close_listen(n, l));
    return c;
}

/* Keeps the transfer going until the survivor stops or kills us. */
static int victim(const struct mp_net *n, const struct death *d, char *buf, void *mh, void *c)
{
    struct mp_flow f = {.net = n,
                        .comm = c,
                        .is_send = !d->survivor_sends,
                        .count = FOREVER,
                        .window = WINDOW,
                        .base = buf,
                        .stride = MSG,
                        .mh = mh,
                        .size = MSG};
    mp_flows_run(&f, 1, mp_scaled(120));
    return 0; /* only reached if the survivor went away first; it reports the failure */
}

static void check_failure(const struct death *d, ncclResult_t rc, double waited, unsigned mark)
{
    double t = (double)mp_env_long("NCCL_JACCL_TIMEOUT", 30);
    MP_CHECK(rc == ncclRemoteError || rc == ncclSystemError,
             "%s: survivor got %s after %.2f s, expected ncclRemoteError or ncclSystemError",
             d->what, mp_result_str(rc), waited);
    if (d->sig == SIGKILL)
        MP_CHECK(waited < t,
                 "%s: the error took %.2f s (NCCL_JACCL_TIMEOUT %g s); a closed "
                 "socket should be noticed at once",
                 d->what, waited, t);
    else
        MP_CHECK(waited > 0.5 * t && waited < 2 * t + 2,
                 "%s: the error came after %.2f s, expected about NCCL_JACCL_TIMEOUT (%g s)",
                 d->what, waited, t);
    /* The peer's address: loopback here, the rxe subnet in the verbs VM. */
    const char *peer = getenv("JACCL_TEST_PEER_MATCH");
    MP_CHECK(mp_warn_seen(mark, peer && *peer ? peer : "127.0.0.1"), "%s: no WARN names the peer",
             d->what);
}

/* Runs the transfer, strikes after the first message is through, times the failure. */
static int survivor(const struct mp_net *n, const struct death *d, char *buf, void *mh, void *c)
{
    struct mp_flow f = {.net = n,
                        .comm = c,
                        .is_send = d->survivor_sends,
                        .count = FOREVER,
                        .window = WINDOW,
                        .base = buf,
                        .stride = MSG,
                        .mh = mh,
                        .size = MSG};
    double t_kill = 0, limit = 2.0 * (double)mp_env_long("NCCL_JACCL_TIMEOUT", 30) + 10;
    unsigned mark = mp_log_mark();
    int r;
    while ((r = mp_flow_step(&f)) == 0) {
        if (!t_kill && f.done >= 1) {
            mp_sleep_ms(5); /* the next 64 MiB are on their way */
            mp_kill_rank(1, d->sig);
            t_kill = mp_now();
        }
        if (t_kill && mp_now() - t_kill > limit)
            break;
        sched_yield();
    }
    double waited = mp_now() - t_kill;
    MP_CHECK(r < 0, "%s: no error %.0f s after the signal (%d messages done)", d->what, waited,
             f.done);
    check_failure(d, f.err, waited, mark);
    mp_note("%s: survivor got %s after %.2f s (%d x 64 MiB done before)", d->what,
            mp_result_str(f.err), waited, f.done);
    /* Broken for good: later calls fail too, and promptly. */
    void *req = NULL;
    ncclResult_t again = d->survivor_sends ? mp_net_isend(n, c, buf, 1, 0, mh, &req)
                                           : mp_net_irecv(n, c, buf, 1, 0, mh, &req);
    MP_CHECK(again != ncclSuccess, "%s: a new %s on the broken comm succeeded", d->what,
             d->survivor_sends ? "isend" : "irecv");
    if (d->sig == SIGSTOP)
        kill(mp_sh->pid[1], SIGCONT);
    mp_kill_rank(1, SIGKILL);
    return 0;
}

static int death_rank(int rank, int nranks, void *arg)
{
    const struct death *d = arg;
    struct mp_net n;
    if (mp_net_open(&n, 11) != 0)
        return 1;
    int i_send = rank == 0 ? d->survivor_sends : !d->survivor_sends;
    void *c = link_up(&n, i_send), *mh = NULL;
    if (!c)
        return 1;
    char *buf = mp_alloc((size_t)WINDOW * MSG);
    MP_OK(mp_net_regmr(&n, c, buf, (size_t)WINDOW * MSG, NCCL_PTR_HOST, &mh));
    int rc = rank == 0 ? survivor(&n, d, buf, mh, c) : victim(&n, d, buf, mh, c);
    MP_OK(mp_net_deregmr(&n, c, mh));
    MP_OK(i_send ? mp_net_close_send(&n, c) : mp_net_close_recv(&n, c));
    MP_OK(mp_net_fini(&n));
    mp_free(buf, (size_t)WINDOW * MSG);
    return rc;
}

int main(int argc, char **argv)
{
    int failed = 0;
    mp_begin("p2p_peerdeath", "a peer killed or stopped mid-transfer: an error, not a hang", argc,
             argv);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        failed += mp_run(cases[i].name, cases[i].what, 2, mp_scaled(60), death_rank,
                         (void *)&cases[i]);
    return mp_end(failed);
}
