/* SPDX-License-Identifier: BSD-3-Clause */
/* The listen handle NCCL carries between processes (<= NCCL_NET_HANDLE_MAXSIZE bytes).
 *
 * It holds only data, never a pointer: NCCL may hand us any 128 bytes, and a garbage handle must
 * turn into an error, not a crash. A checksum catches corruption; the secret keeps strangers
 * who found the port from joining a connection. */
#ifndef JACCL_CORE_HANDLE_H
#define JACCL_CORE_HANDLE_H

#include <stdint.h>

#include "util/sock.h"

#define JACCL_HANDLE_MAGIC   0x4a41434cu /* "JACL" */
#define JACCL_HANDLE_VERSION 2           /* the layout below; 2 added `release` */
#define JACCL_RELEASE_MAX    48          /* a git-describe version: release, commit, -dirty */

/* magic, version and release keep their offsets (0, 4, 8) in every handle format from 2 on,
 * so a rank can name the peer's jaccl release even when it cannot read the rest. */

enum jaccl_handle_kind { JH_P2P = 1, JH_COLL = 2 };

struct jaccl_handle {
    uint32_t magic;
    uint16_t version;
    uint16_t kind;                   /* enum jaccl_handle_kind */
    char release[JACCL_RELEASE_MAX]; /* JACCL_VERSION_STR of the listener, NUL-terminated */
    uint64_t secret;                 /* random per listen */
    uint8_t nlanes;                  /* lanes the connector must open */
    uint8_t fabric;                  /* the fabric's handle_id (1 = tcp, 2 = verbs): ends agree */
    uint16_t dev;                    /* listener's device index (for log messages) */
    uint32_t coll_rank;              /* JH_COLL: the listener's rank in the collective group */
    union jaccl_sockaddr addr;
    uint32_t cksum; /* over every byte above */
};

_Static_assert(sizeof(struct jaccl_handle) <= 128, "handle must fit NCCL_NET_HANDLE_MAXSIZE");

/* Fill the checksum and copy into NCCL's 128-byte buffer (rest zeroed). */
void jaccl_handle_encode(struct jaccl_handle *h, void *out128);
/* 0 and *h filled when `in128` is a well-formed handle of `kind`; otherwise -EINVAL (a
 * mismatch: another format, kind or build, or corrupted), or -EFAULT for NULL, with the
 * reason set (for a handle of another format it names both jaccl releases, and stays valid
 * until this thread's next call). */
int jaccl_handle_decode(const void *in128, int kind, struct jaccl_handle *h, const char **reason);

uint64_t jaccl_random64(void);

#endif
