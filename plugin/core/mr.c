/* Memory registration for comms, and the checks and helpers every comm shares. Every regMr gets its
 * own fabric registration: NCCL registers adjacent and overlapping sub-ranges of one allocation,
 * and the fabric (verbs: its MR cache) decides whether they share hardware state. */
#include <stdlib.h>

#include "core/comm.h"
#include "core/state.h"
#include "util/log.h"

struct jaccl_comm_hdr *jaccl_comm_check(void *p, uint32_t kind, const char *what)
{
    struct jaccl_comm_hdr *c = p;
    if (!c) {
        JWARN("%s: NULL comm", what);
        return NULL;
    }
    if (c->kind == JC_DEAD) {
        JWARN("%s: comm %p was already closed", what, p);
        return NULL;
    }
    int ok = kind ? c->kind == kind
                  : (c->kind == JC_SEND || c->kind == JC_RECV || c->kind == JC_COLL);
    if (!ok) {
        JWARN("%s: %p is not a jaccl comm of the right kind", what, p);
        return NULL;
    }
    return c;
}

ncclResult_t jaccl_mr_reg(struct jaccl_comm_hdr *c, void *data, size_t size, int type,
                          void **mhandle)
{
    if (!mhandle)
        return ncclInvalidArgument;
    *mhandle = NULL;
    if (type != NCCL_PTR_HOST) {
        JWARN("regMr: memory type %d is not supported (jaccl registers host memory only)", type);
        return ncclInternalError;
    }
    if (!data && size > 0) {
        JWARN("regMr: NULL buffer of %zu bytes", size);
        return ncclInvalidArgument;
    }
    struct jaccl_mh *mh = calloc(1, sizeof(*mh));
    if (!mh)
        return ncclSystemError;
    int rc = jaccl_fabric()->mr_reg(c->dom, data, size, &mh->mr);
    if (rc != 0) {
        JWARN("regMr: registering %p (%zu bytes) failed: %d", data, size, rc);
        free(mh);
        return ncclSystemError;
    }
    mh->magic = JACCL_MH_MAGIC;
    mh->base = data;
    mh->len = size;
    mh->owner = c;
    *mhandle = mh;
    return ncclSuccess;
}

ncclResult_t jaccl_mr_dereg(struct jaccl_comm_hdr *c, void *mhandle)
{
    struct jaccl_mh *mh = mhandle;
    if (!mh || mh->magic != JACCL_MH_MAGIC) {
        JWARN("deregMr: %p is not a jaccl memory handle", mhandle);
        return ncclInvalidArgument;
    }
    if (mh->owner != c) {
        JWARN("%sderegMr: %p was registered on another comm", c->kind == JC_COLL ? "CollNet " : "",
              mhandle);
        return ncclInvalidArgument;
    }
    jaccl_fabric()->mr_dereg(mh->mr);
    mh->magic = 0;
    free(mh);
    return ncclSuccess;
}

ncclResult_t jaccl_wc_failure(const struct fab_ops *ops, struct fab_ep *ep, enum fab_wc_status st,
                              const char **why)
{
    *why = NULL;
    if (ops->ep_error(ep, why) == 0 || !*why)
        *why = fab_wc_status_str(st);
    switch (st) {
    case FAB_WC_PEER_LOST:
    case FAB_WC_REMOTE_ACCESS:
    case FAB_WC_NO_RECV:
    case FAB_WC_LEN_ERR:
    case FAB_WC_PEER_PROTO:
        return ncclRemoteError;
    default:
        return ncclSystemError;
    }
}

int jaccl_mh_covers(const struct jaccl_mh *mh, const void *p, size_t len, const char *what)
{
    if (len == 0)
        return 1;
    if (!mh || mh->magic != JACCL_MH_MAGIC) {
        JWARN("%s: missing or invalid memory handle", what);
        return 0;
    }
    const char *b = p;
    if (!b || b < mh->base || len > mh->len || (size_t)(b - mh->base) > mh->len - len) {
        JWARN("%s: buffer %p+%zu is outside its registration %p+%zu", what, p, len,
              (void *)mh->base, mh->len);
        return 0;
    }
    return 1;
}
