/* SPDX-License-Identifier: BSD-3-Clause */
/* Decoding a clear-to-send: the only bytes of the p2p protocol a peer writes into our memory
 * that we interpret. Pure, so the fuzz target can drive it (tests/fuzz/fuzz_p2p_cts.c). */
#include <errno.h>
#include <string.h>

#include "core/p2p.h"

int p2p_cts_decode(const void *buf, size_t len, uint32_t seq, int nlanes, struct p2p_cts *out)
{
    if (len != sizeof(*out))
        return -EPROTO;
    memcpy(out, buf, sizeof(*out));
    /* In order, and naming only lanes this comm has: isend stripes over lane0 + [0, nlanes). */
    if (out->magic != P2P_CTS_MAGIC || out->seq != seq || out->nlanes == 0 ||
        out->nlanes > nlanes || out->lane0 >= nlanes)
        return -EPROTO;
    return 0;
}
