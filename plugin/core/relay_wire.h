/* SPDX-License-Identifier: BSD-3-Clause */
/* What relays and the nodes looking for one exchange (core/relay.h), little-endian:
 *
 * query (UDP, broadcast on a cable):   "JRLQ" u32, version u16, nlinks u8, 0 u8, query id u64,
 *                                      the listener's links (handle.h's link entries)
 * answer (UDP, to the asker):          "JRLA" u32, version u16, link u8 (which of the query's
 *                                      links the relay reaches), 0 u8, query id u64, the relay
 *                                      service's TCP port u16 (network order), 0 u16
 * preamble (the relayed socket's first bytes): "JRLP" u32, version u16, family u8 (4 or 6),
 *                                      0 u8, port u16 (network order), 0 u16, address [16]
 *
 * The decoders are pure and fuzzed: anything a neighbour sends must decode or be refused. */
#ifndef JACCL_CORE_RELAY_WIRE_H
#define JACCL_CORE_RELAY_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "core/handle.h"
#include "core/relay.h"

#define RELAY_QUERY_MAX  (16 + 20 * JACCL_HANDLE_LINKS_MAX)
#define RELAY_ANSWER_LEN 20

struct relay_query {
    uint64_t id;
    int nlinks;
    struct jaccl_link links[JACCL_HANDLE_LINKS_MAX];
};

struct relay_answer {
    uint64_t id;
    int link;      /* index into the query's links */
    uint16_t port; /* the relay service's TCP port (host order) */
};

/* Bytes written (<= RELAY_QUERY_MAX); links that do not fit are left out. */
size_t relay_query_encode(const struct relay_query *q, uint8_t *out);
/* 0, or -EPROTO for anything but a well-formed query. */
int relay_query_decode(const uint8_t *in, size_t len, struct relay_query *q);
void relay_answer_encode(const struct relay_answer *a, uint8_t out[RELAY_ANSWER_LEN]);
int relay_answer_decode(const uint8_t *in, size_t len, struct relay_answer *a);
/* The preamble's target; 0, or -EPROTO. */
int relay_preamble_decode(const uint8_t in[JACCL_RELAY_PREAMBLE], union jaccl_sockaddr *target);

#endif
