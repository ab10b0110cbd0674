/* SPDX-License-Identifier: BSD-3-Clause */
/* Orderly close of a connected socket, without waiting in the caller (fabric.h,
 * fab_sock_retire). The hazard it removes: a socket closed with bytes the peer sent still
 * unread, or one that is shut for reading when the peer's next byte arrives, answers with a
 * reset, and the reset throws away what our kernel still holds for the peer: the tail of a
 * message whose send already completed here, or our last acknowledgements (verbs). So a retired
 * socket only shuts its sending side (the FIN goes out behind our bytes), keeps reading and
 * discarding what the peer sends, and is closed once the peer's kernel has acknowledged
 * everything (SIOCOUTQ 0: after that a reset can only discard the peer's bytes, which nobody
 * wants any more), once the connection is gone, or once the peer stopped taking our bytes for
 * the stall bound. Sockets that are not settled at once wait on one reaper thread, which runs
 * only while it holds some; fab_sock_retire_fini gives them at most FAB_LINGER_STALL_NS and joins
 * it, so nothing of ours runs after the fabric shut down. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/sockios.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fabric/fabric.h"
#include "util/clock.h"
#include "util/log.h"

#define SETTLE_READS  64      /* reads of 16 KiB one sweep takes from a socket */
#define REAP_NAP_MIN  1000000 /* ns: first sleep between sweeps; doubles up to the max */
#define REAP_NAP_MAX  8000000
#define REAP_QUIET_NS 5000000000ull /* a stall bound of 0 (no liveness timeout) means this */

struct retired {
    int fd;
    long left;         /* unacknowledged bytes at the last sweep */
    uint64_t moved_ns; /* when `left` last changed */
    uint64_t stall_ns; /* give up when nothing moved this long */
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static struct retired *g_list;
static int g_n, g_cap;
static int g_running;            /* the reaper thread is in its loop */
static int g_joinable;           /* a reaper thread exists that nobody joined yet */
static uint64_t g_fini_deadline; /* 0, or the time fini gave the remaining sockets */
static pthread_t g_thread;
static _Atomic uint64_t g_pending, g_forced; /* for fab_sock_retire_stats */

/* A forked child has no reaper thread and must not close the parent's sockets on its behalf
 * (they are shared): it forgets them. */
static void retire_atfork_prepare(void)
{
    pthread_mutex_lock(&g_mu);
}

static void retire_atfork_parent(void)
{
    pthread_mutex_unlock(&g_mu);
}

static void retire_atfork_child(void)
{
    g_n = 0;
    g_running = g_joinable = 0;
    g_fini_deadline = 0;
    pthread_mutex_init(&g_mu, NULL);
    pthread_cond_init(&g_cv, NULL);
}

/* A process may exit without the fabric's shutdown (tables before v11 have no finalize): the
 * exit does what the shutdown would (the sockets still held get their bounded linger, the
 * reaper is joined), so the last bytes still go out and no thread is left unjoined. */
static void retire_atexit(void)
{
    fab_sock_retire_fini();
}

static void retire_init_once(void)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&g_cv, &a);
    pthread_condattr_destroy(&a);
    pthread_atfork(retire_atfork_prepare, retire_atfork_parent, retire_atfork_child);
    atexit(retire_atexit);
}

/* Bytes the peer has not acknowledged (our FIN counts one); 0 where that cannot be known or
 * does not matter: a UNIX socket's bytes are in the peer's queue the moment they are sent. */
static long sock_unacked(int fd)
{
    int dom = 0, out = 0;
    socklen_t len = sizeof(dom);

    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) != 0 || dom == AF_UNIX)
        return 0;
    return ioctl(fd, SIOCOUTQ, &out) == 0 ? out : 0;
}

/* Reads and drops what the peer sent. 1 once the connection is gone (an error: nothing we hold
 * for the peer can reach it any more), else 0. An end of stream is not gone: the peer may only
 * have shut its own sending side and still be reading ours. */
static int sock_discard(int fd)
{
    char sink[16384];
    ssize_t n = 0;

    for (int i = 0; i < SETTLE_READS; i++) {
        n = recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
        if (n <= 0 && !(n < 0 && errno == EINTR))
            break;
    }
    return n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
}

/* 1 when r can be closed now. */
static int retired_settled(struct retired *r, uint64_t now)
{
    if (sock_discard(r->fd))
        return 1;
    long left = sock_unacked(r->fd);
    if (left == 0)
        return 1;
    if (left != r->left) {
        r->left = left;
        r->moved_ns = now;
    }
    if (now - r->moved_ns < r->stall_ns && !(g_fini_deadline && now >= g_fini_deadline))
        return 0;
    atomic_fetch_add(&g_forced, 1);
    JINFO(NCCL_NET, "closing a connection with %ld byte(s) the peer did not take within %.1f s",
          left, (double)(now - r->moved_ns) / 1e9);
    return 1;
}

/* One pass over the list under g_mu; returns how many remain. */
static int reap_sweep(void)
{
    uint64_t now = jaccl_mono_ns();
    int kept = 0;

    for (int i = 0; i < g_n; i++) {
        if (retired_settled(&g_list[i], now)) {
            close(g_list[i].fd);
            atomic_fetch_sub(&g_pending, 1);
        } else {
            g_list[kept++] = g_list[i];
        }
    }
    g_n = kept;
    return kept;
}

static void reap_nap(long ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += ns;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&g_cv, &g_mu, &ts);
}

/* Acknowledgements raise no event to wait for, so the reaper sweeps on a timer, more slowly
 * while nothing changes; it leaves once it holds nothing. */
static void *reap_main(void *arg)
{
    long nap = REAP_NAP_MIN;

    (void)arg;
    pthread_mutex_lock(&g_mu);
    while (reap_sweep() > 0) {
        reap_nap(nap);
        nap = nap < REAP_NAP_MAX ? nap * 2 : nap;
    }
    g_running = 0;
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_mu);
    return NULL;
}

/* Caller holds g_mu. A finished thread is joined before the next one starts. */
static int reaper_start(void)
{
    sigset_t all, old;
    int rc;

    if (g_running)
        return 0;
    if (g_joinable)
        pthread_join(g_thread, NULL); /* it has left its loop (g_running 0): no wait */
    g_joinable = 0;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&g_thread, NULL, reap_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        return -rc;
    pthread_setname_np(g_thread, "jaccl-reaper");
    g_running = g_joinable = 1;
    return 0;
}

static int reaper_add(const struct retired *r)
{
    if (g_n == g_cap) {
        int cap = g_cap ? 2 * g_cap : 16;
        struct retired *l = realloc(g_list, (size_t)cap * sizeof(*l));
        if (!l)
            return -ENOMEM;
        g_list = l;
        g_cap = cap;
    }
    if (reaper_start() != 0)
        return -EAGAIN;
    g_list[g_n++] = *r;
    atomic_fetch_add(&g_pending, 1);
    pthread_cond_broadcast(&g_cv);
    return 0;
}

void fab_sock_retire(int fd, uint64_t stall_ns)
{
    struct retired r = {fd, -1, 0, stall_ns ? stall_ns : REAP_QUIET_NS};

    if (fd < 0)
        return;
    shutdown(fd, SHUT_WR); /* never SHUT_RD: the peer's next byte would be answered by a reset */
    if (sock_discard(fd) || sock_unacked(fd) == 0) {
        close(fd);
        return;
    }
    pthread_once(&g_once, retire_init_once);
    pthread_mutex_lock(&g_mu);
    r.moved_ns = jaccl_mono_ns();
    int rc = reaper_add(&r);
    pthread_mutex_unlock(&g_mu);
    if (rc != 0) { /* no thread to wait on: the old behaviour, a close that may reset */
        JWARN("cannot keep a closing connection open for its last bytes (%d): closing it now", rc);
        close(fd);
    }
}

void fab_sock_retire_fini(void)
{
    pthread_once(&g_once, retire_init_once);
    pthread_mutex_lock(&g_mu);
    if (g_running) {
        g_fini_deadline = jaccl_mono_ns() + FAB_LINGER_STALL_NS;
        pthread_cond_broadcast(&g_cv);
        while (g_running)
            pthread_cond_wait(&g_cv, &g_mu);
    }
    if (g_joinable)
        pthread_join(g_thread, NULL);
    g_joinable = 0;
    g_fini_deadline = 0;
    free(g_list);
    g_list = NULL;
    g_cap = 0;
    pthread_mutex_unlock(&g_mu);
}

void fab_sock_retire_stats(uint64_t *pending, uint64_t *forced)
{
    if (pending)
        *pending = atomic_load(&g_pending);
    if (forced)
        *forced = atomic_load(&g_forced);
}
