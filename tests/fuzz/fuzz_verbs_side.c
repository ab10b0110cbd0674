/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer: the verbs back end's side-channel frames. Input: one byte for the endpoint's lane
 * count, then a stream of 24-byte frames as the socket delivers them. A frame that is accepted
 * is of a known type and names an existing lane whenever it is about one. */
#include "fabric/verbs/verbs_wire.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vb_frame fr;

    if (size < 1)
        return 0;
    int nlanes = 1 + data[0] % FAB_MAX_LANES;
    for (size_t off = 1; size - off >= VB_FRAME; off += VB_FRAME) {
        int rc = vb_frame_decode(data + off, nlanes, &fr);
        FUZZ_CHECK(rc == VB_FRAME_OK || rc == VB_FRAME_BAD_TYPE || rc == VB_FRAME_BAD_LANE);
        FUZZ_CHECK(fr.type == data[off] && fr.lane == data[off + 1] && fr.epoch == data[off + 2]);
        if (rc != VB_FRAME_OK)
            return 0; /* the endpoint fails on the first bad frame */
        FUZZ_CHECK(fr.type >= VB_F_READY && fr.type <= VB_F_LAST);
        FUZZ_CHECK(fr.type == VB_F_READY || fr.type == VB_F_HB || fr.lane < nlanes);
        /* The encoder writes the same frame back, reserved bytes zero. */
        unsigned char again[VB_FRAME], want[VB_FRAME];
        vb_frame_encode(&fr, again);
        memcpy(want, data + off, VB_FRAME);
        want[3] = 0;
        memset(want + 20, 0, 4);
        FUZZ_CHECK(memcmp(again, want, VB_FRAME) == 0);
    }
    return 0;
}
