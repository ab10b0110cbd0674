/* SPDX-License-Identifier: BSD-3-Clause */
/* The NCCL-style logger given to the plugin, with a small history of WARNs for assertions. */
#define _GNU_SOURCE /* strcasestr */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mp_log.h"
#include "mp_proc.h"

#define HIST      128 /* WARNs remembered; tests look back over a few at most */
#define HIST_LINE 512

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned g_nwarn; /* WARNs ever logged = index of the next one */
static char g_hist[HIST][HIST_LINE];

/* NCCL_DEBUG=INFO (or TRACE) shows the plugin's INFO lines too; WARNs always show. */
static int level_shown(ncclDebugLogLevel level)
{
    if (level <= NCCL_LOG_WARN)
        return 1;
    const char *d = getenv("NCCL_DEBUG");
    if (!d)
        return 0;
    if (strcasecmp(d, "TRACE") == 0)
        return 1;
    return strcasecmp(d, "INFO") == 0 && level == NCCL_LOG_INFO;
}

static const char *level_name(ncclDebugLogLevel level)
{
    switch (level) {
    case NCCL_LOG_WARN:
        return "WARN";
    case NCCL_LOG_INFO:
        return "INFO";
    case NCCL_LOG_TRACE:
        return "TRACE";
    case NCCL_LOG_ABORT:
        return "ABORT";
    default:
        return "VERSION";
    }
}

void mp_logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
               const char *fmt, ...)
{
    char msg[HIST_LINE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&g_mu);
    if (level == NCCL_LOG_WARN)
        memcpy(g_hist[g_nwarn++ % HIST], msg, sizeof(msg));
    pthread_mutex_unlock(&g_mu);
    if (level_shown(level))
        fprintf(stderr, "[%d] NCCL %s %s\n", mp_rank, level_name(level), msg);
}

unsigned mp_log_mark(void)
{
    pthread_mutex_lock(&g_mu);
    unsigned m = g_nwarn;
    pthread_mutex_unlock(&g_mu);
    return m;
}

unsigned mp_warns_since(unsigned mark)
{
    return mp_log_mark() - mark;
}

int mp_warn_seen(unsigned mark, const char *needle)
{
    int seen = 0;
    pthread_mutex_lock(&g_mu);
    unsigned first = g_nwarn - mark > HIST ? g_nwarn - HIST : mark;
    for (unsigned i = first; i != g_nwarn && !seen; i++)
        seen = strcasestr(g_hist[i % HIST], needle) != NULL;
    pthread_mutex_unlock(&g_mu);
    return seen;
}
