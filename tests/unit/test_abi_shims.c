/* SPDX-License-Identifier: BSD-3-Clause */
/* The shims between NCCL's versioned tables and jaccl's version-neutral core: every version's
 * getProperties fills exactly its own struct (nothing past its size is written) with the same
 * device; v12's railId / planeId are NCCL_NET_ID_UNDEF and its vProps name the device itself;
 * the v12 init hands its config's trafficClass to the context; setNetAttr checks the context.
 * Through the exported tables, over the TCP fabric on lo, in one process. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "abi/shims.h"
#include "core/api.h"
#include "core/state.h"
#include "util/param.h"

#define GUARD 64
#define FILL  0xa5

/* A properties struct of `size` bytes followed by GUARD bytes that must stay FILL. */
struct guarded {
    unsigned char bytes[256 + GUARD];
};

static void guard_init(struct guarded *g)
{
    memset(g->bytes, FILL, sizeof(g->bytes));
}

static void guard_check(const struct guarded *g, size_t size)
{
    for (size_t i = size; i < size + GUARD; i++)
        assert_int_equal(g->bytes[i], FILL);
}

static void *ctx;

static int setup(void **state)
{
    setenv("NCCL_JACCL_FABRIC", "tcp", 1);
    setenv("NCCL_JACCL_SOCKET_IFNAME", "lo", 1);
    jaccl_param_reset();
    ncclNetCommConfig_v12_t cfg = {.trafficClass = NCCL_NET_TRAFFIC_CLASS_UNDEF};
    return ncclNetPlugin_v12.init(&ctx, 1, &cfg, NULL, NULL) == ncclSuccess ? 0 : -1;
}

static int teardown(void **state)
{
    ncclResult_t rc = ncclNetPlugin_v12.finalize(ctx);
    ctx = NULL;
    unsetenv("NCCL_JACCL_FABRIC");
    unsetenv("NCCL_JACCL_SOCKET_IFNAME");
    return rc == ncclSuccess ? 0 : -1;
}

/* v12 as NCCL 2.30 reads it: the reference the older versions are compared with. */
static void v12_props(int dev, ncclNetProperties_v12_t *out)
{
    struct guarded g;
    guard_init(&g);
    assert_int_equal(ncclNetPlugin_v12.getProperties(dev, (ncclNetProperties_v12_t *)g.bytes),
                     ncclSuccess);
    guard_check(&g, sizeof(*out));
    memcpy(out, g.bytes, sizeof(*out));
}

static void test_v12_props(void **state)
{
    ncclNetProperties_v12_t p;
    v12_props(0, &p);
    assert_non_null(p.name);
    assert_int_equal(p.ptrSupport, NCCL_PTR_HOST);
    assert_int_equal(p.netDeviceType, NCCL_NET_DEVICE_HOST);
    assert_int_equal(p.netDeviceVersion, NCCL_NET_DEVICE_INVALID_VERSION);
    assert_int_equal(p.maxRecvs, 1);
    assert_int_equal(p.vProps.ndevs, 1);
    assert_int_equal(p.vProps.devs[0], 0);
    for (int i = 1; i < NCCL_NET_MAX_DEVS_PER_NIC_V12; i++)
        assert_int_equal(p.vProps.devs[i], 0);
    assert_true(p.maxP2pBytes > 0 && p.maxP2pBytes <= (size_t)NCCL_MAX_NET_SIZE_BYTES);
    assert_true(p.maxCollBytes == p.maxP2pBytes);
    assert_int_equal(p.maxMultiRequestSize, 1);
    assert_int_equal(p.railId, NCCL_NET_ID_UNDEF);
    assert_int_equal(p.planeId, NCCL_NET_ID_UNDEF);

    ncclNetProperties_v12_t c;
    assert_int_equal(ncclCollNetPlugin_v12.getProperties(0, &c), ncclSuccess);
    assert_memory_equal(&c, &p, sizeof(p));
}

#define EXPECT_COMMON(q, p)                                     \
    do {                                                        \
        assert_ptr_equal((q).name, (p).name);                   \
        assert_ptr_equal((q).pciPath, (p).pciPath);             \
        assert_true((q).guid == (p).guid);                      \
        assert_int_equal((q).ptrSupport, (p).ptrSupport);       \
        assert_int_equal((q).speed, (p).speed);                 \
        assert_int_equal((q).port, (p).port);                   \
        assert_true((q).latency == (p).latency);                \
        assert_int_equal((q).maxComms, (p).maxComms);           \
        assert_int_equal((q).maxRecvs, (p).maxRecvs);           \
        assert_int_equal((q).netDeviceType, (p).netDeviceType); \
    } while (0)

#define EXPECT_V9(q, p)                                           \
    do {                                                          \
        EXPECT_COMMON(q, p);                                      \
        assert_int_equal((q).forceFlush, (p).forceFlush);         \
        assert_int_equal((q).vProps.ndevs, (p).vProps.ndevs);     \
        assert_int_equal((q).vProps.devs[0], (p).vProps.devs[0]); \
        assert_true((q).maxP2pBytes == (p).maxP2pBytes);          \
        assert_true((q).maxCollBytes == (p).maxCollBytes);        \
    } while (0)

/* Each older table writes its own, shorter struct and nothing after it, with v12's values. */
static void test_older_props_match(void **state)
{
    ncclNetProperties_v12_t p;
    struct guarded g;
    v12_props(0, &p);

    guard_init(&g);
    assert_int_equal(ncclNetPlugin_v11.getProperties(0, (ncclNetProperties_v11_t *)g.bytes),
                     ncclSuccess);
    guard_check(&g, sizeof(ncclNetProperties_v11_t));
    ncclNetProperties_v11_t p11;
    memcpy(&p11, g.bytes, sizeof(p11));
    EXPECT_V9(p11, p);
    assert_int_equal(p11.maxMultiRequestSize, p.maxMultiRequestSize);

    guard_init(&g);
    assert_int_equal(ncclNetPlugin_v10.getProperties(0, (ncclNetProperties_v10_t *)g.bytes),
                     ncclSuccess);
    guard_check(&g, sizeof(ncclNetProperties_v10_t));
    ncclNetProperties_v10_t p10;
    memcpy(&p10, g.bytes, sizeof(p10));
    EXPECT_V9(p10, p);

    guard_init(&g);
    assert_int_equal(ncclNetPlugin_v8.getProperties(0, (ncclNetProperties_v8_t *)g.bytes),
                     ncclSuccess);
    guard_check(&g, sizeof(ncclNetProperties_v8_t));
    ncclNetProperties_v8_t p8;
    memcpy(&p8, g.bytes, sizeof(p8));
    EXPECT_COMMON(p8, p);
}

static void test_props_rejects(void **state)
{
    int ndev = 0;
    ncclNetProperties_v12_t p;
    assert_int_equal(ncclNetPlugin_v12.devices(&ndev), ncclSuccess);
    assert_true(ndev >= 1);
    /* a device that does not exist is a configuration mismatch; a NULL out pointer, misuse */
    assert_int_equal(ncclNetPlugin_v12.getProperties(ndev, &p), ncclInvalidUsage);
    assert_int_equal(ncclNetPlugin_v12.getProperties(-1, &p), ncclInvalidUsage);
    assert_int_equal(ncclNetPlugin_v12.getProperties(0, NULL), ncclInternalError);
    assert_int_equal(ncclNetPlugin_v8.getProperties(0, NULL), ncclInternalError);
}

/* The config's trafficClass reaches the context; UNDEF and no config both mean "none". */
static void test_v12_init_config(void **state)
{
    ncclNetCommConfig_v12_t cfg = {.trafficClass = 46};
    void *c = NULL;
    assert_int_equal(ncclNetPlugin_v12.init(&c, 2, &cfg, NULL, NULL), ncclSuccess);
    assert_int_equal(jaccl_ctx_traffic_class(c), 46);
    assert_int_equal(ncclNetPlugin_v12.finalize(c), ncclSuccess);

    assert_int_equal(ncclNetPlugin_v12.init(&c, 3, NULL, NULL, NULL), ncclSuccess);
    assert_int_equal(jaccl_ctx_traffic_class(c), -1);
    assert_int_equal(ncclNetPlugin_v12.finalize(c), ncclSuccess);

    assert_int_equal(jaccl_ctx_traffic_class(ctx), -1); /* setup passed UNDEF */
}

static void test_v12_set_net_attr(void **state)
{
    ncclNetAttr_v12_t attr = NCCL_NET_ATTR_INIT;
    int not_a_ctx = 0;
    assert_int_equal(ncclNetPlugin_v12.setNetAttr(ctx, &attr), ncclSuccess);
    assert_int_equal(ncclNetPlugin_v12.setNetAttr(&not_a_ctx, &attr), ncclInternalError);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_v12_props),        cmocka_unit_test(test_older_props_match),
            cmocka_unit_test(test_props_rejects),    cmocka_unit_test(test_v12_init_config),
            cmocka_unit_test(test_v12_set_net_attr),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
