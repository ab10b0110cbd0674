/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the libFuzzer targets: a check that survives -DNDEBUG and names what broke. */
#ifndef JACCL_TESTS_FUZZ_H
#define JACCL_TESTS_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(cond)                                                                 \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                     \
        }                                                                                \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Copies at most `cap` bytes of the input into `out`, zero-padding the rest (NCCL hands the
 * plugin fixed-size buffers, so short inputs stand for buffers with trailing zeros). */
static inline void fuzz_fill(void *out, size_t cap, const uint8_t *data, size_t size)
{
    memset(out, 0, cap);
    memcpy(out, data, size < cap ? size : cap);
}

#endif
