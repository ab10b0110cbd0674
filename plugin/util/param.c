/* The one table of NCCL_JACCL_* knobs. Everything about a knob lives in its entry: the loader
 * (param_load.c) validates against it and docs/configuration.md is checked against it
 * (tests/check_config_doc.sh), so adding a knob means adding one entry here and one doc row. */
#include "util/param.h"

#include <stddef.h>

static const char *const fabric_choices[] = {"auto", "tcp", "verbs", NULL};
static const char *const family_choices[] = {"", "AF_INET", "AF_INET6", NULL};
static const char *const algo_choices[] = {"auto", "ring", "mesh", NULL};
static const char *const qp_type_choices[] = {"uc", "rc", NULL};

#define P_INT(id_, name_, def_, min_, max_, doc_) \
    [id_] = {.name = name_, .type = JPT_INT, .def = def_, .min = min_, .max = max_, .doc = doc_}
#define P_STR(id_, name_, def_, choices_, doc_) \
    [id_] = {.name = name_, .type = JPT_STR, .def_str = def_, .choices = choices_, .doc = doc_}

static const struct jaccl_param_desc g_params[JP_NUM_PARAMS] = {
        P_STR(JP_FABRIC, "NCCL_JACCL_FABRIC", "auto", fabric_choices,
              "Transport for point-to-point data: verbs (RDMA), tcp, or auto (verbs when a usable "
              "RDMA port exists, tcp otherwise)."),
        P_STR(JP_SOCKET_IFNAME, "NCCL_JACCL_SOCKET_IFNAME", "", NULL,
              "IP interfaces for the tcp fabric and jaccl's own connection set-up, in NCCL's list "
              "syntax (eth0, ^docker, =eth1); empty = chosen like NCCL's socket transport."),
        P_STR(JP_SOCKET_FAMILY, "NCCL_JACCL_SOCKET_FAMILY", "", family_choices,
              "Address family for those interfaces: AF_INET (IPv4 only), AF_INET6 (IPv6 only); "
              "empty = both, an interface's IPv4 address preferred."),
        P_STR(JP_HCA, "NCCL_JACCL_HCA", "", NULL,
              "RDMA devices and ports for the verbs fabric, in NCCL_IB_HCA syntax "
              "(mlx5_0:1,mlx5_1:1, ^mlx5_3, =mlx5_0); empty = every active port."),
        P_INT(JP_NSOCKS, "NCCL_JACCL_NSOCKS", 2, 1, 16,
              "TCP sockets per point-to-point connection; large messages are striped over them."),
        P_INT(JP_TIMEOUT, "NCCL_JACCL_TIMEOUT", 30, 1, 86400,
              "Liveness deadline in seconds: a peer silent this long is declared lost and the "
              "operation waiting on it fails instead of hanging."),
        P_INT(JP_MIN_CHUNK, "NCCL_JACCL_MIN_CHUNK", 65536, 4096, 16777216,
              "Smallest stripe in bytes that one socket or queue pair carries; a message uses "
              "fewer lanes when it is too small to give each lane this much."),
        P_INT(JP_RING_WIRES, "NCCL_JACCL_RING_WIRES", 2, 1, 4,
              "Parallel connections per direction between ring neighbours in the collective ring "
              "algorithm."),
        P_STR(JP_ALGO, "NCCL_JACCL_ALGO", "auto", algo_choices,
              "Collective algorithm: ring, mesh (all-to-all, lowest latency on few ranks), or auto "
              "(mesh within NCCL_JACCL_MESH_MAX_BYTES and NCCL_JACCL_MESH_MAX_RANKS, else ring)."),
        P_INT(JP_MESH_MAX_BYTES, "NCCL_JACCL_MESH_MAX_BYTES", 262144, 0, (int64_t)1 << 40,
              "With NCCL_JACCL_ALGO=auto, messages up to this many bytes use the mesh (0 = "
              "never)."),
        P_INT(JP_MESH_MAX_RANKS, "NCCL_JACCL_MESH_MAX_RANKS", 8, 2, 64,
              "With NCCL_JACCL_ALGO=auto, the mesh is used only by communicators of at most this "
              "many ranks (each rank connects to every other one)."),
        P_INT(JP_COLL_ENABLE, "NCCL_JACCL_COLL_ENABLE", 1, 0, 1,
              "1 = offer CollNet (all-reduce, reduce-scatter, all-gather); 0 = the CollNet tables "
              "report no devices and only point-to-point is offered."),
        P_INT(JP_GID_INDEX, "NCCL_JACCL_GID_INDEX", -1, -1, 255,
              "RoCE GID table index for the verbs fabric; -1 = find the RoCE v2 IPv4-mapped GID "
              "automatically."),
        P_STR(JP_QP_TYPE, "NCCL_JACCL_QP_TYPE", "uc", qp_type_choices,
              "Verbs queue pair type: uc (unreliable connected, no hardware acknowledgements) or "
              "rc "
              "(reliable connected, the NIC retransmits lost packets)."),
        P_INT(JP_QPS_PER_CONN, "NCCL_JACCL_QPS_PER_CONN", 2, 1, 16,
              "Verbs queue pairs per point-to-point connection; large messages are striped over "
              "them."),
        P_INT(JP_RETRY_CNT, "NCCL_JACCL_RETRY_CNT", 7, 0, 100,
              "Retransmissions of one segment before a verbs transfer fails with ncclRemoteError "
              "(uc: jaccl's own resends; rc: the NIC's retry count, capped at 7)."),
};

const struct jaccl_param_desc *jaccl_param_desc(enum jaccl_param_id id)
{
    if ((unsigned)id >= JP_NUM_PARAMS)
        return NULL;
    return &g_params[id];
}
