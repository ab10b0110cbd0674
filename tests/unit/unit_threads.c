/* SPDX-License-Identifier: BSD-3-Clause */
#include "unit_threads.h"

#include <dirent.h>
#include <time.h>

#include "core_pair.h"

int unit_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

int unit_threads_down_to(int want)
{
    double t0 = core_now();
    int n = unit_threads();
    while (n > want && core_now() - t0 < 10) {
        nanosleep(&(struct timespec){0, 1000000}, NULL);
        n = unit_threads();
    }
    return n;
}
