/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p_truncate: a send larger than the receive posted for it.
 *   - the receiver's test returns ncclInvalidUsage and a WARN says "truncated";
 *   - the sender gets an error too (from isend or test), never a silent success;
 *   - nothing is written past the receive's capacity;
 *   - on each table shape (v12, v11, and v8 with its int sizes), for a zero-byte receive, an odd
 *     small one, and a large one striped over several lanes. */
#include <stdio.h>
#include <string.h>

#include "mp.h"

struct tcase {
    size_t cap, send;
};

static const struct tcase cases[] = {
        {0, 1},
        {4096, 4097},
        {100, 65536},
        {(1u << 20) + 3, (4u << 20) + 1},
};
#define NCASES ((int)(sizeof(cases) / sizeof(cases[0])))
#define BUF    ((8u << 20) + 8192)

/* Rank 1 receives `c->cap` while rank 0 sends `c->send`, on a fresh connection. */
static int one_case(const struct mp_net *n, int rank, int idx, char *buf, size_t bytes)
{
    const struct tcase *c = &cases[idx];
    void *l = NULL, *comm = NULL, *mh = NULL;
    char h[NCCL_NET_HANDLE_MAXSIZE];
    if (rank == 1 && mp_listen_publish(n, 0, &l) != 0)
        return -1;
    mp_barrier();
    memcpy(h, mp_peer_handle(1, 0), sizeof(h));
    if (mp_connect_accept(n, h, rank == 0 ? &comm : NULL, l, rank == 1 ? &comm : NULL,
                          mp_scaled(20)) != 0)
        return -1;
    if (l)
        MP_OK(mp_net_close_listen(n, l));
    MP_OK(mp_net_regmr(n, comm, buf, bytes, NCCL_PTR_HOST, &mh));
    unsigned mark = mp_log_mark();
    if (rank == 0) {
        mp_fill(buf + 1, c->send, (uint64_t)idx);
        ncclResult_t rc = mp_send_wait(n, comm, buf + 1, c->send, 0, mh, mp_scaled(10));
        MP_CHECK(rc != ncclSuccess && rc != ncclInProgress,
                 "send of %zu into a %zu-byte receive: %s, expected an error", c->send, c->cap,
                 rc == ncclInProgress ? "no completion" : "success");
        mp_note("v%d: send %zu into %zu -> sender %s", n->version, c->send, c->cap,
                mp_result_str(rc));
    } else {
        memset(buf, MP_GUARD_BYTE, bytes);
        int got = -1;
        ncclResult_t rc = mp_recv_wait(n, comm, buf + 5, c->cap, 0, mh, &got, mp_scaled(10));
        MP_CHECK(rc == ncclInvalidUsage,
                 "receive of %zu into %zu bytes: %s (size %d), expected "
                 "ncclInvalidUsage",
                 c->send, c->cap, mp_result_str(rc), got);
        MP_CHECK(mp_warn_seen(mark, "truncated"), "no WARN mentioning \"truncated\"");
        size_t bad = mp_guard_check(buf + 5 + c->cap, 4096);
        MP_CHECK(bad == (size_t)-1, "byte %zu past the %zu-byte capacity was written", bad, c->cap);
        MP_CHECK(mp_guard_check(buf, 5) == (size_t)-1, "bytes before the receive were written");
    }
    mp_barrier(); /* both sides saw their error before either closes */
    MP_OK(mp_net_deregmr(n, comm, mh));
    MP_OK(rank == 0 ? mp_net_close_send(n, comm) : mp_net_close_recv(n, comm));
    return 0;
}

static int truncate_rank(int rank, int nranks, void *arg)
{
    struct mp_net n;
    if (mp_net_open(&n, *(int *)arg) != 0)
        return 1;
    char *buf = mp_alloc(BUF);
    for (int i = 0; i < NCASES; i++)
        if (one_case(&n, rank, i, buf, BUF) != 0)
            return 1;
    MP_OK(mp_net_fini(&n));
    mp_free(buf, BUF);
    return 0;
}

int main(int argc, char **argv)
{
    mp_begin("p2p_truncate", "send > posted capacity: ncclInvalidUsage + WARN, sender errors", argc,
             argv);
    return mp_end(mp_run_versions(MP_SAMPLE_VERSIONS, NULL, NULL, 2, mp_scaled(60), truncate_rank));
}
