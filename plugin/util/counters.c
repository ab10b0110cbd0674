/* SPDX-License-Identifier: BSD-3-Clause */
/* The debug counters (see counters.h): off, in memory with the totals logged at shutdown, or in
 * a file-backed shared mapping other processes read while the job runs. */
#include "util/counters.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/log.h"
#include "util/param.h"

_Atomic uint64_t *_Atomic jaccl_counters_at;

/* Atomic: jaccl_count reads it from threads that hold no lock of the fabric's start (the
 * registry's writers, for the tuner's contexts), while a start or shutdown writes it. */
static void set_at(_Atomic uint64_t *v)
{
    atomic_store_explicit(&jaccl_counters_at, v, memory_order_release);
}

static _Atomic uint64_t g_mem[JACCL_CNT_NUM];
static struct jaccl_cnt_hdr *g_map; /* the file's mapping, or NULL */
static char g_path[4096];           /* the file's name once %p is expanded */

static const char *const g_names[JACCL_CNT_NUM] = {
        [JACCL_CNT_SENDMSG] = "sendmsg",
        [JACCL_CNT_RECVMSG] = "recvmsg_io",
        [JACCL_CNT_RECVMSG_POLL] = "recvmsg_poll",
        [JACCL_CNT_EPOLL_WAKE] = "epoll_wake",
        [JACCL_CNT_EVENTFD_WAKE] = "eventfd_wake",
        [JACCL_CNT_CQ_SIGNAL] = "cq_signal",
        [JACCL_CNT_STAGE_BYTES] = "stage_bytes",
        [JACCL_CNT_HANDOFF] = "io_handoff",
        [JACCL_CNT_POLL_READY] = "poll_ready",
        [JACCL_CNT_REG_LOCK] = "reg_lock",
        [JACCL_CNT_TEST] = "test",
        [JACCL_CNT_COLL_CTRL] = "coll_ctrl",
        [JACCL_CNT_COLL_THREAD] = "coll_thread",
        [JACCL_CNT_SIDE_TX] = "side_tx",
        [JACCL_CNT_RDMA_ADV] = "rdma_adv",
        [JACCL_CNT_RDMA_CTL] = "rdma_ctl",
};

/* `tmpl` with every %p replaced by the pid (several ranks on one host share a template).
 * Returns 0, or -ENAMETOOLONG. */
static int expand_path(const char *tmpl, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *s = tmpl; *s; s++) {
        int w;
        if (s[0] == '%' && s[1] == 'p') {
            w = snprintf(out + n, cap - n, "%ld", (long)getpid());
            s++;
        } else {
            w = snprintf(out + n, cap - n, "%c", *s);
        }
        if (w < 0 || (size_t)w >= cap - n)
            return -ENAMETOOLONG;
        n += (size_t)w;
    }
    out[n] = '\0';
    return 0;
}

/* Creates (or reuses) the file and maps it, header written and values zeroed. Returns the
 * mapping, or NULL with errno set. */
static struct jaccl_cnt_hdr *map_file(const char *path)
{
    size_t len = jaccl_cnt_map_size(JACCL_CNT_NUM);
    /* O_NOFOLLOW: a debug knob pointing into /tmp must not write through someone's symlink. */
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return NULL;
    void *m = MAP_FAILED;
    if (ftruncate(fd, (off_t)len) == 0)
        m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int err = errno;
    close(fd);
    if (m == MAP_FAILED) {
        errno = err;
        return NULL;
    }
    struct jaccl_cnt_hdr *h = m;
    atomic_store_explicit(&h->magic, 0, memory_order_relaxed); /* readers: not ready */
    h->version = JACCL_CNT_VERSION;
    h->count = JACCL_CNT_NUM;
    _Atomic uint64_t *v = jaccl_cnt_map_values(h);
    for (uint32_t i = 0; i < JACCL_CNT_NUM; i++) {
        strncpy(jaccl_cnt_map_name(h, i), g_names[i], JACCL_CNT_NAME_LEN - 1);
        atomic_store_explicit(&v[i], 0, memory_order_relaxed);
    }
    atomic_store_explicit(&h->magic, JACCL_CNT_MAGIC, memory_order_release);
    return h;
}

static void unmap_file(void)
{
    if (g_map)
        munmap(g_map, jaccl_cnt_map_size(JACCL_CNT_NUM));
    g_map = NULL;
    g_path[0] = '\0';
}

/* Counting into the file at `tmpl`; on failure one WARN and memory instead. */
static void start_file(const char *tmpl)
{
    int rc = expand_path(tmpl, g_path, sizeof(g_path));
    if (rc == 0) {
        g_map = map_file(g_path);
        rc = g_map ? 0 : -errno;
    }
    if (rc != 0) {
        JWARN("NCCL_JACCL_DEBUG_COUNTERS=%s: cannot create the counters file %s (%s); counting "
              "in memory, totals logged at shutdown",
              tmpl, g_path[0] ? g_path : tmpl, strerror(-rc));
        g_path[0] = '\0';
        set_at(g_mem);
        return;
    }
    set_at(jaccl_cnt_map_values(g_map));
    JINFO(NCCL_INIT | NCCL_NET, "debug counters in %s (%u counters, layout in util/counters.h)",
          g_path, (unsigned)JACCL_CNT_NUM);
}

void jaccl_counters_init(void)
{
    set_at(NULL);
    unmap_file(); /* the last shutdown's, or one a fabric start that failed left */
    for (int i = 0; i < JACCL_CNT_NUM; i++)
        atomic_store_explicit(&g_mem[i], 0, memory_order_relaxed);
    const char *s = jaccl_param_str(JP_DEBUG_COUNTERS);
    if (s[0] == '\0' || strcmp(s, "0") == 0)
        return;
    if (strcmp(s, "1") == 0)
        set_at(g_mem);
    else
        start_file(s);
}

/* One INFO line with every total. */
static void log_totals(void)
{
    char line[512];
    size_t n = 0;
    for (int i = 0; i < JACCL_CNT_NUM && n < sizeof(line); i++) {
        uint64_t v = atomic_load_explicit(&g_mem[i], memory_order_relaxed);
        int w = snprintf(line + n, sizeof(line) - n, "%s%s %llu", i ? ", " : "", g_names[i],
                         (unsigned long long)v);
        n += w > 0 ? (size_t)w : 0;
    }
    JINFO(NCCL_NET, "debug counters at shutdown: %s", line);
}

void jaccl_counters_fini(void)
{
    if (atomic_load_explicit(&jaccl_counters_at, memory_order_acquire) == g_mem)
        log_totals();
    /* The file stays mapped until the next start: a thread that read the pointer just before
     * this (a registry lock taken by a tuner's finalize) still counts into mapped memory. */
    set_at(NULL);
}

int jaccl_counters_read(uint64_t *vals, const char **names, int max)
{
    _Atomic uint64_t *v = atomic_load_explicit(&jaccl_counters_at, memory_order_acquire);
    for (int i = 0; i < max && i < JACCL_CNT_NUM; i++) {
        if (vals)
            vals[i] = v ? atomic_load_explicit(&v[i], memory_order_relaxed) : 0;
        if (names)
            names[i] = g_names[i];
    }
    return JACCL_CNT_NUM;
}

const char *jaccl_counters_path(void)
{
    return g_path;
}
