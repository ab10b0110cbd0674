/* SPDX-License-Identifier: BSD-3-Clause */
/* CollNet connect: from the handles alone, join this rank to the ring neighbours and, when the
 * mesh may be used, to every peer. One endpoint per peer carries both (see coll.h); the lower
 * rank of each pair connects, the higher one accepts, and the connection's tag says who
 * connected. Blocking with a deadline (NCCL_JACCL_TIMEOUT): steps every connector and the
 * listener, sleeping 200 us between rounds. Any failure closes everything it opened. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/api.h"
#include "core/coll.h"
#include "core/err.h"
#include "core/registry.h"
#include "core/state.h"
#include "util/clock.h"
#include "util/crowd.h"
#include "util/log.h"
#include "util/param.h"
#include "util/subnet.h"

#define ROUND_SLEEP_NS 200000
#define NEED_CONN      1       /* we connect to this rank */
#define NEED_ACC       2       /* this rank connects to us */
#define TAG_PAIR       0x8000u /* two ranks: the connector's right link, the acceptor's left */

struct coll_connect_state {
    struct coll_comm *c;
    struct coll_listen *l;
    struct jaccl_conn_setup setup;
    struct coll_topo topo;
    struct jaccl_handle *hs;
    struct jaccl_connector **conn;
    char (*desc)[112];
    char (*route)[256]; /* the cables a connection we opened took, for its INFO line */
    uint8_t *need;      /* NEED_* bits: connections to this rank still missing */
    int missing;
};

/* Decodes every handle and finds ours by the listen secret; WARNs on anything unusable. */
static int decode_all(struct coll_connect_state *x, void **handles, int nranks, int *me)
{
    const struct jaccl_handle *mine = &x->l->jh;
    *me = -1;
    for (int i = 0; i < nranks; i++) {
        const char *why = NULL;
        struct jaccl_handle *h = &x->hs[i];
        if (jaccl_handle_decode(handles[i], JH_COLL, h, &why) != 0) {
            JWARN("CollNet connect: handle of rank %d is unusable: %s", i, why);
            return -EINVAL;
        }
        if (h->nlanes != mine->nlanes || h->fabric != mine->fabric) {
            JWARN("CollNet connect: rank %d runs %d ring wires on fabric %d, this rank %d on %d: "
                  "NCCL_JACCL_RING_WIRES and NCCL_JACCL_FABRIC must match on every rank",
                  i, (h->nlanes - 1) / 2, h->fabric, (mine->nlanes - 1) / 2, mine->fabric);
            return -EINVAL;
        }
        if (h->secret == mine->secret &&
            memcmp(&h->links[0], &mine->links[0], sizeof(h->links[0])) == 0) {
            if (*me >= 0) {
                JWARN("CollNet connect: this rank's handle appears twice (%d and %d)", *me, i);
                return -EINVAL;
            }
            *me = i;
        }
        jaccl_sockaddr_str(jaccl_handle_addr(h), x->desc[i], sizeof(x->desc[i]));
    }
    if (*me < 0)
        JWARN("CollNet connect: this rank's own handle is not among the %d handles", nranks);
    return *me < 0 ? -EINVAL : 0;
}

/* Ranks whose handle names this rank's host: those sharing its CPUs. */
static int host_ranks(const struct jaccl_handle *hs, int nranks, int me)
{
    int n = 0;
    for (int i = 0; i < nranks; i++)
        n += hs[i].host == hs[me].host;
    return n;
}

/* NCCL_JACCL_ALGO names an algorithm the cables cannot carry: one WARN naming a cable it
 * lacks (the ring runs instead: choose.c). */
static void warn_uncarried(const struct coll_connect_state *x, enum algo_id a)
{
    int i, j;
    if (!coll_topo_missing(&x->topo, a, &i, &j) || x->c->rank != 0)
        return;
    JWARN("CollNet: NCCL_JACCL_ALGO=%s needs a cable between rank %d (%s) and rank %d (%s), "
          "which this cluster lacks (%s): using the ring",
          algo_name(a), i, x->desc[i], j, x->desc[j], x->topo.what);
}

/* The algorithms wanted that the cables carry: what this comm connects for. */
static void choose(struct coll_connect_state *x)
{
    struct coll_comm *c = x->c;
    const char *algo = jaccl_param_str(JP_ALGO); /* one of the algorithms' names, or "auto" */
    struct algo_choice *ch = &c->choice;
    ch->wires = c->wires;
    ch->mesh_max_bytes = (size_t)jaccl_param_int(JP_MESH_MAX_BYTES);
    ch->mesh_max_ranks = (int)jaccl_param_int(JP_MESH_MAX_RANKS);
    ch->rhd_min_bytes = (size_t)jaccl_param_int(JP_RHD_MIN_BYTES);
    ch->rhd_max_bytes = (size_t)jaccl_param_int(JP_RHD_MAX_BYTES);
    ch->force = algo_by_name(algo);
    c->ring = x->topo.ring;
    ch->ring = &c->ring;
    unsigned carried = coll_topo_carries(&x->topo);
    ch->usable = algo_wanted(c->nranks, ch) & carried;
    if (ch->force != ALGO_AUTO && !(carried & ALGO_BIT(ch->force)))
        warn_uncarried(x, (enum algo_id)ch->force);
}

/* Opens our connection to rank p: over the cables that reach it (a verbs comm: from its own
 * device), else through a relay (tcp). */
static int start_one(struct coll_connect_state *x, int p, uint32_t tag)
{
    struct coll_comm *c = x->c;
    int socks = c->ops->lanes_are_socks;
    struct jaccl_route r;
    int direct = jaccl_route_direct(&x->hs[p], c->dev, socks ? JACCL_ROUTE_ANY : JACCL_ROUTE_PREF,
                                    &r) == 0;
    struct jaccl_conn_setup s = x->setup;
    s.peer = x->desc[p]; /* the address it reached, and its relay */
    s.peer_len = sizeof(x->desc[p]);
    s.route = x->route[p];
    s.route_len = sizeof(x->route[p]);
    int rc = direct || socks
                     ? jaccl_connector_start(&x->hs[p], direct ? &r : NULL, tag, &s, &x->conn[p])
                     : -ENETUNREACH;
    if (rc == -ENETUNREACH && !socks)
        JWARN("CollNet connect: no cable of device %d (%s) reaches rank %d (%s): on verbs a "
              "CollNet comm keeps to one RDMA device and cannot relay; with a cable per "
              "neighbour on separate devices, use NCCL_JACCL_FABRIC=tcp (docs/topologies.md)",
              c->dev, jaccl_dev_name(c->dev), p, x->desc[p]);
    else if (rc != 0)
        JWARN("CollNet connect: cannot start connecting to rank %d (%s)", p, x->desc[p]);
    return rc;
}

/* Each pair shares one connection, opened by the lower rank; with two ranks each opens one,
 * as its link to its right neighbour, so that each rank gets two I/O paths (section 1 of
 * docs/collectives.md). Only the peers an algorithm it may run talks to. */
static int start_connectors(struct coll_connect_state *x)
{
    struct coll_comm *c = x->c;
    int pair = c->nranks == 2;
    for (int p = 0; p < c->nranks; p++) {
        if (p == c->rank || !coll_algos_to(c, p))
            continue;
        x->need[p] = pair ? NEED_CONN | NEED_ACC : p > c->rank ? NEED_CONN : NEED_ACC;
        x->missing += pair ? 2 : 1;
        uint32_t tag = (uint32_t)COLL_TAG_MAGIC << 16 | (pair ? TAG_PAIR : 0) | (uint32_t)c->rank;
        int rc = x->need[p] & NEED_CONN ? start_one(x, p, tag) : 0;
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int bind_peer(struct coll_connect_state *x, struct fab_ep *ep, int peer, int need)
{
    enum coll_link_role role = x->c->nranks != 2   ? COLL_LINK_BOTH
                               : need == NEED_CONN ? COLL_LINK_RIGHT
                                                   : COLL_LINK_LEFT;
    int rc = coll_link_bind(x->c, ep, peer, role, x->desc[peer]);
    if (rc != 0) {
        x->c->ops->ep_close(ep);
        return rc;
    }
    x->need[peer] &= (uint8_t)~need;
    x->missing--;
    if (need == NEED_CONN)
        JINFO(NCCL_NET, "CollNet rank %d: connected to rank %d over %s", x->c->rank, peer,
              x->route[peer]);
    else
        JINFO(NCCL_NET, "CollNet rank %d: rank %d connected from %s", x->c->rank, peer,
              x->desc[peer]);
    return 0;
}

/* A connection accepted from a rank we expect, or dropped with a WARN. */
static int on_accept(struct coll_connect_state *x, struct fab_ep *ep, uint32_t tag,
                     const char *peer)
{
    int from = (int)(tag & 0x7fff), pair = (tag & TAG_PAIR) != 0;
    if (tag >> 16 != COLL_TAG_MAGIC || from >= x->c->nranks || !(x->need[from] & NEED_ACC) ||
        pair != (x->c->nranks == 2)) {
        JWARN("CollNet connect: dropped an unexpected connection from %s (tag %#x)", peer, tag);
        x->c->ops->ep_close(ep);
        return 0;
    }
    snprintf(x->desc[from], sizeof(x->desc[from]), "%s", peer);
    return bind_peer(x, ep, from, NEED_ACC);
}

/* Every connection of a CollNet comm shares its domain and CQ: one device. */
static int accept_setup(void *arg, int dev, struct jaccl_conn_setup *out)
{
    struct coll_connect_state *x = arg;
    if (dev != x->c->dev && !x->c->ops->lanes_are_socks) {
        JWARN("CollNet connect: a peer reached this rank by device %d (%s), but its comm is on "
              "device %d: on verbs a CollNet comm keeps to one RDMA device",
              dev, jaccl_dev_name(dev), x->c->dev);
        return -EINVAL;
    }
    *out = x->setup;
    return 0;
}

/* One round over every connector and the listener: 1 if anything completed, 0 if nothing did,
 * a negative code of core/err.h on failure. */
static int round_once(struct coll_connect_state *x)
{
    int moved = 0;
    for (int p = 0; p < x->c->nranks; p++) {
        struct fab_ep *ep = NULL;
        if (!x->conn[p])
            continue;
        int r = jaccl_connector_step(x->conn[p], &ep);
        if (r != 0)
            x->conn[p] = NULL; /* done or failed: freed either way */
        if (r == 1)
            r = bind_peer(x, ep, p, NEED_CONN);
        if (r < 0)
            return r;
        moved |= r == 1;
    }
    struct fab_ep *ep = NULL;
    uint32_t tag = 0;
    char peer[112] = "";
    int r = jaccl_listener_accept(x->l->listener, accept_setup, x, &ep, &tag, peer, sizeof(peer));
    if (r == 1) {
        int rc = on_accept(x, ep, tag, peer);
        if (rc != 0)
            return rc;
    }
    if (r < 0)
        return r;
    return moved || r == 1;
}

static void warn_missing(const struct coll_connect_state *x)
{
    char list[256] = "";
    size_t off = 0;
    for (int p = 0; p < x->c->nranks && off < sizeof(list); p++)
        if (x->need[p])
            off += (size_t)snprintf(list + off, sizeof(list) - off, " %d (%s)", p, x->desc[p]);
    JWARN("CollNet connect: rank %d timed out after %.0f s waiting for rank(s):%s", x->c->rank,
          (double)jaccl_timeout_ns() / 1e9, list);
}

static int connect_all(struct coll_connect_state *x)
{
    uint64_t deadline = jaccl_deadline_ns(jaccl_timeout_ns());
    int rc = start_connectors(x);
    if (rc != 0)
        return rc;
    while (x->missing > 0) {
        int r = round_once(x);
        if (r < 0)
            return r;
        if (jaccl_expired(deadline)) {
            warn_missing(x);
            return -ETIMEDOUT;
        }
        if (r == 0)
            nanosleep(&(struct timespec){0, ROUND_SLEEP_NS}, NULL);
    }
    return 0;
}

static int bound_links(const struct coll_comm *c)
{
    int n = 0;
    for (int i = 0; i < c->nlinks; i++)
        n += c->links[i].peer >= 0;
    return n;
}

static int finish(struct coll_connect_state *x)
{
    struct coll_comm *c = x->c;
    if (coll_stage_alloc(c) != 0 || !(c->h = coll_handle_new(COMM_COLL, c)) ||
        jaccl_reg_add(c->req, sizeof(c->req[0]), COLL_QSIZE, JO_COLL_REQ, c) != 0) {
        JWARN("CollNet connect: out of memory for staging buffers");
        return -ENOMEM;
    }
    c->h->hdr.dev = c->dev;
    c->h->hdr.dom = c->dom;
    if (coll_thread_start(c) != 0) {
        JWARN("CollNet connect: cannot start the progress thread");
        return -EAGAIN;
    }
    char algos[64] = "";
    for (int a = 0, off = 0; a < ALGO_NUM_IDS; a++)
        if (c->choice.usable & ALGO_BIT(a))
            off += snprintf(algos + off, sizeof(algos) - (size_t)off, "%s%s", off ? "," : "",
                            algo_name((enum algo_id)a));
    JINFO(NCCL_INIT | NCCL_NET,
          "CollNet comm: rank %d of %d on device %d: %s; ring position %d, %d wire(s); "
          "algorithms %s; %d link(s)",
          c->rank, c->nranks, c->dev, x->topo.what, c->ring.pos_of[c->rank], c->wires, algos,
          bound_links(c));
    return 0;
}

static void cx_free(struct coll_connect_state *x, int failed)
{
    for (int p = 0; x->conn && p < (x->c ? x->c->nranks : 0); p++)
        if (x->conn[p])
            jaccl_connector_abort(x->conn[p]);
    if (failed && x->c)
        coll_comm_free(x->c);
    coll_topo_free(&x->topo);
    free(x->hs);
    free(x->conn);
    free(x->desc);
    free(x->route);
    free(x->need);
}

static int cx_init(struct coll_connect_state *x, void **handles, int nranks)
{
    x->hs = calloc((size_t)nranks, sizeof(*x->hs));
    x->conn = calloc((size_t)nranks, sizeof(*x->conn));
    x->desc = calloc((size_t)nranks, sizeof(*x->desc));
    x->route = calloc((size_t)nranks, sizeof(*x->route));
    x->need = calloc((size_t)nranks, 1);
    int me;
    if (!x->hs || !x->conn || !x->desc || !x->route || !x->need)
        return -ENOMEM;
    int rc = decode_all(x, handles, nranks, &me);
    if (rc == 0)
        rc = coll_topo_build(&x->topo, x->hs, nranks);
    if (rc != 0)
        return rc;
    /* Every cable between ring neighbours carries a wire, both ways (the lanes of a
     * connection take its cables in turn: core/route.h). */
    int wires = coll_topo_ring_cables(&x->topo);
    wires = wires < x->l->wires ? x->l->wires : wires > ALGO_MAX_WIRES ? ALGO_MAX_WIRES : wires;
    x->c = coll_comm_new(x->l->h->hdr.dev, nranks, me, wires);
    if (!x->c)
        return -ENOMEM;
    /* How crowded this host's CPUs are by our own ranks: its endpoints' attribute (crowd.h). */
    int local = host_ranks(x->hs, nranks, me);
    x->c->host_ranks = local;
    JINFO(NCCL_INIT, "CollNet rank %d: %d of %d ranks on this host, %d CPUs usable", me, local,
          nranks, jaccl_cpus_usable());
    choose(x);
    x->setup = coll_setup(x->c);
    jaccl_listener_expect(x->l->listener, x->c->ops->side_socks(&x->setup.attr));
    return 0;
}

static int coll_connect(void *handles[], int nranks, int rank, void *listenComm, void **collComm)
{
    if (!collComm)
        return -EFAULT;
    *collComm = NULL;
    struct coll_connect_state x = {
            .l = coll_handle_obj(listenComm, COMM_COLL_LISTEN, "CollNet connect")};
    if (!x.l)
        return -EBADF;
    if (!handles || nranks < 1 || nranks > ALGO_MAX_RANKS || rank < 0 || rank >= nranks) {
        JWARN("CollNet connect: invalid group (rank %d of %d, at most %d ranks)", rank, nranks,
              ALGO_MAX_RANKS);
        return handles ? -EINVAL : -EFAULT;
    }
    int rc = cx_init(&x, handles, nranks);
    if (rc == 0)
        rc = connect_all(&x);
    if (rc == 0)
        rc = finish(&x);
    int failed = rc != 0;
    if (!failed && x.c->rank != rank)
        JINFO(NCCL_INIT, "CollNet connect: own handle found at index %d (NCCL said rank %d)",
              x.c->rank, rank);
    struct coll_comm *c = x.c;
    cx_free(&x, failed);
    if (failed)
        return rc;
    *collComm = c->h;
    return 0;
}

ncclResult_t jaccl_coll_connect(void *handles[], int nranks, int rank, void *listenComm,
                                void **collComm)
{
    return jaccl_err_to_nccl(coll_connect(handles, nranks, rank, listenComm, collComm));
}
