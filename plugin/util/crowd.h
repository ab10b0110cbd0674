/* SPDX-License-Identifier: BSD-3-Clause */
/* Whether this machine has more runnable threads than CPUs (e.g. 8 ranks on 2 cores). Polling
 * and spinning only pay while a poller has a core to itself; once threads queue for the CPUs, a
 * poller that holds a socket's read turn may not even be running, and the kernel's wake-ups
 * (the progress threads) do better. */
#ifndef JACCL_UTIL_CROWD_H
#define JACCL_UTIL_CROWD_H

#include <stdint.h>

/* 1 if, averaged over the last ~100 ms, more than twice as many threads were runnable as this
 * process may use CPUs. Cheap: the system's count (/proc/loadavg) is sampled at most every 20 ms by
 * whichever caller comes first; where it cannot be read the answer is 0. */
int jaccl_cpu_crowded(void);
/* The same, for a caller that has read the clock already (now: jaccl_now_ns()). */
int jaccl_cpu_crowded_at(uint64_t now);
/* CPUs this process may run on (its affinity mask when first asked), at least 1. */
int jaccl_cpus_usable(void);
/* Tests: 0 or 1 fixes the answer, -1 measures again. */
void jaccl_cpu_crowd_force(int v);

/* Whether a thread polling a CQ reads an endpoint's sockets itself instead of leaving that to
 * the endpoint's I/O thread. Always on an uncrowded machine. On a crowded one only where the
 * crowd is this host's own ranks (host_ranks: the endpoint's group on this host, as its
 * fab_ep_attr says; 0 = not known), at most two per usable CPU (each rank's poller yields to the
 * other's, so it is back within microseconds), and only while the endpoint carries no large
 * message (big_recent: one landed lately), whose copy gains from the I/O thread running beside
 * the poller. Each half of the rule was measured (docs/performance.md, "Where the code's
 * constants come from"). */
int jaccl_cpu_poller_owns(int host_ranks, int big_recent);
/* The same, with the clock read already (a poll reads it once for every endpoint). */
int jaccl_cpu_poller_owns_at(int host_ranks, int big_recent, uint64_t now);

#endif
