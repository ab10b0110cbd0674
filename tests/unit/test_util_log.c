/* SPDX-License-Identifier: BSD-3-Clause */
/* Logging: prefix, level and flags reach NCCL's logger; without one, messages are dropped
 * unless JACCL_LOG_STDERR=1. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/log.h"

static struct {
    int calls;
    ncclDebugLogLevel level;
    unsigned long flags;
    char file[64];
    int line;
    char msg[2048];
} g_cap;

static void fake_logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                        const char *fmt, ...)
{
    g_cap.calls++;
    g_cap.level = level;
    g_cap.flags = flags;
    snprintf(g_cap.file, sizeof(g_cap.file), "%s", file);
    g_cap.line = line;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_cap.msg, sizeof(g_cap.msg), fmt, ap);
    va_end(ap);
}

static int setup(void **state)
{
    memset(&g_cap, 0, sizeof(g_cap));
    unsetenv("JACCL_LOG_STDERR");
    jaccl_log_set(fake_logger);
    return 0;
}

static int teardown(void **state)
{
    jaccl_log_set(NULL);
    return 0;
}

static void test_set_get(void **state)
{
    assert_ptr_equal(jaccl_log_get(), fake_logger);
    jaccl_log_set(NULL);
    assert_null(jaccl_log_get());
}

static void test_warn(void **state)
{
    int line = __LINE__ + 1;
    JWARN("peer %s lost after %d s", "10.0.0.2", 30);
    assert_int_equal(g_cap.calls, 1);
    assert_int_equal(g_cap.level, NCCL_LOG_WARN);
    assert_true(g_cap.flags == (unsigned long)NCCL_ALL);
    assert_string_equal(g_cap.file, "test_warn"); /* the function, not a path */
    assert_int_equal(g_cap.line, line);
    assert_string_equal(g_cap.msg, "NET/JACCL : peer 10.0.0.2 lost after 30 s");
}

static void test_info_flags(void **state)
{
    JINFO(NCCL_INIT | NCCL_NET, "using %d sockets", 4);
    assert_int_equal(g_cap.level, NCCL_LOG_INFO);
    assert_true(g_cap.flags == (unsigned long)(NCCL_INIT | NCCL_NET));
    assert_string_equal(g_cap.file, "test_info_flags");
    assert_string_equal(g_cap.msg, "NET/JACCL : using 4 sockets");

    JTRACE(NCCL_NET, "x");
    assert_int_equal(g_cap.level, NCCL_LOG_TRACE);
    assert_true(g_cap.flags == (unsigned long)NCCL_NET);
    assert_int_equal(g_cap.calls, 2);
}

static void test_percent_is_data(void **state)
{
    /* A '%' inside an argument must reach the logger verbatim, not as a format directive. */
    JINFO(NCCL_NET, "ifname %s", "eth%s%n");
    assert_string_equal(g_cap.msg, "NET/JACCL : ifname eth%s%n");
}

static void test_long_message_truncated(void **state)
{
    char big[4096];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    JWARN("%s", big);
    assert_int_equal(g_cap.calls, 1);
    assert_true(strncmp(g_cap.msg, "NET/JACCL : xxx", 15) == 0);
    assert_true(strlen(g_cap.msg) < sizeof(big));
}

static void test_level_none_dropped(void **state)
{
    jaccl_log(NCCL_LOG_NONE, NCCL_ALL, __func__, __LINE__, "nothing");
    assert_int_equal(g_cap.calls, 0);
}

/* Runs fn with fd 2 redirected to a temporary file; returns what was written. */
static void capture_stderr(void (*fn)(void), char *out, size_t cap)
{
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    int saved = dup(2);
    assert_true(saved >= 0);
    fflush(stderr);
    assert_true(dup2(fileno(tmp), 2) >= 0);
    fn();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t n = fread(out, 1, cap - 1, tmp);
    out[n] = '\0';
    fclose(tmp);
}

static void log_two(void)
{
    JWARN("first %d", 1);
    JINFO(NCCL_INIT, "second");
}

static void test_no_logger_dropped(void **state)
{
    jaccl_log_set(NULL);
    char out[512];
    capture_stderr(log_two, out, sizeof(out));
    assert_string_equal(out, "");
    assert_int_equal(g_cap.calls, 0);
}

static void test_stderr_fallback(void **state)
{
    jaccl_log_set(NULL);
    setenv("JACCL_LOG_STDERR", "1", 1);
    char out[512];
    capture_stderr(log_two, out, sizeof(out));
    char want[512];
    int pid = (int)getpid();
    snprintf(want, sizeof(want), "[jaccl %d] WARN first 1\n[jaccl %d] INFO second\n", pid, pid);
    assert_string_equal(out, want);

    setenv("JACCL_LOG_STDERR", "0", 1);
    capture_stderr(log_two, out, sizeof(out));
    assert_string_equal(out, "");
    unsetenv("JACCL_LOG_STDERR");
}

static void test_logger_wins_over_stderr(void **state)
{
    setenv("JACCL_LOG_STDERR", "1", 1);
    char out[512];
    capture_stderr(log_two, out, sizeof(out));
    assert_string_equal(out, "");
    assert_int_equal(g_cap.calls, 2);
    unsetenv("JACCL_LOG_STDERR");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_set_get, setup, teardown),
            cmocka_unit_test_setup_teardown(test_warn, setup, teardown),
            cmocka_unit_test_setup_teardown(test_info_flags, setup, teardown),
            cmocka_unit_test_setup_teardown(test_percent_is_data, setup, teardown),
            cmocka_unit_test_setup_teardown(test_long_message_truncated, setup, teardown),
            cmocka_unit_test_setup_teardown(test_level_none_dropped, setup, teardown),
            cmocka_unit_test_setup_teardown(test_no_logger_dropped, setup, teardown),
            cmocka_unit_test_setup_teardown(test_stderr_fallback, setup, teardown),
            cmocka_unit_test_setup_teardown(test_logger_wins_over_stderr, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
