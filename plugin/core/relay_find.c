/* SPDX-License-Identifier: BSD-3-Clause */
/* Looking for relays (core/relay.h): a query broadcast on each of our IPv4 cables, resent
 * until an answer comes or the connection's deadline passes; the relays that answer within a
 * short gathering window after the first all carry the connection. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/relay.h"
#include "core/relay_wire.h"
#include "core/state.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/param.h"
#include "util/subnet.h"

#define RESEND_NS 200000000ull /* a lost datagram costs at most this */
#define GATHER_NS 30000000ull  /* after the first answer, how long others may still come */
#define LINKS_MAX 64

struct jaccl_relay_find {
    int fd;
    struct jaccl_handle h;
    int nmine;
    struct jaccl_link mine[LINKS_MAX]; /* IPv4 cables the query goes out on */
    int devs[LINKS_MAX];
    uint8_t query[RELAY_QUERY_MAX];
    size_t qlen;
    uint64_t id, next_send, gather_end, deadline;
    struct jaccl_route found;
};

/* Links a query can go out on: IPv4, not loopback, with a subnet that has other hosts. */
static int cable_like(const struct jaccl_link *l)
{
    return l->addr.sa.sa_family == AF_INET && !jaccl_is_loopback(&l->addr) && l->prefix >= 1 &&
           l->prefix <= 31;
}

static int gather_cables(struct jaccl_relay_find *f)
{
    struct jaccl_link all[LINKS_MAX];
    int devs[LINKS_MAX], n = jaccl_links(all, devs, LINKS_MAX);
    for (int i = 0; i < n; i++)
        if (cable_like(&all[i])) {
            f->mine[f->nmine] = all[i];
            f->devs[f->nmine++] = devs[i];
        }
    return f->nmine;
}

static void warn_cannot_ask(const struct jaccl_handle *h, const char *why)
{
    JWARN("connect: no link of this host shares a subnet with the listener's (%s), and %s",
          jaccl_link_str(&h->links[0], (char[64]){0}, 64), why);
}

static int open_socket(struct jaccl_relay_find *f)
{
    f->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (f->fd < 0 || setsockopt(f->fd, SOL_SOCKET, SO_BROADCAST, &one, sizeof(one)) != 0)
        return -errno;
    return 0;
}

int jaccl_relay_find_start(const struct jaccl_handle *h, struct jaccl_relay_find **out)
{
    if (!jaccl_param_int(JP_RELAY)) {
        warn_cannot_ask(h, "relaying is off (NCCL_JACCL_RELAY=0)");
        return -ENETUNREACH;
    }
    struct jaccl_relay_find *f = calloc(1, sizeof(*f));
    if (!f)
        return -ENOMEM;
    f->fd = -1;
    f->h = *h;
    if (gather_cables(f) == 0) {
        warn_cannot_ask(h, "it has no IPv4 cable to ask a neighbour for a relay on");
        jaccl_relay_find_free(f);
        return -ENETUNREACH;
    }
    int rc = open_socket(f);
    if (rc != 0) {
        jaccl_relay_find_free(f);
        return rc;
    }
    struct relay_query q = {.id = f->id = jaccl_random64(), .nlinks = h->nlinks};
    memcpy(q.links, h->links, sizeof(q.links));
    f->qlen = relay_query_encode(&q, f->query);
    f->deadline = jaccl_deadline_ns(jaccl_timeout_ns());
    *out = f;
    return 0;
}

void jaccl_relay_find_free(struct jaccl_relay_find *f)
{
    if (!f)
        return;
    if (f->fd >= 0)
        close(f->fd);
    free(f);
}

/* The subnet's broadcast address (a /31 has none: its other address). */
static struct sockaddr_in broadcast_of(const struct jaccl_link *l)
{
    uint32_t a = ntohl(l->addr.sin.sin_addr.s_addr);
    uint32_t host = l->prefix == 31 ? 1u : (uint32_t)((1ull << (32 - l->prefix)) - 1);
    uint32_t b = l->prefix == 31 ? a ^ 1u : a | host;
    return (struct sockaddr_in){.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)jaccl_param_int(JP_RELAY_PORT)),
                                .sin_addr.s_addr = htonl(b)};
}

static void send_queries(struct jaccl_relay_find *f)
{
    for (int i = 0; i < f->nmine; i++) {
        struct sockaddr_in to = broadcast_of(&f->mine[i]);
        (void)sendto(f->fd, f->query, f->qlen, MSG_DONTWAIT, (struct sockaddr *)&to, sizeof(to));
    }
    f->next_send = jaccl_deadline_ns(RESEND_NS);
}

/* An answer from a neighbour on one of our cables becomes a cable to its relay service. */
static void take_answer(struct jaccl_relay_find *f, const union jaccl_sockaddr *from,
                        const struct relay_answer *a)
{
    struct jaccl_route *r = &f->found;
    if (a->id != f->id || a->link >= f->h.nlinks || r->ncables == JACCL_CABLES_MAX)
        return;
    for (int i = 0; i < r->ncables; i++)
        if (jaccl_same_host(&r->cable[i].remote, from))
            return; /* another rank of the same relay node */
    for (int i = 0; i < f->nmine; i++) {
        if (!jaccl_same_subnet(&f->mine[i].addr, from, f->mine[i].prefix))
            continue;
        struct jaccl_cable *c = &r->cable[r->ncables++];
        *c = (struct jaccl_cable){.dev = f->devs[i],
                                  .local = f->mine[i],
                                  .remote = *from,
                                  .target = f->h.links[a->link].addr};
        c->remote.sin.sin_port = htons(a->port);
        if (r->ncables == 1)
            f->gather_end = jaccl_deadline_ns(GATHER_NS);
        return;
    }
}

static void read_answers(struct jaccl_relay_find *f)
{
    uint8_t buf[64];
    union jaccl_sockaddr from;
    socklen_t flen = sizeof(from);
    ssize_t n;
    while ((n = recvfrom(f->fd, buf, sizeof(buf), MSG_DONTWAIT, &from.sa, &flen)) >= 0) {
        struct relay_answer a;
        if (from.sa.sa_family == AF_INET && relay_answer_decode(buf, (size_t)n, &a) == 0)
            take_answer(f, &from, &a);
        flen = sizeof(from);
    }
}

int jaccl_relay_find_step(struct jaccl_relay_find *f, struct jaccl_route *r)
{
    if (jaccl_expired(f->next_send) && f->found.ncables == 0)
        send_queries(f);
    read_answers(f);
    if (f->found.ncables > 0 && jaccl_expired(f->gather_end)) {
        *r = f->found;
        r->relayed = 1;
        return 1;
    }
    if (!jaccl_expired(f->deadline))
        return 0;
    char list[160] = "";
    size_t off = 0;
    for (int i = 0; i < f->h.nlinks && off < sizeof(list); i++)
        off += (size_t)snprintf(list + off, sizeof(list) - off, " %s",
                                jaccl_link_net_str(&f->h.links[i], (char[64]){0}, 64));
    JWARN("connect: no cable reaches the listener's subnets (%s ) and no neighbour answered as "
          "a relay within %.0f s (UDP port %d on %d cable(s)): is jaccl running on a node "
          "cabled to both, with NCCL_JACCL_RELAY=1 and the same NCCL_JACCL_RELAY_PORT?",
          list, (double)jaccl_timeout_ns() / 1e9, (int)jaccl_param_int(JP_RELAY_PORT), f->nmine);
    return -EHOSTUNREACH;
}
