/* SPDX-License-Identifier: BSD-3-Clause */
/* The debug counters (util/counters.h): off, in memory with the totals logged at shutdown, and
 * in a file that another mapping reads back through the header's layout; %p expansion and the
 * fallback when the file cannot be created. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/counters.h"
#include "util/log.h"
#include "util/param.h"

static struct {
    int warns, infos;
    char last_warn[1024], last_info[1024];
} g_log;

static char g_dir[64];

static void fake_logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                        const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (level == NCCL_LOG_WARN) {
        g_log.warns++;
        snprintf(g_log.last_warn, sizeof(g_log.last_warn), "%s", msg);
    } else if (level == NCCL_LOG_INFO && (flags & NCCL_NET) && strstr(msg, "counters")) {
        g_log.infos++;
        snprintf(g_log.last_info, sizeof(g_log.last_info), "%s", msg);
    }
}

/* NCCL_JACCL_DEBUG_COUNTERS=value (NULL: unset), re-read as at a fabric start. */
static void start(const char *value)
{
    if (value)
        setenv("NCCL_JACCL_DEBUG_COUNTERS", value, 1);
    else
        unsetenv("NCCL_JACCL_DEBUG_COUNTERS");
    jaccl_param_reset();
    memset(&g_log, 0, sizeof(g_log));
    jaccl_counters_init();
}

static int setup(void **state)
{
    snprintf(g_dir, sizeof(g_dir), "/tmp/test_util_counters-XXXXXX");
    assert_non_null(mkdtemp(g_dir));
    jaccl_log_set(fake_logger);
    return 0;
}

static int teardown(void **state)
{
    jaccl_counters_fini();
    jaccl_log_set(NULL);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
    assert_int_equal(system(cmd), 0);
    unsetenv("NCCL_JACCL_DEBUG_COUNTERS");
    jaccl_param_reset();
    return 0;
}

/* The value of counter `name` in the mapping, asserting it is there. */
static uint64_t value_of(const void *map, size_t len, const char *name)
{
    uint64_t v[64];
    const char *names[64];
    int n = jaccl_cnt_map_read(map, len, v, names, 64);
    assert_true(n > 0);
    for (int i = 0; i < n && i < 64; i++)
        if (strcmp(names[i], name) == 0)
            return v[i];
    fail_msg("counter %s not in the file", name);
    return 0;
}

/* Maps `path` read-only as a tool would; *len gets its size. */
static void *map_ro(const char *path, size_t *len)
{
    struct stat st;
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    assert_true(m != MAP_FAILED);
    *len = (size_t)st.st_size;
    return m;
}

static void test_file_read_back(void **state)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/counters", g_dir);
    start(path);
    assert_int_equal(g_log.warns, 0);
    assert_int_equal(g_log.infos, 1); /* the start names the file */
    assert_non_null(strstr(g_log.last_info, path));
    g_log.infos = 0;
    assert_string_equal(jaccl_counters_path(), path);
    size_t len;
    void *m = map_ro(path, &len);
    assert_int_equal(len, jaccl_cnt_map_size(JACCL_CNT_NUM));
    assert_memory_equal(m, "JACCLCNT", 8); /* the magic, as bytes in the file */
    const struct jaccl_cnt_hdr *h = m;
    assert_int_equal(h->version, JACCL_CNT_VERSION);
    assert_int_equal(h->count, JACCL_CNT_NUM);

    jaccl_count(JACCL_CNT_SENDMSG, 3);
    jaccl_count(JACCL_CNT_STAGE_BYTES, 4096);
    jaccl_count(JACCL_CNT_SENDMSG, 1);
    const char *names[JACCL_CNT_NUM];
    uint64_t v[JACCL_CNT_NUM];
    assert_int_equal(jaccl_cnt_map_read(m, len, v, names, JACCL_CNT_NUM), JACCL_CNT_NUM);
    assert_string_equal(names[JACCL_CNT_SENDMSG], "sendmsg");
    assert_string_equal(names[JACCL_CNT_RECVMSG_POLL], "recvmsg_poll");
    assert_string_equal(names[JACCL_CNT_HANDOFF], "io_handoff");
    assert_int_equal(v[JACCL_CNT_SENDMSG], 4);
    assert_int_equal(v[JACCL_CNT_STAGE_BYTES], 4096);
    assert_int_equal(v[JACCL_CNT_EPOLL_WAKE], 0);
    assert_int_equal(value_of(m, len, "stage_bytes"), 4096);

    /* Shutdown leaves the file with the final values, and logs nothing (they are in the file). */
    jaccl_counters_fini();
    jaccl_count(JACCL_CNT_SENDMSG, 100); /* off now */
    assert_int_equal(value_of(m, len, "sendmsg"), 4);
    assert_int_equal(g_log.infos, 0);
    /* A restart zeroes them. */
    start(path);
    assert_int_equal(value_of(m, len, "sendmsg"), 0);
    munmap(m, len);
}

static void test_reader_rejects(void **state)
{
    uint64_t buf[64] = {0};
    assert_int_equal(jaccl_cnt_map_read(buf, sizeof(buf), NULL, NULL, 0), -1); /* no magic */
    assert_int_equal(jaccl_cnt_map_read(NULL, 0, NULL, NULL, 0), -1);
    char path[128];
    snprintf(path, sizeof(path), "%s/counters", g_dir);
    start(path);
    size_t len;
    void *m = map_ro(path, &len);
    assert_int_equal(jaccl_cnt_map_read(m, len, NULL, NULL, 0), JACCL_CNT_NUM);
    assert_int_equal(jaccl_cnt_map_read(m, len - 8, NULL, NULL, 0), -1); /* truncated */
    munmap(m, len);
}

static void test_pid_expansion(void **state)
{
    char tmpl[128], want[128];
    snprintf(tmpl, sizeof(tmpl), "%s/rank.%%p.cnt", g_dir);
    snprintf(want, sizeof(want), "%s/rank.%ld.cnt", g_dir, (long)getpid());
    start(tmpl);
    assert_int_equal(g_log.warns, 0);
    assert_string_equal(jaccl_counters_path(), want);
    jaccl_count(JACCL_CNT_CQ_SIGNAL, 7);
    size_t len;
    void *m = map_ro(want, &len);
    assert_int_equal(value_of(m, len, "cq_signal"), 7);
    munmap(m, len);
}

static void test_uncreatable_falls_back(void **state)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/no/such/dir/counters", g_dir);
    start(path);
    assert_int_equal(g_log.warns, 1);
    assert_non_null(strstr(g_log.last_warn, "NET/JACCL"));
    assert_non_null(strstr(g_log.last_warn, path));
    assert_string_equal(jaccl_counters_path(), "");
    jaccl_count(JACCL_CNT_SENDMSG, 5);
    uint64_t v[JACCL_CNT_NUM];
    assert_int_equal(jaccl_counters_read(v, NULL, JACCL_CNT_NUM), JACCL_CNT_NUM);
    assert_int_equal(v[JACCL_CNT_SENDMSG], 5);
    jaccl_counters_fini(); /* in memory only: the totals go to the log */
    assert_int_equal(g_log.infos, 1);
    assert_non_null(strstr(g_log.last_info, "sendmsg 5,"));
    assert_int_equal(g_log.warns, 1);
}

static void test_one_logs_totals(void **state)
{
    start("1");
    assert_null(strchr(jaccl_counters_path(), '/'));
    jaccl_count(JACCL_CNT_EVENTFD_WAKE, 2);
    jaccl_count(JACCL_CNT_HANDOFF, 9);
    jaccl_counters_fini();
    assert_int_equal(g_log.infos, 1);
    assert_non_null(strstr(g_log.last_info, "NET/JACCL : debug counters at shutdown: sendmsg 0,"));
    assert_non_null(strstr(g_log.last_info, "eventfd_wake 2,"));
    assert_non_null(strstr(g_log.last_info, "io_handoff 9"));
    assert_int_equal(g_log.warns, 0);
}

static void test_off_counts_nothing(void **state)
{
    const char *offs[] = {NULL, "", "0"};
    for (int k = 0; k < 3; k++) {
        start(offs[k]);
        assert_null(jaccl_counters_at);
        jaccl_count(JACCL_CNT_SENDMSG, 11);
        uint64_t v[JACCL_CNT_NUM];
        const char *names[JACCL_CNT_NUM];
        assert_int_equal(jaccl_counters_read(v, names, JACCL_CNT_NUM), JACCL_CNT_NUM);
        for (int i = 0; i < JACCL_CNT_NUM; i++)
            assert_int_equal(v[i], 0);
        assert_string_equal(names[JACCL_CNT_SENDMSG], "sendmsg");
        jaccl_counters_fini();
        assert_int_equal(g_log.infos + g_log.warns, 0);
    }
    /* "Off" after counting: a new start from "1" to "0" does not keep the old totals. */
    start("1");
    jaccl_count(JACCL_CNT_SENDMSG, 3);
    jaccl_counters_fini();
    start("0");
    uint64_t v[JACCL_CNT_NUM];
    jaccl_counters_read(v, NULL, JACCL_CNT_NUM);
    assert_int_equal(v[JACCL_CNT_SENDMSG], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_file_read_back, setup, teardown),
            cmocka_unit_test_setup_teardown(test_reader_rejects, setup, teardown),
            cmocka_unit_test_setup_teardown(test_pid_expansion, setup, teardown),
            cmocka_unit_test_setup_teardown(test_uncreatable_falls_back, setup, teardown),
            cmocka_unit_test_setup_teardown(test_one_logs_totals, setup, teardown),
            cmocka_unit_test_setup_teardown(test_off_counts_nothing, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
