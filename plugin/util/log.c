/* SPDX-License-Identifier: BSD-3-Clause */
/* Forwarding to NCCL's logger. The logger pointer is atomic because NCCL installs it from
 * init() while proxy and progress threads of an earlier communicator may already be logging. */
#include "util/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_PREFIX   "NET/JACCL : "
#define LOG_LINE_MAX 1024

static _Atomic(ncclDebugLogger_t) g_logger;

void jaccl_log_set(ncclDebugLogger_t logger)
{
    atomic_store_explicit(&g_logger, logger, memory_order_release);
}

ncclDebugLogger_t jaccl_log_get(void)
{
    return atomic_load_explicit(&g_logger, memory_order_acquire);
}

static const char *level_name(ncclDebugLogLevel level)
{
    switch (level) {
    case NCCL_LOG_VERSION:
        return "VERSION";
    case NCCL_LOG_WARN:
        return "WARN";
    case NCCL_LOG_INFO:
        return "INFO";
    case NCCL_LOG_ABORT:
        return "ABORT";
    case NCCL_LOG_TRACE:
        return "TRACE";
    default:
        return "LOG";
    }
}

/* Read on every call rather than cached: this path only runs without NCCL's logger (unit
 * tests, early failures), where a test may flip the variable between messages. */
static int stderr_wanted(void)
{
    const char *v = getenv("JACCL_LOG_STDERR");
    return v != NULL && strcmp(v, "1") == 0;
}

void jaccl_log(ncclDebugLogLevel level, unsigned long flags, const char *func, int line,
               const char *fmt, ...)
{
    ncclDebugLogger_t logger = jaccl_log_get();
    if (level == NCCL_LOG_NONE || (logger == NULL && !stderr_wanted()))
        return;

    /* Format once here so the message reaches NCCL as plain data ("%s"): NCCL's logger
     * never re-interprets a '%' that came from an interface name or a user string. */
    char buf[LOG_LINE_MAX];
    size_t plen = sizeof(LOG_PREFIX) - 1;
    memcpy(buf, LOG_PREFIX, plen);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + plen, sizeof(buf) - plen, fmt, ap);
    va_end(ap);

    if (logger != NULL) {
        /* NCCL prints `file` for INFO/TRACE; the function name says more than a path. */
        logger(level, flags, func ? func : "jaccl", line, "%s", buf);
        return;
    }
    /* One fprintf per line: stdio locks the stream, so threads do not interleave. */
    fprintf(stderr, "[jaccl %d] %s %s\n", (int)getpid(), level_name(level), buf + plen);
}
