/* SPDX-License-Identifier: BSD-3-Clause */
/* Listener side of the connection set-up: accepts sockets, checks their hello, groups them by
 * connection id, and turns a complete group into a fabric endpoint. Never blocks. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/conn.h"
#include "core/conn_wire.h"
#include "core/state.h"
#include "util/clock.h"
#include "util/log.h"

#define MAX_PENDING 64

struct pend_sock {
    int fd;
    struct jaccl_hello hello;
    size_t got;
    uint64_t deadline;
    char peer[64];
};

struct pend_conn {
    int used;
    uint64_t conn_id;
    uint32_t tag;
    int count, have;
    int fds[FAB_MAX_LANES];
    uint32_t peer_blob_len;
    uint8_t blob[FAB_CONN_INFO_MAX]; /* the peer's blob */
    size_t blob_got;
    struct fab_ep *ep;
    struct jaccl_ack ack;
    uint8_t my_blob[FAB_CONN_INFO_MAX];
    size_t sent;
    uint64_t deadline;
    char peer[64];
};

struct jaccl_listener {
    const struct fab_ops *ops; /* the back end serving its device, taken once at open */
    int fd;
    struct jaccl_handle h;
    struct pend_sock socks[MAX_PENDING];
    struct pend_conn conns[MAX_PENDING];
};

int jaccl_listener_open(int dev, const union jaccl_sockaddr *bind_addr, struct jaccl_handle *h,
                        struct jaccl_listener **out)
{
    /* The registry's choice for this device, once: the handle and every hello name it. */
    const struct fab_ops *ops = jaccl_dev_ops(dev);
    if (!ops)
        return -EINVAL;
    struct jaccl_listener *l = calloc(1, sizeof(*l));
    if (!l)
        return -ENOMEM;
    l->ops = ops;
    union jaccl_sockaddr a = *bind_addr;
    l->fd = jaccl_sock_listen(&a);
    if (l->fd < 0) {
        int rc = l->fd;
        free(l);
        return rc;
    }
    for (int i = 0; i < MAX_PENDING; i++)
        l->socks[i].fd = -1;
    h->secret = jaccl_random64();
    h->addr = a;
    h->fabric = ops->handle_id;
    h->dev = (uint16_t)dev;
    l->h = *h;
    *out = l;
    return 0;
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
    close(l->fd);
    free(l);
}

/* Take every pending connection off the listen queue. */
static int accept_new(struct jaccl_listener *l)
{
    for (;;) {
        int slot = -1;
        for (int i = 0; i < MAX_PENDING && slot < 0; i++)
            if (l->socks[i].fd < 0)
                slot = i;
        if (slot < 0)
            return 0; /* full: leave the rest in the kernel's backlog */
        int fd = jaccl_sock_accept_nb(l->fd);
        if (fd == -EAGAIN)
            return 0;
        if (fd < 0)
            return fd == -ECONNABORTED || fd == -EINTR ? 0 : fd;
        struct pend_sock *ps = &l->socks[slot];
        memset(ps, 0, sizeof(*ps));
        ps->fd = fd;
        ps->deadline = jaccl_deadline_ns(jaccl_timeout_ns());
        union jaccl_sockaddr pa;
        socklen_t len = sizeof(pa);
        if (getpeername(fd, &pa.sa, &len) == 0)
            jaccl_sockaddr_str(&pa, ps->peer, sizeof(ps->peer));
        else
            strcpy(ps->peer, "unknown peer");
    }
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

static const char *hello_problem(const struct jaccl_listener *l, const struct jaccl_hello *hl,
                                 int want_socks)
{
    if (hl->magic != JACCL_HELLO_MAGIC)
        return "not a jaccl connection";
    if (hl->secret != l->h.secret || hl->kind != l->h.kind)
        return "wrong secret (not the handle of this listen)";
    if (hl->fabric != l->ops->handle_id)
        return "peer runs another fabric (NCCL_JACCL_FABRIC differs between ranks)";
    if (hl->count != want_socks || hl->idx >= hl->count)
        return "inconsistent socket count";
    if (hl->idx == 0 && hl->blob_len > FAB_CONN_INFO_MAX)
        return "oversized connection blob";
    return NULL;
}

/* Read hellos; file each good socket under its connection, drop strangers. */
static void read_hellos(struct jaccl_listener *l, int want_socks)
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
            why = hello_problem(l, &ps->hello, want_socks);
        struct pend_conn *pc = NULL;
        if (r == 1 && !why) {
            pc = conn_find(l, &ps->hello);
            if (!pc || pc->fds[ps->hello.idx] >= 0)
                why = "too many or duplicate connection attempts";
        }
        if (why) {
            JWARN("listen %s: dropped connection from %s: %s",
                  jaccl_sockaddr_str(&l->h.addr, (char[64]){0}, 64), ps->peer, why);
            close(ps->fd);
            ps->fd = -1;
            continue;
        }
        if (r == 1) {
            pc->fds[ps->hello.idx] = ps->fd;
            pc->have++;
            if (ps->hello.idx == 0) {
                pc->peer_blob_len = ps->hello.blob_len;
                memcpy(pc->peer, ps->peer, sizeof(pc->peer));
            }
            ps->fd = -1;
        }
    }
}

/* A complete group: read the peer's blob, build the endpoint, send the ack with our blob. */
static int conn_progress(struct jaccl_listener *l, struct pend_conn *pc,
                         const struct jaccl_conn_setup *setup)
{
    const struct fab_ops *ops = setup->ops;
    int r = jaccl_sock_recv_nb(pc->fds[0], pc->blob, pc->peer_blob_len, &pc->blob_got);
    if (r <= 0)
        return r;
    if (!pc->ep) {
        struct fab_ep_attr attr = setup->attr;
        attr.peer_desc = pc->peer;
        r = ops->ep_create(setup->dom, setup->cq, &attr, &pc->ep);
        if (r == 0 && setup->post_initial)
            r = setup->post_initial(pc->ep, setup->arg);
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

int jaccl_listener_accept(struct jaccl_listener *l, const struct jaccl_conn_setup *setup,
                          struct fab_ep **ep, uint32_t *tag, char *peer, size_t peerlen)
{
    int rc = accept_new(l);
    if (rc < 0)
        return rc;
    int want = setup->ops->side_socks(&setup->attr);
    read_hellos(l, want);
    for (int i = 0; i < MAX_PENDING; i++) {
        struct pend_conn *pc = &l->conns[i];
        if (!pc->used)
            continue;
        if (pc->have < pc->count) {
            if (jaccl_expired(pc->deadline)) {
                JWARN("connection from %s: only %d of %d sockets arrived before the deadline",
                      pc->peer, pc->have, pc->count);
                conn_drop(pc);
            }
            continue;
        }
        int r = conn_progress(l, pc, setup);
        if (r == 0 && jaccl_expired(pc->deadline))
            r = -ETIMEDOUT;
        if (r < 0) {
            JWARN("accepting a connection from %s failed: %s", pc->peer, strerror(-r));
            if (pc->ep)
                setup->ops->ep_close(pc->ep);
            pc->ep = NULL;
            conn_drop(pc);
            continue;
        }
        if (r == 0)
            continue;
        r = setup->ops->ep_connect(pc->ep, pc->blob, pc->peer_blob_len, pc->fds, pc->count);
        struct fab_ep *got = pc->ep;
        pc->used = 0; /* the fabric owns the sockets now */
        pc->ep = NULL;
        if (r != 0) {
            JWARN("connection from %s: fabric set-up failed: %s", pc->peer, strerror(-r));
            setup->ops->ep_close(got);
            continue;
        }
        *ep = got;
        *tag = pc->tag;
        if (peer)
            snprintf(peer, peerlen, "%s", pc->peer);
        return 1;
    }
    return 0;
}
