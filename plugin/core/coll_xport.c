/* SPDX-License-Identifier: BSD-3-Clause */
/* The transport under the collective algorithms: ordered streams per (peer, data lane) with
 * credit-based flow control, completion dispatch, and failure handling.
 *
 * Credits: a receiver posts receives in schedule order and tells the sender, on the control
 * lane, how many it has posted on each data lane so far (a cumulative count, so a lost or late
 * message is harmless and the latest one is all that matters). The sender never posts past that
 * count: nothing is ever sent that the peer has no receive for, as verbs UC requires.
 * Control messages are bounded too: each one carries at least one new grant, and a grant stays
 * outstanding until its data arrives, so at most ALGO_POST_MAX per data lane are ever unread;
 * COLL_CTRL_N control receives per link cover that. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/coll.h"
#include "util/counters.h"
#include "util/log.h"

/* Lanes < W go out to the right neighbour and come in from the left one (ring direction 0,
 * and the mesh's lane 0); lanes >= W the other way round. */
int coll_x_link(const struct coll_comm *c, int peer, int lane, int rx)
{
    int as_right = (lane < c->wires) != (rx != 0);
    return as_right ? c->link_r[peer] : c->link_l[peer];
}

struct coll_stream *coll_x_stream(struct coll_comm *c, int peer, int lane, int rx)
{
    return &c->links[coll_x_link(c, peer, lane, rx)].s[lane];
}

static int x_wires(const struct algo_xport *x)
{
    return xport_ccomm(x)->wires;
}

/* A peer that closed its comm, if any: a connection going down after it most likely did so
 * because of it (its other peers give up on the group and close), so the WARN names it too. */
static const struct coll_link *left_peer(const struct coll_comm *c)
{
    for (int i = 0; i < c->nlinks; i++)
        if (c->links[i].bye_rcvd && c->links[i].peer >= 0)
            return &c->links[i];
    return NULL;
}

/* The peer of link l is gone (its goodbye, or its connection went down) and this rank's
 * running operation still needs it: the operation can never complete, so it fails now instead
 * of waiting for a timeout. */
static int peer_left(struct coll_comm *c, const struct coll_link *l, const char *what, int lane)
{
    unsigned long long seq = c->cur ? (unsigned long long)c->cur->seq : 0ull;
    const struct coll_link *left = left_peer(c);
    if (!l->down[0])
        return coll_fail(c, -ECONNRESET,
                         "rank %d (%s) closed its comm, but this rank's collective #%llu still "
                         "needs to %s it on lane %d",
                         l->peer, l->desc, seq, what, lane);
    if (left && left != l)
        return coll_fail(c, l->down_rc,
                         "connection to rank %d (%s) went down (%s) after rank %d (%s) closed "
                         "its comm, but this rank's collective #%llu still needs to %s it on "
                         "lane %d",
                         l->peer, l->desc, l->down, left->peer, left->desc, seq, what, lane);
    return coll_fail(c, l->down_rc,
                     "connection to rank %d (%s) went down (%s), but this rank's collective "
                     "#%llu still needs to %s it on lane %d",
                     l->peer, l->desc, l->down, seq, what, lane);
}

/* An endpoint that broke under us: nothing more is posted on it, and its link goes down
 * (link_down) once the completions already queued are dispatched (coll_x_poll): the fabric
 * queues every message that landed before it reports the failure, and a link taken down
 * before those are counted would lose them. 1 while the link is broken but not down yet. */
static int link_broken(struct coll_comm *c, struct coll_link *l)
{
    if (!l->broken && l->ep) /* after the peer's goodbye too: its connection then goes down */
        l->broken = c->ops->ep_error(l->ep, NULL);
    return l->broken != 0 && l->ep != NULL;
}

/* Callers ask only when they want to send (or post) the next message of an operation. Once
 * nxt is armed, cur has posted all its sends, so the one asking is nxt: it is judged when it
 * becomes cur (it asks again), and cur may still complete with what is already on its way. */
static int x_can_send(struct algo_xport *x, int peer, int lane)
{
    struct coll_comm *c = xport_comm(x);
    struct coll_link *l = &c->links[coll_x_link(c, peer, lane, 0)];
    struct coll_stream *s = &l->s[lane];
    if (link_broken(c, l))
        return 0;
    if (l->final && s->granted == s->sent) { /* its grants are final: no receive is coming */
        if (!(c->nxt && c->nxt_armed))
            peer_left(c, l, "send to", lane);
        return 0;
    }
    return (int32_t)(s->granted - s->sent) > 0 && s->sent - s->sdone < ALGO_SEND_MAX;
}

static int x_can_recv(struct algo_xport *x, int peer, int lane)
{
    struct coll_comm *c = xport_comm(x);
    struct coll_link *l = &c->links[coll_x_link(c, peer, lane, 1)];
    struct coll_stream *s = &l->s[lane];
    if (link_broken(c, l))
        return 0;
    if (l->final && (int32_t)(coll_x_aposted(s) - l->peer_sent[lane]) >= 0) {
        if (!c->nxt) /* else nxt asks: cur posted all its receives before nxt began */
            peer_left(c, l, "receive from", lane); /* it sent its last message already */
        return 0;
    }
    return s->nstand > 0 || s->posted - s->landed < ALGO_POST_MAX;
}

uint32_t coll_x_aposted(const struct coll_stream *s)
{
    return s->posted - s->nstand;
}

/* A standing receive that landed before an operation took it is not the operations' yet. */
uint32_t coll_x_alanded(const struct coll_stream *s)
{
    uint32_t ap = coll_x_aposted(s);
    return (int32_t)(s->landed - ap) > 0 ? ap : s->landed;
}

static uint32_t x_sent(struct algo_xport *x, int peer, int lane)
{
    return coll_x_stream(xport_comm(x), peer, lane, 0)->sent;
}

static uint32_t x_sdone(struct algo_xport *x, int peer, int lane)
{
    return coll_x_stream(xport_comm(x), peer, lane, 0)->sdone;
}

static uint32_t x_posted(struct algo_xport *x, int peer, int lane)
{
    return coll_x_aposted(coll_x_stream(xport_comm(x), peer, lane, 1));
}

static uint32_t x_landed(struct algo_xport *x, int peer, int lane)
{
    return coll_x_alanded(coll_x_stream(xport_comm(x), peer, lane, 1));
}

static char *x_slot(struct algo_xport *x, int peer, int lane, int i, struct fab_mr **mr)
{
    struct coll_comm *c = xport_comm(x);
    int st = coll_x_stream(c, peer, lane, 1)->stage;
    if (mr)
        *mr = c->stage_mr;
    return c->stage_mem + ((size_t)st * ALGO_SLOTS + (size_t)i) * ALGO_FRAME_MAX;
}

static int x_slot_take(struct algo_xport *x, int peer, int lane)
{
    struct coll_stream *s = coll_x_stream(xport_comm(x), peer, lane, 1);
    int st = coll_x_stand_slot(s); /* the next receive is a standing one: it is there already */
    if (st >= 0)
        return st;
    for (int i = 0; i < ALGO_SLOTS; i++) {
        if (!(s->busy & (1u << i))) {
            s->busy |= (uint8_t)(1u << i);
            return i;
        }
    }
    return -1;
}

static void x_slot_give(struct algo_xport *x, int peer, int lane, int i)
{
    coll_x_stream(xport_comm(x), peer, lane, 1)->busy &= (uint8_t) ~(1u << i);
}

static char *x_own(struct algo_xport *x, int idx)
{
    struct coll_comm *c = xport_comm(x);
    return c->stage_mem + ((size_t)c->nstage * ALGO_SLOTS + (size_t)idx) * ALGO_FRAME_MAX;
}

/* A post fails when the endpoint broke under us (the completion saying why may still be on
 * its way): report the endpoint's reason, not an errno. */
static int post_failed(struct coll_comm *c, struct coll_link *l, int rc, const char *what,
                       size_t len)
{
    const char *why = NULL;
    if (c->ops->ep_error(l->ep, &why) != 0 && why)
        return coll_fail(c, -ECONNRESET, "connection to rank %d (%s) failed: %s", l->peer, l->desc,
                         why);
    return coll_fail(c, -EIO, "posting a %zu-byte %s for rank %d (%s) failed (%d)", len, what,
                     l->peer, l->desc, rc);
}

/* The endpoint was closed: the peer is gone (link_down), or a failure is already recorded. */
static int link_closed(struct coll_comm *c, const struct coll_link *l, const char *what, int lane)
{
    if (l->final)
        return peer_left(c, l, what, lane);
    return coll_fail(c, -ECONNRESET, "connection to rank %d (%s) is closed", l->peer, l->desc);
}

static int x_send(struct algo_xport *x, int peer, int lane, const void *buf, size_t len,
                  struct fab_mr *mr)
{
    struct coll_comm *c = xport_comm(x);
    int li = coll_x_link(c, peer, lane, 0);
    struct coll_link *l = &c->links[li];
    struct coll_stream *s = &l->s[lane];
    if (!l->ep)
        return link_closed(c, l, "send to", lane);
    int rides = lane == 0 && c->ops->post_send_imm;
    /* First: it may post standing receives, and a post that fails may fail the comm, which
     * closes every endpoint. */
    uint32_t imm = rides ? coll_x_ride(c, peer) : 0;
    if (!l->ep)
        return jaccl_sticky_status(&c->fail) ? jaccl_sticky_status(&c->fail)
                                             : link_closed(c, l, "send to", lane);
    struct fab_mr *lmr = coll_mr_in(c, l->dom, mr);
    uint64_t wr = COLL_WR(COLL_WR_DSEND, li, lane, s->sent);
    int rc = rides ? c->ops->post_send_imm(l->ep, lane, buf, len, lmr, imm, wr)
                   : c->ops->post_send(l->ep, lane, buf, len, lmr, wr);
    if (rc != 0)
        return post_failed(c, l, rc, "send", len);
    s->sent++;
    return 0;
}

static int x_recv(struct algo_xport *x, int peer, int lane, void *buf, size_t len,
                  struct fab_mr *mr)
{
    struct coll_comm *c = xport_comm(x);
    int li = coll_x_link(c, peer, lane, 1);
    struct coll_link *l = &c->links[li];
    struct coll_stream *s = &l->s[lane];
    /* Before the link check: a standing receive may hold bytes the peer sent before it left
     * (x_can_recv said whether it did). */
    if (s->nstand > 0)
        return coll_x_stand_take(c, l, s, buf, len);
    if (!l->ep)
        return link_closed(c, l, "receive from", lane);
    int rc = c->ops->post_recv(l->ep, lane, buf, len, coll_mr_in(c, l->dom, mr),
                               COLL_WR(COLL_WR_DRECV, li, lane, s->posted));
    if (rc != 0)
        return post_failed(c, l, rc, "receive", len);
    s->exp_len[s->posted % ALGO_POST_MAX] = (uint32_t)len;
    s->stand_slot[s->posted % ALGO_POST_MAX] = -1;
    s->posted++;
    return 0;
}

/* ---- failures ---- */

void coll_x_close_all(struct coll_comm *c)
{
    for (int i = 0; i < c->nlinks; i++) {
        if (c->links[i].ep)
            c->ops->ep_close(c->links[i].ep);
        c->links[i].ep = NULL;
    }
}

/* Closing every endpoint stops late data from landing in a buffer the caller got back, and
 * tells every connected peer at once, so a failure spreads in one hop instead of a timeout. */
int coll_fail(struct coll_comm *c, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int first = jaccl_sticky_vset(&c->fail, err, fmt, ap);
    va_end(ap);
    if (!first)
        return jaccl_sticky_status(&c->fail);
    const char *msg = "";
    jaccl_sticky_get(&c->fail, &msg);
    if (jaccl_sticky_warn_once(&c->fail))
        JWARN("CollNet rank %d of %d (device %d): %s", c->rank, c->nranks, c->dev, msg);
    coll_x_close_all(c);
    return err;
}

/* ---- completions ---- */

/* A link that owes us nothing more: its peer is gone, or we close. */
static int link_done(struct coll_comm *c, const struct coll_link *l)
{
    return l->final || atomic_load(&c->closing);
}

/* The link's connection went down: the peer closed it (after its goodbye, or failing its own
 * next operation), died, or broke it. Everything that landed before is good, nothing more
 * will come, and nothing we send can arrive: the link is closed, what landed becomes the
 * peer's final count, our sends in flight are done with, and only an operation that still
 * needs the peer fails (coll_x_check_left now, x_can_send and x_can_recv as it asks). So one
 * rank leaving never fails an operation that every rank had finished sending for, however
 * slow this rank is to finish it. */
static void link_down(struct coll_comm *c, struct coll_link *l, enum fab_wc_status st)
{
    const char *why = NULL;
    if (!atomic_load(&c->closing) && !l->bye_rcvd) {
        l->down_rc = jaccl_wc_failure(c->ops, l->ep, st, &why);
        snprintf(l->down, sizeof(l->down), "%s", why ? why : fab_wc_status_str(st));
        JINFO(NCCL_NET, "CollNet rank %d: connection to rank %d (%s) went down: %s", c->rank,
              l->peer, l->desc, l->down);
    }
    c->ops->ep_close(l->ep);
    l->ep = NULL;
    l->final = 1;
    for (int i = 0; i < c->ndata; i++) {
        struct coll_stream *s = &l->s[i];
        if (!l->bye_rcvd || (int32_t)(l->peer_sent[i] - s->landed) > 0)
            l->peer_sent[i] = s->landed;
        s->granted = s->sent;
        s->sdone = s->sent;
    }
    if (!atomic_load(&c->closing))
        coll_x_check_left(c);
}

/* A control message (credits, goodbye), control receive or standing receive that could not be
 * posted: no operation needs it by itself, so an endpoint that broke is the link going down, not
 * a failure of the comm. */
void coll_x_aside_failed(struct coll_comm *c, struct coll_link *l, int rc, const char *what,
                         size_t len)
{
    if (!link_broken(c, l))
        post_failed(c, l, rc, what, len);
}

/* Whether link l's peer runs operation q, as far as its last control message says (a peer at
 * another operation has nothing to say about q); fails the comm if it runs another one. */
static int check_link_sig(struct coll_comm *c, const struct coll_link *l, const struct coll_req *q)
{
    if (l->peer < 0 || l->peer_seq != q->seq || l->peer_sig == q->op.sig)
        return 0;
    return coll_fail(
            c, -EINVAL,
            "rank %d (%s) runs a different collective as operation #%llu than this rank "
            "(%s of %zu bytes): every rank must issue the same operations in the same order",
            l->peer, l->desc, (unsigned long long)q->seq, algo_kind_name(q->op.g.kind),
            algo_total(&q->op.g));
}

void coll_x_check_sig(struct coll_comm *c, const struct coll_req *q)
{
    for (int i = 0; i < c->nlinks; i++)
        if (check_link_sig(c, &c->links[i], q) != 0)
            return;
}

/* Counts a well-behaved peer can send: the control lane is ordered, so grants never go back;
 * a receiver posts at most ALGO_POST_MAX past what has landed (<= what we sent); a sender never
 * sends past our grants. Anything else is the peer's bug. (Its send count may trail what has
 * landed here: data lanes may overtake the control lane.) */
static int ctrl_counts_ok(const struct coll_comm *c, const struct coll_link *l,
                          const struct coll_ctrl *m)
{
    for (int i = 0; i < c->ndata; i++) {
        const struct coll_stream *s = &l->s[i];
        /* Lane 0's grants also ride on the data (coll_x_rode), which may overtake this one. */
        int rides = i == 0 && c->ops->post_send_imm;
        if ((!rides && (int32_t)(m->posted[i] - s->granted) < 0) ||
            (int32_t)(m->posted[i] - s->sent) > ALGO_POST_MAX ||
            (int32_t)(m->sent[i] - s->posted) > 0)
            return 0;
    }
    return 1;
}

void coll_x_nxt_begins(struct coll_comm *c)
{
    for (int li = 0; li < c->nlinks; li++)
        for (int i = 0; i < c->ndata; i++)
            c->links[li].s[i].nxt_from = coll_x_aposted(&c->links[li].s[i]);
}

/* cur's receives on a stream are those below nxt_from while nxt runs, else all posted ones.
 * One the peer never sent can never land. nxt's are judged once it becomes cur: cur may still
 * complete correctly with the data already on its way. */
void coll_x_check_left(struct coll_comm *c)
{
    for (int li = 0; li < c->nlinks; li++) {
        const struct coll_link *l = &c->links[li];
        for (int i = 0; l->final && i < c->ndata; i++) {
            uint32_t need = c->nxt ? l->s[i].nxt_from : coll_x_aposted(&l->s[i]);
            if ((int32_t)(need - l->peer_sent[i]) > 0) {
                peer_left(c, l, "receive from", i);
                return;
            }
        }
    }
}

/* The peer's goodbye: its counts are final. What this rank still wants to send or receive
 * beyond them is checked as it asks (x_can_send, x_can_recv), what it already posted here. */
static void on_bye(struct coll_comm *c, struct coll_link *l, const struct coll_ctrl *m)
{
    l->bye_rcvd = 1;
    l->final = 1;
    JINFO(NCCL_NET, "CollNet rank %d: rank %d (%s) closed its comm", c->rank, l->peer, l->desc);
    for (int i = 0; i < c->ndata; i++)
        l->peer_sent[i] = m->sent[i];
    coll_x_check_left(c);
}

static void on_ctrl(struct coll_comm *c, struct coll_link *l, int li, uint32_t idx, uint32_t len)
{
    struct coll_ctrl m;
    if (coll_ctrl_decode(&l->rx[idx % COLL_CTRL_N], len, c->ndata, l->peer, &m) != 0 ||
        !ctrl_counts_ok(c, l, &m)) {
        coll_fail(c, -EPROTO, "malformed control message from rank %d (%s): %u bytes", l->peer,
                  l->desc, len);
        return;
    }
    for (int i = 0; i < c->ndata; i++)
        if ((int32_t)(m.posted[i] - l->s[i].granted) > 0)
            l->s[i].granted = m.posted[i];
    l->peer_seq = m.op_seq;
    l->peer_sig = m.op_sig;
    if (m.flags & COLL_CTRL_BYE)
        on_bye(c, l, &m);
    /* Only this link's view changed: arming an operation checks every link (coll_x_check_sig). */
    if (c->cur)
        check_link_sig(c, l, c->cur);
    if (c->nxt && c->nxt_armed)
        check_link_sig(c, l, c->nxt);
    if (jaccl_sticky_status(&c->fail) != 0)
        return;
    int rc = c->ops->post_recv(l->ep, c->ndata, &l->rx[idx % COLL_CTRL_N], sizeof(m),
                               coll_mr_in(c, l->dom, c->ctrl_mr),
                               COLL_WR(COLL_WR_CRECV, li, c->ndata, idx));
    if (rc != 0 && !link_done(c, l))
        coll_x_aside_failed(c, l, rc, "control receive", sizeof(m));
}

int coll_x_bad_len(struct coll_comm *c, const struct coll_link *l, int lane, uint32_t got,
                   uint32_t want, uint32_t idx)
{
    return coll_fail(c, -EMSGSIZE,
                     "rank %d (%s) sent %u bytes on lane %d where %u were expected (message %u): "
                     "the ranks disagree about the operation's parameters",
                     l->peer, l->desc, got, lane, want, idx);
}

static void on_data(struct coll_comm *c, struct coll_link *l, const struct fab_wc *wc)
{
    int lane = COLL_WR_LANE(wc->wr_id);
    struct coll_stream *s = &l->s[lane];
    uint32_t idx = COLL_WR_IDX(wc->wr_id), i = idx % ALGO_POST_MAX;
    if (lane == 0 && c->ops->post_send_imm)
        coll_x_rode(c, l, wc->imm);
    if (idx == s->landed && s->stand_slot[i] >= 0) {
        s->landed++;
        coll_x_stand_landed(c, l, s, idx, wc->len);
        return;
    }
    if (idx != s->landed || wc->len != s->exp_len[i]) {
        coll_x_bad_len(c, l, lane, wc->len, s->exp_len[i], idx);
        return;
    }
    s->landed++;
}

static void on_wc(struct coll_comm *c, const struct fab_wc *wc)
{
    int li = COLL_WR_LINK(wc->wr_id);
    struct coll_link *l = li < c->nlinks ? &c->links[li] : NULL;
    if (!l || l->peer < 0 || !l->ep)
        return; /* a connection that never completed, or one we closed */
    if (wc->status != FAB_WC_OK) {
        link_down(c, l, wc->status);
        return;
    }
    switch (COLL_WR_TYPE(wc->wr_id)) {
    case COLL_WR_DSEND:
        l->s[COLL_WR_LANE(wc->wr_id)].sdone++;
        break;
    case COLL_WR_DRECV:
        on_data(c, l, wc);
        break;
    case COLL_WR_CSEND:
        l->tx_done++;
        break;
    case COLL_WR_CRECV:
        on_ctrl(c, l, li, COLL_WR_IDX(wc->wr_id), wc->len);
        break;
    default:
        coll_fail(c, -EFAULT, "completion with unknown id %#llx", (unsigned long long)wc->wr_id);
    }
}

#define POLL_DEFER 16 /* links whose failure is held back until the queue is drained */

/* Holds back the first failed completion of each link (the one that says why; the flushed
 * ones behind it change nothing once it is handled: the link is closed or the comm failed).
 * 1 if wc was held back or is such a follower. */
static int defer_failure(const struct fab_wc *wc, struct fab_wc *failed, int *nfailed)
{
    for (int i = 0; i < *nfailed; i++)
        if (COLL_WR_LINK(failed[i].wr_id) == COLL_WR_LINK(wc->wr_id))
            return 1;
    if (*nfailed == POLL_DEFER)
        return 0;
    failed[(*nfailed)++] = *wc;
    return 1;
}

/* Failures are dispatched after the successful completions already queued: when a peer
 * leaves, another rank giving up on the group may close its connection to us before we read
 * the leaver's goodbye, and the WARN should name the rank that left, not the messenger. */
int coll_x_poll(struct coll_comm *c)
{
    struct fab_wc wc[32], failed[POLL_DEFER];
    int n, total = 0, nfailed = 0;
    while ((n = c->ops->cq_poll(c->cq, wc, 32)) > 0) {
        for (int i = 0; i < n; i++)
            if (wc[i].status == FAB_WC_OK || !defer_failure(&wc[i], failed, &nfailed))
                on_wc(c, &wc[i]);
        total += n;
        if (n < 32)
            break; /* the poll drove the endpoints and this was all: another would only cost
                    * them a readiness check each (a system call per TCP endpoint) */
    }
    for (int i = 0; i < nfailed; i++)
        on_wc(c, &failed[i]);
    if (n < 0)
        coll_fail(c, n, "its completion queue lost a completion (out of memory)");
    for (int i = 0; i < c->nlinks; i++) /* broken, and every queued completion dispatched */
        if (c->links[i].broken && c->links[i].ep)
            link_down(c, &c->links[i], fab_wc_status_of(c->links[i].broken));
    return total;
}

/* ---- credits ---- */

static void send_ctrl(struct coll_comm *c, struct coll_link *l, int li, uint32_t flags)
{
    struct coll_ctrl *m = &l->tx[l->tx_posted % COLL_CTRL_N];
    memset(m, 0, sizeof(*m));
    m->magic = COLL_CTRL_MAGIC;
    m->ndata = (uint16_t)c->ndata;
    m->src = (uint16_t)c->rank;
    m->op_seq = c->cur ? c->cur->seq : UINT64_MAX;
    m->op_sig = c->cur ? c->cur->op.sig : 0;
    m->flags = flags;
    for (int i = 0; i < c->ndata; i++) {
        m->posted[i] = l->s[i].posted;
        m->sent[i] = l->s[i].sent;
    }
    int rc = c->ops->post_send(l->ep, c->ndata, m, sizeof(*m), coll_mr_in(c, l->dom, c->ctrl_mr),
                               COLL_WR(COLL_WR_CSEND, li, c->ndata, l->tx_posted));
    if (rc != 0) {
        coll_x_aside_failed(c, l, rc, "control message", sizeof(*m));
        return;
    }
    l->tx_posted++;
    jaccl_count(JACCL_CNT_COLL_CTRL, 1);
    for (int i = 0; i < c->ndata; i++)
        l->s[i].advertised = l->s[i].posted;
}

/* One control message per peer whose posted counts moved since the last one. */
void coll_x_grants(struct coll_comm *c)
{
    for (int li = 0; li < c->nlinks; li++) {
        struct coll_link *l = &c->links[li];
        int moved = 0;
        for (int i = 0; i < c->ndata; i++)
            moved |= l->s[i].posted != l->s[i].advertised;
        if (moved && l->ep && l->peer >= 0 && l->tx_posted - l->tx_done < COLL_CTRL_N)
            send_ctrl(c, l, li, 0);
    }
}

int coll_x_bye(struct coll_comm *c)
{
    int waiting = 0;
    for (int li = 0; li < c->nlinks; li++) {
        struct coll_link *l = &c->links[li];
        if (!l->ep || l->peer < 0)
            continue;
        if (!l->bye_sent && l->tx_posted - l->tx_done < COLL_CTRL_N) {
            send_ctrl(c, l, li, COLL_CTRL_BYE);
            l->bye_sent = 1;
        }
        waiting += !l->bye_sent || l->tx_done != l->tx_posted;
    }
    return waiting;
}

const struct algo_xport_ops coll_xport_ops = {
        .wires = x_wires,
        .can_send = x_can_send,
        .send = x_send,
        .can_recv = x_can_recv,
        .recv = x_recv,
        .sent = x_sent,
        .sdone = x_sdone,
        .posted = x_posted,
        .landed = x_landed,
        .slot = x_slot,
        .slot_take = x_slot_take,
        .slot_give = x_slot_give,
        .own = x_own,
        .scratch = coll_x_scratch,
};
