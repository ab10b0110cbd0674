/* SPDX-License-Identifier: BSD-3-Clause */
/* The logger handed to the plugin's init: prints NCCL-style lines to stderr and keeps the
 * recent WARNs so a test can assert that a specific warning was (or was not) logged. */
#ifndef MP_LOG_H
#define MP_LOG_H

#include "nccl_abi/net.h"

/* Same shape as NCCL's ncclDebugLog. Thread-safe: plugin threads log too. */
void mp_logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
               const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* A position in the WARN stream: pass it to mp_warn_seen to look only at later WARNs. */
unsigned mp_log_mark(void);
/* WARNs logged since `mark`. */
unsigned mp_warns_since(unsigned mark);
/* 1 if a WARN logged since `mark` contains `needle` (case-insensitive). */
int mp_warn_seen(unsigned mark, const char *needle);

#endif
