/* SPDX-License-Identifier: BSD-3-Clause */
/* Connector side of the connection set-up: a non-blocking state machine. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/conn.h"
#include "core/conn_wire.h"
#include "core/state.h"
#include "util/clock.h"
#include "util/log.h"

enum cstage { CS_CONNECT, CS_ACK, CS_BLOB };

struct jaccl_connector {
    struct jaccl_conn_setup setup;
    struct jaccl_handle h;
    struct fab_ep *ep;
    enum cstage stage;
    int nsocks;
    int fds[FAB_MAX_LANES];
    int connected[FAB_MAX_LANES];
    struct jaccl_hello hello[FAB_MAX_LANES];
    size_t hello_done[FAB_MAX_LANES];
    uint8_t blob[FAB_CONN_INFO_MAX]; /* ours on the way out, then the peer's */
    uint32_t blob_len;
    size_t blob_done;
    struct jaccl_ack ack;
    size_t ack_done;
    uint64_t deadline;
    char peer[64];
};

static void connector_free(struct jaccl_connector *c, int close_fds)
{
    if (c->ep)
        c->setup.ops->ep_close(c->ep);
    for (int i = 0; close_fds && i < c->nsocks; i++)
        if (c->fds[i] >= 0)
            close(c->fds[i]);
    free(c);
}

void jaccl_connector_abort(struct jaccl_connector *c)
{
    if (c)
        connector_free(c, 1);
}

static int connector_make_ep(struct jaccl_connector *c)
{
    const struct fab_ops *ops = c->setup.ops;
    int rc = ops->ep_create(c->setup.dom, c->setup.cq, &c->setup.attr, &c->ep);
    if (rc == 0 && c->setup.post_initial)
        rc = c->setup.post_initial(c->ep, c->setup.arg);
    if (rc != 0)
        return rc;
    int n = ops->ep_local_info(c->ep, c->blob, sizeof(c->blob));
    if (n < 0)
        return n;
    c->blob_len = (uint32_t)n;
    return 0;
}

int jaccl_connector_start(const struct jaccl_handle *h, uint32_t tag,
                          const struct jaccl_conn_setup *setup, struct jaccl_connector **out)
{
    struct jaccl_connector *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->setup = *setup;
    c->h = *h;
    c->setup.attr.nlanes = h->nlanes;
    c->setup.attr.peer_desc = c->peer;
    jaccl_sockaddr_str(&h->addr, c->peer, sizeof(c->peer));
    c->nsocks = setup->ops->side_socks(&c->setup.attr);
    c->deadline = jaccl_deadline_ns(jaccl_timeout_ns());
    for (int i = 0; i < FAB_MAX_LANES; i++)
        c->fds[i] = -1;
    if (c->nsocks < 1 || c->nsocks > FAB_MAX_LANES) {
        free(c);
        return -EINVAL;
    }
    uint64_t conn_id = jaccl_random64();
    int rc = connector_make_ep(c);
    for (int i = 0; rc == 0 && i < c->nsocks; i++) {
        c->hello[i] = (struct jaccl_hello){.magic = JACCL_HELLO_MAGIC,
                                           .kind = h->kind,
                                           .secret = h->secret,
                                           .conn_id = conn_id,
                                           .idx = (uint16_t)i,
                                           .count = (uint16_t)c->nsocks,
                                           .blob_len = i == 0 ? c->blob_len : 0,
                                           .tag = tag,
                                           .fabric = c->setup.ops->handle_id};
        c->fds[i] = jaccl_sock_connect_nb(&h->addr);
        if (c->fds[i] < 0)
            rc = c->fds[i];
    }
    if (rc != 0) {
        connector_free(c, 1);
        return rc;
    }
    *out = c;
    return 0;
}

/* Connect every socket, then send each its hello (socket 0 also our blob). */
static int step_connect_hello(struct jaccl_connector *c)
{
    int all = 1;
    for (int i = 0; i < c->nsocks; i++) {
        if (!c->connected[i]) {
            int r = jaccl_sock_connected(c->fds[i]);
            if (r < 0)
                return r;
            if (r == 0) {
                all = 0;
                continue;
            }
            c->connected[i] = 1;
            jaccl_sock_tune(c->fds[i], 0, 0);
        }
        size_t total = sizeof(struct jaccl_hello) + (i == 0 ? c->blob_len : 0);
        while (c->hello_done[i] < total) {
            size_t hd = c->hello_done[i];
            int r;
            if (hd < sizeof(struct jaccl_hello)) {
                r = jaccl_sock_send_nb(c->fds[i], &c->hello[i], sizeof(struct jaccl_hello), &hd);
            } else {
                size_t bd = hd - sizeof(struct jaccl_hello);
                r = jaccl_sock_send_nb(c->fds[i], c->blob, c->blob_len, &bd);
                hd = sizeof(struct jaccl_hello) + bd;
            }
            c->hello_done[i] = hd;
            if (r < 0)
                return r;
            if (r == 0)
                break;
        }
        if (c->hello_done[i] < total)
            all = 0;
    }
    return all;
}

/* Socket 0 brings the listener's ack, then its blob. */
static int step_ack(struct jaccl_connector *c)
{
    if (c->stage == CS_ACK) {
        int r = jaccl_sock_recv_nb(c->fds[0], &c->ack, sizeof(c->ack), &c->ack_done);
        if (r <= 0)
            return r;
        if (c->ack.magic != JACCL_ACK_MAGIC || c->ack.status != 0 ||
            c->ack.blob_len > sizeof(c->blob)) {
            JWARN("connection to %s refused by the listener (status %u)", c->peer, c->ack.status);
            return -ECONNREFUSED;
        }
        c->stage = CS_BLOB;
        c->blob_done = 0;
    }
    return jaccl_sock_recv_nb(c->fds[0], c->blob, c->ack.blob_len, &c->blob_done);
}

int jaccl_connector_step(struct jaccl_connector *c, struct fab_ep **ep)
{
    int r = 0;
    if (c->stage == CS_CONNECT) {
        r = step_connect_hello(c);
        if (r == 1) {
            c->stage = CS_ACK;
            r = 0;
        }
    }
    if (r == 0 && (c->stage == CS_ACK || c->stage == CS_BLOB))
        r = step_ack(c);
    if (r == 1) {
        r = c->setup.ops->ep_connect(c->ep, c->blob, c->ack.blob_len, c->fds, c->nsocks);
        *ep = r == 0 ? c->ep : NULL;
        if (r == 0)
            c->ep = NULL;
        connector_free(c, 0); /* the fabric owns the sockets now, even on failure */
        return r == 0 ? 1 : r;
    }
    if (r == 0 && jaccl_expired(c->deadline))
        r = -ETIMEDOUT;
    if (r < 0) {
        JWARN("connection to %s failed: %s", c->peer,
              r == -EPIPE ? "peer closed the connection" : strerror(-r));
        connector_free(c, 1);
    }
    return r;
}
