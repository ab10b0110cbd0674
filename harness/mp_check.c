/* SPDX-License-Identifier: BSD-3-Clause */
/* Failure counting and the notes every test prints. */
#include <stdarg.h>
#include <stdio.h>

#include "mp_check.h"
#include "mp_proc.h"

static int g_failures;

int mp_failures(void)
{
    return g_failures;
}

/* "[r] " in a rank, "[main] " in the parent: interleaved output stays attributable. */
static void print_prefix(FILE *f)
{
    if (mp_rank >= 0)
        fprintf(f, "[%d] ", mp_rank);
    else
        fprintf(f, "[main] ");
}

int mp_check_at(int ok, const char *file, int line, const char *fmt, ...)
{
    if (ok)
        return 1;
    g_failures++;
    va_list ap;
    va_start(ap, fmt);
    flockfile(stdout);
    print_prefix(stdout);
    printf("FAIL %s:%d: ", file, line);
    vprintf(fmt, ap);
    printf("\n");
    funlockfile(stdout);
    fflush(stdout);
    va_end(ap);
    return 0;
}

void mp_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    flockfile(stdout);
    print_prefix(stdout);
    vprintf(fmt, ap);
    printf("\n");
    funlockfile(stdout);
    fflush(stdout);
    va_end(ap);
}

const char *mp_result_str(ncclResult_t rc)
{
    static const char *const names[] = {
            "ncclSuccess",         "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
            "ncclInvalidArgument", "ncclInvalidUsage",       "ncclRemoteError", "ncclInProgress",
    };
    if ((unsigned)rc < sizeof(names) / sizeof(names[0]))
        return names[rc];
    return "ncclResult(?)";
}
