/* SPDX-License-Identifier: BSD-3-Clause */
/* The endpoint's I/O thread: sleeps in epoll_wait on the lane sockets (edge-triggered, so
 * EPOLLOUT needs no re-arming) and an eventfd, reads every lane, finishes sends the posters left
 * behind, sends heartbeats and watches the liveness deadline. Once the endpoint is in error it
 * flushes the queues, shuts the sockets down (so the peer hears at once) and leaves.
 * Threads polling the endpoint's CQ read the lanes and finish queued sends too
 * (fab_tcp_ep_drive); while they do, the thread leaves EPOLLIN and EPOLLOUT off and only ticks
 * (see TCP_HANDOFF_NS). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fabric/tcp/tcp_int.h"
#include "util/clock.h"
#include "util/counters.h"
#include "util/crowd.h"

#define TCP_WAKE_TAG UINT32_MAX /* epoll tag of the eventfd; lanes are tagged by index */
/* A poller drove the endpoint this recently: it does the reading and the writing, and the I/O
 * thread stops listening for EPOLLIN and EPOLLOUT (each edge would wake it, one context switch
 * per message or per socket buffer of a large one, only to find the work done) and reads and
 * writes every lane once per TCP_HANDOFF_NS instead, for what nobody polls for (heartbeats,
 * lanes without a RECV, a peer's close). */
#define TCP_HANDOFF_NS 1000000ull
#define TCP_EV_EDGE    (EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET)
#define TCP_EV_POLLED  EPOLLET /* errors and hang-ups are reported anyway */

void fab_tcp_io_wake(struct tcp_ep *ep)
{
    uint64_t one = 1;

    jaccl_count(JACCL_CNT_EVENTFD_WAKE, 1);
    if (ep->wakefd >= 0 && write(ep->wakefd, &one, sizeof(one)) < 0) {
        /* EAGAIN: the counter is already non-zero, the thread will wake anyway. */
    }
}

/* Takes one of a lane's locks for the I/O thread. While pollers are active it only tries: the
 * lock is then held by a poller reading or writing that very lane, and waiting for it would
 * turn the poller's unlock into a futex wake-up on its data path (measured: the most frequent
 * futex calls of a 2-rank all-reduce). 0 = not taken: the lane is its holder's this time. */
static int tcp_io_lock(struct tcp_ep *ep, pthread_mutex_t *mu)
{
    if (atomic_load(&ep->io_polled))
        return pthread_mutex_trylock(mu) == 0;
    pthread_mutex_lock(mu);
    return 1;
}

static void tcp_io_send(struct tcp_ep *ep, struct tcp_lane *l)
{
    if (!tcp_io_lock(ep, &l->send_mu))
        return;
    if (l->sq_n)
        fab_tcp_tx_progress(ep, l); /* an error fails the endpoint */
    pthread_mutex_unlock(&l->send_mu);
}

static void tcp_io_dispatch(struct tcp_ep *ep, const struct epoll_event *ev, int n)
{
    uint64_t cnt;

    for (int i = 0; i < n; i++) {
        struct tcp_lane *l;

        if (ev[i].data.u32 == TCP_WAKE_TAG) {
            if (read(ep->wakefd, &cnt, sizeof(cnt)) < 0) {
                /* EAGAIN: someone else's wake already drained it */
            }
            continue;
        }
        l = &ep->lane[ev[i].data.u32];
        if (ev[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
            pthread_mutex_lock(&l->rx_mu);
            l->rx.ready = 1;
            l->rx.drained = 0;
            /* The close already happened: no later edge will announce it, so reads must go
             * on until recv() itself reports the end. */
            if (ev[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
                l->rx.hup = 1;
            pthread_mutex_unlock(&l->rx_mu);
        }
        if (ev[i].events & EPOLLOUT)
            tcp_io_send(ep, l);
    }
}

/* The lane heard from longest ago, and when. */
static int tcp_io_quietest(struct tcp_ep *ep, uint64_t *last)
{
    int q = 0;
    *last = UINT64_MAX;
    for (int i = 0; i < ep->nlanes; i++) {
        uint64_t t = atomic_load_explicit(&ep->lane[i].last_rx_ns, memory_order_relaxed);
        if (t < *last) {
            *last = t;
            q = i;
        }
    }
    return q;
}

/* Heartbeats and the silence check; returns when the next one is due (UINT64_MAX: never). */
static uint64_t tcp_io_liveness(struct tcp_ep *ep)
{
    uint64_t now = jaccl_now_ns(), next, last;

    if (ep->liveness_ns == 0)
        return UINT64_MAX;
    int q = tcp_io_quietest(ep, &last);
    /* A poller may have stamped it after `now` was read. */
    if (now > last && now - last >= ep->liveness_ns) {
        fab_tcp_ep_fail(ep, -ETIMEDOUT, q, "sent nothing for %llu ms (liveness timeout)",
                        (unsigned long long)((now - last) / 1000000));
        return UINT64_MAX;
    }
    next = last + ep->liveness_ns;
    for (int i = 0; i < ep->nlanes; i++) {
        uint64_t due = fab_tcp_tx_heartbeat(ep, &ep->lane[i], now);

        if (due < next)
            next = due;
    }
    return next;
}

/* epoll_wait timeout in ms: 0 while a lane still has unread data (`busy`), else until the next
 * timer (the hand-off tick included), rounded up so a timer never makes the thread spin. */
static int tcp_io_timeout(struct tcp_ep *ep, int busy)
{
    uint64_t next = tcp_io_liveness(ep);
    int ms;

    if (busy)
        return 0;
    ms = jaccl_poll_ms(next, jaccl_now_ns(), ep->io_polled ? 1 : INT32_MAX);
    return ms == 0 ? 1 : ms; /* already due: 1, not 0, so a timer cannot make it spin */
}

static int tcp_io_healthy(struct tcp_ep *ep)
{
    return !atomic_load(&ep->stop) && fab_ep_base_err(&ep->base) == 0;
}

static int tcp_io_polled(struct tcp_ep *ep)
{
    uint64_t last = atomic_load(&ep->last_drive_ns); /* seq_cst: pairs with fab_tcp_ep_quiet */
    uint64_t now = jaccl_now_ns();

    return last != 0 && (now < last || now - last < TCP_HANDOFF_NS);
}

/* Every lane is read on this pass whether an edge came or not, and what it has queued is
 * written (while pollers are active, unless one holds the lane: see tcp_io_lock). */
static void tcp_io_mark_all(struct tcp_ep *ep)
{
    for (int i = 0; i < ep->nlanes; i++) {
        struct tcp_lane *l = &ep->lane[i];

        if (tcp_io_lock(ep, &l->rx_mu)) {
            l->rx.ready = 1;
            l->rx.drained = 0;
            pthread_mutex_unlock(&l->rx_mu);
        }
        tcp_io_send(ep, l);
    }
}

/* Follows the pollers: EPOLLIN off while one is active, back on once they stopped. Either way
 * every lane is read right after, so bytes that came while nobody listened are not stranded
 * (EPOLL_CTL_MOD also re-reports a socket that is already readable). */
static void tcp_io_follow_pollers(struct tcp_ep *ep)
{
    int polled = tcp_io_polled(ep);

    if (polled != ep->io_polled) {
        for (int i = 0; i < ep->nlanes; i++) {
            struct epoll_event e = {.events = polled ? TCP_EV_POLLED : TCP_EV_EDGE,
                                    .data.u32 = (uint32_t)i};

            if (epoll_ctl(ep->epfd, EPOLL_CTL_MOD, ep->lane[i].fd, &e) != 0) {
                int err = errno;
                fab_tcp_ep_fail(ep, -err, i, "left behind: local epoll_ctl failed: %s",
                                strerror(err));
                return;
            }
        }
        atomic_store(&ep->io_polled, polled);
        jaccl_count(JACCL_CNT_HANDOFF, 1);
        tcp_io_mark_all(ep);
        /* A quiet() that ran meanwhile saw io_polled still 0 and sent no wake: look again (both
         * sides store, then load, sequentially consistent, so one of them sees the other). */
        if (polled && !tcp_io_polled(ep))
            tcp_io_follow_pollers(ep);
    } else if (polled) {
        tcp_io_mark_all(ep);
    }
}

/* Reads every lane an edge was seen on; 1 if one still has data left (budget used up). While
 * pollers are active a lane a poller is reading is left to it (see tcp_io_lock). */
static int tcp_io_read_lanes(struct tcp_ep *ep)
{
    int busy = 0;

    for (int i = 0; i < ep->nlanes && tcp_io_healthy(ep); i++) {
        struct tcp_lane *l = &ep->lane[i];

        if (!tcp_io_lock(ep, &l->rx_mu))
            continue;
        if (l->rx.ready)
            fab_tcp_rx_service(ep, l);
        busy |= l->rx.ready;
        pthread_mutex_unlock(&l->rx_mu);
    }
    return busy;
}

/* Only lanes with a RECV waiting or a message half in are read inline: bytes on any other lane
 * (heartbeats, a message with no RECV posted) are the I/O thread's, which the edge woke anyway. */
static int tcp_lane_expects(struct tcp_lane *l)
{
    int n;

    if (l->rx.in_msg || l->rx.off < l->rx.end)
        return 1;
    pthread_mutex_lock(&l->recv_mu);
    n = (int)l->rq_n;
    pthread_mutex_unlock(&l->recv_mu);
    return n > 0;
}

/* Writes what the lane's socket did not take when it was posted (the poster wrote inline). */
static int tcp_drive_send(struct tcp_ep *ep, struct tcp_lane *l)
{
    int moved = 0;

    if (pthread_mutex_trylock(&l->send_mu) != 0)
        return 0; /* a poster or the I/O thread is writing it right now */
    if (l->sq_n) {
        uint32_t before = l->sq_n;

        fab_tcp_tx_progress(ep, l); /* an error fails the endpoint */
        moved = before != l->sq_n;
    }
    pthread_mutex_unlock(&l->send_mu);
    return moved;
}

/* Lanes whose socket has bytes (or an error or EOF) right now, one bit each, as the CQ's
 * readiness check just found them (swcq.c): one epoll_wait for all the CQ's endpoints. */
static uint32_t tcp_drive_ready(struct tcp_ep *ep)
{
    uint32_t all = ep->nlanes >= 32 ? UINT32_MAX : (1u << ep->nlanes) - 1;

    return ep->src.ready & all; /* FAB_CQ_READY_ALL: it could not tell, read them all */
}

/* Work on the lane that needs no byte from the socket (under rx_mu): bytes already staged in
 * user space, or a message whose payload landed in full when the read budget ran out (it
 * completes on the next service; skipping it would leave it to the I/O thread's tick). */
static int tcp_lane_pending(const struct tcp_lane *l)
{
    return l->rx.off < l->rx.end || (l->rx.in_msg && l->rx.got == l->rx.msg.len);
}

/* Whether this poll takes the reads over from the I/O thread. On crowded CPUs mostly not: a
 * poller may be preempted for a whole time slice, so the I/O thread keeps listening
 * (jaccl_cpu_poller_owns says when it may still); the poller reads whatever it finds first. */
static int tcp_drive_owns(struct tcp_ep *ep, uint64_t now)
{
    uint64_t big = atomic_load_explicit(&ep->big_rx_ns, memory_order_relaxed);

    /* now < big: stamped by another thread after `now` was read, so just now. */
    return jaccl_cpu_poller_owns_at(ep->host_ranks,
                                    big != 0 && (now < big || now - big < TCP_HANDOFF_NS), now);
}

int fab_tcp_ep_drive(struct fab_cq_src *src)
{
    struct tcp_ep *ep = jaccl_container_of(src, struct tcp_ep, src);
    uint64_t now = src->now;
    uint32_t ready;
    int moved = 0;

    atomic_store_explicit(&ep->last_drive_ns, tcp_drive_owns(ep, now) ? now : 0,
                          memory_order_relaxed);
    ready = tcp_drive_ready(ep);
    for (int i = 0; i < ep->nlanes && tcp_io_healthy(ep); i++) {
        struct tcp_lane *l = &ep->lane[i];

        if (atomic_load_explicit(&l->tx_left, memory_order_relaxed))
            moved += tcp_drive_send(ep, l);
        if (!(ready & (1u << i)) && !atomic_load_explicit(&l->rx_left, memory_order_relaxed))
            continue; /* nothing in its socket, nothing staged: idle */
        if (pthread_mutex_trylock(&l->rx_mu) != 0)
            continue; /* the I/O thread (or another poller) is reading it right now */
        /* A lane with nothing in its socket and nothing staged is skipped: no empty recvmsg. */
        if (!l->rx.eof && ((ready & (1u << i)) || tcp_lane_pending(l)) && tcp_lane_expects(l)) {
            /* The readiness check said bytes are there (edges go to the I/O thread). */
            l->rx.drained = 0;
            l->rx.polling = 1;
            int r = fab_tcp_rx_service(ep, l);
            l->rx.polling = 0;
            moved += r > 0 ? r : 0;
        }
        pthread_mutex_unlock(&l->rx_mu);
    }
    return moved;
}

/* The fab_cq_src quiet(): no poller reads any more, so the I/O thread listens for EPOLLIN
 * again now rather than on its next tick. */
void fab_tcp_ep_quiet(struct fab_cq_src *src)
{
    struct tcp_ep *ep = jaccl_container_of(src, struct tcp_ep, src);

    atomic_store(&ep->last_drive_ns, 0);
    if (atomic_load(&ep->io_polled))
        fab_tcp_io_wake(ep);
}

static void *tcp_io_main(void *arg)
{
    struct tcp_ep *ep = arg;
    struct epoll_event ev[FAB_MAX_LANES + 1];
    int timeout = 0, n, busy;

    while (tcp_io_healthy(ep)) {
        n = epoll_wait(ep->epfd, ev, ep->nlanes + 1, timeout);
        jaccl_count(JACCL_CNT_EPOLL_WAKE, 1);
        if (n < 0 && errno != EINTR) {
            int err = errno;
            fab_tcp_ep_fail(ep, -err, -1, "left behind: local epoll_wait failed: %s",
                            strerror(err));
            break;
        }
        tcp_io_dispatch(ep, ev, n > 0 ? n : 0);
        tcp_io_follow_pollers(ep);
        busy = tcp_io_read_lanes(ep);
        if (tcp_io_healthy(ep))
            timeout = tcp_io_timeout(ep, busy);
    }
    /* The peer learns at once (a FIN behind the bytes already sent). Only our side: a lane
     * shut for reading would answer the peer's next byte with a reset, and the reset would
     * discard what our kernel still holds for the peer (ep_close ends the rest in order). */
    if (!atomic_load(&ep->stop)) {
        fab_tcp_ep_flush(ep);
        for (int i = 0; i < ep->nlanes; i++)
            shutdown(ep->lane[i].fd, SHUT_WR);
    }
    return NULL;
}

static int tcp_io_watch(struct tcp_ep *ep, int fd, uint32_t tag, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.u32 = tag};

    return epoll_ctl(ep->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/* The lanes' fds are set; creates the epoll set and the thread (with every signal blocked, so
 * the application's handlers keep running on its own threads). */
int fab_tcp_io_start(struct tcp_ep *ep)
{
    sigset_t all, old;
    int rc;

    ep->epfd = epoll_create1(EPOLL_CLOEXEC);
    ep->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (ep->epfd < 0 || ep->wakefd < 0)
        return -errno;
    rc = tcp_io_watch(ep, ep->wakefd, TCP_WAKE_TAG, EPOLLIN);
    for (int i = 0; i < ep->nlanes && rc == 0; i++)
        rc = tcp_io_watch(ep, ep->lane[i].fd, (uint32_t)i, TCP_EV_EDGE);
    if (rc)
        return rc;
    for (int i = 0; i < ep->nlanes; i++)
        atomic_store(&ep->lane[i].last_rx_ns, jaccl_now_ns());
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = -pthread_create(&ep->thread, NULL, tcp_io_main, ep);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0) {
        ep->thread_started = 1;
        pthread_setname_np(ep->thread, "jaccl-tcp-io");
    }
    return rc;
}
