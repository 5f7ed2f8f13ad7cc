/*
 * ops/layer_norm/cpu.c - layer_norm on the CPU.
 *
 * One task per row (OpenMP over rows), three passes over the row (it is in
 * cache after the first): the mean, the variance as the mean of squared
 * deviations (stable, never E[x^2] - mean^2), then the outputs. Sums are
 * float32 in 16 lanes per 1024-element block, blocks summed in order.
 * Outputs are written only in the last pass, element j after input[j] is
 * read, so output or input_standardization may alias input exactly.
 */
#include "layer_norm.h"
#include "cpu/cpu.h"

#include <math.h>

#define LANES 16
#define BLOCK 1024

/* Sum over the row of (x - shift)^power, power 1 or 2. */
INFINIOP_ALWAYS_INLINE float row_sum(const void *x, ptrdiff_t s, size_t D, infiniDtype_t t, float shift, int power) {
    float total = 0.0f;
    for (size_t j0 = 0; j0 < D; j0 += BLOCK) {
        size_t j1 = j0 + BLOCK < D ? j0 + BLOCK : D;
        float acc[LANES] = {0};
        size_t j = j0;
        for (; j + LANES <= j1; j += LANES)
            for (int l = 0; l < LANES; ++l) {
                float v = infiniop_load_f32(x, (ptrdiff_t)(j + l) * s, t) - shift;
                acc[l] += power == 2 ? v * v : v;
            }
        float sum = 0.0f;
        for (; j < j1; ++j) {
            float v = infiniop_load_f32(x, (ptrdiff_t)j * s, t) - shift;
            sum += power == 2 ? v * v : v;
        }
        for (int l = 0; l < LANES; ++l) sum += acc[l];
        total += sum;
    }
    return total;
}

INFINIOP_ALWAYS_INLINE void row(const infiniopLayerNormInfo *info, infiniDtype_t t, size_t r, char *out, char *stdz,
                                char *std, const char *in, const void *w, const void *b) {
    const infiniopRowLayout *L = &info->rows;
    size_t D = L->ncols;
    ptrdiff_t es = (ptrdiff_t)infiniop_dtype_size(t);
    const void *x = in + infiniop_row_offset(L, LN_IN, r) * es;
    void *o = out + infiniop_row_offset(L, LN_OUT, r) * es;
    void *z = stdz + infiniop_row_offset(L, LN_STDZ, r) * es;
    ptrdiff_t xs = L->col_stride[LN_IN], os = L->col_stride[LN_OUT], zs = L->col_stride[LN_STDZ];

    float mean = row_sum(x, xs, D, t, 0.0f, 1) / (float)D;
    float var = row_sum(x, xs, D, t, mean, 2) / (float)D;
    float sd = sqrtf(var + info->eps);
    infiniop_store_f32(std, infiniop_row_offset(L, LN_STD, r), t, sd);
    for (size_t j = 0; j < D; ++j) {
        float v = (infiniop_load_f32(x, (ptrdiff_t)j * xs, t) - mean) / sd;
        float res = v * infiniop_load_f32(w, (ptrdiff_t)j * info->w_stride, t);
        if (info->has_bias) res += infiniop_load_f32(b, (ptrdiff_t)j * info->b_stride, t);
        infiniop_store_f32(z, (ptrdiff_t)j * zs, t, v);
        infiniop_store_f32(o, (ptrdiff_t)j * os, t, res);
    }
}

INFINIOP_ALWAYS_INLINE void rows(const infiniopLayerNormInfo *info, infiniDtype_t t, void *out, void *stdz, void *std,
                                 const void *in, const void *w, const void *b) {
    size_t n = info->rows.nrows;
    size_t bytes = n * info->rows.ncols * infiniop_dtype_size(t) * 3;
    if (bytes < INFINIOP_CPU_PARALLEL_BYTES || n < 2) {
        for (size_t r = 0; r < n; ++r) row(info, t, r, out, stdz, std, in, w, b);
        return;
    }
#pragma omp parallel for schedule(static)
    for (size_t r = 0; r < n; ++r) row(info, t, r, out, stdz, std, in, w, b);
}

infiniStatus_t infiniop_layer_norm_cpu(const infiniopLayerNormInfo *info, void *out, void *stdz, void *std,
                                       const void *in, const void *w, const void *b) {
    INFINIOP_DISPATCH_HALF_FLOAT(info->dtype, T, rows(info, T, out, stdz, std, in, w, b));
    return INFINI_STATUS_SUCCESS;
}
