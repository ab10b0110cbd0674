/* SPDX-License-Identifier: BSD-3-Clause */
/* The endpoint's I/O thread: sleeps in epoll_wait on the lane sockets (edge-triggered, so
 * EPOLLOUT needs no re-arming) and an eventfd, reads every lane, finishes sends the posters left
 * behind, sends heartbeats and watches the liveness deadline. Once the endpoint is in error it
 * flushes the queues, shuts the sockets down (so the peer hears at once) and leaves. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fabric/tcp/tcp_int.h"
#include "util/clock.h"

#define TCP_WAKE_TAG UINT32_MAX /* epoll tag of the eventfd; lanes are tagged by index */

void fab_tcp_io_wake(struct fab_ep *ep)
{
    uint64_t one = 1;

    if (ep->wakefd >= 0 && write(ep->wakefd, &one, sizeof(one)) < 0) {
        /* EAGAIN: the counter is already non-zero, the thread will wake anyway. */
    }
}

static void tcp_io_send(struct fab_ep *ep, struct tcp_lane *l)
{
    pthread_mutex_lock(&l->send_mu);
    if (l->sq_n)
        fab_tcp_tx_progress(ep, l); /* an error fails the endpoint */
    pthread_mutex_unlock(&l->send_mu);
}

static void tcp_io_dispatch(struct fab_ep *ep, const struct epoll_event *ev, int n)
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
            l->rx.ready = 1;
            l->rx.drained = 0;
            /* The close already happened: no later edge will announce it, so reads must go
             * on until recv() itself reports the end. */
            if (ev[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
                l->rx.hup = 1;
        }
        if (ev[i].events & EPOLLOUT)
            tcp_io_send(ep, l);
    }
}

/* Heartbeats and the silence check; returns when the next one is due (UINT64_MAX: never). */
static uint64_t tcp_io_liveness(struct fab_ep *ep)
{
    uint64_t now = jaccl_now_ns(), next;

    if (ep->liveness_ns == 0)
        return UINT64_MAX;
    if (now - ep->last_rx_ns >= ep->liveness_ns) {
        fab_tcp_ep_fail(ep, FAB_WC_PEER_LOST, -1,
                        "sent nothing for %llu ms on any lane (liveness timeout)",
                        (unsigned long long)((now - ep->last_rx_ns) / 1000000));
        return UINT64_MAX;
    }
    next = ep->last_rx_ns + ep->liveness_ns;
    for (int i = 0; i < ep->nlanes; i++) {
        uint64_t due = fab_tcp_tx_heartbeat(ep, &ep->lane[i], now);

        if (due < next)
            next = due;
    }
    return next;
}

/* epoll_wait timeout in ms: 0 while a lane still has unread data, else until the next timer,
 * rounded up so a timer never makes the thread spin. */
static int tcp_io_timeout(struct fab_ep *ep)
{
    uint64_t next = tcp_io_liveness(ep);
    int ms;

    for (int i = 0; i < ep->nlanes; i++)
        if (ep->lane[i].rx.ready)
            return 0;
    ms = jaccl_poll_ms(next, jaccl_now_ns(), INT32_MAX);
    return ms == 0 ? 1 : ms; /* already due: 1, not 0, so a timer cannot make it spin */
}

static int tcp_io_healthy(struct fab_ep *ep)
{
    return !atomic_load(&ep->stop) && fab_ep_base_status(&ep->base) == FAB_WC_OK;
}

static void *tcp_io_main(void *arg)
{
    struct fab_ep *ep = arg;
    struct epoll_event ev[FAB_MAX_LANES + 1];
    int timeout = 0, n;

    while (tcp_io_healthy(ep)) {
        n = epoll_wait(ep->epfd, ev, ep->nlanes + 1, timeout);
        if (n < 0 && errno != EINTR) {
            fab_tcp_ep_fail(ep, FAB_WC_LOCAL_ERR, -1, "left behind: local epoll_wait failed: %s",
                            strerror(errno));
            break;
        }
        tcp_io_dispatch(ep, ev, n > 0 ? n : 0);
        for (int i = 0; i < ep->nlanes && tcp_io_healthy(ep); i++)
            if (ep->lane[i].rx.ready)
                fab_tcp_rx_service(ep, &ep->lane[i]);
        if (tcp_io_healthy(ep))
            timeout = tcp_io_timeout(ep);
    }
    if (!atomic_load(&ep->stop)) {
        fab_tcp_ep_flush(ep);
        for (int i = 0; i < ep->nlanes; i++)
            shutdown(ep->lane[i].fd, SHUT_RDWR);
    }
    return NULL;
}

static int tcp_io_watch(struct fab_ep *ep, int fd, uint32_t tag, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.u32 = tag};

    return epoll_ctl(ep->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/* The lanes' fds are set; creates the epoll set and the thread (with every signal blocked, so
 * the application's handlers keep running on its own threads). */
int fab_tcp_io_start(struct fab_ep *ep)
{
    sigset_t all, old;
    int rc;

    ep->epfd = epoll_create1(EPOLL_CLOEXEC);
    ep->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (ep->epfd < 0 || ep->wakefd < 0)
        return -errno;
    rc = tcp_io_watch(ep, ep->wakefd, TCP_WAKE_TAG, EPOLLIN);
    for (int i = 0; i < ep->nlanes && rc == 0; i++)
        rc = tcp_io_watch(ep, ep->lane[i].fd, (uint32_t)i,
                          EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET);
    if (rc)
        return rc;
    ep->last_rx_ns = jaccl_now_ns();
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
