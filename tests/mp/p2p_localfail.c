/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p_localfail: a comm that fails on its own side lets its peer know at once.
 *   - rank 1 posts a receive with tag 5, rank 0 sends with tag 7: rank 0's isend fails with
 *     ncclInvalidUsage (the tags must match, as NCCL guarantees);
 *   - rank 0 then keeps its comms open (NCCL would close them only later, when it tears the
 *     communicator down) and waits for rank 1's verdict;
 *   - rank 1's receive must fail within a few seconds with ncclRemoteError, not wait until
 *     rank 0 closes: the failed comm closed its connection. */
#include <stdio.h>

#include "mp.h"

#define LEN 4096

static int localfail_rank(int rank, int nranks, void *arg)
{
    struct mp_net n;
    struct mp_ring ring;
    if (mp_net_open(&n, *(int *)arg) != 0 || mp_ring_connect(&n, 0, &ring) != 0)
        return 1;
    char *buf = mp_alloc(LEN);
    void *comm = rank == 0 ? ring.scomm : ring.rcomm, *mh;
    MP_OK(mp_net_regmr(&n, comm, buf, LEN, NCCL_PTR_HOST, &mh));
    if (rank == 0) {
        ncclResult_t rc = mp_send_wait(&n, comm, buf, LEN, 7, mh, mp_scaled(20));
        MP_CHECK(rc == ncclInvalidUsage, "isend with the wrong tag: %s, want ncclInvalidUsage",
                 mp_result_str(rc));
        /* Rank 1 says when it is done; its verdict must not depend on our close. */
        MP_CHECK(mp_flag_wait(1, 0, 1, mp_scaled(30) * 1000) == 0, "rank 1 never finished");
    } else {
        int got = -1;
        double t0 = mp_now();
        ncclResult_t rc = mp_recv_wait(&n, comm, buf, LEN, 5, mh, &got, mp_scaled(15));
        double took = mp_now() - t0;
        int ok = MP_CHECK(rc == ncclRemoteError,
                          "receive from the failed comm: %s after %.1f s, want ncclRemoteError",
                          mp_result_str(rc), took);
        ok &= MP_CHECK(took < mp_scaled(5), "the receive failed only after %.1f s", took);
        if (ok)
            mp_note("the peer's failed comm closed: receive failed with %s after %.2f s",
                    mp_result_str(rc), took);
        mp_flag_set(1, 0, 1);
    }
    MP_OK(mp_net_deregmr(&n, comm, mh));
    mp_ring_close(&n, &ring);
    MP_OK(mp_net_fini(&n));
    mp_free(buf, LEN);
    return 0;
}

int main(int argc, char **argv)
{
    mp_begin("p2p_localfail", "a comm failed by a tag mismatch closes: its peer fails at once",
             argc, argv);
    return mp_end(
            mp_run_versions(MP_SAMPLE_VERSIONS, NULL, NULL, 2, mp_scaled(60), localfail_rank));
}
