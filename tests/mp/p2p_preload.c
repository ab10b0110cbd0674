/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p_preload: NCCL stores NCCL_NET_OPTIONAL_RECV_COMPLETION (0x1) in *request before irecv
 * (LL/LL128) and then trusts whatever irecv leaves there; a 0x1 left behind would be passed
 * to test() as a request.
 *   - every irecv overwrites the preloaded value, with a request or with NULL when it has no
 *     free slot (more receives are posted than the plugin keeps: 100 at once);
 *   - an irecv that fails (n = 2 buffers with maxRecvs 1) overwrites it too;
 *   - the receives complete normally, in order, with exact sizes; on v11 and v8. */
#include <stdio.h>
#include <string.h>

#include "mp.h"

#define COUNT  300
#define WINDOW 100
#define MSG    5000
#define STRIDE 9216

static void failing_irecv(const struct mp_net *n, void *comm, char *buf, void *mh)
{
    void *bufs[2] = {buf, buf + 64};
    size_t caps[2] = {64, 64};
    int tags[2] = {0, 0};
    void *mhs[2] = {mh, mh};
    void *req = (void *)NCCL_NET_OPTIONAL_RECV_COMPLETION;
    ncclNetProperties_v12_t p;
    MP_OK(mp_net_props(n, n->dev, &p));
    if (p.maxRecvs > 1)
        return; /* grouped receives are legal there; nothing to provoke */
    ncclResult_t rc = mp_net_irecv_n(n, comm, 2, bufs, caps, tags, mhs, &req);
    MP_CHECK(rc != ncclSuccess, "irecv of 2 buffers with maxRecvs %d succeeded", p.maxRecvs);
    MP_CHECK(req != (void *)NCCL_NET_OPTIONAL_RECV_COMPLETION,
             "a failing irecv left the preloaded 0x1 in *request");
}

static int preload_rank(int rank, int nranks, void *arg)
{
    struct mp_net n;
    if (mp_net_open(&n, *(int *)arg) != 0)
        return 1;
    void *l = NULL, *c = NULL, *mh = NULL;
    char h[NCCL_NET_HANDLE_MAXSIZE];
    if (rank == 1 && mp_listen_publish(&n, 0, &l) != 0)
        return 1;
    mp_barrier();
    memcpy(h, mp_peer_handle(1, 0), sizeof(h));
    if (mp_connect_accept(&n, h, rank == 0 ? &c : NULL, l, rank == 1 ? &c : NULL, mp_scaled(20)) !=
        0)
        return 1;
    if (l)
        MP_OK(mp_net_close_listen(&n, l));
    size_t bytes = (size_t)WINDOW * STRIDE;
    char *buf = mp_alloc(bytes);
    MP_OK(mp_net_regmr(&n, c, buf, bytes, NCCL_PTR_HOST, &mh));
    if (rank == 1)
        failing_irecv(&n, c, buf, mh);
    /* The receiver posts all it can before the sender starts, so irecv runs out of slots. */
    struct mp_flow f = {.net = &n,
                        .comm = c,
                        .is_send = rank == 0,
                        .count = COUNT,
                        .window = WINDOW,
                        .base = buf,
                        .stride = STRIDE,
                        .mh = mh,
                        .size = MSG,
                        .seed = 77,
                        .check = 1,
                        .preload = rank == 1};
    if (rank == 1)
        mp_flow_step(&f);
    mp_barrier();
    MP_CHECK(mp_flows_run(&f, 1, mp_scaled(30)) == 0, "%s: %s", rank ? "recv" : "send",
             mp_result_str(f.err));
    MP_CHECK(f.bad == 0, "%d receives wrong", f.bad);
    if (rank == 1)
        mp_note("v%d: %d preloaded irecvs, %d at once at most, %ld came back NULL (slots full), "
                "none left 0x1",
                n.version, COUNT, f.peak, f.retries);
    mp_barrier();
    MP_OK(mp_net_deregmr(&n, c, mh));
    MP_OK(rank == 0 ? mp_net_close_send(&n, c) : mp_net_close_recv(&n, c));
    MP_OK(mp_net_fini(&n));
    mp_free(buf, bytes);
    return 0;
}

int main(int argc, char **argv)
{
    mp_begin("p2p_preload", "irecv overwrites a preloaded *request = 0x1", argc, argv);
    return mp_end(mp_run_versions(MP_SAMPLE_VERSIONS, NULL, NULL, 2, mp_scaled(60), preload_rank));
}
