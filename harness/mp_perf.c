/* SPDX-License-Identifier: BSD-3-Clause */
/* Benchmark options, sizes and the foreign-load meter. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "mp_perf.h"
#include "mp_util.h"

#define BYTE_BUDGET (512ull << 20) /* auto iterations: about this much data per size */

void mp_perf_usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s MODE [options]\n"
            "  -b BYTES   smallest message (default 8; K, M, G suffixes)\n"
            "  -e BYTES   largest message (default 64M)\n"
            "  -f FACTOR  size multiplier between steps (default 2)\n"
            "  -n ITERS   timed iterations per size (default: scaled by size)\n"
            "  -w ITERS   warm-up iterations per size (default 5)\n"
            "  -R N       timed passes per size, the median is reported (default 3)\n"
            "  -W N       requests in flight (default 8, like NCCL_STEPS)\n"
            "  -r N       p2p ping-pong: receives each side keeps posted (default 2; NCCL's\n"
            "             proxy posts up to 8 ahead, 1 puts the clear-to-send on the path)\n"
            "  -V N       table version, ncclNetPlugin_vN (default 11)\n"
            "  -t SEC     seconds of the raw TCP socket pump (default 2, 0 = skip)\n",
            prog);
}

int mp_perf_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 0);
    switch (*end) {
    case 'G':
    case 'g':
        v <<= 10; /* fall through */
    case 'M':
    case 'm':
        v <<= 10; /* fall through */
    case 'K':
    case 'k':
        v <<= 10;
        end++;
        break;
    default:
        break;
    }
    if (*end || end == s)
        return -1;
    *out = (size_t)v;
    return 0;
}

int mp_perf_parse(int argc, char **argv, struct mp_perf_opts *o)
{
    *o = (struct mp_perf_opts){.min_bytes = 8,
                               .max_bytes = 64u << 20,
                               .factor = 2,
                               .warmup = 5,
                               .repeats = 3,
                               .window = 8,
                               .ahead = 2,
                               .version = 11,
                               .pump_s = 2};
    int c, bad = 0;
    size_t v;
    while ((c = getopt(argc, argv, "b:e:f:n:w:R:W:r:V:t:h")) != -1) {
        switch (c) {
        case 'b':
            bad |= mp_perf_size(optarg, &o->min_bytes);
            break;
        case 'e':
            bad |= mp_perf_size(optarg, &o->max_bytes);
            break;
        case 'f':
            bad |= mp_perf_size(optarg, &v) || v < 2;
            o->factor = v;
            break;
        case 'n':
            o->iters = atoi(optarg);
            break;
        case 'w':
            o->warmup = atoi(optarg);
            break;
        case 'R':
            o->repeats = atoi(optarg);
            bad |= o->repeats < 1 || o->repeats > 99;
            break;
        case 'W':
            o->window = atoi(optarg);
            bad |= o->window < 1 || o->window > 64;
            break;
        case 'r':
            o->ahead = atoi(optarg);
            bad |= o->ahead < 1 || o->ahead > 64;
            break;
        case 'V':
            o->version = atoi(optarg);
            bad |= o->version < 8 || o->version > 12;
            break;
        case 't':
            o->pump_s = atof(optarg);
            break;
        default:
            bad = 1;
        }
    }
    if (bad || o->min_bytes > o->max_bytes || optind != argc) {
        mp_perf_usage(argv[0]);
        return -1;
    }
    return 0;
}

int mp_perf_iters(const struct mp_perf_opts *o, size_t size)
{
    if (o->iters > 0)
        return o->iters;
    unsigned long long n = BYTE_BUDGET / (size ? size : 1);
    return n < 5 ? 5 : n > 1000 ? 1000 : (int)n;
}

const char *mp_fmt_bytes(size_t n, char *buf, size_t len)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB"};
    int u = 0;
    while (u < 3 && n >= 1024 && n % 1024 == 0) {
        n /= 1024;
        u++;
    }
    snprintf(buf, len, "%zu %s", n, unit[u]);
    return buf;
}

/* Busy jiffies of the whole machine, from the first line of /proc/stat. */
static unsigned long long machine_busy(void)
{
    unsigned long long user, nice, sys, idle, iowait, irq, softirq, steal;
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return 0;
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &sys, &idle,
                   &iowait, &irq, &softirq, &steal);
    fclose(f);
    return n == 8 ? user + nice + sys + irq + softirq : 0;
}

/* Our CPU plus that of our reaped children, in seconds. */
static double own_cpu(void)
{
    struct rusage s, c;
    getrusage(RUSAGE_SELF, &s);
    getrusage(RUSAGE_CHILDREN, &c);
    return (double)(s.ru_utime.tv_sec + s.ru_stime.tv_sec + c.ru_utime.tv_sec + c.ru_stime.tv_sec) +
           (double)(s.ru_utime.tv_usec + s.ru_stime.tv_usec + c.ru_utime.tv_usec +
                    c.ru_stime.tv_usec) *
                   1e-6;
}

void mp_load_start(struct mp_load *l)
{
    l->t0 = mp_now();
    l->busy0 = machine_busy();
    l->self0 = own_cpu();
}

double mp_load_foreign(const struct mp_load *l)
{
    double wall = mp_now() - l->t0;
    double busy = (double)(machine_busy() - l->busy0) / (double)sysconf(_SC_CLK_TCK);
    double foreign = (busy - (own_cpu() - l->self0)) / (wall > 0 ? wall : 1);
    return foreign < 0 ? 0 : foreign;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double mp_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
    return v[n / 2];
}
