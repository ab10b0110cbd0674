/* SPDX-License-Identifier: BSD-3-Clause */
/* jaccl-info's RDMA view over fake verbs (this machine has no RDMA device): which port it marks
 * used and with which GID, the reason it gives for every port passed over (down, outside
 * NCCL_JACCL_HCA, no GID at NCCL_JACCL_GID_INDEX, NCCL_JACCL_FABRIC=tcp), the fabric reason and
 * the back ends not used.
 * The tool is linked in with its main renamed (the Makefile builds tools/jaccl-info.c with
 * -Dmain=jaccl_info_main); its --json output is checked. */
int jaccl_info_main(int argc, char **argv);

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/param.h"
#include "verbs_fake.h"

static char g_out[1 << 17];

/* mlx5_0 (port 1 up, port 2 down), mlx5_1 (4x EDR), rxe0 whose RoCE v2 IPv4 GID is index 3
 * (index 1 is a routable IPv6 one, index 2 IPv4 but RoCE v1). */
static void setup_devs(void)
{
    struct fk_dev *d;

    fk_reset();
    d = fk_add_dev("mlx5_0", 2);
    d->port[1].state = IBV_PORT_DOWN;
    d = fk_add_dev("mlx5_1", 1);
    d->port[0].active_width = 2;  /* 4x */
    d->port[0].active_speed = 32; /* EDR */
    d = fk_add_dev("rxe0", 1);
    assert_int_equal(inet_pton(AF_INET6, "2001:db8::1", d->gid[0][1].raw), 1);
    assert_int_equal(inet_pton(AF_INET6, "::ffff:10.9.0.7", d->gid[0][2].raw), 1);
    d->v2[0][2] = 0;
    assert_int_equal(inet_pton(AF_INET6, "::ffff:10.9.0.8", d->gid[0][3].raw), 1);
    d->v2[0][3] = 1;
    vb_ibv_set(&fk_lib);
}

static int setup(void **st)
{
    setup_devs();
    setenv("NCCL_JACCL_SOCKET_IFNAME", "lo", 1);
    return 0;
}

static int teardown(void **st)
{
    vb_ibv_set(NULL);
    unsetenv("NCCL_JACCL_HCA");
    unsetenv("NCCL_JACCL_GID_INDEX");
    unsetenv("NCCL_JACCL_FABRIC");
    jaccl_param_reset();
    return 0;
}

/* Runs the tool with --json; its stdout lands in g_out. The plugin library itself may or may
 * not load here (LD_LIBRARY_PATH): only the sections from the linked-in code are checked. */
static void run_info(void)
{
    char path[] = "/tmp/jaccl-info-test-XXXXXX", *argv[] = {"jaccl-info", "--json", NULL};
    int fd = mkstemp(path), saved = dup(1);
    ssize_t n;

    assert_true(fd >= 0 && saved >= 0);
    fflush(stdout);
    dup2(fd, 1);
    jaccl_info_main(2, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    n = pread(fd, g_out, sizeof(g_out) - 1, 0);
    close(fd);
    unlink(path);
    assert_true(n > 0);
    g_out[n] = '\0';
}

/* Just past the first `s` at or after p; fails the test when there is none. */
static const char *after(const char *p, const char *s)
{
    const char *q = strstr(p, s);

    if (!q)
        fail_msg("no '%s' after: %.200s", s, p);
    return q + strlen(s);
}

/* The port block of device `dev`, port `port`: starts at its "port" field. */
static const char *port_of(const char *dev, int port)
{
    char key[32];

    snprintf(key, sizeof(key), "\"port\": %d,", port);
    return after(after(after(g_out, "\"rdma\": {"), dev), key);
}

static void assert_field(const char *p, const char *field, const char *value)
{
    const char *v = after(p, field);

    if (strncmp(v, value, strlen(value)) != 0)
        fail_msg("%s is %.60s, want %s", field, v, value);
}

/* The string value of the first `field` after p contains `part` (the wording of the fabric
 * reason belongs to fabric/fabric.c; the test pins only the cause inside it). */
static void assert_field_has(const char *p, const char *field, const char *part)
{
    const char *v = after(after(p, field), "\"");
    const char *end = strchr(v, '"');
    const char *hit = strstr(v, part);

    if (!end || !hit || hit + strlen(part) > end)
        fail_msg("%s is %.120s, want it to contain %s", field, v, part);
}

static void test_used_port_and_gid(void **st)
{
    const char *p;

    run_info();
    assert_field(g_out, "\"chosen\": ", "\"verbs\"");
    p = port_of("\"mlx5_0\"", 1);
    assert_field(p, "\"state\": ", "\"ACTIVE\"");
    assert_field(p, "\"link_layer\": ", "\"Ethernet\"");
    assert_field(p, "\"mtu\": ", "1024");
    assert_field(p, "\"used\": ", "true");
    assert_field(p, "\"jaccl_device\": ", "0");
    assert_field(after(p, "\"index\": 0,"), "\"used\": ", "false"); /* link-local */
    assert_field(after(p, "\"index\": 1,"), "\"gid\": ", "\"::ffff:10.0.0.1\"");
    assert_field(after(p, "\"index\": 1,"), "\"used\": ", "true");
    assert_field(port_of("\"mlx5_1\"", 1), "\"speed_mbps\": ", "100000");
    p = port_of("\"rxe0\"", 1);
    assert_field(p, "\"jaccl_device\": ", "2");
    assert_field(after(p, "\"index\": 2,"), "\"type\": ", "\"RoCE v1\"");
    assert_field(after(p, "\"index\": 2,"), "\"used\": ", "false");
    assert_field(after(p, "\"index\": 3,"), "\"type\": ", "\"RoCE v2\"");
    assert_field(after(p, "\"index\": 3,"), "\"used\": ", "true");
}

static void test_down_port(void **st)
{
    const char *p;

    run_info();
    p = port_of("\"mlx5_0\"", 2);
    assert_field(p, "\"state\": ", "\"DOWN\"");
    assert_field(p, "\"used\": ", "false");
    assert_field(p, "\"reason\": ", "\"port is DOWN, not ACTIVE\"");
}

static void test_hca_filter(void **st)
{
    setenv("NCCL_JACCL_HCA", "mlx5_1", 1);
    run_info();
    assert_field(port_of("\"mlx5_0\"", 1),
                 "\"reason\": ", "\"not selected by NCCL_JACCL_HCA='mlx5_1'\"");
    assert_field(port_of("\"mlx5_1\"", 1), "\"used\": ", "true");
    assert_field(port_of("\"rxe0\"", 1), "\"used\": ", "false");
}

/* No port has a GID at index 5: nothing usable, auto falls back to tcp and says why. */
static void test_forced_gid_fallback(void **st)
{
    setenv("NCCL_JACCL_GID_INDEX", "5", 1);
    run_info();
    assert_field(g_out, "\"chosen\": ", "\"tcp\"");
    assert_field_has(g_out, "\"reason\": ",
                     "no active RDMA port matches NCCL_JACCL_HCA or has a usable GID");
    assert_field(port_of("\"mlx5_0\"", 1),
                 "\"reason\": ", "\"no usable GID at NCCL_JACCL_GID_INDEX=5\"");
}

/* The registry's word on the back ends it did not use: only tcp, not tried as verbs came first. */
static void test_not_used(void **st)
{
    const char *p, *end, *name;
    int names = 0;

    run_info();
    p = after(after(g_out, "\"fabric\": {"), "\"not_used\": [");
    end = strchr(p, ']');
    assert_non_null(end);
    for (name = strstr(p, "\"name\": "); name && name < end; name = strstr(name + 1, "\"name\": "))
        names++;
    assert_int_equal(names, 1);
    assert_field(p, "\"name\": ", "\"tcp\"");
    assert_field(p, "\"reason\": ", "\"not tried: verbs came first and was usable\"");
}

static void test_fabric_tcp(void **st)
{
    setenv("NCCL_JACCL_FABRIC", "tcp", 1);
    run_info();
    assert_field_has(g_out, "\"reason\": ", "NCCL_JACCL_FABRIC=tcp");
    assert_field(port_of("\"rxe0\"", 1), "\"reason\": ", "\"NCCL_JACCL_FABRIC=tcp\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_used_port_and_gid, setup, teardown),
            cmocka_unit_test_setup_teardown(test_down_port, setup, teardown),
            cmocka_unit_test_setup_teardown(test_hca_filter, setup, teardown),
            cmocka_unit_test_setup_teardown(test_forced_gid_fallback, setup, teardown),
            cmocka_unit_test_setup_teardown(test_not_used, setup, teardown),
            cmocka_unit_test_setup_teardown(test_fabric_tcp, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
