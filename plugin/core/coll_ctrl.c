/* SPDX-License-Identifier: BSD-3-Clause */
/* Decoding a CollNet control message (credits, the sender's operation, goodbye): the bytes a
 * peer sends on a link's control lane. Pure, so the fuzz target can drive it
 * (tests/fuzz/fuzz_coll_ctrl.c). */
#include <errno.h>
#include <string.h>

#include "core/coll.h"

int coll_ctrl_decode(const void *buf, size_t len, int ndata, int src, struct coll_ctrl *out)
{
    if (len != sizeof(*out) || ndata < 0 || ndata > ALGO_MAX_PARTS)
        return -EPROTO; /* the peer sent what no jaccl peer sends */
    memcpy(out, buf, sizeof(*out));
    /* From the rank this link was set up with, describing exactly our data lanes. */
    if (out->magic != COLL_CTRL_MAGIC || out->ndata != ndata || out->src != src ||
        (out->flags & ~COLL_CTRL_BYE) != 0)
        return -EPROTO;
    return 0;
}
