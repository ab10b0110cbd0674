/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fabric/ep_base.h"
#include "util/log.h"

void fab_ep_base_init(struct fab_ep_base *b, const char *peer_desc)
{
    snprintf(b->peer, sizeof(b->peer), "%s", peer_desc ? peer_desc : "?");
    jaccl_sticky_init(&b->fail);
}

int fab_ep_base_fail(struct fab_ep_base *b, const char *fabric, const void *ep, int err,
                     int orderly, const char *what)
{
    const char *reason = "";
    if (err >= 0) /* a caller's bug; still a failure, never "healthy" */
        err = -EIO;
    if (!jaccl_sticky_set(&b->fail, err, "peer %s %s", b->peer, what))
        return 0;
    jaccl_sticky_get(&b->fail, &reason);
    if (orderly)
        JINFO(NCCL_NET, "%s fabric: endpoint %p: %s", fabric, ep, reason);
    else
        JINFO(NCCL_NET, "%s fabric: endpoint %p failed (%s: %s): %s", fabric, ep,
              fab_wc_status_str(fab_wc_status_of(err)), strerror(-err), reason);
    return 1;
}

int fab_ep_base_error(const struct fab_ep_base *b, const char **reason)
{
    const char *why = NULL;
    int st = jaccl_sticky_get(&b->fail, &why);
    if (reason)
        *reason = st ? why : NULL;
    return st;
}
