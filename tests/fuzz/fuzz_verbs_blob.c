/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer: the verbs connection blob (the peer's ep_local_info, handed to ep_connect). Input:
 * three bytes for the local lane count, QP type and link layer, then the blob. An accepted blob
 * must match the local endpoint and give ep_connect values it can use as they are: an MTU the
 * segment size (128 << mtu) is defined for, and a bounded table of advertised RECVs per lane. */
#include <infiniband/verbs.h> /* the blob carries ibverbs enum values */

#include "fabric/verbs/verbs_wire.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vb_info peer;

    if (size < 3)
        return 0;
    int nlanes = 1 + data[0] % FAB_MAX_LANES;
    int qp_type = data[1] & 1 ? IBV_QPT_RC : IBV_QPT_UC;
    int link_layer = data[2] & 1 ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
    data += 3;
    size -= 3;
    /* As fab_verbs_ep_connect does: a copy of at most one blob, zero-padded. */
    fuzz_fill(&peer, sizeof(peer), data, size);
    if (vb_info_check_vals(nlanes, qp_type, link_layer, &peer, size) != NULL)
        return 0;
    FUZZ_CHECK(peer.magic == VB_INFO_MAGIC && peer.nlanes == nlanes);
    FUZZ_CHECK(size >= offsetof(struct vb_info, lane) + (size_t)nlanes * sizeof(peer.lane[0]));
    FUZZ_CHECK(peer.qp_type == qp_type && peer.link_layer == link_layer);
    FUZZ_CHECK(peer.mtu >= IBV_MTU_256 && peer.mtu <= IBV_MTU_4096);
    FUZZ_CHECK((128u << peer.mtu) >= 256 && (128u << peer.mtu) <= 4096);
    FUZZ_CHECK(peer.max_recv >= 1 && peer.max_recv <= VB_MAX_RECV);
    FUZZ_CHECK(peer.ring_slots == peer.max_recv); /* the ring index math divides by it */
    return 0;
}
