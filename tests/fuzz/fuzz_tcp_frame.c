/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer: the TCP back end's frame header check. Any 32 bytes must be refused or be a frame
 * of a known type whose fields re-encode to the same bytes. */
#include "fabric/tcp/tcp_wire.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tcp_hdr h, again;
    struct tcp_msg m;

    fuzz_fill(&h, sizeof(h), data, size);
    if (tcp_frame_check(&h, &m) != NULL)
        return 0;
    FUZZ_CHECK(m.op == TCP_OP_SEND || m.op == TCP_OP_WRITE_IMM || m.op == TCP_OP_HEARTBEAT);
    FUZZ_CHECK(m.op != TCP_OP_HEARTBEAT || m.len == 0);
    again = tcp_hdr_make(m.op, m.len, m.imm, m.raddr, m.rkey);
    FUZZ_CHECK(memcmp(&h, &again, sizeof(h)) == 0);
    return 0;
}
