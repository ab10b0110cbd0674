/* SPDX-License-Identifier: BSD-3-Clause */
/* CollNet communicators: one per group of ranks, joined to its peers by fabric endpoints.
 *
 * Every endpoint has 2W+1 lanes (W = NCCL_JACCL_RING_WIRES): lane d*W+w carries the ring's
 * direction d on wire w (the mesh uses lane 0), and the last lane carries control messages.
 * A control message tells the peer how many receives are posted on each data lane (cumulative
 * counts): that is the credit that allows it to send. Data and control never share a lane,
 * so each lane's receives are posted in exactly the order the peer sends.
 *
 * Threads: the API threads validate and queue operations (a ring of COLL_QSIZE requests) and
 * read their completion state. The state machine (completion dispatch, the scheduler, credits:
 * everything below the queue) is run by whichever thread holds run_lock, and only by it. NCCL
 * polls test() in a loop while it waits, so test() and the i* calls run it inline under a
 * trylock: a message is then handled by the thread that waits for it, without a wake-up and a
 * context switch per message (on a box with few cores those cost more than the data does). A
 * caller that finds the lock taken returns at once: the holder is making the same progress.
 * The progress thread stays for progress nobody polls for (an operation queued and not tested,
 * goodbyes at close), for the stuck-operation WARNs, and as the one that waits: while callers
 * poll it naps instead of waiting on the CQ (a second thread woken per completion takes a core
 * from some rank, and run_lock from the caller); with nobody polling it waits in cq_wait, which
 * spins briefly (NCCL_JACCL_SPIN_US) and then sleeps. */
#ifndef JACCL_CORE_COLL_H
#define JACCL_CORE_COLL_H

#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>

#include "algo/algo.h"
#include "core/comm.h"
#include "core/conn.h"
#include "util/container.h"
#include "util/sticky.h"

#define COLL_QSIZE      256
#define COLL_CTRL_N     (ALGO_POST_MAX * ALGO_MAX_PARTS + 8) /* control receives per link */
#define COLL_CTRL_MAGIC 0x4a43544cu                          /* "JCTL" */
#define COLL_TAG_MAGIC  0x4a43u
#define COLL_REQ_MAGIC  0x4a435251u

/* wr_id: type | link | lane | per-stream sequence number */
enum coll_wr { COLL_WR_DSEND = 1, COLL_WR_DRECV, COLL_WR_CSEND, COLL_WR_CRECV };
#define COLL_WR(type, link, lane, idx) \
    ((uint64_t)(type) << 60 | (uint64_t)(link) << 40 | (uint64_t)(lane) << 32 | (uint32_t)(idx))
#define COLL_WR_TYPE(w) ((unsigned)((w) >> 60))
#define COLL_WR_LINK(w) ((int)(((w) >> 40) & 0xfffff))
#define COLL_WR_LANE(w) ((int)(((w) >> 32) & 0xff))
#define COLL_WR_IDX(w)  ((uint32_t)(w))

struct coll_ctrl {
    uint32_t magic;
    uint16_t ndata;  /* data lanes described below */
    uint16_t src;    /* sender's rank */
    uint64_t op_seq; /* the operation the sender is running (for cross-checks) */
    uint32_t op_sig;
    uint32_t flags;                  /* COLL_CTRL_BYE */
    uint32_t posted[ALGO_MAX_PARTS]; /* receives posted so far on each data lane */
    uint32_t sent[ALGO_MAX_PARTS];   /* sends posted so far on each data lane */
};

/* The sender is closing: it needs nothing more from us, and its counts are final (it posts no
 * further receive or send), so whatever this rank still wants beyond them can never happen. */
#define COLL_CTRL_BYE 1u

/* coll_ctrl.c: 0 and *out filled when `len` bytes at `buf` are a control message from rank
 * `src` for a link of `ndata` data lanes; -EPROTO otherwise (the peer's fault). */
int coll_ctrl_decode(const void *buf, size_t len, int ndata, int src, struct coll_ctrl *out);

/* Standing receives kept posted on lane 0 of every stream with staging slots while no known
 * operation has receives left to post there (coll_stand.c): the next operation's first message
 * finds its credit already granted, with no control message in between. */
#define COLL_STAND ALGO_SLOTS

/* One ordered stream per (link, data lane), both directions. Incoming, `posted` and `landed`
 * count what the fabric sees; the last `nstand` posted receives are standing ones no operation
 * has taken yet, so the operations see posted - nstand (coll_x_aposted). */
struct coll_stream {
    uint32_t sent, sdone, granted;       /* outgoing */
    uint32_t posted, landed, advertised; /* incoming */
    uint32_t nxt_from;                   /* receives from here on are nxt's (while it runs) */
    uint32_t exp_len[ALGO_POST_MAX];     /* length expected of each posted receive */
    /* Per posted receive (at index % ALGO_POST_MAX), for standing ones: the staging slot it was
     * posted into (-1: not a standing receive), where the operation that took it wants the bytes
     * (NULL: in that slot), the length that landed. */
    int8_t stand_slot[ALGO_POST_MAX];
    char *stand_dest[ALGO_POST_MAX];
    uint32_t got_len[ALGO_POST_MAX];
    uint8_t nstand;  /* standing receives posted and not taken by an operation yet */
    uint8_t claimed; /* of those, the oldest ones whose slot slot_take handed out */
    int stage;       /* staging slot pair, or -1 */
    uint8_t busy;    /* staging slots in use, one bit each */
};

struct coll_link {
    int peer;               /* rank; -1 while the connection is being set up */
    int dom;                /* the comm's domain its endpoint lives in (coll_dom.c) */
    struct fab_ep *ep;      /* ours once bound to a rank (closed by us) */
    struct fab_ep *pending; /* during set-up: owned by the connection code */
    char desc[112];
    struct coll_stream s[ALGO_MAX_PARTS];
    struct coll_ctrl *rx, *tx; /* COLL_CTRL_N each */
    uint32_t tx_posted, tx_done;
    uint64_t peer_seq; /* latest operation the peer said it runs, and its signature */
    uint32_t peer_sig;
    int bye_sent, bye_rcvd;
    /* The peer's send counts are final: it said goodbye, or its connection went down. */
    int final;
    uint32_t peer_sent[ALGO_MAX_PARTS]; /* the peer's final send counts, once final */
    int broken;     /* its endpoint's failure (ep_error), seen before the failed completions */
    int down_rc;    /* the connection went down (not after a goodbye): what that means */
    char down[128]; /* and why, for the WARN of an operation that still needs the peer */
};

/* A device the comm's connections leave by, with its domain (coll_dom.c). */
#define COLL_DOMS_MAX 4
struct coll_dom {
    struct coll_comm *c;
    int dev, idx;
    struct fab_domain *dom;
};

/* A registration the comm keeps in every one of its domains; mr[0] is what is passed around. */
struct coll_reg {
    char *base;
    size_t len;
    struct fab_mr *mr[COLL_DOMS_MAX];
};

enum coll_req_state { COLL_REQ_FREE = 0, COLL_REQ_QUEUED, COLL_REQ_DONE };

struct coll_req {
    uint32_t magic;
    struct coll_comm *comm; /* set once, when the comm is made */
    atomic_int state;
    int result; /* 0 or a negative code of core/err.h */
    uint64_t seq;
    struct algo_op op;
};

/* What NCCL holds (registered while live, freed by the close). */
struct coll_handle {
    struct jaccl_comm_hdr hdr;
    void *obj; /* struct coll_comm or struct coll_listen */
};

struct coll_listen {
    struct coll_handle *h;
    struct jaccl_listener *listener;
    struct jaccl_handle jh;
    int wires;
};

struct coll_comm {
    struct coll_handle *h;
    struct algo_xport xp; /* what the algorithms run on: coll_xport_ops */
    const struct fab_ops *ops;
    struct fab_domain *dom; /* doms[0]'s: the listener's device */
    int dev, nranks, rank, wires, ndata;
    /* The devices its connections leave by, and its registrations in each (coll_dom.c). */
    int ndoms;
    struct coll_dom doms[COLL_DOMS_MAX];
    pthread_mutex_t reg_mu;
    struct coll_reg *regs;
    int nregs, cap_regs;
    int host_ranks; /* of the group, on this host (from the handles): its endpoints' attribute */
    struct algo_choice choice;
    struct algo_ring_order ring; /* the ring's order (choice.ring points here) */
    struct fab_cq *cq;
    int nlinks, maxlinks;
    struct coll_link *links;
    /* Link carrying lanes < W out to / lanes >= W in from a peer (the peer as right neighbour),
     * and the other way round (as left neighbour). The same link except with two ranks, where
     * the single peer is both neighbours and gets two connections (two I/O paths). */
    int16_t link_r[ALGO_MAX_RANKS], link_l[ALGO_MAX_RANKS];
    char *ctrl_mem, *stage_mem, *scratch[2]; /* a scratch per run slot */
    size_t scratch_len[2];
    struct fab_mr *ctrl_mr, *stage_mr, *scratch_mr[2];
    int nstage;
    /* queue: API threads fill at q_tail (under qlock), the progress thread runs q_exec */
    pthread_mutex_t qlock;
    uint64_t q_tail, q_exec;
    struct coll_req req[COLL_QSIZE];
    /* who runs the state machine: the holder of run_lock (see the top of this file) */
    pthread_mutex_t run_lock;
    _Atomic uint64_t polled_ns; /* when a caller last asked for progress (jaccl_now_ns) */
    /* progress thread */
    pthread_t thread;
    int started;
    atomic_int closing;       /* closeColl: say goodbye to every peer, then leave */
    struct jaccl_sticky fail; /* a negative code of core/err.h */
    struct coll_req *cur;     /* the oldest unfinished operation */
    struct coll_req *nxt;     /* the one behind it, started early (or NULL) */
    int cur_armed, nxt_armed; /* may send and reduce (else only post receives) */
    int nxt_over;             /* nxt finished first: completed right after cur */
    int nxt_rc;
    uint64_t cur_t0, cur_warn;
    /* what went through this comm, logged by closeColl (progress thread; read after join) */
    struct {
        uint64_t ops, failed, bytes;
        uint64_t by_algo[ALGO_NUM_IDS];
    } stats;
    struct algo_run run[2]; /* run[cur_run] belongs to cur, the other one to nxt */
    int cur_run;
};

/* The comm as the algorithms' transport (algo/xport.h), and back. */
static inline struct algo_xport *coll_xport(struct coll_comm *c)
{
    return &c->xp;
}

static inline struct coll_comm *xport_comm(struct algo_xport *x)
{
    return jaccl_container_of(x, struct coll_comm, xp);
}

static inline const struct coll_comm *xport_ccomm(const struct algo_xport *x)
{
    return jaccl_container_of(x, const struct coll_comm, xp);
}

/* coll_topo.c: who is cabled to whom, from the group's handles (docs/topologies.md). */
struct coll_topo {
    int nranks;
    uint8_t *cables; /* nranks x nranks: cables between two ranks (0: none, a relay joins them) */
    struct algo_ring_order ring; /* a cycle over cables where there is one, else rank order */
    int ring_cabled;             /* every pair of ring neighbours is cabled */
    char what[112];              /* what was found, for the INIT line */
};
int coll_topo_build(struct coll_topo *t, const struct jaccl_handle *hs, int nranks);
void coll_topo_free(struct coll_topo *t);
/* 1 if ranks a and b are joined without a relay (a cable, a switch, or one host). */
int coll_topo_joined(const struct coll_topo *t, int a, int b);
/* The most cables between two ring neighbours: the ring's wires, so that it uses them all. */
int coll_topo_ring_cables(const struct coll_topo *t);
/* The algorithms the cables carry (a bit per algo_id): those whose every pair of talking ranks
 * is joined; the ring always, relayed where it must. */
unsigned coll_topo_carries(const struct coll_topo *t);
/* 1 and the pair (*x, *y) if algorithm a needs a cable the topology lacks. */
int coll_topo_missing(const struct coll_topo *t, enum algo_id a, int *x, int *y);

/* coll_handle.c */
struct coll_handle *coll_handle_new(uint32_t kind, void *obj);
/* The object behind an NCCL pointer of `kind`, or NULL with a WARN naming `what`. */
void *coll_handle_obj(void *p, uint32_t kind, const char *what);
/* coll_handle_obj for a close: the handle is also unregistered, so only one close gets it. */
void *coll_handle_take(void *p, uint32_t kind, const char *what);
/* Unregisters h, releases the memory handles still registered on it, frees it. */
void coll_handle_kill(struct coll_handle *h);

/* coll_comm.c */
struct coll_comm *coll_comm_new(int dev, int nranks, int rank, int wires);
/* Also kills c->h (if any): unregistered, its memory handles released, freed. */
void coll_comm_free(struct coll_comm *c);
/* The set-up of a connection whose endpoint lives in domain d (coll_dom_of). */
struct jaccl_conn_setup coll_setup(struct coll_comm *c, int d);
/* role: COLL_LINK_BOTH, or with two ranks COLL_LINK_RIGHT / COLL_LINK_LEFT (the peer as this rank's
 * right / left neighbour). */
enum coll_link_role { COLL_LINK_BOTH, COLL_LINK_RIGHT, COLL_LINK_LEFT };
int coll_link_bind(struct coll_comm *c, struct fab_ep *ep, int peer, enum coll_link_role role,
                   const char *desc);
int coll_stage_alloc(struct coll_comm *c);
/* The algorithms this comm may run that exchange data with rank p (a bit per algo_id): the
 * connections it needs. */
unsigned coll_algos_to(const struct coll_comm *c, int p);
int coll_thread_start(struct coll_comm *c);

/* coll_dom.c: the domain index for device dev (opened and given every registration the first
 * time; always 0 for a back end whose lanes are sockets), or a negative code. */
int coll_dom_of(struct coll_comm *c, int dev);
/* Registers [buf, buf+len) in every domain of the comm, now and to come: *mr0 is the first's. */
int coll_mr_reg(struct coll_comm *c, void *buf, size_t len, struct fab_mr **mr0);
void coll_mr_dereg(struct coll_comm *c, struct fab_mr *mr0);
/* The registration in domain d of the buffer mr0 registers in the first (NULL stays NULL). */
struct fab_mr *coll_mr_in(struct coll_comm *c, int d, struct fab_mr *mr0);
/* Releases every registration and the domains but the first. */
void coll_doms_free(struct coll_comm *c);
/* NCCL's registrations on a CollNet comm (its handle's hdr.reg): in every domain. */
extern const struct jaccl_reg_ops coll_reg_ops;

/* coll_xport.c */
extern const struct algo_xport_ops coll_xport_ops;
/* coll_comm.c: the transport's scratch (algo_xport_ops.scratch). */
char *coll_x_scratch(struct algo_xport *x, int idx, size_t len, struct fab_mr **mr);
int coll_x_poll(struct coll_comm *c); /* completions dispatched */
void coll_x_grants(struct coll_comm *c);
/* The link and stream that carry (peer, lane) out of this rank (tx) or into it (rx). */
int coll_x_link(const struct coll_comm *c, int peer, int lane, int rx);
struct coll_stream *coll_x_stream(struct coll_comm *c, int peer, int lane, int rx);
void coll_x_close_all(struct coll_comm *c);
/* A data or side post that failed where no operation needs it by itself (control messages,
 * standing receives): the link goes down if its endpoint broke, else the comm fails. */
void coll_x_aside_failed(struct coll_comm *c, struct coll_link *l, int rc, const char *what,
                         size_t len);
/* A frame of the wrong length landed on (l, lane): fails the comm, "the ranks disagree". */
int coll_x_bad_len(struct coll_comm *c, const struct coll_link *l, int lane, uint32_t got,
                   uint32_t want, uint32_t idx);
/* Receives of (link, lane) as the operations see them: posted ones, landed ones. */
uint32_t coll_x_aposted(const struct coll_stream *s);
uint32_t coll_x_alanded(const struct coll_stream *s);
/* Fails the comm if a peer said it runs operation q->seq with another signature. */
void coll_x_check_sig(struct coll_comm *c, const struct coll_req *q);
/* nxt starts: the receives it posts from now on are its own, not cur's. */
void coll_x_nxt_begins(struct coll_comm *c);
/* Fails the comm if cur waits for a receive that a peer who closed its comm never sent. */
void coll_x_check_left(struct coll_comm *c);
/* Sends goodbyes not sent yet; returns to how many connected peers ours is not out yet (not
 * posted, or its send not completed). */
int coll_x_bye(struct coll_comm *c);
/* Marks the comm broken (first cause wins: one WARN), closes every endpoint; returns the
 * failure that stands (err: a negative code of core/err.h). */
int coll_fail(struct coll_comm *c, int err, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* coll_queue.c */
int coll_enqueue(struct coll_comm *c, const struct algo_op *op, void **request);
/* The queued request `ahead` places after the running one (0: the one to run next). */
struct coll_req *coll_next(struct coll_comm *c, int ahead);
void coll_finish(struct coll_comm *c, struct coll_req *r, int rc);

/* coll_sched.c: starts, advances and finishes operations; 1 if anything happened. */
int coll_run_ops(struct coll_comm *c);
/* 1 if no operation the comm knows of (running, started early, or queued) has receives left to
 * post: what the next message on a stream is for is not known yet. */
int coll_sched_quiet(struct coll_comm *c);

/* coll_stand.c: standing receives (COLL_STAND) where the streams are quiet; run_lock holder. */
void coll_x_stand(struct coll_comm *c);
/* An operation takes the oldest standing receive of s for its next receive into buf (len
 * bytes): 0, or a negative code with the comm failed (it already landed with another length). */
int coll_x_stand_take(struct coll_comm *c, struct coll_link *l, struct coll_stream *s, char *buf,
                      size_t len);
/* The standing receive at index idx of s landed with len bytes: the operation that took it gets
 * it (copied where it wants it), or it waits for one. */
int coll_x_stand_landed(struct coll_comm *c, struct coll_link *l, struct coll_stream *s,
                        uint32_t idx, uint32_t len);
/* The staging slot of s that slot_take hands out next: a standing receive's, -1 if none. */
int coll_x_stand_slot(struct coll_stream *s);
/* Before a lane-0 send to rank peer with post_send_imm: posts standing receives for what peer
 * sends us on lane 0 if they may be, and returns the immediate that grants all we posted. */
uint32_t coll_x_ride(struct coll_comm *c, int peer);
/* A lane-0 message from l's peer landed with that immediate: the grant it carries. */
void coll_x_rode(struct coll_comm *c, const struct coll_link *l, uint32_t imm);

/* coll_progress.c */
void *coll_progress_main(void *arg);
/* One round of the state machine: completions, the scheduler, credits; 1 if anything moved.
 * The caller holds run_lock. */
int coll_progress_round(struct coll_comm *c);
/* Progress on the caller's thread (test(), the i* calls) if nobody else is running the state
 * machine right now: -EBUSY if somebody was (or the comm closes), 0 if it ran until nothing moved,
 * 1 if it stopped while things still moved (the progress thread should carry on). */
int coll_progress_inline(struct coll_comm *c);

#endif
