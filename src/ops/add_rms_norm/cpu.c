/*
 * ops/add_rms_norm/cpu.c - add_rms_norm on the CPU.
 *
 * One task per row (OpenMP over rows). Two passes over the row:
 *   1. r = a + b, accumulate r^2 (float32, 16 lanes per 1024-element block,
 *      blocks summed in order: error grows with D/1024, not D);
 *   2. recompute r, write residual_out = round(r) and
 *      y = round(r * rsqrt(mean + eps) * w).
 * Outputs are written only in pass 2, element j after a[j], b[j] are read,
 * so y or residual_out may alias a or b exactly.
 */
#include "add_rms_norm.h"
#include "cpu/cpu.h"

#include <math.h>

#define LANES 16
#define BLOCK 1024

INFINIOP_ALWAYS_INLINE void row(const infiniopAddRMSNormInfo *info, infiniDtype_t at, infiniDtype_t wt, size_t r,
                                char *y, char *res, const char *a, const char *b, const char *w) {
    const infiniopRowLayout *L = &info->rows;
    size_t D = L->ncols;
    ptrdiff_t es = (ptrdiff_t)infiniop_dtype_size(at);
    const void *ar = a + infiniop_row_offset(L, ARN_A, r) * es;
    const void *br = b + infiniop_row_offset(L, ARN_B, r) * es;
    void *yr = y + infiniop_row_offset(L, ARN_Y, r) * es;
    void *rr = res + infiniop_row_offset(L, ARN_RES, r) * es;

    float total = 0.0f;
    for (size_t j0 = 0; j0 < D; j0 += BLOCK) {
        size_t j1 = j0 + BLOCK < D ? j0 + BLOCK : D;
        float acc[LANES] = {0};
        size_t j = j0;
        for (; j + LANES <= j1; j += LANES)
            for (int l = 0; l < LANES; ++l) {
                float v = infiniop_load_f32(ar, (ptrdiff_t)(j + l), at) + infiniop_load_f32(br, (ptrdiff_t)(j + l), at);
                acc[l] += v * v;
            }
        float s = 0.0f;
        for (; j < j1; ++j) {
            float v = infiniop_load_f32(ar, (ptrdiff_t)j, at) + infiniop_load_f32(br, (ptrdiff_t)j, at);
            s += v * v;
        }
        for (int l = 0; l < LANES; ++l) s += acc[l];
        total += s;
    }
    float scale = 1.0f / sqrtf(total / (float)D + info->epsilon);
    for (size_t j = 0; j < D; ++j) {
        float v = infiniop_load_f32(ar, (ptrdiff_t)j, at) + infiniop_load_f32(br, (ptrdiff_t)j, at);
        infiniop_store_f32(rr, (ptrdiff_t)j, at, v);
        infiniop_store_f32(yr, (ptrdiff_t)j, at, v * scale * infiniop_load_f32(w, (ptrdiff_t)j * info->w_stride, wt));
    }
}

INFINIOP_ALWAYS_INLINE void rows(const infiniopAddRMSNormInfo *info, infiniDtype_t at, infiniDtype_t wt, void *y,
                                 void *res, const void *a, const void *b, const void *w) {
    size_t n = info->rows.nrows;
    size_t bytes = n * info->rows.ncols * infiniop_dtype_size(at) * 4;
    if (bytes < INFINIOP_CPU_PARALLEL_BYTES || n < 2) {
        for (size_t r = 0; r < n; ++r) row(info, at, wt, r, y, res, a, b, w);
        return;
    }
#pragma omp parallel for schedule(static)
    for (size_t r = 0; r < n; ++r) row(info, at, wt, r, y, res, a, b, w);
}

infiniStatus_t infiniop_add_rms_norm_cpu(const infiniopAddRMSNormInfo *info, void *y, void *residual_out,
                                         const void *a, const void *b, const void *w) {
    INFINIOP_DISPATCH_HALF_FLOAT(info->atype, AT, {
        INFINIOP_DISPATCH_HALF_FLOAT(info->wtype, WT, rows(info, AT, WT, y, residual_out, a, b, w));
    });
    return INFINI_STATUS_SUCCESS;
}
