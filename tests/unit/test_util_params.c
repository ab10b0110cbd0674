/* SPDX-License-Identifier: BSD-3-Clause */
/* NCCL_JACCL_* parameters: table sanity, defaults, environment values, invalid values, reset,
 * NCCL fallback variables and their reported source, unknown-knob suggestions. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/log.h"
#include "util/param.h"

static pthread_mutex_t g_cap_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int warns, infos;
    unsigned long info_flags;
    char last_warn[1024];
    char last_info[1024];
} g_cap;

static void fake_logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                        const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&g_cap_lock);
    if (level == NCCL_LOG_WARN) {
        g_cap.warns++;
        snprintf(g_cap.last_warn, sizeof(g_cap.last_warn), "%s", msg);
    } else if (level == NCCL_LOG_INFO) {
        g_cap.infos++;
        g_cap.info_flags = flags;
        snprintf(g_cap.last_info, sizeof(g_cap.last_info), "%s", msg);
    }
    pthread_mutex_unlock(&g_cap_lock);
}

static const char *const g_stray[] = {"NCCL_JACCL_NSOCK", "NCCL_JACCL_TIMEOUTS", "NCCL_JACCL_XYZZY",
                                      "NCCL_JACCL_QP_TYP", NULL};

extern char **environ;

/* Every NCCL_JACCL_* variable of the caller's environment goes, known or not, so the WARN and
 * INFO counts below see only what each test sets. */
static void unset_all_jaccl(void)
{
    char names[64][128];
    int n = 0;
    for (char **e = environ; *e && n < 64; e++)
        if (strncmp(*e, "NCCL_JACCL_", 11) == 0)
            snprintf(names[n++], sizeof(names[0]), "%.*s", (int)strcspn(*e, "="), *e);
    for (int i = 0; i < n; i++)
        unsetenv(names[i]);
}

static int setup(void **state)
{
    unset_all_jaccl();
    for (int id = 0; id < JP_NUM_PARAMS; id++) {
        const struct jaccl_param_desc *d = jaccl_param_desc((enum jaccl_param_id)id);
        unsetenv(d->name);
        if (d->nccl_name)
            unsetenv(d->nccl_name);
    }
    for (const char *const *n = g_stray; *n; n++)
        unsetenv(*n);
    jaccl_param_reset();
    memset(&g_cap, 0, sizeof(g_cap));
    jaccl_log_set(fake_logger);
    return 0;
}

static int teardown(void **state)
{
    setup(state);
    jaccl_log_set(NULL);
    return 0;
}

static void test_table_complete(void **state)
{
    for (int id = 0; id < JP_NUM_PARAMS; id++) {
        const struct jaccl_param_desc *d = jaccl_param_desc((enum jaccl_param_id)id);
        assert_non_null(d);
        assert_non_null(d->name);
        assert_true(strncmp(d->name, "NCCL_JACCL_", 11) == 0);
        assert_non_null(d->doc);
        assert_true(strlen(d->doc) > 20);
        assert_null(strchr(d->doc, '|')); /* one Markdown table cell */
        assert_non_null(d->section);
        if (d->nccl_name)
            assert_true(strncmp(d->nccl_name, "NCCL_", 5) == 0 &&
                        strncmp(d->nccl_name, "NCCL_JACCL_", 11) != 0);
        for (int j = 0; j < id; j++) /* names unique */
            assert_string_not_equal(d->name, jaccl_param_desc((enum jaccl_param_id)j)->name);
        if (d->type == JPT_INT) {
            assert_true(d->min <= d->def && d->def <= d->max);
            continue;
        }
        assert_non_null(d->def_str);
        if (d->choices == NULL)
            continue;
        int found = 0;
        for (const char *const *c = d->choices; *c; c++)
            found |= strcmp(*c, d->def_str) == 0;
        assert_true(found);
    }
    assert_null(jaccl_param_desc(JP_NUM_PARAMS));
}

static void test_defaults(void **state)
{
    assert_string_equal(jaccl_param_str(JP_FABRIC), "auto");
    assert_string_equal(jaccl_param_str(JP_SOCKET_IFNAME), "");
    assert_string_equal(jaccl_param_str(JP_SOCKET_FAMILY), "");
    assert_string_equal(jaccl_param_str(JP_HCA), "");
    assert_int_equal(jaccl_param_int(JP_NSOCKS), 2);
    assert_int_equal(jaccl_param_int(JP_TIMEOUT), 30);
    assert_int_equal(jaccl_param_int(JP_MIN_CHUNK), 65536);
    assert_int_equal(jaccl_param_int(JP_RING_WIRES), 2);
    assert_string_equal(jaccl_param_str(JP_ALGO), "auto");
    assert_int_equal(jaccl_param_int(JP_MESH_MAX_BYTES), 262144);
    assert_int_equal(jaccl_param_int(JP_MESH_MAX_RANKS), 8);
    assert_int_equal(jaccl_param_int(JP_COLL_ENABLE), 1);
    assert_int_equal(jaccl_param_int(JP_GID_INDEX), -1);
    assert_string_equal(jaccl_param_str(JP_QP_TYPE), "uc");
    assert_int_equal(jaccl_param_int(JP_QPS_PER_CONN), 2);
    assert_int_equal(jaccl_param_int(JP_RETRY_CNT), 7);
    assert_int_equal(jaccl_param_int(JP_TC), -1);
    assert_int_equal(jaccl_param_int(JP_SL), -1);
    for (int id = 0; id < JP_NUM_PARAMS; id++)
        assert_false(jaccl_param_is_set((enum jaccl_param_id)id));
    assert_int_equal(g_cap.warns, 0);
    assert_int_equal(g_cap.infos, 0);
    /* Asking for a string of an int knob (or vice versa) is harmless. */
    assert_string_equal(jaccl_param_str(JP_NSOCKS), "");
    assert_int_equal(jaccl_param_int(JP_FABRIC), 0);
}

static void test_env_int(void **state)
{
    setenv("NCCL_JACCL_NSOCKS", "4", 1);
    setenv("NCCL_JACCL_GID_INDEX", "-1", 1);
    setenv("NCCL_JACCL_MESH_MAX_BYTES", "0x10000000000", 1); /* 1<<40, the maximum */
    setenv("NCCL_JACCL_TIMEOUT", " 600 ", 1);
    assert_int_equal(jaccl_param_int(JP_NSOCKS), 4);
    assert_true(jaccl_param_is_set(JP_NSOCKS));
    assert_int_equal(jaccl_param_int(JP_GID_INDEX), -1);
    assert_int_equal(jaccl_param_int(JP_MESH_MAX_BYTES), (int64_t)1 << 40);
    assert_int_equal(jaccl_param_int(JP_TIMEOUT), 600);
    assert_int_equal(g_cap.warns, 0);
    assert_int_equal(g_cap.infos, 4);
    assert_true(g_cap.info_flags == (unsigned long)(NCCL_ENV | NCCL_INIT));
}

static void test_env_info_message_once(void **state)
{
    setenv("NCCL_JACCL_RING_WIRES", "3", 1);
    assert_int_equal(jaccl_param_int(JP_RING_WIRES), 3);
    assert_int_equal(jaccl_param_int(JP_RING_WIRES), 3);
    assert_string_equal(jaccl_param_str(JP_FABRIC), "auto");
    assert_int_equal(g_cap.infos, 1);
    assert_string_equal(g_cap.last_info,
                        "NET/JACCL : NCCL_JACCL_RING_WIRES set by environment to 3");
}

static void test_values_read_once(void **state)
{
    setenv("NCCL_JACCL_NSOCKS", "5", 1);
    assert_int_equal(jaccl_param_int(JP_NSOCKS), 5);
    setenv("NCCL_JACCL_NSOCKS", "6", 1); /* later changes are not seen without a reset */
    assert_int_equal(jaccl_param_int(JP_NSOCKS), 5);
    jaccl_param_reset();
    assert_int_equal(jaccl_param_int(JP_NSOCKS), 6);
    unsetenv("NCCL_JACCL_NSOCKS");
    jaccl_param_reset();
    assert_int_equal(jaccl_param_int(JP_NSOCKS), 2);
    assert_false(jaccl_param_is_set(JP_NSOCKS));
}

/* Sets name=value, reloads, and checks exactly one WARN naming the variable, the value and the
 * default, and no INFO. */
static void expect_invalid(const char *name, const char *value, const char *def)
{
    setenv(name, value, 1);
    jaccl_param_reset();
    memset(&g_cap, 0, sizeof(g_cap));
    (void)jaccl_param_int(JP_NSOCKS); /* any read loads everything */
    assert_int_equal(g_cap.warns, 1);
    assert_int_equal(g_cap.infos, 0);
    assert_non_null(strstr(g_cap.last_warn, name));
    assert_non_null(strstr(g_cap.last_warn, value));
    char want[64];
    snprintf(want, sizeof(want), "default %s", def);
    assert_non_null(strstr(g_cap.last_warn, want));
    unsetenv(name);
}

static void test_invalid_int(void **state)
{
    expect_invalid("NCCL_JACCL_NSOCKS", "abc", "2");
    expect_invalid("NCCL_JACCL_NSOCKS", "4x", "2");
    expect_invalid("NCCL_JACCL_NSOCKS", "1.5", "2");
    expect_invalid("NCCL_JACCL_NSOCKS", "0", "2");
    expect_invalid("NCCL_JACCL_NSOCKS", "17", "2");
    expect_invalid("NCCL_JACCL_NSOCKS", "-", "2");
    expect_invalid("NCCL_JACCL_NSOCKS", "0x", "2");
    expect_invalid("NCCL_JACCL_TIMEOUT", "99999999999999999999999", "30");
    expect_invalid("NCCL_JACCL_GID_INDEX", "-2", "-1");
    expect_invalid("NCCL_JACCL_GID_INDEX", "256", "-1");
    expect_invalid("NCCL_JACCL_MIN_CHUNK", "4095", "65536");
    expect_invalid("NCCL_JACCL_MESH_MAX_BYTES", "1099511627777", "262144");
    expect_invalid("NCCL_JACCL_COLL_ENABLE", "yes", "1");
    /* the value used afterwards is the default */
    setenv("NCCL_JACCL_NSOCKS", "99", 1);
    jaccl_param_reset();
    assert_int_equal(jaccl_param_int(JP_NSOCKS), 2);
    assert_false(jaccl_param_is_set(JP_NSOCKS));
}

static void test_range_edges_accepted(void **state)
{
    setenv("NCCL_JACCL_NSOCKS", "1", 1);
    setenv("NCCL_JACCL_QPS_PER_CONN", "16", 1);
    setenv("NCCL_JACCL_MIN_CHUNK", "4096", 1);
    setenv("NCCL_JACCL_COLL_ENABLE", "0", 1);
    setenv("NCCL_JACCL_RETRY_CNT", "+0", 1);
    assert_int_equal(jaccl_param_int(JP_NSOCKS), 1);
    assert_int_equal(jaccl_param_int(JP_QPS_PER_CONN), 16);
    assert_int_equal(jaccl_param_int(JP_MIN_CHUNK), 4096);
    assert_int_equal(jaccl_param_int(JP_COLL_ENABLE), 0);
    assert_int_equal(jaccl_param_int(JP_RETRY_CNT), 0);
    assert_int_equal(g_cap.warns, 0);
}

static void test_choices(void **state)
{
    setenv("NCCL_JACCL_FABRIC", "tcp", 1);
    setenv("NCCL_JACCL_ALGO", "MESH", 1); /* case-insensitive, stored in canonical spelling */
    setenv("NCCL_JACCL_QP_TYPE", "rc", 1);
    setenv("NCCL_JACCL_SOCKET_FAMILY", "af_inet6", 1);
    assert_string_equal(jaccl_param_str(JP_FABRIC), "tcp");
    assert_string_equal(jaccl_param_str(JP_ALGO), "mesh");
    assert_string_equal(jaccl_param_str(JP_QP_TYPE), "rc");
    assert_string_equal(jaccl_param_str(JP_SOCKET_FAMILY), "AF_INET6");
    assert_true(jaccl_param_is_set(JP_ALGO));
    assert_int_equal(g_cap.warns, 0);
    assert_int_equal(g_cap.infos, 4);
}

static void test_invalid_choice(void **state)
{
    expect_invalid("NCCL_JACCL_FABRIC", "ib", "\"auto\"");
    expect_invalid("NCCL_JACCL_ALGO", "tree", "\"auto\"");
    expect_invalid("NCCL_JACCL_QP_TYPE", "ud", "\"uc\"");
    expect_invalid("NCCL_JACCL_SOCKET_FAMILY", "AF_UNIX", "\"\"");
    assert_non_null(strstr(g_cap.last_warn, "AF_INET, AF_INET6"));
    setenv("NCCL_JACCL_FABRIC", "rdma", 1);
    jaccl_param_reset();
    assert_string_equal(jaccl_param_str(JP_FABRIC), "auto");
}

static void test_free_text(void **state)
{
    setenv("NCCL_JACCL_SOCKET_IFNAME", "^docker,lo", 1);
    setenv("NCCL_JACCL_HCA", "=mlx5_0:1", 1);
    assert_string_equal(jaccl_param_str(JP_SOCKET_IFNAME), "^docker,lo");
    assert_string_equal(jaccl_param_str(JP_HCA), "=mlx5_0:1");
    /* the value was copied: changing the environment does not change it */
    setenv("NCCL_JACCL_HCA", "mlx5_9", 1);
    assert_string_equal(jaccl_param_str(JP_HCA), "=mlx5_0:1");
    assert_int_equal(g_cap.warns, 0);
}

static void test_reset_keeps_strings_valid(void **state)
{
    /* The plugin resets after its last finalize while other code may still hold a string. */
    setenv("NCCL_JACCL_HCA", "mlx5_0", 1);
    const char *old = jaccl_param_str(JP_HCA);
    setenv("NCCL_JACCL_HCA", "mlx5_1", 1);
    jaccl_param_reset();
    assert_string_equal(jaccl_param_str(JP_HCA), "mlx5_1");
    assert_string_equal(old, "mlx5_0"); /* still readable, unchanged */
    setenv("NCCL_JACCL_HCA", "mlx5_0", 1);
    jaccl_param_reset();
    assert_ptr_equal(jaccl_param_str(JP_HCA), old); /* same value, same copy: memory bounded */
}

static void *reset_loop(void *arg)
{
    for (int i = 0; i < 200; i++)
        jaccl_param_reset();
    return NULL;
}

static void test_reset_while_reading(void **state)
{
    setenv("NCCL_JACCL_NSOCKS", "3", 1);
    setenv("NCCL_JACCL_FABRIC", "tcp", 1);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, reset_loop, NULL), 0);
    for (int i = 0; i < 2000; i++) { /* never a torn or zeroed value */
        assert_int_equal(jaccl_param_int(JP_NSOCKS), 3);
        assert_string_equal(jaccl_param_str(JP_FABRIC), "tcp");
    }
    pthread_join(th, NULL);
}

static void test_empty_is_unset(void **state)
{
    setenv("NCCL_JACCL_NSOCKS", "", 1);
    setenv("NCCL_JACCL_FABRIC", "", 1);
    assert_int_equal(jaccl_param_int(JP_NSOCKS), 2);
    assert_string_equal(jaccl_param_str(JP_FABRIC), "auto");
    assert_false(jaccl_param_is_set(JP_NSOCKS));
    assert_int_equal(g_cap.warns, 0);
    assert_int_equal(g_cap.infos, 0);
}

static void *reader(void *arg)
{
    int64_t *out = arg;
    *out = jaccl_param_int(JP_NSOCKS);
    return NULL;
}

static void test_concurrent_first_read(void **state)
{
    setenv("NCCL_JACCL_NSOCKS", "7", 1);
    pthread_t th[8];
    int64_t got[8];
    for (int i = 0; i < 8; i++)
        assert_int_equal(pthread_create(&th[i], NULL, reader, &got[i]), 0);
    for (int i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(got[i], 7);
    }
    assert_int_equal(g_cap.infos, 1); /* loaded once */
}

/* The NCCL fallback of every knob that has one, and the value and source each one reports. */
static void expect_source(enum jaccl_param_id id, enum jaccl_param_source src, const char *var)
{
    struct jaccl_param_info info;
    assert_int_equal(jaccl_param_get_info(id, &info), 0);
    assert_ptr_equal(info.desc, jaccl_param_desc(id));
    assert_int_equal(info.source, src);
    if (var == NULL)
        assert_null(info.var);
    else
        assert_string_equal(info.var, var);
    assert_int_equal(jaccl_param_is_set(id), src != JPS_DEFAULT);
}

static void test_nccl_fallback_names(void **state)
{
    static const struct {
        enum jaccl_param_id id;
        const char *nccl;
    } want[] = {
            {JP_HCA, "NCCL_IB_HCA"},
            {JP_GID_INDEX, "NCCL_IB_GID_INDEX"},
            {JP_TC, "NCCL_IB_TC"},
            {JP_SL, "NCCL_IB_SL"},
            {JP_SOCKET_IFNAME, "NCCL_SOCKET_IFNAME"},
            {JP_SOCKET_FAMILY, "NCCL_SOCKET_FAMILY"},
    };
    int with_fallback = 0;
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        assert_string_equal(jaccl_param_desc(want[i].id)->nccl_name, want[i].nccl);
    for (int id = 0; id < JP_NUM_PARAMS; id++)
        with_fallback += jaccl_param_desc((enum jaccl_param_id)id)->nccl_name != NULL;
    assert_int_equal(with_fallback, (int)(sizeof(want) / sizeof(want[0])));
}

static void test_nccl_fallback_used(void **state)
{
    setenv("NCCL_IB_HCA", "=mlx5_1:1", 1);
    setenv("NCCL_IB_GID_INDEX", "3", 1);
    setenv("NCCL_IB_TC", "106", 1);
    setenv("NCCL_IB_SL", "5", 1);
    setenv("NCCL_SOCKET_IFNAME", "^docker", 1);
    setenv("NCCL_SOCKET_FAMILY", "af_inet6", 1);
    assert_string_equal(jaccl_param_str(JP_HCA), "=mlx5_1:1");
    assert_int_equal(jaccl_param_int(JP_GID_INDEX), 3);
    assert_int_equal(jaccl_param_int(JP_TC), 106);
    assert_int_equal(jaccl_param_int(JP_SL), 5);
    assert_string_equal(jaccl_param_str(JP_SOCKET_IFNAME), "^docker");
    assert_string_equal(jaccl_param_str(JP_SOCKET_FAMILY), "AF_INET6");
    expect_source(JP_HCA, JPS_NCCL, "NCCL_IB_HCA");
    expect_source(JP_TC, JPS_NCCL, "NCCL_IB_TC");
    expect_source(JP_SOCKET_FAMILY, JPS_NCCL, "NCCL_SOCKET_FAMILY");
    expect_source(JP_NSOCKS, JPS_DEFAULT, NULL);
    assert_int_equal(g_cap.warns, 0);
    assert_int_equal(g_cap.infos, 6); /* one line per fallback taken, naming it */
    assert_string_equal(g_cap.last_info,
                        "NET/JACCL : NCCL_JACCL_SL not set; using NCCL's NCCL_IB_SL=5");
}

static void test_own_knob_wins(void **state)
{
    setenv("NCCL_IB_TC", "106", 1);
    setenv("NCCL_JACCL_TC", "40", 1);
    setenv("NCCL_SOCKET_IFNAME", "eth", 1);
    setenv("NCCL_JACCL_SOCKET_IFNAME", "", 1); /* empty = unset: the fallback applies */
    assert_int_equal(jaccl_param_int(JP_TC), 40);
    expect_source(JP_TC, JPS_ENV, "NCCL_JACCL_TC");
    assert_string_equal(jaccl_param_str(JP_SOCKET_IFNAME), "eth");
    expect_source(JP_SOCKET_IFNAME, JPS_NCCL, "NCCL_SOCKET_IFNAME");
    struct jaccl_param_info info;
    assert_int_equal(jaccl_param_get_info(JP_TC, &info), 0);
    assert_int_equal(info.i, 40);
    assert_string_equal(info.s, "");
    assert_string_equal(jaccl_param_source_str(JPS_ENV), "environment");
    assert_string_equal(jaccl_param_source_str(JPS_NCCL), "NCCL fallback");
    assert_string_equal(jaccl_param_source_str(JPS_DEFAULT), "default");
    assert_int_equal(jaccl_param_get_info(JP_NUM_PARAMS, &info), -1);
    assert_int_equal(jaccl_param_get_info(JP_TC, NULL), -1);
}

/* A bad NCCL value is named in the WARN (not the jaccl name the user never set) and ignored. */
static void test_nccl_fallback_invalid(void **state)
{
    setenv("NCCL_IB_SL", "16", 1);
    assert_int_equal(jaccl_param_int(JP_SL), -1);
    assert_int_equal(g_cap.warns, 1);
    assert_non_null(strstr(g_cap.last_warn, "NCCL_IB_SL=16 is outside [-1, 15]"));
    expect_source(JP_SL, JPS_DEFAULT, NULL);
    unsetenv("NCCL_IB_SL");
    setenv("NCCL_SOCKET_FAMILY", "AF_UNIX", 1);
    jaccl_param_reset();
    memset(&g_cap, 0, sizeof(g_cap));
    assert_string_equal(jaccl_param_str(JP_SOCKET_FAMILY), "");
    assert_int_equal(g_cap.warns, 1);
    assert_non_null(strstr(g_cap.last_warn, "NCCL_SOCKET_FAMILY=\"AF_UNIX\""));
}

static void test_closest(void **state)
{
    assert_string_equal(jaccl_param_closest("NCCL_JACCL_NSOCK")->name, "NCCL_JACCL_NSOCKS");
    assert_string_equal(jaccl_param_closest("NCCL_JACCL_TIMEOUTS")->name, "NCCL_JACCL_TIMEOUT");
    assert_string_equal(jaccl_param_closest("NCCL_JACCL_QP_TYP")->name, "NCCL_JACCL_QP_TYPE");
    assert_string_equal(jaccl_param_closest("NCCL_JACCL_RINGWIRES")->name, "NCCL_JACCL_RING_WIRES");
    assert_string_equal(jaccl_param_closest("NCCL_JACCL_GID_IDX")->name, "NCCL_JACCL_GID_INDEX");
    assert_string_equal(jaccl_param_closest("NCCL_JACCL_SL")->name, "NCCL_JACCL_SL");
    assert_null(jaccl_param_closest(NULL));
    /* Longer than the compared prefix: still an answer, no overrun. */
    char longname[200];
    memset(longname, 'A', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    assert_non_null(jaccl_param_closest(longname));
}

/* Counts WARNs naming `name` and the suggestion `hint` (the fake logger keeps only the last). */
static void test_unknown_knob_warned_once(void **state)
{
    setenv("NCCL_JACCL_NSOCK", "4", 1);
    setenv("NCCL_JACCL_NSOCKS", "3", 1);
    assert_int_equal(jaccl_param_int(JP_NSOCKS), 3);
    (void)jaccl_param_int(JP_TIMEOUT); /* a second read does not warn again */
    assert_int_equal(g_cap.warns, 1);
    assert_non_null(strstr(g_cap.last_warn, "NCCL_JACCL_NSOCK is not a jaccl setting"));
    assert_non_null(strstr(g_cap.last_warn, "did you mean NCCL_JACCL_NSOCKS?"));
    unsetenv("NCCL_JACCL_NSOCK");
    setenv("NCCL_JACCL_XYZZY", "1", 1);
    setenv("NCCL_JACCL_QP_TYP", "rc", 1);
    jaccl_param_reset();
    memset(&g_cap, 0, sizeof(g_cap));
    assert_string_equal(jaccl_param_str(JP_QP_TYPE), "uc"); /* the typo is not applied */
    assert_int_equal(g_cap.warns, 2);                       /* one per unknown variable */
    /* Known knobs and NCCL's own variables never draw this warning. */
    unsetenv("NCCL_JACCL_XYZZY");
    unsetenv("NCCL_JACCL_QP_TYP");
    setenv("NCCL_IB_HCA", "mlx5", 1);
    setenv("NCCL_JACCL_TC", "0", 1);
    jaccl_param_reset();
    memset(&g_cap, 0, sizeof(g_cap));
    (void)jaccl_param_int(JP_NSOCKS);
    assert_int_equal(g_cap.warns, 0);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
            T(test_table_complete),
            T(test_defaults),
            T(test_env_int),
            T(test_env_info_message_once),
            T(test_values_read_once),
            T(test_invalid_int),
            T(test_range_edges_accepted),
            T(test_choices),
            T(test_invalid_choice),
            T(test_free_text),
            T(test_empty_is_unset),
            T(test_concurrent_first_read),
            T(test_reset_keeps_strings_valid),
            T(test_reset_while_reading),
            T(test_nccl_fallback_names),
            T(test_nccl_fallback_used),
            T(test_own_knob_wins),
            T(test_nccl_fallback_invalid),
            T(test_closest),
            T(test_unknown_knob_warned_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
