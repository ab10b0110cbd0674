/* SPDX-License-Identifier: BSD-3-Clause */
/* Handle encoding: a fixed little-endian layout, a checksum, validation.
 *
 *   0  magic u32     4  version u16    6  kind u16     8  release[24]
 *  32  secret u64   40  nlanes u8     41  fabric u8   42  dev u16      44  coll_rank u32
 *  48  host u64     56  nlinks u8
 *  57  links: per link family u8 (4 or 6), prefix u8, port u16 (network order), address (4 or
 *      16 bytes, network order); zeros after the last
 * 124  checksum u32 over bytes 0 .. 123 */
#include "core/handle.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "core/version.h"

#define H_SIZE      128
#define OFF_RELEASE 8
#define OFF_SECRET  32
#define OFF_NLANES  40
#define OFF_FABRIC  41
#define OFF_DEV     42
#define OFF_RANK    44
#define OFF_HOST    48
#define OFF_NLINKS  56
#define OFF_LINKS   57
#define OFF_CKSUM   124
#define OLD_RELEASE 48 /* format 2's release field: what a mismatch message may read */

/* FNV-1a: not cryptographic, it only has to make random garbage fail. */
static uint32_t fnv1a(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 16777619u;
    return h;
}

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

static size_t link_size(const struct jaccl_link *l)
{
    return l->addr.sa.sa_family == AF_INET ? 8 : 20;
}

size_t jaccl_link_pack(uint8_t *p, size_t room, const struct jaccl_link *l)
{
    int v4 = l->addr.sa.sa_family == AF_INET;
    if (room < link_size(l))
        return 0;
    p[0] = v4 ? 4 : 6;
    p[1] = (uint8_t)l->prefix;
    memcpy(p + 2, &l->addr.sin.sin_port, 2); /* same offset in sin and sin6 */
    memcpy(p + 4, v4 ? (const void *)&l->addr.sin.sin_addr : (const void *)&l->addr.sin6.sin6_addr,
           v4 ? 4 : 16);
    return link_size(l);
}

int jaccl_handle_links_fit(const struct jaccl_handle *h)
{
    size_t at = OFF_LINKS;
    int n = 0;
    while (n < h->nlinks && at + link_size(&h->links[n]) <= OFF_CKSUM)
        at += link_size(&h->links[n++]);
    return n;
}

int jaccl_handle_encode(const struct jaccl_handle *h, void *out128)
{
    uint8_t *o = out128;
    memset(o, 0, H_SIZE);
    put_le(o, JACCL_HANDLE_MAGIC, 4);
    put_le(o + 4, JACCL_HANDLE_VERSION, 2);
    put_le(o + 6, h->kind, 2);
    /* The release is only named in mismatch messages: a long git-describe version (commit and
     * -dirty) is cut to the field, keeping its release number and commit prefix. */
    snprintf((char *)o + OFF_RELEASE, JACCL_RELEASE_MAX, "%.*s", JACCL_RELEASE_MAX - 1,
             JACCL_VERSION_STR);
    put_le(o + OFF_SECRET, h->secret, 8);
    o[OFF_NLANES] = h->nlanes;
    o[OFF_FABRIC] = h->fabric;
    put_le(o + OFF_DEV, h->dev, 2);
    put_le(o + OFF_RANK, h->coll_rank, 4);
    put_le(o + OFF_HOST, h->host, 8);
    int n = jaccl_handle_links_fit(h);
    size_t at = OFF_LINKS;
    for (int i = 0; i < n; i++)
        at += jaccl_link_pack(o + at, OFF_CKSUM - at, &h->links[i]);
    o[OFF_NLINKS] = (uint8_t)n;
    put_le(o + OFF_CKSUM, fnv1a(o, OFF_CKSUM), 4);
    return n;
}

/* The peer's release, read at its fixed offset without trusting it: printable characters only.
 * Format 1 handles had no release there. */
static void peer_release(const uint8_t *in128, unsigned version, char *out, size_t cap)
{
    if (version < 2) {
        snprintf(out, cap, "older than 0.1.0");
        return;
    }
    size_t n = 0;
    for (; n < OLD_RELEASE && n + 1 < cap && in128[OFF_RELEASE + n]; n++)
        out[n] = isprint(in128[OFF_RELEASE + n]) ? (char)in128[OFF_RELEASE + n] : '?';
    out[n] = '\0';
}

static const char *version_mismatch(const uint8_t *in128, unsigned version)
{
    static _Thread_local char msg[280];
    char peer[OLD_RELEASE + 1];
    peer_release(in128, version, peer, sizeof(peer));
    snprintf(msg, sizeof(msg),
             "the peer runs jaccl %s (handle format %u), this rank runs jaccl %s (handle format "
             "%u): every rank must load the same jaccl version",
             peer, version, JACCL_VERSION_STR, (unsigned)JACCL_HANDLE_VERSION);
    return msg;
}

size_t jaccl_link_unpack(const uint8_t *p, size_t room, struct jaccl_link *l)
{
    if (room < 1)
        return 0;
    int v4 = p[0] == 4;
    size_t need = v4 ? 8 : 20;
    if ((p[0] != 4 && p[0] != 6) || room < need || p[1] > (v4 ? 32 : 128))
        return 0;
    memset(l, 0, sizeof(*l));
    l->addr.sa.sa_family = v4 ? AF_INET : AF_INET6;
    l->prefix = p[1];
    memcpy(&l->addr.sin.sin_port, p + 2, 2);
    memcpy(v4 ? (void *)&l->addr.sin.sin_addr : (void *)&l->addr.sin6.sin6_addr, p + 4,
           v4 ? 4 : 16);
    return need;
}

/* The links and the zeros behind them; the reason if they are malformed. */
static const char *get_links(const uint8_t *in, struct jaccl_handle *h)
{
    h->nlinks = in[OFF_NLINKS];
    if (h->nlinks < 1 || h->nlinks > JACCL_HANDLE_LINKS_MAX)
        return "handle carries no link, or too many";
    size_t at = OFF_LINKS;
    for (int i = 0; i < h->nlinks; i++) {
        size_t n = jaccl_link_unpack(in + at, OFF_CKSUM - at, &h->links[i]);
        if (n == 0)
            return "handle carries a malformed link";
        at += n;
    }
    for (; at < OFF_CKSUM; at++)
        if (in[at] != 0)
            return "handle has bytes after its last link";
    return NULL;
}

static const char *get_fixed(const uint8_t *in, int kind, struct jaccl_handle *h)
{
    if (get_le(in, 4) != JACCL_HANDLE_MAGIC)
        return "not a jaccl handle (bad magic)";
    unsigned version = (unsigned)get_le(in + 4, 2);
    if (version != JACCL_HANDLE_VERSION)
        return version_mismatch(in, version);
    if (get_le(in + OFF_CKSUM, 4) != fnv1a(in, OFF_CKSUM))
        return "handle checksum mismatch (corrupted)";
    h->kind = (uint16_t)get_le(in + 6, 2);
    if (h->kind != kind)
        return kind == JH_P2P ? "a CollNet handle passed to the net API"
                              : "a net handle passed to the CollNet API";
    memcpy(h->release, in + OFF_RELEASE, JACCL_RELEASE_MAX);
    h->release[JACCL_RELEASE_MAX - 1] = '\0';
    h->secret = get_le(in + OFF_SECRET, 8);
    h->nlanes = in[OFF_NLANES];
    h->fabric = in[OFF_FABRIC];
    h->dev = (uint16_t)get_le(in + OFF_DEV, 2);
    h->coll_rank = (uint32_t)get_le(in + OFF_RANK, 4);
    h->host = get_le(in + OFF_HOST, 8);
    if (h->nlanes == 0 || h->nlanes > 64)
        return "handle carries an invalid lane count";
    return NULL;
}

int jaccl_handle_decode(const void *in128, int kind, struct jaccl_handle *h, const char **reason)
{
    if (in128 == NULL) {
        *reason = "NULL handle";
        return -EFAULT;
    }
    memset(h, 0, sizeof(*h));
    const char *why = get_fixed(in128, kind, h);
    if (!why)
        why = get_links(in128, h);
    if (why)
        *reason = why;
    return why ? -EINVAL : 0;
}

uint64_t jaccl_random64(void)
{
    uint64_t v = 0;
    if (getrandom(&v, sizeof(v), 0) == (ssize_t)sizeof(v))
        return v;
    /* getrandom can only fail on ancient kernels; mix time and pid as a last resort. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ((uint64_t)ts.tv_nsec << 32) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 16);
}
