/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p_early_send: an isend issued before the receiver's clear-to-send has come returns
 * ncclSuccess with a NULL request, and the caller must post it again (NCCL's proxy does). Two
 * ranks run two exchanges (receive from the peer and send to it, wait for both, as one NCCL
 * step does) through mp_exchange, the helper the fault matrix uses; rank 1 holds its receive
 * #0 back for a while, so rank 0's first isend surely finds no clear-to-send.
 *   - rank 0's isend came back without a request at least once, and its exchange #0 did not
 *     end while rank 1 had no receive posted (a send can not be done before it is matched);
 *   - every receive holds its own exchange's bytes: a send left unposted would make the next
 *     exchange's send fill this exchange's receive (the fault matrix's "byte 0 wrong"). */
#include <string.h>

#include "mp.h"

#define BYTES   (8u << 20) /* two lanes of 4 MiB, as in the fault matrix */
#define FL_XCHG 0          /* rank 0: exchanges it has finished */

static unsigned char pattern(int src, int seq)
{
    return (unsigned char)(src * 31 + seq * 7 + 1);
}

static int all_bytes(const char *buf, unsigned char want, int seq)
{
    for (size_t i = 0; i < BYTES; i++)
        if ((unsigned char)buf[i] != want)
            return MP_CHECK(0, "exchange #%d: byte %zu is %u, not %u", seq, i,
                            (unsigned char)buf[i], want);
    return 1;
}

/* Rank 1's exchange #0, taken apart: its send first, then, once rank 0 has had every chance
 * to get ahead, its receive. */
static void late_receiver(struct mp_xchg *x)
{
    MP_OK(mp_send_wait(x->net, x->scomm, x->sbuf, BYTES, 0, x->smh, mp_scaled(20)));
    /* Rank 0 can end exchange #0 now only if it took its unposted send for done. */
    int ended = mp_flag_wait(0, FL_XCHG, 1, 1000 * mp_scaled(1)) == 0;
    MP_CHECK(!ended, "rank 0's exchange #0 ended before its send could be matched");
    int got = -1;
    MP_OK(mp_recv_wait(x->net, x->rcomm, x->rbuf, BYTES, 0, x->rmh, &got, mp_scaled(20)));
    MP_CHECK(got == (int)BYTES, "exchange #0: received %d bytes, not %u", got, BYTES);
}

static void exchanges(struct mp_xchg *x, int rank)
{
    int peer = 1 - rank;
    for (int seq = 0; seq < 2 && mp_failures() == 0; seq++) {
        memset(x->sbuf, pattern(rank, seq), BYTES);
        memset(x->rbuf, 0, BYTES);
        if (rank == 1 && seq == 0) {
            late_receiver(x);
        } else {
            MP_OK(mp_exchange(x, 0, mp_now() + mp_scaled(20)));
            if (rank == 0 && seq == 0)
                MP_CHECK(x->send_retries > 0, "isend before the clear-to-send got a request");
        }
        if (rank == 0)
            mp_flag_set(0, FL_XCHG, seq + 1);
        all_bytes(x->rbuf, pattern(peer, seq), seq);
    }
}

static int early_rank(int rank, int nranks, void *arg)
{
    struct mp_net n;
    struct mp_ring ring;
    if (mp_net_open(&n, 11) != 0 || mp_ring_connect(&n, 0, &ring) != 0)
        return 1;
    unsigned mark = mp_log_mark();
    struct mp_xchg x = {.net = &n,
                        .scomm = ring.scomm,
                        .rcomm = ring.rcomm,
                        .sbuf = mp_alloc(BYTES),
                        .rbuf = mp_alloc(BYTES),
                        .size = BYTES};
    MP_OK(mp_net_regmr(&n, ring.scomm, x.sbuf, BYTES, NCCL_PTR_HOST, &x.smh));
    MP_OK(mp_net_regmr(&n, ring.rcomm, x.rbuf, BYTES, NCCL_PTR_HOST, &x.rmh));
    exchanges(&x, rank);
    if (rank == 0)
        mp_note("isend before the clear-to-send: %ld NULL request(s), then matched",
                x.send_retries);
    MP_OK(mp_net_deregmr(&n, ring.scomm, x.smh));
    MP_OK(mp_net_deregmr(&n, ring.rcomm, x.rmh));
    mp_ring_close(&n, &ring);
    MP_OK(mp_net_fini(&n));
    MP_CHECK(mp_warns_since(mark) == 0, "a clean run logged %u WARN(s)", mp_warns_since(mark));
    mp_free(x.sbuf, BYTES);
    mp_free(x.rbuf, BYTES);
    return 0;
}

int main(int argc, char **argv)
{
    mp_begin("p2p_early_send", "an isend before the clear-to-send is retried, not lost", argc,
             argv);
    return mp_end(mp_run("receiver-late", "two exchanges, receiver late", 2, mp_scaled(60),
                         early_rank, NULL));
}
