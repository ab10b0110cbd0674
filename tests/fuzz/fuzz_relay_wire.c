/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer: what a neighbour sends a relay service or a node looking for one (core/relay_wire.h):
 * a query or an answer on the UDP port, the preamble of a relayed connection. Each decodes or is
 * refused; what decodes encodes back to the same bytes. */
#include "core/relay_wire.h"
#include "fuzz.h"

static void query(const uint8_t *data, size_t size)
{
    struct relay_query q;
    uint8_t again[RELAY_QUERY_MAX];
    if (relay_query_decode(data, size, &q) != 0)
        return;
    FUZZ_CHECK(q.nlinks >= 1 && q.nlinks <= JACCL_HANDLE_LINKS_MAX);
    FUZZ_CHECK(relay_query_encode(&q, again) == size);
    FUZZ_CHECK(memcmp(again, data, size) == 0);
}

static void answer(const uint8_t *data, size_t size)
{
    struct relay_answer a;
    uint8_t again[RELAY_ANSWER_LEN];
    if (relay_answer_decode(data, size, &a) != 0)
        return;
    FUZZ_CHECK(a.port != 0 && a.link >= 0 && a.link < JACCL_HANDLE_LINKS_MAX);
    relay_answer_encode(&a, again);
    FUZZ_CHECK(memcmp(again, data, RELAY_ANSWER_LEN) == 0);
}

static void preamble(const uint8_t *data, size_t size)
{
    uint8_t in[JACCL_RELAY_PREAMBLE], again[JACCL_RELAY_PREAMBLE];
    union jaccl_sockaddr t;
    fuzz_fill(in, sizeof(in), data, size);
    if (relay_preamble_decode(in, &t) != 0)
        return;
    FUZZ_CHECK(t.sa.sa_family == AF_INET || t.sa.sa_family == AF_INET6);
    jaccl_relay_preamble(&t, again);
    FUZZ_CHECK(memcmp(again, in, JACCL_RELAY_PREAMBLE) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    query(data, size);
    answer(data, size);
    preamble(data, size);
    return 0;
}
