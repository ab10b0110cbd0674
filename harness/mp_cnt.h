/* SPDX-License-Identifier: BSD-3-Clause */
/* The plugin's debug counters (util/counters.h) as a benchmark rank reads them while it runs:
 * with NCCL_JACCL_DEBUG_COUNTERS=1 from the user, each rank has the plugin count into a file of
 * its own (forked ranks share the environment, not the file) and maps it read-only. */
#ifndef MP_CNT_H
#define MP_CNT_H

#include <limits.h>
#include <stddef.h>

struct mp_cnt {
    char dir[PATH_MAX]; /* this rank's directory for the counters file, or "" */
    const void *map;    /* that file, mapped read-only, or NULL */
    size_t len;
};

/* Before the plugin reads its knobs: points NCCL_JACCL_DEBUG_COUNTERS at a file of this rank's
 * if the user set it to 1 (`tool` names the temporary directory). */
void mp_cnt_ask(struct mp_cnt *c, const char *tool);
/* After the plugin's init (`opened`: it succeeded): maps the file, then removes it and its
 * directory (the mapping stays valid), and sets the variable back to "1". */
void mp_cnt_map(struct mp_cnt *c, int opened);
/* 1 if counters are being read. */
int mp_cnt_on(const struct mp_cnt *c);
/* The sum of the named counters now (a NULL-terminated list; an unknown name counts 0). */
double mp_cnt_sum(const struct mp_cnt *c, const char *const *names);
void mp_cnt_unmap(struct mp_cnt *c);

#endif
