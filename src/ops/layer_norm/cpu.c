/*
 * ops/layer_norm/cpu.c - layer_norm on the CPU.
 *
 * Statistics by the backend's one mean-and-variance routine
 * (infiniop_cpu_row_moments, layer_norm/rowstats.h: shifted sums, the corrected
 * two-pass variance, never E[x^2] - mean^2, and its error bound), one pass
 * over memory for most rows; then the outputs, standardized as
 * ((x - K) - delta) / std so that a large common offset is not rounded
 * into the deviations.
 * Outputs are written only in the last pass, element j after input[j] is
 * read, so output or input_standardization may alias input exactly.
 * Rows whose input and outputs are contiguous take the vector path
 * (cpu/vec.h), whatever the weight's and bias's strides (gathered into
 * float32 buffers on the stack when strided), the others the scalar one;
 * rows are split over the OpenMP pool in cache-sized tasks.
 */
#include "layer_norm.h"
#include "rowstats.h"

#include <math.h>
#include <string.h>

/* Row r's input, output and input_standardization. */
typedef struct {
    const void *x;
    void *o, *z;
} rowptr_t;
INFINIOP_ALWAYS_INLINE rowptr_t row_pointers(const infiniopRowLayout *L, infiniDtype_t t, size_t r, char *out,
                                             char *stdz, const char *in) {
    ptrdiff_t es = infiniop_cpu_elt_size(t);
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

    infiniop_cpu_moments_t m = infiniop_cpu_row_moments(x, xs, D, t, false);
    float sd = sqrtf(m.var + info->eps);
    infiniop_store_f32(std, infiniop_cpu_row_offset(L, LN_STD, r), t, sd);
    for (size_t j = 0; j < D; ++j) {
        float v = ((infiniop_load_f32(x, (ptrdiff_t)j * xs, t) - m.shift) - m.delta) / sd;
        float res = v * infiniop_load_f32(w, (ptrdiff_t)j * info->w_stride, t);
        if (info->has_bias) res += infiniop_load_f32(b, (ptrdiff_t)j * info->b_stride, t);
        infiniop_store_f32(z, (ptrdiff_t)j * zs, t, v);
        infiniop_store_f32(o, (ptrdiff_t)j * os, t, res);
    }
}

/* ------------------------------------------------------------ the output pass
 * Columns [0, n) of a contiguous row: z = ((x - K) - delta) / sd (the mean
 * K + delta never rounded, layer_norm/rowstats.h), o = z w + b. One loop
 * (out_span) over three small functions, each chosen once (out_cols): how z
 * is divided (zdiv_*: by the dtype and the row's range proof), how o is
 * formed (affine_*: by the bias) and how z and o are stored (put2_*, put1_*:
 * by streaming and the NaN proof). The choices reach out_span as constant
 * function pointers, so each combination is compiled as its own copy with
 * no call and no test in the loop. */
typedef struct {
    const void *x, *w, *b; /* input; weight and bias of dtype wt (b NULL: no bias) */
    void *z, *o;           /* input_standardization, output */
    infiniDtype_t t, wt;
    float K, delta;
    float sd;
} span_t;

/* z from d = (x - K) - delta; dv divides by sd (v_div_setup), rsd =
 * RN(1 / sd). F16 and BF16 outputs: times rsd (within 1 float32 ulp, 2^13
 * below the half types' rounding step). F32 outputs: the division,
 * correctly rounded (v_div), or v_div_pos_inrange when the row is proved
 * in range (div_inrange). */
typedef vf (*zdiv_fn)(vf d, v_div_t dv, vf rsd);
INFINIOP_ALWAYS_INLINE vf zdiv_rcp(vf d, v_div_t dv, vf rsd) {
    (void)dv;
    return d * rsd;
}
INFINIOP_ALWAYS_INLINE vf zdiv_exact(vf d, v_div_t dv, vf rsd) {
    (void)rsd;
    return v_div(d, dv);
}
INFINIOP_ALWAYS_INLINE vf zdiv_inrange(vf d, v_div_t dv, vf rsd) {
    (void)rsd;
    return v_div_pos_inrange(d, dv);
}

/* Lane-pair order (AVX2, BF16 rows; cpu/vec_mem.h v_load_bf16x2_lp): the
 * pair loop loads each block of 2 VL BF16 columns as two vectors holding
 * columns 0-3, 8-11 and 4-7, 12-15 (one vpunpck{l,h}wd each, the load
 * folded in, where v_load takes two operations) and stores z and o by one
 * pack per pair without the lane permutation. Every operation of the loop
 * is lane-wise, so each column gets the same float as in element order.
 * Weight and bias: BF16 ones are loaded the same way; the float32 buffers
 * of wb_fill hold each whole block in that order. */
#if defined(__AVX2__) && VL == 8
#define LN_LP 1
#else
#define LN_LP 0
#endif
/* Vector k of the 2 VL columns from j of p (dtype t): lp with BF16 data
 * (or a float32 buffer already in lane-pair order: plain loads). */
INFINIOP_ALWAYS_INLINE vf load_k(const void *p, infiniDtype_t t, size_t j, int k, bool lp) {
#if LN_LP
    if (lp && t == INFINI_DTYPE_BF16) return v_load_bf16_lp(V_CAT(p, t, j), k);
#endif
    (void)lp;
    return v_load(V_CAT(p, t, j + (size_t)k * VL), t);
}

/* o of vector k of the 2 VL columns from j of weight w and bias b (dtype
 * wt; b NULL without bias), given its z (lp: lane-pair order). */
typedef vf (*affine_fn)(vf z, const void *w, const void *b, infiniDtype_t wt, size_t j, int k, bool lp);
INFINIOP_ALWAYS_INLINE vf affine_bias(vf z, const void *w, const void *b, infiniDtype_t wt, size_t j, int k, bool lp) {
    return v_fma(z, load_k(w, wt, j, k, lp), load_k(b, wt, j, k, lp));
}
INFINIOP_ALWAYS_INLINE vf affine_nobias(vf z, const void *w, const void *b, infiniDtype_t wt, size_t j, int k,
                                        bool lp) {
    (void)b;
    return z * load_k(w, wt, j, k, lp);
}

/* Store z0, z1 at z and o0, o1 at o (2 VL elements of dtype t): normal or
 * streaming stores, and for BF16 outputs proved NaN-free (out_cols) the
 * stores without NaN test (v_put2x2_nonan). */
typedef void (*put2_fn)(void *z, void *o, infiniDtype_t t, vf z0, vf z1, vf o0, vf o1, bool lp);
INFINIOP_ALWAYS_INLINE void put2_any(void *z, void *o, infiniDtype_t t, vf z0, vf z1, vf o0, vf o1, bool lp,
                                     bool stream, bool nonan) {
#if LN_LP
    if (lp && t == INFINI_DTYPE_BF16) {
        v_put2x2_lp(z, o, z0, z1, o0, o1, stream, !nonan);
        return;
    }
#endif
    (void)lp;
    if (nonan) v_put2x2_nonan(z, o, t, z0, z1, o0, o1, stream);
    else v_put2x2(z, o, t, z0, z1, o0, o1, stream);
}
INFINIOP_ALWAYS_INLINE void put2_cached(void *z, void *o, infiniDtype_t t, vf z0, vf z1, vf o0, vf o1, bool lp) {
    put2_any(z, o, t, z0, z1, o0, o1, lp, false, false);
}
INFINIOP_ALWAYS_INLINE void put2_stream(void *z, void *o, infiniDtype_t t, vf z0, vf z1, vf o0, vf o1, bool lp) {
    put2_any(z, o, t, z0, z1, o0, o1, lp, true, false);
}
INFINIOP_ALWAYS_INLINE void put2_cached_nonan(void *z, void *o, infiniDtype_t t, vf z0, vf z1, vf o0, vf o1,
                                              bool lp) {
    put2_any(z, o, t, z0, z1, o0, o1, lp, false, true);
}
INFINIOP_ALWAYS_INLINE void put2_stream_nonan(void *z, void *o, infiniDtype_t t, vf z0, vf z1, vf o0, vf o1,
                                              bool lp) {
    put2_any(z, o, t, z0, z1, o0, o1, lp, true, true);
}
/* Store VL elements z at z and o at o: normal or streaming stores. */
typedef void (*put1_fn)(void *z, void *o, infiniDtype_t t, vf zv, vf ov);
INFINIOP_ALWAYS_INLINE void put1_cached(void *z, void *o, infiniDtype_t t, vf zv, vf ov) {
    v_put(z, t, zv, false);
    v_put(o, t, ov, false);
}
INFINIOP_ALWAYS_INLINE void put1_stream(void *z, void *o, infiniDtype_t t, vf zv, vf ov) {
    v_put(z, t, zv, true);
    v_put(o, t, ov, true);
}

/* The loop: pairs of vectors, one vector, then the last n % VL columns
 * (partial loads and stores). The span's fields are read once, here. */
INFINIOP_ALWAYS_INLINE void out_span(const span_t *s, size_t n, zdiv_fn zdiv, affine_fn affine, put2_fn put2,
                                     put1_fn put1) {
    const void *x = s->x, *w = s->w, *b = s->b;
    void *z = s->z, *o = s->o;
    const infiniDtype_t t = s->t, wt = s->wt;
    const float K = s->K, delta = s->delta;
    const v_div_t dv = v_div_setup(s->sd);
    const vf rsd = v_splat(1.0f / s->sd);
    const bool lp = LN_LP && t == INFINI_DTYPE_BF16;
    size_t j = 0;
    for (; j + 2 * VL <= n; j += 2 * VL) {
        vf z0 = zdiv((load_k(x, t, j, 0, lp) - K) - delta, dv, rsd);
        vf z1 = zdiv((load_k(x, t, j, 1, lp) - K) - delta, dv, rsd);
        put2(V_AT(z, t, j), V_AT(o, t, j), t, z0, z1, affine(z0, w, b, wt, j, 0, lp), affine(z1, w, b, wt, j, 1, lp),
             lp);
    }
    for (; j + VL <= n; j += VL) {
        vf zv = zdiv((v_load(V_CAT(x, t, j), t) - K) - delta, dv, rsd);
        put1(V_AT(z, t, j), V_AT(o, t, j), t, zv, affine(zv, w, b, wt, j, 0, false));
    }
    if (j < n) {
        size_t m = n - j;
        vf zv = zdiv((v_load_n(V_CAT(x, t, j), t, m) - K) - delta, dv, rsd);
        vf wv = v_load_n(V_CAT(w, wt, j), wt, m);
        vf ov = b ? v_fma(zv, wv, v_load_n(V_CAT(b, wt, j), wt, m)) : zv * wv;
        v_store_n(V_AT(z, t, j), t, zv, m);
        v_store_n(V_AT(o, t, j), t, ov, m);
    }
}

/* True when every d = (x - K) - delta of the row is a zero or within
 * [2^-80, 2^80] and sd is in v_div's fast range, so that F32 outputs may
 * take v_div_pos_inrange (sd > 0). Upper: |x - K| <= sqrt(S2), S2 = sum
 * (x - K)^2 = D (var + delta^2) up to the sums' rounding (layer_norm/rowstats.h;
 * a factor 4 covers it), and |d| <= |x - K| + |delta| up to a rounding;
 * a row with an infinity or a NaN has var NaN or infinite and fails.
 * Lower: for floats a, c != 0, a nonzero RN(a - c) has |RN(a - c)| >=
 * |c| 2^-25 (|a| < |c| / 2: above |c| / 2; else a and c are multiples of
 * 2^(e - 24), 2^e <= |c|); with a = x - K, c = delta, or when delta = 0,
 * d = RN(x - K) with c = K: so |c| >= 2^-55 suffices. */
INFINIOP_ALWAYS_INLINE bool div_inrange(size_t D, float K, float delta, float var, float sd) {
    v_div_t dv = v_div_setup(sd);
    double c = delta != 0.0f ? fabs((double)delta) : fabs((double)K);
    double hi = 4.0 * (sqrt((double)D * ((double)var + (double)delta * (double)delta)) + fabs((double)delta));
    return dv.fast && sd > 0.0f && c >= 0x1p-55 && hi <= 0x1p80;
}

/* A contiguous row's statistics (infiniop_cpu_row_moments: one pass over
 * memory for most rows, layer_norm/rowstats.h) and its std output. */
typedef struct {
    float K, delta, sd;
    bool inrange; /* div_inrange */
    bool finite;  /* var finite, 1 / sd finite: every z = ((x - K) - delta) / sd is a number (not NaN) */
} rowstat_t;
INFINIOP_ALWAYS_INLINE rowstat_t row_stats_of(const infiniopLayerNormInfo *info, infiniDtype_t t, size_t r, char *std,
                                              infiniop_cpu_moments_t m) {
    float sd = sqrtf(m.var + info->eps);
    rowstat_t s = {m.shift, m.delta, sd, div_inrange(info->rows.ncols, m.shift, m.delta, m.var, sd),
                   isfinite(m.var) && sd > 0.0f && isfinite(1.0f / sd)};
    infiniop_store_f32(std, infiniop_cpu_row_offset(&info->rows, LN_STD, r), t, s.sd);
    return s;
}
INFINIOP_ALWAYS_INLINE rowstat_t row_stats(const infiniopLayerNormInfo *info, infiniDtype_t t, size_t r, char *std,
                                           const void *x) {
    return row_stats_of(info, t, r, std, infiniop_cpu_row_moments(x, 1, info->rows.ncols, t, true));
}

/* Columns [j0, j0 + n) of a contiguous row's outputs; weight and bias of
 * dtype wt at w, b (already offset to column j0);
 * wb_finite: every weight and bias of these columns is finite, so that with
 * a finite z no output z w + b (one rounding) is NaN. The choices of
 * out_span's functions: the bias and stream are the task's, the division
 * and the NaN-free stores the row's (its range proof). */
INFINIOP_ALWAYS_INLINE void out_cols(const infiniopLayerNormInfo *info, infiniDtype_t t, infiniDtype_t wt, rowptr_t p,
                                     size_t j0, size_t n, const void *w, const void *b, rowstat_t rs, bool wb_finite,
                                     bool stream) {
    const span_t s = {V_CAT(p.x, t, j0), w, info->has_bias ? b : NULL, V_AT(p.z, t, j0), V_AT(p.o, t, j0), t, wt,
                      rs.K, rs.delta, rs.sd};
    const bool inrange = t == INFINI_DTYPE_F32 && rs.inrange;
    const bool nonan = t == INFINI_DTYPE_BF16 && wb_finite && rs.finite;
    const zdiv_fn zdiv = t != INFINI_DTYPE_F32 ? zdiv_rcp : zdiv_exact;
    if (s.b && stream) {
        if (inrange) out_span(&s, n, zdiv_inrange, affine_bias, put2_stream, put1_stream);
        else if (nonan) out_span(&s, n, zdiv, affine_bias, put2_stream_nonan, put1_stream);
        else out_span(&s, n, zdiv, affine_bias, put2_stream, put1_stream);
    } else if (s.b) {
        if (inrange) out_span(&s, n, zdiv_inrange, affine_bias, put2_cached, put1_cached);
        else if (nonan) out_span(&s, n, zdiv, affine_bias, put2_cached_nonan, put1_cached);
        else out_span(&s, n, zdiv, affine_bias, put2_cached, put1_cached);
    } else if (stream) {
        if (inrange) out_span(&s, n, zdiv_inrange, affine_nobias, put2_stream, put1_stream);
        else if (nonan) out_span(&s, n, zdiv, affine_nobias, put2_stream_nonan, put1_stream);
        else out_span(&s, n, zdiv, affine_nobias, put2_stream, put1_stream);
    } else {
        if (inrange) out_span(&s, n, zdiv_inrange, affine_nobias, put2_cached, put1_cached);
        else if (nonan) out_span(&s, n, zdiv, affine_nobias, put2_cached_nonan, put1_cached);
        else out_span(&s, n, zdiv, affine_nobias, put2_cached, put1_cached);
    }
}

/* A contiguous row; weight and bias of dtype wt (t, or F32 when rows_typed
 * converted or gathered them). */
INFINIOP_ALWAYS_INLINE void row_vec(const infiniopLayerNormInfo *info, infiniDtype_t t, infiniDtype_t wt, size_t r,
                                    char *out, char *stdz, char *std, const char *in, const void *w, const void *b,
                                    bool wb_finite, bool stream) {
    rowptr_t p = row_pointers(&info->rows, t, r, out, stdz, in);
    rowstat_t s = row_stats(info, t, r, std, p.x);
    out_cols(info, t, wt, p, 0, info->rows.ncols, w, b, s, wb_finite, stream);
}

/* Contiguous float32 rows r0..r1-1 with streaming outputs, skewed by one:
 * row r + 1's statistics pass runs LN_SKEW_STEP columns at a time between
 * those of row r's output pass, so that the next row's reads overlap this
 * row's streaming stores, where row_vec reads a row and then writes it.
 * Each row takes row_vec's operations: its sums step by step and block by
 * block in the same order, its outputs column by column (the steps are
 * whole pairs of vectors but at the row's end), so the same bits. Measured
 * on a 2-vCPU Sapphire Rapids guest, f32 4096x4096, 2 threads, % of copy:
 * AVX2 pass 80-82% -> 88-92%, AVX-512 BF16 pass 83-86% -> 87%; BF16 rows
 * read lower skewed (AVX2 72-73% -> 62-69%, by blocks of 1024, 256 or 64
 * columns), so they keep row_vec (bench/NOTES.md session 19). */
#define LN_SKEW_STEP 256
INFINIOP_ALWAYS_INLINE void rows_skew(const infiniopLayerNormInfo *info, infiniDtype_t t, infiniDtype_t wt, size_t r0,
                                      size_t r1, char *out, char *stdz, char *std, const char *in, const void *w,
                                      const void *b, bool wb_finite) {
    const size_t D = info->rows.ncols, B = INFINIOP_ROWSTATS_BLOCK;
    rowptr_t po = row_pointers(&info->rows, t, r0, out, stdz, in);
    rowstat_t so = row_stats(info, t, r0, std, po.x);
    for (size_t r = r0; r + 1 < r1; ++r) {
        rowptr_t pn = row_pointers(&info->rows, t, r + 1, out, stdz, in);
        float K = infiniop_cpu_row_head(pn.x, 1, D, t), s1 = 0.0f, s2 = 0.0f;
        for (size_t j0 = 0; j0 < D; j0 += B) {
            size_t j1 = D - j0 < B ? D : j0 + B, js = j1 - (j1 - j0) % VW;
            vf a1[VN], a2[VN];
            for (int k = 0; k < VN; ++k) a1[k] = a2[k] = v_splat(0.0f);
            for (size_t j = j0; j < js; j += LN_SKEW_STEP) {
                size_t je = js - j < LN_SKEW_STEP ? js : j + LN_SKEW_STEP;
                infiniop_cpu_row_steps(pn.x, 1, j, je, t, K, a1, a2, true);
                out_cols(info, t, wt, po, j, je - j, V_CAT(w, wt, j), info->has_bias ? V_CAT(b, wt, j) : NULL, so,
                         wb_finite, true);
            }
            infiniop_cpu_row_block_end(pn.x, 1, js, j1, t, K, a1, a2, &s1, &s2);
            if (js < j1)
                out_cols(info, t, wt, po, js, j1 - js, V_CAT(w, wt, js), info->has_bias ? V_CAT(b, wt, js) : NULL,
                         so, wb_finite, true);
        }
        so = row_stats_of(info, t, r + 1, std, infiniop_cpu_row_moments_end(pn.x, 1, D, t, K, s1, s2));
        po = pn;
    }
    out_cols(info, t, wt, po, 0, D, w, b, so, wb_finite, true);
}

/* Weight and bias as float32 buffers: F16/BF16 ones converted, strided ones
 * gathered, WBUF columns at a time, on the stack (no allocation per call). */
#define WBUF 4096
/* Rows whose statistics are taken together before their outputs, when a
 * strided weight or bias row is longer than WBUF: each chunk of weight and
 * bias is then gathered once per group, not once per row; at most
 * LN_GROUP rows and LN_GROUP_BYTES of input (the group is read again from
 * cache for the outputs). */
#define LN_GROUP 16
#define LN_GROUP_BYTES ((size_t)256 << 10)

typedef struct {
    const infiniopLayerNormInfo *info;
    char *out, *stdz, *std;
    const char *in;
    const void *w, *b;
    bool vector, stream;
    bool amd; /* infiniop_cpu_amd(): rows_typed's store rule */
} ctx_t;

/* Columns [j0, j0 + n) of weight (and bias) as float32 into wf, bf; true
 * when all are finite. */
INFINIOP_ALWAYS_INLINE bool wb_fill(const ctx_t *c, infiniDtype_t T, size_t j0, size_t n, float *wf, float *bf) {
    const infiniopLayerNormInfo *info = c->info;
    bool bias = info->has_bias;
    ptrdiff_t ws = info->w_stride, bs = info->b_stride;
    size_t j = 0;
#if LN_LP
    if (T == INFINI_DTYPE_BF16) { /* whole blocks of 2 VL in lane-pair order (out_span's pair loop) */
        const uint16_t *wh = c->w, *bh = c->b;
        for (; ws == 1 && (!bias || bs == 1) && j + 2 * VL <= n; j += 2 * VL) {
            v_load_bf16x2_lp(wh + j0 + j, (vf *)(wf + j), (vf *)(wf + j + VL));
            if (bias) v_load_bf16x2_lp(bh + j0 + j, (vf *)(bf + j), (vf *)(bf + j + VL));
        }
        for (; j + 2 * VL <= n; j += 2 * VL) { /* strided: the bits gathered */
            uint16_t hw[2 * VL], hb[2 * VL];
            for (int l = 0; l < 2 * VL; ++l) hw[l] = wh[(ptrdiff_t)(j0 + j + (size_t)l) * ws];
            v_load_bf16x2_lp(hw, (vf *)(wf + j), (vf *)(wf + j + VL));
            if (bias) {
                for (int l = 0; l < 2 * VL; ++l) hb[l] = bh[(ptrdiff_t)(j0 + j + (size_t)l) * bs];
                v_load_bf16x2_lp(hb, (vf *)(bf + j), (vf *)(bf + j + VL));
            }
        }
    }
#endif
    if (ws == 1 && (!bias || bs == 1)) {
        for (; j + VL <= n; j += VL) {
            *(vf_u *)(wf + j) = v_load(V_CAT(c->w, T, j0 + j), T);
            if (bias) *(vf_u *)(bf + j) = v_load(V_CAT(c->b, T, j0 + j), T);
        }
    } else if (T != INFINI_DTYPE_F32) { /* half types: the bits gathered, converted a vector at a time */
        const uint16_t *wh = c->w, *bh = c->b;
        for (; j + VL <= n; j += VL) {
            uint16_t hw[VL], hb[VL];
            for (int l = 0; l < VL; ++l) hw[l] = wh[(ptrdiff_t)(j0 + j + (size_t)l) * ws];
            *(vf_u *)(wf + j) = v_load(hw, T);
            if (bias) {
                for (int l = 0; l < VL; ++l) hb[l] = bh[(ptrdiff_t)(j0 + j + (size_t)l) * bs];
                *(vf_u *)(bf + j) = v_load(hb, T);
            }
        }
    }
    for (; j < n; ++j) {
        wf[j] = infiniop_load_f32(c->w, (ptrdiff_t)(j0 + j) * ws, T);
        if (bias) bf[j] = infiniop_load_f32(c->b, (ptrdiff_t)(j0 + j) * bs, T);
    }
    uint32_t e = 0; /* the largest exponent field */
    for (j = 0; j < n; ++j) {
        uint32_t u, v = 0;
        memcpy(&u, &wf[j], 4);
        if (bias) memcpy(&v, &bf[j], 4);
        u &= 0x7f800000u, v &= 0x7f800000u;
        e = e > u ? e : u;
        e = e > v ? e : v;
    }
    return e < 0x7f800000u;
}

INFINIOP_ALWAYS_INLINE void rows_typed(const ctx_t *c, infiniDtype_t T, size_t r0, size_t r1) {
    const infiniopLayerNormInfo *info = c->info;
    size_t D = info->rows.ncols;
    bool wb_unit = info->w_stride == 1 && (!info->has_bias || info->b_stride == 1);
    if (!c->vector) {
        for (size_t r = r0; r < r1; ++r) row(info, T, r, c->out, c->stdz, c->std, c->in, c->w, c->b);
        return;
    }
    /* The AVX2 pass on AMD writes BF16 outputs with ordinary stores even
     * above INFINIOP_CPU_STREAM_BYTES: measured on a Zen 3 guest
     * (bench/NOTES.md, "CPU session 10"), its streaming stores made bf16
     * 4096x4096 1.6x slower (7.9 against 4.9 ms, 2 threads; 1.9x at 1
     * thread), while the other operators and float32 layer_norm gained
     * from them. On Intel the same ordinary stores cost it instead
     * (session 15: a Sapphire Rapids guest and the 16-core Xeon host read
     * 60-61% and 73% of the copy with them): there it streams, as every
     * other pass and dtype does. */
    const bool stream = c->stream && !(LN_LP && T == INFINI_DTYPE_BF16 && c->amd);
    if (wb_unit && (T == INFINI_DTYPE_F32 || r1 - r0 == 1 || D > WBUF)) {
        /* weight and bias used as they are */
        if (stream && T == INFINI_DTYPE_F32) {
            rows_skew(info, T, T, r0, r1, c->out, c->stdz, c->std, c->in, c->w, c->b, false);
        } else {
            for (size_t r = r0; r < r1; ++r)
                row_vec(info, T, T, r, c->out, c->stdz, c->std, c->in, c->w, c->b, false, stream);
        }
    } else {
        float wf[WBUF] __attribute__((aligned(64)));
        float bf[WBUF] __attribute__((aligned(64)));
        if (D <= WBUF) { /* converted or gathered once per task */
            bool fin = wb_fill(c, T, 0, D, wf, bf);
            for (size_t r = r0; r < r1; ++r)
                row_vec(info, T, INFINI_DTYPE_F32, r, c->out, c->stdz, c->std, c->in, wf, bf, fin, stream);
        } else { /* strided: groups of rows, statistics first, then the outputs chunk by chunk */
            size_t G = LN_GROUP_BYTES / (D * (size_t)infiniop_cpu_elt_size(T));
            G = G < 1 ? 1 : G > LN_GROUP ? LN_GROUP : G;
            for (size_t g0 = r0; g0 < r1; g0 += G) {
                size_t g1 = g0 + G < r1 ? g0 + G : r1;
                rowptr_t p[LN_GROUP];
                rowstat_t s[LN_GROUP];
                for (size_t r = g0; r < g1; ++r) {
                    p[r - g0] = row_pointers(&info->rows, T, r, c->out, c->stdz, c->in);
                    s[r - g0] = row_stats(info, T, r, c->std, p[r - g0].x);
                }
                for (size_t j0 = 0; j0 < D; j0 += WBUF) {
                    size_t n = D - j0 < WBUF ? D - j0 : WBUF;
                    bool fin = wb_fill(c, T, j0, n, wf, bf);
                    for (size_t r = g0; r < g1; ++r)
                        out_cols(info, T, INFINI_DTYPE_F32, p[r - g0], j0, n, wf, bf, s[r - g0], fin, stream);
                }
            }
        }
    }
    if (stream) v_stream_fence();
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
    /* contiguous rows take the vector path whatever the weight's and bias's strides (gathered, rows_typed) */
    bool contiguous = L->ncols == 1 ||
                      (L->col_stride[LN_IN] == 1 && L->col_stride[LN_OUT] == 1 && L->col_stride[LN_STDZ] == 1);
    ctx_t c = {info, out, stdz, std, in, w, b, contiguous, bytes / 3 * 2 > INFINIOP_CPU_STREAM_BYTES,
               infiniop_cpu_amd()};
    infiniop_cpu_parallel_for(n, bytes, layer_norm_rows[infiniop_cpu_isa()], &c);
    return INFINI_STATUS_SUCCESS;
}
#endif
