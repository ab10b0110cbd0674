/* SPDX-License-Identifier: BSD-3-Clause */
/* The fabric contract suite: what fabric.h promises of every back end, as cmocka tests that take
 * the back end's ops and a small harness saying how to open a domain there and how to make the
 * side-channel sockets; the endpoints are connected the generic way fabric.h describes
 * (ep_create both ends, exchange ep_local_info's blobs, ep_connect each with the peer's blob and
 * side_socks() connected sockets). test_fab_contract_<backend>.c runs it on one back end; what
 * only one back end does (TCP's framing, heartbeats, keys; verbs' segments and retransmission)
 * stays in that back end's own test files.
 *
 * No assertion depends on a thread being scheduled within some milliseconds: a test waits for
 * the condition itself, with a deadline of seconds (FC_WAIT_NS). */
#ifndef TEST_FAB_CONTRACT_H
#define TEST_FAB_CONTRACT_H

#include <stdint.h>

#include "fabric/fabric.h"

#define FC_MS      1000000ull
#define FC_WAIT_NS (10000 * FC_MS) /* how long a condition may take on a loaded 2-core box */

/* The tests, by name; a harness may skip one, saying why (fc_harness.skip). */
enum fc_test {
    FC_SEND_RECV_SIZES,
    FC_SMALL_BURST,
    FC_LANES_ORDER,
    FC_POST_BEFORE_CONNECT,
    FC_CONCURRENT_POST_POLL,
    FC_WRITE_IMM,
    FC_WRITE_OUT_OF_BOUNDS,
    FC_WRITE_BAD_KEY,
    FC_WRITE_DEREGISTERED,
    FC_WRITE_OTHER_DOMAIN,
    FC_WRITE_OTHER_ENDPOINT,
    FC_LEN_ERR,
    FC_QUEUE_FULL,
    FC_CQ_WAIT_TIMEOUT,
    FC_CQ_WAIT_WAKES,
    FC_PEER_CLOSE,
    FC_CLOSE_IN_FLIGHT,
    FC_SEND_IMM,
    FC_NTESTS
};

struct fc_harness {
    const char *name; /* the cmocka group's name */
    const struct fab_ops *ops;
    int dev; /* domain_open's device */
    /* One connected pair of side-channel sockets (blocking; ep_connect adopts them). */
    void (*sock_pair)(int *a, int *b);
    /* Around every test (NULL: nothing): the back end's init, a fake library's reset. */
    void (*setup)(void);
    void (*teardown)(void);
    /* Messages UC would have dropped (a fake's count): must stay 0 after every test. */
    uint64_t (*silent_drops)(void);
    /* What ep_error's reason says after the peer closed, after "peer <desc> ". */
    const char *closed_why;
    /* How a failure reason names lane 0 (TCP: "(lane 0)"; verbs: "lane 0 (QP ..."). */
    const char *lane0;
    /* A WRITE_IMM completes once handed to the transport (TCP: in our kernel), not once the
     * peer acknowledged it (verbs): it completes OK even when the target then rejects it. */
    int writes_done_when_sent;
    /* NULL, or why this back end cannot pass the test by its design. */
    const char *skip[FC_NTESTS];
};

/* The peer description every endpoint of the suite gets (ep_error's reasons name it). */
#define FC_PEER "127.0.0.1:5000"

/* Side-channel socket pairs for harnesses: loopback TCP, or an AF_UNIX socketpair. */
void fc_tcp_pair(int *a, int *b);
void fc_unix_pair(int *a, int *b);

/* An endpoint's failure as the tests compare it: ep_error's answer, asserted to follow the error
 * rule (0 or a negative errno), as the completion status fab_wc_status_of gives it (the
 * errno of a lost peer depends on how the loss was seen: a reset, an end of stream). */
enum fab_wc_status fc_ep_status(const struct fab_ops *ops, struct fab_ep *ep, const char **why);

/* Runs every contract test on h's back end; cmocka's result (the number failed). */
int fc_run(const struct fc_harness *h);

#endif
