/* SPDX-License-Identifier: BSD-3-Clause */
/* Debug counters of the data path: system calls, wake-ups and staging copies, process-wide.
 * Off unless NCCL_JACCL_DEBUG_COUNTERS is set: then each event costs one relaxed atomic add.
 * The plugin never reads them itself: `1` logs the totals when the fabric shuts down, a path
 * keeps them in a shared file mapping that any process (jaccl-perf, an administrator's script)
 * can map and read while the job runs. No function is exported for them: the library exports
 * only NCCL's tables, so the file layout below is the interface, and tools include this header
 * for it. */
#ifndef JACCL_UTIL_COUNTERS_H
#define JACCL_UTIL_COUNTERS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum jaccl_counter {
    JACCL_CNT_SENDMSG,      /* sendmsg()/writev() on a data socket */
    JACCL_CNT_RECVMSG,      /* recvmsg()/read() on a data socket, by the I/O thread */
    JACCL_CNT_RECVMSG_POLL, /* the same, by a thread polling a CQ (inline progress) */
    JACCL_CNT_EPOLL_WAKE,   /* epoll_wait() returns of a progress thread */
    JACCL_CNT_EVENTFD_WAKE, /* eventfd writes that wake a progress thread */
    JACCL_CNT_CQ_SIGNAL,    /* condition-variable broadcasts to cq_wait sleepers */
    JACCL_CNT_STAGE_BYTES,  /* payload bytes copied out of a receive staging buffer */
    JACCL_CNT_HANDOFF,      /* an I/O thread switched between reading and leaving it to pollers */
    JACCL_CNT_POLL_READY,   /* readiness checks (epoll_wait, timeout 0) by a thread polling a CQ */
    JACCL_CNT_REG_LOCK,     /* the object registry's process-wide lock taken (core/registry.c) */
    JACCL_CNT_TEST,         /* test() calls, p2p and CollNet */
    JACCL_CNT_COLL_CTRL,    /* CollNet control messages posted (credits, goodbyes) */
    JACCL_CNT_COLL_THREAD,  /* CollNet progress-thread rounds that moved something (a hand-off) */
    JACCL_CNT_SIDE_TX,      /* verbs side-channel frames queued, of every type */
    JACCL_CNT_RDMA_ADV,     /* verbs RECV advertisements RDMA-written into the peer's ring */
    JACCL_CNT_RDMA_CTL,     /* verbs ACKs and receive credits sent as RDMA controls */
    JACCL_CNT_NUM
};

/* ---- the counters file (NCCL_JACCL_DEBUG_COUNTERS=<path>) ----
 * A fixed header, then `count` names of JACCL_CNT_NAME_LEN bytes each (NUL-padded), then
 * `count` uint64 values in host byte order, 8-aligned, updated with relaxed atomic adds. The
 * writer stores the magic last (release), so a reader that sees it sees the whole header. A
 * reader uses `count` from the file, not JACCL_CNT_NUM: counters may be added at the end. */
#define JACCL_CNT_MAGIC    0x544e434c4343414aull /* "JACCLCNT" in a little-endian file */
#define JACCL_CNT_VERSION  1u
#define JACCL_CNT_NAME_LEN 32u

struct jaccl_cnt_hdr {
    _Atomic uint64_t magic; /* JACCL_CNT_MAGIC once the header is complete */
    uint32_t version;       /* JACCL_CNT_VERSION */
    uint32_t count;         /* number of counters */
};

/* Bytes of a counters file with `count` counters. */
static inline size_t jaccl_cnt_map_size(uint32_t count)
{
    return sizeof(struct jaccl_cnt_hdr) + (size_t)count * (JACCL_CNT_NAME_LEN + sizeof(uint64_t));
}

static inline char *jaccl_cnt_map_name(struct jaccl_cnt_hdr *h, uint32_t i)
{
    return (char *)(h + 1) + (size_t)i * JACCL_CNT_NAME_LEN;
}

static inline _Atomic uint64_t *jaccl_cnt_map_values(struct jaccl_cnt_hdr *h)
{
    return (_Atomic uint64_t *)(void *)((char *)(h + 1) + (size_t)h->count * JACCL_CNT_NAME_LEN);
}

/* Reads a mapping of `len` bytes (e.g. mmap of the file, read-only): copies up to `max` values
 * and names (pointers into the mapping; either array may be NULL). Returns the number of
 * counters in the file, or -1 if it is not a complete counters file of this version. */
static inline int jaccl_cnt_map_read(const void *map, size_t len, uint64_t *vals,
                                     const char **names, int max)
{
    struct jaccl_cnt_hdr *h = (struct jaccl_cnt_hdr *)(uintptr_t)map; /* only read below */
    if (!h || len < sizeof(*h) ||
        atomic_load_explicit(&h->magic, memory_order_acquire) != JACCL_CNT_MAGIC ||
        h->version != JACCL_CNT_VERSION || h->count > 4096 || len < jaccl_cnt_map_size(h->count))
        return -1;
    _Atomic uint64_t *v = jaccl_cnt_map_values(h);
    for (int i = 0; i < max && i < (int)h->count; i++) {
        const char *name = jaccl_cnt_map_name(h, (uint32_t)i);
        if (names)
            names[i] = name[JACCL_CNT_NAME_LEN - 1] == '\0' ? name : "?";
        if (vals)
            vals[i] = atomic_load_explicit(&v[i], memory_order_relaxed);
    }
    return (int)h->count;
}

/* ---- the plugin's side ---- */

/* Where the counts go: NULL while off, else the in-memory array or the file's values. Set
 * only before the fabric's threads start and after they stopped. */
extern _Atomic uint64_t *_Atomic jaccl_counters_at;

/* Reads NCCL_JACCL_DEBUG_COUNTERS and starts counting (zeroed); called before the fabric
 * starts. A file that cannot be created costs one WARN: counting goes on in memory. */
void jaccl_counters_init(void);
/* Called once the fabric has shut down: logs the totals (INFO NET) when they live only in
 * memory and stops counting. The file keeps the final values; it stays mapped until the next
 * start (which unmaps it), so a count racing this one lands in mapped memory. */
void jaccl_counters_fini(void);
/* Copies up to max counters and their names (either may be NULL); returns how many there are.
 * All zero while off. */
int jaccl_counters_read(uint64_t *vals, const char **names, int max);
/* The file the counters go to now ("" when none). */
const char *jaccl_counters_path(void);

static inline void jaccl_count(enum jaccl_counter c, uint64_t n)
{
    _Atomic uint64_t *v = atomic_load_explicit(&jaccl_counters_at, memory_order_acquire);
    if (v)
        atomic_fetch_add_explicit(&v[c], n, memory_order_relaxed);
}

#endif
