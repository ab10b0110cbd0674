/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p comm lifetime: listen, connect, accept, close, and memory registration entry points. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/api.h"
#include "core/err.h"
#include "core/p2p.h"
#include "core/registry.h"
#include "core/state.h"
#include "util/log.h"
#include "util/param.h"
#include "util/subnet.h"

/* ---- comm objects ---- */

/* Registered from creation (the comm and its request slots) until p2p_comm_free, which
 * unregisters first: a call with a closed comm or one of its requests is refused by the
 * registry and nothing of the comm is kept. */
static struct p2p_comm *p2p_comm_new(int dev, uint32_t kind, int nlanes)
{
    struct p2p_comm *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    pthread_mutex_init(&c->lock, NULL);
    c->hdr.kind = kind;
    c->hdr.dev = dev;
    c->nlanes = nlanes;
    c->min_chunk = (size_t)jaccl_param_int(JP_MIN_CHUNK);
    c->hdr.dom = jaccl_domain_get(dev);
    c->ops = c->hdr.dom ? c->hdr.dom->ops : NULL;
    c->ctrl = calloc(P2P_CTRL_BUFS, sizeof(*c->ctrl));
    int depth = P2P_NSLOTS * (nlanes + 2) * 2;
    if (!c->hdr.dom || !c->ctrl || c->ops->cq_create(c->hdr.dom, depth, &c->cq) != 0 ||
        c->ops->mr_reg(c->hdr.dom, c->ctrl, P2P_CTRL_BUFS * sizeof(*c->ctrl), &c->ctrl_mr) != 0) {
        p2p_comm_free(c);
        return NULL;
    }
    for (int i = 0; i < P2P_NSLOTS; i++) {
        c->reqs[i].magic = P2P_REQ_MAGIC;
        c->reqs[i].comm = c;
    }
    uint32_t jo = kind == COMM_SEND ? JO_SEND : JO_RECV;
    if (jaccl_reg_add(c, sizeof(*c), 1, jo, c) != 0) {
        p2p_comm_free(c);
        return NULL;
    }
    if (jaccl_reg_add(c->reqs, sizeof(c->reqs[0]), P2P_NSLOTS, JO_P2P_REQ, c) != 0) {
        p2p_comm_free(c);
        return NULL;
    }
    return c;
}

void p2p_comm_free(struct p2p_comm *c)
{
    const struct fab_ops *ops = c->ops; /* NULL only without a domain, so nothing to close */
    jaccl_reg_del(c);
    jaccl_reg_del(c->reqs);
    if (c->ep)
        ops->ep_close(c->ep);
    /* Once nothing can land in them any more, and while the fabric is surely up. */
    jaccl_mr_drop_all(&c->hdr);
    if (c->ctrl_mr)
        ops->mr_dereg(c->ctrl_mr);
    if (c->cq)
        ops->cq_destroy(c->cq);
    if (c->hdr.dom)
        jaccl_domain_put(c->hdr.dev);
    pthread_mutex_destroy(&c->lock);
    free(c->ctrl);
    free(c);
}

/* The sender's landing buffers for CTSs must be posted before the receiver can send one. */
static int p2p_post_ctrl_recvs(struct fab_ep *ep, void *comm)
{
    struct p2p_comm *c = comm;
    for (unsigned i = 0; i < P2P_CTRL_BUFS; i++) {
        int rc = c->ops->post_recv(ep, 0, &c->ctrl[i], sizeof(c->ctrl[i]), c->ctrl_mr,
                                   P2P_WR(WR_CTRL_RECV, 0, i));
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* ctx_tc: the trafficClass of the NCCL context the comm was made through (-1: none). */
static struct jaccl_conn_setup p2p_setup(struct p2p_comm *c, int ctx_tc)
{
    struct jaccl_conn_setup s = {
            .ops = c->ops,
            .dom = c->hdr.dom,
            .cq = c->cq,
            .attr = {.nlanes = c->nlanes,
                     .max_send_wr = P2P_CTRL_BUFS + P2P_NSLOTS,
                     .max_recv_wr = P2P_CTRL_BUFS + P2P_NSLOTS,
                     .liveness_ns = jaccl_timeout_ns(),
                     .peer_desc = c->peer},
            .post_initial = c->hdr.kind == COMM_SEND ? p2p_post_ctrl_recvs : NULL,
            .arg = c,
    };
    jaccl_qos_fill(ctx_tc, &s.attr);
    return s;
}

/* ---- listen / accept ---- */

/* ctx must be a live init context: a listen or connect after its finalize is refused. */
static int ctx_ok(void *ctx, const char *what)
{
    return jaccl_reg_find(ctx, JO_CTX, what, NULL) != NULL;
}

static void listen_free(struct p2p_listen *l)
{
    jaccl_reg_del(l);
    /* The listener first: a connection it was accepting has an endpoint on pending's CQ. */
    if (l->listener)
        jaccl_listener_close(l->listener);
    if (l->pending)
        p2p_comm_free(l->pending);
    free(l);
    jaccl_state_put();
}

static int p2p_listen(void *ctx, int dev, void *handle, void **listenComm)
{
    if (!listenComm || !handle)
        return -EFAULT;
    *listenComm = NULL;
    if (!ctx_ok(ctx, "listen"))
        return -EBADF;
    /* The back end serving the device (a static table: valid for good). */
    const struct fab_ops *ops = jaccl_dev_ops(dev);
    if (!ops) {
        JWARN("listen: invalid device %d (have %d)", dev, jaccl_ndevs());
        return -EINVAL;
    }
    struct p2p_listen *l = calloc(1, sizeof(*l));
    if (!l || jaccl_state_hold() != 0) {
        free(l);
        return -ENOMEM;
    }
    l->hdr.kind = COMM_LISTEN;
    l->hdr.dev = dev;
    l->ctx_tc = jaccl_ctx_traffic_class(ctx);
    /* A lane is a socket on tcp and a queue pair on verbs; the back end serving the device
     * reads its own knob. The hold above keeps the fabric open. */
    l->nlanes = ops->p2p_lanes();
    struct jaccl_handle h = {.kind = JH_P2P, .nlanes = (uint8_t)l->nlanes};
    int rc = jaccl_listener_open(dev, &h, &l->listener);
    if (rc == 0 && jaccl_reg_add(l, sizeof(*l), 1, JO_LISTEN, l) != 0)
        rc = -ENOMEM;
    if (rc != 0) {
        JWARN("listen on device %d failed: %s", dev, strerror(-rc));
        listen_free(l);
        return -EIO; /* a listen socket: nothing the peer or the caller did */
    }
    jaccl_handle_encode(&h, handle);
    *listenComm = l;
    return 0;
}

ncclResult_t jaccl_listen(void *ctx, int dev, void *handle, void **listenComm)
{
    return jaccl_err_to_nccl(p2p_listen(ctx, dev, handle, listenComm));
}

/* The receive comm for a connection that arrived by device dev's link: a comm lives on the
 * device its connection runs over (a queue pair belongs to one device). Kept across accept
 * calls until a connection takes it. */
static int p2p_accept_setup(void *arg, int dev, struct jaccl_conn_setup *out)
{
    struct p2p_listen *l = arg;
    if (l->pending && l->pending->hdr.dev != dev) {
        p2p_comm_free(l->pending);
        l->pending = NULL;
    }
    if (!l->pending && !(l->pending = p2p_comm_new(dev, COMM_RECV, l->nlanes)))
        return -ENOMEM;
    *out = p2p_setup(l->pending, l->ctx_tc);
    return 0;
}

static int p2p_accept(void *listenComm, void **recvComm)
{
    if (!recvComm)
        return -EFAULT;
    *recvComm = NULL;
    struct p2p_listen *l = (struct p2p_listen *)jaccl_comm_check(listenComm, COMM_LISTEN, "accept");
    if (!l)
        return -EBADF;
    struct fab_ep *ep = NULL;
    uint32_t tag;
    char peer[sizeof(l->pending->peer)];
    int r = jaccl_listener_accept(l->listener, p2p_accept_setup, l, &ep, &tag, peer, sizeof(peer));
    if (r < 0)
        return -EIO; /* the listener itself broke (a stranger only logs) */
    if (r == 1) {
        struct p2p_comm *c = l->pending;
        l->pending = NULL;
        c->ep = ep;
        memcpy(c->peer, peer, sizeof(peer));
        *recvComm = c;
        JINFO(NCCL_NET, "accepted connection from %s on device %d (%s, %d lanes)", c->peer,
              c->hdr.dev, jaccl_dev_name(c->hdr.dev), c->nlanes);
    }
    return 0;
}

ncclResult_t jaccl_accept(void *listenComm, void **recvComm, void **recvDevComm)
{
    return jaccl_err_to_nccl(p2p_accept(listenComm, recvComm));
}

ncclResult_t jaccl_close_listen(void *listenComm)
{
    struct p2p_listen *l =
            (struct p2p_listen *)jaccl_comm_take(listenComm, COMM_LISTEN, "closeListen");
    if (!l)
        return jaccl_err_to_nccl(-EBADF);
    listen_free(l);
    return ncclSuccess;
}

/* ---- connect: NCCL calls again with the same handle until a comm comes back ---- */

/* A connect in progress is resumed only by a call with the same ctx, device and handle bytes:
 * the handle's address alone says nothing (a buffer freed after an abandoned connect may be
 * reused for another peer's handle). */
struct pending_connect {
    void *ctx;
    int dev;
    unsigned char handle[NCCL_NET_HANDLE_MAXSIZE];
    struct p2p_comm *comm;
    struct jaccl_connector *conn;
    char route[256]; /* the cables taken, once connected (for the INFO line) */
    struct pending_connect *next;
};
static pthread_mutex_t g_pend_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pending_connect *g_pend;

static struct pending_connect *pending_take(void *ctx, int dev, const void *handle)
{
    pthread_mutex_lock(&g_pend_lock);
    struct pending_connect **pp = &g_pend, *p;
    while ((p = *pp) &&
           (p->ctx != ctx || p->dev != dev || memcmp(p->handle, handle, sizeof(p->handle)) != 0))
        pp = &p->next;
    if (p)
        *pp = p->next;
    pthread_mutex_unlock(&g_pend_lock);
    return p;
}

static void pending_put(struct pending_connect *p)
{
    pthread_mutex_lock(&g_pend_lock);
    p->next = g_pend;
    g_pend = p;
    pthread_mutex_unlock(&g_pend_lock);
}

/* finalize(ctx): nobody can resume that ctx's connects any more (NCCL gave up on them). */
void jaccl_p2p_abandon(void *ctx)
{
    pthread_mutex_lock(&g_pend_lock);
    struct pending_connect **pp = &g_pend, *mine = NULL;
    while (*pp) {
        struct pending_connect *p = *pp;
        if (p->ctx == ctx) {
            *pp = p->next;
            p->next = mine;
            mine = p;
        } else {
            pp = &p->next;
        }
    }
    pthread_mutex_unlock(&g_pend_lock);
    while (mine) {
        struct pending_connect *next = mine->next;
        jaccl_connector_abort(mine->conn);
        p2p_comm_free(mine->comm);
        free(mine);
        mine = next;
    }
}

/* A connection of queue pairs cannot be relayed: say which subnets nothing here reaches. */
static void warn_no_cable(const struct jaccl_handle *h)
{
    char list[256] = "";
    size_t off = 0;
    for (int i = 0; i < h->nlinks && off < sizeof(list); i++)
        off += (size_t)snprintf(list + off, sizeof(list) - off, " %s",
                                jaccl_link_net_str(&h->links[i], (char[64]){0}, 64));
    JWARN("connect: no device of this host shares a subnet with the listener's links (%s ); the "
          "verbs fabric cannot relay a connection: cable the two nodes, or use "
          "NCCL_JACCL_FABRIC=tcp, which relays through a node cabled to both",
          list);
}

/* A handle that does not decode, or names another fabric, is a mismatch between the two
 * sides' builds or configurations: -EINVAL. */
static int connect_start(void *ctx, int dev, void *handle, int ctx_tc, struct pending_connect **out)
{
    struct jaccl_handle h;
    const char *why;
    if (jaccl_handle_decode(handle, JH_P2P, &h, &why) != 0) {
        JWARN("connect: bad handle: %s", why);
        return -EINVAL;
    }
    const struct fab_ops *ops = jaccl_dev_ops(dev); /* the device our comm will use */
    if (!ops || h.fabric != ops->handle_id) {
        JWARN("connect: the listener runs another fabric (NCCL_JACCL_FABRIC differs)");
        return -EINVAL;
    }
    struct jaccl_route route;
    int relayed =
            jaccl_route_direct(&h, dev, ops->lanes_are_socks ? JACCL_ROUTE_ANY : JACCL_ROUTE_ONE,
                               &route) != 0;
    if (relayed && !ops->lanes_are_socks) {
        warn_no_cable(&h);
        return -ENETUNREACH;
    }
    struct pending_connect *p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    p->ctx = ctx;
    p->dev = dev;
    memcpy(p->handle, handle, sizeof(p->handle));
    /* The comm lives on the device its first cable leaves by (a relayed one: NCCL's). */
    p->comm = p2p_comm_new(relayed ? dev : route.cable[0].dev, COMM_SEND, h.nlanes);
    int rc = -ENOMEM;
    if (p->comm) {
        jaccl_sockaddr_str(jaccl_handle_addr(&h), p->comm->peer, sizeof(p->comm->peer));
        struct jaccl_conn_setup s = p2p_setup(p->comm, ctx_tc);
        s.route = p->route;
        s.route_len = sizeof(p->route);
        s.peer = p->comm->peer;
        s.peer_len = sizeof(p->comm->peer);
        rc = jaccl_connector_start(&h, relayed ? NULL : &route, 0, &s, &p->conn);
        if (rc == 0) {
            *out = p;
            return 0;
        }
        JWARN("connect to %s failed to start", p->comm->peer);
        p2p_comm_free(p->comm);
    }
    free(p);
    return rc;
}

ncclResult_t jaccl_connect(void *ctx, int dev, void *handle, void **sendComm, void **sendDevComm)
{
    return jaccl_connect_tclass(ctx, -1, dev, handle, sendComm, sendDevComm);
}

static int p2p_connect(void *ctx, int trafficClass, int dev, void *handle, void **sendComm)
{
    if (!sendComm || !handle)
        return -EFAULT;
    *sendComm = NULL;
    if (!ctx_ok(ctx, "connect"))
        return -EBADF;
    int tc = trafficClass >= 0 ? trafficClass : jaccl_ctx_traffic_class(ctx);
    if (dev < 0 || dev >= jaccl_ndevs()) {
        JWARN("connect: invalid device %d (have %d)", dev, jaccl_ndevs());
        return -EINVAL;
    }
    struct pending_connect *p = pending_take(ctx, dev, handle);
    if (!p) {
        int rc = connect_start(ctx, dev, handle, tc, &p);
        if (rc != 0)
            return rc;
    }
    struct fab_ep *ep = NULL;
    int r = jaccl_connector_step(p->conn, &ep);
    if (r == 0) {
        pending_put(p);
        return 0;
    }
    struct p2p_comm *c = p->comm;
    if (r < 0) {
        free(p);
        p2p_comm_free(c);
        return r;
    }
    c->ep = ep;
    *sendComm = c;
    JINFO(NCCL_NET, "connected to %s on device %d (NCCL's %d), %d lanes over %s", c->peer,
          c->hdr.dev, dev, c->nlanes, p->route);
    free(p);
    return 0;
}

ncclResult_t jaccl_connect_tclass(void *ctx, int trafficClass, int dev, void *handle,
                                  void **sendComm, void **sendDevComm)
{
    return jaccl_err_to_nccl(p2p_connect(ctx, trafficClass, dev, handle, sendComm));
}

/* ---- close and registration ---- */

/* Returns at once, whether the comm ended normally or is aborted: the endpoint's close ends
 * the connection in order (fabric.h, ep_close), so the peer still gets every byte our
 * completed sends handed to the kernel, and sees the end of the stream behind them. */
static ncclResult_t close_comm(void *comm, uint32_t kind, const char *what)
{
    struct p2p_comm *c = (struct p2p_comm *)jaccl_comm_take(comm, kind, what);
    if (!c)
        return jaccl_err_to_nccl(-EBADF);
    p2p_comm_free(c);
    return ncclSuccess;
}

ncclResult_t jaccl_close_send(void *sendComm)
{
    return close_comm(sendComm, COMM_SEND, "closeSend");
}

ncclResult_t jaccl_close_recv(void *recvComm)
{
    return close_comm(recvComm, COMM_RECV, "closeRecv");
}

ncclResult_t jaccl_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle)
{
    struct jaccl_comm_hdr *c = jaccl_comm_check(comm, 0, "regMr");
    return jaccl_err_to_nccl(c ? jaccl_mr_reg(c, data, size, type, mhandle) : -EBADF);
}

ncclResult_t jaccl_dereg_mr(void *comm, void *mhandle)
{
    struct jaccl_comm_hdr *c = jaccl_comm_check(comm, 0, "deregMr");
    return jaccl_err_to_nccl(c ? jaccl_mr_dereg(c, mhandle) : -EBADF);
}

ncclResult_t jaccl_iflush(void *recvComm, int n, void **data, int *sizes, void **mhandles,
                          void **request)
{
    /* Host memory only: there is never anything to flush (NCCL only flushes GDR buffers). */
    if (request)
        *request = NULL;
    return jaccl_err_to_nccl(jaccl_comm_check(recvComm, COMM_RECV, "iflush") ? 0 : -EBADF);
}
