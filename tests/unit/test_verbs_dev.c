/* SPDX-License-Identifier: BSD-3-Clause */
/* The verbs back end's devices over fake verbs: which ports become devices (ACTIVE only,
 * NCCL_JACCL_HCA in NCCL_IB_HCA syntax), their properties, the GID chosen by content (or by
 * NCCL_JACCL_GID_INDEX) and the side-channel address taken from it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "fabric/verbs/verbs.h"
#include "util/param.h"
#include "verbs_fake.h"

static void set_gid(union ibv_gid *g, const char *v6)
{
    memset(g, 0, sizeof(*g));
    assert_int_equal(inet_pton(AF_INET6, v6, g->raw), 1);
}

/* mlx5_0 (port 1 up, port 2 down), mlx5_1 (4x EDR), rxe0 with a GID table where the RoCE v2
 * IPv4 entry is not at index 1. */
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
    set_gid(&d->gid[0][1], "2001:db8::1");     /* routable IPv6, RoCE v2 */
    set_gid(&d->gid[0][2], "::ffff:10.9.0.7"); /* IPv4, RoCE v1 */
    d->v2[0][2] = 0;
    set_gid(&d->gid[0][3], "::ffff:10.9.0.8"); /* IPv4, RoCE v2: the one */
    d->v2[0][3] = 1;
    vb_ibv_set(&fk_lib);
}

static int init_with(const char *hca, const char *gid_index)
{
    if (hca)
        setenv("NCCL_JACCL_HCA", hca, 1);
    else
        unsetenv("NCCL_JACCL_HCA");
    if (gid_index)
        setenv("NCCL_JACCL_GID_INDEX", gid_index, 1);
    else
        unsetenv("NCCL_JACCL_GID_INDEX");
    jaccl_param_reset();
    return fab_verbs_ops.init();
}

static int teardown(void **st)
{
    fab_verbs_ops.fini();
    vb_ibv_set(NULL);
    unsetenv("NCCL_JACCL_HCA");
    unsetenv("NCCL_JACCL_GID_INDEX");
    unsetenv("NCCL_JACCL_SOCKET_IFNAME");
    jaccl_param_reset();
    return 0;
}

static const char *name_of(int i)
{
    return fab_verbs_ops.dev_info(i)->name;
}

static void test_every_active_port(void **st)
{
    setup_devs();
    assert_int_equal(init_with(NULL, NULL), 3);
    assert_string_equal(name_of(0), "mlx5_0:1");
    assert_string_equal(name_of(1), "mlx5_1:1");
    assert_string_equal(name_of(2), "rxe0:1");
    assert_null(fab_verbs_why_none());
}

static void test_hca_filter_syntax(void **st)
{
    setup_devs();
    assert_int_equal(init_with("mlx5_0:1,rxe0", NULL), 2);
    assert_string_equal(name_of(0), "mlx5_0:1");
    assert_string_equal(name_of(1), "rxe0:1");
    assert_int_equal(init_with("^rxe0", NULL), 2);
    assert_string_equal(name_of(1), "mlx5_1:1");
    assert_int_equal(init_with("mlx5", NULL), 2);  /* prefix */
    assert_int_equal(init_with("=mlx5", NULL), 0); /* exact */
    assert_non_null(strstr(fab_verbs_why_none(), "NCCL_JACCL_HCA"));
    assert_int_equal(fab_verbs_devices_listed(), 3);  /* present but unusable: a WARN case */
    assert_int_equal(init_with("mlx5_0:2", NULL), 0); /* that port is down */
    assert_int_equal(init_with("=rxe0", NULL), 1);
}

/* No RDMA device at all: falling back to TCP is the normal case, not a warning. */
static void test_none_listed(void **st)
{
    fk_reset();
    vb_ibv_set(&fk_lib);
    assert_int_equal(init_with(NULL, NULL), 0);
    assert_int_equal(fab_verbs_devices_listed(), 0);
    assert_string_equal(fab_verbs_why_none(), "no RDMA device");
}

static void test_properties(void **st)
{
    const struct fab_dev_info *i;

    setup_devs();
    assert_int_equal(init_with(NULL, NULL), 3);
    i = fab_verbs_ops.dev_info(0);
    assert_int_equal(i->port, 1);
    assert_int_equal(i->guid, 0x1000);
    assert_int_equal(i->speed_mbps, 10000);                          /* 1x FDR10 */
    assert_null(i->pci_path);                                        /* no such sysfs directory */
    assert_int_equal(fab_verbs_ops.dev_info(1)->speed_mbps, 100000); /* 4x EDR */
    assert_int_equal(fab_verbs_ops.dev_info(1)->guid, 0x1001);
    assert_true(i->max_msg_bytes >= (1u << 30));
    assert_null(fab_verbs_ops.dev_info(3));
}

static void test_gid_by_content_and_address(void **st)
{
    struct jaccl_link l;
    char s[64];

    setup_devs();
    assert_int_equal(init_with("=rxe0", NULL), 1);
    assert_int_equal(vb_dev_get(0)->gid_index, 3);
    assert_int_equal(fab_verbs_dev_link(0, &l), 0);
    assert_int_equal(l.addr.sa.sa_family, AF_INET);
    inet_ntop(AF_INET, &l.addr.sin.sin_addr, s, sizeof(s));
    assert_string_equal(s, "10.9.0.8");
    assert_int_equal(fab_verbs_dev_link(1, &l), -EINVAL);
}

static void test_gid_forced_index(void **st)
{
    setup_devs();
    assert_int_equal(init_with("=rxe0", "2"), 1);
    assert_int_equal(vb_dev_get(0)->gid_index, 2);
    /* an empty entry cannot be forced: the port is skipped */
    assert_int_equal(init_with("=rxe0", "6"), 0);
}

static void test_gid_none_usable(void **st)
{
    struct jaccl_link g;
    struct fk_dev *d;

    setup_devs();
    d = &fk_dev[2];
    memset(d->gid[0], 0, sizeof(d->gid[0]));
    set_gid(&d->gid[0][0], "fe80::1"); /* link-local only */
    assert_int_equal(init_with("=rxe0", NULL), 0);
    set_gid(&d->gid[0][5], "2001:db8::5");
    d->v2[0][5] = 0; /* RoCE v1 IPv6 does not route */
    assert_int_equal(init_with("=rxe0", NULL), 0);
    d->v2[0][5] = 1;
    setenv("NCCL_JACCL_SOCKET_IFNAME", "=nonexistent0", 1); /* no fallback interface either */
    assert_int_equal(init_with("=rxe0", NULL), 1);
    assert_int_equal(vb_dev_get(0)->gid_index, 5);
    assert_int_equal(fab_verbs_dev_link(0, &g), -ENODEV);
}

static void test_gid_helpers(void **st)
{
    union ibv_gid g;
    union jaccl_sockaddr a;

    set_gid(&g, "::ffff:192.168.1.2");
    assert_int_equal(vb_gid_ipv4(&g, &a), 1);
    set_gid(&g, "fe80::1");
    assert_int_equal(vb_gid_ipv4(&g, &a), 0);
    assert_int_equal(vb_port_speed(1, 1), 2500);
    assert_int_equal(vb_port_speed(2, 128), 400000);
    assert_int_equal(vb_port_speed(0, 0), 10000);
}

static void test_soft_roce_detected(void **st)
{
    setup_devs();
    assert_int_equal(init_with(NULL, NULL), 3);
    assert_int_equal(vb_dev_get(0)->soft_roce, 0);
    assert_int_equal(vb_dev_get(2)->soft_roce, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test_teardown(test_every_active_port, teardown),
            cmocka_unit_test_teardown(test_none_listed, teardown),
            cmocka_unit_test_teardown(test_hca_filter_syntax, teardown),
            cmocka_unit_test_teardown(test_properties, teardown),
            cmocka_unit_test_teardown(test_gid_by_content_and_address, teardown),
            cmocka_unit_test_teardown(test_gid_forced_index, teardown),
            cmocka_unit_test_teardown(test_gid_none_usable, teardown),
            cmocka_unit_test_teardown(test_gid_helpers, teardown),
            cmocka_unit_test_teardown(test_soft_roce_detected, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
