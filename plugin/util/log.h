/* SPDX-License-Identifier: BSD-3-Clause */
/* Logging through NCCL's logger, with the "NET/JACCL" prefix.
 *
 * NCCL hands its logger to init(); until then (and in unit tests) messages go nowhere unless
 * jaccl_log_set() installed a logger. WARN uses NCCL_ALL like NCCL's own transports; INFO and
 * TRACE take a subsystem mask (NCCL_INIT, NCCL_NET, ...). */
#ifndef JACCL_UTIL_LOG_H
#define JACCL_UTIL_LOG_H

#include "nccl_abi/nccl_types.h"

void jaccl_log_set(ncclDebugLogger_t logger);
ncclDebugLogger_t jaccl_log_get(void);

/* printf-style, prefix added here; never call the logger directly. */
void jaccl_log(ncclDebugLogLevel level, unsigned long flags, const char *func, int line,
               const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#define JWARN(...)         jaccl_log(NCCL_LOG_WARN, NCCL_ALL, __func__, __LINE__, __VA_ARGS__)
#define JINFO(flags, ...)  jaccl_log(NCCL_LOG_INFO, (flags), __func__, __LINE__, __VA_ARGS__)
#define JTRACE(flags, ...) jaccl_log(NCCL_LOG_TRACE, (flags), __func__, __LINE__, __VA_ARGS__)

#endif
