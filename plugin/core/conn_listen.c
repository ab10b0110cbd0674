/* SPDX-License-Identifier: BSD-3-Clause */
/* Listener side of the connection set-up: accepts sockets on every link, checks their hello,
 * groups them by connection id, and turns a complete group into a fabric endpoint. Never
 * blocks. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/conn.h"
#include "core/conn_wire.h"
#include "core/state.h"
#include "util/clock.h"
#include "util/hostid.h"
#include "util/log.h"

#define MAX_PENDING 64
#define PEER_MAX    112

struct pend_sock {
    int fd;
    int dev; /* the device whose link it arrived by */
    struct jaccl_hello hello;
    size_t got;
    uint64_t deadline;
    char peer[64];
};

struct pend_conn {
    int used;
    int dev; /* socket 0's arrival device */
    uint64_t conn_id;
    uint32_t tag;
    int count, have;
    int fds[FAB_MAX_LANES];
    uint32_t peer_blob_len;
    uint8_t blob[FAB_CONN_INFO_MAX]; /* the peer's blob */
    size_t blob_got;
    struct jaccl_conn_setup setup; /* the caller's, once it gave one (setup.ops non-NULL) */
    struct fab_ep *ep;
    struct jaccl_ack ack;
    uint8_t my_blob[FAB_CONN_INFO_MAX];
    size_t sent;
    uint64_t deadline;
    char peer[PEER_MAX];
};

struct jaccl_listener {
    const struct fab_ops *ops; /* the back end serving its device, taken once at open */
    int nfds;
    int fds[JACCL_HANDLE_LINKS_MAX]; /* one per advertised link */
    int devs[JACCL_HANDLE_LINKS_MAX];
    int want;   /* sockets per connection */
    int active; /* the group being turned into an endpoint, or -1 */
    struct jaccl_handle h;
    struct pend_sock socks[MAX_PENDING];
    struct pend_conn conns[MAX_PENDING];
};

/* Our links, device dev's first: what the listener binds and the handle advertises. */
static int links_for(int dev, struct jaccl_link *links, int *devs)
{
    struct jaccl_link all[JACCL_HANDLE_LINKS_MAX * 4];
    int adev[JACCL_HANDLE_LINKS_MAX * 4], n = jaccl_links(all, adev, JACCL_HANDLE_LINKS_MAX * 4);
    int k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n && k < JACCL_HANDLE_LINKS_MAX; i++)
            if ((adev[i] == dev) == (pass == 0)) {
                links[k] = all[i];
                devs[k++] = adev[i];
            }
    return k;
}

/* Warns once per process when a handle cannot hold every link. */
static void warn_unadvertised(int have, int fit)
{
    static int warned;
    if (fit < have && !__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
        JWARN("this host has %d links but a listen handle holds only %d of them (%d IPv4 or 3 "
              "IPv6 links fit in NCCL's 128 bytes): peers reach it only through the first %d; "
              "select fewer with NCCL_JACCL_SOCKET_IFNAME / NCCL_JACCL_HCA",
              have, fit, JACCL_HANDLE_LINKS_MAX, fit);
}

/* Binds a listen socket on each link; the handle gets those that bound. */
static int bind_links(struct jaccl_listener *l, int dev, struct jaccl_handle *h)
{
    struct jaccl_link links[JACCL_HANDLE_LINKS_MAX];
    int devs[JACCL_HANDLE_LINKS_MAX], n = links_for(dev, links, devs);
    h->nlinks = n;
    memcpy(h->links, links, sizeof(links[0]) * (size_t)n);
    int fit = jaccl_handle_links_fit(h);
    warn_unadvertised(n, fit);
    h->nlinks = 0;
    for (int i = 0; i < fit; i++) {
        int fd = jaccl_sock_listen(&links[i].addr);
        if (fd < 0) {
            JINFO(NCCL_NET, "listen: cannot bind %s (%s): peers will use the other links",
                  jaccl_sockaddr_str(&links[i].addr, (char[80]){0}, 80), strerror(-fd));
            continue;
        }
        l->fds[l->nfds] = fd;
        l->devs[l->nfds++] = devs[i];
        h->links[h->nlinks++] = links[i];
    }
    return l->nfds > 0 ? 0 : -EADDRNOTAVAIL;
}

int jaccl_listener_open(int dev, struct jaccl_handle *h, struct jaccl_listener **out)
{
    /* The registry's choice for this device, once: the handle and every hello name it. */
    const struct fab_ops *ops = jaccl_dev_ops(dev);
    if (!ops)
        return -EINVAL;
    struct jaccl_listener *l = calloc(1, sizeof(*l));
    if (!l)
        return -ENOMEM;
    l->ops = ops;
    l->active = -1;
    for (int i = 0; i < MAX_PENDING; i++)
        l->socks[i].fd = -1;
    int rc = bind_links(l, dev, h);
    if (rc != 0) {
        jaccl_listener_close(l);
        return rc;
    }
    h->secret = jaccl_random64();
    h->host = jaccl_host_id();
    h->fabric = ops->handle_id;
    h->dev = (uint16_t)dev;
    l->want = ops->side_socks(&(struct fab_ep_attr){.nlanes = h->nlanes});
    l->h = *h;
    *out = l;
    return 0;
}

void jaccl_listener_expect(struct jaccl_listener *l, int nsocks)
{
    l->want = nsocks;
}

static void conn_drop(struct pend_conn *pc)
{
    for (int i = 0; i < FAB_MAX_LANES; i++)
        if (pc->fds[i] >= 0 && i < pc->count)
            close(pc->fds[i]);
    pc->used = 0;
}

void jaccl_listener_close(struct jaccl_listener *l)
{
    if (!l)
        return;
    for (int i = 0; i < MAX_PENDING; i++) {
        if (l->socks[i].fd >= 0)
            close(l->socks[i].fd);
        if (l->conns[i].used) {
            if (l->conns[i].ep)
                l->conns[i].ep->ops->ep_close(l->conns[i].ep);
            conn_drop(&l->conns[i]);
        }
    }
    for (int i = 0; i < l->nfds; i++)
        close(l->fds[i]);
    free(l);
}

static int free_sock_slot(const struct jaccl_listener *l)
{
    for (int i = 0; i < MAX_PENDING; i++)
        if (l->socks[i].fd < 0)
            return i;
    return -1;
}

/* Take every pending connection off the listen queues. */
static int accept_new(struct jaccl_listener *l)
{
    for (int k = 0; k < l->nfds; k++) {
        for (;;) {
            int slot = free_sock_slot(l);
            if (slot < 0)
                return 0; /* full: leave the rest in the kernel's backlog */
            int fd = jaccl_sock_accept_nb(l->fds[k]);
            if (fd == -EAGAIN || fd == -ECONNABORTED || fd == -EINTR)
                break;
            if (fd < 0)
                return fd;
            struct pend_sock *ps = &l->socks[slot];
            memset(ps, 0, sizeof(*ps));
            ps->fd = fd;
            ps->dev = l->devs[k];
            ps->deadline = jaccl_deadline_ns(jaccl_timeout_ns());
            union jaccl_sockaddr pa;
            socklen_t len = sizeof(pa);
            if (getpeername(fd, &pa.sa, &len) == 0)
                jaccl_sockaddr_str(&pa, ps->peer, sizeof(ps->peer));
            else
                strcpy(ps->peer, "unknown peer");
        }
    }
    return 0;
}

static struct pend_conn *conn_find(struct jaccl_listener *l, const struct jaccl_hello *hl)
{
    struct pend_conn *fresh = NULL;
    for (int i = 0; i < MAX_PENDING; i++) {
        struct pend_conn *pc = &l->conns[i];
        if (pc->used && pc->conn_id == hl->conn_id)
            return pc->count == hl->count ? pc : NULL;
        if (!pc->used && !fresh)
            fresh = pc;
    }
    if (!fresh)
        return NULL;
    memset(fresh, 0, sizeof(*fresh));
    fresh->used = 1;
    fresh->conn_id = hl->conn_id;
    fresh->count = hl->count;
    fresh->tag = hl->tag;
    fresh->deadline = jaccl_deadline_ns(jaccl_timeout_ns());
    for (int i = 0; i < FAB_MAX_LANES; i++)
        fresh->fds[i] = -1;
    return fresh;
}

static const char *hello_problem(const struct jaccl_listener *l, const struct jaccl_hello *hl)
{
    if (hl->magic != JACCL_HELLO_MAGIC)
        return "not a jaccl connection";
    if (hl->secret != l->h.secret || hl->kind != l->h.kind)
        return "wrong secret (not the handle of this listen)";
    if (hl->fabric != l->ops->handle_id)
        return "peer runs another fabric (NCCL_JACCL_FABRIC differs between ranks)";
    if (hl->count != l->want || hl->idx >= hl->count)
        return "inconsistent socket count";
    if (hl->idx == 0 && hl->blob_len > FAB_CONN_INFO_MAX)
        return "oversized connection blob";
    return NULL;
}

/* Socket 0's peer for log lines: its address, or the connector's own through its relay. */
static void peer_of(const struct pend_sock *ps, char *out, size_t len)
{
    char origin[sizeof(ps->hello.origin)];
    size_t n = 0;
    for (; n + 1 < sizeof(origin) && ps->hello.origin[n]; n++)
        origin[n] = isprint((unsigned char)ps->hello.origin[n]) ? ps->hello.origin[n] : '?';
    origin[n] = '\0';
    if (n)
        snprintf(out, len, "%s (relayed via %s)", origin, ps->peer);
    else
        snprintf(out, len, "%s", ps->peer);
}

/* A socket with a good hello joins its connection. */
static void file_sock(struct pend_conn *pc, struct pend_sock *ps)
{
    pc->fds[ps->hello.idx] = ps->fd;
    pc->have++;
    if (ps->hello.idx == 0 || !pc->peer[0]) /* socket 0's, once it is in */
        peer_of(ps, pc->peer, sizeof(pc->peer));
    if (ps->hello.idx == 0) {
        pc->peer_blob_len = ps->hello.blob_len;
        pc->dev = ps->dev;
    }
    ps->fd = -1;
}

/* Read hellos; file each good socket under its connection, drop strangers. */
static void read_hellos(struct jaccl_listener *l)
{
    for (int i = 0; i < MAX_PENDING; i++) {
        struct pend_sock *ps = &l->socks[i];
        if (ps->fd < 0)
            continue;
        int r = jaccl_sock_recv_nb(ps->fd, &ps->hello, sizeof(ps->hello), &ps->got);
        const char *why = NULL;
        if (r < 0)
            why = "closed before saying hello";
        else if (r == 0 && jaccl_expired(ps->deadline))
            why = "said nothing before the deadline";
        else if (r == 1)
            why = hello_problem(l, &ps->hello);
        struct pend_conn *pc = NULL;
        if (r == 1 && !why) {
            pc = conn_find(l, &ps->hello);
            if (!pc || pc->fds[ps->hello.idx] >= 0)
                why = "too many or duplicate connection attempts";
        }
        if (why) {
            JWARN("listen %s: dropped connection from %s: %s",
                  jaccl_sockaddr_str(&l->h.links[0].addr, (char[64]){0}, 64), ps->peer, why);
            close(ps->fd);
            ps->fd = -1;
            continue;
        }
        if (r == 1)
            file_sock(pc, ps);
    }
}

/* A complete group: read the peer's blob, build the endpoint, send the ack with our blob. */
static int conn_progress(struct pend_conn *pc, jaccl_setup_fn get_setup, void *arg)
{
    int r = jaccl_sock_recv_nb(pc->fds[0], pc->blob, pc->peer_blob_len, &pc->blob_got);
    if (r <= 0)
        return r;
    if (!pc->ep) {
        r = get_setup(arg, pc->dev, &pc->setup);
        if (r != 0)
            return r;
        const struct fab_ops *ops = pc->setup.ops;
        struct fab_ep_attr attr = pc->setup.attr;
        attr.peer_desc = pc->peer;
        r = ops->ep_create(pc->setup.dom, pc->setup.cq, &attr, &pc->ep);
        if (r == 0 && pc->setup.post_initial)
            r = pc->setup.post_initial(pc->ep, pc->setup.arg);
        int n = r == 0 ? ops->ep_local_info(pc->ep, pc->my_blob, sizeof(pc->my_blob)) : r;
        if (n < 0)
            return n;
        pc->ack = (struct jaccl_ack){.magic = JACCL_ACK_MAGIC, .blob_len = (uint32_t)n};
    }
    while (pc->sent < sizeof(pc->ack) + pc->ack.blob_len) {
        size_t d = pc->sent;
        if (d < sizeof(pc->ack)) {
            r = jaccl_sock_send_nb(pc->fds[0], &pc->ack, sizeof(pc->ack), &d);
        } else {
            size_t bd = d - sizeof(pc->ack);
            r = jaccl_sock_send_nb(pc->fds[0], pc->my_blob, pc->ack.blob_len, &bd);
            d = sizeof(pc->ack) + bd;
        }
        pc->sent = d;
        if (r <= 0)
            return r;
    }
    return 1;
}

/* Drops groups that stayed incomplete past their deadline; returns the group to work on (the
 * one started, else the first complete one), or -1. */
static int pick_group(struct jaccl_listener *l)
{
    for (int i = 0; i < MAX_PENDING; i++) {
        struct pend_conn *pc = &l->conns[i];
        if (!pc->used || pc->have == pc->count || !jaccl_expired(pc->deadline))
            continue;
        JWARN("connection from %s: only %d of %d sockets arrived before the deadline", pc->peer,
              pc->have, pc->count);
        conn_drop(pc);
    }
    if (l->active >= 0 && l->conns[l->active].used)
        return l->active;
    for (int i = 0; i < MAX_PENDING; i++)
        if (l->conns[i].used && l->conns[i].have == l->conns[i].count)
            return i;
    return -1;
}

static void group_fail(struct pend_conn *pc, int r, const char *what)
{
    JWARN("connection from %s: %s: %s", pc->peer, what, strerror(-r));
    if (pc->ep)
        pc->setup.ops->ep_close(pc->ep);
    pc->ep = NULL;
    conn_drop(pc);
}

int jaccl_listener_accept(struct jaccl_listener *l, jaccl_setup_fn get_setup, void *arg,
                          struct fab_ep **ep, uint32_t *tag, char *peer, size_t peerlen)
{
    int rc = accept_new(l);
    if (rc < 0)
        return rc;
    read_hellos(l);
    int g = l->active = pick_group(l);
    if (g < 0)
        return 0;
    struct pend_conn *pc = &l->conns[g];
    int r = conn_progress(pc, get_setup, arg);
    if (r == 0 && jaccl_expired(pc->deadline))
        r = -ETIMEDOUT;
    if (r < 0) {
        group_fail(pc, r, "accepting it failed");
        l->active = -1;
        return 0;
    }
    if (r == 0)
        return 0;
    l->active = -1;
    r = pc->setup.ops->ep_connect(pc->ep, pc->blob, pc->peer_blob_len, pc->fds, pc->count);
    struct fab_ep *got = pc->ep;
    pc->used = 0; /* the fabric owns the sockets now, even on failure */
    pc->ep = NULL;
    if (r != 0) {
        JWARN("connection from %s: fabric set-up failed: %s", pc->peer, strerror(-r));
        pc->setup.ops->ep_close(got);
        return 0;
    }
    *ep = got;
    *tag = pc->tag;
    if (peer)
        snprintf(peer, peerlen, "%s", pc->peer);
    return 1;
}
