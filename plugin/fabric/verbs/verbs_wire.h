/* SPDX-License-Identifier: BSD-3-Clause */
/* The verbs back end's wire format, the twin of tcp/tcp_wire.h: what crosses between two
 * back ends. Three things, each pure data with pure functions (the fuzz targets drive them):
 *  - the 32-bit immediate of every RDMA WRITE-with-immediate segment;
 *  - the side-channel frames (TCP: ACK, NAK, probe, heartbeat, RECV advertisements, credits);
 *  - the connection blob an endpoint hands its peer through ep_local_info.
 * Both ends run the same build; multi-byte fields are little-endian on the wire. */
#ifndef JACCL_FABRIC_VERBS_WIRE_H
#define JACCL_FABRIC_VERBS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "fabric/fabric.h"

/* ---- immediate data: type:2 | epoch:3 | seq:11 | low 16 bits ----
 * low 16 bits: the caller's immediate on a WRITE_FINAL, VB_SEND_TOO_LONG on a SEND_FINAL,
 * VB_ACK_REQ on a PART segment that fills the sender's window. With VB_LO_CTL set they are the
 * back end's own:
 *  - SEND_FINAL | VB_LO_CTL | k (15 bits): a sequenced advertisement, RECV k of the lane; its
 *    bytes (struct vb_adv_wire) landed in RECV k's slot of the ring;
 *  - WRITE_PART | VB_LO_CTL | kind, no bytes, no sequence number of its own: a control. An ACK
 *    (UC) or a CREDIT (RC) carries in its seq field the low bits of the receiver's next
 *    expected segment or of the hardware receives it has posted again; an ASK names the RECV
 *    whose advertisement a SEND waits for, its number's low 13 bits in the low half and the 11
 *    above them in the seq field. */
#define VB_SEND_TOO_LONG 1u
#define VB_ACK_REQ       2u
#define VB_LO_CTL        0x8000u
#define VB_LO_CREDIT     0x4000u
#define VB_LO_ASK        0x2000u
#define VB_ASK_LO_MASK   0x1fffu
#define VB_ASK_BITS      24 /* of a RECV's number an ASK carries */
#define VB_ADV_IDX_MASK  0x7fffu
enum vb_seg_type { VB_WRITE_FINAL = 0, VB_WRITE_PART = 1, VB_SEND_FINAL = 2, VB_SEND_PART = 3 };
#define VB_SEQ_BITS   11
#define VB_SEQ_MASK   ((1u << VB_SEQ_BITS) - 1)
#define VB_EPOCH_MASK 7u

static inline uint32_t vb_imm_make(enum vb_seg_type t, uint32_t epoch, uint32_t seq, uint32_t lo)
{
    return ((uint32_t)t << 30) | ((epoch & VB_EPOCH_MASK) << 27) | ((seq & VB_SEQ_MASK) << 16) |
           (lo & 0xffffu);
}
static inline enum vb_seg_type vb_imm_type(uint32_t imm)
{
    return (enum vb_seg_type)(imm >> 30);
}
static inline uint32_t vb_imm_epoch(uint32_t imm)
{
    return (imm >> 27) & VB_EPOCH_MASK;
}
static inline uint32_t vb_imm_seq(uint32_t imm)
{
    return (imm >> 16) & VB_SEQ_MASK;
}

static inline int vb_imm_is_ctl(uint32_t imm)
{
    return vb_imm_type(imm) == VB_WRITE_PART && (imm & VB_LO_CTL);
}
static inline int vb_imm_is_adv(uint32_t imm)
{
    return vb_imm_type(imm) == VB_SEND_FINAL && (imm & VB_LO_CTL);
}

/* ---- advertisements (verbs_adv.c) ----
 * Where RECV `idx` of a lane is: written by its owner into slot idx % slots of the lane's ring in
 * the peer's memory (the ring's address, key and size come in the blob). Little-endian. */
struct vb_adv_wire {
    uint64_t addr;
    uint32_t rkey;
    uint32_t cap;
    uint32_t idx; /* the RECV's number on its lane: the reader checks it is the one it wants */
    uint32_t pad;
};
#define VB_ADV_MAX_SLOTS (VB_ADV_IDX_MASK + 1) /* the immediate names a RECV modulo this */

/* ---- side-channel frames (verbs_side.c) ---- */
enum vb_frame_type {
    VB_F_READY = 1,
    VB_F_ACK,
    VB_F_NAK,
    VB_F_PROBE,
    VB_F_REPLY,
    VB_F_HB,
    VB_F_LAST = VB_F_HB, /* the decoder, the fuzzer and its seeds read the range from here */
};
#define VB_FRAME 24 /* bytes per frame */
/* A frame as read: type, lane, epoch, seq; addr and rkey are spare. ACK goes here only when an
 * endpoint closes (its QPs go with it); otherwise ACKs and credits are RDMA controls. */
struct vb_frame {
    uint8_t type, lane, epoch;
    uint32_t seq;
    uint64_t addr;
    uint32_t rkey;
};
enum { VB_FRAME_OK = 0, VB_FRAME_BAD_TYPE = -1, VB_FRAME_BAD_LANE = -2 };
/* Decodes VB_FRAME bytes for an endpoint of `nlanes` lanes (pure; the fuzz target drives it). */
int vb_frame_decode(const unsigned char *f, int nlanes, struct vb_frame *out);
void vb_frame_encode(const struct vb_frame *fr, unsigned char *f); /* VB_FRAME bytes */

/* ---- the connection blob (verbs_qp.c) ---- */
/* What one end sends the other through ep_local_info (all little-endian on the wire; both
 * ends run the same build). */
#define VB_INFO_MAGIC      0x4a564231u      /* "JVB1" */
#define VB_INFO_ONE_PACKET 1u               /* send me single-packet UC segments only */
#define VB_MAX_RECV        VB_ADV_MAX_SLOTS /* most RECVs per lane an endpoint posts */
struct vb_info {
    uint32_t magic;
    uint8_t qp_type; /* IBV_QPT_UC or IBV_QPT_RC */
    uint8_t nlanes;
    uint8_t link_layer;
    uint8_t mtu;
    uint16_t lid;
    uint16_t flags;    /* VB_INFO_* */
    uint32_t max_recv; /* RECVs it may have posted per lane */
    uint8_t gid[16];
    /* Its advertisement rings, ring_slots entries per lane, lane i's at entry i * ring_slots of
     * ring_addr: where the other end writes where its RECVs are (struct vb_adv_wire). */
    uint64_t ring_addr;
    uint32_t ring_rkey;
    uint32_t ring_slots;
    struct {
        uint32_t qpn;
        uint32_t psn;
    } lane[FAB_MAX_LANES];
};

/* NULL if the peer's blob fits an endpoint of these local values, else why not (a pure function
 * of the blob: the fuzz target drives it; vb_info_check wraps it for an endpoint). */
const char *vb_info_check_vals(int nlanes, int qp_type, int link_layer, const struct vb_info *peer,
                               size_t len);

#endif
