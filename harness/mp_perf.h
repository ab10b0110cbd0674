/* SPDX-License-Identifier: BSD-3-Clause */
/* What benchmark tools share: nccl-tests-like options (-b -e -f -n -w -W), the size sweep,
 * iteration counts, byte formatting, and a meter of the CPU other processes took meanwhile
 * (on a shared 2-core box that decides whether a number means anything). */
#ifndef MP_PERF_H
#define MP_PERF_H

#include <stddef.h>

struct mp_perf_opts {
    size_t min_bytes, max_bytes; /* -b, -e */
    size_t factor;               /* -f: next size = size * factor */
    int iters;                   /* -n: 0 = scaled by size */
    int warmup;                  /* -w */
    int repeats;                 /* -R: timed passes per size; the median is reported */
    int window;                  /* -W: requests in flight */
    int ahead;                   /* -r: ping-pong receives kept posted (jaccl-perf p2p) */
    int version;                 /* -V: ncclNetPlugin_v<version> */
    double pump_s;               /* -t: seconds of raw socket pump */
};

/* Defaults, then argv (after the mode word). 0, or -1 after printing usage to stderr. */
int mp_perf_parse(int argc, char **argv, struct mp_perf_opts *o);
void mp_perf_usage(const char *prog);
/* "4096", "0x1000", "4K", "64M", "1G" (k, m, g too) into *out: 0, or -1 if malformed. */
int mp_perf_size(const char *s, size_t *out);

/* Iterations for one size: -n if given, else as many as keep the size near a fixed byte
 * budget, between 5 and 1000. */
int mp_perf_iters(const struct mp_perf_opts *o, size_t size);

/* Sorts v[0..n) in place and returns its median, v[n / 2]. */
double mp_median(double *v, int n);

/* "64 MiB", "4 KiB", "129 B" into buf. */
const char *mp_fmt_bytes(size_t n, char *buf, size_t len);

/* CPU used by processes outside ours (and our reaped children) between start and stop. */
struct mp_load {
    double t0;
    unsigned long long busy0;
    double self0;
};
void mp_load_start(struct mp_load *l);
/* Cores' worth of foreign CPU during the interval (0 .. ncores). */
double mp_load_foreign(const struct mp_load *l);

#endif
