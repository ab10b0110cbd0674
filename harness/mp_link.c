/* SPDX-License-Identifier: BSD-3-Clause */
/* listen / connect / accept loops, as NCCL's proxy runs them. */
#include <sched.h>
#include <string.h>

#include "mp_check.h"
#include "mp_link.h"
#include "mp_proc.h"
#include "mp_util.h"

int mp_listen_publish(const struct mp_net *n, int slot, void **lcomm)
{
    char h[NCCL_NET_HANDLE_MAXSIZE] = {0};
    *lcomm = NULL;
    if (!MP_OK(mp_net_listen(n, n->dev, h, lcomm)) || !MP_CHECK(*lcomm, "listen gave no comm"))
        return -1;
    mp_publish_handle(slot, h);
    return 0;
}

int mp_connect_accept(const struct mp_net *n, void *handle, void **scomm, void *lcomm, void **rcomm,
                      int timeout_s)
{
    int want_s = scomm != NULL, want_r = rcomm != NULL;
    if (want_s)
        *scomm = NULL;
    if (want_r)
        *rcomm = NULL;
    double deadline = mp_now() + timeout_s;
    while ((want_s && !*scomm) || (want_r && !*rcomm)) {
        if (want_s && !*scomm && !MP_OK(mp_net_connect(n, n->dev, handle, scomm)))
            return -1;
        if (want_r && !*rcomm && !MP_OK(mp_net_accept(n, lcomm, rcomm)))
            return -1;
        if (!MP_CHECK(mp_now() < deadline,
                      "connect/accept not done after %d s (connect %s, "
                      "accept %s)",
                      timeout_s, want_s && !*scomm ? "pending" : "done",
                      want_r && !*rcomm ? "pending" : "done"))
            return -1;
        sched_yield();
    }
    return 0;
}

int mp_ring_connect(const struct mp_net *n, int slot, struct mp_ring *r)
{
    void *l = NULL;
    char h[NCCL_NET_HANDLE_MAXSIZE];
    memset(r, 0, sizeof(*r));
    if (mp_listen_publish(n, slot, &l) != 0)
        return -1;
    mp_barrier();
    memcpy(h, mp_peer_handle((mp_rank + 1) % mp_sh->nranks, slot), sizeof(h));
    int rc = mp_connect_accept(n, h, &r->scomm, l, &r->rcomm, mp_scaled(20));
    MP_OK(mp_net_close_listen(n, l));
    return rc;
}

void mp_ring_close(const struct mp_net *n, struct mp_ring *r)
{
    if (r->scomm)
        MP_OK(mp_net_close_send(n, r->scomm));
    if (r->rcomm)
        MP_OK(mp_net_close_recv(n, r->rcomm));
    r->scomm = r->rcomm = NULL;
}
