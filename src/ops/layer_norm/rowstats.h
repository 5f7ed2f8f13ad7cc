/*
 * ops/layer_norm/rowstats.h - layer_norm's one routine for a row's mean
 * and variance on the CPU (every path: contiguous rows and strided ones).
 *
 * Shifted data. K is a float near the row's values (the mean of its first
 * HEAD elements, rounded): d_j = x_j - K is then exact for every x_j in
 * [K/2, 2K] (Sterbenz), which covers rows with a large common offset.
 *   S1 = sum d_j,  S2 = sum d_j^2,  delta = S1 / D,
 *   var = (S2 - S1 delta) / D            (the corrected two-pass formula)
 * and the caller standardizes as ((x - K) - delta) / std: the mean itself,
 * K + delta, is never rounded to float32 (at mean 1e4 its rounding, 2^-11,
 * would be 5e-4 of a unit deviation).
 * The rounding error of var grows with delta^2 / var, so the first pass is
 * kept only when 16 delta^2 <= var (|mean - K| <= std / 4); otherwise (a
 * row whose head sits apart from the rest, or a non-finite row) one more
 * pass with K' = RN(K + delta), which leaves |delta'| at the level of the
 * first pass's rounding error.
 *
 * Sums: float32, VW lanes (cpu/vec.h: 32 on AVX2 and the baseline, 64 on
 * AVX-512) over blocks of BLOCK elements, each block's lanes reduced by a
 * fixed tree, block totals added in order. The longest chain of float32
 * additions is n = BLOCK / VW + log2(VW) + ceil(D / BLOCK) (41 for D = 4096
 * on AVX2), and the error bound, eps = 2^-24, is
 *   |delta - delta_exact| <= (n + 2) eps sqrt(var + delta^2)
 *   |var - var_exact|     <= (n + 4) eps (var + 2 delta^2) <= 1.13 (n + 4) eps var
 * so the standardized value ((x - K) - delta) / std is within about
 * (n + 6) eps (|z| + 2) of the exact one, whatever the row's offset
 * (tests/test_layer_norm.c checks 1e-5 at mean / std = 1e4).
 * A strided row is gathered into the same lanes (same order of additions
 * as the contiguous row, except AVX-512 BF16's unordered pair load).
 */
#ifndef INFINIOP_OPS_LAYER_NORM_ROWSTATS_H
#define INFINIOP_OPS_LAYER_NORM_ROWSTATS_H

#include "cpu/vec.h"

#define INFINIOP_ROWSTATS_BLOCK 1024
#define INFINIOP_ROWSTATS_HEAD 256

/* Elements j .. j + min(n, VL) - 1 of a row of stride s as one vector, the
 * other lanes 0. */
INFINIOP_ALWAYS_INLINE vf rs_load(const void *x, ptrdiff_t s, size_t j, infiniDtype_t t, ptrdiff_t n) {
    if (s == 1) return v_load_upto(V_CAT(x, t, j), t, n);
    vf v = v_splat(0.0f);
    for (int l = 0; l < VL && l < n; ++l) v[l] = infiniop_load_f32(x, (ptrdiff_t)(j + (size_t)l) * s, t);
    return v;
}

/* Whole steps of VW elements [j, j1) ((j1 - j) % VW == 0) of one block of
 * infiniop_cpu_row_sums into its lane accumulators a1 and, when a2, a2. */
INFINIOP_ALWAYS_INLINE void infiniop_cpu_row_steps(const void *x, ptrdiff_t s, size_t j, size_t j1, infiniDtype_t t,
                                                   float shift, vf *a1, vf *a2, bool prefetch) {
    for (; j + VW <= j1; j += VW) {
        if (prefetch && s == 1) V_PREFETCH_SPAN(V_CAT(x, t, j), VW * (t == INFINI_DTYPE_F32 ? 4 : 2));
        for (int k = 0; k < VN; k += 2) {
            vf v[2];
            if (s == 1) v_load2_unordered(V_CAT(x, t, j + k * VL), t, &v[0], &v[1]);
            else {
                v[0] = rs_load(x, s, j + k * VL, t, VL);
                v[1] = rs_load(x, s, j + (k + 1) * VL, t, VL);
            }
            for (int h = 0; h < 2; ++h) {
                vf d = v[h] - shift;
                a1[k + h] += d;
                if (a2) a2[k + h] = v_fma(d, d, a2[k + h]);
            }
        }
    }
}
/* The end of a block at j (fewer than VW elements [j, j1) left): the
 * partial step, then the lanes' totals added to *t1 (and *t2 when a2). */
INFINIOP_ALWAYS_INLINE void infiniop_cpu_row_block_end(const void *x, ptrdiff_t s, size_t j, size_t j1,
                                                       infiniDtype_t t, float shift, vf *a1, vf *a2, float *t1,
                                                       float *t2) {
    for (int k = 0; j < j1 && k < VN; ++k) { /* the last partial step: zero lanes add 0 */
        ptrdiff_t m = (ptrdiff_t)(j1 - j) - k * VL;
        vf v = rs_load(x, s, j + (size_t)k * VL, t, m);
        vf d = v_sel(v_first(m > 0 ? (size_t)m : 0), v - shift, v_splat(0.0f));
        a1[k] += d;
        if (a2) a2[k] = v_fma(d, d, a2[k]);
    }
    *t1 += v_hsum_w(a1);
    if (a2) *t2 += v_hsum_w(a2);
}

/* Over elements [0, n) of a row of stride s: *s1 = sum (x - shift) and,
 * when s2, *s2 = sum (x - shift)^2, in one pass (the blocking above).
 * prefetch: the row is read from memory (contiguous rows only). */
INFINIOP_ALWAYS_INLINE void infiniop_cpu_row_sums(const void *x, ptrdiff_t s, size_t n, infiniDtype_t t, float shift,
                                                  float *s1, float *s2, bool prefetch) {
    float t1 = 0.0f, t2 = 0.0f;
    for (size_t j0 = 0; j0 < n; j0 += INFINIOP_ROWSTATS_BLOCK) {
        size_t j1 = j0 + INFINIOP_ROWSTATS_BLOCK < n ? j0 + INFINIOP_ROWSTATS_BLOCK : n, js = j1 - (j1 - j0) % VW;
        vf a1[VN], a2[VN];
        for (int k = 0; k < VN; ++k) a1[k] = a2[k] = v_splat(0.0f);
        infiniop_cpu_row_steps(x, s, j0, js, t, shift, a1, s2 ? a2 : NULL, prefetch);
        infiniop_cpu_row_block_end(x, s, js, j1, t, shift, a1, s2 ? a2 : NULL, &t1, &t2);
    }
    *s1 = t1;
    if (s2) *s2 = t2;
}

/* A row's statistics: mean = shift + delta (never rounded as one float),
 * population variance var >= 0 (NaN for a row with a NaN or an infinity). */
typedef struct {
    float shift, delta, var;
} infiniop_cpu_moments_t;

/* The shift K of a row of D elements of stride s: the mean of its head. */
INFINIOP_ALWAYS_INLINE float infiniop_cpu_row_head(const void *x, ptrdiff_t s, size_t D, infiniDtype_t t) {
    size_t head = D < INFINIOP_ROWSTATS_HEAD ? D : INFINIOP_ROWSTATS_HEAD;
    float K;
    infiniop_cpu_row_sums(x, s, head, t, 0.0f, &K, NULL, false);
    return K / (float)head;
}

/* The statistics from the first pass's sums s1, s2 at shift K, with the
 * second pass where the header comment asks for it. */
INFINIOP_ALWAYS_INLINE infiniop_cpu_moments_t infiniop_cpu_row_moments_end(const void *x, ptrdiff_t s, size_t D,
                                                                           infiniDtype_t t, float K, float s1,
                                                                           float s2) {
    float delta = s1 / (float)D, var = (s2 - s1 * delta) / (float)D;
    if (!(16.0f * delta * delta <= var)) { /* the head is off the mean, or NaN */
        K += delta;
        infiniop_cpu_row_sums(x, s, D, t, K, &s1, &s2, false);
        delta = s1 / (float)D;
        var = (s2 - s1 * delta) / (float)D;
    }
    if (var < 0.0f) var = 0.0f; /* rounding; NaN stays NaN */
    infiniop_cpu_moments_t m = {K, delta, var};
    return m;
}

/* The statistics of the D elements of a row of stride s (header comment). */
INFINIOP_ALWAYS_INLINE infiniop_cpu_moments_t infiniop_cpu_row_moments(const void *x, ptrdiff_t s, size_t D,
                                                                       infiniDtype_t t, bool prefetch) {
    float K = infiniop_cpu_row_head(x, s, D, t), s1, s2;
    infiniop_cpu_row_sums(x, s, D, t, K, &s1, &s2, prefetch);
    return infiniop_cpu_row_moments_end(x, s, D, t, K, s1, s2);
}

#endif /* INFINIOP_OPS_LAYER_NORM_ROWSTATS_H */
