/* SPDX-License-Identifier: BSD-3-Clause */
/* The narrow formats' reference: see kern_ref.h. */
#include "kern_ref.h"

#include <math.h>

const struct ref_fmt_desc ref_fmts[RF_NUM] = {
        [RF_F16] = {10, 15, 1, 0x8000, 0x7bff, 0x7c00, 0x7fff},
        [RF_BF16] = {7, 127, 1, 0x8000, 0x7f7f, 0x7f80, 0x7fff},
        [RF_E4M3] = {3, 7, 0, 0x80, 0x7e, 0, 0x7f},
        [RF_E5M2] = {2, 15, 1, 0x80, 0x7b, 0x7c, 0x7f},
};

double ref_decode(enum ref_fmt f, uint32_t c)
{
    const struct ref_fmt_desc *d = &ref_fmts[f];
    uint32_t mag = c & (d->sign - 1);
    int e = (int)(mag >> d->mbits);
    double m = (double)(mag & ((1u << d->mbits) - 1));
    double v;

    if (f == RF_E4M3 && mag == 0x7f)
        return NAN;
    if (d->has_inf && mag >= d->inf)
        v = mag == d->inf ? INFINITY : NAN;
    else if (e == 0)
        v = ldexp(m, 1 - d->bias - d->mbits);
    else
        v = ldexp(m + ldexp(1, d->mbits), e - d->bias - d->mbits);
    return (c & d->sign) ? -v : v;
}

/* ref_decode of every non-negative code, built on first use: encoding searches it. */
static double ref_value(enum ref_fmt f, uint32_t c)
{
    static double tab[RF_NUM][0x8000];
    static int built[RF_NUM];

    if (!built[f]) {
        for (uint32_t i = 0; i < ref_fmts[f].sign; i++)
            tab[f][i] = ref_decode(f, i);
        built[f] = 1;
    }
    return tab[f][c];
}

/* Largest non-negative code whose value is <= ax (codes are monotonic in value). */
static uint32_t ref_floor_code(enum ref_fmt f, double ax)
{
    uint32_t lo = 0, hi = ref_fmts[f].maxfin;

    while (lo < hi) {
        uint32_t mid = (lo + hi + 1) / 2;
        if (ref_value(f, mid) <= ax)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Round to nearest even; overflow gives inf (fp16, bf16) or saturates (fp8, as CUDA's
 * __NV_SATFINITE does, inf included). NaN gives the canonical code. */
uint32_t ref_cvt(enum ref_fmt f, double x)
{
    const struct ref_fmt_desc *d = &ref_fmts[f];
    uint32_t sign = signbit(x) ? d->sign : 0, k;
    double ax = fabs(x), vmax = ref_value(f, d->maxfin);
    double ulp = vmax - ref_value(f, d->maxfin - 1);
    int fp8 = f == RF_E4M3 || f == RF_E5M2;

    if (isnan(x))
        return d->nan;
    if (fp8 && ax >= vmax)
        return sign | d->maxfin;
    if (!fp8 && ax >= vmax + ulp / 2)
        return sign | d->inf;
    k = ref_floor_code(f, ax);
    if (k < d->maxfin) {
        double lo = ref_value(f, k), hi = ref_value(f, k + 1), mid = lo + (hi - lo) / 2;
        if (ax > mid || (ax == mid && (k & 1)))
            k++;
    }
    return sign | k;
}
