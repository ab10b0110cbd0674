/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory registration for comms, and the checks and helpers every comm shares. Every regMr gets its
 * own fabric registration: NCCL registers adjacent and overlapping sub-ranges of one allocation,
 * and the fabric (verbs: its MR cache) decides whether they share hardware state. */
#include <errno.h>
#include <stdlib.h>

#include "core/api.h"
#include "core/comm.h"
#include "core/registry.h"
#include "core/state.h"
#include "util/log.h"

static uint32_t obj_kind(uint32_t comm_kind)
{
    switch (comm_kind) {
    case COMM_LISTEN:
        return JO_LISTEN;
    case COMM_SEND:
        return JO_SEND;
    case COMM_RECV:
        return JO_RECV;
    case COMM_COLL_LISTEN:
        return JO_COLL_LISTEN;
    case COMM_COLL:
        return JO_COLL;
    default:
        return JO_SEND | JO_RECV | JO_COLL;
    }
}

struct jaccl_comm_hdr *jaccl_comm_check(void *p, uint32_t kind, const char *what)
{
    return jaccl_reg_find(p, obj_kind(kind), what, NULL);
}

struct jaccl_comm_hdr *jaccl_comm_take(void *p, uint32_t kind, const char *what)
{
    return jaccl_reg_take(p, obj_kind(kind), what, NULL);
}

/* The registration knows its back end; the comm may keep it in more domains than one. */
static void mr_release(struct jaccl_comm_hdr *c, struct fab_mr *mr)
{
    if (c->reg)
        c->reg->dereg(c, mr);
    else
        mr->ops->mr_dereg(mr);
}

int jaccl_mr_reg(struct jaccl_comm_hdr *c, void *data, size_t size, int type, void **mhandle)
{
    if (!mhandle)
        return -EFAULT;
    *mhandle = NULL;
    if (type != JACCL_MEM_HOST) {
        JWARN("regMr: memory type %d is not supported (jaccl registers host memory only)", type);
        return -EFAULT; /* NCCL was told mem_kinds: another kind is its bug */
    }
    if (!data && size > 0) {
        JWARN("regMr: NULL buffer of %zu bytes", size);
        return -EFAULT;
    }
    struct jaccl_mh *mh = calloc(1, sizeof(*mh));
    if (!mh)
        return -ENOMEM;
    int rc = c->reg ? c->reg->reg(c, data, size, &mh->mr)
                    : c->dom->ops->mr_reg(c->dom, data, size, &mh->mr);
    if (rc != 0) {
        JWARN("regMr: registering %p (%zu bytes) failed: %d", data, size, rc);
        free(mh);
        return rc < 0 ? rc : -EIO;
    }
    mh->base = data;
    mh->len = size;
    mh->owner = c;
    if (jaccl_reg_add(mh, sizeof(*mh), 1, JO_MH, c) != 0) {
        mr_release(c, mh->mr);
        free(mh);
        return -ENOMEM;
    }
    *mhandle = mh;
    return 0;
}

static void mh_release(void *obj)
{
    struct jaccl_mh *mh = obj;
    mr_release(mh->owner, mh->mr); /* its comm is open: a close releases its handles first */
    free(mh);
}

int jaccl_mr_dereg(struct jaccl_comm_hdr *c, void *mhandle)
{
    const char *what = c->kind == COMM_COLL ? "CollNet deregMr" : "deregMr";
    void *owner = NULL;
    struct jaccl_mh *mh = jaccl_reg_find(mhandle, JO_MH, what, &owner);
    if (!mh)
        return -EFAULT;
    if (owner != c) {
        JWARN("%s: %p was registered on another comm", what, mhandle);
        return -EFAULT;
    }
    if (!jaccl_reg_take(mh, JO_MH, what, NULL))
        return -EFAULT; /* a racing deregMr got it first */
    mh_release(mh);
    return 0;
}

void jaccl_mr_drop_all(struct jaccl_comm_hdr *c)
{
    jaccl_reg_drain(c, JO_MH, mh_release);
}

int jaccl_wc_failure(const struct fab_ops *ops, struct fab_ep *ep, enum fab_wc_status st,
                     const char **why)
{
    *why = NULL;
    if (ops->ep_error(ep, why) == 0 || !*why)
        *why = fab_wc_status_str(st);
    switch (st) {
    case FAB_WC_PEER_LOST:
        return -ECONNRESET;
    case FAB_WC_REMOTE_ACCESS: /* the peer's writes or sends did not fit what we posted */
    case FAB_WC_NO_RECV:
    case FAB_WC_LEN_ERR:
    case FAB_WC_PEER_PROTO:
        return -EPROTO;
    default:
        return -EIO;
    }
}

int jaccl_mh_covers(const struct jaccl_mh *mh, const void *p, size_t len, const char *what)
{
    if (len == 0)
        return 0;
    if (!jaccl_reg_find(mh, JO_MH, what, NULL))
        return -EFAULT;
    const char *b = p;
    if (!b || b < mh->base || len > mh->len || (size_t)(b - mh->base) > mh->len - len) {
        JWARN("%s: buffer %p+%zu is outside its registration %p+%zu", what, p, len,
              (void *)mh->base, mh->len);
        return -EMSGSIZE;
    }
    return 0;
}
