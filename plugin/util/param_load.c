/* SPDX-License-Identifier: BSD-3-Clause */
/* Reading the NCCL_JACCL_* environment once, validated against param.c's table.
 *
 * All knobs are loaded together on the first read, under a mutex, so the "set by environment"
 * lines appear once and every thread sees one consistent set of values. A mutex rather than
 * pthread_once because jaccl_param_reset() re-arms the load (tests, and the plugin after its
 * last finalize).
 *
 * A knob that is unset falls back to NCCL's own variable named in its table entry; the INFO
 * line says which one was used, so a log shows where every non-default value came from. The
 * same load warns once about each NCCL_JACCL_* variable the table does not know (a typo would
 * otherwise be silently ignored), naming the closest known knob.
 *
 * A reset must not pull values from under a thread that is still reading: it only re-arms the
 * load, each slot is replaced by one atomic store when the next load runs, and strings are
 * interned and never freed, so a pointer from jaccl_param_str() stays valid for the life of
 * the process. Memory stays bounded by the number of distinct values ever set. */
#include "util/param.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/log.h"

struct param_value {
    int64_t i;
    const char *s; /* table default, or an interned copy of the environment value */
    int ok;        /* the environment value was valid and is used */
};

struct param_slot {
    _Atomic int64_t i;
    _Atomic(const char *) s;
    atomic_int source;         /* enum jaccl_param_source */
    _Atomic(const char *) var; /* static: a table name */
};

extern char **environ;

struct interned {
    struct interned *next;
    char s[];
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int g_loaded;
static struct param_slot g_slots[JP_NUM_PARAMS];
static struct interned *g_strings; /* under g_lock; never freed, see above */

/* Decimal, or hex with 0x; surrounding blanks allowed. Octal is deliberately not accepted:
 * "010" meaning 8 surprises people. Returns 0 on success. */
static int parse_int(const char *str, int64_t *out)
{
    const char *p = str;
    while (isspace((unsigned char)*p))
        p++;
    int neg = *p == '-';
    const char *digits = (*p == '-' || *p == '+') ? p + 1 : p;
    int base = (digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) ? 16 : 10;
    if (!isxdigit((unsigned char)digits[base == 16 ? 2 : 0]))
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, base);
    if (errno != 0 || (neg && base == 16))
        return -1;
    while (isspace((unsigned char)*end))
        end++;
    if (*end != '\0')
        return -1;
    *out = v;
    return 0;
}

/* `var` is the variable the value came from: the knob, or its NCCL fallback. */
static void load_int(const struct jaccl_param_desc *d, const char *var, const char *env,
                     struct param_value *v)
{
    int64_t x;
    if (parse_int(env, &x) != 0) {
        JWARN("%s=\"%s\" is not a number; using the default %lld", var, env, (long long)d->def);
    } else if (x < d->min || x > d->max) {
        JWARN("%s=%s is outside [%lld, %lld]; using the default %lld", var, env, (long long)d->min,
              (long long)d->max, (long long)d->def);
    } else {
        v->i = x;
        v->ok = 1;
    }
}

/* Choices compare case-insensitively but the canonical spelling from the table is stored,
 * so callers can use strcmp. */
static const char *find_choice(const char *const *choices, const char *s)
{
    for (; *choices != NULL; choices++)
        if (strcasecmp(*choices, s) == 0)
            return *choices;
    return NULL;
}

static void warn_bad_choice(const struct jaccl_param_desc *d, const char *var, const char *env)
{
    char list[256] = "";
    size_t used = 0;
    for (const char *const *c = d->choices; *c != NULL && used < sizeof(list); c++) {
        const char *shown = **c ? *c : "\"\"";
        int n = snprintf(list + used, sizeof(list) - used, "%s%s", used ? ", " : "", shown);
        used += n > 0 ? (size_t)n : 0;
    }
    JWARN("%s=\"%s\" is not one of %s; using the default \"%s\"", var, env, list, d->def_str);
}

static const char *intern(const char *s)
{
    for (struct interned *n = g_strings; n != NULL; n = n->next)
        if (strcmp(n->s, s) == 0)
            return n->s;
    size_t len = strlen(s) + 1;
    struct interned *n = malloc(sizeof(*n) + len);
    if (n == NULL)
        return NULL;
    memcpy(n->s, s, len);
    n->next = g_strings;
    g_strings = n;
    return n->s;
}

static void load_str(const struct jaccl_param_desc *d, const char *var, const char *env,
                     struct param_value *v)
{
    const char *val = env;
    if (d->choices != NULL) {
        val = find_choice(d->choices, env);
        if (val == NULL) {
            warn_bad_choice(d, var, env);
            return;
        }
    }
    const char *copy = intern(val);
    if (copy == NULL) {
        JWARN("%s: out of memory; using the default \"%s\"", var, d->def_str);
        return;
    }
    v->s = copy;
    v->ok = 1;
}

/* Empty counts as unset, as for NCCL's own variables. */
static const char *env_value(const char *name)
{
    const char *v = name ? getenv(name) : NULL;
    return v && v[0] ? v : NULL;
}

/* The knob itself, else its NCCL fallback; sets *var and *src to where the value was. */
static const char *find_value(const struct jaccl_param_desc *d, const char **var,
                              enum jaccl_param_source *src)
{
    const char *env = env_value(d->name);
    *var = d->name;
    *src = JPS_ENV;
    if (env == NULL && (env = env_value(d->nccl_name)) != NULL) {
        *var = d->nccl_name;
        *src = JPS_NCCL;
    }
    return env;
}

static void load_one(enum jaccl_param_id id)
{
    const struct jaccl_param_desc *d = jaccl_param_desc(id);
    struct param_value v = {.i = d->def, .s = d->type == JPT_STR ? d->def_str : ""};
    const char *var;
    enum jaccl_param_source src;
    const char *env = find_value(d, &var, &src);
    if (env != NULL) {
        if (d->type == JPT_INT)
            load_int(d, var, env, &v);
        else
            load_str(d, var, env, &v);
        if (v.ok && src == JPS_ENV)
            JINFO(NCCL_ENV | NCCL_INIT, "%s set by environment to %s", d->name, env);
        else if (v.ok)
            JINFO(NCCL_ENV | NCCL_INIT, "%s not set; using NCCL's %s=%s", d->name, var, env);
    }
    if (!v.ok) {
        src = JPS_DEFAULT;
        var = NULL;
    }
    struct param_slot *slot = &g_slots[id];
    atomic_store_explicit(&slot->i, v.i, memory_order_relaxed);
    atomic_store_explicit(&slot->s, v.s, memory_order_relaxed);
    atomic_store_explicit(&slot->var, var, memory_order_relaxed);
    atomic_store_explicit(&slot->source, (int)src, memory_order_relaxed);
}

/* Levenshtein distance over at most NAME_MAX_CMP characters of each name, one row at a time. */
#define NAME_MAX_CMP 64
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strnlen(a, NAME_MAX_CMP), lb = strnlen(b, NAME_MAX_CMP);
    size_t row[NAME_MAX_CMP + 1];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

const struct jaccl_param_desc *jaccl_param_closest(const char *name)
{
    const struct jaccl_param_desc *best = NULL;
    size_t best_d = (size_t)-1;
    for (int id = 0; name != NULL && id < JP_NUM_PARAMS; id++) {
        const struct jaccl_param_desc *d = jaccl_param_desc((enum jaccl_param_id)id);
        size_t dist = edit_distance(name, d->name);
        if (dist < best_d) {
            best_d = dist;
            best = d;
        }
    }
    return best;
}

static int is_known(const char *name)
{
    for (int id = 0; id < JP_NUM_PARAMS; id++)
        if (strcmp(name, jaccl_param_desc((enum jaccl_param_id)id)->name) == 0)
            return 1;
    return 0;
}

/* One WARN per NCCL_JACCL_* variable that is not a knob: most likely a typo of one. */
static void warn_unknown(void)
{
    static const char prefix[] = "NCCL_JACCL_";
    for (char **e = environ; e != NULL && *e != NULL; e++) {
        if (strncmp(*e, prefix, sizeof(prefix) - 1) != 0)
            continue;
        char name[128];
        size_t len = strcspn(*e, "=");
        snprintf(name, sizeof(name), "%.*s", (int)(len < sizeof(name) ? len : sizeof(name) - 1),
                 *e);
        if (is_known(name))
            continue;
        JWARN("%s is not a jaccl setting and is ignored; did you mean %s? (docs/configuration.md "
              "lists them all)",
              name, jaccl_param_closest(name)->name);
    }
}

static void ensure_loaded(void)
{
    if (atomic_load_explicit(&g_loaded, memory_order_acquire))
        return;
    pthread_mutex_lock(&g_lock);
    if (!atomic_load_explicit(&g_loaded, memory_order_relaxed)) {
        for (int id = 0; id < JP_NUM_PARAMS; id++)
            load_one((enum jaccl_param_id)id);
        warn_unknown();
        atomic_store_explicit(&g_loaded, 1, memory_order_release);
    }
    pthread_mutex_unlock(&g_lock);
}

int64_t jaccl_param_int(enum jaccl_param_id id)
{
    if ((unsigned)id >= JP_NUM_PARAMS)
        return 0;
    ensure_loaded();
    return atomic_load_explicit(&g_slots[id].i, memory_order_relaxed);
}

const char *jaccl_param_str(enum jaccl_param_id id)
{
    if ((unsigned)id >= JP_NUM_PARAMS)
        return "";
    ensure_loaded();
    return atomic_load_explicit(&g_slots[id].s, memory_order_relaxed);
}

int jaccl_param_is_set(enum jaccl_param_id id)
{
    if ((unsigned)id >= JP_NUM_PARAMS)
        return 0;
    ensure_loaded();
    return atomic_load_explicit(&g_slots[id].source, memory_order_relaxed) != JPS_DEFAULT;
}

const char *jaccl_param_source_str(enum jaccl_param_source src)
{
    switch (src) {
    case JPS_ENV:
        return "environment";
    case JPS_NCCL:
        return "NCCL fallback";
    case JPS_DEFAULT:
        return "default";
    }
    return "?";
}

int jaccl_param_get_info(enum jaccl_param_id id, struct jaccl_param_info *out)
{
    if ((unsigned)id >= JP_NUM_PARAMS || out == NULL)
        return -1;
    ensure_loaded();
    const struct param_slot *slot = &g_slots[id];
    out->desc = jaccl_param_desc(id);
    out->source =
            (enum jaccl_param_source)atomic_load_explicit(&slot->source, memory_order_relaxed);
    out->var = atomic_load_explicit(&slot->var, memory_order_relaxed);
    out->i = atomic_load_explicit(&slot->i, memory_order_relaxed);
    out->s = atomic_load_explicit(&slot->s, memory_order_relaxed);
    return 0;
}

void jaccl_param_reset(void)
{
    pthread_mutex_lock(&g_lock);
    atomic_store_explicit(&g_loaded, 0, memory_order_release);
    pthread_mutex_unlock(&g_lock);
}
