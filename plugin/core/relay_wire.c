/* SPDX-License-Identifier: BSD-3-Clause */
/* Relay messages: encoders and pure decoders (core/relay_wire.h). */
#include "core/relay_wire.h"

#include <errno.h>
#include <string.h>

#define Q_MAGIC   0x514c524au /* "JRLQ" */
#define A_MAGIC   0x414c524au /* "JRLA" */
#define P_MAGIC   0x504c524au /* "JRLP" */
#define R_VERSION 1

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static int head_ok(const uint8_t *in, size_t len, size_t min, uint32_t magic)
{
    return len >= min && get_le(in, 4) == magic && get_le(in + 4, 2) == R_VERSION;
}

/* The reserved bytes [from, to) are zero: what decodes encodes back byte for byte. */
static int zeros(const uint8_t *in, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        if (in[i])
            return 0;
    return 1;
}

size_t relay_query_encode(const struct relay_query *q, uint8_t *out)
{
    memset(out, 0, 16);
    put_le(out, Q_MAGIC, 4);
    put_le(out + 4, R_VERSION, 2);
    put_le(out + 8, q->id, 8);
    size_t at = 16;
    int n = 0;
    for (; n < q->nlinks; n++) {
        size_t k = jaccl_link_pack(out + at, RELAY_QUERY_MAX - at, &q->links[n]);
        if (k == 0)
            break;
        at += k;
    }
    out[6] = (uint8_t)n;
    return at;
}

int relay_query_decode(const uint8_t *in, size_t len, struct relay_query *q)
{
    if (!head_ok(in, len, 16, Q_MAGIC) || in[6] < 1 || in[6] > JACCL_HANDLE_LINKS_MAX || in[7] != 0)
        return -EPROTO;
    memset(q, 0, sizeof(*q));
    q->id = get_le(in + 8, 8);
    q->nlinks = in[6];
    size_t at = 16;
    for (int i = 0; i < q->nlinks; i++) {
        size_t k = jaccl_link_unpack(in + at, len - at, &q->links[i]);
        if (k == 0)
            return -EPROTO;
        at += k;
    }
    return at == len ? 0 : -EPROTO;
}

void relay_answer_encode(const struct relay_answer *a, uint8_t out[RELAY_ANSWER_LEN])
{
    memset(out, 0, RELAY_ANSWER_LEN);
    put_le(out, A_MAGIC, 4);
    put_le(out + 4, R_VERSION, 2);
    out[6] = (uint8_t)a->link;
    put_le(out + 8, a->id, 8);
    out[16] = (uint8_t)(a->port >> 8);
    out[17] = (uint8_t)a->port;
}

int relay_answer_decode(const uint8_t *in, size_t len, struct relay_answer *a)
{
    if (len != RELAY_ANSWER_LEN || !head_ok(in, len, RELAY_ANSWER_LEN, A_MAGIC) || in[7] ||
        !zeros(in, 18, RELAY_ANSWER_LEN))
        return -EPROTO;
    a->link = in[6];
    a->id = get_le(in + 8, 8);
    a->port = (uint16_t)(in[16] << 8 | in[17]);
    return a->port && a->link < JACCL_HANDLE_LINKS_MAX ? 0 : -EPROTO;
}

void jaccl_relay_preamble(const union jaccl_sockaddr *target,
                          unsigned char out[JACCL_RELAY_PREAMBLE])
{
    int v4 = target->sa.sa_family == AF_INET;
    memset(out, 0, JACCL_RELAY_PREAMBLE);
    put_le(out, P_MAGIC, 4);
    put_le(out + 4, R_VERSION, 2);
    out[6] = v4 ? 4 : 6;
    memcpy(out + 8, &target->sin.sin_port, 2); /* same offset in sin and sin6 */
    memcpy(out + 12,
           v4 ? (const void *)&target->sin.sin_addr : (const void *)&target->sin6.sin6_addr,
           v4 ? 4 : 16);
}

int relay_preamble_decode(const uint8_t in[JACCL_RELAY_PREAMBLE], union jaccl_sockaddr *target)
{
    if (!head_ok(in, JACCL_RELAY_PREAMBLE, JACCL_RELAY_PREAMBLE, P_MAGIC) ||
        (in[6] != 4 && in[6] != 6) || in[7] || !zeros(in, 10, 12) ||
        (in[6] == 4 && !zeros(in, 16, JACCL_RELAY_PREAMBLE)))
        return -EPROTO;
    memset(target, 0, sizeof(*target));
    int v4 = in[6] == 4;
    target->sa.sa_family = v4 ? AF_INET : AF_INET6;
    memcpy(&target->sin.sin_port, in + 8, 2);
    memcpy(v4 ? (void *)&target->sin.sin_addr : (void *)&target->sin6.sin6_addr, in + 12,
           v4 ? 4 : 16);
    return target->sin.sin_port ? 0 : -EPROTO;
}
