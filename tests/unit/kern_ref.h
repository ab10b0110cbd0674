/* SPDX-License-Identifier: BSD-3-Clause */
/* The slow reference for the narrow floating formats (fp16, bf16, fp8 e4m3/e5m2), shared by
 * the conversion and the reduction kernel tests: decoding with ldexp, encoding by searching
 * the sorted table of a format's values, no bit tricks. */
#ifndef JACCL_TEST_KERN_REF_H
#define JACCL_TEST_KERN_REF_H

#include <stdint.h>

enum ref_fmt { RF_F16, RF_BF16, RF_E4M3, RF_E5M2, RF_NUM };

struct ref_fmt_desc {
    int mbits, bias, has_inf;
    uint32_t sign, maxfin, inf, nan; /* codes */
};

extern const struct ref_fmt_desc ref_fmts[RF_NUM];

/* The value of code c (NaN and inf included). */
double ref_decode(enum ref_fmt f, uint32_t c);
/* Round to nearest even; overflow gives inf (fp16, bf16) or saturates (fp8, as CUDA's
 * __NV_SATFINITE does, inf included). NaN gives the canonical code. */
uint32_t ref_cvt(enum ref_fmt f, double x);

#endif
