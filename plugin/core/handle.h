/* SPDX-License-Identifier: BSD-3-Clause */
/* The listen handle NCCL carries between processes (NCCL_NET_HANDLE_MAXSIZE = 128 bytes).
 *
 * It holds only data, never a pointer: NCCL may hand us any 128 bytes, and a garbage handle must
 * turn into an error, not a crash. A checksum catches corruption; the secret keeps strangers
 * who found a port from joining a connection.
 *
 * It names every link the listener listens on (one per device of its fabric: docs/topologies.md),
 * each with its subnet and port, so that a connector picks the cable(s) that reach it whatever
 * device NCCL named. 128 bytes hold at most JACCL_HANDLE_LINKS_MAX IPv4 links, or 3 IPv6 ones
 * (an IPv6 entry takes 20 bytes, an IPv4 one 8); a listener with more advertises the first
 * that fit, with a WARN (jaccl_handle_encode says how many went in). */
#ifndef JACCL_CORE_HANDLE_H
#define JACCL_CORE_HANDLE_H

#include <stddef.h>
#include <stdint.h>

#include "util/sock.h"

#define JACCL_HANDLE_MAGIC     0x4a41434cu /* "JACL" */
#define JACCL_HANDLE_VERSION   3           /* 2 added `release`, 3 the links */
#define JACCL_RELEASE_MAX      24          /* a git-describe version, cut to the field */
#define JACCL_HANDLE_LINKS_MAX 8           /* IPv4 links that fit */

/* magic, version and release keep their offsets (0, 4, 8) in every handle format from 2 on,
 * so a rank can name the peer's jaccl release even when it cannot read the rest. */

enum jaccl_handle_kind { JH_P2P = 1, JH_COLL = 2 };

/* A handle as the code uses it; the wire format is in handle.c. */
struct jaccl_handle {
    uint16_t kind;                   /* enum jaccl_handle_kind */
    uint8_t nlanes;                  /* lanes the connector must open */
    uint8_t fabric;                  /* the fabric's handle_id (1 = tcp, 2 = verbs): ends agree */
    uint16_t dev;                    /* listener's device index (for log messages) */
    uint32_t coll_rank;              /* JH_COLL: the listener's rank in the collective group */
    uint64_t secret;                 /* random per listen */
    uint64_t host;                   /* the listener's jaccl_host_id(): loopback links meet only
                                      * between ranks of one host */
    char release[JACCL_RELEASE_MAX]; /* decoded: the listener's JACCL_VERSION_STR */
    int nlinks;                      /* 1 .. JACCL_HANDLE_LINKS_MAX */
    struct jaccl_link links[JACCL_HANDLE_LINKS_MAX]; /* addr: the listen port on that link */
};

/* Fills the checksum and writes NCCL's 128-byte buffer (rest zeroed). Returns how many of
 * h->links went in, in order (the rest did not fit; 0 only if h has none). */
int jaccl_handle_encode(const struct jaccl_handle *h, void *out128);
/* One link as handles and relay queries carry it: family byte (4 or 6), prefix, port (network
 * order), address. pack writes it at p if room allows and returns its size, else 0; unpack
 * reads one (0: malformed, or longer than room). */
size_t jaccl_link_pack(uint8_t *p, size_t room, const struct jaccl_link *l);
size_t jaccl_link_unpack(const uint8_t *p, size_t room, struct jaccl_link *l);
/* How many of h->links, in order, fit in a handle (all of them, or the first that fit). */
int jaccl_handle_links_fit(const struct jaccl_handle *h);
/* 0 and *h filled when `in128` is a well-formed handle of `kind`; otherwise -EINVAL (a
 * mismatch: another format, kind or build, or corrupted), or -EFAULT for NULL, with the
 * reason set (for a handle of another format it names both jaccl releases, and stays valid
 * until this thread's next call). */
int jaccl_handle_decode(const void *in128, int kind, struct jaccl_handle *h, const char **reason);

uint64_t jaccl_random64(void);

#endif
