/* SPDX-License-Identifier: BSD-3-Clause */
/* Internals of the TCP back end, shared by its files and by nothing else.
 *
 * Locking (always taken in this order, never the other way round):
 *   cq->src_mu     the CQ's list of inline-progress sources (swcq.h); pollers trylock it
 *   lane->send_mu  the lane's send queue and every write to its socket (posters write inline)
 *   lane->rx_mu    the lane's receive state (struct tcp_rx) and every read of its socket
 *   lane->recv_mu  the lane's queue of posted RECVs
 *   ep->mu         failing the endpoint: cause_owed and fail_lane are set before the status
 *   dom->mu        the registration table
 *   cq->mu         the completion ring
 * send_mu and rx_mu are never held together. Two threads read a lane's socket: the endpoint's
 * I/O thread, and whichever thread polls the endpoint's CQ (cq_poll drives the endpoint inline,
 * see tcp_io.c). rx_mu makes them take turns, so bytes are consumed and parsed by one thread at
 * a time and in stream order. Pollers only trylock it (a poll never blocks; the holder is
 * reading anyway); the I/O thread locks it, so an edge it was told about is never skipped: it
 * sets rx.ready under rx_mu and reads after whoever held the lock, and whichever thread
 * reads the socket dry clears rx.ready while still holding rx_mu. Every byte that arrives after
 * that read raises a new edge (edge-triggered epoll), so data never sits unread with nobody
 * told. The flush takes rx_mu too, so a poller never runs into a RECV being flushed. */
#ifndef JACCL_FABRIC_TCP_INT_H

struct tcp_domain;
struct tcp_ep;
struct tcp_mr;
#define JACCL_FABRIC_TCP_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>

#include "fabric/ep_base.h"
#include "fabric/fabric.h"
#include "fabric/swcq.h"
#include "fabric/tcp/tcp_wire.h"
#include "util/container.h"

#define TCP_MAX_MSG (1u << 30) /* 1 GiB: fits the wire's 32-bit length with room to spare */
/* Receive staging: headers and the head of each payload. A message up to 16 KiB comes in with
 * its header in one read (one system call, then a copy from here) instead of two
 * (docs/performance.md, "Where the code's constants come from"). */
#define TCP_STAGE     (16384 + 64)
#define TCP_RX_BUDGET (8u << 20) /* bytes one lane may read before the others get a turn */
/* The same for a poller: its caller (a test() loop, a collective's progress thread) has other
 * work, and the I/O thread, woken by the same data, carries on with a large message. */
#define TCP_RX_POLL_BUDGET (256u << 10)
/* On a crowded machine, an endpoint that carried a message above this size within the last
 * TCP_HANDOFF_NS keeps its reads on the I/O thread (jaccl_cpu_poller_owns in util/crowd.h). */
#define TCP_OWN_MAX_MSG (256u << 10)
/* A heartbeat that found its lane being written looks again this much later. */
#define TCP_HB_RETRY_NS 1000000ull

/* ---- devices (tcp_dev.c) ---- */
int fab_tcp_init(void);
int fab_tcp_ndevs(void);
const struct fab_dev_info *fab_tcp_dev_info(int dev);
void fab_tcp_fini(void);
const char *fab_tcp_why_none(void);

/* ---- domains and registrations (tcp_mr.c) ---- */
/* The back end's own objects embed the fabric's heads first (fabric.h); tcp_*_of converts. */
struct tcp_mr {
    struct fab_mr fab; /* ops: the domain's */
    struct tcp_domain *dom;
    char *addr;
    size_t len;
    uint64_t key;        /* 64 random bits, unique among the domain's live keys */
    struct tcp_mr *next; /* hash chain */
    int busy;            /* I/O threads landing bytes in it right now (under dom->mu) */
    uint64_t *scope;     /* ids of the endpoints it was advertised on (under dom->mu) */
    uint32_t nscope, scope_cap;
};

struct tcp_domain {
    struct fab_domain fab; /* ops: fab_tcp_ops */
    int dev;
    pthread_mutex_t mu;
    pthread_cond_t idle; /* a deregistration waits here for busy to drop to 0 */
    struct tcp_mr **bucket;
    size_t nbucket, nmr;
};

int fab_tcp_domain_open(int dev, struct tcp_domain **out);
void fab_tcp_domain_close(struct tcp_domain *dom);
int fab_tcp_mr_reg(struct tcp_domain *dom, void *addr, size_t len, struct tcp_mr **out);
void fab_tcp_mr_dereg(struct tcp_mr *mr);
struct fab_remote_buf fab_tcp_mr_remote(struct tcp_mr *mr, struct tcp_ep *ep, void *addr);
/* Drops a closed endpoint from the scope of every registration of d. */
void fab_tcp_mr_forget_ep(struct tcp_domain *d, uint64_t ep_id);
/* Pins the live registration `key` of ep's domain if it was advertised on ep and covers
 * [addr, addr+len): 0, or -EACCES. The caller may write there until fab_tcp_mr_unpin();
 * deregistration waits for that. */
int fab_tcp_mr_pin(struct tcp_ep *ep, uint64_t key, uint64_t addr, size_t len, struct tcp_mr **out);
void fab_tcp_mr_unpin(struct tcp_mr *mr);
/* 0 if [buf, buf+len) lies in mr and mr belongs to dom (the verbs lkey check), else -EINVAL. */
int fab_tcp_mr_check_local(struct tcp_domain *dom, struct tcp_mr *mr, const void *buf, size_t len);

/* ---- completion queues: the shared software CQ, fab_swcq_* (fabric/swcq.c) ---- */

/* ---- endpoints ---- */
struct tcp_swr { /* a posted SEND / WRITE_IMM, or an internal heartbeat */
    uint64_t wr_id;
    const char *buf;
    uint32_t len;       /* payload bytes */
    uint16_t op;        /* TCP_OP_* */
    size_t done;        /* bytes of header + payload already handed to the kernel */
    struct tcp_hdr hdr; /* wire byte order */
};

struct tcp_rwr { /* a posted RECV */
    uint64_t wr_id;
    char *buf;
    size_t cap;
};

struct tcp_rx {  /* receive state of one lane: under lane->rx_mu */
    int ready;   /* EPOLLIN seen and recv() has not said EAGAIN since */
    int drained; /* the last read came back short: the socket is empty until the next edge */
    int hup;     /* the peer shut its side down: no edge follows, so read until EOF */
    int in_msg;  /* a header was parsed; its payload is landing */
    int eof;     /* the peer closed this lane: nothing more will come */
    int polling; /* a poller, not the I/O thread, holds rx_mu (for the debug counters) */
    struct tcp_msg msg;
    uint32_t got; /* payload bytes landed */
    int have_wr;  /* wr was popped for this message */
    struct tcp_rwr wr;
    uint32_t off, end; /* unparsed bytes in stage */
    unsigned char stage[TCP_STAGE];
};

struct tcp_lane {
    int fd; /* -1 until ep_connect */
    int idx;
    pthread_mutex_t send_mu;
    struct tcp_swr *sq; /* ring of max_send_wr + 1 (one heartbeat) */
    uint32_t sq_cap, sq_head, sq_n, sq_hb;
    uint64_t last_tx_ns;
    pthread_mutex_t rx_mu;
    pthread_mutex_t recv_mu;
    struct tcp_rwr *rq; /* ring of max_recv_wr */
    uint32_t rq_cap, rq_head, rq_n;
    struct tcp_rx rx;
    /* What the lane's last holder left, for pollers to skip idle lanes without taking their
     * locks (a lane has 2W+1 of them and most are idle; a flag seen late costs one round):
     * frames queued to send (sq_n != 0, under send_mu), and receive work that needs no byte
     * from the socket (tcp_lane_pending in tcp_io.c, under rx_mu). */
    atomic_int tx_left, rx_left;
    struct fab_cq_fd cqfd; /* the lane in its CQ's readiness check */
    /* When this lane last brought anything (data or a heartbeat), written by whichever thread
     * read it. Liveness is per lane: the lanes of a connection may run over different cables or
     * relays (core/route.h), and one of them going silent must fail the endpoint even while
     * the others carry on. */
    _Atomic uint64_t last_rx_ns;
};

struct tcp_ep {
    struct fab_ep fab; /* ops: the domain's; what completions carry (fab_wc.ep) */
    struct tcp_domain *dom;
    uint64_t id; /* unique for the life of the process: names it in registrations' scopes */
    struct fab_cq *cq;
    int nlanes, max_send_wr;
    int tclass;     /* IP TOS / IPv6 traffic class of every lane; 0 = system default */
    int host_ranks; /* the caller's group on this host (fab_ep_attr): the pollers' hand-off */
    uint64_t liveness_ns;
    struct fab_ep_base base; /* peer, and the failure: "peer <peer> <what> (lane n)" */
    pthread_mutex_t mu;
    int cause_owed;  /* the next flushed completion carries status (I/O thread only) */
    int fail_lane;   /* the lane that broke, flushed first; -1 = none in particular */
    atomic_int stop; /* ep_close asks the I/O thread to leave */
    int epfd, wakefd;
    int thread_started;
    pthread_t thread;
    atomic_int neof;     /* lanes the peer closed */
    atomic_int cut_lane; /* a lane the peer closed in mid-message; -1 = none */
    /* Inline progress from cq_poll; attached while connected, its lanes watched by the CQ's
     * readiness check (one epoll_wait tells a poller which lanes of which endpoints have bytes,
     * instead of a recvmsg per lane that mostly finds none: fab_tcp_ep_drive). */
    struct fab_cq_src src;
    int src_attached, nwatched;
    _Atomic uint64_t last_drive_ns; /* when a poller last drove it (tcp_io.c: hand-off) */
    _Atomic uint64_t big_rx_ns;     /* when a message above TCP_OWN_MAX_MSG last began */
    atomic_int io_polled; /* EPOLLIN is off, pollers read (written by the I/O thread only) */
    struct tcp_lane lane[];
};

/* The heads come first, so NULL (an mr the caller did not give) converts to NULL. */
_Static_assert(offsetof(struct tcp_domain, fab) == 0, "the domain's head comes first");
_Static_assert(offsetof(struct tcp_mr, fab) == 0, "the registration's head comes first");
_Static_assert(offsetof(struct tcp_ep, fab) == 0, "the endpoint's head comes first");

static inline struct tcp_domain *tcp_domain_of(struct fab_domain *d)
{
    return jaccl_head_of(d, struct tcp_domain, fab);
}

static inline struct tcp_mr *tcp_mr_of(struct fab_mr *m)
{
    return jaccl_head_of(m, struct tcp_mr, fab);
}

static inline struct tcp_ep *tcp_ep_of(struct fab_ep *e)
{
    return jaccl_head_of(e, struct tcp_ep, fab);
}

/* tcp_ep.c */
int fab_tcp_side_socks(const struct fab_ep_attr *attr);
int fab_tcp_ep_create(struct tcp_domain *dom, struct fab_cq *cq, const struct fab_ep_attr *attr,
                      struct tcp_ep **out);
int fab_tcp_ep_local_info(struct tcp_ep *ep, void *buf, size_t cap);
int fab_tcp_ep_connect(struct tcp_ep *ep, const void *peer_info, size_t len, const int *socks,
                       int nsocks);
void fab_tcp_ep_close(struct tcp_ep *ep);
int fab_tcp_ep_error(struct tcp_ep *ep, const char **reason);

/* tcp_fail.c: puts the endpoint in error with err, a negative errno (first cause wins; fabric.h,
 * enum fab_wc_status, says which errno for which cause; a socket's own errno as it is), and
 * wakes its I/O thread, which flushes the queues; callable from any thread holding any of the
 * ep's locks but ep->mu. */
void fab_tcp_ep_fail(struct tcp_ep *ep, int err, int lane, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* The peer ended the stream on `lane`: -ECONNRESET like a reset, logged as a close. */
void fab_tcp_ep_peer_closed(struct tcp_ep *ep, int lane);
/* Completes every outstanding work item: the first with the cause, the rest FLUSHED. Called
 * by the I/O thread once the endpoint is in error (or by ep_connect if it never started). */
void fab_tcp_ep_flush(struct tcp_ep *ep);

/* tcp_tx.c */
int fab_tcp_post_send(struct tcp_ep *ep, int lane, const void *buf, size_t len, struct tcp_mr *mr,
                      uint64_t wr_id);
int fab_tcp_post_send_imm(struct tcp_ep *ep, int lane, const void *buf, size_t len,
                          struct tcp_mr *mr, uint32_t imm, uint64_t wr_id);
int fab_tcp_post_write_imm(struct tcp_ep *ep, int lane, const void *buf, size_t len,
                           struct tcp_mr *mr, struct fab_remote_buf dst, uint32_t imm,
                           uint64_t wr_id);
/* Moves queued sends into the socket until it is full or the queue is empty; completes what
 * went out. Caller holds send_mu. 1 = queue empty, 0 = socket full, < 0 = -errno (the endpoint
 * has been failed with fab_tcp_ep_fail, "send failed"). */
int fab_tcp_tx_progress(struct tcp_ep *ep, struct tcp_lane *l);
/* Queues a heartbeat if the lane is idle and has sent nothing since `due_ns` - liveness/4.
 * Returns the time the next one will be due. Caller holds nothing. */
uint64_t fab_tcp_tx_heartbeat(struct tcp_ep *ep, struct tcp_lane *l, uint64_t now);

/* tcp_rx.c */
int fab_tcp_post_recv(struct tcp_ep *ep, int lane, void *buf, size_t cap, struct tcp_mr *mr,
                      uint64_t wr_id);
/* Reads and delivers what the lane's socket has, up to TCP_RX_BUDGET bytes. Returns the number
 * of messages completed, or -EPIPE once the endpoint is in error. Sets l->rx.ready = 0 when the
 * socket ran dry. Caller holds l->rx_mu. */
int fab_tcp_rx_service(struct tcp_ep *ep, struct tcp_lane *l);

/* tcp_io.c */
int fab_tcp_io_start(struct tcp_ep *ep);
void fab_tcp_io_wake(struct tcp_ep *ep);
/* The fab_cq_src drive() of an endpoint: the polling thread reads the lanes that expect data. */
int fab_tcp_ep_drive(struct fab_cq_src *src);
/* Its quiet(): hands all reading back to the I/O thread at once. */
void fab_tcp_ep_quiet(struct fab_cq_src *src);

#endif
