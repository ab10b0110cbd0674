/* SPDX-License-Identifier: BSD-3-Clause */
/* The reduction kernels' speed on this host's CPU, for the tuner's model: measured once per
 * process, the first time the model needs it (a few milliseconds), never assumed.
 *
 * Two rates per type, because a reduction's speed depends on where its operands live: "hot",
 * operands that fit the per-core cache (what reducing one received frame into a small
 * operation costs), and "cold", operands several times that size (a large operation, whose
 * input and output stream from memory). Each is the median of a few timed calls of the
 * out-of-place kernel dst = a + b, the one the ring and halving-doubling run on every frame, on
 * three buffers of twice the cache that are freed again (docs/tuner.md has what it costs). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algo/cost.h"
#include "util/clock.h"

#define HOT_BYTES     (256u << 10)
#define COLD_MIN      (4u << 20)
#define COLD_MAX      (16u << 20)
#define CACHE_DEFAULT (1u << 20) /* when the system does not say */
#define SAMPLES_MAX   5

static struct algo_kern_rates g_rates;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

int algo_kern_rated(enum jaccl_dtype t)
{
    return t == JD_F32 || t == JD_F16 || t == JD_BF16;
}

static size_t cache_size(void)
{
    long c = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return c > 0 ? (size_t)c : CACHE_DEFAULT;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Output bytes per second: the median of `samples` timings of `reps` calls each, after one
 * untimed call that brings the operands where the run keeps them. */
static double rate(jaccl_reduce_fn fn, char *const buf[3], size_t bytes, size_t esz, int samples,
                   int reps)
{
    double s[SAMPLES_MAX];
    size_t count = bytes / esz;
    fn(buf[2], buf[0], buf[1], count);
    for (int i = 0; i < samples; i++) {
        uint64_t t0 = jaccl_mono_ns();
        for (int r = 0; r < reps; r++)
            fn(buf[2], buf[0], buf[1], count);
        s[i] = (double)(jaccl_mono_ns() - t0) / reps;
    }
    qsort(s, (size_t)samples, sizeof(s[0]), cmp_double);
    return s[samples / 2] > 0 ? (double)bytes * 1e9 / s[samples / 2] : 0;
}

/* Twice the cache, so that the three operands (6 x the cache) cannot stay in it. */
static size_t cold_size(size_t cache)
{
    size_t c = 2 * cache;
    return c < COLD_MIN ? COLD_MIN : c > COLD_MAX ? COLD_MAX : c;
}

/* Zeros: every type sums them at full speed (no denormals, no NaN), and writing them faults
 * the pages in before anything is timed. */
static void measure(void)
{
    struct algo_kern_rates *r = &g_rates;
    r->cache_bytes = cache_size();
    r->hot_bytes = HOT_BYTES;
    r->cold_bytes = cold_size(r->cache_bytes);
    char *buf[3] = {malloc(r->cold_bytes), malloc(r->cold_bytes), malloc(r->cold_bytes)};
    for (int i = 0; i < 3 && buf[0] && buf[1] && buf[2]; i++)
        memset(buf[i], 0, r->cold_bytes);
    for (int t = 0; t < JD_NUM && buf[0] && buf[1] && buf[2]; t++) {
        jaccl_reduce_fn fn = jaccl_reduce_fn_get((enum jaccl_dtype)t, JR_SUM);
        if (!algo_kern_rated((enum jaccl_dtype)t) || !fn)
            continue;
        size_t esz = jaccl_dtype_size((enum jaccl_dtype)t);
        r->hot_Bps[t] = rate(fn, buf, r->hot_bytes, esz, SAMPLES_MAX, 4);
        r->cold_Bps[t] = rate(fn, buf, r->cold_bytes, esz, 3, 1);
    }
    free(buf[0]), free(buf[1]), free(buf[2]);
}

const struct algo_kern_rates *algo_kern_rates(void)
{
    pthread_once(&g_once, measure);
    return &g_rates;
}
