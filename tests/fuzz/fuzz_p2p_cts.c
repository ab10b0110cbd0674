/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer: the p2p clear-to-send a send comm receives. Input: one byte for the comm's lane
 * count, four for the sequence number it expects, then the message (its length as received).
 * A CTS that is accepted must only name lanes the comm has, in order. */
#include "core/p2p.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct p2p_cts cts;
    uint32_t seq;

    if (size < 5)
        return 0;
    int nlanes = 1 + data[0] % FAB_MAX_LANES;
    memcpy(&seq, data + 1, 4);
    data += 5;
    size -= 5;
    if (p2p_cts_decode(data, size, seq, nlanes, &cts) != 0)
        return 0;
    FUZZ_CHECK(size == sizeof(cts) && cts.magic == P2P_CTS_MAGIC && cts.seq == seq);
    FUZZ_CHECK(cts.nlanes >= 1 && cts.nlanes <= nlanes && cts.lane0 < nlanes);
    /* isend's striping: every stripe's lane must exist. */
    for (int i = 0; i < cts.nlanes; i++)
        FUZZ_CHECK((cts.lane0 + i) % nlanes < nlanes);
    return 0;
}
