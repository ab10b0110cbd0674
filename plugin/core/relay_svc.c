/* SPDX-License-Identifier: BSD-3-Clause */
/* The relay service (core/relay.h): one thread per process while the fabric is open, answering
 * relay queries on the UDP port and forwarding relayed connections (core/relay_pump.c). It
 * never blocks anyone: start and stop only set it going or tell it to wind down, and the thread
 * frees itself once it has stopped and relays nothing more. */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core/relay.h"
#include "core/relay_int.h"
#include "core/relay_wire.h"
#include "util/log.h"
#include "util/param.h"
#include "util/subnet.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct relay_svc *g_svc; /* the running service, NULL while stopped */
static atomic_ulong g_total, g_live;

void jaccl_relay_stats(unsigned long *total, unsigned long *live)
{
    *total = atomic_load(&g_total);
    *live = atomic_load(&g_live);
}

void relay_count(int delta)
{
    if (delta > 0)
        atomic_fetch_add(&g_total, 1);
    if (delta > 0)
        atomic_fetch_add(&g_live, 1);
    else
        atomic_fetch_sub(&g_live, 1);
}

/* Which of our links reaches `a` (its subnet holds it): the index, or -1. Loopback never. */
int relay_link_to(const struct relay_svc *s, const union jaccl_sockaddr *a)
{
    for (int i = 0; i < s->nlinks; i++)
        if (!jaccl_is_loopback(&s->links[i].addr) &&
            jaccl_same_subnet(&s->links[i].addr, a, s->links[i].prefix))
            return i;
    return -1;
}

static int is_mine(const struct relay_svc *s, const union jaccl_sockaddr *a)
{
    for (int i = 0; i < s->nlinks; i++)
        if (jaccl_same_host(&s->links[i].addr, a))
            return 1;
    return 0;
}

/* A query from a neighbour: answered if one of our links meets one of the listener's. */
static void answer(struct relay_svc *s, const uint8_t *buf, size_t n,
                   const union jaccl_sockaddr *from, socklen_t flen)
{
    struct relay_query q;
    if (relay_query_decode(buf, n, &q) != 0 || is_mine(s, from) || relay_link_to(s, from) < 0)
        return;
    for (int k = 0; k < q.nlinks; k++)
        for (int i = 0; i < s->nlinks; i++) {
            if (jaccl_is_loopback(&s->links[i].addr) ||
                !jaccl_links_meet(&s->links[i], &q.links[k]))
                continue;
            uint8_t out[RELAY_ANSWER_LEN];
            relay_answer_encode(&(struct relay_answer){.id = q.id, .link = k, .port = s->port},
                                out);
            (void)sendto(s->ufd, out, sizeof(out), MSG_DONTWAIT, &from->sa, flen);
            return;
        }
}

static void read_queries(struct relay_svc *s)
{
    uint8_t buf[RELAY_QUERY_MAX + 1];
    union jaccl_sockaddr from;
    socklen_t flen = sizeof(from);
    ssize_t n;
    while ((n = recvfrom(s->ufd, buf, sizeof(buf), MSG_DONTWAIT, &from.sa, &flen)) >= 0) {
        answer(s, buf, (size_t)n, &from, flen);
        flen = sizeof(from);
    }
}

/* The listening sockets go when the fabric does; relayed connections are seen to their end. */
static void wind_down(struct relay_svc *s)
{
    uint64_t v;
    (void)!read(s->efd, &v, sizeof(v));
    s->stopping = 1;
    close(s->ufd);
    close(s->lfd);
    s->ufd = s->lfd = -1;
}

static void on_event(struct relay_svc *s, struct epoll_event *ev)
{
    void *p = ev->data.ptr;
    if (p == &s->efd)
        wind_down(s);
    else if (p == &s->ufd)
        read_queries(s);
    else if (p == &s->lfd)
        relay_accept(s);
    else
        relay_sess_event(s, p, ev->events);
}

static void svc_free(struct relay_svc *s)
{
    if (s->ufd >= 0)
        close(s->ufd);
    if (s->lfd >= 0)
        close(s->lfd);
    if (s->efd >= 0)
        close(s->efd);
    if (s->epfd >= 0)
        close(s->epfd);
    free(s);
}

static void *svc_main(void *arg)
{
    struct relay_svc *s = arg;
    while (!s->stopping || s->sessions) {
        struct epoll_event ev[32];
        int n = epoll_wait(s->epfd, ev, 32, RELAY_TICK_MS);
        for (int i = 0; i < n; i++)
            on_event(s, &ev[i]);
        relay_sess_expire(s);
        relay_sess_reap(s);
    }
    svc_free(s);
    return NULL;
}

static int watch(struct relay_svc *s, int *fd)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = fd};
    return epoll_ctl(s->epfd, EPOLL_CTL_ADD, *fd, &ev) == 0 ? 0 : -errno;
}

/* The UDP socket answering queries: several ranks of one node share the port (SO_REUSEADDR
 * lets each receive the broadcasts). */
static int open_udp(struct relay_svc *s, int port)
{
    s->ufd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (s->ufd < 0 || setsockopt(s->ufd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(s->ufd, (struct sockaddr *)&a, sizeof(a)) != 0)
        return -errno;
    return 0;
}

static int open_tcp(struct relay_svc *s)
{
    union jaccl_sockaddr any = {.sin = {.sin_family = AF_INET}};
    s->lfd = jaccl_sock_listen(&any);
    if (s->lfd < 0)
        return s->lfd;
    s->port = ntohs(any.sin.sin_port);
    return 0;
}

static int svc_open(struct relay_svc *s, int port)
{
    int rc = open_udp(s, port);
    if (rc == 0)
        rc = open_tcp(s);
    s->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    s->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (rc == 0 && (s->efd < 0 || s->epfd < 0))
        rc = -errno;
    if (rc == 0)
        rc = watch(s, &s->efd);
    if (rc == 0)
        rc = watch(s, &s->ufd);
    if (rc == 0)
        rc = watch(s, &s->lfd);
    return rc;
}

static int has_cable(const struct jaccl_link *links, int n)
{
    for (int i = 0; i < n; i++)
        if (links[i].addr.sa.sa_family == AF_INET && !jaccl_is_loopback(&links[i].addr))
            return 1;
    return 0;
}

static struct relay_svc *svc_new(const struct jaccl_link *links, int n)
{
    struct relay_svc *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->ufd = s->lfd = s->efd = s->epfd = -1;
    s->nlinks = n < RELAY_LINKS_MAX ? n : RELAY_LINKS_MAX;
    memcpy(s->links, links, sizeof(*links) * (size_t)s->nlinks);
    s->timeout_ns = (uint64_t)jaccl_param_int(JP_TIMEOUT) * 1000000000ull;
    return s;
}

static int svc_spawn(struct relay_svc *s)
{
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_t th;
    int rc = pthread_create(&th, &at, svc_main, s);
    pthread_attr_destroy(&at);
    return -rc;
}

void jaccl_relay_start(const struct jaccl_link *links, int n)
{
    int port = (int)jaccl_param_int(JP_RELAY_PORT);
    if (!jaccl_param_int(JP_RELAY) || !has_cable(links, n))
        return;
    pthread_mutex_lock(&g_lock);
    struct relay_svc *s = g_svc ? NULL : svc_new(links, n);
    int rc = s ? svc_open(s, port) : 0;
    if (s && rc == 0)
        rc = svc_spawn(s);
    if (s && rc == 0)
        g_svc = s;
    pthread_mutex_unlock(&g_lock);
    if (s && rc != 0) {
        JWARN("relay service: cannot listen on UDP port %d (%s): this rank relays no connection "
              "between nodes that share no cable (NCCL_JACCL_RELAY_PORT)",
              port, strerror(-rc));
        svc_free(s);
    } else if (s) {
        JINFO(NCCL_INIT | NCCL_NET,
              "relay service: answering on UDP port %d, relaying on TCP "
              "port %d",
              port, s->port);
    }
}

void jaccl_relay_stop(void)
{
    pthread_mutex_lock(&g_lock);
    struct relay_svc *s = g_svc;
    g_svc = NULL;
    if (s)
        (void)!write(s->efd, &(uint64_t){1}, sizeof(uint64_t));
    pthread_mutex_unlock(&g_lock);
}
