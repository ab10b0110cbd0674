/* SPDX-License-Identifier: BSD-3-Clause */
/* The side channel after ep_connect: the TCP socket the connection was set up over stays open
 * and carries the back end's own control frames (24 bytes each), none of them per message once
 * the data flows: READY (our QPs are in RTR/RTS with receives posted: the peer may send), NAK /
 * PROBE / REPLY of UC's loss recovery, an endpoint's last ACKs as it closes (its QPs go with
 * it), and heartbeats. ACKs, credits and RECV advertisements travel through RDMA (verbs_ctl.c,
 * verbs_adv.c). Being TCP it never loses a frame, which keeps loss recovery small; its EOF or
 * silence past the liveness deadline is how a dead peer is noticed. */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "fabric/verbs/verbs_int.h"
#include "util/sock.h"
#include "util/clock.h"
#include "util/counters.h"
#include "util/log.h"

#define VB_SIDE_OUT_MAX (4u << 20) /* a peer this far behind on reading is broken */

/* type, lane, epoch, 0, seq (or capacity), addr, rkey, 0: little-endian, as verbs_wire.h says */
void vb_frame_encode(const struct vb_frame *fr, unsigned char *f)
{
    uint32_t seq = htole32(fr->seq), rkey = htole32(fr->rkey);
    uint64_t addr = htole64(fr->addr);

    memset(f, 0, VB_FRAME);
    f[0] = fr->type;
    f[1] = fr->lane;
    f[2] = fr->epoch;
    memcpy(f + 4, &seq, 4);
    memcpy(f + 8, &addr, 8);
    memcpy(f + 16, &rkey, 4);
}

static void side_put(struct vb_ep *ep, enum vb_frame_type t, int lane, uint32_t epoch, uint32_t seq,
                     uint64_t addr, uint32_t rkey)
{
    struct vb_side *s = &ep->side;
    unsigned char *f;

    if (fab_ep_base_err(&ep->base) != 0)
        return;
    if (s->out_n + VB_FRAME > s->out_cap) {
        uint32_t cap = s->out_cap ? s->out_cap * 2 : 1024;
        unsigned char *p = cap <= VB_SIDE_OUT_MAX ? realloc(s->out, cap) : NULL;

        if (!p) {
            vb_ep_fail(ep, -ECONNABORTED, "stopped reading its side channel");
            return;
        }
        s->out = p;
        s->out_cap = cap;
    }
    f = s->out + s->out_n;
    vb_frame_encode(&(struct vb_frame){.type = (uint8_t)t,
                                       .lane = (uint8_t)lane,
                                       .epoch = (uint8_t)epoch,
                                       .seq = seq,
                                       .addr = addr,
                                       .rkey = rkey},
                    f);
    s->out_n += VB_FRAME;
    jaccl_count(JACCL_CNT_SIDE_TX, 1);
}

void vb_side_send(struct vb_ep *ep, enum vb_frame_type t, int lane, uint32_t epoch, uint32_t seq)
{
    side_put(ep, t, lane, epoch, seq, 0, 0);
}

void vb_side_flush(struct vb_ep *ep)
{
    struct vb_side *s = &ep->side;
    size_t done = 0;
    int rc;

    if (s->fd < 0 || !s->out_n || fab_ep_base_err(&ep->base) != 0)
        return;
    rc = jaccl_sock_send_nb(s->fd, s->out, s->out_n, &done);
    if (done) {
        memmove(s->out, s->out + done, s->out_n - done);
        s->out_n -= (uint32_t)done;
        ep->last_tx_ns = jaccl_now_ns();
    }
    if (rc < 0)
        vb_ep_fail(ep, rc, "side channel failed: %s", strerror(-rc));
}

int vb_frame_decode(const unsigned char *f, int nlanes, struct vb_frame *out)
{
    out->type = f[0];
    out->lane = f[1];
    out->epoch = f[2];
    memcpy(&out->seq, f + 4, 4);
    memcpy(&out->addr, f + 8, 8);
    memcpy(&out->rkey, f + 16, 4);
    out->seq = le32toh(out->seq);
    out->addr = le64toh(out->addr);
    out->rkey = le32toh(out->rkey);
    if (out->type < VB_F_READY || out->type > VB_F_LAST)
        return VB_FRAME_BAD_TYPE;
    /* READY and heartbeats are about the endpoint, not a lane. */
    if (out->type != VB_F_READY && out->type != VB_F_HB && out->lane >= nlanes)
        return VB_FRAME_BAD_LANE;
    return VB_FRAME_OK;
}

/* Lane frames are UC's loss recovery: RC lanes send none (an ACK there would move una, which on
 * RC only send CQEs move). */
static int frame_fits_qp(const struct vb_ep *ep, int type)
{
    return ep->qp_type != IBV_QPT_RC;
}

static void side_frame(struct vb_ep *ep, const unsigned char *f, uint64_t now)
{
    struct vb_frame fr;
    int rc = vb_frame_decode(f, ep->nlanes, &fr);
    struct vb_lane *l;

    if (rc != VB_FRAME_OK) {
        vb_ep_fail(ep, -EPROTO, "sent %s control frame (type %u, lane %u)",
                   rc == VB_FRAME_BAD_LANE ? "a wrong lane's" : "an unknown", fr.type, fr.lane);
        return;
    }
    if (fr.type == VB_F_HB)
        return;
    if (fr.type == VB_F_READY) {
        ep->peer_ready = 1;
        for (int i = 0; i < ep->nlanes; i++)
            vb_tx_pump(ep, &ep->lane[i], now);
        return;
    }
    if (!frame_fits_qp(ep, fr.type)) {
        vb_ep_fail(ep, -EPROTO, "sent a control frame of type %u, which its %s lanes never send",
                   fr.type, ep->qp_type == IBV_QPT_RC ? "RC" : "UC");
        return;
    }
    l = &ep->lane[fr.lane];
    switch (fr.type) {
    case VB_F_ACK:
        vb_tx_on_ack(ep, l, fr.seq, now);
        break;
    case VB_F_NAK:
        vb_tx_on_nak(ep, l, fr.seq, fr.epoch, now);
        break;
    case VB_F_PROBE:
        vb_rx_on_probe(ep, l, fr.epoch);
        break;
    case VB_F_REPLY:
        vb_tx_on_reply(ep, l, fr.seq, fr.epoch, now);
    }
}

/* The peer closed (why = NULL) or reset its side channel. Whatever it wrote before that is already
 * in our completion queue, possibly not yet drained (the CQ event may come after the socket's): it
 * is delivered first, so only the requests whose data did not arrive fail. */
static void side_lost(struct vb_ep *ep, const char *why, uint64_t now)
{
    do {
        vb_ep_drain(ep, now);
    } while (ep->drain_more && fab_ep_base_err(&ep->base) == 0);
    if (why)
        vb_ep_fail(ep, -ECONNRESET, "%s", why);
    else
        vb_ep_peer_closed(ep); /* an orderly close: logged as one, not as a failure */
}

void vb_side_read(struct vb_ep *ep, uint64_t now)
{
    struct vb_side *s = &ep->side;

    while (s->fd >= 0 && fab_ep_base_err(&ep->base) == 0) {
        ssize_t n = recv(s->fd, s->in + s->in_n, sizeof(s->in) - s->in_n, MSG_DONTWAIT);
        uint32_t off = 0;

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0) {
            side_lost(ep, n == 0 ? NULL : strerror(errno), now);
            return;
        }
        ep->last_rx_ns = now;
        s->in_n += (uint32_t)n;
        for (; s->in_n - off >= VB_FRAME; off += VB_FRAME)
            side_frame(ep, s->in + off, now);
        memmove(s->in, s->in + off, s->in_n - off);
        s->in_n -= off;
    }
}

uint64_t vb_side_timer(struct vb_ep *ep, uint64_t now)
{
    uint64_t hb;

    if (!ep->connected || ep->liveness_ns == 0 || fab_ep_base_err(&ep->base) != 0)
        return UINT64_MAX;
    if (now - ep->last_rx_ns > ep->liveness_ns) {
        vb_ep_fail(ep, -ETIMEDOUT, "silent for %.1f s (NCCL_JACCL_TIMEOUT)",
                   (double)(now - ep->last_rx_ns) / 1e9);
        return UINT64_MAX;
    }
    hb = ep->last_tx_ns + ep->liveness_ns / 4;
    if (now >= hb) {
        vb_side_send(ep, VB_F_HB, 0, 0, 0);
        ep->last_tx_ns = now;
        hb = now + ep->liveness_ns / 4;
    }
    return hb < ep->last_rx_ns + ep->liveness_ns ? hb : ep->last_rx_ns + ep->liveness_ns;
}
