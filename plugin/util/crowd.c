/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU crowding (see crowd.h). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/crowd.h"

#define CROWD_SAMPLE_NS 20000000ull /* 20 ms */

static _Atomic uint64_t g_next_ns;
static atomic_int g_crowded;
static double g_avg; /* procs_running, moving average; written by the sampling thread only */
static atomic_flag g_sampling = ATOMIC_FLAG_INIT;
static atomic_int g_forced = -1;

/* Threads runnable right now, system-wide: the R of /proc/loadavg's "R/T" field (cheap to read,
 * unlike /proc/stat on a machine with many CPUs); or -1. */
static int procs_running(void)
{
    char buf[256];
    int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    ssize_t n;
    char *p;

    if (fd < 0)
        return -1;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    p = strchr(buf, '/');
    while (p && p > buf && p[-1] >= '0' && p[-1] <= '9')
        p--;
    return p ? atoi(p) : -1;
}

int jaccl_cpus_usable(void)
{
    static _Atomic int cached; /* the affinity mask is read once: it is on progress paths */
    int n = atomic_load_explicit(&cached, memory_order_relaxed);
    cpu_set_t set;

    if (n > 0)
        return n;
    n = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set)
                                                     : (int)sysconf(_SC_NPROCESSORS_ONLN);
    n = n > 0 ? n : 1;
    atomic_store_explicit(&cached, n, memory_order_relaxed);
    return n;
}

/* One sample into the average (a quarter weight: about the last 100 ms). */
static void crowd_sample(void)
{
    int run = procs_running(), cpus = jaccl_cpus_usable();

    if (run < 0 || cpus < 1)
        return;
    g_avg = g_avg == 0 ? run : 0.75 * g_avg + 0.25 * run;
    /* Pollers that spin anyway (NCCL's proxy in test()) are runnable all the time: one per rank
     * on every core is the very case inline progress is for, so only twice as many runnable
     * threads as CPUs counts as crowded (measured on 2 cores: 2 ranks plus other jobs' load
     * still gain from the hand-off, 8 ranks do not). */
    atomic_store_explicit(&g_crowded, g_avg > 2.0 * cpus, memory_order_relaxed);
}

int jaccl_cpu_crowded(void)
{
    return jaccl_cpu_crowded_at(jaccl_now_ns());
}

int jaccl_cpu_crowded_at(uint64_t now)
{
    int forced = atomic_load_explicit(&g_forced, memory_order_relaxed);

    if (forced >= 0)
        return forced;
    if (now >= atomic_load_explicit(&g_next_ns, memory_order_relaxed) &&
        !atomic_flag_test_and_set(&g_sampling)) {
        atomic_store_explicit(&g_next_ns, now + CROWD_SAMPLE_NS, memory_order_relaxed);
        crowd_sample();
        atomic_flag_clear(&g_sampling);
    }
    return atomic_load_explicit(&g_crowded, memory_order_relaxed);
}

void jaccl_cpu_crowd_force(int v)
{
    atomic_store(&g_forced, v);
}

int jaccl_cpu_poller_owns(int host_ranks, int big_recent)
{
    return jaccl_cpu_poller_owns_at(host_ranks, big_recent, jaccl_now_ns());
}

int jaccl_cpu_poller_owns_at(int host_ranks, int big_recent, uint64_t now)
{
    if (!jaccl_cpu_crowded_at(now))
        return 1;
    return !big_recent && host_ranks > 0 && host_ranks <= 2 * jaccl_cpus_usable();
}
