/* SPDX-License-Identifier: BSD-3-Clause */
/* Thread counts for the unit tests' "nothing left behind" checks (the multi-process tests have
 * their own in harness/mp_util.h). */
#ifndef TEST_UNIT_THREADS_H
#define TEST_UNIT_THREADS_H

/* Threads of this process, from /proc/self/task. */
int unit_threads(void);
/* The thread count once it is down to want, or what it still is after 10 s. A thread that was
 * just joined (or a detached one told to stop) can still be listed for a moment: pthread_join
 * returns when the kernel clears its tid, a little before the task is released, longer on a
 * loaded box or under TSan, where the exiting thread waits for a CPU to finish. A thread left
 * running never leaves the list. */
int unit_threads_down_to(int want);

#endif
