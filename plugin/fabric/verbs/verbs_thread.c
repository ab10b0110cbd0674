/* SPDX-License-Identifier: BSD-3-Clause */
/* One progress thread per domain. It sleeps in epoll on the domain's completion channel, the
 * side-channel sockets of its endpoints and an eventfd, and wakes for completions, control
 * frames and timers (retransmission, heartbeat, liveness). It never spins: the hardware CQs are
 * re-armed before they are drained, so a completion that races the drain raises a new event.
 *
 * Hand-off: while a caller polls an endpoint (its cq_poll drives it, as NCCL's proxy does with
 * test()), the caller drains the hardware CQ itself, and the thread steps back: it leaves the CQ
 * unarmed, so completions wake nobody, and only ticks every VB_HANDOFF_NS for the timers. A
 * completion event and the thread's wake-up per message cost more than the message itself on a
 * small machine (docs/performance.md). When the drives stop (or cq_wait says the caller sleeps,
 * quiet()), the thread re-arms the CQ and drains what came meanwhile. */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fabric/verbs/verbs_int.h"
#include "util/clock.h"
#include "util/counters.h"
#include "util/log.h"

#define VB_EV_WAKE  0
#define VB_EV_CHAN  1
#define VB_EV_MAX   64
#define VB_TICK_MAX 1000 /* ms: look at the timers at least this often */
/* A caller that drove the endpoint this recently still polls it (the thread's tick meanwhile) */
#define VB_HANDOFF_NS 1000000ull

void vb_thread_wake(struct vb_domain *dom)
{
    uint64_t one = 1;

    if (dom->wakefd >= 0 && write(dom->wakefd, &one, sizeof(one)) < 0 && errno != EAGAIN)
        JWARN("verbs fabric: waking the progress thread failed: %s", strerror(errno));
}

void vb_thread_watch(struct vb_domain *dom, struct vb_ep *ep)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = ep->id};

    if (ep->side.out_n)
        ev.events |= EPOLLOUT;
    if (epoll_ctl(dom->epfd, ep->side.want_out >= 0 ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, ep->side.fd,
                  &ev) == 0)
        ep->side.want_out = ep->side.out_n ? 1 : 0;
}

/* The fab_cq_src drive() of an endpoint: the polling thread drains the hardware CQ itself, so
 * a completion reaches the caller without a completion event or a thread's wake-up. What the
 * drain left for the side channel goes out here too; only a full socket needs the thread. */
int vb_ep_drive(struct fab_cq_src *src)
{
    struct vb_ep *ep = jaccl_container_of(src, struct vb_ep, src);
    uint64_t before, now = src->now ? src->now : jaccl_now_ns();
    int found = 0, stuck = 0;

    atomic_store(&ep->last_drive_ns, now); /* seq_cst: pairs with vb_ep_quiet */
    if (pthread_mutex_trylock(&ep->mu) != 0)
        return 0; /* the progress thread (or another poller) is at it */
    if (ep->connected && fab_ep_base_err(&ep->base) == 0) {
        for (int i = 0; i < ep->nlanes; i++)
            vb_rx_ack(ep, &ep->lane[i], now); /* those the last drive left */
        before = ep->stats.cqes;
        ep->in_drive = 1;
        vb_ep_drain(ep, now);
        ep->in_drive = 0;
        found = ep->stats.cqes != before;
        vb_side_flush(ep);
        stuck = ep->side.out_n != 0;
    }
    pthread_mutex_unlock(&ep->mu);
    if (stuck)
        vb_thread_wake(ep->dom);
    return found;
}

void vb_ep_quiet(struct fab_cq_src *src)
{
    struct vb_ep *ep = jaccl_container_of(src, struct vb_ep, src);

    atomic_store(&ep->last_drive_ns, 0);
    if (atomic_load(&ep->polled))
        vb_thread_wake(ep->dom); /* to arm the CQ again, now */
}

static int ep_drives_recent(struct vb_ep *ep, uint64_t now)
{
    uint64_t last = atomic_load(&ep->last_drive_ns);

    return last != 0 && (now < last || now - last < VB_HANDOFF_NS);
}

/* Whether a caller polls the endpoint now; the thread steps back or forward accordingly. */
static int ep_follow_pollers(struct vb_ep *ep, uint64_t now)
{
    int polled = ep_drives_recent(ep, now);

    if (polled != atomic_load(&ep->polled)) {
        atomic_store(&ep->polled, polled);
        jaccl_count(JACCL_CNT_HANDOFF, 1);
        /* A quiet() that ran meanwhile saw `polled` still 0 and sent no wake: look again (both
         * sides store, then load, sequentially consistent, so one of them sees the other). */
        if (polled && !ep_drives_recent(ep, now))
            atomic_store(&ep->polled, polled = 0);
    }
    return polled;
}

static int has_id(const uint64_t *ids, int n, uint64_t id)
{
    for (int i = 0; i < n; i++)
        if (ids[i] == id)
            return 1;
    return 0;
}

static uint64_t ep_service(struct vb_domain *dom, struct vb_ep *ep, int cq_ev, int sock_ev,
                           uint64_t now)
{
    uint64_t next = UINT64_MAX, t;

    pthread_mutex_lock(&ep->mu);
    /* A poller's drain (vb_ep_drive) stamps the endpoint's clocks under ep->mu with its own,
     * later reading of the clock: time read before the lock may be behind those stamps. */
    t = jaccl_now_ns();
    if (t > now)
        now = t;
    if (cq_ev)
        ep->armed = 0; /* an event disarms the CQ */
    if (ep_follow_pollers(ep, now)) {
        next = now + VB_HANDOFF_NS; /* the caller drains; the thread ticks for the timers */
        for (int i = 0; i < ep->nlanes && ep->connected; i++)
            vb_tx_pump(ep, &ep->lane[i], now); /* what a post left to the next drive */
    } else if ((cq_ev || !ep->armed || ep->drain_more) && fab_ep_base_err(&ep->base) == 0) {
        if (!ep->armed)
            dom->ibv->req_notify_cq(ep->hcq, 0);
        ep->armed = 1;
        vb_ep_drain(ep, now); /* after arming: what came while it was not armed, too */
        if (ep->drain_more)
            next = now; /* come back at once */
    }
    if (ep->connected && fab_ep_base_err(&ep->base) == 0) {
        if (sock_ev)
            vb_side_read(ep, now);
        t = vb_side_timer(ep, now);
        next = t < next ? t : next;
        for (int i = 0; i < ep->nlanes; i++) {
            t = vb_tx_timer(ep, &ep->lane[i], now);
            next = t < next ? t : next;
            t = vb_rx_ack(ep, &ep->lane[i], now);
            next = t < next ? t : next;
            t = vb_adv_timer(ep, &ep->lane[i], now);
            next = t < next ? t : next;
        }
        vb_side_flush(ep);
        if (fab_ep_base_err(&ep->base) == 0 && (ep->side.out_n != 0) != ep->side.want_out)
            vb_thread_watch(dom, ep);
    }
    pthread_mutex_unlock(&ep->mu);
    return next;
}

/* Every pending completion event, acknowledged at once (ibv_destroy_cq waits for that, and it
 * may be waiting in ep_close right now); returns the endpoint ids they name. */
static int collect_cq_events(struct vb_domain *dom, uint64_t *ids, int max, int *overflow)
{
    struct ibv_cq *cq;
    void *ctx;
    int n = 0;

    while (dom->ibv->get_cq_event(dom->chan, &cq, &ctx) == 0) {
        dom->ibv->ack_cq_events(cq, 1);
        if (has_id(ids, n, (uint64_t)(uintptr_t)ctx))
            continue;
        if (n < max)
            ids[n++] = (uint64_t)(uintptr_t)ctx;
        else
            *overflow = 1;
    }
    return n;
}

static int timeout_ms(uint64_t next)
{
    return jaccl_poll_ms(next, jaccl_now_ns(), VB_TICK_MAX);
}

static void *thread_main(void *arg)
{
    struct vb_domain *dom = arg;
    uint64_t next = UINT64_MAX, sock[VB_EV_MAX], cqs[VB_EV_MAX], junk;
    struct epoll_event ev[VB_EV_MAX];

    while (!atomic_load(&dom->stop)) {
        int n = epoll_wait(dom->epfd, ev, VB_EV_MAX, timeout_ms(next));
        int ns = 0, nc = 0, all_cq = 0;

        for (int i = 0; i < n; i++) {
            if (ev[i].data.u64 == VB_EV_WAKE)
                (void)!read(dom->wakefd, &junk, sizeof(junk));
            else if (ev[i].data.u64 == VB_EV_CHAN)
                nc = collect_cq_events(dom, cqs, VB_EV_MAX, &all_cq);
            else
                sock[ns++] = ev[i].data.u64;
        }
        pthread_mutex_lock(&dom->mu);
        uint64_t now = jaccl_now_ns();

        next = UINT64_MAX;
        for (struct vb_ep *ep = dom->eps; ep; ep = ep->next) {
            uint64_t t = ep_service(dom, ep, all_cq || has_id(cqs, nc, ep->id),
                                    has_id(sock, ns, ep->id), now);

            next = t < next ? t : next;
        }
        pthread_mutex_unlock(&dom->mu);
    }
    return NULL;
}

static int epoll_add(int epfd, int fd, uint64_t tag)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag};

    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) == 0 ? 0 : -errno;
}

int vb_thread_start(struct vb_domain *dom)
{
    int rc;

    dom->next_id = 16; /* below: VB_EV_* tags */
    dom->epfd = epoll_create1(EPOLL_CLOEXEC);
    dom->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (dom->epfd < 0 || dom->wakefd < 0)
        return -errno;
    rc = epoll_add(dom->epfd, dom->wakefd, VB_EV_WAKE);
    if (rc == 0)
        rc = epoll_add(dom->epfd, dom->chan->fd, VB_EV_CHAN);
    if (rc == 0)
        rc = -pthread_create(&dom->thread, NULL, thread_main, dom);
    dom->thread_started = rc == 0;
    return rc;
}

void vb_thread_stop(struct vb_domain *dom)
{
    if (dom->thread_started) {
        atomic_store(&dom->stop, 1);
        vb_thread_wake(dom);
        pthread_join(dom->thread, NULL);
        dom->thread_started = 0;
    }
    if (dom->epfd >= 0)
        close(dom->epfd);
    if (dom->wakefd >= 0)
        close(dom->wakefd);
    dom->epfd = dom->wakefd = -1;
}
