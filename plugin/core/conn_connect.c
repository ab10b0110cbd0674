/* SPDX-License-Identifier: BSD-3-Clause */
/* Connector side of the connection set-up: a non-blocking state machine. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/conn.h"
#include "core/conn_wire.h"
#include "core/relay.h"
#include "core/state.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/subnet.h"

enum cstage { CS_RELAY, CS_CONNECT, CS_ACK, CS_BLOB };

struct jaccl_connector {
    struct jaccl_conn_setup setup;
    struct jaccl_handle h;
    struct jaccl_route route;
    struct jaccl_relay_find *find; /* CS_RELAY: asking for a relay */
    uint32_t tag;
    struct fab_ep *ep;
    enum cstage stage;
    int nsocks;
    int fds[FAB_MAX_LANES];
    int connected[FAB_MAX_LANES];
    /* what each socket sends first: the relay's preamble (relayed), the hello, socket 0 our
     * blob */
    unsigned char pre[FAB_MAX_LANES][JACCL_RELAY_PREAMBLE];
    struct jaccl_hello hello[FAB_MAX_LANES];
    size_t sent[FAB_MAX_LANES];
    uint8_t blob[FAB_CONN_INFO_MAX]; /* ours on the way out, then the peer's */
    uint32_t blob_len;
    size_t blob_done;
    struct jaccl_ack ack;
    size_t ack_done;
    uint64_t deadline;
    char peer[112];
};

static void connector_free(struct jaccl_connector *c, int close_fds)
{
    if (c->ep)
        c->setup.ops->ep_close(c->ep);
    for (int i = 0; close_fds && i < c->nsocks; i++)
        if (c->fds[i] >= 0)
            close(c->fds[i]);
    jaccl_relay_find_free(c->find);
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

/* The peer as log lines name it: its address, and every relay a relayed route goes through. */
static void describe_peer(struct jaccl_connector *c)
{
    const struct jaccl_route *r = &c->route;
    const union jaccl_sockaddr *to = r->ncables ? &r->cable[0].remote : jaccl_handle_addr(&c->h);
    if (!r->relayed) {
        jaccl_sockaddr_str(to, c->peer, sizeof(c->peer));
        return;
    }
    char via[80] = "";
    for (int i = 0, off = 0; i < r->ncables && off < (int)sizeof(via); i++)
        off += snprintf(via + off, sizeof(via) - (size_t)off, "%s%s", i ? " and " : "",
                        jaccl_host_str(&r->cable[i].remote, (char[48]){0}, 48));
    snprintf(c->peer, sizeof(c->peer), "%s (relayed via %s)",
             jaccl_sockaddr_str(&r->cable[0].target, (char[64]){0}, 64), via);
}

/* Opens socket i over cable i % ncables; a relayed one starts with the relay's preamble and
 * names us in its hello. */
static int open_sockets(struct jaccl_connector *c)
{
    describe_peer(c); /* before the endpoint copies it */
    int rc = connector_make_ep(c);
    if (rc != 0)
        return rc;
    uint64_t conn_id = jaccl_random64();
    const struct jaccl_route *r = &c->route;
    for (int i = 0; i < c->nsocks; i++) {
        const struct jaccl_cable *cab = &r->cable[i % r->ncables];
        c->hello[i] = (struct jaccl_hello){.magic = JACCL_HELLO_MAGIC,
                                           .kind = c->h.kind,
                                           .secret = c->h.secret,
                                           .conn_id = conn_id,
                                           .idx = (uint16_t)i,
                                           .count = (uint16_t)c->nsocks,
                                           .blob_len = i == 0 ? c->blob_len : 0,
                                           .tag = c->tag,
                                           .fabric = c->setup.ops->handle_id};
        if (r->relayed) {
            jaccl_relay_preamble(&cab->target, c->pre[i]);
            jaccl_host_str(&cab->local.addr, c->hello[i].origin, sizeof(c->hello[i].origin));
        }
        c->fds[i] = jaccl_sock_connect_from_nb(&cab->local.addr, &cab->remote);
        if (c->fds[i] < 0)
            return c->fds[i];
    }
    c->stage = CS_CONNECT;
    return 0;
}

int jaccl_connector_start(const struct jaccl_handle *h, const struct jaccl_route *r, uint32_t tag,
                          const struct jaccl_conn_setup *setup, struct jaccl_connector **out)
{
    struct jaccl_connector *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->setup = *setup;
    c->h = *h;
    c->tag = tag;
    c->setup.attr.nlanes = c->setup.attr.nlanes ? c->setup.attr.nlanes : h->nlanes;
    c->setup.attr.peer_desc = c->peer;
    c->nsocks = setup->ops->side_socks(&c->setup.attr);
    c->deadline = jaccl_deadline_ns(jaccl_timeout_ns());
    for (int i = 0; i < FAB_MAX_LANES; i++)
        c->fds[i] = -1;
    jaccl_sockaddr_str(jaccl_handle_addr(h), c->peer, sizeof(c->peer));
    int rc = c->nsocks < 1 || c->nsocks > FAB_MAX_LANES ? -EINVAL : 0;
    if (rc == 0 && r) {
        c->route = *r;
        rc = open_sockets(c);
    } else if (rc == 0) {
        c->stage = CS_RELAY;
        rc = jaccl_relay_find_start(h, &c->find);
    }
    if (rc != 0) {
        connector_free(c, 1);
        return rc;
    }
    *out = c;
    return 0;
}

/* Socket i's opening bytes: [preamble] hello [blob]; 1 when all are out. */
static int send_opening(struct jaccl_connector *c, int i)
{
    size_t npre = c->route.relayed ? JACCL_RELAY_PREAMBLE : 0, nh = sizeof(struct jaccl_hello);
    const void *part[3] = {c->pre[i], &c->hello[i], c->blob};
    size_t len[3] = {npre, nh, i == 0 ? c->blob_len : 0};
    size_t base = 0;
    for (int k = 0; k < 3; base += len[k], k++) {
        if (c->sent[i] >= base + len[k])
            continue;
        size_t d = c->sent[i] - base;
        int r = jaccl_sock_send_nb(c->fds[i], part[k], len[k], &d);
        c->sent[i] = base + d;
        if (r <= 0)
            return r;
    }
    return 1;
}

/* Connect every socket, then send each its opening. */
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
        int r = send_opening(c, i);
        if (r < 0)
            return r;
        all &= r;
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

/* Asks for a relay until one answers; then the sockets go to it. */
static int step_relay(struct jaccl_connector *c)
{
    int r = jaccl_relay_find_step(c->find, &c->route);
    if (r <= 0)
        return r;
    jaccl_relay_find_free(c->find);
    c->find = NULL;
    c->deadline = jaccl_deadline_ns(jaccl_timeout_ns()); /* the search had a deadline of its own */
    r = open_sockets(c);
    return r < 0 ? r : 0;
}

/* The fabric takes the sockets, even on failure. */
static int finish(struct jaccl_connector *c, struct fab_ep **ep)
{
    if (c->setup.route)
        jaccl_route_str(&c->route, c->setup.route, c->setup.route_len);
    if (c->setup.peer)
        snprintf(c->setup.peer, c->setup.peer_len, "%s", c->peer);
    int r = c->setup.ops->ep_connect(c->ep, c->blob, c->ack.blob_len, c->fds, c->nsocks);
    *ep = r == 0 ? c->ep : NULL;
    if (r == 0)
        c->ep = NULL;
    connector_free(c, 0);
    return r == 0 ? 1 : r;
}

int jaccl_connector_step(struct jaccl_connector *c, struct fab_ep **ep)
{
    int r = c->stage == CS_RELAY ? step_relay(c) : 0;
    if (r == 0 && c->stage == CS_CONNECT) {
        r = step_connect_hello(c);
        if (r == 1) {
            c->stage = CS_ACK;
            r = 0;
        }
    }
    if (r == 0 && (c->stage == CS_ACK || c->stage == CS_BLOB))
        r = step_ack(c);
    if (r == 1)
        return finish(c, ep);
    if (r == 0 && c->stage != CS_RELAY && jaccl_expired(c->deadline))
        r = -ETIMEDOUT;
    if (r < 0) {
        if (r != -EHOSTUNREACH) /* the relay search has said why */
            JWARN("connection to %s failed: %s", c->peer,
                  r == -EPIPE ? "peer closed the connection" : strerror(-r));
        connector_free(c, 1);
    }
    return r;
}
