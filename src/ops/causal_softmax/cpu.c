/*
 * ops/causal_softmax/cpu.c - causal softmax on the CPU.
 *
 * One task per row (OpenMP over rows). Over the visible columns of a row:
 * the maximum m (a NaN anywhere makes m NaN, so the row becomes NaN), the
 * sum of e^(x - m) in float32 lanes, then y = e^(x - m) / sum; the masked
 * columns are written as exact zeros. Outputs are written in the last pass,
 * element j after x[j] is read, so y may alias x exactly.
 */
#include "causal_softmax.h"
#include "cpu/cpu.h"

#include <math.h>

#define LANES 16
#define BLOCK 1024

INFINIOP_ALWAYS_INLINE void row(const infiniopCausalSoftmaxInfo *info, infiniDtype_t t, size_t r, char *y,
                                const char *x) {
    const infiniopRowLayout *L = &info->rows;
    size_t T = L->ncols, n = infiniop_causal_visible(info, r);
    ptrdiff_t es = (ptrdiff_t)infiniop_dtype_size(t);
    const void *xr = x + infiniop_row_offset(L, CS_X, r) * es;
    void *yr = y + infiniop_row_offset(L, CS_Y, r) * es;
    ptrdiff_t xs = L->col_stride[CS_X], ys = L->col_stride[CS_Y];

    float m = -INFINITY;
    for (size_t j = 0; j < n; ++j) {
        float v = infiniop_load_f32(xr, (ptrdiff_t)j * xs, t);
        m = (v > m || v != v) ? v : m; /* NaN sticks: once m is NaN no comparison replaces it */
        if (m != m) break;
    }
    float total = 0.0f;
    for (size_t j0 = 0; j0 < n; j0 += BLOCK) {
        size_t j1 = j0 + BLOCK < n ? j0 + BLOCK : n;
        float acc[LANES] = {0};
        size_t j = j0;
        for (; j + LANES <= j1; j += LANES)
            for (int l = 0; l < LANES; ++l) acc[l] += expf(infiniop_load_f32(xr, (ptrdiff_t)(j + l) * xs, t) - m);
        float s = 0.0f;
        for (; j < j1; ++j) s += expf(infiniop_load_f32(xr, (ptrdiff_t)j * xs, t) - m);
        for (int l = 0; l < LANES; ++l) s += acc[l];
        total += s;
    }
    for (size_t j = 0; j < n; ++j)
        infiniop_store_f32(yr, (ptrdiff_t)j * ys, t, expf(infiniop_load_f32(xr, (ptrdiff_t)j * xs, t) - m) / total);
    for (size_t j = n; j < T; ++j) infiniop_store_f32(yr, (ptrdiff_t)j * ys, t, 0.0f);
}

INFINIOP_ALWAYS_INLINE void rows(const infiniopCausalSoftmaxInfo *info, infiniDtype_t t, void *y, const void *x) {
    size_t n = info->rows.nrows;
    size_t bytes = n * info->rows.ncols * infiniop_dtype_size(t) * 2;
    if (bytes < INFINIOP_CPU_PARALLEL_BYTES || n < 2) {
        for (size_t r = 0; r < n; ++r) row(info, t, r, y, x);
        return;
    }
    /* Row lengths grow with r % S: interleave rows over threads. */
#pragma omp parallel for schedule(static, 1)
    for (size_t r = 0; r < n; ++r) row(info, t, r, y, x);
}

infiniStatus_t infiniop_causal_softmax_cpu(const infiniopCausalSoftmaxInfo *info, void *y, const void *x) {
    INFINIOP_DISPATCH_HALF_FLOAT(info->dtype, T, rows(info, T, y, x));
    return INFINI_STATUS_SUCCESS;
}
