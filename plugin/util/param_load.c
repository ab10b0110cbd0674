/* Reading the NCCL_JACCL_* environment once, validated against param.c's table.
 *
 * All knobs are loaded together on the first read, under a mutex, so the "set by environment"
 * lines appear once and every thread sees one consistent set of values. A mutex rather than
 * pthread_once because jaccl_param_reset() re-arms the load (tests, and the plugin after its
 * last finalize).
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
    int from_env;
};

struct param_slot {
    _Atomic int64_t i;
    _Atomic(const char *) s;
    atomic_int from_env;
};

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

static void load_int(const struct jaccl_param_desc *d, const char *env, struct param_value *v)
{
    int64_t x;
    if (parse_int(env, &x) != 0) {
        JWARN("%s=\"%s\" is not a number; using the default %lld", d->name, env, (long long)d->def);
    } else if (x < d->min || x > d->max) {
        JWARN("%s=%s is outside [%lld, %lld]; using the default %lld", d->name, env,
              (long long)d->min, (long long)d->max, (long long)d->def);
    } else {
        v->i = x;
        v->from_env = 1;
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

static void warn_bad_choice(const struct jaccl_param_desc *d, const char *env)
{
    char list[256] = "";
    size_t used = 0;
    for (const char *const *c = d->choices; *c != NULL && used < sizeof(list); c++) {
        const char *shown = **c ? *c : "\"\"";
        int n = snprintf(list + used, sizeof(list) - used, "%s%s", used ? ", " : "", shown);
        used += n > 0 ? (size_t)n : 0;
    }
    JWARN("%s=\"%s\" is not one of %s; using the default \"%s\"", d->name, env, list, d->def_str);
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

static void load_str(const struct jaccl_param_desc *d, const char *env, struct param_value *v)
{
    const char *val = env;
    if (d->choices != NULL) {
        val = find_choice(d->choices, env);
        if (val == NULL) {
            warn_bad_choice(d, env);
            return;
        }
    }
    const char *copy = intern(val);
    if (copy == NULL) {
        JWARN("%s: out of memory; using the default \"%s\"", d->name, d->def_str);
        return;
    }
    v->s = copy;
    v->from_env = 1;
}

static void load_one(enum jaccl_param_id id)
{
    const struct jaccl_param_desc *d = jaccl_param_desc(id);
    struct param_value v = {.i = d->def, .s = d->type == JPT_STR ? d->def_str : ""};
    const char *env = getenv(d->name);
    if (env != NULL && env[0] != '\0') { /* empty = unset, as for NCCL's own variables */
        if (d->type == JPT_INT)
            load_int(d, env, &v);
        else
            load_str(d, env, &v);
        if (v.from_env)
            JINFO(NCCL_ENV | NCCL_INIT, "%s set by environment to %s", d->name, env);
    }
    struct param_slot *slot = &g_slots[id];
    atomic_store_explicit(&slot->i, v.i, memory_order_relaxed);
    atomic_store_explicit(&slot->s, v.s, memory_order_relaxed);
    atomic_store_explicit(&slot->from_env, v.from_env, memory_order_relaxed);
}

static void ensure_loaded(void)
{
    if (atomic_load_explicit(&g_loaded, memory_order_acquire))
        return;
    pthread_mutex_lock(&g_lock);
    if (!atomic_load_explicit(&g_loaded, memory_order_relaxed)) {
        for (int id = 0; id < JP_NUM_PARAMS; id++)
            load_one((enum jaccl_param_id)id);
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
    return atomic_load_explicit(&g_slots[id].from_env, memory_order_relaxed);
}

void jaccl_param_reset(void)
{
    pthread_mutex_lock(&g_lock);
    atomic_store_explicit(&g_loaded, 0, memory_order_release);
    pthread_mutex_unlock(&g_lock);
}
