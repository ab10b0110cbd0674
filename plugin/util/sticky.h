/* SPDX-License-Identifier: BSD-3-Clause */
/* A sticky error: the first failure of an object (a comm, an endpoint) is recorded with its
 * reason and stays; later failures are consequences and change nothing. Every status != 0 is
 * a failure: a negative errno, in core and in fabric alike (an endpoint's, fabric.h).
 *
 * Lock-free and safe from any thread: the status is claimed with one compare-and-swap, so a
 * failure is visible to jaccl_sticky_status() at once; the reason is published after it,
 * and jaccl_sticky_get() waits the few instructions until it is. */
#ifndef JACCL_UTIL_STICKY_H
#define JACCL_UTIL_STICKY_H

#include <stdarg.h>
#include <stdatomic.h>

#define JACCL_STICKY_REASON 448

struct jaccl_sticky {
    _Atomic int status;   /* 0: healthy */
    _Atomic int ready;    /* reason[] is written */
    _Atomic int warn_due; /* 1 until the failure has been WARNed (jaccl_sticky_warn_once) */
    char reason[JACCL_STICKY_REASON];
};

/* Zero-initialised is healthy too; this is for an object reused in place. */
void jaccl_sticky_init(struct jaccl_sticky *s);

/* Records `status` (!= 0) and the printf-formatted reason unless a failure is already
 * recorded. Returns 1 for the call that recorded it, 0 when an earlier failure stands. */
int jaccl_sticky_set(struct jaccl_sticky *s, int status, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
int jaccl_sticky_vset(struct jaccl_sticky *s, int status, const char *fmt, va_list ap)
        __attribute__((format(printf, 3, 0)));

/* The recorded status, 0 while healthy. */
static inline int jaccl_sticky_status(const struct jaccl_sticky *s)
{
    return atomic_load_explicit(&s->status, memory_order_acquire);
}

/* The recorded status; with a failure recorded and reason != NULL, *reason is its text (valid
 * as long as the object lives). */
int jaccl_sticky_get(const struct jaccl_sticky *s, const char **reason);

/* 1 exactly once after a failure is recorded, for the caller that is to WARN about it: the
 * first failure is WARNed once, whether at once or when it first fails a request. */
int jaccl_sticky_warn_once(struct jaccl_sticky *s);

#endif
