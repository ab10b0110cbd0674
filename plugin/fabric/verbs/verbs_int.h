/* SPDX-License-Identifier: BSD-3-Clause */
/* Internals of the verbs back end (devices, domains, endpoints), shared by its files and by its
 * unit tests.
 *
 * Data path (UC and RC alike): the back end owns every hardware receive (zero-length, they only
 * catch immediates) and turns every caller post into RDMA WRITE-with-immediate segments, each
 * carrying a per-lane sequence number in the immediate's upper half. A caller WRITE_IMM lands at
 * the address the caller named; a caller SEND lands directly in the caller RECV it will consume:
 * the receiving back end RDMA-writes where each posted RECV is into a ring in the sender's memory
 * (an advertisement, itself a sequenced segment; verbs_adv.c), and the k-th message of a lane
 * consumes the k-th RECV. The receiving back end delivers segments strictly in sequence order.
 * On UC it acknowledges them with RDMA controls (zero-byte WRITE_IMMs, verbs_ctl.c); the sender
 * keeps every segment until acknowledged and retransmits go-back-N on a gap (NAK) or a silence
 * (probe), both on the TCP side channel. On RC the hardware does all of that: a send completes
 * from its send CQE, and controls only carry receive credits (verbs_rel.c). The wire format is
 * verbs_wire.h, the protocol's state and functions verbs_rel.h; this header has the devices,
 * domains, registrations and endpoints.
 *
 * Locking, in this order only:
 *   cq->src_mu  the CQ's inline-progress sources (swcq.h), held by a polling thread's drive
 *   dom->mu   endpoint list and the progress thread's epoll set; the thread holds it while it works
 *   ep->mu    everything in the endpoint (lanes, side channel, status); a poller only trylocks
 *             it (vb_ep_drive), so the progress thread and a poller take turns on the hardware CQ
 *   cq->mu    the software completion ring
 *   dom->mr_mu  the registration cache (taken alone) */
#ifndef JACCL_FABRIC_VERBS_INT_H

struct vb_domain;
struct vb_ep;
struct vb_mr;
#define JACCL_FABRIC_VERBS_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>

#include "fabric/ep_base.h"
#include "fabric/fabric.h"
#include "fabric/swcq.h"
#include "fabric/verbs/verbs_lib.h"
#include "fabric/verbs/verbs_rel.h"
#include "fabric/verbs/verbs_wire.h"
#include "util/container.h"
#include "util/sock.h"

#define VB_MAX_DEVS 32
#define VB_MAX_MSG  (1u << 30)       /* largest caller post */
#define VB_HW_RQ    (2 * VB_SEG_WIN) /* zero-length receives kept posted per QP */
/* RC: a receiver reports its reposted hardware receives (a credit control) once this many
 * gathered, so a sender that stops at the last covered segment always hears again (verbs_rel.c). */
#define VB_CREDIT_EVERY (VB_HW_RQ / 4)
#define VB_SEG_PKTS     16 /* UC segment = this many path-MTU packets (1 towards soft-RoCE) */

/* ---- devices (verbs_dev.c, verbs_gid.c) ---- */
struct vb_dev {
    struct fab_dev_info info;
    struct ibv_device *ibdev;
    char ibname[64];
    int port;
    int link_layer; /* IBV_LINK_LAYER_* */
    int gid_index;  /* -1: none (IB without GRH) */
    union ibv_gid gid;
    uint16_t lid;
    int active_mtu; /* enum ibv_mtu */
    int soft_roce;  /* rxe: its UC responder cannot lose a packet mid-message (verbs_ep.c) */
    int have_addr;
    union jaccl_sockaddr addr; /* side-channel address (port 0) */
    int prefix;                /* of the interface carrying addr: which peers it reaches */
};

struct vb_dev *vb_dev_get(int dev);

/* GID choice for one port: NCCL_JACCL_GID_INDEX when >= 0, else the best entry by content
 * (RoCE v2 IPv4-mapped > IPv4-mapped > RoCE v2 global IPv6). Returns the index, or -1. */
int vb_gid_choose(const struct vb_ibv *ibv, struct ibv_context *ctx, int port, int table_len,
                  int forced, union ibv_gid *out);
/* 1 if gid is ::ffff:a.b.c.d (then *out is that IPv4 address, port 0), else 0. */
int vb_gid_ipv4(const union ibv_gid *gid, union jaccl_sockaddr *out);
/* Mb/s from ibv_port_attr's active_width / active_speed codes, as NCCL's IB transport. */
int vb_port_speed(int active_width, int active_speed);

/* ---- domains and registrations (verbs_mr.c) ---- */
struct vb_mr_ent {
    char *base;
    size_t len;
    struct ibv_mr *mr;
    int refs;
    struct vb_mr_ent *next;
};

/* The back end's own objects embed the fabric's heads first (fabric.h); vb_*_of converts. */
struct vb_mr {
    struct fab_mr fab; /* ops: the domain's */
    struct vb_domain *dom;
    struct vb_mr_ent *ent; /* NULL for a zero-length registration */
    char *addr;
    size_t len;
    uint32_t lkey, rkey;
};

struct vb_domain {
    struct fab_domain fab; /* ops: fab_verbs_ops */
    struct vb_dev *dev;
    const struct vb_ibv *ibv;
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_comp_channel *chan;
    pthread_mutex_t mr_mu;
    struct vb_mr_ent *mrs;
    /* progress thread (verbs_thread.c) */
    pthread_mutex_t mu;
    struct vb_ep *eps;
    uint64_t next_id;
    int epfd, wakefd;
    atomic_int stop;
    int thread_started;
    pthread_t thread;
};

int fab_verbs_domain_open(int dev, struct vb_domain **out);
void fab_verbs_domain_close(struct vb_domain *dom);
int fab_verbs_mr_reg(struct vb_domain *dom, void *addr, size_t len, struct vb_mr **out);
void fab_verbs_mr_dereg(struct vb_mr *mr);
struct fab_remote_buf fab_verbs_mr_remote(struct vb_mr *mr, struct vb_ep *ep, void *addr);
/* 0 if [buf, buf+len) lies inside mr (len 0 always passes), else -EINVAL. */
int vb_mr_check(struct vb_domain *dom, const struct vb_mr *mr, const void *buf, size_t len);

/* ---- endpoints ---- */

struct vb_lane {
    struct vb_ep *ep;
    int idx;
    struct ibv_qp *qp;
    uint32_t psn;
    struct vb_rwr *rq; /* caller RECVs: RECV k (absolute) at rq[k % rq_cap] while posted */
    uint32_t rq_cap, rq_head, rq_n;
    uint32_t rq_posted, rq_taken; /* RECVs posted and consumed so far (absolute, wrap) */
    struct vb_msg *mq;            /* caller sends, absolute indices mq_head..mq_tail */
    uint32_t mq_cap, mq_head, mq_tail;
    /* advertisements (verbs_adv.c): ours go from adv_out[k % ring.slots] to the peer's ring,
     * the peer's land in adv_in (ring.slots entries) */
    struct vb_adv_wire *adv_in, *adv_out;
    uint32_t adv_n;     /* one past the newest of the peer's RECVs advertised to us */
    uint32_t adv_next;  /* our next RECV to advertise */
    uint32_t rq_room;   /* one past our newest RECV with room for bytes (advertised at once) */
    uint32_t adv_asked; /* one past the newest of our RECVs the peer asked about */
    struct vb_tx tx;
    struct vb_rx rx;
};

struct vb_side { /* side-channel socket after ep_connect (verbs_side.c) */
    int fd;
    unsigned char in[240];
    uint32_t in_n;
    unsigned char *out;
    uint32_t out_n, out_cap;
    int want_out; /* EPOLLOUT registered */
};

struct vb_ring { /* the endpoint's advertisement rings, one registration (verbs_adv.c) */
    struct vb_adv_wire *mem; /* nlanes rings the peer writes, then nlanes we write from */
    struct ibv_mr *mr;
    uint32_t slots;                 /* per lane: our max_recv_wr */
    uint64_t peer_addr;             /* the peer's rings (its blob) */
    uint32_t peer_rkey, peer_slots; /* peer_slots: its max_recv_wr */
};

struct vb_ep {
    struct fab_ep fab; /* ops: the domain's; what completions carry (fab_wc.ep) */
    uint64_t id;
    struct vb_domain *dom;
    const struct vb_ibv *ibv;
    struct fab_cq *cq;
    int nlanes, max_send_wr, max_recv_wr;
    uint64_t liveness_ns;
    struct fab_ep_base base; /* peer, and the failure: "peer <peer> <what> (device <dev>)" */
    int qp_type;
    int retry_cnt;
    int tclass, sl; /* GRH traffic class and service level of every lane's address vector */
    uint32_t seg_size;
    struct ibv_cq *hcq;
    int drain_more; /* the last drain stopped with CQEs left */
    int in_drive;   /* a caller's drive is draining (vb_ep_drive) */
    pthread_mutex_t mu;
    int flushed;
    int connected, peer_ready;
    struct vb_side side;
    uint64_t last_rx_ns, last_tx_ns;
    int mtu;
    struct vb_ring ring;
    struct {
        uint64_t segs, retx, naks, probes, spurious;
        uint64_t cqes, drains, acks; /* hardware completions, drains that found any, ACKs */
        uint64_t credits;            /* RC: receive-credit controls sent */
        uint64_t advs;               /* advertisements of our RECVs sent */
    } stats;                         /* logged at close */
    struct vb_ep *next;              /* dom->eps */
    struct fab_cq_src src;           /* inline progress from cq_poll, attached once live */
    int src_attached;
    /* Hand-off (verbs_thread.c): while a caller polls (drives) the endpoint, the progress
     * thread leaves its CQ disarmed and undrained and only ticks for the timers. */
    _Atomic uint64_t last_drive_ns; /* the last drive(); 0 after quiet() */
    atomic_int polled;              /* the thread has stepped back */
    int armed;                      /* the hardware CQ will raise an event (thread, ep->mu) */
    struct vb_lane lane[];
};

/* ---- shared by the protocol's files (verbs_tx.c, verbs_rel.c, verbs_rx.c) ---- */
/* The heads come first, so NULL (an mr the caller did not give) converts to NULL. */
_Static_assert(offsetof(struct vb_domain, fab) == 0, "the domain's head comes first");
_Static_assert(offsetof(struct vb_mr, fab) == 0, "the registration's head comes first");
_Static_assert(offsetof(struct vb_ep, fab) == 0, "the endpoint's head comes first");

static inline struct vb_domain *vb_domain_of(struct fab_domain *d)
{
    return jaccl_head_of(d, struct vb_domain, fab);
}

static inline struct vb_mr *vb_mr_of(struct fab_mr *m)
{
    return jaccl_head_of(m, struct vb_mr, fab);
}

static inline struct vb_ep *vb_ep_of(struct fab_ep *e)
{
    return jaccl_head_of(e, struct vb_ep, fab);
}

static inline struct vb_msg *vb_msg_at(struct vb_lane *l, uint32_t idx)
{
    return &l->mq[idx % l->mq_cap];
}

/* verbs_ep.c */
int fab_verbs_side_socks(const struct fab_ep_attr *attr);
int fab_verbs_ep_create(struct vb_domain *dom, struct fab_cq *cq, const struct fab_ep_attr *attr,
                        struct vb_ep **out);
int fab_verbs_ep_local_info(struct vb_ep *ep, void *buf, size_t cap);
int fab_verbs_ep_connect(struct vb_ep *ep, const void *peer_info, size_t len, const int *socks,
                         int nsocks);
void fab_verbs_ep_close(struct vb_ep *ep);
int fab_verbs_ep_error(struct vb_ep *ep, const char **reason);

/* verbs_fail.c: fails the endpoint with err, a negative errno (first cause wins; fabric.h, enum
 * fab_wc_status, says which errno for which cause): the WARN and the flush of every outstanding
 * caller work item (first completion carries the cause, the rest FLUSHED). Caller holds
 * ep->mu. */
void vb_ep_fail(struct vb_ep *ep, int err, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* The peer ended its side channel's stream: -ECONNRESET like a reset, logged as a close. */
void vb_ep_peer_closed(struct vb_ep *ep);
/* A completion's error as the endpoint's failure (0 for IBV_WC_SUCCESS). */
int vb_wc_err(enum ibv_wc_status st);

/* verbs_qp.c */
int vb_qp_create(struct vb_ep *ep, struct vb_lane *l);
int vb_qp_init(struct vb_ep *ep, struct vb_lane *l);
int vb_qp_rtr(struct vb_ep *ep, struct vb_lane *l, const struct vb_info *peer, int mtu);
int vb_qp_rts(struct vb_ep *ep, struct vb_lane *l);
void vb_info_fill(struct vb_ep *ep, struct vb_info *info);
/* NULL if the peer's blob fits ours, else why not. */
const char *vb_info_check(const struct vb_ep *ep, const struct vb_info *peer, size_t len);
/* verbs_post.c */
int fab_verbs_post_recv(struct vb_ep *ep, int lane, void *buf, size_t cap, struct vb_mr *mr,
                        uint64_t wr_id);
int fab_verbs_post_send(struct vb_ep *ep, int lane, const void *buf, size_t len, struct vb_mr *mr,
                        uint64_t wr_id);
int fab_verbs_post_write_imm(struct vb_ep *ep, int lane, const void *buf, size_t len,
                             struct vb_mr *mr, struct fab_remote_buf dst, uint32_t imm,
                             uint64_t wr_id);
/* Posts `n` zero-length receives on the lane's QP. */
int vb_post_hw_recvs(struct vb_ep *ep, struct vb_lane *l, int n);

/* verbs_side.c: the side channel after ep_connect */
void vb_side_send(struct vb_ep *ep, enum vb_frame_type t, int lane, uint32_t epoch, uint32_t seq);
/* Writes what the socket takes; fails the endpoint on a socket error. */
void vb_side_flush(struct vb_ep *ep);
/* Reads and handles every frame the socket has. */
void vb_side_read(struct vb_ep *ep, uint64_t now);
/* Heartbeat and liveness; returns the next deadline. */
uint64_t vb_side_timer(struct vb_ep *ep, uint64_t now);

/* verbs_adv.c: advertisements of posted RECVs, through RDMA */
int vb_ring_create(struct vb_ep *ep); /* at ep_create: the rings, registered */
void vb_ring_destroy(struct vb_ep *ep);
void vb_ring_fill_info(const struct vb_ep *ep, struct vb_info *info);
void vb_ring_adopt(struct vb_ep *ep, const struct vb_info *peer);
/* A caller RECV was queued as RECV rq_posted - 1 of the lane: its advertisement is written. */
void vb_adv_posted(struct vb_ep *ep, struct vb_lane *l, const struct vb_rwr *w, uint32_t rkey);
/* The next of our RECVs to advertise now, if any (1, *k set): one with room for bytes, or one
 * before it, or one the peer asked about. */
int vb_adv_due(struct vb_ep *ep, struct vb_lane *l, uint32_t *k);
/* The peer asked where our RECV is (k24: its number's low VB_ASK_BITS). */
void vb_adv_asked(struct vb_ep *ep, struct vb_lane *l, uint32_t k24);
/* A SEND of ours waiting for an advertisement asks for it once VB_ADV_ASK_NS passed: returns
 * when to look again (UINT64_MAX: nothing waits). */
uint64_t vb_adv_timer(struct vb_ep *ep, struct vb_lane *l, uint64_t now);
/* The WR of advertisement segment `seq` (RECV k). */
void vb_adv_fill_wr(struct vb_ep *ep, struct vb_lane *l, uint32_t k, struct ibv_send_wr *wr,
                    struct ibv_sge *sge);
/* An advertisement delivered in order: RECV (k15: its number's low bits) is in our ring. */
void vb_adv_arrived(struct vb_ep *ep, struct vb_lane *l, uint32_t k15, uint32_t len);
/* Where the peer's RECV k is, once advertised: 1 and *out set; 0 not yet (asking for it once it
 * waited VB_ADV_ASK_NS); -1 failed. */
int vb_adv_lookup(struct vb_ep *ep, struct vb_lane *l, uint32_t k, uint64_t now,
                  struct vb_adv_wire *out);

/* verbs_ctl.c: controls, zero-byte WRITE_IMMs without a sequence number of their own */
/* Posts one (lo: VB_LO_CTL with its kind and bits; val: its seq field). -EAGAIN: the send queue
 * is full, try again after a send CQE. */
int vb_ctl_post(struct vb_ep *ep, struct vb_lane *l, uint32_t lo, uint32_t val);
void vb_ctl_arrived(struct vb_ep *ep, struct vb_lane *l, uint32_t imm, uint64_t now);

/* verbs_wc.c: drains the endpoint's hardware CQ (caller holds ep->mu). */
void vb_ep_drain(struct vb_ep *ep, uint64_t now);

/* verbs_thread.c */
int vb_thread_start(struct vb_domain *dom);
void vb_thread_stop(struct vb_domain *dom);
void vb_thread_watch(struct vb_domain *dom, struct vb_ep *ep); /* caller holds ep->mu */
void vb_thread_wake(struct vb_domain *dom);
/* The fab_cq_src drive() and quiet() of an endpoint (inline progress from the caller's
 * cq_poll; the caller is about to sleep in cq_wait). */
int vb_ep_drive(struct fab_cq_src *src);
void vb_ep_quiet(struct fab_cq_src *src);

/* verbs_dev.c */
int fab_verbs_init(void);
int fab_verbs_ndevs(void);
const struct fab_dev_info *fab_verbs_dev_info(int dev);
void fab_verbs_fini(void);

#endif
