/* SPDX-License-Identifier: BSD-3-Clause */
/* The TCP back end's wire format: on every lane, a stream of frames, each a fixed 32-byte header
 * followed by `len` payload bytes. Little-endian, so mixed hosts agree. */
#ifndef JACCL_FABRIC_TCP_WIRE_H
#define JACCL_FABRIC_TCP_WIRE_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>

#define TCP_WIRE_MAGIC   0x4c43434au /* "JCCL" */
#define TCP_WIRE_VERSION 1

enum tcp_op {
    TCP_OP_SEND = 1,      /* lands in the target's oldest posted RECV on this lane */
    TCP_OP_WRITE_IMM = 2, /* lands at raddr (rkey), consumes a RECV to deliver imm */
    TCP_OP_HEARTBEAT = 3, /* len 0; proves the peer is alive, consumed silently */
};

struct tcp_hdr {
    uint32_t magic;
    uint16_t version;
    uint16_t op;
    uint32_t len;
    uint32_t imm;
    uint64_t raddr;
    uint64_t rkey;
};
_Static_assert(sizeof(struct tcp_hdr) == 32, "wire header is 32 bytes");

/* A header in host byte order, as the receiver works with it. */
struct tcp_msg {
    uint16_t op;
    uint32_t len, imm;
    uint64_t raddr, rkey;
};

static inline struct tcp_hdr tcp_hdr_make(uint16_t op, uint32_t len, uint32_t imm, uint64_t raddr,
                                          uint64_t rkey)
{
    struct tcp_hdr h = {
            .magic = htole32(TCP_WIRE_MAGIC),
            .version = htole16(TCP_WIRE_VERSION),
            .op = htole16(op),
            .len = htole32(len),
            .imm = htole32(imm),
            .raddr = htole64(raddr),
            .rkey = htole64(rkey),
    };
    return h;
}

/* 0, or -1 when the bytes are not a header this version understands. */
static inline int tcp_hdr_parse(const struct tcp_hdr *h, struct tcp_msg *m)
{
    if (le32toh(h->magic) != TCP_WIRE_MAGIC || le16toh(h->version) != TCP_WIRE_VERSION)
        return -1;
    m->op = le16toh(h->op);
    m->len = le32toh(h->len);
    m->imm = le32toh(h->imm);
    m->raddr = le64toh(h->raddr);
    m->rkey = le64toh(h->rkey);
    return 0;
}

/* What the header alone says about a frame: NULL when this version accepts it, else what is
 * wrong with it (m is filled either way, zeroed for bytes that are no header of ours). Whether a
 * RECV or a registration backs the frame is the receiver's business. */
static inline const char *tcp_frame_check(const struct tcp_hdr *h, struct tcp_msg *m)
{
    *m = (struct tcp_msg){0};
    if (tcp_hdr_parse(h, m) != 0 || (m->op == TCP_OP_HEARTBEAT && m->len != 0))
        return "sent a corrupt frame header";
    if (m->op != TCP_OP_SEND && m->op != TCP_OP_WRITE_IMM && m->op != TCP_OP_HEARTBEAT)
        return "sent an unknown frame type";
    return NULL;
}

#endif
