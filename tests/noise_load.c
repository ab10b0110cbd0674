/* SPDX-License-Identifier: BSD-3-Clause */
/* One CPU's worth of load for `make test-noisy` (tests/run_noisy.sh), until killed:
 *
 *   noise_load spin  PARENT   a plain busy loop
 *   noise_load yield PARENT   a loop on sched_yield(), as NCCL's proxy thread polls test():
 *                             always runnable, but hands its CPU to anyone who wants it
 *
 * It dies with PARENT (the script's pid), so a load never outlives a run that was killed
 * before its trap could stop it. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static void spin(void)
{
    volatile unsigned long n = 0;

    for (;;)
        n++;
}

static void yield(void)
{
    for (;;)
        sched_yield();
}

int main(int argc, char **argv)
{
    int is_spin = argc == 3 && strcmp(argv[1], "spin") == 0;

    if (argc != 3 || (!is_spin && strcmp(argv[1], "yield") != 0)) {
        fprintf(stderr, "usage: %s spin|yield PARENT_PID\n", argv[0]);
        return 2;
    }
    /* Set before looking at the parent: one that died in between is seen below. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != (pid_t)atol(argv[2]))
        return 1;
    if (is_spin)
        spin();
    yield();
    return 0;
}
