/* What every comm object handed to NCCL starts with, so a stray or closed pointer is caught
 * by its magic instead of being trusted. */
#ifndef JACCL_CORE_COMM_H
#define JACCL_CORE_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "fabric/fabric.h"
#include "nccl_abi/net.h"

enum jaccl_comm_kind {
    JC_LISTEN = 0x4a430001,
    JC_SEND = 0x4a430002,
    JC_RECV = 0x4a430003,
    JC_COLL_LISTEN = 0x4a430004,
    JC_COLL = 0x4a430005,
    JC_DEAD = 0x4a43dead,
};

struct jaccl_comm_hdr {
    uint32_t kind; /* enum jaccl_comm_kind; JC_DEAD once closed */
    int dev;
    struct fab_domain *dom;
};

/* The comm behind an opaque NCCL pointer, or NULL (with a WARN naming `what`) if it is not one
 * of `kind` (0 = any send/recv/coll comm). */
struct jaccl_comm_hdr *jaccl_comm_check(void *p, uint32_t kind, const char *what);

/* A registration handle (NCCL's mhandle). */
#define JACCL_MH_MAGIC 0x4a4d4852u
struct jaccl_mh {
    uint32_t magic;
    struct fab_mr *mr;
    char *base;
    size_t len;
    struct jaccl_comm_hdr *owner;
};

ncclResult_t jaccl_mr_reg(struct jaccl_comm_hdr *c, void *data, size_t size, int type,
                          void **mhandle);
ncclResult_t jaccl_mr_dereg(struct jaccl_comm_hdr *c, void *mhandle);
/* What a failed completion on ep means for NCCL (ncclRemoteError when the peer is to blame,
 * else ncclSystemError), and in *why the reason: the endpoint's own if it has one, else the
 * status's name. */
ncclResult_t jaccl_wc_failure(const struct fab_ops *ops, struct fab_ep *ep, enum fab_wc_status st,
                              const char **why);
/* mh must be ours and cover [p, p+len); len 0 always passes. WARNs on failure. */
int jaccl_mh_covers(const struct jaccl_mh *mh, const void *p, size_t len, const char *what);

#endif
