/* SPDX-License-Identifier: BSD-3-Clause */
/* Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/seed-*), each made by
 * the plugin's own encoders: `make fuzz-seeds` after a wire format changes. Seeds are the
 * well-formed messages the targets mutate; the regress-* files beside them are inputs that
 * once crashed a target and are kept as they were. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <infiniband/verbs.h> /* the verbs blob carries ibverbs enum values */

#include "core/coll.h"
#include "core/handle.h"
#include "core/p2p.h"
#include "core/relay_wire.h"
#include "fabric/tcp/tcp_wire.h"
#include "fabric/verbs/verbs_wire.h"

static const char *g_dir;

/* dir/target/seed-name <- prefix bytes, then body bytes ("regress-..." names are kept as
 * they are: inputs that broke a target before its fix). */
static void seed(const char *target, const char *name, const void *pre, size_t npre,
                 const void *body, size_t nbody)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", g_dir, target);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        perror(path);
        exit(1);
    }
    snprintf(path, sizeof(path), "%s/%s/%s%s", g_dir, target,
             strncmp(name, "regress-", 8) == 0 ? "" : "seed-", name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(pre, 1, npre, f) != npre || fwrite(body, 1, nbody, f) != nbody ||
        fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

static struct jaccl_link seed_link(int family, const char *addr, int port, int prefix)
{
    struct jaccl_link l = {.prefix = prefix};
    l.addr.sa.sa_family = (sa_family_t)family;
    l.addr.sin.sin_port = htons((uint16_t)port);
    inet_pton(family, addr,
              family == AF_INET ? (void *)&l.addr.sin.sin_addr : (void *)&l.addr.sin6.sin6_addr);
    return l;
}

static void handles(void)
{
    struct jaccl_handle h = {.kind = JH_P2P,
                             .secret = 0x1234567890abcdefull,
                             .host = 0x1122334455667788ull,
                             .nlanes = 2,
                             .fabric = 1,
                             .dev = 0,
                             .nlinks = 1};
    unsigned char out[128];
    h.links[0] = seed_link(AF_INET, "127.0.0.1", 40000, 8);
    jaccl_handle_encode(&h, out);
    seed("fuzz_handle_p2p", "inet", out, sizeof(out), NULL, 0);
    h.links[0] = seed_link(AF_INET6, "::1", 40001, 128);
    jaccl_handle_encode(&h, out);
    seed("fuzz_handle_p2p", "inet6", out, sizeof(out), NULL, 0);
    h.nlinks = 3; /* a node with two cables: every link on its own subnet */
    h.links[0] = seed_link(AF_INET, "10.77.1.1", 40002, 24);
    h.links[1] = seed_link(AF_INET, "10.77.4.1", 40003, 24);
    h.links[2] = seed_link(AF_INET6, "fd00:77::1", 40004, 64);
    jaccl_handle_encode(&h, out);
    seed("fuzz_handle_p2p", "cables", out, sizeof(out), NULL, 0);
    h = (struct jaccl_handle){
            .kind = JH_COLL, .secret = 7, .host = 9, .nlanes = 3, .fabric = 1, .coll_rank = 1};
    h.nlinks = 2;
    h.links[0] = seed_link(AF_INET, "10.77.1.2", 40005, 24);
    h.links[1] = seed_link(AF_INET, "10.77.2.2", 40006, 24);
    jaccl_handle_encode(&h, out);
    seed("fuzz_handle_coll", "inet", out, sizeof(out), NULL, 0);
}

/* The relay's messages (core/relay_wire.h). */
static void relay_wire(void)
{
    struct relay_query q = {.id = 42, .nlinks = 2};
    q.links[0] = seed_link(AF_INET, "10.77.2.3", 40007, 24);
    q.links[1] = seed_link(AF_INET, "10.77.3.3", 40008, 24);
    uint8_t b[RELAY_QUERY_MAX];
    seed("fuzz_relay_wire", "query", b, relay_query_encode(&q, b), NULL, 0);
    relay_answer_encode(&(struct relay_answer){.id = 42, .link = 1, .port = 45000}, b);
    seed("fuzz_relay_wire", "answer", b, RELAY_ANSWER_LEN, NULL, 0);
    union jaccl_sockaddr t = seed_link(AF_INET, "10.77.2.3", 40007, 24).addr;
    jaccl_relay_preamble(&t, b);
    seed("fuzz_relay_wire", "preamble", b, JACCL_RELAY_PREAMBLE, NULL, 0);
}

static void tcp_frames(void)
{
    struct tcp_hdr h = tcp_hdr_make(TCP_OP_SEND, 64, 0, 0, 0);
    seed("fuzz_tcp_frame", "send", &h, sizeof(h), NULL, 0);
    h = tcp_hdr_make(TCP_OP_WRITE_IMM, 4096, 0x0100, 0x7f0000001000ull, 0x1122334455667788ull);
    seed("fuzz_tcp_frame", "write-imm", &h, sizeof(h), NULL, 0);
    h = tcp_hdr_make(TCP_OP_HEARTBEAT, 0, 0, 0, 0);
    seed("fuzz_tcp_frame", "heartbeat", &h, sizeof(h), NULL, 0);
}

/* fuzz_tcp_stream records: kind (0 SEND, 1 WRITE_IMM, 2 heartbeat, 3 raw), 16-bit len, off,
 * imm, then the payload. */
static size_t rec(unsigned char *p, int kind, unsigned len, unsigned off, unsigned imm)
{
    unsigned v[3] = {len, off, imm};
    p[0] = (unsigned char)kind;
    for (int i = 0; i < 3; i++) {
        p[1 + 2 * i] = (unsigned char)v[i];
        p[2 + 2 * i] = (unsigned char)(v[i] >> 8);
    }
    for (unsigned i = 0; kind != 2 && i < len; i++)
        p[7 + i] = (unsigned char)('a' + i % 26);
    return 7 + (kind == 2 ? 0 : len);
}

static void tcp_streams(void)
{
    unsigned char b[2048];
    size_t n = 0;
    n += rec(b + n, 0, 5, 0, 0);
    n += rec(b + n, 2, 0, 0, 0);
    n += rec(b + n, 1, 64, 128, 0x0100);
    seed("fuzz_tcp_stream", "send-hb-write", b, n, NULL, 0);
    n = 0;
    for (int i = 0; i < 5; i++) /* one message more than RECVs posted */
        n += rec(b + n, 0, 16, 0, 0);
    seed("fuzz_tcp_stream", "no-recv", b, n, NULL, 0);
    n = rec(b, 1, 600, 8000, 1); /* past the registered window */
    seed("fuzz_tcp_stream", "write-outside", b, n, NULL, 0);
    n = rec(b, 0, 513, 0, 0); /* longer than the RECV */
    seed("fuzz_tcp_stream", "send-too-long", b, n, NULL, 0);
    struct tcp_hdr h = tcp_hdr_make(TCP_OP_SEND, 8, 0, 0, 0);
    n = rec(b, 3, 20, 0, 0); /* a header split over two raw records */
    memcpy(b + 7, &h, 20);
    n += rec(b + n, 3, 20, 0, 0);
    memcpy(b + n - 20, (char *)&h + 20, 12);
    seed("fuzz_tcp_stream", "split-header", b, n, NULL, 0);
}

static void p2p_cts(void)
{
    unsigned char pre[5] = {3, 7, 0, 0, 0}; /* 4 lanes, expecting seq 7 */
    struct p2p_cts c = {.magic = P2P_CTS_MAGIC,
                        .seq = 7,
                        .addr = 0x7f0000000000ull,
                        .rkey = 0xabcdef,
                        .cap = 1 << 20,
                        .tag = 3,
                        .nlanes = 4,
                        .lane0 = 3};
    seed("fuzz_p2p_cts", "four-lanes", pre, sizeof(pre), &c, sizeof(c));
    c.nlanes = 1;
    c.cap = 0;
    seed("fuzz_p2p_cts", "empty", pre, sizeof(pre), &c, sizeof(c));
}

static void coll_ctrl(void)
{
    unsigned char pre[3] = {4, 2, 0}; /* 4 data lanes, from rank 2 */
    struct coll_ctrl m = {.magic = COLL_CTRL_MAGIC,
                          .ndata = 4,
                          .src = 2,
                          .op_seq = 9,
                          .op_sig = 0x5eed,
                          .posted = {4, 4, 3, 3}};
    seed("fuzz_coll_ctrl", "credits", pre, sizeof(pre), &m, sizeof(m));
    m.flags = COLL_CTRL_BYE;
    m.op_seq = UINT64_MAX;
    seed("fuzz_coll_ctrl", "bye", pre, sizeof(pre), &m, sizeof(m));
}

static void verbs_side(void)
{
    unsigned char b[1 + (VB_F_LAST - VB_F_READY + 1) * VB_FRAME];
    b[0] = 1; /* 2 lanes */
    for (int t = VB_F_READY; t <= VB_F_LAST; t++) {
        struct vb_frame fr = {.type = (uint8_t)t,
                              .lane = (uint8_t)(t & 1),
                              .epoch = 1,
                              .seq = 100u + (unsigned)t};
        vb_frame_encode(&fr, b + 1 + (t - VB_F_READY) * VB_FRAME);
    }
    seed("fuzz_verbs_side", "every-type", b, sizeof(b), NULL, 0);
}

static void verbs_blob(void)
{
    unsigned char pre[3] = {1, 0, 1}; /* 2 lanes, UC, RoCE */
    struct vb_info in = {.magic = VB_INFO_MAGIC,
                         .qp_type = IBV_QPT_UC,
                         .nlanes = 2,
                         .link_layer = IBV_LINK_LAYER_ETHERNET,
                         .mtu = IBV_MTU_1024,
                         .flags = VB_INFO_ONE_PACKET,
                         .max_recv = 192,
                         .ring_addr = 0x7f0000001000ull,
                         .ring_rkey = 0x99,
                         .ring_slots = 192,
                         .lane = {{.qpn = 0x11, .psn = 0x100}, {.qpn = 0x12, .psn = 0x200}}};
    seed("fuzz_verbs_blob", "uc-roce", pre, sizeof(pre), &in,
         offsetof(struct vb_info, lane) + 2 * sizeof(in.lane[0]));
    pre[1] = 1;
    pre[2] = 0;
    in.qp_type = IBV_QPT_RC;
    in.link_layer = IBV_LINK_LAYER_INFINIBAND;
    in.lid = 7;
    seed("fuzz_verbs_blob", "rc-ib-full", pre, sizeof(pre), &in, sizeof(in));
    /* Accepted before vb_info_check_vals checked them: 128 << 0 is no MTU's segment size, and
     * 2^32-1 RECVs meant a 64 GiB calloc per lane. */
    in.mtu = 0;
    seed("fuzz_verbs_blob", "regress-mtu-0", pre, sizeof(pre), &in, sizeof(in));
    in.mtu = IBV_MTU_4096;
    in.max_recv = UINT32_MAX;
    seed("fuzz_verbs_blob", "regress-max-recv", pre, sizeof(pre), &in, sizeof(in));
}

int main(int argc, char **argv)
{
    g_dir = argc > 1 ? argv[1] : "tests/fuzz/corpus";
    if (mkdir(g_dir, 0755) != 0 && errno != EEXIST) {
        perror(g_dir);
        return 1;
    }
    handles();
    relay_wire();
    tcp_frames();
    tcp_streams();
    p2p_cts();
    coll_ctrl();
    verbs_side();
    verbs_blob();
    return 0;
}
