/* SPDX-License-Identifier: BSD-3-Clause */
/* The host identity (util/hostid.h). */
#include "util/hostid.h"

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull; /* FNV-1a, 64 bits */
    return h;
}

uint64_t jaccl_host_id(void)
{
    uint64_t h = 14695981039346656037ull;
    char boot[64] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(boot, sizeof(boot), f))
            boot[0] = '\0';
        fclose(f);
    }
    if (!boot[0]) /* no /proc: the host name is the next best thing */
        gethostname(boot, sizeof(boot) - 1);
    h = mix(h, boot, sizeof(boot));
    struct stat st;
    if (stat("/proc/self/ns/net", &st) == 0) {
        h = mix(h, &st.st_ino, sizeof(st.st_ino));
        h = mix(h, &st.st_dev, sizeof(st.st_dev));
    }
    return h ? h : 1;
}
