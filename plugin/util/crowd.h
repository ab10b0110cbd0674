/* SPDX-License-Identifier: BSD-3-Clause */
/* Whether this machine has more runnable threads than CPUs (e.g. 8 ranks on 2 cores). Polling
 * and spinning only pay while a poller has a core to itself; once threads queue for the CPUs, a
 * poller that holds a socket's read turn may not even be running, and the kernel's wake-ups
 * (the progress threads) do better. */
#ifndef JACCL_UTIL_CROWD_H
#define JACCL_UTIL_CROWD_H

/* 1 if, averaged over the last ~100 ms, more than twice as many threads were runnable as this
 * process may use CPUs. Cheap: the system's count (/proc/loadavg) is sampled at most every 20 ms by
 * whichever caller comes first; where it cannot be read the answer is 0. */
int jaccl_cpu_crowded(void);
/* CPUs this process may run on (its affinity mask when first asked), at least 1. */
int jaccl_cpus_usable(void);
/* Tests: 0 or 1 fixes the answer, -1 measures again. */
void jaccl_cpu_crowd_force(int v);

#endif
