/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p_inflight: many requests in flight at once, both directions, mixed sizes.
 *   - the receiver keeps `window` irecvs posted (32, then 64); the sender posts as many isends
 *     without testing in between, retrying those that come back NULL until their
 *     clear-to-sends are in: each side must hold at least NCCL_NET_MAX_REQUESTS (32) requests;
 *   - sends and receives match in posting order: message i carries pattern i, has its own
 *     size, and lands in a receive whose capacity is often larger;
 *   - test() reports each exact size. */
#include <stdio.h>

#include "mp.h"

#define COUNT      400
#define MAX_MSG    ((1u << 20) + 5)
#define CAP_PAD    (3 * 37)
#define STRIDE     (MAX_MSG + CAP_PAD + 4096 + 64)
#define WINDOW_MAX 64

static const size_t mix_sizes[] = {0,     1,     17,     128,      4096,    4097,
                                   65536, 65549, 200000, 1u << 20, MAX_MSG, 3};
#define NMIX ((int)(sizeof(mix_sizes) / sizeof(mix_sizes[0])))

static size_t size_of(int i, void *arg)
{
    return mix_sizes[(i * 7 + i / NMIX) % NMIX];
}

static size_t cap_of(int i, void *arg)
{
    return size_of(i, arg) + (size_t)(i % 4) * 37;
}

struct side {
    char *sbuf, *rbuf;
    void *smh, *rmh;
    size_t bytes;
};

static void phase(const struct mp_net *n, const struct mp_ring *ring, struct side *sd, int rank,
                  int window)
{
    int peer = 1 - rank;
    struct mp_flow f[2] = {
            {.net = n,
             .comm = ring->rcomm,
             .is_send = 0,
             .count = COUNT,
             .window = window,
             .base = sd->rbuf + 3,
             .stride = STRIDE,
             .mh = sd->rmh,
             .size_fn = size_of,
             .cap_fn = cap_of,
             .seed = (uint64_t)(peer * 100000 + window * 1000),
             .check = 1,
             .tag = peer},
            {.net = n,
             .comm = ring->scomm,
             .is_send = 1,
             .count = COUNT,
             .window = window,
             .base = sd->sbuf + 1,
             .stride = STRIDE,
             .mh = sd->smh,
             .size_fn = size_of,
             .seed = (uint64_t)(rank * 100000 + window * 1000),
             .check = 1,
             .tag = rank},
    };
    /* Receives first, on both ranks, so each sender finds a full window of clear-to-sends; it
     * posts that window without testing in between, however late the clear-to-sends come. */
    MP_CHECK(mp_flow_step(&f[0]) >= 0, "posting %d receives: %s", window, mp_result_str(f[0].err));
    mp_barrier();
    MP_CHECK(mp_flow_fill(&f[1], mp_now() + mp_scaled(20)) == 0,
             "window %d: %d isends in flight, then %s", window, f[1].posted - f[1].done,
             mp_result_str(f[1].err));
    int rc = mp_flows_run(f, 2, mp_scaled(60));
    MP_CHECK(rc == 0, "window %d: recv %s (%d of %d done), send %s (%d of %d done)", window,
             mp_result_str(f[0].err), f[0].done, COUNT, mp_result_str(f[1].err), f[1].done, COUNT);
    MP_CHECK(f[0].bad == 0, "window %d: %d receives wrong", window, f[0].bad);
    MP_CHECK(f[0].peak >= NCCL_NET_MAX_REQUESTS, "window %d: at most %d receives in flight", window,
             f[0].peak);
    MP_CHECK(f[1].peak >= NCCL_NET_MAX_REQUESTS, "window %d: at most %d sends in flight", window,
             f[1].peak);
    mp_note("window %d: %d messages each way in order; peak in flight: %d recv, %d send; "
            "NULL requests: %ld recv, %ld send",
            window, COUNT, f[0].peak, f[1].peak, f[0].retries, f[1].retries);
    mp_barrier();
}

static int inflight_rank(int rank, int nranks, void *arg)
{
    struct mp_net n;
    struct mp_ring ring;
    if (mp_net_open(&n, *(int *)arg) != 0 || mp_ring_connect(&n, 0, &ring) != 0)
        return 1;
    struct side sd = {.bytes = (size_t)WINDOW_MAX * STRIDE + 64};
    sd.sbuf = mp_alloc(sd.bytes);
    sd.rbuf = mp_alloc(sd.bytes);
    MP_OK(mp_net_regmr(&n, ring.scomm, sd.sbuf, sd.bytes, NCCL_PTR_HOST, &sd.smh));
    MP_OK(mp_net_regmr(&n, ring.rcomm, sd.rbuf, sd.bytes, NCCL_PTR_HOST, &sd.rmh));
    unsigned mark = mp_log_mark();
    phase(&n, &ring, &sd, rank, NCCL_NET_MAX_REQUESTS);
    if (mp_failures() == 0)
        phase(&n, &ring, &sd, rank, WINDOW_MAX);
    MP_CHECK(mp_warns_since(mark) == 0, "%u WARN(s) logged", mp_warns_since(mark));
    MP_OK(mp_net_deregmr(&n, ring.scomm, sd.smh));
    MP_OK(mp_net_deregmr(&n, ring.rcomm, sd.rmh));
    mp_ring_close(&n, &ring);
    MP_OK(mp_net_fini(&n));
    mp_free(sd.sbuf, sd.bytes);
    mp_free(sd.rbuf, sd.bytes);
    return 0;
}

int main(int argc, char **argv)
{
    mp_begin("p2p_inflight", "32 and 64 requests in flight both ways, order and sizes kept", argc,
             argv);
    return mp_end(mp_run_versions(MP_SAMPLE_VERSIONS, NULL, NULL, 2, mp_scaled(90), inflight_rank));
}
