/* SPDX-License-Identifier: BSD-3-Clause */
/* CollNet listen: one listener per (rank, device). Its handle is jaccl's ordinary handle of
 * kind JH_COLL; nlanes = 2W+1 carries this rank's wire count, so connect can check that every
 * rank runs with the same NCCL_JACCL_RING_WIRES. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/api.h"
#include "core/coll.h"
#include "core/err.h"
#include "core/registry.h"
#include "core/state.h"
#include "util/log.h"
#include "util/param.h"

static int coll_listen(void *ctx, int dev, void *handle, void **listenComm)
{
    if (!listenComm || !handle)
        return -EFAULT;
    *listenComm = NULL;
    if (!jaccl_reg_find(ctx, JO_CTX, "CollNet listen", NULL))
        return -EBADF;
    if (dev < 0 || dev >= jaccl_ndevs()) {
        JWARN("CollNet listen: invalid device %d (have %d)", dev, jaccl_ndevs());
        return -EINVAL;
    }
    struct coll_listen *l = calloc(1, sizeof(*l));
    if (!l || jaccl_state_hold() != 0) {
        free(l);
        return -ENOMEM;
    }
    l->wires = (int)jaccl_param_int(JP_RING_WIRES);
    l->jh = (struct jaccl_handle){.kind = JH_COLL, .nlanes = (uint8_t)(2 * l->wires + 1)};
    int rc = jaccl_listener_open(dev, &l->jh, &l->listener);
    if (rc == 0 && !(l->h = coll_handle_new(COMM_COLL_LISTEN, l))) {
        jaccl_listener_close(l->listener);
        rc = -ENOMEM;
    }
    if (rc != 0) {
        JWARN("CollNet listen on device %d failed: %s", dev, strerror(-rc));
        free(l);
        jaccl_state_put();
        return -EIO; /* a listen socket: nothing the peer or the caller did */
    }
    l->h->hdr.dev = dev;
    jaccl_handle_encode(&l->jh, handle);
    *listenComm = l->h;
    return 0;
}

ncclResult_t jaccl_coll_listen(void *ctx, int dev, void *handle, void **listenComm)
{
    return jaccl_err_to_nccl(coll_listen(ctx, dev, handle, listenComm));
}
