/* SPDX-License-Identifier: BSD-3-Clause */
/* Small process utilities: clocks, sleeping, thread and socket inspection. */
#ifndef MP_UTIL_H
#define MP_UTIL_H

#include <stdint.h>
#include <sys/socket.h>

double mp_now(void); /* seconds, monotonic */
void mp_sleep_ms(int ms);
/* Threads of this process, from /proc/self/task. */
int mp_thread_count(void);
/* The same once it is down to `want`, or what it still is after mp_scaled(10) s: for "no thread
 * left behind" checks. A thread just joined stays listed until it has finished exiting, which on
 * a loaded box waits for a CPU for longer than any fixed settling time. */
int mp_threads_down_to(int want);
/* Listening TCP sockets of this process: fills up to max fds, returns the count. Used to find
 * the port behind a listen comm without knowing the handle's layout. */
int mp_listen_fds(int *fds, int max);
/* Deadlines stretched for slow runs: x3 under sanitizers (JACCL_TEST_SAN=1), and x N more on a
 * slow machine or fabric (JACCL_TEST_SLOW=N, e.g. soft-RoCE inside an emulated VM). */
int mp_scaled(int seconds);
/* Waits (mp_scaled(10) s at most) until the plugin's reaper thread has left: it holds the
 * sockets of closed connections until the peer has our last bytes and exits once it holds
 * none, so after it fds and threads can be counted. 1 once idle, 0 at the deadline. */
int mp_reaper_idle(void);
/* The same stretch for a bound below a second or with a fraction (a close call's 2.1 s). */
double mp_scaled_s(double seconds);
/* Sets NCCL_JACCL_SOCKET_IFNAME=lo and NCCL_JACCL_TIMEOUT=3 unless the caller set them. */
void mp_default_env(void);
/* Integer from the environment, or def. */
long mp_env_long(const char *name, long def);

#endif
