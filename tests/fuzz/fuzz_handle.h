/* SPDX-License-Identifier: BSD-3-Clause */
/* The listen-handle decoder, for one handle kind (fuzz_handle_p2p.c, fuzz_handle_coll.c): any
 * 128 bytes NCCL passes must give an error or a handle that re-encodes to the same bytes (but
 * the release, which is this build's, and the checksum over it) and whose links print within
 * their buffers. */
#ifndef JACCL_TESTS_FUZZ_HANDLE_H
#define JACCL_TESTS_FUZZ_HANDLE_H

#include <stddef.h>
#include <string.h>

#include "core/handle.h"
#include "fuzz.h"
#include "util/sock.h"
#include "util/subnet.h"

#define FZ_RELEASE 8 /* the release field's offset and length: this build's when re-encoded */
#define FZ_REL_END 32
#define FZ_CKSUM   124

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
    FUZZ_CHECK(h.nlinks >= 1 && h.nlinks <= JACCL_HANDLE_LINKS_MAX);
    struct jaccl_handle h2;
    FUZZ_CHECK(jaccl_handle_encode(&h, again) == h.nlinks);
    FUZZ_CHECK(memcmp(in, again, FZ_RELEASE) == 0);
    FUZZ_CHECK(memcmp(in + FZ_REL_END, again + FZ_REL_END, FZ_CKSUM - FZ_REL_END) == 0);
    FUZZ_CHECK(jaccl_handle_decode(again, kind, &h2, &why) == 0);
    for (int i = 0; i < h.nlinks; i++) {
        const struct jaccl_link *l = &h.links[i];
        FUZZ_CHECK(l->addr.sa.sa_family == AF_INET || l->addr.sa.sa_family == AF_INET6);
        char desc[64];
        memset(desc, 'x', sizeof(desc));
        jaccl_sockaddr_str(&l->addr, desc, sizeof(desc));
        FUZZ_CHECK(memchr(desc, '\0', sizeof(desc)) != NULL);
        jaccl_link_net_str(l, desc, sizeof(desc));
        FUZZ_CHECK(memchr(desc, '\0', sizeof(desc)) != NULL);
    }
}

/* A handle built from the input's fields and encoded by the plugin: what the checksum hides
 * from mutation (the kind, lane and link checks behind it). */
static inline void fuzz_handle_forged(const unsigned char *in, int kind)
{
    struct jaccl_handle h = {.kind = (uint16_t)(in[6] | in[7] << 8), .nlanes = in[40]};
    size_t at = 57;
    while (h.nlinks < JACCL_HANDLE_LINKS_MAX && at < FZ_CKSUM) {
        size_t n = jaccl_link_unpack(in + at, FZ_CKSUM - at, &h.links[h.nlinks]);
        if (n == 0)
            break;
        h.nlinks++;
        at += n;
    }
    unsigned char out[128];
    jaccl_handle_encode(&h, out);
    fuzz_handle_one(out, kind);
}

static inline int fuzz_handle(const uint8_t *data, size_t size, int kind)
{
    unsigned char in[128];

    fuzz_fill(in, sizeof(in), data, size);
    fuzz_handle_one(in, kind);
    fuzz_handle_forged(in, kind);
    return 0;
}

#endif
