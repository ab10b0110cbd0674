/* SPDX-License-Identifier: BSD-3-Clause */
#include <sched.h>
#include <stdio.h>

#include "util/sticky.h"

void jaccl_sticky_init(struct jaccl_sticky *s)
{
    atomic_store(&s->status, 0);
    atomic_store(&s->ready, 0);
    atomic_store(&s->warn_due, 0);
    s->reason[0] = '\0';
}

int jaccl_sticky_vset(struct jaccl_sticky *s, int status, const char *fmt, va_list ap)
{
    int expect = 0;
    if (status == 0 || !atomic_compare_exchange_strong(&s->status, &expect, status))
        return 0;
    vsnprintf(s->reason, sizeof(s->reason), fmt, ap);
    atomic_store(&s->warn_due, 1);
    atomic_store_explicit(&s->ready, 1, memory_order_release);
    return 1;
}

int jaccl_sticky_set(struct jaccl_sticky *s, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int first = jaccl_sticky_vset(s, status, fmt, ap);
    va_end(ap);
    return first;
}

int jaccl_sticky_get(const struct jaccl_sticky *s, const char **reason)
{
    int st = jaccl_sticky_status(s);
    if (st == 0 || !reason)
        return st;
    /* The winner of the claim is formatting the reason right now: a bounded wait. */
    while (!atomic_load_explicit(&s->ready, memory_order_acquire))
        sched_yield();
    *reason = s->reason;
    return st;
}

int jaccl_sticky_warn_once(struct jaccl_sticky *s)
{
    if (!atomic_load_explicit(&s->ready, memory_order_acquire))
        return 0;
    return atomic_exchange(&s->warn_due, 0) == 1;
}
