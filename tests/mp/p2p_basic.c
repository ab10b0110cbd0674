/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p_basic: every table v8..v12, both directions between two ranks.
 *   - properties make sense (host pointers, maxRecvs >= 1, size limits in range; from v9 the
 *     device is its own only vNIC member; v12's railId / planeId are NCCL_NET_ID_UNDEF);
 *   - listen returns at once and writes no more than 128 handle bytes;
 *   - connect and accept return ncclSuccess with a NULL comm until the other side is there;
 *   - sizes 0 .. 64 MiB (odd ones included) arrive intact at unaligned addresses, the
 *     receiver's test reports the exact size when the capacity is larger, and nothing past
 *     the message is written;
 *   - a clean run logs no WARN. */
#include <stdio.h>
#include <string.h>

#include "mp.h"

#define MAX_SIZE (64u << 20)
/* A non-blocking call that takes this long has blocked (generous: the box may be loaded). */
#define PROMPT_S ((double)mp_scaled(1))
#define STRIDE   (MAX_SIZE + 8192)
#define WINDOW   2

static const size_t sizes[] = {0,       1, 2, 3, 127, 128, 129, 4095, 4096, 65537, (1u << 20) + 3,
                               MAX_SIZE};
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))

static size_t size_of(int i, void *arg)
{
    return sizes[i];
}

/* Every third receive posts more than will come, so test() must say how much did. */
static size_t cap_of(int i, void *arg)
{
    return sizes[i] + (i % 3 == 1 ? 1000 : 0);
}

static void check_props(const struct mp_net *n)
{
    ncclNetProperties_v12_t p;
    if (!MP_OK(mp_net_props(n, n->dev, &p)))
        return;
    mp_note("v%d: device %d is \"%s\", speed %d Mbps, maxRecvs %d, maxComms %d", n->version, n->dev,
            p.name ? p.name : "(null)", p.speed, p.maxRecvs, p.maxComms);
    MP_CHECK(p.name && *p.name, "device has no name");
    MP_CHECK(p.ptrSupport & NCCL_PTR_HOST, "ptrSupport %#x lacks NCCL_PTR_HOST", p.ptrSupport);
    MP_CHECK(p.maxRecvs >= 1, "maxRecvs %d", p.maxRecvs);
    MP_CHECK(p.netDeviceType == NCCL_NET_DEVICE_HOST, "netDeviceType %d", p.netDeviceType);
    if (n->version >= 9)
        MP_CHECK(p.maxP2pBytes > 0 && p.maxP2pBytes <= (size_t)NCCL_MAX_NET_SIZE_BYTES,
                 "maxP2pBytes %zu out of (0, 1 TiB]", p.maxP2pBytes);
    if (n->version >= 9)
        MP_CHECK(p.vProps.ndevs == 1 && p.vProps.devs[0] == n->dev, "vProps %d devices, [0] = %d",
                 p.vProps.ndevs, p.vProps.devs[0]);
    if (n->version >= 11)
        MP_CHECK(p.maxMultiRequestSize >= 1, "maxMultiRequestSize %d", p.maxMultiRequestSize);
    if (n->version >= 12)
        MP_CHECK(p.railId == NCCL_NET_ID_UNDEF && p.planeId == NCCL_NET_ID_UNDEF,
                 "railId %d, planeId %d: jaccl knows no rails", p.railId, p.planeId);
}

/* Rank 1 listens; the link 0 -> 1 is made by hand to watch the non-blocking promises. */
static void *listen_checked(const struct mp_net *n)
{
    unsigned char h[2 * NCCL_NET_HANDLE_MAXSIZE];
    void *l = NULL, *r = (void *)0x1;
    memset(h, 0xee, sizeof(h));
    double t0 = mp_now();
    MP_OK(mp_net_listen(n, n->dev, h, &l));
    MP_CHECK(mp_now() - t0 < PROMPT_S, "listen took %.3f s", mp_now() - t0);
    MP_CHECK(l != NULL, "listen returned no listen comm");
    for (int i = NCCL_NET_HANDLE_MAXSIZE; i < (int)sizeof(h); i++)
        if (!MP_CHECK(h[i] == 0xee, "listen wrote handle byte %d (> 128)", i))
            break;
    MP_OK(mp_net_accept(n, l, &r));
    MP_CHECK(r == NULL, "accept with nobody connecting returned %p", r);
    mp_publish_handle(0, h);
    return l;
}

/* Rank 0: the first connects must come back NULL while rank 1 does not accept yet. */
static void *connect_early(const struct mp_net *n, char *h)
{
    void *s = (void *)0x1;
    memcpy(h, mp_peer_handle(1, 0), NCCL_NET_HANDLE_MAXSIZE);
    for (int i = 0; i < 20; i++) {
        double t0 = mp_now();
        if (!MP_OK(mp_net_connect(n, n->dev, h, &s)))
            return NULL;
        MP_CHECK(mp_now() - t0 < PROMPT_S, "connect call %d blocked for %.3f s", i, mp_now() - t0);
        if (!MP_CHECK(s == NULL, "connect call %d returned a comm before the peer accepted", i))
            return s;
        mp_sleep_ms(2);
    }
    return NULL;
}

static int link_0_to_1(const struct mp_net *n, int rank, void **scomm, void **rcomm)
{
    char h[NCCL_NET_HANDLE_MAXSIZE];
    void *l = rank == 1 ? listen_checked(n) : NULL;
    mp_barrier();
    if (rank == 0) {
        *scomm = connect_early(n, h);
        mp_flag_set(0, 0, 1);
        if (*scomm)
            return 0;
        return mp_connect_accept(n, h, scomm, NULL, NULL, mp_scaled(20));
    }
    mp_flag_wait(0, 0, 1, mp_scaled(20) * 1000);
    int rc = mp_connect_accept(n, NULL, NULL, l, rcomm, mp_scaled(20));
    MP_OK(mp_net_close_listen(n, l));
    return rc;
}

/* The other direction, 1 -> 0, the ordinary way. */
static int link_1_to_0(const struct mp_net *n, int rank, void **scomm, void **rcomm)
{
    void *l = NULL;
    char h[NCCL_NET_HANDLE_MAXSIZE];
    if (rank == 0 && mp_listen_publish(n, 1, &l) != 0)
        return -1;
    mp_barrier();
    memcpy(h, mp_peer_handle(0, 1), sizeof(h));
    if (rank == 1)
        return mp_connect_accept(n, h, scomm, NULL, NULL, mp_scaled(20));
    int rc = mp_connect_accept(n, NULL, NULL, l, rcomm, mp_scaled(20));
    MP_OK(mp_net_close_listen(n, l));
    return rc;
}

/* Sweeps every size once at send offset `off` and receive offset off+3 (mod 8). */
static int sweep(const struct mp_net *n, int rank, void *s, void *r, char *sbuf, char *rbuf,
                 void *smh, void *rmh, int off)
{
    int peer = 1 - rank;
    int count = off == 0 || off == 5 ? NSIZES : NSIZES - 1; /* 64 MiB at two offsets only */
    struct mp_flow f[2] = {
            {.net = n,
             .comm = s,
             .is_send = 1,
             .count = count,
             .window = WINDOW,
             .base = sbuf + off,
             .stride = STRIDE,
             .mh = smh,
             .size_fn = size_of,
             .seed = (uint64_t)(rank * 1000 + off * 100),
             .check = 1,
             .tag = rank},
            {.net = n,
             .comm = r,
             .is_send = 0,
             .count = count,
             .window = WINDOW,
             .base = rbuf + (off + 3) % 8,
             .stride = STRIDE,
             .mh = rmh,
             .size_fn = size_of,
             .cap_fn = cap_of,
             .seed = (uint64_t)(peer * 1000 + off * 100),
             .check = 1,
             .tag = peer},
    };
    int rc = mp_flows_run(f, 2, mp_scaled(60));
    MP_CHECK(rc == 0, "offset %d: send %s, recv %s", off, mp_result_str(f[0].err),
             mp_result_str(f[1].err));
    MP_CHECK(f[1].bad == 0, "offset %d: %d bad receives", off, f[1].bad);
    return rc;
}

static int basic_rank(int rank, int nranks, void *arg)
{
    struct mp_net n;
    if (mp_net_open(&n, *(int *)arg) != 0)
        return 1;
    unsigned mark = mp_log_mark();
    if (rank == 0)
        check_props(&n);
    void *s = NULL, *r = NULL;
    if (link_0_to_1(&n, rank, &s, &r) != 0 ||
        link_1_to_0(&n, rank, rank == 1 ? &s : NULL, rank == 0 ? &r : NULL) != 0)
        return 1;
    size_t bytes = (size_t)WINDOW * STRIDE + 8;
    char *sbuf = mp_alloc(bytes), *rbuf = mp_alloc(bytes);
    void *smh = NULL, *rmh = NULL;
    MP_OK(mp_net_regmr(&n, s, sbuf, bytes, NCCL_PTR_HOST, &smh));
    MP_OK(mp_net_regmr(&n, r, rbuf, bytes, NCCL_PTR_HOST, &rmh));
    if (rank == 0)
        mp_note("v%d: %d sizes (0 B .. 64 MiB) both ways at offsets 0..7", n.version, NSIZES);
    for (int off = 0; off < 8 && mp_failures() == 0; off++)
        sweep(&n, rank, s, r, sbuf, rbuf, smh, rmh, off);
    mp_barrier(); /* the peer may still be receiving our last message */
    MP_OK(mp_net_deregmr(&n, s, smh));
    MP_OK(mp_net_deregmr(&n, r, rmh));
    MP_OK(mp_net_close_send(&n, s));
    MP_OK(mp_net_close_recv(&n, r));
    MP_OK(mp_net_fini(&n));
    MP_CHECK(mp_warns_since(mark) == 0, "a clean run logged %u WARN(s)", mp_warns_since(mark));
    mp_free(sbuf, bytes);
    mp_free(rbuf, bytes);
    mp_net_unload(&n);
    return 0;
}

int main(int argc, char **argv)
{
    mp_begin("p2p_basic", "every table, sizes 0 .. 64 MiB both ways, unaligned, exact sizes", argc,
             argv);
    return mp_end(mp_run_versions(MP_ALL_VERSIONS, NULL, NULL, 2, mp_scaled(60), basic_rank));
}
