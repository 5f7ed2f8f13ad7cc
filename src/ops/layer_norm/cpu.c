/*
 * ops/layer_norm/cpu.c - layer_norm on the CPU.
 *
 * Rows split over the OpenMP pool, three passes over a row (it is in cache
 * after the first): the mean, the variance as the mean of squared
 * deviations (stable, never E[x^2] - mean^2) with the corrected two-pass
 * term that cancels the rounding error of the mean
 *   var = (sum d^2 - (sum d)^2 / D) / D,   d = x - mean
 * (it matters for rows with a large offset and a small spread), then the
 * outputs. Sums are
 * float32 lanes per 1024-element block (VW on the vector path: 64 on
 * AVX-512, 32 elsewhere; 16 on the scalar one), blocks summed in order; the
 * vector path forms sum d and sum d^2 in one pass.
 * Outputs are written only in the last pass, element j after input[j] is
 * read, so output or input_standardization may alias input exactly.
 * Rows whose elements (input, outputs, weight, bias) are all contiguous take
 * the vector path (cpu/vec.h), the others the scalar one; rows are split
 * over the OpenMP pool in cache-sized tasks.
 */
#include "layer_norm.h"
#include "cpu/vec.h"

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

/* Row r's input, output and input_standardization. */
typedef struct {
    const void *x;
    void *o, *z;
} rowptr_t;
INFINIOP_ALWAYS_INLINE rowptr_t row_pointers(const infiniopRowLayout *L, infiniDtype_t t, size_t r, char *out,
                                             char *stdz, const char *in) {
    ptrdiff_t es = (ptrdiff_t)infiniop_dtype_size(t);
    rowptr_t p = {in + infiniop_cpu_row_offset(L, LN_IN, r) * es, out + infiniop_cpu_row_offset(L, LN_OUT, r) * es,
                  stdz + infiniop_cpu_row_offset(L, LN_STDZ, r) * es};
    return p;
}

INFINIOP_ALWAYS_INLINE void row(const infiniopLayerNormInfo *info, infiniDtype_t t, size_t r, char *out, char *stdz,
                                char *std, const char *in, const void *w, const void *b) {
    const infiniopRowLayout *L = &info->rows;
    size_t D = L->ncols;
    rowptr_t p = row_pointers(L, t, r, out, stdz, in);
    const void *x = p.x;
    void *o = p.o, *z = p.z;
    ptrdiff_t xs = L->col_stride[LN_IN], os = L->col_stride[LN_OUT], zs = L->col_stride[LN_STDZ];

    float mean = row_sum(x, xs, D, t, 0.0f, 1) / (float)D;
    float dev = row_sum(x, xs, D, t, mean, 1);
    float var = (row_sum(x, xs, D, t, mean, 2) - dev * dev / (float)D) / (float)D;
    if (var < 0.0f) var = 0.0f; /* rounding; NaN stays NaN */
    float sd = sqrtf(var + info->eps);
    infiniop_store_f32(std, infiniop_cpu_row_offset(L, LN_STD, r), t, sd);
    for (size_t j = 0; j < D; ++j) {
        float v = (infiniop_load_f32(x, (ptrdiff_t)j * xs, t) - mean) / sd;
        float res = v * infiniop_load_f32(w, (ptrdiff_t)j * info->w_stride, t);
        if (info->has_bias) res += infiniop_load_f32(b, (ptrdiff_t)j * info->b_stride, t);
        infiniop_store_f32(z, (ptrdiff_t)j * zs, t, v);
        infiniop_store_f32(o, (ptrdiff_t)j * os, t, res);
    }
}

/* Over a contiguous row: *s1 = sum of d and, when s2, *s2 = sum of d^2,
 * d = x - shift, in VW float32 lanes per BLOCK-element block, blocks summed
 * in order (the scalar row_sum's blocking; both sums in one pass);
 * prefetch: the row is read from memory. */
INFINIOP_ALWAYS_INLINE void row_sums_vec(const void *x, size_t D, infiniDtype_t t, float shift, float *s1, float *s2,
                                         bool prefetch) {
    float t1 = 0.0f, t2 = 0.0f;
    for (size_t j0 = 0; j0 < D; j0 += BLOCK) {
        size_t j1 = j0 + BLOCK < D ? j0 + BLOCK : D, j = j0;
        vf a1[VN], a2[VN];
        for (int k = 0; k < VN; ++k) a1[k] = a2[k] = v_splat(0.0f);
        for (; j + VW <= j1; j += VW) {
            if (prefetch) V_PREFETCH_SPAN(V_CAT(x, t, j), VW * (t == INFINI_DTYPE_F32 ? 4 : 2));
            for (int k = 0; k < VN; k += 2) {
                vf v[2];
                v_load2_unordered(V_CAT(x, t, j + k * VL), t, &v[0], &v[1]);
                for (int h = 0; h < 2; ++h) {
                    vf d = v[h] - shift;
                    a1[k + h] += d;
                    if (s2) a2[k + h] = v_fma(d, d, a2[k + h]);
                }
            }
        }
        for (int k = 0; j < j1 && k < VN; ++k) { /* the last partial step: zero lanes add 0 */
            ptrdiff_t n = (ptrdiff_t)(j1 - j) - k * VL;
            vf v = v_load_upto(V_CAT(x, t, j + k * VL), t, n);
            vf d = v_sel(v_first(n > 0 ? (size_t)n : 0), v - shift, v_splat(0.0f));
            a1[k] += d;
            if (s2) a2[k] = v_fma(d, d, a2[k]);
        }
        t1 += v_hsum_w(a1);
        if (s2) t2 += v_hsum_w(a2);
    }
    *s1 = t1;
    if (s2) *s2 = t2;
}

/* The output pass of a contiguous row: z = (x - mean) / sd, o = z w + b
 * (bias and stream compile-time constants at each call). */
INFINIOP_ALWAYS_INLINE void row_out(const void *x, void *z, void *o, const void *w, const void *b, size_t D,
                                    infiniDtype_t t, infiniDtype_t wt, float mean, float sd, bool bias, bool stream) {
    /* (x - mean) / sd: correctly rounded for F32 outputs (v_div); for F16
     * and BF16 outputs times the correctly rounded 1 / sd (within 1 float32
     * ulp, 2^13 below the half types' rounding step) */
    const bool half = t != INFINI_DTYPE_F32;
    v_div_t dv = v_div_setup(sd);
    vf rsd = v_splat(1.0f / sd);
#define LN_Z(jj) (half ? (v_load(V_CAT(x, t, (jj)), t) - mean) * rsd : v_div(v_load(V_CAT(x, t, (jj)), t) - mean, dv))
#define LN_O(v, jj)                                                                                                    \
    (bias ? v_fma((v), v_load(V_CAT(w, wt, (jj)), wt), v_load(V_CAT(b, wt, (jj)), wt)) : (v) * v_load(V_CAT(w, wt, (jj)), wt))
    size_t j = 0;
    for (; j + 2 * VL <= D; j += 2 * VL) {
        vf v0 = LN_Z(j), v1 = LN_Z(j + VL);
        v_put2x2(V_AT(z, t, j), V_AT(o, t, j), t, v0, v1, LN_O(v0, j), LN_O(v1, j + VL), stream);
    }
    for (; j + VL <= D; j += VL) {
        vf v = LN_Z(j);
        v_put(V_AT(z, t, j), t, v, stream);
        v_put(V_AT(o, t, j), t, LN_O(v, j), stream);
    }
#undef LN_Z
#undef LN_O
    if (j < D) {
        size_t n = D - j;
        vf d = v_load_n(V_CAT(x, t, j), t, n) - mean;
        vf v = half ? d * rsd : v_div(d, dv);
        vf res = bias ? v_fma(v, v_load_n(V_CAT(w, wt, j), wt, n), v_load_n(V_CAT(b, wt, j), wt, n))
                      : v * v_load_n(V_CAT(w, wt, j), wt, n);
        v_store_n(V_AT(z, t, j), t, v, n);
        v_store_n(V_AT(o, t, j), t, res, n);
    }
}

#define HEAD 256 /* elements whose mean is the shift of the one-pass statistics */

/* A contiguous row; weight and bias of dtype wt (t, or F32 when rows_body
 * converted them once per task).
 * Statistics in one pass over memory (a second pass over the row, even from
 * L1, cost ~15% of the bf16 4096x4096 time): with K the mean of the row's
 * first HEAD elements, S1 = sum (x - K), S2 = sum (x - K)^2, delta = S1 / D,
 *   mean = K + delta,   var = (S2 - S1 delta) / D
 * (the shifted-data form of the corrected two-pass formula above: it is
 * that formula with the shift K in place of the rounded mean). Its
 * rounding error grows with delta^2 / var, so the row keeps it only when
 * 16 delta^2 <= var (|mean - K| <= std / 4: S2 is then at most 1.07 D var
 * and the error at most ~1.6 times the two-pass bound; K from 256 elements
 * of a row of independent values misses the test with probability ~1e-4);
 * other rows (and non-finite ones) take the two passes: mean = sum x / D,
 * then the corrected two-pass variance. */
INFINIOP_ALWAYS_INLINE void row_vec(const infiniopLayerNormInfo *info, infiniDtype_t t, infiniDtype_t wt, size_t r,
                                    char *out, char *stdz, char *std, const char *in, const void *w, const void *b,
                                    bool stream) {
    const infiniopRowLayout *L = &info->rows;
    size_t D = L->ncols;
    rowptr_t p = row_pointers(L, t, r, out, stdz, in);
    const void *x = p.x;

    size_t head = D < HEAD ? D : HEAD;
    float K, s1, s2;
    row_sums_vec(x, head, t, 0.0f, &K, NULL, false);
    K /= (float)head;
    row_sums_vec(x, D, t, K, &s1, &s2, true);
    float delta = s1 / (float)D, mean = K + delta, var = (s2 - s1 * delta) / (float)D;
    if (!(16.0f * delta * delta <= var)) { /* the two passes; NaN too */
        row_sums_vec(x, D, t, 0.0f, &s1, NULL, false);
        mean = s1 / (float)D;
        row_sums_vec(x, D, t, mean, &s1, &s2, false);
        var = (s2 - s1 * s1 / (float)D) / (float)D;
    }
    if (var < 0.0f) var = 0.0f; /* rounding; NaN stays NaN */
    float sd = sqrtf(var + info->eps);
    infiniop_store_f32(std, infiniop_cpu_row_offset(L, LN_STD, r), t, sd);
    if (info->has_bias) {
        if (stream) row_out(x, p.z, p.o, w, b, D, t, wt, mean, sd, true, true);
        else row_out(x, p.z, p.o, w, b, D, t, wt, mean, sd, true, false);
    } else {
        if (stream) row_out(x, p.z, p.o, w, b, D, t, wt, mean, sd, false, true);
        else row_out(x, p.z, p.o, w, b, D, t, wt, mean, sd, false, false);
    }
}

#define WBUF 4096 /* F16/BF16 weight and bias up to this length: converted to float32 once per task */

typedef struct {
    const infiniopLayerNormInfo *info;
    char *out, *stdz, *std;
    const char *in;
    const void *w, *b;
    bool vector, stream;
} ctx_t;

INFINIOP_ALWAYS_INLINE void rows_typed(const ctx_t *c, infiniDtype_t T, size_t r0, size_t r1) {
    size_t D = c->info->rows.ncols;
    if (c->vector && T != INFINI_DTYPE_F32 && D <= WBUF && r1 - r0 > 1) {
        /* half types: weight and bias as float32, converted once */
        float wf[WBUF] __attribute__((aligned(64)));
        float bf[WBUF] __attribute__((aligned(64)));
        bool bias = c->info->has_bias;
        size_t j = 0;
        for (; j + VL <= D; j += VL) {
            *(vf_u *)(wf + j) = v_load(V_CAT(c->w, T, j), T);
            if (bias) *(vf_u *)(bf + j) = v_load(V_CAT(c->b, T, j), T);
        }
        for (; j < D; ++j) {
            wf[j] = infiniop_load_f32(c->w, (ptrdiff_t)j, T);
            if (bias) bf[j] = infiniop_load_f32(c->b, (ptrdiff_t)j, T);
        }
        for (size_t r = r0; r < r1; ++r)
            row_vec(c->info, T, INFINI_DTYPE_F32, r, c->out, c->stdz, c->std, c->in, wf, bf, c->stream);
        if (c->stream) v_stream_fence();
    } else if (c->vector) {
        for (size_t r = r0; r < r1; ++r) row_vec(c->info, T, T, r, c->out, c->stdz, c->std, c->in, c->w, c->b, c->stream);
        if (c->stream) v_stream_fence();
    } else {
        for (size_t r = r0; r < r1; ++r) row(c->info, T, r, c->out, c->stdz, c->std, c->in, c->w, c->b);
    }
}

INFINIOP_ALWAYS_INLINE void rows_body(const void *ctx, size_t r0, size_t r1) {
    const ctx_t *c = ctx;
    INFINIOP_DISPATCH_HALF_FLOAT(c->info->dtype, T, rows_typed(c, T, r0, r1));
}
INFINIOP_CPU_KERNEL(layer_norm_rows, rows_body);

#if INFINIOP_CPU_PASS == 0

infiniStatus_t infiniop_layer_norm_cpu(const infiniopLayerNormInfo *info, void *out, void *stdz, void *std,
                                       const void *in, const void *w, const void *b) {
    const infiniopRowLayout *L = &info->rows;
    size_t n = L->nrows;
    size_t bytes = n * L->ncols * infiniop_dtype_size(info->dtype) * 3;
    bool contiguous = L->ncols == 1 || (L->col_stride[LN_IN] == 1 && L->col_stride[LN_OUT] == 1 &&
                                        L->col_stride[LN_STDZ] == 1 && info->w_stride == 1 &&
                                        (!info->has_bias || info->b_stride == 1));
    ctx_t c = {info, out, stdz, std, in, w, b, contiguous, bytes / 3 * 2 > INFINIOP_CPU_STREAM_BYTES};
    infiniop_cpu_parallel_for(n, bytes, layer_norm_rows[infiniop_cpu_isa()], &c);
    return INFINI_STATUS_SUCCESS;
}
#endif
