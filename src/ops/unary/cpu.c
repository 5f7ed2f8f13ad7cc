/*
 * ops/unary/cpu.c - silu and sigmoid on the CPU.
 *
 * Formulas that neither overflow nor lose the tiny results of large
 * negative inputs:
 *   sigmoid(x) = 1 / (1 + e^-x)            for x >= 0
 *              = e^x / (1 + e^x)           for x < 0
 *   silu(x)    = x / (1 + e^-x)            for x >= 0
 *              = x e^x / (1 + e^x)         for x < 0, where x e^x is formed
 *                as (x h) h with h = e^(x/2) once e^x would be subnormal,
 *                so the product underflows with one rounding.
 * silu(-inf) is -0 (the limit), silu(+inf) = +inf, NaN stays NaN.
 */
#include "unary.h"
#include "cpu/cpu.h"

#include <math.h>

INFINIOP_ALWAYS_INLINE float sigmoid_f32(float x) {
    if (x >= 0.0f) return 1.0f / (1.0f + expf(-x));
    float e = expf(x);
    return e / (1.0f + e);
}

INFINIOP_ALWAYS_INLINE float silu_f32(float x) {
    if (x >= 0.0f) return x / (1.0f + expf(-x));
    if (x > -80.0f) {
        float e = expf(x);
        return x * e / (1.0f + e);
    }
    if (x == -INFINITY) return -0.0f;
    float h = expf(0.5f * x);
    return (x * h) * h; /* 1 + e^x == 1 here */
}

INFINIOP_ALWAYS_INLINE double sigmoid_f64(double x) {
    if (x >= 0.0) return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}

INFINIOP_ALWAYS_INLINE double silu_f64(double x) {
    if (x >= 0.0) return x / (1.0 + exp(-x));
    if (x > -700.0) {
        double e = exp(x);
        return x * e / (1.0 + e);
    }
    if (x == -INFINITY) return -0.0;
    double h = exp(0.5 * x);
    return (x * h) * h;
}

/* One run of n elements with fixed strides. */
INFINIOP_ALWAYS_INLINE void run_f32(infiniopUnaryKind kind, infiniDtype_t t, void *out, ptrdiff_t os,
                                    const void *in, ptrdiff_t is, size_t n) {
    if (kind == INFINIOP_UNARY_SILU) {
        for (size_t k = 0; k < n; ++k)
            infiniop_store_f32(out, (ptrdiff_t)k * os, t, silu_f32(infiniop_load_f32(in, (ptrdiff_t)k * is, t)));
    } else {
        for (size_t k = 0; k < n; ++k)
            infiniop_store_f32(out, (ptrdiff_t)k * os, t, sigmoid_f32(infiniop_load_f32(in, (ptrdiff_t)k * is, t)));
    }
}

static void run_f64(infiniopUnaryKind kind, double *out, ptrdiff_t os, const double *in, ptrdiff_t is, size_t n) {
    if (kind == INFINIOP_UNARY_SILU) {
        for (size_t k = 0; k < n; ++k) out[(ptrdiff_t)k * os] = silu_f64(in[(ptrdiff_t)k * is]);
    } else {
        for (size_t k = 0; k < n; ++k) out[(ptrdiff_t)k * os] = sigmoid_f64(in[(ptrdiff_t)k * is]);
    }
}

/* Elements [i0, i1) of the layout: walk the innermost dimension in runs,
 * with one index decomposition per run. */
static void run_range(const infiniopUnaryInfo *info, char *out, const char *in, size_t i0, size_t i1) {
    const infiniopEltLayout *L = &info->layout;
    size_t es = infiniop_dtype_size(info->dtype);
    size_t inner = L->ndim ? L->shape[L->ndim - 1] : 1;
    ptrdiff_t os = L->ndim ? L->out_stride[L->ndim - 1] : 0, is = L->ndim ? L->in_stride[L->ndim - 1] : 0;
    if (L->contiguous) os = is = 1;
    for (size_t i = i0; i < i1;) {
        ptrdiff_t oo, io;
        size_t n;
        if (L->contiguous) {
            oo = io = (ptrdiff_t)i;
            n = i1 - i;
        } else {
            infiniop_elt_offsets(L, i, &oo, &io);
            n = inner - i % inner;
            if (n > i1 - i) n = i1 - i;
        }
        void *o = out + oo * (ptrdiff_t)es;
        const void *x = in + io * (ptrdiff_t)es;
        switch (info->dtype) {
        case INFINI_DTYPE_F16: run_f32(info->kind, INFINI_DTYPE_F16, o, os, x, is, n); break;
        case INFINI_DTYPE_BF16: run_f32(info->kind, INFINI_DTYPE_BF16, o, os, x, is, n); break;
        case INFINI_DTYPE_F32: run_f32(info->kind, INFINI_DTYPE_F32, o, os, x, is, n); break;
        default: run_f64(info->kind, o, os, x, is, n); break;
        }
        i += n;
    }
}

infiniStatus_t infiniop_unary_cpu(const infiniopUnaryInfo *info, void *out, const void *in) {
    size_t n = info->layout.n;
    size_t bytes = 2 * n * infiniop_dtype_size(info->dtype);
    const size_t chunk = 16384; /* elements per task: a few L1-sized blocks */
    size_t nchunks = (n + chunk - 1) / chunk;
    if (bytes < INFINIOP_CPU_PARALLEL_BYTES || nchunks < 2) {
        run_range(info, out, in, 0, n);
        return INFINI_STATUS_SUCCESS;
    }
#pragma omp parallel for schedule(static)
    for (size_t c = 0; c < nchunks; ++c) {
        size_t i0 = c * chunk, i1 = i0 + chunk < n ? i0 + chunk : n;
        run_range(info, out, in, i0, i1);
    }
    return INFINI_STATUS_SUCCESS;
}
