/* SPDX-License-Identifier: BSD-3-Clause */
/* Point-to-point comms and their receiver-driven protocol.
 *
 * The receiver posts a receive, then tells the sender where it may write: a clear-to-send
 * (CTS) control message with buffer address, rkey, capacity, tag, and which lanes to use. The
 * sender matches CTSs in order with its isends and WRITE_IMMs the data, striped over those
 * lanes; every chunk's immediate names the request slot, so the receiver knows which request
 * each landed chunk belongs to and checks it against the receive it consumed. The same
 * protocol runs on TCP and on verbs UC: nothing is ever sent that the peer did not ask for. */
#ifndef JACCL_CORE_P2P_H
#define JACCL_CORE_P2P_H

#include <pthread.h>
#include <stdint.h>

#include "core/comm.h"
#include "core/conn.h"
#include "util/sticky.h"

#define P2P_NSLOTS    64 /* requests in flight per comm (NCCL needs NCCL_NET_MAX_REQUESTS) */
#define P2P_CTRL_BUFS (2 * P2P_NSLOTS)
#define P2P_CTS_MAGIC 0x4a435453u /* "JCTS" */
#define P2P_ALIGN     128         /* stripe boundaries keep NCCL's LL128 lines whole */

/* imm layout (16 bits, FAB_IMM_MAX): slot in the high byte, flags in the low one. */
#define P2P_IMM_SLOT(imm) (((imm) >> 8) & 0xffu)
#define P2P_IMM_TRUNC     0x1u
#define P2P_IMM(slot, fl) (((uint32_t)(slot) << 8) | (fl))

/* wr_id layout: type | seq | index */
enum p2p_wr { WR_CTRL_RECV = 1, WR_CTRL_SEND, WR_DATA_RECV, WR_DATA_WRITE };
#define P2P_WR(type, seq, idx) (((uint64_t)(type) << 56) | ((uint64_t)(seq) << 24) | (idx))
#define P2P_WR_TYPE(w)         ((unsigned)((w) >> 56))
#define P2P_WR_SEQ(w)          ((uint32_t)((w) >> 24))
#define P2P_WR_IDX(w)          ((unsigned)((w)&0xffffff))

struct p2p_cts {
    uint32_t magic;
    uint32_t seq;
    uint64_t addr;
    uint64_t rkey;
    uint64_t cap;
    int32_t tag;
    uint16_t nlanes;
    uint16_t lane0;
};

struct p2p_comm;

#define P2P_REQ_MAGIC 0x4a524551u
struct p2p_req {
    uint32_t magic;
    struct p2p_comm *comm;
    int used;
    int is_send;
    uint32_t seq;
    int nlanes, lane0;
    int chunks_done;
    uint32_t lanes_seen; /* bit per lane, receiver side */
    size_t size;         /* bytes moved (receiver: sum of landed chunks) */
    size_t cap;
    int trunc;
    uint64_t t_start, t_warn;
};

struct p2p_comm {
    struct jaccl_comm_hdr hdr;
    pthread_mutex_t lock;
    const struct fab_ops *ops; /* hdr.dom's, taken at creation: every fabric call goes here */
    struct fab_cq *cq;
    struct fab_ep *ep;
    int nlanes;
    size_t min_chunk;
    char peer[112]; /* the peer's address, and the relay a relayed connection goes through */
    /* Once broken, every call fails: a negative code of core/err.h. An endpoint failure is
     * WARNed only once it fails work (see p2p_fail_ep). */
    struct jaccl_sticky fail;
    struct p2p_cts *ctrl; /* send comm: CTS landing buffers; recv comm: outgoing CTSs */
    struct fab_mr *ctrl_mr;
    struct p2p_cts cts_q[P2P_CTRL_BUFS]; /* send comm: received, not yet matched */
    unsigned cts_head, cts_tail;
    uint32_t next_seq; /* recv: next irecv; send: next CTS expected */
    struct p2p_req reqs[P2P_NSLOTS];
};

struct p2p_listen {
    struct jaccl_comm_hdr hdr;
    struct jaccl_listener *listener;
    struct p2p_comm *pending; /* recv comm being accepted */
    int nlanes;
    int ctx_tc; /* trafficClass of the listen's NCCL context, for the comms it accepts */
};

/* p2p_comm.c */
void p2p_comm_free(struct p2p_comm *c);
/* finalize(ctx): free the connects of that ctx NCCL never finished. */
void jaccl_p2p_abandon(void *ctx);

/* p2p_cts.c: 0 and *out filled when `len` bytes at `buf` are the CTS a send comm of `nlanes`
 * lanes expects next (sequence number `seq`); -EPROTO otherwise (the peer's fault). */
int p2p_cts_decode(const void *buf, size_t len, uint32_t seq, int nlanes, struct p2p_cts *out);

/* p2p_proto.c: all under c->lock */
void p2p_progress(struct p2p_comm *c);
void p2p_close_failed(struct p2p_comm *c);
/* Records the comm's first failure (err: a negative code of core/err.h) and WARNs it; returns
 * the failure that stands, this one or an earlier one. */
int p2p_fail(struct p2p_comm *c, int err, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

#endif
