/* SPDX-License-Identifier: BSD-3-Clause */
/* The fabric contract suite (fab_contract.h) on the TCP back end: two endpoints in one process,
 * each lane a loopback TCP connection. TCP's own mechanics (framing, heartbeats, the pollers'
 * hand-off, keys, raw-socket peers) are test_fabric_tcp.c's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fab_contract.h"
#include "fabric/tcp/tcp.h"

static const struct fc_harness tcp_harness = {
        .name = "fabric contract: tcp",
        .ops = &fab_tcp_ops,
        .dev = 0,
        .sock_pair = fc_tcp_pair,
        .closed_why = "closed the connection (lane ",
        .lane0 = "(lane 0)",
        .writes_done_when_sent = 1, /* a WRITE_IMM completes once in our kernel */
};

int main(void)
{
    int failed = fc_run(&tcp_harness);

    /* As the fabric's shutdown does: the reaper thread that ended the connections in order is
     * joined (ThreadSanitizer reports a thread that exited unjoined). */
    fab_sock_retire_fini();
    return failed;
}
