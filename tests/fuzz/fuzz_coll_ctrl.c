/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer: a CollNet control message (credits, operation, goodbye). Input: one byte for the
 * link's data-lane count, two for the peer's rank, then the message. An accepted message must
 * come from that peer and describe exactly the link's lanes, so applying its credits (as
 * on_ctrl does) stays inside the stream table. */
#include "core/coll.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct coll_ctrl m;
    uint32_t granted[ALGO_MAX_PARTS] = {0};
    uint16_t src;

    if (size < 3)
        return 0;
    int ndata = data[0] % (ALGO_MAX_PARTS + 2); /* one past the limit too */
    memcpy(&src, data + 1, 2);
    data += 3;
    size -= 3;
    if (coll_ctrl_decode(data, size, ndata, src, &m) != 0)
        return 0;
    FUZZ_CHECK(ndata <= ALGO_MAX_PARTS && m.ndata == ndata && m.src == src);
    FUZZ_CHECK(m.magic == COLL_CTRL_MAGIC);
    for (int i = 0; i < m.ndata; i++)
        if ((int32_t)(m.posted[i] - granted[i]) > 0)
            granted[i] = m.posted[i];
    return 0;
}
