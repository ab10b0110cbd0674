/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer: the net API's listen handle (connect's `handle` argument). */
#include "fuzz_handle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_handle(data, size, JH_P2P);
}
