/* SPDX-License-Identifier: BSD-3-Clause */
/* kern-bench: speed of the reduction kernels beside memcpy of the same buffers.
 *
 *   kern-bench [-s] [-a] [DTYPE OP]...     (default: float32 sum)
 *     -s  force the portable build (no AVX2)
 *     -a  every dtype and op
 *
 * For 64 MiB (DRAM) and 1 MiB (cache) buffers it times memcpy(c, b), a = a OP b
 * (in place) and c = a OP b (out of place) in interleaved rounds, so all three see
 * the same machine state, and prints medians. "payload" is bytes of b per second;
 * memcpy moves 2 bytes per payload byte and the reductions 3, so the ratio of
 * touched bytes is the fair one when memory is the limit. GB = 1e9 bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/kern_reduce.h"
#include "mp_perf.h"
#include "mp_util.h"

#define MAX_BYTES (64u << 20)

enum { K_COPY, K_INPLACE, K_OOP, K_NUM };

struct bufs {
    unsigned char *a, *b, *c;
};

/* 1 in every type, so repeated sums stay ordinary numbers (no denormals, no NaN). */
static void fill_ones(enum jaccl_dtype t, unsigned char *p, size_t bytes)
{
    static const uint64_t one[JD_NUM] = {
            1, 1, 1, 1, 1, 1, 0x3c00, 0x3f800000, 0x3ff0000000000000ull, 0x3f80, 0x38, 0x3c};
    size_t sz = jaccl_dtype_size(t);
    for (size_t off = 0; off + sz <= bytes; off += sz)
        memcpy(p + off, &one[t], sz);
}

static void run_kernel(int k, jaccl_reduce_fn fn, struct bufs *m, size_t bytes, size_t count)
{
    if (k == K_COPY)
        memcpy(m->c, m->b, bytes);
    else if (k == K_INPLACE)
        fn(m->a, m->a, m->b, count);
    else
        fn(m->c, m->a, m->b, count);
}

/* Median seconds per call of each kernel over `rounds` rounds of `reps` calls. */
static void time_kernels(jaccl_reduce_fn fn, struct bufs *m, size_t bytes, size_t count,
                         double med[K_NUM])
{
    int rounds = bytes >= (8u << 20) ? 15 : 51;
    int reps = (int)((32u << 20) / bytes) + 1;
    double *t = malloc(sizeof(double) * K_NUM * (size_t)rounds);

    for (int r = -2; r < rounds; r++) { /* two warm-up rounds */
        for (int k = 0; k < K_NUM; k++) {
            double t0 = mp_now();
            for (int i = 0; i < reps; i++)
                run_kernel(k, fn, m, bytes, count);
            if (r >= 0)
                t[k * rounds + r] = (mp_now() - t0) / reps;
        }
    }
    for (int k = 0; k < K_NUM; k++)
        med[k] = mp_median(t + k * rounds, rounds);
    free(t);
}

static void bench(enum jaccl_dtype t, enum jaccl_redop op, struct bufs *m, size_t bytes)
{
    jaccl_reduce_fn fn = jaccl_reduce_fn_get(t, op);
    size_t count = bytes / jaccl_dtype_size(t);
    double med[K_NUM], gbs[K_NUM];

    fill_ones(t, m->a, bytes);
    fill_ones(t, m->b, bytes);
    time_kernels(fn, m, bytes, count, med);
    for (int k = 0; k < K_NUM; k++)
        gbs[k] = (double)bytes / med[k] / 1e9;
    printf("%-8s %-4s %5zu KiB  memcpy %6.2f GB/s | in-place %6.2f GB/s  x%.2f (touched x%.2f)"
           " | out-of-place %6.2f GB/s  x%.2f (touched x%.2f)\n",
           jaccl_dtype_name(t), jaccl_redop_name(op), bytes >> 10, gbs[K_COPY], gbs[K_INPLACE],
           gbs[K_INPLACE] / gbs[K_COPY], 1.5 * gbs[K_INPLACE] / gbs[K_COPY], gbs[K_OOP],
           gbs[K_OOP] / gbs[K_COPY], 1.5 * gbs[K_OOP] / gbs[K_COPY]);
}

static int parse(const char *s, int n, const char *(*name)(int))
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, name(i)) == 0)
            return i;
    return -1;
}

static const char *dtype_name(int t)
{
    return jaccl_dtype_name((enum jaccl_dtype)t);
}

static const char *redop_name(int op)
{
    return jaccl_redop_name((enum jaccl_redop)op);
}

static void bench_sizes(enum jaccl_dtype t, enum jaccl_redop op, struct bufs *m)
{
    bench(t, op, m, MAX_BYTES);
    bench(t, op, m, 1u << 20);
}

int main(int argc, char **argv)
{
    struct bufs m = {aligned_alloc(4096, MAX_BYTES), aligned_alloc(4096, MAX_BYTES),
                     aligned_alloc(4096, MAX_BYTES)};
    int all = 0, pairs = 0;

    if (!m.a || !m.b || !m.c)
        return 1;
    memset(m.c, 0, MAX_BYTES); /* fault the pages in before timing */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-s") == 0)
            jaccl_kern_force_scalar(1);
        all |= strcmp(argv[i], "-a") == 0;
    }
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-')
            continue;
        int t = parse(argv[i], JD_NUM, dtype_name);
        int op = i + 1 < argc ? parse(argv[i + 1], JR_NUM, redop_name) : -1;
        if (t < 0 || op < 0) {
            fprintf(stderr, "usage: %s [-s] [-a] [DTYPE OP]...\n", argv[0]);
            return 2;
        }
        bench_sizes(t, op, &m);
        pairs++, i++;
    }
    for (int t = 0; all && t < JD_NUM; t++)
        for (int op = 0; op < JR_NUM; op++)
            bench_sizes(t, op, &m);
    if (!pairs && !all)
        bench_sizes(JD_F32, JR_SUM, &m);
    free(m.a), free(m.b), free(m.c);
    return 0;
}
