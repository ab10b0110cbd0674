/* SPDX-License-Identifier: BSD-3-Clause */
/* Handle encoding: fixed layout, checksum, validation. */
#include "core/handle.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "core/version.h"

/* FNV-1a: not cryptographic, it only has to make random garbage fail. */
static uint32_t fnv1a(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 16777619u;
    return h;
}

void jaccl_handle_encode(struct jaccl_handle *h, void *out128)
{
    h->magic = JACCL_HANDLE_MAGIC;
    h->version = JACCL_HANDLE_VERSION;
    /* The release is only named in mismatch messages: a long git-describe version (commit and
     * -dirty) is cut to the field, keeping its release number and commit prefix. */
    memset(h->release, 0, sizeof(h->release));
    snprintf(h->release, sizeof(h->release), "%.*s", (int)sizeof(h->release) - 1,
             JACCL_VERSION_STR);
    h->cksum = fnv1a(h, offsetof(struct jaccl_handle, cksum));
    memset(out128, 0, 128);
    memcpy(out128, h, sizeof(*h));
}

/* The peer's release, read at its fixed offset without trusting it: printable characters only.
 * Format 1 handles had no release there. */
static void peer_release(const unsigned char *in128, unsigned version, char *out, size_t cap)
{
    if (version < 2) {
        snprintf(out, cap, "older than 0.1.0");
        return;
    }
    size_t off = offsetof(struct jaccl_handle, release), n = 0;
    for (; n < JACCL_RELEASE_MAX && n + 1 < cap && in128[off + n]; n++)
        out[n] = isprint(in128[off + n]) ? (char)in128[off + n] : '?';
    out[n] = '\0';
}

static const char *version_mismatch(const void *in128, unsigned version)
{
    static _Thread_local char msg[280];
    char peer[JACCL_RELEASE_MAX + 1];
    peer_release(in128, version, peer, sizeof(peer));
    snprintf(msg, sizeof(msg),
             "the peer runs jaccl %s (handle format %u), this rank runs jaccl %s (handle format "
             "%u): every rank must load the same jaccl version",
             peer, version, JACCL_VERSION_STR, (unsigned)JACCL_HANDLE_VERSION);
    return msg;
}

int jaccl_handle_decode(const void *in128, int kind, struct jaccl_handle *h, const char **reason)
{
    if (in128 == NULL) {
        *reason = "NULL handle";
        return -EFAULT;
    }
    memcpy(h, in128, sizeof(*h));
    if (h->magic != JACCL_HANDLE_MAGIC) {
        *reason = "not a jaccl handle (bad magic)";
        return -EINVAL;
    }
    if (h->version != JACCL_HANDLE_VERSION) {
        *reason = version_mismatch(in128, h->version);
        return -EINVAL;
    }
    if (h->cksum != fnv1a(h, offsetof(struct jaccl_handle, cksum))) {
        *reason = "handle checksum mismatch (corrupted)";
        return -EINVAL;
    }
    if (h->kind != kind) {
        *reason = kind == JH_P2P ? "a CollNet handle passed to the net API"
                                 : "a net handle passed to the CollNet API";
        return -EINVAL;
    }
    int fam = h->addr.sa.sa_family;
    if ((fam != AF_INET && fam != AF_INET6) || h->nlanes == 0 || h->nlanes > 64) {
        *reason = "handle carries an invalid address or lane count";
        return -EINVAL;
    }
    return 0;
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
