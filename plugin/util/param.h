/* SPDX-License-Identifier: BSD-3-Clause */
/* Every NCCL_JACCL_* knob, declared once in param.c's table (name, type, default, range, doc,
 * NCCL fallback). Read once, on first use, from the environment (NCCL has already loaded
 * nccl.conf into it). A knob that is unset (or empty) takes the value of NCCL's own equivalent
 * variable when the table names one (NCCL_IB_HCA for NCCL_JACCL_HCA, ...), so a job tuned for
 * NCCL's IB or socket transport behaves the same with jaccl. Invalid values are warned about
 * and replaced by the default. docs/configuration.md is generated from the table. */
#ifndef JACCL_UTIL_PARAM_H
#define JACCL_UTIL_PARAM_H

#include <stdint.h>

enum jaccl_param_id {
    JP_FABRIC,         /* string: auto | tcp | verbs */
    JP_SOCKET_IFNAME,  /* string: NCCL interface list syntax */
    JP_SOCKET_FAMILY,  /* string: "", AF_INET, AF_INET6 */
    JP_HCA,            /* string: NCCL_IB_HCA syntax (verbs back end) */
    JP_RELAY,          /* int: 1 = relay connections between nodes that share no cable */
    JP_RELAY_PORT,     /* int: UDP port relay queries go to */
    JP_NSOCKS,         /* int: sockets (lanes) per p2p connection */
    JP_TIMEOUT,        /* int: seconds; liveness deadline for every wait */
    JP_MIN_CHUNK,      /* int: bytes; smallest stripe per lane */
    JP_RING_WIRES,     /* int: 1..4 parallel connections per ring direction */
    JP_ALGO,           /* string: auto | ring | mesh | rhd */
    JP_MESH_MAX_BYTES, /* int: auto mode uses the mesh up to this many bytes */
    JP_MESH_MAX_RANKS, /* int: auto mode uses the mesh up to this many ranks */
    JP_RHD_MIN_BYTES,  /* int: auto mode uses halving-doubling above this many bytes */
    JP_RHD_MAX_BYTES,  /* int: auto mode uses halving-doubling up to this many bytes */
    JP_COLL_ENABLE,    /* int: 0 = CollNet tables report no devices */
    JP_GID_INDEX,      /* int: -1 = find the RoCE v2 IPv4-mapped GID by content */
    JP_QP_TYPE,        /* string: uc | rc */
    JP_QPS_PER_CONN,   /* int */
    JP_RETRY_CNT,      /* int */
    JP_TC,             /* int: -1 = unset; RoCE traffic class, IP TOS byte on TCP */
    JP_SL,             /* int: -1 = unset; InfiniBand service level */
    JP_SPIN_US,        /* int: microseconds a waiter polls before it sleeps; 0 = never */
    JP_DEBUG_COUNTERS, /* string: ""/0 off, 1 = count and log, else a file (util/counters.h) */
    JP_TUNER,          /* int: 0 = the tuner table leaves NCCL's costs alone */
    JP_TUNER_LINK,     /* int: 0 = the devices' speed */
    JP_TUNER_LANE,     /* int: 0 = a lane can fill the link */
    JP_TUNER_MEM,      /* int: 0 = large operations' transfers as fast as the link */
    JP_TUNER_LAT,      /* int: -1 = the devices' latency, or the measured default */
    JP_TUNER_DTYPE,    /* string: auto | float32 | float16 | bfloat16 */
    JP_NUM_PARAMS
};

/* NCCL_JACCL_TUNER_LAT_NS when the devices report no latency: one message's one-way time
 * through jaccl's TCP fabric (jaccl-perf p2p, 8 bytes; docs/performance.md, "Where the code's
 * constants come from"). */
#define JACCL_TUNER_LAT_DEFAULT_NS 12000

enum jaccl_param_type { JPT_INT, JPT_STR };

struct jaccl_param_desc {
    const char *name; /* full env name, e.g. "NCCL_JACCL_NSOCKS" */
    enum jaccl_param_type type;
    int64_t def, min, max;      /* JPT_INT */
    const char *def_str;        /* JPT_STR default */
    const char *const *choices; /* JPT_STR: NULL-terminated allowed values, or NULL = free text */
    const char *nccl_name;      /* NCCL's variable read when this one is unset, or NULL */
    const char *section;        /* heading in docs/configuration.md */
    const char *unit;           /* JPT_INT: "bytes", "seconds", ... or NULL */
    const char *doc;            /* the description in docs/configuration.md (Markdown) */
};

/* Where a knob's value came from. */
enum jaccl_param_source {
    JPS_DEFAULT, /* unset, empty or invalid everywhere: the table's default */
    JPS_ENV,     /* the NCCL_JACCL_* variable itself */
    JPS_NCCL,    /* NCCL's own equivalent (desc->nccl_name), the jaccl variable being unset */
};

/* One knob as loaded, for tools that print the configuration (jaccl-info). */
struct jaccl_param_info {
    const struct jaccl_param_desc *desc;
    enum jaccl_param_source source;
    const char *var; /* the variable the value was read from; NULL for JPS_DEFAULT */
    int64_t i;       /* JPT_INT value */
    const char *s;   /* JPT_STR value; never NULL (and "" for JPT_INT) */
};

int64_t jaccl_param_int(enum jaccl_param_id id);
const char *jaccl_param_str(enum jaccl_param_id id); /* never NULL */
const struct jaccl_param_desc *jaccl_param_desc(enum jaccl_param_id id);
/* 1 if the value came from the environment (the knob or its NCCL fallback), 0 if it is the
 * default (unset, empty or invalid). */
int jaccl_param_is_set(enum jaccl_param_id id);
/* Value and source of one knob (loading the environment if needed). Returns 0, or -1 for an
 * id out of range (then *out is untouched). Strings stay valid for the life of the process. */
int jaccl_param_get_info(enum jaccl_param_id id, struct jaccl_param_info *out);
/* "environment", "NCCL fallback" or "default", for printing a jaccl_param_info. */
const char *jaccl_param_source_str(enum jaccl_param_source src);
/* The table's knob whose name is closest (edit distance) to `name`, e.g. for "NCCL_JACCL_NSOCK"
 * the NCCL_JACCL_NSOCKS entry. Used for the WARN about unknown NCCL_JACCL_* variables. */
const struct jaccl_param_desc *jaccl_param_closest(const char *name);
/* Forget cached values so the next read sees the environment again (tests only). */
void jaccl_param_reset(void);

#endif
