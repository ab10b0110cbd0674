/* p2p comm lifetime: listen, connect, accept, close, and memory registration entry points. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "abi/api.h"
#include "core/p2p.h"
#include "core/state.h"
#include "util/log.h"
#include "util/param.h"

/* ---- comm objects ---- */

/* Closed comms stay allocated (marked JC_DEAD) until the last finalize, so a call on a closed
 * comm is caught by its kind instead of reading freed memory. NCCL opens comms at set-up only,
 * so this holds a bounded number of them. */
static pthread_mutex_t g_grave_lock = PTHREAD_MUTEX_INITIALIZER;
static struct p2p_comm **g_grave;
static size_t g_grave_n, g_grave_cap;

static void graveyard_add(struct p2p_comm *c)
{
    pthread_mutex_lock(&g_grave_lock);
    if (g_grave_n == g_grave_cap) {
        size_t cap = g_grave_cap ? 2 * g_grave_cap : 64;
        struct p2p_comm **g = realloc(g_grave, cap * sizeof(*g));
        if (g) {
            g_grave = g;
            g_grave_cap = cap;
        }
    }
    if (g_grave_n < g_grave_cap)
        g_grave[g_grave_n++] = c;
    else
        free(c); /* out of memory: lose the use-after-close check, not the memory */
    pthread_mutex_unlock(&g_grave_lock);
}

static void pending_abandon_all(void);

void jaccl_p2p_release_closed(void)
{
    pending_abandon_all();
    pthread_mutex_lock(&g_grave_lock);
    for (size_t i = 0; i < g_grave_n; i++)
        free(g_grave[i]);
    free(g_grave);
    g_grave = NULL;
    g_grave_n = g_grave_cap = 0;
    pthread_mutex_unlock(&g_grave_lock);
}

static struct p2p_comm *p2p_comm_new(int dev, uint32_t kind, int nlanes)
{
    const struct fab_ops *ops = jaccl_fabric();
    struct p2p_comm *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    pthread_mutex_init(&c->lock, NULL);
    c->hdr.kind = kind;
    c->hdr.dev = dev;
    c->nlanes = nlanes;
    c->min_chunk = (size_t)jaccl_param_int(JP_MIN_CHUNK);
    c->hdr.dom = jaccl_domain_get(dev);
    c->ctrl = calloc(P2P_CTRL_BUFS, sizeof(*c->ctrl));
    int depth = P2P_NSLOTS * (nlanes + 2) * 2;
    if (!c->hdr.dom || !c->ctrl || ops->cq_create(c->hdr.dom, depth, &c->cq) != 0 ||
        ops->mr_reg(c->hdr.dom, c->ctrl, P2P_CTRL_BUFS * sizeof(*c->ctrl), &c->ctrl_mr) != 0) {
        p2p_comm_free(c);
        return NULL;
    }
    for (int i = 0; i < P2P_NSLOTS; i++) {
        c->reqs[i].magic = P2P_REQ_MAGIC;
        c->reqs[i].comm = c;
    }
    return c;
}

void p2p_comm_free(struct p2p_comm *c)
{
    const struct fab_ops *ops = jaccl_fabric();
    if (c->ep)
        ops->ep_close(c->ep);
    if (c->ctrl_mr)
        ops->mr_dereg(c->ctrl_mr);
    if (c->cq)
        ops->cq_destroy(c->cq);
    if (c->hdr.dom)
        jaccl_domain_put(c->hdr.dev);
    for (int i = 0; i < P2P_NSLOTS; i++)
        c->reqs[i].magic = 0;
    c->hdr.kind = JC_DEAD;
    pthread_mutex_destroy(&c->lock);
    free(c->ctrl);
    c->ctrl = NULL;
    graveyard_add(c);
}

/* The sender's landing buffers for CTSs must be posted before the receiver can send one. */
static int p2p_post_ctrl_recvs(struct fab_ep *ep, void *comm)
{
    struct p2p_comm *c = comm;
    for (unsigned i = 0; i < P2P_CTRL_BUFS; i++) {
        int rc = jaccl_fabric()->post_recv(ep, 0, &c->ctrl[i], sizeof(c->ctrl[i]), c->ctrl_mr,
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
            .ops = jaccl_fabric(),
            .dom = c->hdr.dom,
            .cq = c->cq,
            .attr = {.nlanes = c->nlanes,
                     .max_send_wr = P2P_CTRL_BUFS + P2P_NSLOTS,
                     .max_recv_wr = P2P_CTRL_BUFS + P2P_NSLOTS,
                     .liveness_ns = jaccl_timeout_ns(),
                     .peer_desc = c->peer},
            .post_initial = c->hdr.kind == JC_SEND ? p2p_post_ctrl_recvs : NULL,
            .arg = c,
    };
    jaccl_qos_fill(ctx_tc, &s.attr);
    return s;
}

/* ---- listen / accept ---- */

ncclResult_t jaccl_listen(void *ctx, int dev, void *handle, void **listenComm)
{
    if (!listenComm || !handle)
        return ncclInvalidArgument;
    *listenComm = NULL;
    union jaccl_sockaddr addr;
    if (dev < 0 || dev >= jaccl_ndevs() || jaccl_dev_addr(dev, &addr) != 0) {
        JWARN("listen: invalid device %d (have %d)", dev, jaccl_ndevs());
        return ncclInvalidArgument;
    }
    struct p2p_listen *l = calloc(1, sizeof(*l));
    if (!l)
        return ncclSystemError;
    l->hdr.kind = JC_LISTEN;
    l->hdr.dev = dev;
    l->ctx_tc = jaccl_ctx_traffic_class(ctx);
    /* A lane is a socket on tcp and a queue pair on verbs; each has its own knob. */
    l->nlanes = (int)jaccl_param_int(jaccl_fabric_id() == 1 ? JP_NSOCKS : JP_QPS_PER_CONN);
    struct jaccl_handle h = {.kind = JH_P2P, .nlanes = (uint8_t)l->nlanes};
    int rc = jaccl_listener_open(dev, &addr, &h, &l->listener);
    if (rc != 0) {
        JWARN("listen on device %d failed: %s", dev, strerror(-rc));
        free(l);
        return ncclSystemError;
    }
    jaccl_handle_encode(&h, handle);
    *listenComm = l;
    return ncclSuccess;
}

ncclResult_t jaccl_accept(void *listenComm, void **recvComm,
                          ncclNetDeviceHandle_v11_t **recvDevComm)
{
    if (!recvComm)
        return ncclInvalidArgument;
    *recvComm = NULL;
    struct p2p_listen *l = (struct p2p_listen *)jaccl_comm_check(listenComm, JC_LISTEN, "accept");
    if (!l)
        return ncclInvalidArgument;
    if (!l->pending) {
        l->pending = p2p_comm_new(l->hdr.dev, JC_RECV, l->nlanes);
        if (!l->pending)
            return ncclSystemError;
    }
    struct p2p_comm *c = l->pending;
    struct jaccl_conn_setup s = p2p_setup(c, l->ctx_tc);
    uint32_t tag;
    int r = jaccl_listener_accept(l->listener, &s, &c->ep, &tag, c->peer, sizeof(c->peer));
    if (r < 0)
        return ncclSystemError;
    if (r == 1) {
        l->pending = NULL;
        *recvComm = c;
        JINFO(NCCL_NET, "accepted connection from %s on device %d (%d lanes)", c->peer, c->hdr.dev,
              c->nlanes);
    }
    return ncclSuccess;
}

ncclResult_t jaccl_close_listen(void *listenComm)
{
    struct p2p_listen *l =
            (struct p2p_listen *)jaccl_comm_check(listenComm, JC_LISTEN, "closeListen");
    if (!l)
        return ncclInvalidArgument;
    if (l->pending)
        p2p_comm_free(l->pending);
    jaccl_listener_close(l->listener);
    l->hdr.kind = JC_DEAD;
    free(l);
    return ncclSuccess;
}

/* ---- connect: NCCL calls again with the same handle buffer until a comm comes back ---- */

struct pending_connect {
    void *handle;
    struct p2p_comm *comm;
    struct jaccl_connector *conn;
    struct pending_connect *next;
};
static pthread_mutex_t g_pend_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pending_connect *g_pend;

static struct pending_connect *pending_take(void *handle)
{
    pthread_mutex_lock(&g_pend_lock);
    struct pending_connect **pp = &g_pend, *p;
    while ((p = *pp) && p->handle != handle)
        pp = &p->next;
    if (p)
        *pp = p->next;
    pthread_mutex_unlock(&g_pend_lock);
    return p;
}

/* A connect NCCL gave up on (abort) never finishes: drop it with the last finalize. */
static void pending_abandon_all(void)
{
    pthread_mutex_lock(&g_pend_lock);
    struct pending_connect *p = g_pend;
    g_pend = NULL;
    pthread_mutex_unlock(&g_pend_lock);
    while (p) {
        struct pending_connect *next = p->next;
        jaccl_connector_abort(p->conn);
        p2p_comm_free(p->comm);
        free(p);
        p = next;
    }
}

static void pending_put(struct pending_connect *p)
{
    pthread_mutex_lock(&g_pend_lock);
    p->next = g_pend;
    g_pend = p;
    pthread_mutex_unlock(&g_pend_lock);
}

static struct pending_connect *connect_start(int dev, void *handle, int ctx_tc)
{
    struct jaccl_handle h;
    const char *why;
    if (jaccl_handle_decode(handle, JH_P2P, &h, &why) != 0) {
        JWARN("connect: bad handle: %s", why);
        return NULL;
    }
    if (h.fabric != jaccl_fabric_id()) {
        JWARN("connect: the listener runs another fabric (NCCL_JACCL_FABRIC differs)");
        return NULL;
    }
    struct pending_connect *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->handle = handle;
    p->comm = p2p_comm_new(dev, JC_SEND, h.nlanes);
    if (p->comm) {
        jaccl_sockaddr_str(&h.addr, p->comm->peer, sizeof(p->comm->peer));
        struct jaccl_conn_setup s = p2p_setup(p->comm, ctx_tc);
        if (jaccl_connector_start(&h, 0, &s, &p->conn) == 0)
            return p;
        JWARN("connect to %s failed to start", p->comm->peer);
        p2p_comm_free(p->comm);
    }
    free(p);
    return NULL;
}

ncclResult_t jaccl_connect(void *ctx, int dev, void *handle, void **sendComm,
                           ncclNetDeviceHandle_v11_t **sendDevComm)
{
    return jaccl_connect_tclass(ctx, -1, dev, handle, sendComm, sendDevComm);
}

ncclResult_t jaccl_connect_tclass(void *ctx, int trafficClass, int dev, void *handle,
                                  void **sendComm, ncclNetDeviceHandle_v11_t **sendDevComm)
{
    int tc = trafficClass >= 0 ? trafficClass : jaccl_ctx_traffic_class(ctx);
    if (!sendComm || !handle)
        return ncclInvalidArgument;
    *sendComm = NULL;
    if (dev < 0 || dev >= jaccl_ndevs()) {
        JWARN("connect: invalid device %d (have %d)", dev, jaccl_ndevs());
        return ncclInvalidArgument;
    }
    struct pending_connect *p = pending_take(handle);
    if (!p && !(p = connect_start(dev, handle, tc)))
        return ncclInvalidArgument;
    struct fab_ep *ep = NULL;
    int r = jaccl_connector_step(p->conn, &ep);
    if (r == 0) {
        pending_put(p);
        return ncclSuccess;
    }
    struct p2p_comm *c = p->comm;
    free(p);
    if (r < 0) {
        p2p_comm_free(c);
        return ncclSystemError;
    }
    c->ep = ep;
    *sendComm = c;
    JINFO(NCCL_NET, "connected to %s on device %d (%d lanes)", c->peer, dev, c->nlanes);
    return ncclSuccess;
}

/* ---- close and registration ---- */

static ncclResult_t close_comm(void *comm, uint32_t kind, const char *what)
{
    struct p2p_comm *c = (struct p2p_comm *)jaccl_comm_check(comm, kind, what);
    if (!c)
        return ncclInvalidArgument;
    p2p_comm_free(c);
    return ncclSuccess;
}

ncclResult_t jaccl_close_send(void *sendComm)
{
    return close_comm(sendComm, JC_SEND, "closeSend");
}

ncclResult_t jaccl_close_recv(void *recvComm)
{
    return close_comm(recvComm, JC_RECV, "closeRecv");
}

ncclResult_t jaccl_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle)
{
    struct jaccl_comm_hdr *c = jaccl_comm_check(comm, 0, "regMr");
    return c ? jaccl_mr_reg(c, data, size, type, mhandle) : ncclInvalidArgument;
}

ncclResult_t jaccl_dereg_mr(void *comm, void *mhandle)
{
    struct jaccl_comm_hdr *c = jaccl_comm_check(comm, 0, "deregMr");
    return c ? jaccl_mr_dereg(c, mhandle) : ncclInvalidArgument;
}

ncclResult_t jaccl_iflush(void *recvComm, int n, void **data, int *sizes, void **mhandles,
                          void **request)
{
    /* Host memory only: there is never anything to flush (NCCL only flushes GDR buffers). */
    if (request)
        *request = NULL;
    return ncclSuccess;
}
