/* SPDX-License-Identifier: BSD-3-Clause */
/* Self-identifying message contents and page-aligned buffers. */
#include <string.h>
#include <sys/mman.h>

#include "mp_data.h"

/* splitmix64's finaliser, once per message: different seeds give unrelated patterns. */
static uint64_t seed_key(uint64_t seed)
{
    uint64_t z = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Word w of a message: one multiply, so checking 64 MiB costs little next to moving it, and
 * still a different value at every word of every message. */
static uint64_t word(uint64_t key, uint64_t w)
{
    return key ^ ((w + 1) * 0x9e3779b97f4a7c15ull);
}

/* The pattern is defined per 8-byte word of the message (not of memory), so a message reads
 * the same from any alignment. */
void mp_fill(void *buf, size_t len, uint64_t seed)
{
    unsigned char *p = buf;
    uint64_t key = seed_key(seed);
    size_t w = 0;
    for (; (w + 1) * 8 <= len; w++) {
        uint64_t v = word(key, w);
        memcpy(p + w * 8, &v, 8);
    }
    if (len > w * 8) {
        uint64_t v = word(key, w);
        memcpy(p + w * 8, &v, len - w * 8);
    }
}

/* First differing byte of one word. */
static size_t first_diff(const unsigned char *p, uint64_t v, size_t n)
{
    for (size_t b = 0; b < n; b++)
        if (p[b] != ((const unsigned char *)&v)[b])
            return b;
    return n;
}

size_t mp_verify(const void *buf, size_t len, uint64_t seed)
{
    const unsigned char *p = buf;
    uint64_t key = seed_key(seed), bad = 0;
    size_t w = 0;
    /* Branch-free over whole words; only a mismatch pays for finding the byte. */
    for (; (w + 1) * 8 <= len; w++) {
        uint64_t v;
        memcpy(&v, p + w * 8, 8);
        bad |= v ^ word(key, w);
    }
    size_t tail = len - w * 8;
    if (bad == 0 && first_diff(p + w * 8, word(key, w), tail) == tail)
        return (size_t)-1;
    for (size_t i = 0; i * 8 < len; i++) {
        size_t n = len - i * 8 < 8 ? len - i * 8 : 8, d = first_diff(p + i * 8, word(key, i), n);
        if (d < n)
            return i * 8 + d;
    }
    return (size_t)-1;
}

size_t mp_guard_check(const void *buf, size_t len)
{
    const unsigned char *p = buf;
    for (size_t i = 0; i < len; i++)
        if (p[i] != MP_GUARD_BYTE)
            return i;
    return (size_t)-1;
}

void *mp_alloc(size_t len)
{
    void *p = mmap(NULL, len ? len : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void mp_free(void *p, size_t len)
{
    if (p)
        munmap(p, len ? len : 1);
}
