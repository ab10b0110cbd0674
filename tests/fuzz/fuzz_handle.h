/* SPDX-License-Identifier: BSD-3-Clause */
/* The listen-handle decoder, for one handle kind (fuzz_handle_p2p.c, fuzz_handle_coll.c): any
 * 128 bytes NCCL passes must give an error or a handle that re-encodes to the same bytes (but
 * the release, which is this build's) and whose address prints within its buffer. */
#ifndef JACCL_TESTS_FUZZ_HANDLE_H
#define JACCL_TESTS_FUZZ_HANDLE_H

#include <stddef.h>
#include <string.h>

#include "core/handle.h"
#include "fuzz.h"
#include "util/sock.h"

static inline void fuzz_handle_one(const unsigned char *in, int kind)
{
    unsigned char again[128];
    struct jaccl_handle h;
    const char *why = NULL;

    if (jaccl_handle_decode(in, kind, &h, &why) != 0) {
        FUZZ_CHECK(why != NULL && why[0] != '\0');
        return;
    }
    FUZZ_CHECK(h.kind == kind && h.nlanes >= 1 && h.nlanes <= 64);
    FUZZ_CHECK(h.addr.sa.sa_family == AF_INET || h.addr.sa.sa_family == AF_INET6);
    /* Re-encoding writes this build's release (the field only names a peer's release in
     * mismatch messages, and the checksum covers it): every other byte must come back as it
     * was, and the re-encoded handle must decode. */
    size_t rel = offsetof(struct jaccl_handle, release), rel_end = rel + sizeof(h.release);
    size_t sum = offsetof(struct jaccl_handle, cksum);
    struct jaccl_handle h2;
    jaccl_handle_encode(&h, again);
    FUZZ_CHECK(memcmp(in, again, rel) == 0);
    FUZZ_CHECK(memcmp(in + rel_end, again + rel_end, sum - rel_end) == 0);
    FUZZ_CHECK(jaccl_handle_decode(again, kind, &h2, &why) == 0);
    char desc[64];
    memset(desc, 'x', sizeof(desc));
    jaccl_sockaddr_str(&h.addr, desc, sizeof(desc));
    FUZZ_CHECK(memchr(desc, '\0', sizeof(desc)) != NULL);
}

/* The raw bytes, then the same bytes with magic, version and checksum made right (what the
 * checksum hides from mutation: the kind, family and lane checks behind it). */
static inline int fuzz_handle(const uint8_t *data, size_t size, int kind)
{
    unsigned char in[128];
    struct jaccl_handle h;

    fuzz_fill(in, sizeof(in), data, size);
    fuzz_handle_one(in, kind);
    memcpy(&h, in, sizeof(h));
    jaccl_handle_encode(&h, in);
    fuzz_handle_one(in, kind);
    return 0;
}

#endif
