/* SPDX-License-Identifier: BSD-3-Clause */
/* Orderly closes (fabric.h: fab_sock_retire, ep_close): a closed connection never turns into a
 * reset while the peer may still read, the close never waits for the peer, the reaper lets go
 * of what it holds, and a peer that closes in mid-message does not destroy the whole messages
 * its other lanes still carry. Raw sockets play the peer. */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "fab_contract.h"

#include "fabric/fabric.h"
#include "fabric/tcp/tcp.h"
#include "fabric/tcp/tcp_int.h"
#include "fabric/tcp/tcp_wire.h"
#include "util/clock.h"

static const struct fab_ops *F = &fab_tcp_ops;

#define MS      1000000ull
#define WAIT_NS (20000 * MS) /* how long a condition may take on a loaded machine */

static void fill(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(i * 31 + seed);
}

static uint64_t held(void)
{
    uint64_t n;
    fab_sock_retire_stats(&n, NULL);
    return n;
}

static uint64_t forced(void)
{
    uint64_t n;
    fab_sock_retire_stats(NULL, &n);
    return n;
}

/* Reads everything until the end of the stream; the total, or -errno on an error (a reset). */
static long read_all(int fd)
{
    unsigned char sink[65536];
    long total = 0;
    ssize_t n;

    while ((n = recv(fd, sink, sizeof(sink), 0)) > 0)
        total += n;
    return n == 0 ? total : -errno;
}

/* A retired socket whose peer took nothing yet: the call returns, the reaper holds it, the
 * peer's later bytes are drained (no reset), and the peer reads every queued byte and then the
 * end of stream. Then the reaper lets go by itself. */
static void retire_keeps_queued_bytes(void **state)
{
    enum { SZ = 1 << 20 };
    int a, b, small = 16 << 10, big = 4 << 20;
    unsigned char *buf = malloc(SZ);
    uint64_t h0 = held();

    fill(buf, SZ, 1);
    fc_tcp_pair(&a, &b);
    assert_int_equal(setsockopt(b, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
    assert_int_equal(setsockopt(a, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big)), 0);
    size_t sent = 0;
    while (sent < SZ) {
        ssize_t n = send(a, buf + sent, SZ - sent, MSG_DONTWAIT);
        if (n <= 0)
            break; /* the socket is full: the rest never left */
        sent += (size_t)n;
    }
    assert_true(sent > 0);
    assert_int_equal(send(b, "x", 1, 0), 1); /* unread by `a`: a plain close would reset */
    fab_sock_retire(a, 10000 * MS);
    assert_int_equal(held(), h0 + 1);
    assert_int_equal(send(b, "y", 1, 0), 1); /* after the close: still no reset */
    assert_int_equal(read_all(b), (long)sent);
    uint64_t dl = jaccl_mono_ns() + WAIT_NS;
    while (held() != h0 && jaccl_mono_ns() < dl)
        usleep(1000);
    assert_int_equal(held(), h0);
    close(b);
    free(buf);
}

/* A peer that never reads: the reaper's stall bound lets the socket go (counted as forced), and
 * the fabric's shutdown joins a reaper that still holds one, within its bounded linger. */
static void retire_gives_up_on_a_stalled_peer(void **state)
{
    int a, b, small = 4 << 10;
    char chunk[65536];
    uint64_t f0 = forced();

    memset(chunk, 7, sizeof(chunk));
    fc_tcp_pair(&a, &b);
    assert_int_equal(setsockopt(b, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
    while (send(a, chunk, sizeof(chunk), MSG_DONTWAIT) > 0)
        ;
    fab_sock_retire(a, 50 * MS); /* b reads nothing: acknowledgements stop */
    uint64_t dl = jaccl_mono_ns() + WAIT_NS;
    while (forced() == f0 && jaccl_mono_ns() < dl)
        usleep(1000);
    assert_int_equal(forced(), f0 + 1);

    fc_tcp_pair(&a, &b);
    assert_int_equal(setsockopt(b, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
    while (send(a, chunk, sizeof(chunk), MSG_DONTWAIT) > 0)
        ;
    fab_sock_retire(a, 3600000 * MS); /* only the shutdown's bound can end it */
    assert_true(held() > 0);
    uint64_t t0 = jaccl_mono_ns();
    fab_sock_retire_fini();
    assert_int_equal(held(), 0);
    /* FAB_LINGER_STALL_NS, plus one sweep and a loaded machine's scheduling */
    assert_true(jaccl_mono_ns() - t0 < FAB_LINGER_STALL_NS + WAIT_NS);
    close(b);
}

/* The peer closes lane 0 in the middle of a message and lane 1 after a whole one (a peer that
 * failed its next operation while the previous one's bytes were still on their way): lane 1's
 * message completes, then lane 0's cut-short receive fails. Before, the cut failed the whole
 * endpoint at once and lane 1's message, already in our socket, was flushed. */
static void cut_lane_does_not_flush_the_others(void **state)
{
    enum { LEN = 4096 };
    struct fab_ep_attr attr = {.nlanes = 2, .max_send_wr = 4, .max_recv_wr = 4, .peer_desc = "t"};
    unsigned char msg[LEN], r0[LEN], r1[LEN];
    int ours[2], peer[2];
    struct fab_domain *dom;
    struct fab_cq *cq;
    struct fab_ep *ep;
    struct fab_wc wc;

    fill(msg, LEN, 5);
    for (int i = 0; i < 2; i++)
        fc_tcp_pair(&ours[i], &peer[i]);
    assert_int_equal(F->domain_open(0, &dom), 0);
    assert_int_equal(F->cq_create(dom, 8, &cq), 0);
    assert_int_equal(F->ep_create(dom, cq, &attr, &ep), 0);
    assert_int_equal(F->post_recv(ep, 0, r0, LEN, NULL, 10), 0);
    assert_int_equal(F->post_recv(ep, 1, r1, LEN, NULL, 11), 0);
    struct tcp_hdr h = tcp_hdr_make(TCP_OP_SEND, LEN, 0, 0, 0);
    assert_int_equal(send(peer[0], &h, sizeof(h), 0), (ssize_t)sizeof(h));
    assert_int_equal(send(peer[0], msg, LEN / 2, 0), LEN / 2); /* half of it, then the end */
    shutdown(peer[0], SHUT_WR);
    assert_int_equal(F->ep_connect(ep, NULL, 0, ours, 2), 0);
    /* The cut is seen first (lane 1 has sent nothing yet), then lane 1's message arrives. */
    uint64_t dl = jaccl_now_ns() + WAIT_NS;
    while (atomic_load(&tcp_ep_of(ep)->neof) == 0 && F->ep_error(ep, NULL) == 0 &&
           jaccl_now_ns() < dl)
        usleep(1000);
    assert_int_equal(send(peer[1], &h, sizeof(h), 0), (ssize_t)sizeof(h));
    assert_int_equal(send(peer[1], msg, LEN, 0), LEN);
    shutdown(peer[1], SHUT_WR);
    int got = 0;
    while (got < 2 && jaccl_now_ns() < dl) {
        if (F->cq_poll(cq, &wc, 1) != 1) {
            F->cq_wait(cq, jaccl_now_ns() + 100 * MS);
            continue;
        }
        if (got++ == 0) { /* the whole message first */
            assert_int_equal(wc.wr_id, 11);
            assert_int_equal(wc.status, FAB_WC_OK);
            assert_memory_equal(r1, msg, LEN);
        } else {
            assert_int_equal(wc.wr_id, 10);
            assert_int_equal(wc.status, FAB_WC_PEER_LOST);
        }
    }
    assert_int_equal(got, 2);
    F->ep_close(ep);
    F->cq_destroy(cq);
    F->domain_close(dom);
    close(peer[0]);
    close(peer[1]);
}

/* As the fabric's shutdown does: the reaper thread that ended these tests' connections in order
 * is joined (ThreadSanitizer reports a thread that exited unjoined). */
static int reaper_join(void **state)
{
    fab_sock_retire_fini();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(retire_keeps_queued_bytes),
            cmocka_unit_test(retire_gives_up_on_a_stalled_peer),
            cmocka_unit_test(cut_lane_does_not_flush_the_others),
    };
    return cmocka_run_group_tests(tests, NULL, reaper_join);
}
