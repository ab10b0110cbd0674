/* SPDX-License-Identifier: BSD-3-Clause */
/* Message contents that identify themselves: byte i of message `seed` depends on both, so a
 * message delivered to the wrong receive, shifted, or cut short fails verification. */
#ifndef MP_DATA_H
#define MP_DATA_H

#include <stddef.h>
#include <stdint.h>

#define MP_GUARD_BYTE 0xa5

void mp_fill(void *buf, size_t len, uint64_t seed);
/* Offset of the first byte that differs from mp_fill(seed), or (size_t)-1 if all match. */
size_t mp_verify(const void *buf, size_t len, uint64_t seed);
/* Offset of the first byte in [buf, buf+len) that is not MP_GUARD_BYTE, or (size_t)-1. */
size_t mp_guard_check(const void *buf, size_t len);

/* Page-aligned anonymous memory, so tests choose their own misalignment. NULL on failure. */
void *mp_alloc(size_t len);
void mp_free(void *p, size_t len);

#endif
