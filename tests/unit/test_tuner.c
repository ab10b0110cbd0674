/* SPDX-License-Identifier: BSD-3-Clause */
/* The tuner tables driven exactly as NCCL drives them: the built library is dlopen'ed by name
 * (RTLD_NOW | RTLD_LOCAL, found through LD_LIBRARY_PATH as tests/run_all.sh sets it),
 * ncclTunerPlugin_v5 and ncclTunerPlugin_v6 are looked up with dlsym, and getCollInfo gets the
 * address of a contiguous float[7][3] cast to float **, filled as NCCL fills it: its own costs
 * for ring and tree, -1 where an algorithm or protocol cannot run. What must hold: only CollNet
 * entries NCCL priced change, never a -1; nChannels stays 0; nothing ever fails; v5 and v6
 * share their functions; many communicators at once from several threads (ThreadSanitizer
 * runs this under make test-tsan). The knobs are checked through the core's entry points, where
 * the test can make the library read the environment again. */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/api.h"
#include "nccl_abi/net.h"
#include "nccl_abi/tuner.h"
#include "util/log.h"
#include "util/param.h"

#include "mp_util.h"

#define NA      NCCL_NUM_ALGORITHMS
#define NP      NCCL_NUM_PROTOCOLS
#define THREADS 4

static void *g_lib;
static const ncclTuner_v5_t *g_v5;
static const ncclTuner_v6_t *g_v6;

/* ---- NCCL's logger: lines kept for the checks ---- */

static pthread_mutex_t g_log_mu = PTHREAD_MUTEX_INITIALIZER;
static char g_log[64][640];
static int g_nlog, g_warns;

static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                   const char *fmt, ...)
{
    va_list ap;
    pthread_mutex_lock(&g_log_mu);
    va_start(ap, fmt);
    vsnprintf(g_log[g_nlog % 64], sizeof(g_log[0]), fmt, ap);
    va_end(ap);
    g_nlog++;
    g_warns += level == NCCL_LOG_WARN;
    pthread_mutex_unlock(&g_log_mu);
}

/* The last line that contains needle, copied into out; 0 when there is none. */
static int log_find(const char *needle, char *out, size_t len)
{
    int found = 0;
    pthread_mutex_lock(&g_log_mu);
    for (int i = g_nlog > 64 ? g_nlog - 64 : 0; i < g_nlog; i++)
        if (strstr(g_log[i % 64], needle)) {
            snprintf(out, len, "%s", g_log[i % 64]);
            found = 1;
        }
    pthread_mutex_unlock(&g_log_mu);
    return found;
}

static int log_warns(void)
{
    pthread_mutex_lock(&g_log_mu);
    int w = g_warns;
    pthread_mutex_unlock(&g_log_mu);
    return w;
}

/* ---- the cost table as NCCL fills it ---- */

/* NCCL's time for one entry: latency + bytes over bandwidth (GB/s), microseconds. */
static float nccl_us(double lat_us, double gbps, size_t bytes)
{
    return (float)(lat_us + (double)bytes / (1e3 * gbps));
}

/* NCCL's default constants for one rank per node on 12.5 GB/s NICs (docs/tuner.md has NCCL's
 * formulas): ring and tree in all three protocols, CollNet in SIMPLE only when `collnet`,
 * LL128 of the ring off as NCCL has it by default, NVLS and PAT not available. */
static void nccl_table(float t[NA][NP], int nodes, size_t bytes, int collnet)
{
    for (int a = 0; a < NA; a++)
        for (int p = 0; p < NP; p++)
            t[a][p] = -1.0f;
    double steps = 2.0 * (nodes - 1), ring_bw = 12.5 * nodes / steps;
    t[NCCL_ALGO_RING][NCCL_PROTO_LL] = nccl_us(6.6 + steps * 5.0, ring_bw * 0.5, bytes);
    t[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] = nccl_us(1.4 * (8.4 + steps * 14.0), ring_bw, bytes);
    double depth = 2.0 * (31 - __builtin_clz((unsigned)nodes));
    t[NCCL_ALGO_TREE][NCCL_PROTO_LL] = nccl_us(6.8 + depth * 5.0, 12.5 * 0.46 / 3.8, bytes);
    t[NCCL_ALGO_TREE][NCCL_PROTO_LL128] = nccl_us(14.0 + depth * 8.5, 12.5 * 0.43, bytes);
    t[NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE] = nccl_us(8.4 + depth * 14.0, 12.5 * 0.46, bytes);
    if (!collnet)
        return;
    t[NCCL_ALGO_COLLNET_DIRECT][NCCL_PROTO_SIMPLE] = nccl_us(14.0, 24.0 * 0.5, bytes);
    t[NCCL_ALGO_COLLNET_CHAIN][NCCL_PROTO_SIMPLE] = nccl_us(14.0, 24.0 * 0.5, bytes);
}

static int is_collnet(int a)
{
    return a == NCCL_ALGO_COLLNET_DIRECT || a == NCCL_ALGO_COLLNET_CHAIN;
}

/* What NCCL may see after the tuner: every -1 still -1, every non-CollNet entry unchanged,
 * every CollNet entry NCCL priced at least NCCL's own price (jaccl adds its network to NCCL's
 * staging). Returns the number of CollNet entries that changed. */
static int check_table(const float before[NA][NP], const float after[NA][NP])
{
    int changed = 0;
    for (int a = 0; a < NA; a++)
        for (int p = 0; p < NP; p++) {
            if (before[a][p] < 0 || !is_collnet(a)) {
                if (memcmp(&before[a][p], &after[a][p], sizeof(float)) != 0)
                    fail_msg("entry [%d][%d] was %g, tuner made it %g", a, p, before[a][p],
                             after[a][p]);
                continue;
            }
            if (!(after[a][p] >= before[a][p]) || !isfinite(after[a][p]))
                fail_msg("CollNet entry [%d][%d]: NCCL %g, tuner %g", a, p, before[a][p],
                         after[a][p]);
            changed += after[a][p] != before[a][p];
        }
    return changed;
}

/* One getCollInfo as NCCL makes it; returns how many CollNet entries it rewrote. */
static int coll_info(const ncclTuner_v5_t *t, void *ctx, ncclFunc_t f, int nodes, size_t bytes,
                     int collnet, float out[NA][NP])
{
    float before[NA][NP];
    nccl_table(before, nodes, bytes, collnet);
    memcpy(out, before, sizeof(before));
    int nch = 0;
    assert_int_equal(t->getCollInfo(ctx, f, bytes, 1, (float **)out, NA, NP, 0, &nch), ncclSuccess);
    assert_int_equal(nch, 0);
    return check_table(before, out);
}

static void *init_ctx(const ncclTuner_v5_t *t, int nodes, int per_node)
{
    ncclTunerConstants_v5_t k;
    memset(&k, 0, sizeof(k));
    k.baseLatencies[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] = 8.4;
    k.hwLatencies[NCCL_HW_NET][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] = 14.0;
    k.hwLatencies[NCCL_HW_NET][NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE] = 14.0;
    k.hwLatencies[NCCL_HW_NVLINK][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] = 3.4;
    ncclNvlDomainInfo_v5_t nvl = {nodes, per_node, per_node};
    void *ctx = NULL;
    assert_int_equal(t->init(&ctx, 0x5eed0000u + (unsigned)nodes, (size_t)(nodes * per_node),
                             (size_t)nodes, logger, &nvl, &k),
                     ncclSuccess);
    return ctx;
}

/* ---- the tests ---- */

static void test_symbols(void **state)
{
    assert_non_null(g_v5);
    assert_non_null(g_v6);
    assert_string_equal(g_v5->name, "jaccl");
    assert_string_equal(g_v6->name, "jaccl");
    assert_null(g_v6->getChunkSize); /* NCCL keeps its own chunk size */
    assert_ptr_equal(g_v5->init, g_v6->init);
    assert_ptr_equal(g_v5->getCollInfo, g_v6->getCollInfo);
    assert_ptr_equal(g_v5->finalize, g_v6->finalize);
    assert_null(dlsym(g_lib, "ncclTunerPlugin_v4")); /* NCCL 2.28 and 2.30 never need it */
}

/* All-reduce, reduce-scatter and all-gather: CollNet entries priced, the rest untouched. */
static void test_collnet_entries(void **state)
{
    void *ctx = init_ctx((const ncclTuner_v5_t *)g_v6, 4, 8);
    assert_non_null(ctx);
    static const ncclFunc_t colls[] = {ncclFuncAllReduce, ncclFuncReduceScatter, ncclFuncAllGather};
    for (size_t c = 0; c < 3; c++)
        for (size_t b = 4096; b <= (1ull << 32); b *= 8) {
            float t[NA][NP];
            assert_int_equal(coll_info((const ncclTuner_v5_t *)g_v6, ctx, colls[c], 4, b, 1, t), 2);
        }
    assert_int_equal(g_v6->finalize(ctx), ncclSuccess);
}

/* CollNet not available (-1) stays -1; broadcast and reduce never run on CollNet. */
static void test_untouched(void **state)
{
    void *ctx = init_ctx(g_v5, 4, 1);
    float t[NA][NP];
    assert_int_equal(coll_info(g_v5, ctx, ncclFuncAllReduce, 4, 1u << 20, 0, t), 0);
    assert_int_equal(coll_info(g_v5, ctx, ncclFuncBroadcast, 4, 1u << 20, 1, t), 0);
    assert_int_equal(coll_info(g_v5, ctx, ncclFuncReduce, 4, 1u << 20, 1, t), 0);
    assert_int_equal(coll_info(g_v5, ctx, ncclFuncAllReduce, 4, 0, 1, t), 0);
    assert_int_equal(g_v5->finalize(ctx), ncclSuccess);
}

/* The same communicator through either symbol prices the same. */
static void test_v5_equals_v6(void **state)
{
    void *c5 = init_ctx(g_v5, 3, 2), *c6 = init_ctx((const ncclTuner_v5_t *)g_v6, 3, 2);
    for (size_t b = 65536; b <= (256u << 20); b *= 4) {
        float t5[NA][NP], t6[NA][NP];
        coll_info(g_v5, c5, ncclFuncAllReduce, 3, b, 1, t5);
        coll_info((const ncclTuner_v5_t *)g_v6, c6, ncclFuncAllReduce, 3, b, 1, t6);
        assert_memory_equal(t5, t6, sizeof(t5));
    }
    assert_int_equal(g_v5->finalize(c5), ncclSuccess);
    assert_int_equal(g_v6->finalize(c6), ncclSuccess);
}

static float collnet_cost(void *ctx, int nodes, size_t bytes)
{
    float t[NA][NP];
    coll_info(g_v5, ctx, ncclFuncAllReduce, nodes, bytes, 1, t);
    return t[NCCL_ALGO_COLLNET_CHAIN][NCCL_PROTO_SIMPLE];
}

/* jaccl's cost grows with the size and, for large vectors, with the node count (its ring
 * moves 2(N-1)/N bytes per byte over every link), unlike NCCL's own CollNet price. */
static void test_cost_shape(void **state)
{
    void *two = init_ctx(g_v5, 2, 1), *eight = init_ctx(g_v5, 8, 1);
    float last = 0;
    for (size_t b = 4096; b <= (1u << 30); b *= 2) {
        float c = collnet_cost(two, 2, b);
        assert_true(c > last);
        last = c;
    }
    assert_true(collnet_cost(eight, 8, 1u << 30) > 1.2f * collnet_cost(two, 2, 1u << 30));
    assert_int_equal(g_v5->finalize(two), ncclSuccess);
    assert_int_equal(g_v5->finalize(eight), ncclSuccess);
}

/* The INFO line with the crossover sizes, once per communicator. */
static void test_info_line(void **state)
{
    void *ctx = init_ctx(g_v5, 5, 4);
    char line[640];
    assert_true(log_find("communicator 0x5eed0005, 20 ranks on 5 nodes", line, sizeof(line)));
    assert_non_null(strstr(line, "jaccl's CollNet chosen for all-reduce "));
    assert_non_null(strstr(line, "model: link "));
    assert_int_equal(g_v5->finalize(ctx), ncclSuccess);
}

/* One node: no CollNet, no context, and a NULL context is a table left alone. */
static void test_one_node(void **state)
{
    void *ctx = init_ctx(g_v5, 1, 8);
    assert_null(ctx);
    float t[NA][NP];
    assert_int_equal(coll_info(g_v5, NULL, ncclFuncAllReduce, 2, 1u << 20, 1, t), 0);
    assert_int_equal(g_v5->finalize(NULL), ncclSuccess);
}

/* A pointer that is not a live context: a WARN, the table untouched, still no error (an
 * error would fail the user's collective, or leak NCCL's library reference at finalize). */
static void test_stale_context(void **state)
{
    void *ctx = init_ctx(g_v5, 2, 1);
    assert_int_equal(g_v5->finalize(ctx), ncclSuccess);
    int w = log_warns();
    float t[NA][NP];
    assert_int_equal(coll_info(g_v5, ctx, ncclFuncAllReduce, 2, 1u << 20, 1, t), 0);
    assert_int_equal(g_v5->finalize(ctx), ncclSuccess);
    assert_int_equal(log_warns(), w + 2); /* one for each call */
}

/* No net plugin initialised (as in this process): the tuner reads the devices by opening the
 * fabric itself, and holds nothing once it has read them: no thread, and no init context (the
 * net table's devices() counts devices only while one is held). */
static void test_nothing_held(void **state)
{
    const ncclNet_v11_t *net = dlsym(g_lib, "ncclNetPlugin_v11");
    int before = mp_thread_count(), ndev = -1;
    void *ctx = init_ctx(g_v5, 3, 1);
    assert_non_null(ctx);
    assert_int_equal(mp_threads_down_to(before), before);
    assert_int_equal(net->devices(&ndev), ncclSuccess);
    assert_int_equal(ndev, 0);
    assert_int_equal(g_v5->finalize(ctx), ncclSuccess);
    assert_int_equal(mp_threads_down_to(before), before);
}

/* ---- many communicators at once ---- */

struct worker {
    int id, bad;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    const ncclTuner_v5_t *t = w->id % 2 ? g_v5 : (const ncclTuner_v5_t *)g_v6;
    for (int round = 0; round < 3; round++) {
        int nodes = 2 + (w->id + round) % 4;
        void *ctx = init_ctx(t, nodes, 2);
        for (size_t b = 4096; b <= (64u << 20); b *= 2) {
            float before[NA][NP], after[NA][NP];
            nccl_table(before, nodes, b, 1);
            memcpy(after, before, sizeof(before));
            int nch = 0;
            ncclFunc_t f = (ncclFunc_t)(b % 5);
            w->bad |= t->getCollInfo(ctx, f, b, 1 + (int)(b % 3), (float **)after, NA, NP, 0,
                                     &nch) != ncclSuccess;
            w->bad |= nch != 0 || !(after[NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE] ==
                                    before[NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE]);
        }
        w->bad |= t->finalize(ctx) != ncclSuccess;
    }
    return NULL;
}

static void test_concurrent(void **state)
{
    pthread_t th[THREADS];
    struct worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct worker){.id = i};
        assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(w[i].bad, 0);
    }
}

/* ---- the knobs, through the core's entry points (the environment read again each time) ---- */

static double core_cost(int nodes, size_t bytes)
{
    struct jaccl_tuner_comm c = {.comm_id = 1, .nranks = nodes, .nnodes = nodes};
    void *ctx = NULL;
    jaccl_param_reset();
    assert_int_equal(jaccl_tuner_init(&ctx, &c, NULL), ncclSuccess);
    if (!ctx)
        return -1;
    double direct = -1, chain = 10;
    jaccl_tuner_collnet(ctx, JACCL_TUNE_ALLREDUCE, bytes, 1, &direct, &chain);
    assert_true(direct == -1); /* not priced by NCCL: left alone */
    assert_int_equal(jaccl_tuner_finalize(ctx), ncclSuccess);
    return chain;
}

static void test_knobs(void **state)
{
    setenv("NCCL_JACCL_TUNER_LAT_NS", "5000", 1);
    setenv("NCCL_JACCL_TUNER_LINK_MBPS", "100000", 1);
    double fast = core_cost(4, 64u << 20);
    setenv("NCCL_JACCL_TUNER_LINK_MBPS", "10000", 1);
    double slow = core_cost(4, 64u << 20);
    /* Any all-reduce moves at least 2(n-1)/n of the vector over each rank's link; only that
     * part depends on the link, and it takes ten times as long on the slower one. */
    double moved = 2.0 * 3 / 4 * (64u << 20);
    assert_true(slow - fast >= 0.999 * moved * (1 / 1.25e9 - 1 / 12.5e9) * 1e6);
    setenv("NCCL_JACCL_TUNER_LAT_NS", "0", 1);
    double instant = core_cost(4, 4096);
    setenv("NCCL_JACCL_TUNER_LAT_NS", "500000", 1);
    double small = core_cost(4, 4096); /* the mesh: one step and the credit trip, 500 us each */
    assert_true(fabs(small - instant - 1000) < 1);
    setenv("NCCL_JACCL_TUNER", "0", 1);
    assert_true(core_cost(4, 64u << 20) < 0); /* off: no context, no opinion */
    unsetenv("NCCL_JACCL_TUNER");
    unsetenv("NCCL_JACCL_TUNER_LAT_NS");
    unsetenv("NCCL_JACCL_TUNER_LINK_MBPS");
    jaccl_param_reset();
}

/* The INFO line follows the model: a 100 us hop on 50 GB/s links loses to NCCL's ring at
 * every size (two hops cost more than NCCL's whole small ring; past that the kernels are slower
 * than the link); jaccl's ring on a slow link with 8 nodes of 8 ranks wins at every size
 * (NCCL's ring moves 2(R-1)/R bytes per byte over the same link, jaccl's 2(N-1)/N, and its
 * kernels keep up). */
static void test_info_ranges(void **state)
{
    char line[640];
    struct jaccl_tuner_comm c = {.comm_id = 0xabc,
                                 .nranks = 4,
                                 .nnodes = 4,
                                 .have_consts = 1,
                                 .ring_base_us = 8.4,
                                 .ring_net_us = 14,
                                 .tree_net_us = 14,
                                 .ring_nvl_us = 3.4};
    void *ctx = NULL;
    setenv("NCCL_JACCL_TUNER_LAT_NS", "100000", 1);
    setenv("NCCL_JACCL_TUNER_LINK_MBPS", "400000", 1);
    jaccl_param_reset();
    assert_int_equal(jaccl_tuner_init(&ctx, &c, logger), ncclSuccess);
    assert_true(log_find("communicator 0xabc, 4 ranks on 4 nodes", line, sizeof(line)));
    assert_non_null(strstr(line, "chosen for all-reduce at no size, NCCL's ring everywhere"));
    assert_int_equal(jaccl_tuner_finalize(ctx), ncclSuccess);
    setenv("NCCL_JACCL_TUNER_LAT_NS", "1000", 1);
    setenv("NCCL_JACCL_TUNER_LINK_MBPS", "100", 1); /* kernels of 50 MB/s would keep up */
    setenv("NCCL_JACCL_ALGO", "ring", 1);
    jaccl_param_reset();
    c = (struct jaccl_tuner_comm){.comm_id = 0xdef,
                                  .nranks = 64,
                                  .nnodes = 8,
                                  .have_consts = 1,
                                  .ring_base_us = 8.4,
                                  .ring_net_us = 14,
                                  .tree_net_us = 14,
                                  .ring_nvl_us = 3.4};
    assert_int_equal(jaccl_tuner_init(&ctx, &c, logger), ncclSuccess);
    assert_true(log_find("communicator 0xdef, 64 ranks on 8 nodes", line, sizeof(line)));
    assert_non_null(strstr(line, "chosen for all-reduce from 4 KiB to 16 GiB (estimated"));
    assert_int_equal(jaccl_tuner_finalize(ctx), ncclSuccess);
    unsetenv("NCCL_JACCL_TUNER_LAT_NS");
    unsetenv("NCCL_JACCL_TUNER_LINK_MBPS");
    unsetenv("NCCL_JACCL_ALGO");
    jaccl_param_reset();
}

static int setup(void **state)
{
    g_lib = dlopen("libnccl-net-jaccl.so", RTLD_NOW | RTLD_LOCAL);
    if (!g_lib) {
        fprintf(stderr, "dlopen: %s (is LD_LIBRARY_PATH the build folder?)\n", dlerror());
        return -1;
    }
    g_v5 = dlsym(g_lib, "ncclTunerPlugin_v5");
    g_v6 = dlsym(g_lib, "ncclTunerPlugin_v6");
    return 0;
}

static int teardown(void **state)
{
    return g_lib ? dlclose(g_lib) : 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_symbols),     cmocka_unit_test(test_collnet_entries),
            cmocka_unit_test(test_untouched),   cmocka_unit_test(test_v5_equals_v6),
            cmocka_unit_test(test_cost_shape),  cmocka_unit_test(test_info_line),
            cmocka_unit_test(test_one_node),    cmocka_unit_test(test_stale_context),
            cmocka_unit_test(test_concurrent),  cmocka_unit_test(test_knobs),
            cmocka_unit_test(test_info_ranges), cmocka_unit_test(test_nothing_held),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
