/* SPDX-License-Identifier: BSD-3-Clause */
/* The fabric registry: the one place that names the back ends, tries them in order and says
 * why each one not used was passed over. See the end of fabric.h for the rules. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fabric/fabric.h"
#include "fabric/tcp/tcp.h"
#include "fabric/verbs/verbs.h"
#include "util/log.h"
#include "util/param.h"

/* A back end in trial order, with the words of the lines that explain auto's choice. The last
 * entry is only ever reached by falling back, so it needs none of them. */
struct fab_entry {
    const struct fab_ops *ops;
    const char *found;  /* auto took it first: what it found */
    const char *device; /* what devices_listed counts, for the fallback WARN */
    const char *check;  /* what to check when it has devices but none is usable */
};

/* verbs first: RDMA when a usable port exists; tcp last, the fallback that always works. */
static const struct fab_entry g_order[] = {
        {&fab_verbs_ops, "a usable RDMA port was found", "RDMA",
         "check the port state, NCCL_JACCL_HCA and NCCL_JACCL_GID_INDEX"},
        {&fab_tcp_ops, NULL, NULL, NULL},
};
#define FAB_NBACKENDS ((int)(sizeof(g_order) / sizeof(g_order[0])))

static const struct fab_ops *g_chosen;
static char g_why[FAB_WHY_MAX] = "init() was not called";
static char g_why_not[FAB_NBACKENDS][FAB_WHY_MAX];
static int g_selected; /* a select has run: the why-not list is filled */

int fab_backend_count(void)
{
    return FAB_NBACKENDS;
}

const struct fab_ops *fab_backend(int i)
{
    return i >= 0 && i < FAB_NBACKENDS ? g_order[i].ops : NULL;
}

const char *fab_backend_why_not(int i)
{
    if (!g_selected || i < 0 || i >= FAB_NBACKENDS || !g_why_not[i][0])
        return NULL;
    return g_why_not[i];
}

const struct fab_ops *fab_chosen(void)
{
    return g_chosen;
}

const char *fab_why(void)
{
    return g_why;
}

/* Why init found nothing, in the back end's words (a back end that cannot tell still gets a
 * reason: the count). */
static const char *why_none(const struct fab_ops *ops, int n, char *buf, size_t len)
{
    const char *why = ops->why_unavailable ? ops->why_unavailable() : NULL;

    if (why)
        return why;
    snprintf(buf, len, "init found %d device(s)", n);
    return buf;
}

/* auto passed over entry `i` for the next one: a WARN when it lists devices (the user probably
 * expected it and gets something slower), an INFO when it has none (a plain TCP machine). */
static void log_fallback(int i, const char *why)
{
    const struct fab_entry *e = &g_order[i], *next = &g_order[i + 1];
    int listed = e->ops->devices_listed ? e->ops->devices_listed() : 0;

    if (listed > 0)
        JWARN("%d %s device(s) present but none is usable (%s): falling back to the %s fabric "
              "(%s; NCCL_JACCL_FABRIC=%s silences this)",
              listed, e->device, why, next->ops->name, e->check, next->ops->name);
    else
        JINFO(NCCL_INIT | NCCL_NET, "%s fabric not used (%s): falling back to %s", e->ops->name,
              why, next->ops->name);
}

/* The first entry at or after `from` that `want` admits (auto: every one); -1 when none. */
static int next_candidate(const char *want, int from)
{
    for (int i = from; i < FAB_NBACKENDS; i++)
        if (strcmp(want, "auto") == 0 || strcmp(want, g_order[i].ops->name) == 0)
            return i;
    return -1;
}

/* Records, for every entry but `chosen` (-1: none was), why it was not used: passed over
 * (already written by the trial loop) or never tried. */
static void note_untried(const char *want, int chosen)
{
    for (int i = 0; i < FAB_NBACKENDS; i++) {
        if (i == chosen || g_why_not[i][0])
            continue;
        if (strcmp(want, "auto") == 0 && chosen >= 0)
            snprintf(g_why_not[i], FAB_WHY_MAX, "not tried: %s came first and was usable",
                     g_order[chosen].ops->name);
        else
            snprintf(g_why_not[i], FAB_WHY_MAX, "not tried: NCCL_JACCL_FABRIC=%s", want);
    }
}

/* Entry `i` found no usable device: under auto fall back to the next, else fail. Returns 0 to
 * go on, -ENODEV to stop. */
static int passed_over(const char *want, int i, int n)
{
    char buf[64];
    const char *why = why_none(g_order[i].ops, n, buf, sizeof(buf));

    snprintf(g_why_not[i], FAB_WHY_MAX, "%s", why);
    if (strcmp(want, "auto") != 0) {
        snprintf(g_why, sizeof(g_why), "NCCL_JACCL_FABRIC=%s, but %s", want, why);
        JWARN("%s", g_why);
        return -ENODEV;
    }
    log_fallback(i, why);
    /* Only the last entry is taken without a device, so `auto: <why>` names every miss. */
    snprintf(g_why, sizeof(g_why), "auto: %s", why);
    return 0;
}

/* Takes entry `i`. Under auto the reason is what the first entry found, or (set when the
 * earlier ones were passed over) why they were not usable. */
static void take(const char *want, int i)
{
    g_chosen = g_order[i].ops;
    if (strcmp(want, "auto") == 0 && i == 0)
        snprintf(g_why, sizeof(g_why), "auto: %s", g_order[i].found);
    note_untried(want, i);
}

/* Tries the entries `want` admits in order; returns the chosen entry's init result, -ENODEV or
 * -EIO (see fab_select). */
static int try_in_order(const char *want)
{
    for (int i = next_candidate(want, 0); i >= 0; i = next_candidate(want, i + 1)) {
        const struct fab_ops *ops = g_order[i].ops;
        int last = i == FAB_NBACKENDS - 1, n = ops->init();

        if (n > 0 || (last && n == 0)) {
            take(want, i);
            return n;
        }
        ops->fini();
        if (n < 0 && last) {
            snprintf(g_why_not[i], FAB_WHY_MAX, "init failed (%d)", n);
            JWARN("fabric %s failed to initialise (%d)", ops->name, n);
            return -EIO;
        }
        if (passed_over(want, i, n) != 0)
            return -ENODEV;
    }
    snprintf(g_why, sizeof(g_why), "NCCL_JACCL_FABRIC=%s names no back end", want);
    JWARN("%s", g_why);
    return -ENODEV;
}

int fab_select(const struct fab_ops **out)
{
    const char *want = jaccl_param_str(JP_FABRIC);
    int n;

    fab_shutdown();
    memset(g_why_not, 0, sizeof(g_why_not));
    g_selected = 1;
    if (strcmp(want, "auto") != 0)
        snprintf(g_why, sizeof(g_why), "NCCL_JACCL_FABRIC=%s", want);
    n = try_in_order(want);
    if (n < 0)
        note_untried(want, -1);
    *out = g_chosen;
    return n;
}

void fab_shutdown(void)
{
    if (!g_chosen)
        return;
    g_chosen->fini();
    g_chosen = NULL;
    fab_sock_retire_fini(); /* the last closed connections, then the reaper thread */
}
