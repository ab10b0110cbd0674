/* SPDX-License-Identifier: BSD-3-Clause */
/* Timed teardown calls: see mp_closes.h. */
#include <stdio.h>
#include <string.h>

#include "mp_check.h"
#include "mp_closes.h"
#include "mp_proc.h"

void mp_closes_init(struct mp_closes *t, double bound_s)
{
    memset(t, 0, sizeof(*t));
    t->bound_s = bound_s;
    t->max_what = "none";
}

/* The entry for `what`: the last one when it is the same call again (deregMr of every buffer
 * makes one entry), else a new one; the last entry takes the overflow. */
static int entry_for(struct mp_closes *t, const char *what)
{
    if (t->n > 0 && strcmp(t->e[t->n - 1].what, what) == 0)
        return t->n - 1;
    if (t->n == MP_CLOSES_ENTRIES)
        return t->n - 1;
    t->e[t->n].what = what;
    t->e[t->n].calls = 0;
    t->e[t->n].max_s = 0;
    return t->n++;
}

int mp_closes_add(struct mp_closes *t, const char *what, ncclResult_t rc, double took_s,
                  const char *file, int line)
{
    int i = entry_for(t, what);
    t->e[i].calls++;
    if (took_s > t->e[i].max_s)
        t->e[i].max_s = took_s;
    if (took_s > t->max_s) {
        t->max_s = took_s;
        t->max_what = what;
    }
    int ok = mp_check_at(rc == ncclSuccess, file, line, "%s returned %s", what, mp_result_str(rc));
    return ok & mp_check_at(took_s <= t->bound_s, file, line, "%s took %.1f ms, bound %.0f ms",
                            what, took_s * 1e3, t->bound_s * 1e3);
}

void mp_closes_print(struct mp_closes *t, const char *label)
{
    char line[1024];
    size_t len = 0;
    for (int i = 0; i < t->n && len < sizeof(line); i++) {
        const char *over = t->e[i].max_s > MP_CLOSES_PROMPT_S ? " (over 100 ms)" : "";
        if (t->e[i].calls > 1)
            len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s x%d <= %.1f ms%s",
                                    i ? ", " : "", t->e[i].what, t->e[i].calls, t->e[i].max_s * 1e3,
                                    over);
        else
            len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s %.1f ms%s", i ? ", " : "",
                                    t->e[i].what, t->e[i].max_s * 1e3, over);
    }
    mp_note("%s: %s", label, t->n ? line : "no close calls");
    t->n = 0;
}

void mp_closes_report(const struct mp_closes *t)
{
    mp_note("longest close call of this rank: %s, %.1f ms", t->max_what, t->max_s * 1e3);
    mp_value_set(MP_CLOSES_VALUE, t->max_s);
    mp_barrier();
    if (mp_rank != 0)
        return;
    int who = 0;
    for (int r = 1; r < mp_sh->nranks; r++)
        if (mp_value_get(r, MP_CLOSES_VALUE) > mp_value_get(who, MP_CLOSES_VALUE))
            who = r;
    mp_note("longest close call of the group: %.1f ms (rank %d), bound %.0f ms",
            mp_value_get(who, MP_CLOSES_VALUE) * 1e3, who, t->bound_s * 1e3);
}
