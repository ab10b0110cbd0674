/* Every NCCL_JACCL_* knob, declared once in param.c's table (name, type, default, range, doc).
 * Read once, on first use, from the environment (NCCL has already loaded nccl.conf into it).
 * Invalid values are warned about and replaced by the default. */
#ifndef JACCL_UTIL_PARAM_H
#define JACCL_UTIL_PARAM_H

#include <stdint.h>

enum jaccl_param_id {
    JP_FABRIC,         /* string: auto | tcp | verbs */
    JP_SOCKET_IFNAME,  /* string: NCCL interface list syntax */
    JP_SOCKET_FAMILY,  /* string: "", AF_INET, AF_INET6 */
    JP_HCA,            /* string: NCCL_IB_HCA syntax (verbs back end) */
    JP_NSOCKS,         /* int: sockets (lanes) per p2p connection */
    JP_TIMEOUT,        /* int: seconds; liveness deadline for every wait */
    JP_MIN_CHUNK,      /* int: bytes; smallest stripe per lane */
    JP_RING_WIRES,     /* int: 1..4 parallel connections per ring direction */
    JP_ALGO,           /* string: auto | ring | mesh */
    JP_MESH_MAX_BYTES, /* int: auto mode uses the mesh up to this many bytes */
    JP_MESH_MAX_RANKS, /* int: auto mode uses the mesh up to this many ranks */
    JP_COLL_ENABLE,    /* int: 0 = CollNet tables report no devices */
    JP_GID_INDEX,      /* int: -1 = find the RoCE v2 IPv4-mapped GID by content */
    JP_QP_TYPE,        /* string: uc | rc */
    JP_QPS_PER_CONN,   /* int */
    JP_RETRY_CNT,      /* int */
    JP_NUM_PARAMS
};

enum jaccl_param_type { JPT_INT, JPT_STR };

struct jaccl_param_desc {
    const char *name; /* full env name, e.g. "NCCL_JACCL_NSOCKS" */
    enum jaccl_param_type type;
    int64_t def, min, max;      /* JPT_INT */
    const char *def_str;        /* JPT_STR default */
    const char *const *choices; /* JPT_STR: NULL-terminated allowed values, or NULL = free text */
    const char *doc;            /* one line for docs/configuration.md */
};

int64_t jaccl_param_int(enum jaccl_param_id id);
const char *jaccl_param_str(enum jaccl_param_id id); /* never NULL */
const struct jaccl_param_desc *jaccl_param_desc(enum jaccl_param_id id);
/* 1 if the value came from the environment, 0 if it is the default (unset, empty or invalid). */
int jaccl_param_is_set(enum jaccl_param_id id);
/* Forget cached values so the next read sees the environment again (tests only). */
void jaccl_param_reset(void);

#endif
