/* SPDX-License-Identifier: BSD-3-Clause */
/* What every comm object handed to NCCL starts with. Whether a pointer NCCL passes is one of
 * them, still open and of the right kind is the registry's answer (core/registry.h), never
 * something read through the pointer. */
#ifndef JACCL_CORE_COMM_H
#define JACCL_CORE_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "fabric/fabric.h"
#include "nccl_abi/nccl_types.h"
#include "nccl_abi/net_common.h"

enum jaccl_comm_kind {
    COMM_LISTEN = 0x4a430001,
    COMM_SEND = 0x4a430002,
    COMM_RECV = 0x4a430003,
    COMM_COLL_LISTEN = 0x4a430004,
    COMM_COLL = 0x4a430005,
};

struct jaccl_comm_hdr;

/* How a comm registers NCCL's buffers when its one domain is not enough: a CollNet comm over
 * several devices registers them in each (core/coll_dom.c). */
struct jaccl_reg_ops {
    int (*reg)(struct jaccl_comm_hdr *c, void *buf, size_t len, struct fab_mr **mr);
    void (*dereg)(struct jaccl_comm_hdr *c, struct fab_mr *mr);
};

struct jaccl_comm_hdr {
    uint32_t kind; /* enum jaccl_comm_kind */
    int dev;
    struct fab_domain *dom;
    const struct jaccl_reg_ops *reg; /* NULL: registrations are dom's */
};

/* The comm behind an opaque NCCL pointer, or NULL (with a WARN naming `what`) if it is not a
 * live comm of `kind` (0 = any send/recv/coll comm). Looked up in the registry. */
struct jaccl_comm_hdr *jaccl_comm_check(void *p, uint32_t kind, const char *what);
/* jaccl_comm_check for a close: the comm is also unregistered (core/registry.h). */
struct jaccl_comm_hdr *jaccl_comm_take(void *p, uint32_t kind, const char *what);

/* A registration handle (NCCL's mhandle), registered as JO_MH owned by its comm. */
struct jaccl_mh {
    struct fab_mr *mr;
    char *base;
    size_t len;
    struct jaccl_comm_hdr *owner;
};

/* 0 or a negative code of core/err.h (so are the functions below that return int). */
int jaccl_mr_reg(struct jaccl_comm_hdr *c, void *data, size_t size, int type, void **mhandle);
int jaccl_mr_dereg(struct jaccl_comm_hdr *c, void *mhandle);
/* A closing comm's handles that NCCL never deregistered: unregistered and released. */
void jaccl_mr_drop_all(struct jaccl_comm_hdr *c);
/* What a failed completion on ep means (-ECONNRESET or -EPROTO when the peer is to blame,
 * else -EIO), and in *why the reason: the endpoint's own if it has one, else the status's
 * name. */
int jaccl_wc_failure(const struct fab_ops *ops, struct fab_ep *ep, enum fab_wc_status st,
                     const char **why);
/* 0 when mh is a live memory handle covering [p, p+len) (len 0 always passes); else -EFAULT
 * (not a live handle) or -EMSGSIZE (outside it), with a WARN. */
int jaccl_mh_covers(const struct jaccl_mh *mh, const void *p, size_t len, const char *what);

#endif
