/* SPDX-License-Identifier: BSD-3-Clause */
/* Address choices for a port: which GID to use (by content, not by a fixed index: JACCL's
 * hard-coded index 1 broke wherever the IPv4 GID sat elsewhere), the IPv4 address inside it,
 * and the port's speed. Pure functions over the verbs table, so the unit tests drive them. */
#include <string.h>

#include "fabric/verbs/verbs_int.h"

static const uint8_t v4_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

int vb_gid_ipv4(const union ibv_gid *gid, union jaccl_sockaddr *out)
{
    if (memcmp(gid->raw, v4_prefix, sizeof(v4_prefix)) != 0)
        return 0;
    if (out) {
        memset(out, 0, sizeof(*out));
        out->sin.sin_family = AF_INET;
        memcpy(&out->sin.sin_addr, gid->raw + 12, 4);
    }
    return 1;
}

static int gid_zero(const union ibv_gid *g)
{
    static const uint8_t z[16];

    return memcmp(g->raw, z, 16) == 0;
}

static int gid_link_local(const union ibv_gid *g)
{
    return g->raw[0] == 0xfe && (g->raw[1] & 0xc0) == 0x80;
}

/* 3: RoCE v2 IPv4-mapped, 2: other IPv4-mapped, 1: RoCE v2 routable IPv6, 0: unusable. */
static int gid_score(const struct vb_ibv *ibv, struct ibv_context *ctx, int port, int idx,
                     const union ibv_gid *g)
{
    int v2;

    if (gid_zero(g) || gid_link_local(g))
        return 0;
    v2 = ibv->gid_is_v2(ctx, (uint8_t)port, idx);
    if (vb_gid_ipv4(g, NULL))
        return v2 == 0 ? 2 : 3; /* unknown type: trust the content */
    return v2 == 1 ? 1 : 0;
}

int vb_gid_choose(const struct vb_ibv *ibv, struct ibv_context *ctx, int port, int table_len,
                  int forced, union ibv_gid *out)
{
    int best = -1, best_score = 0;
    union ibv_gid g;

    if (forced >= 0) {
        if (forced >= table_len || ibv->query_gid(ctx, (uint8_t)port, forced, &g) != 0 ||
            gid_zero(&g))
            return -1;
        *out = g;
        return forced;
    }
    for (int i = 0; i < table_len; i++) {
        int s;

        if (ibv->query_gid(ctx, (uint8_t)port, i, &g) != 0)
            continue;
        s = gid_score(ibv, ctx, port, i, &g);
        if (s > best_score) {
            best_score = s;
            best = i;
            *out = g;
        }
    }
    return best;
}

/* Per-lane rate in Mb/s for each bit of active_speed (SDR ... NDR), and lanes per
 * active_width bit (1x, 4x, 8x, 12x, 2x). */
static const int lane_mbps[] = {2500, 5000, 10000, 10000, 14000, 25000, 50000, 100000};
static const int width_lanes[] = {1, 4, 8, 12, 2};

static int low_bit(int v, int n)
{
    for (int i = 0; i < n; i++)
        if (v & (1 << i))
            return i;
    return -1;
}

int vb_port_speed(int active_width, int active_speed)
{
    int s = low_bit(active_speed, (int)(sizeof(lane_mbps) / sizeof(lane_mbps[0])));
    int w = low_bit(active_width, (int)(sizeof(width_lanes) / sizeof(width_lanes[0])));

    if (s < 0 || w < 0)
        return 10000; /* unknown code: NCCL's default */
    return lane_mbps[s] * width_lanes[w];
}
