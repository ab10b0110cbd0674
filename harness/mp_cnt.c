/* SPDX-License-Identifier: BSD-3-Clause */
/* Reading the plugin's debug counters from a benchmark rank (see mp_cnt.h). */
#include "mp_cnt.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mp_proc.h"
#include "util/counters.h"

#define MP_CNT_MAX 64

void mp_cnt_ask(struct mp_cnt *c, const char *tool)
{
    const char *on = getenv("NCCL_JACCL_DEBUG_COUNTERS");
    const char *tmp = getenv("TMPDIR");
    char path[PATH_MAX + 16];
    c->dir[0] = '\0';
    if (!on || strcmp(on, "1") != 0)
        return;
    snprintf(c->dir, sizeof(c->dir), "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tool);
    if (!mkdtemp(c->dir)) {
        fprintf(stderr, "%s: rank %d: mkdtemp %s: %m; no counters\n", tool, mp_rank, c->dir);
        c->dir[0] = '\0';
        return;
    }
    snprintf(path, sizeof(path), "%s/counters", c->dir);
    setenv("NCCL_JACCL_DEBUG_COUNTERS", path, 1);
}

void mp_cnt_map(struct mp_cnt *c, int opened)
{
    char path[PATH_MAX + 16];
    struct stat st;
    if (!c->dir[0])
        return;
    snprintf(path, sizeof(path), "%s/counters", c->dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        if (m != MAP_FAILED && jaccl_cnt_map_read(m, (size_t)st.st_size, NULL, NULL, 0) >= 0) {
            c->map = m;
            c->len = (size_t)st.st_size;
        } else if (m != MAP_FAILED) {
            munmap(m, (size_t)st.st_size);
        }
    }
    if (!c->map && opened)
        fprintf(stderr, "rank %d: no counters file at %s\n", mp_rank, path);
    if (fd >= 0)
        close(fd);
    unlink(path);
    rmdir(c->dir);
    setenv("NCCL_JACCL_DEBUG_COUNTERS", "1", 1);
}

int mp_cnt_on(const struct mp_cnt *c)
{
    return c->map != NULL;
}

double mp_cnt_sum(const struct mp_cnt *c, const char *const *names)
{
    uint64_t v[MP_CNT_MAX] = {0};
    const char *name[MP_CNT_MAX] = {0};
    int n = jaccl_cnt_map_read(c->map, c->len, v, name, MP_CNT_MAX);
    double sum = 0;
    for (int k = 0; names[k]; k++)
        for (int i = 0; i < n && i < MP_CNT_MAX; i++)
            if (name[i] && strcmp(name[i], names[k]) == 0)
                sum += (double)v[i];
    return sum;
}

void mp_cnt_unmap(struct mp_cnt *c)
{
    if (c->map)
        munmap((void *)(uintptr_t)c->map, c->len);
    c->map = NULL;
}
