/* SPDX-License-Identifier: BSD-3-Clause */
/* The fabric: the one interface the p2p protocol and the collective algorithms are written
 * against. Two back ends implement it: TCP (fabric/tcp/) and verbs UC/RC (fabric/verbs/).
 *
 * The model is the verbs model, so that verbs maps onto it one to one and TCP emulates it:
 *   - a domain per device (protection domain + memory registrations),
 *   - completion queues that several endpoints share,
 *   - endpoints = one connection to one peer, made of `nlanes` independent ordered lanes
 *     (TCP: one socket each; verbs: one QP each). Work on one lane completes in order.
 *   - two-sided SEND into a RECV the peer posted, and one-sided WRITE-with-immediate into a
 *     buffer the peer advertised (address + rkey), which consumes one posted RECV on the same
 *     lane of the target and completes it with the immediate data.
 *
 * Rules every caller keeps, because verbs UC punishes breaking them with silent loss:
 *   - a message (SEND or WRITE_IMM) may only be posted when the caller knows the peer has a
 *     RECV posted for it on that lane (credits / clear-to-send are the caller's business);
 *   - buffers passed to post_* stay valid and untouched until their completion is polled;
 *   - immediates fit in 16 bits (FAB_IMM_MAX).
 * In return every back end delivers each lane's messages reliably and in order, or puts the
 * endpoint in error: on verbs UC that means sequence numbers, acks and retransmission inside
 * the back end (the layers above never see a lost message, only a late one or an error).
 * The TCP back end reports a message that finds no posted RECV as a fatal endpoint error
 * (FAB_WC_NO_RECV) instead of dropping it, so protocol bugs show up here, not on hardware.
 *
 * Connection set-up is done by the caller over plain TCP "side-channel" sockets (they carry the
 * listen handle's secret check). The back end says how many such sockets it wants per endpoint
 * (TCP: one per lane, they become the lanes; verbs: one, kept open to notice a dead peer), what
 * blob it needs to send to the peer (verbs: QPN/GID/LID/MTU per lane), and then adopts them.
 *
 * Thread safety: every function may be called from any thread; posts and polls on one
 * endpoint/CQ are serialised inside the back end. Completions are never reported twice.
 *
 * Progress: a CQ user needs to do nothing but poll. cq_poll, besides popping the ring, makes
 * progress itself for every connected endpoint on that CQ (TCP: reads the lanes that expect
 * data; verbs: drains the hardware CQ), under trylocks shared with the back ends' own threads,
 * so a message reaches a thread that polls without a hop through a progress thread or a
 * kernel wake-up. A user that polls in a loop (p2p's test(), which NCCL's proxy spins on) gets
 * this by calling cq_poll as it does today; one that sleeps must sleep in cq_wait, which tells
 * the back end first (TCP's I/O thread stops listening for reads while pollers are active and
 * resumes at once when one goes to sleep, else at the latest 1 ms after the last poll). The
 * back ends' threads still make every progress nobody polls for (heartbeats, liveness, EOF,
 * unexpected frames). While more than twice as many threads are runnable as there are CPUs,
 * the back ends' threads keep listening and cq_wait does not spin (a poller may be preempted).
 */
#ifndef JACCL_FABRIC_H
#define JACCL_FABRIC_H

#include <stddef.h>
#include <stdint.h>

#include "util/sock.h"

#define FAB_MAX_LANES     16
#define FAB_NAME_MAX      64
#define FAB_CONN_INFO_MAX 1024 /* largest blob ep_local_info may produce */

struct fab_ops;

/* ---- The objects: each carries its ops ----
 *
 * Every object a back end hands out starts with one of these heads, embedded as the first
 * member of the back end's own struct (tcp: struct tcp_domain, tcp_ep, tcp_mr; verbs:
 * struct vb_domain, vb_ep, vb_mr; the CQ both share: struct fab_swcq in fabric/swcq.h), the way
 * rdma-core providers embed struct verbs_qp in their own QP. The back end finds its struct
 * again with jaccl_container_of (util/container.h) at the top of each fab_ops function, and its
 * internal functions take its own types; callers only ever see the heads. So a caller reaches
 * the fabric through the object it holds (ep->ops->post_send(ep, ...)), never through a
 * process-wide "current back end", and objects of two back ends can live side by side.
 *
 * The head holds the ops and nothing else. What the endpoints of both back ends share besides
 * (struct fab_ep_base: the peer's description and the sticky failure, fabric/ep_base.h) stays
 * inside each back end's endpoint: it is shared implementation, not interface; callers reach
 * the failure through ep_error, and a back end is free to keep it differently.
 *
 * An object's ops are set once when it is made (an mr, a CQ and an endpoint take their
 * domain's) and never change. Objects only work with objects of the same back end: an endpoint
 * with its own domain's CQ and registrations. */
struct fab_domain {
    const struct fab_ops *ops;
};
struct fab_cq {
    const struct fab_ops *ops;
};
struct fab_ep {
    const struct fab_ops *ops;
};
struct fab_mr {
    const struct fab_ops *ops;
};

/* What a device looks like to the plugin core (turned into ncclNetProperties by it). */
struct fab_dev_info {
    char name[FAB_NAME_MAX]; /* unique per device, e.g. "eth0" or "mlx5_0:1" */
    char *pci_path;          /* realpath of the PCI device directory, or NULL (owned by fabric) */
    uint64_t guid;           /* distinct per NIC chip */
    int port;                /* physical port, 0 for sockets */
    int speed_mbps;          /* link speed; 10000 when unknown */
    float latency_us;        /* 0 = let NCCL use its defaults */
    int max_comms;
    size_t max_msg_bytes; /* largest single post this device accepts */
};

enum fab_wc_op {
    FAB_WC_SEND,     /* a posted SEND finished (sender side) */
    FAB_WC_WRITE,    /* a posted WRITE_IMM finished (sender side) */
    FAB_WC_RECV,     /* a SEND arrived in a posted RECV: len bytes in the RECV's buffer */
    FAB_WC_RECV_IMM, /* a WRITE_IMM landed: len bytes at the advertised address, imm valid */
};

/* A work completion's status. An endpoint's failure is a negative errno (ep_error: the error
 * rule, docs/style.md); the work it fails completes with the status fab_wc_status_of gives
 * that errno, and the back ends pick the errno by what broke:
 *   -EMSGSIZE      FAB_WC_LEN_ERR        -ENOMSG     FAB_WC_NO_RECV
 *   -EACCES        FAB_WC_REMOTE_ACCESS  -EPROTO     FAB_WC_PEER_PROTO
 *   -ECANCELED     FAB_WC_FLUSHED        -EIO        FAB_WC_LOCAL_ERR (could not be connected)
 *   -ECONNRESET (the peer closed or reset), -ETIMEDOUT (silent, or retransmissions exhausted),
 *   -ECONNABORTED, and what a socket says when its connection breaks: FAB_WC_PEER_LOST
 *   any other errno (a local system call's): FAB_WC_LOCAL_ERR
 * None of the errnos of the first four rows is one a TCP socket call returns, so a socket's
 * own errno is recorded as it is. */
enum fab_wc_status {
    FAB_WC_OK = 0,
    FAB_WC_FLUSHED,       /* endpoint went to error or was closed before this work ran */
    FAB_WC_LEN_ERR,       /* an arriving SEND was larger than the posted RECV */
    FAB_WC_REMOTE_ACCESS, /* a WRITE_IMM named memory outside the target's registrations */
    FAB_WC_NO_RECV,       /* a message arrived with no RECV posted (TCP only; UC would drop it) */
    FAB_WC_PEER_LOST,     /* peer closed, reset, or stayed silent past the liveness deadline */
    FAB_WC_LOCAL_ERR,     /* local resource or system call failure */
    FAB_WC_PEER_PROTO,    /* the peer broke the wire protocol (corrupt frame, bad message) */
};

struct fab_wc {
    uint64_t wr_id;
    struct fab_ep *ep;
    enum fab_wc_op op;
    enum fab_wc_status status;
    uint32_t len; /* bytes received (RECV, RECV_IMM); bytes sent for SEND/WRITE */
    uint32_t imm; /* RECV_IMM; RECV of a post_send_imm SEND (0 for post_send); FAB_IMM_MAX */
    int lane;
};

/* A registered buffer, as the peer needs to know it to WRITE_IMM into it. */
struct fab_remote_buf {
    uint64_t addr;
    uint64_t rkey;
};

struct fab_ep_attr {
    int nlanes;            /* 1..FAB_MAX_LANES */
    int max_send_wr;       /* per lane: most posts outstanding on the send side */
    int max_recv_wr;       /* per lane: most RECVs posted at once */
    uint64_t liveness_ns;  /* peer silent this long => FAB_WC_PEER_LOST; 0 = never */
    const char *peer_desc; /* for log messages, e.g. "10.0.0.2:4312"; copied */
    /* Quality of service, resolved by the core (NCCL_JACCL_TC/SL or NCCL's trafficClass).
     * tclass: the traffic class byte; tcp sets it as IP_TOS / IPV6_TCLASS on every lane,
     * verbs as the GRH traffic class. sl: the verbs service level (tcp has none).
     * 0 (what a zeroed attr holds) leaves the system default. */
    int tclass;
    int sl;
    /* Ranks of the caller's group that run on this host, this one included (a CollNet comm
     * counts them from its handles; 0: not known). How the back end polls on a crowded machine
     * may depend on it (util/crowd.h, jaccl_cpu_poller_owns). */
    int host_ranks;
};

/* Callers put at most 16 bits in a WRITE_IMM's immediate: the verbs back end needs the upper
 * half for its own per-lane sequence numbers (loss detection and retransmission on UC). */
#define FAB_IMM_MAX 0xffffu

struct fab_ops {
    const char *name; /* "tcp" or "verbs" */
    /* Carried in listen handles and hellos so that ends running different back ends fail
     * clearly: tcp = 1, verbs = 2. Wire values: never renumber; 0 is never a back end. */
    uint8_t handle_id;
    /* 1 when the side-channel sockets become the lanes (tcp): the lanes of one connection may
     * then leave by different links (one per cable to the peer), and a node between two peers
     * that share no cable can relay them by forwarding bytes. 0 when the lanes are the
     * device's own (verbs queue pairs): a connection keeps to one device, and is never
     * relayed. */
    int lanes_are_socks;

    /* Devices. Called once under the core's init lock. Returns the count (>= 0). */
    int (*init)(void);
    int (*ndevs)(void);
    const struct fab_dev_info *(*dev_info)(int dev);
    void (*fini)(void); /* only after every domain is closed; joins every fabric thread */
    /* Device `dev` as a link (util/sock.h): the IP address (port 0) the core binds its
     * side-channel listen sockets to, so that connection set-up follows the data's path (verbs:
     * the netdev behind the port), and its subnet's prefix length, which says which peers the
     * device reaches (0: unknown, taken as reaching every address). Returns 0, -EINVAL for an
     * unknown device, -ENODEV when the device has no address. */
    int (*dev_link)(int dev, struct jaccl_link *out);
    /* Why the last init found no usable device, for the registry's fallback lines and
     * jaccl-info; NULL when it found some. Read after init and after the fini that follows. */
    const char *(*why_unavailable)(void);
    /* Devices of this kind the system listed at the last init, usable or not (verbs: RDMA
     * devices): some but none usable makes a fallback from this back end a WARN, not an INFO.
     * NULL for a back end with nothing to list beyond what it uses (tcp, the last resort). */
    int (*devices_listed)(void);
    /* Lanes of a p2p connection: the back end's own knob (tcp: sockets, NCCL_JACCL_NSOCKS;
     * verbs: queue pairs, NCCL_JACCL_QPS_PER_CONN). */
    int (*p2p_lanes)(void);

    /* Domain: one per device, refcounted by the caller. */
    int (*domain_open)(int dev, struct fab_domain **out);
    void (*domain_close)(struct fab_domain *dom);

    /* Registration: any byte range, overlapping ranges allowed (each gets its own mr). */
    int (*mr_reg)(struct fab_domain *dom, void *addr, size_t len, struct fab_mr **out);
    void (*mr_dereg)(struct fab_mr *mr);
    /* Advertises mr on ep: the returned address + rkey, sent to ep's peer, lets that peer
     * WRITE_IMM into mr through ep. Keys are unguessable (TCP: 64 random bits per registration;
     * verbs: the NIC's). A WRITE_IMM is valid only for a live registration advertised on the
     * endpoint it arrives on; anything else fails that endpoint with FAB_WC_REMOTE_ACCESS, so a
     * connected peer cannot reach another endpoint's memory. TCP enforces it per endpoint;
     * verbs as far as the NIC does, per protection domain (one per fabric domain). */
    struct fab_remote_buf (*mr_remote)(struct fab_mr *mr, struct fab_ep *ep, void *addr);

    /* Completion queues. cq_wait blocks until cq_poll may return something or the deadline
     * (absolute, jaccl_now_ns() scale) passes: returns 0, or -ETIMEDOUT. It first polls for up
     * to NCCL_JACCL_SPIN_US (less after spins that found nothing, yielding the CPU each round),
     * then sleeps in the kernel (condvar). cq_wake makes a waiter return early (used to stop
     * progress threads). cq_poll never blocks and makes inline progress (see "Progress"). */
    int (*cq_create)(struct fab_domain *dom, int depth, struct fab_cq **out);
    void (*cq_destroy)(struct fab_cq *cq);
    /* >= 0 entries, never blocks; -ENOMEM once a completion could not be stored (the CQ is
     * broken: the caller fails everything that waits on it). */
    int (*cq_poll)(struct fab_cq *cq, struct fab_wc *wc, int max);
    int (*cq_wait)(struct fab_cq *cq, uint64_t deadline_ns);
    void (*cq_wake)(struct fab_cq *cq);

    /* Endpoints. Set-up: ep_create, then send ep_local_info's blob to the peer over
     * side-channel socket 0, receive the peer's blob, then ep_connect with side_socks()
     * connected sockets (ownership passes to the fabric, even on failure). */
    int (*side_socks)(const struct fab_ep_attr *attr);
    int (*ep_create)(struct fab_domain *dom, struct fab_cq *cq, const struct fab_ep_attr *attr,
                     struct fab_ep **out);
    int (*ep_local_info)(struct fab_ep *ep, void *buf, size_t cap); /* returns bytes used */
    int (*ep_connect)(struct fab_ep *ep, const void *peer_info, size_t len, const int *socks,
                      int nsocks);
    /* Drops outstanding work (no completion is delivered after close) and returns at once,
     * on every path: a normal end, a failure, an abort. The connection ends in order
     * (fab_sock_retire): what our kernel holds for the peer still reaches it, a send that
     * completed here is never cut off by a reset, and the peer sees the end of the stream
     * behind our last byte. A message we had only partly handed to the kernel ends cut short,
     * which the peer reports as a failure, never as a complete message. */
    void (*ep_close)(struct fab_ep *ep);
    /* 0 while healthy; else the negative errno that broke it (see enum fab_wc_status), with a
     * reason for WARNs. */
    int (*ep_error)(struct fab_ep *ep, const char **reason);

    /* Data path. All return 0 or a negative errno (-EAGAIN: lane's queue full, retry later). */
    int (*post_recv)(struct fab_ep *ep, int lane, void *buf, size_t cap, struct fab_mr *mr,
                     uint64_t wr_id);
    int (*post_send)(struct fab_ep *ep, int lane, const void *buf, size_t len, struct fab_mr *mr,
                     uint64_t wr_id);
    int (*post_write_imm)(struct fab_ep *ep, int lane, const void *buf, size_t len,
                          struct fab_mr *mr, struct fab_remote_buf dst, uint32_t imm,
                          uint64_t wr_id);
    /* A SEND whose RECV completion carries imm (<= FAB_IMM_MAX) in fab_wc.imm: 16 bits that
     * ride on a message sent anyway instead of a message of their own. NULL where the back end
     * cannot (verbs: a SEND's immediate bits are its own); callers then send them otherwise. */
    int (*post_send_imm)(struct fab_ep *ep, int lane, const void *buf, size_t len,
                         struct fab_mr *mr, uint32_t imm, uint64_t wr_id);
};

/* Human-readable status for WARNs. */
const char *fab_wc_status_str(enum fab_wc_status s);
/* The status the work an endpoint's failure err (ep_error's answer) fails completes with: the
 * one mapping (see enum fab_wc_status); FAB_WC_OK for 0. */
enum fab_wc_status fab_wc_status_of(int err);

/* Orderly close of a connected socket (fabric/sock_retire.c); returns at once. It shuts only
 * our sending side (the FIN follows our last byte), keeps reading and dropping what the peer
 * sends (a socket closed with unread bytes, or shut for reading, answers the peer's next byte
 * with a reset, and a reset discards what our kernel still holds for the peer), and closes the
 * socket once the peer's kernel acknowledged everything, once the connection broke, or once
 * the peer took nothing for stall_ns (0: 5 s). Sockets not settled at once wait on a reaper
 * thread that runs only while it holds some. */
#define FAB_LINGER_STALL_NS 2000000000ull
void fab_sock_retire(int fd, uint64_t stall_ns);
/* At the fabric's shutdown: gives the retired sockets at most FAB_LINGER_STALL_NS more, closes
 * the rest, and joins the reaper. */
void fab_sock_retire_fini(void);
/* Sockets still held, and those closed with bytes the peer had not taken (for tests, logs). */
void fab_sock_retire_stats(uint64_t *pending, uint64_t *forced);

/* ---- The registry (fabric.c): which back end serves this process ----
 *
 * NCCL_JACCL_FABRIC names one back end, or `auto`: try them in order (verbs, then tcp) and take
 * the first that finds a usable device; the last in the order is the fallback and is taken
 * with whatever it finds, even nothing. A named back end must find a device, except the
 * fallback, which is taken as in auto. Every back end not used gets a reason (why it was
 * passed over, or why it was not tried). The caller serialises select and shutdown (the core
 * does both under its init lock); the getters read what the last select left and stay valid
 * after shutdown, until the next select. */

#define FAB_WHY_MAX 192

/* Chooses and initialises a back end (closing one a previous select left open). Returns its
 * device count (>= 0) with *out set; or, with *out NULL and a WARN logged, -ENODEV when the
 * back end NCCL_JACCL_FABRIC names has no usable device, -EIO when the fallback's init failed. */
int fab_select(const struct fab_ops **out);
/* Closes the chosen back end (its fini: every domain must be closed); a no-op when none. */
void fab_shutdown(void);
/* The back end the last select chose and shutdown has not closed yet; NULL otherwise. */
const struct fab_ops *fab_chosen(void);
/* Why the last select chose its back end, or why it found none ("init() was not called"
 * before the first). */
const char *fab_why(void);
/* The back ends in trial order: count, then each one's ops and why the last select did not use
 * it (NULL for the chosen one, and for all of them before the first select). */
int fab_backend_count(void);
const struct fab_ops *fab_backend(int i);
const char *fab_backend_why_not(int i);

#endif
