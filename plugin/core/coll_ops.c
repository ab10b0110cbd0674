/* SPDX-License-Identifier: BSD-3-Clause */
/* iallreduce / iallgather / ireducescatter: validate every argument, describe the operation in
 * logical coordinates (algo/chunks.h), pick the algorithm, queue it. Nothing is sent here.
 *
 * Windows (NCCL v8+): the logical buffer is nranks * bytesPerRank bytes, rank r's segment at
 * r * bytesPerRank; a call covers [windowOffset, windowOffset + windowBytes) of it. The window
 * buffer (all-gather output, reduce-scatter input) holds exactly that range; the rank buffer
 * (all-gather input, reduce-scatter output) holds window ∩ own segment. Only those bytes move. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "core/api.h"
#include "core/coll.h"
#include "core/err.h"
#include "util/log.h"

/* ---- argument checks: each returns 0, or WARNs and returns a code of core/err.h ---- */

static int check_buffer(struct coll_comm *c, const char *op, const char *what, const void *p,
                        size_t len, void *mhandle)
{
    const struct jaccl_mh *mh = mhandle;
    if (len == 0)
        return 0;
    if (!p) {
        JWARN("%s: NULL %s with %zu bytes", op, what, len);
        return -EFAULT;
    }
    int rc = jaccl_mh_covers(mh, p, len, op);
    if (rc != 0)
        return rc;
    if (mh->owner != &c->h->hdr) {
        JWARN("%s: the %s was registered on another comm", op, what);
        return -EFAULT;
    }
    return 0;
}

/* Buffers must be the same memory laid out the in-place way, or not overlap at all. */
static int check_alias(const char *op, const char *a, size_t alen, const char *b, size_t blen,
                       const char *inplace_b)
{
    if (!alen || !blen || b == inplace_b || a + alen <= b || b + blen <= a)
        return 0;
    JWARN("%s: input and output overlap without being in place", op);
    return -EINVAL;
}

static int check_reduce(const char *op, ncclDataType_t t, ncclRedOp_t r, jaccl_reduce_fn *fn)
{
    *fn = jaccl_reduce_fn_get((enum jaccl_dtype)t, (enum jaccl_redop)r);
    if (*fn)
        return 0;
    JWARN("%s: unsupported data type %d or reduction %d", op, (int)t, (int)r);
    return -EINVAL;
}

/* windowOffset + windowBytes within nranks * bytesPerRank, with no overflow anywhere. */
static int check_window(struct coll_comm *c, const char *op, size_t bpr, size_t wo, size_t wb,
                        size_t esz)
{
    size_t total = bpr * (size_t)c->nranks;
    if (bpr && total / bpr != (size_t)c->nranks) {
        JWARN("%s: %d ranks of %zu bytes overflow", op, c->nranks, bpr);
        return -EMSGSIZE;
    }
    if (wo > total || wb > total - wo) {
        JWARN("%s: window [%zu, +%zu) is outside the %zu-byte buffer", op, wo, wb, total);
        return -EMSGSIZE;
    }
    if (bpr % esz || wo % esz || wb % esz) {
        JWARN("%s: bytesPerRank %zu, windowOffset %zu or windowBytes %zu is not a multiple of "
              "the %zu-byte element",
              op, bpr, wo, wb, esz);
        return -EMSGSIZE;
    }
    return 0;
}

static int check_part(const char *op, int n, const struct jaccl_sge *parts, size_t wb)
{
    if (n != 1 || !parts) {
        JWARN("%s: %d parts given, jaccl takes exactly 1", op, n);
        return n != 1 ? -EMSGSIZE : -EFAULT;
    }
    if (parts[0].size < wb) {
        JWARN("%s: part of %zu bytes for a %zu-byte window", op, parts[0].size, wb);
        return -EMSGSIZE;
    }
    return 0;
}

/* ---- common path ---- */

static struct coll_comm *begin(void *comm, void **request, const char *op)
{
    if (!request) {
        JWARN("%s: NULL request pointer", op);
        return NULL;
    }
    *request = NULL;
    return coll_handle_obj(comm, COMM_COLL, op);
}

static int submit(struct coll_comm *c, struct algo_op *op, void **request)
{
    int err = jaccl_sticky_status(&c->fail);
    if (err != 0)
        return err;
    algo_choose(op, &c->choice);
    return coll_enqueue(c, op, request);
}

static struct algo_buf buf_of(void *p, void *mhandle, size_t base, size_t len)
{
    const struct jaccl_mh *mh = mhandle;
    return (struct algo_buf){.p = p, .mr = len && mh ? mh->mr : NULL, .base = base, .len = len};
}

static int allreduce(void *collComm, void *sendData, void *recvData, size_t count,
                     ncclDataType_t dataType, ncclRedOp_t redOp, void *sendMhandle,
                     void *recvMhandle, void **request)
{
    const char *name = "CollNet iallreduce";
    struct coll_comm *c = begin(collComm, request, name);
    struct algo_op op = {.dtype = dataType, .redop = redOp};
    if (!c)
        return request ? -EBADF : -EFAULT;
    int rc = check_reduce(name, dataType, redOp, &op.fn);
    if (rc != 0)
        return rc;
    size_t esz = jaccl_dtype_size((enum jaccl_dtype)dataType);
    if (count > SIZE_MAX / esz) {
        JWARN("%s: %zu elements overflow", name, count);
        return -EMSGSIZE;
    }
    size_t bytes = count * esz;
    if ((rc = check_buffer(c, name, "send buffer", sendData, bytes, sendMhandle)) != 0 ||
        (rc = check_buffer(c, name, "receive buffer", recvData, bytes, recvMhandle)) != 0 ||
        (rc = check_alias(name, sendData, bytes, recvData, bytes, sendData)) != 0)
        return rc;
    algo_geom_allreduce(&op.g, c->nranks, c->rank, count, esz);
    op.in = buf_of(sendData, sendMhandle, 0, bytes);
    op.out = buf_of(recvData, recvMhandle, 0, bytes);
    op.in_place = bytes && sendData == recvData;
    return submit(c, &op, request);
}

ncclResult_t jaccl_coll_iallreduce(void *collComm, void *sendData, void *recvData, size_t count,
                                   ncclDataType_t dataType, ncclRedOp_t redOp, void *sendMhandle,
                                   void *recvMhandle, void **request)
{
    return jaccl_err_to_nccl(allreduce(collComm, sendData, recvData, count, dataType, redOp,
                                       sendMhandle, recvMhandle, request));
}

/* All-gather and reduce-scatter: a window buffer (recvParts / sendParts) holding the window and
 * a rank buffer (sendData / recvData) holding window ∩ own segment. */
static int submit_window(struct coll_comm *c, const char *name, struct algo_op *op,
                         enum algo_kind kind, size_t esz, size_t bpr, size_t wo, size_t wb,
                         int nparts, const struct jaccl_sge *parts, void *rank_buf, void *rank_mh,
                         void **request)
{
    int ag = kind == ALGO_ALLGATHER, rc;
    if ((rc = check_window(c, name, bpr, wo, wb, esz)) != 0 ||
        (rc = check_part(name, nparts, parts, wb)) != 0)
        return rc;
    algo_geom_window(&op->g, kind, c->nranks, c->rank, esz, bpr, wo, wb);
    struct algo_range mine;
    algo_chunk(&op->g, c->rank, &mine);
    char *win = parts[0].address, *inplace = win + (mine.lo - wo);
    if ((rc = check_buffer(c, name, ag ? "receive part" : "send part", win, wb,
                           parts[0].mhandle)) != 0 ||
        (rc = check_buffer(c, name, ag ? "send buffer" : "receive buffer", rank_buf, mine.len,
                           rank_mh)) != 0 ||
        (rc = check_alias(name, win, wb, rank_buf, mine.len, inplace)) != 0)
        return rc;
    struct algo_buf wbuf = buf_of(win, parts[0].mhandle, wo, wb);
    struct algo_buf rbuf = buf_of(rank_buf, rank_mh, mine.lo, mine.len);
    op->in = ag ? rbuf : wbuf;
    op->out = ag ? wbuf : rbuf;
    op->in_place = mine.len && rank_buf == inplace;
    return submit(c, op, request);
}

ncclResult_t jaccl_coll_iallgather(void *collComm, void *sendData, int nRecvParts,
                                   const struct jaccl_sge *recvParts, size_t bytesPerRank,
                                   size_t windowOffset, size_t windowBytes, void *sendMhandle,
                                   void **request)
{
    const char *name = "CollNet iallgather";
    struct coll_comm *c = begin(collComm, request, name);
    struct algo_op op = {.dtype = -1, .redop = -1};
    if (!c)
        return jaccl_err_to_nccl(request ? -EBADF : -EFAULT);
    return jaccl_err_to_nccl(submit_window(c, name, &op, ALGO_ALLGATHER, 1, bytesPerRank,
                                           windowOffset, windowBytes, nRecvParts, recvParts,
                                           sendData, sendMhandle, request));
}

ncclResult_t jaccl_coll_ireducescatter(void *collComm, int nSendParts,
                                       const struct jaccl_sge *sendParts, void *recvData,
                                       size_t bytesPerRank, size_t windowOffset, size_t windowBytes,
                                       ncclDataType_t dataType, ncclRedOp_t redOp,
                                       void *recvMhandle, void **request)
{
    const char *name = "CollNet ireducescatter";
    struct coll_comm *c = begin(collComm, request, name);
    struct algo_op op = {.dtype = dataType, .redop = redOp};
    if (!c)
        return jaccl_err_to_nccl(request ? -EBADF : -EFAULT);
    int rc = check_reduce(name, dataType, redOp, &op.fn);
    if (rc != 0)
        return jaccl_err_to_nccl(rc);
    size_t esz = jaccl_dtype_size((enum jaccl_dtype)dataType);
    return jaccl_err_to_nccl(submit_window(c, name, &op, ALGO_REDUCESCATTER, esz, bytesPerRank,
                                           windowOffset, windowBytes, nSendParts, sendParts,
                                           recvData, recvMhandle, request));
}

/* Host memory only: nothing is ever in flight between the NIC and the buffer. */
ncclResult_t jaccl_coll_iflush(void *collComm, void *data, int size, void *mhandle, void **request)
{
    if (!begin(collComm, request, "CollNet iflush"))
        return jaccl_err_to_nccl(request ? -EBADF : -EFAULT);
    return ncclSuccess;
}
