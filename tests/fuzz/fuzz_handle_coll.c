/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer: the CollNet listen handle (each entry of connect's `handles` array). */
#include "fuzz_handle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_handle(data, size, JH_COLL);
    /* Also as a net handle: a CollNet handle must never pass for one, and vice versa. */
    unsigned char in[128];
    struct jaccl_handle h;
    const char *why = NULL;
    fuzz_fill(in, sizeof(in), data, size);
    if (jaccl_handle_decode(in, JH_COLL, &h, &why) == 0)
        FUZZ_CHECK(jaccl_handle_decode(in, JH_P2P, &h, &why) != 0);
    return 0;
}
