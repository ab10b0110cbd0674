/* SPDX-License-Identifier: BSD-3-Clause */
/* The one table of NCCL_JACCL_* knobs. Everything about a knob lives in its entry: the loader
 * (param_load.c) validates against it, and docs/configuration.md is generated from it
 * (tools/config-doc.c, `make docs`; tests/check_config_doc.sh fails when the committed file
 * differs), so adding a knob means adding one entry here and running `make docs`.
 *
 * `doc` is Markdown that ends up in one table cell: no '|' and no line breaks. */
#include "util/param.h"

#include <stddef.h>

static const char *const fabric_choices[] = {"auto", "tcp", "verbs", NULL};
static const char *const family_choices[] = {"", "AF_INET", "AF_INET6", NULL};
static const char *const algo_choices[] = {"auto", "ring", "mesh", "rhd", NULL};
static const char *const qp_type_choices[] = {"uc", "rc", NULL};
static const char *const tuner_dtype_choices[] = {"auto", "float32", "float16", "bfloat16", NULL};

/* The 2-rank 4 KiB all-reduce's best (docs/performance.md, "Where the code's constants come
 * from"). */
#define SPIN_US_DEFAULT 50

#define STR_(x) #x
#define STR(x)  STR_(x)

#define S_TRANSPORT "Transport selection"
#define S_CABLES    "Direct cables (switchless clusters)"
#define S_P2P       "Point-to-point transfers"
#define S_COLL      "Collectives (CollNet)"
#define S_VERBS     "RDMA (verbs fabric)"
#define S_QOS       "Traffic class and service level"
#define S_PROGRESS  "Progress and debugging"
#define S_TUNER     "Tuner (NCCL's choice of CollNet)"

#define P_INT(id_, name_, def_, min_, max_, unit_, nccl_, sec_, doc_) \
    [id_] = {.name = name_,                                           \
             .type = JPT_INT,                                         \
             .def = def_,                                             \
             .min = min_,                                             \
             .max = max_,                                             \
             .unit = unit_,                                           \
             .nccl_name = nccl_,                                      \
             .section = sec_,                                         \
             .doc = doc_}
#define P_STR(id_, name_, def_, choices_, nccl_, sec_, doc_) \
    [id_] = {.name = name_,                                  \
             .type = JPT_STR,                                \
             .def_str = def_,                                \
             .choices = choices_,                            \
             .nccl_name = nccl_,                             \
             .section = sec_,                                \
             .doc = doc_}

static const struct jaccl_param_desc g_params[JP_NUM_PARAMS] = {
        P_STR(JP_FABRIC, "NCCL_JACCL_FABRIC", "auto", fabric_choices, NULL, S_TRANSPORT,
              "Transport for point-to-point data and collectives. `verbs` uses RDMA "
              "(libibverbs), `tcp` uses sockets, `auto` takes verbs when a usable RDMA port "
              "exists and tcp otherwise (with a WARN when RDMA devices exist but none is "
              "usable)."),
        P_STR(JP_SOCKET_IFNAME, "NCCL_JACCL_SOCKET_IFNAME", "", NULL, "NCCL_SOCKET_IFNAME",
              S_TRANSPORT,
              "IP interfaces for the tcp fabric and for jaccl's own connection set-up, in "
              "NCCL's list syntax (see [List syntax](#list-syntax)). Empty = chosen like NCCL's "
              "socket transport: `ib*` interfaces first, else any interface except `lo`, "
              "`docker*` and `virbr*`, else `docker*`, else `lo`. Interfaces that are down are "
              "never used."),
        P_STR(JP_SOCKET_FAMILY, "NCCL_JACCL_SOCKET_FAMILY", "", family_choices,
              "NCCL_SOCKET_FAMILY", S_TRANSPORT,
              "Restricts those interfaces to IPv4 (`AF_INET`) or IPv6 (`AF_INET6`) addresses. "
              "Empty = both; an interface with an IPv4 address uses it."),
        P_STR(JP_HCA, "NCCL_JACCL_HCA", "", NULL, "NCCL_IB_HCA", S_TRANSPORT,
              "RDMA devices and ports for the verbs fabric, in `NCCL_IB_HCA` syntax "
              "(`mlx5_0:1,mlx5_1:1`, `^mlx5_3`, `=mlx5_0`; see [List syntax](#list-syntax)). "
              "Empty = every active port."),
        P_INT(JP_RELAY, "NCCL_JACCL_RELAY", 1, 0, 1, NULL, NULL, S_CABLES,
              "`1` relays a connection between two nodes that share no cable (the opposite "
              "nodes of a ring of four) through a node cabled to both, whose jaccl forwards the "
              "bytes (tcp fabric only; see docs/topologies.md). Each rank answers relay queries "
              "and forwards while its fabric is open. `0` = never relay, and never answer: such "
              "a connection fails with a WARN naming the subnets no cable reaches."),
        P_INT(JP_RELAY_PORT, "NCCL_JACCL_RELAY_PORT", 24816, 1, 65535, NULL, NULL, S_CABLES,
              "UDP port on which every rank listens for relay queries, and to which a rank "
              "that needs a relay broadcasts its query on each cable. Every rank of a job must "
              "use the same port, and a firewall must let UDP to it through on the cables."),
        P_INT(JP_NSOCKS, "NCCL_JACCL_NSOCKS", 2, 1, 16, NULL, NULL, S_P2P,
              "TCP sockets per point-to-point connection. A large message is striped over all "
              "of them, which helps on fast links where one TCP stream cannot fill the wire."),
        P_INT(JP_TIMEOUT, "NCCL_JACCL_TIMEOUT", 30, 1, 86400, "seconds", NULL, S_P2P,
              "Liveness deadline. A peer that stays silent this long while jaccl waits for it "
              "is declared lost, and the operation fails with an error instead of hanging "
              "forever. Raise it if ranks can legitimately stall for longer (debuggers, very "
              "slow start-up)."),
        P_INT(JP_MIN_CHUNK, "NCCL_JACCL_MIN_CHUNK", 65536, 4096, 16777216, "bytes", NULL, S_P2P,
              "Smallest stripe that one socket or queue pair carries. A message too small to "
              "give every lane this much uses fewer lanes, so small messages are not cut into "
              "tiny pieces."),
        P_INT(JP_RING_WIRES, "NCCL_JACCL_RING_WIRES", 2, 1, 4, NULL, NULL, S_COLL,
              "Parallel connections per direction between ring neighbours in the ring "
              "algorithm. More wires keep more transfers in flight on fast links."),
        P_STR(JP_ALGO, "NCCL_JACCL_ALGO", "auto", algo_choices, NULL, S_COLL,
              "Collective algorithm. `ring` passes data around a ring of ranks "
              "(bandwidth-optimal for large messages); `mesh` has every rank talk to every "
              "other one directly (lowest latency for small messages on few ranks); `rhd` is "
              "recursive halving-doubling (Rabenseifner: the ring's bytes in 2 log2 n steps "
              "instead of 2 (n - 1); power-of-two rank counts only, others use the ring); "
              "`auto` uses `rhd` between `NCCL_JACCL_RHD_MIN_BYTES` and `NCCL_JACCL_RHD_MAX_BYTES` "
              "where it can run with 4 or more ranks, else the mesh within "
              "`NCCL_JACCL_MESH_MAX_BYTES` and `NCCL_JACCL_MESH_MAX_RANKS`, and the ring "
              "otherwise."),
        P_INT(JP_MESH_MAX_BYTES, "NCCL_JACCL_MESH_MAX_BYTES", 262144, 0, (int64_t)1 << 40, "bytes",
              NULL, S_COLL,
              "With `NCCL_JACCL_ALGO=auto`, messages up to this size use the mesh. `0` = never "
              "use the mesh automatically. The default is the ring/mesh crossover measured on "
              "loopback TCP for 2 to 8 ranks (docs/performance.md)."),
        P_INT(JP_MESH_MAX_RANKS, "NCCL_JACCL_MESH_MAX_RANKS", 8, 2, 64, NULL, NULL, S_COLL,
              "With `NCCL_JACCL_ALGO=auto`, the mesh is used only by communicators of at most "
              "this many ranks (the mesh opens a connection to every other rank). Recursive "
              "halving-doubling needs the same connections and the same limit."),
        P_INT(JP_RHD_MIN_BYTES, "NCCL_JACCL_RHD_MIN_BYTES", 16384, 0, (int64_t)1 << 40, "bytes",
              NULL, S_COLL,
              "With `NCCL_JACCL_ALGO=auto`, in communicators of 4, 8, 16 ... ranks (at most "
              "`NCCL_JACCL_MESH_MAX_RANKS`), messages above this size and up to "
              "`NCCL_JACCL_RHD_MAX_BYTES` use recursive halving-doubling instead of the mesh or "
              "the ring; smaller ones too where it sends fewer messages per rank than the mesh "
              "(reduce-scatter and all-gather from 4 ranks, all-reduce from 8). The default is the "
              "mesh/halving-doubling crossover measured on loopback TCP for 4 and 8 ranks "
              "(docs/performance.md)."),
        P_INT(JP_RHD_MAX_BYTES, "NCCL_JACCL_RHD_MAX_BYTES", 4194304, 0, (int64_t)1 << 40, "bytes",
              NULL, S_COLL,
              "The upper end of that range: larger messages use the ring. `0` = never use "
              "recursive halving-doubling automatically. The default is the halving-doubling/ring "
              "crossover measured on loopback TCP for 4 and 8 ranks (docs/performance.md)."),
        P_INT(JP_COLL_ENABLE, "NCCL_JACCL_COLL_ENABLE", 1, 0, 1, NULL, NULL, S_COLL,
              "`1` offers CollNet (all-reduce, reduce-scatter, all-gather) to NCCL. `0` makes "
              "the CollNet tables report no devices, so only point-to-point is offered. NCCL "
              "also needs `NCCL_COLLNET_ENABLE=1` to use CollNet at all."),
        P_INT(JP_GID_INDEX, "NCCL_JACCL_GID_INDEX", -1, -1, 255, NULL, "NCCL_IB_GID_INDEX", S_VERBS,
              "RoCE GID table index. `-1` = find the RoCE v2 GID that carries the port's IPv4 "
              "address automatically; set it when that guess is wrong for your network (see "
              "`show_gids`)."),
        P_STR(JP_QP_TYPE, "NCCL_JACCL_QP_TYPE", "uc", qp_type_choices, NULL, S_VERBS,
              "Queue pair type. `uc` (unreliable connected) has no hardware acknowledgements "
              "and suits lossless links (jaccl detects loss and resends itself); `rc` (reliable "
              "connected) lets the NIC retransmit lost packets, at some cost."),
        P_INT(JP_QPS_PER_CONN, "NCCL_JACCL_QPS_PER_CONN", 2, 1, 16, NULL, NULL, S_VERBS,
              "Queue pairs per point-to-point connection; large messages are striped over "
              "them."),
        P_INT(JP_RETRY_CNT, "NCCL_JACCL_RETRY_CNT", 7, 0, 100, NULL, NULL, S_VERBS,
              "Retransmissions of one segment before a verbs transfer is declared failed "
              "(`ncclRemoteError` and a WARN naming peer, device, QP and sequence number). UC: "
              "jaccl's own go-back-N resends; RC: the NIC's retry count (capped at 7, like "
              "`NCCL_IB_RETRY_CNT`)."),
        P_INT(JP_TC, "NCCL_JACCL_TC", -1, -1, 255, NULL, "NCCL_IB_TC", S_QOS,
              "Traffic class byte (DSCP << 2 plus ECN bits, as in `NCCL_IB_TC`): the GRH traffic "
              "class of every verbs queue pair (RoCE) and the IP TOS / IPv6 traffic class of "
              "every TCP data socket. `-1` = unset: the `trafficClass` NCCL passes for the "
              "communicator (`ncclConfig_t.trafficClass`, tables v10 to v12) if it gave one, "
              "else the system default (0)."),
        P_INT(JP_SL, "NCCL_JACCL_SL", -1, -1, 15, NULL, "NCCL_IB_SL", S_QOS,
              "InfiniBand service level of every verbs queue pair (on RoCE the NIC maps it to "
              "a priority). `-1` = unset: the communicator's `trafficClass` if NCCL gave one "
              "that fits (0 to 15), else 0. TCP sockets have no service level."),
        P_INT(JP_SPIN_US, "NCCL_JACCL_SPIN_US", SPIN_US_DEFAULT, 0, 100000, "microseconds", NULL,
              S_PROGRESS,
              "How long a thread about to sleep in `cq_wait` for a completion keeps polling "
              "first, doing the back end's receive work itself: a CollNet progress thread that "
              "no caller is polling for, or any other waiter. Waking a sleeping thread costs "
              "more than a short message takes on a fast link. The spin adapts: it shrinks while "
              "spins come up empty and yields the CPU on every round, and nobody spins while "
              "the CPUs are crowded. `0` = never spin: always sleep in the kernel."),
        P_STR(JP_DEBUG_COUNTERS, "NCCL_JACCL_DEBUG_COUNTERS", "", NULL, NULL, S_PROGRESS,
              "Counts the data path's system calls (sendmsg, recvmsg by the I/O thread and by "
              "pollers, pollers' readiness checks), wake-ups (epoll returns, eventfd writes, "
              "condition-variable signals) and bytes copied through receive staging buffers, "
              "process-wide, with one relaxed "
              "atomic add each. Empty or `0` = not counted. `1` = count and log the totals (INFO "
              "NET) when the fabric shuts down. Any other value is a file path: the counters "
              "live in a shared mapping of that file, created (mode 0600) when the fabric "
              "starts, so any process can map and read it while the job runs; `%p` in the path "
              "is replaced by the process id (several ranks on one host). The file holds a "
              "header (magic `JACCLCNT`, version, number of counters), the counter names (32 "
              "bytes each) and then the 64-bit values; `plugin/util/counters.h` has the layout "
              "and a reader. If the file cannot be created, a WARN says so and the counts are "
              "kept in memory and logged at shutdown instead. `jaccl-perf p2p` with `1` prints "
              "them per message."),
        P_INT(JP_TUNER, "NCCL_JACCL_TUNER", 1, 0, 1, NULL, NULL, S_TUNER,
              "`1`: the library's tuner tables (`ncclTunerPlugin_v5`, `_v6`, which NCCL loads from "
              "the net plugin's library when `NCCL_TUNER_PLUGIN` is unset and no "
              "`libnccl-tuner.so` is found) replace NCCL's CollNet costs with jaccl's own, so "
              "NCCL routes a collective to jaccl's CollNet only where that is faster than its "
              "ring and tree (docs/tuner.md). `0`: the tables leave every cost as NCCL computed "
              "it. `NCCL_TUNER_PLUGIN=none` keeps NCCL from loading any tuner."),
        P_INT(JP_TUNER_LINK, "NCCL_JACCL_TUNER_LINK_MBPS", 0, 0, 100000000, "Mbit/s", NULL, S_TUNER,
              "The link bandwidth the tuner's model assumes, each way. `0` = the slowest "
              "device's speed as jaccl reports it to NCCL (10000 for an interface with no "
              "speed, such as `lo`). Set it when the device's nominal speed is not what a rank "
              "gets (see docs/tuner.md, Calibration)."),
        P_INT(JP_TUNER_LANE, "NCCL_JACCL_TUNER_LANE_MBPS", 0, 0, 100000000, "Mbit/s", NULL, S_TUNER,
              "What one lane (one TCP socket, one queue pair) carries each way, in the tuner's "
              "model: an algorithm that sends on fewer lanes than it takes to fill the link (the "
              "mesh and halving-doubling use one per peer) goes no faster than its lanes. `0` = "
              "one lane can fill the link, as a queue pair does on RDMA. Over TCP one stream "
              "often cannot: `jaccl-coll-perf -P -c` measures it (docs/tuner.md)."),
        P_INT(JP_TUNER_MEM, "NCCL_JACCL_TUNER_MEM_MBPS", 0, 0, 100000000, "Mbit/s", NULL, S_TUNER,
              "What one link carries each way, in the tuner's model, for an operation larger "
              "than the per-core cache, whose data stream from memory: TCP copies every byte "
              "through the CPU, so its large transfers go at the speed of memory copies. `0` = "
              "as fast as smaller ones (the NIC moves the bytes, as on RDMA). `jaccl-coll-perf "
              "-P -c` measures it (docs/tuner.md)."),
        P_INT(JP_TUNER_LAT, "NCCL_JACCL_TUNER_LAT_NS", -1, -1, 1000000000, "nanoseconds", NULL,
              S_TUNER,
              "The time the tuner's model charges for one message hop (wire and software). "
              "`-1` = the devices' largest reported latency, or, when they report none (jaccl's "
              "TCP and verbs devices do not), " STR(
                      JACCL_TUNER_LAT_DEFAULT_NS) " ns: one message's "
                                                  "one-way time through jaccl's TCP fabric "
                                                  "measured with `jaccl-perf p2p`."),
        P_STR(JP_TUNER_DTYPE, "NCCL_JACCL_TUNER_DTYPE", "auto", tuner_dtype_choices, NULL, S_TUNER,
              "The data type whose measured reduction speed the tuner's model uses: NCCL does "
              "not tell a tuner the type of a collective. `auto` = the slowest of the three "
              "(the type a job uses is never slower than the model assumes)."),
};

const struct jaccl_param_desc *jaccl_param_desc(enum jaccl_param_id id)
{
    if ((unsigned)id >= JP_NUM_PARAMS)
        return NULL;
    return &g_params[id];
}
