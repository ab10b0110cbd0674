/* Self-identifying message contents and page-aligned buffers. */
#include <string.h>
#include <sys/mman.h>

#include "common/mp_data.h"

/* splitmix64's finaliser: cheap, and every output bit depends on seed and word index. */
static uint64_t mix(uint64_t seed, uint64_t word)
{
    uint64_t z = seed * 0x9e3779b97f4a7c15ull + word * 0xbf58476d1ce4e5b9ull + 1;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The pattern is defined per 8-byte word of the message (not of memory), so a message reads
 * the same from any alignment. */
void mp_fill(void *buf, size_t len, uint64_t seed)
{
    unsigned char *p = buf;
    size_t w = 0;
    for (; (w + 1) * 8 <= len; w++) {
        uint64_t v = mix(seed, w);
        memcpy(p + w * 8, &v, 8);
    }
    if (len > w * 8) {
        uint64_t v = mix(seed, w);
        memcpy(p + w * 8, &v, len - w * 8);
    }
}

size_t mp_verify(const void *buf, size_t len, uint64_t seed)
{
    const unsigned char *p = buf;
    for (size_t w = 0; w * 8 < len; w++) {
        uint64_t v = mix(seed, w);
        size_t n = len - w * 8 < 8 ? len - w * 8 : 8;
        if (memcmp(p + w * 8, &v, n) == 0)
            continue;
        for (size_t b = 0; b < n; b++)
            if (p[w * 8 + b] != ((unsigned char *)&v)[b])
                return w * 8 + b;
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
    void *p = mmap(NULL, len ? len : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                   0);
    return p == MAP_FAILED ? NULL : p;
}

void mp_free(void *p, size_t len)
{
    if (p)
        munmap(p, len ? len : 1);
}
