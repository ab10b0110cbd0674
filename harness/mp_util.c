/* SPDX-License-Identifier: BSD-3-Clause */
/* Clocks, thread counting, socket discovery and environment defaults. */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "mp_util.h"

double mp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void mp_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Counts entries of a /proc directory, skipping "." and "..". */
static int count_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void *settle_fn(void *arg)
{
    return arg;
}

/* Sanitizer runtimes may start helper threads of their own on a process's first
 * pthread_create (ThreadSanitizer does: in a child forked before any thread existed it starts
 * one at the fork and one more at the first pthread_create). One thread created and joined
 * before the first count lets every count see only the threads that come and go. */
static void settle_sanitizer_threads(void)
{
    static pid_t settled;
    pthread_t t;
    if (settled == getpid())
        return;
    settled = getpid();
    if (pthread_create(&t, NULL, settle_fn, NULL) == 0)
        pthread_join(t, NULL);
}

/* A thread that was just joined can still be listed for a moment (pthread_join returns when the
 * kernel clears its tid, a little before the task is released; slow under emulation), so the
 * count is read until it holds still for three reads 5 ms apart (at most about 1 s). */
/* 1 while a thread of this process is named `name` (/proc/self/task/<tid>/comm). */
static int thread_named(const char *name)
{
    DIR *d = opendir("/proc/self/task");
    char path[64], comm[32];
    int found = 0;
    for (struct dirent *e; d && !found && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/self/task/%.16s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        found = f && fgets(comm, sizeof(comm), f) && strncmp(comm, name, strlen(name)) == 0;
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return found;
}

int mp_reaper_idle(void)
{
    double deadline = mp_now() + mp_scaled(10);
    while (thread_named("jaccl-reaper")) {
        if (mp_now() > deadline)
            return 0;
        mp_sleep_ms(2);
    }
    return 1;
}

int mp_threads_down_to(int want)
{
    settle_sanitizer_threads();
    mp_reaper_idle();
    double deadline = mp_now() + mp_scaled(10);
    int n = count_dir("/proc/self/task");
    while (n > want && mp_now() < deadline) {
        mp_sleep_ms(5);
        n = count_dir("/proc/self/task");
    }
    return n;
}

int mp_thread_count(void)
{
    settle_sanitizer_threads();
    mp_reaper_idle();
    int n = count_dir("/proc/self/task");
    for (int i = 0, same = 0; i < 200 && same < 3; i++) {
        nanosleep(&(struct timespec){0, 5000000}, NULL);
        int m = count_dir("/proc/self/task");
        same = m == n ? same + 1 : 0;
        n = m;
    }
    return n;
}

static int is_listening(int fd)
{
    int on = 0;
    socklen_t len = sizeof(on);
    return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == 0 && on;
}

int mp_listen_fds(int *fds, int max)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < max) {
        if (e->d_name[0] == '.')
            continue;
        int fd = atoi(e->d_name);
        if (fd != dirfd(d) && is_listening(fd))
            fds[n++] = fd;
    }
    closedir(d);
    return n;
}

long mp_env_long(const char *name, long def)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    char *end;
    long x = strtol(v, &end, 0);
    return *end ? def : x;
}

double mp_scaled_s(double seconds)
{
    long slow = mp_env_long("JACCL_TEST_SLOW", 1);

    if (mp_env_long("JACCL_TEST_SAN", 0))
        seconds *= 3;
    return slow > 1 ? seconds * (double)slow : seconds;
}

int mp_scaled(int seconds)
{
    return (int)mp_scaled_s(seconds);
}

void mp_default_env(void)
{
    setenv("NCCL_JACCL_SOCKET_IFNAME", "lo", 0);
    setenv("NCCL_JACCL_TIMEOUT", "3", 0);
}
