/*
 * ops/causal_softmax/cpu.c - causal softmax on the CPU.
 *
 * One task per row (OpenMP over rows). Over the visible columns of a row:
 * the maximum m (a NaN anywhere makes m NaN, so the row becomes NaN), the
 * sum of e^(x - m) in float32 lanes, then y = e^(x - m) / sum; the masked
 * columns are written as exact zeros. Outputs are written in the last pass,
 * element j after x[j] is read, so y may alias x exactly.
 *
 * Contiguous rows take the vector path (cpu/vec.h): the maximum, then
 * e = exp(x - m) by v_exp_neg (cpu/vec_math.h, shared with unary) (about 1 ulp; its argument is <= 0), kept
 * in a float32 buffer on the stack while the row fits (recomputed
 * otherwise) and summed in lanes per block, then y = e / sum (two rows
 * at a time, phase by phase, so that one row's reductions overlap the
 * other's passes), correctly
 * rounded without a vector division (v_div_nonneg). A row whose maximum is
 * not finite (+inf, or every visible entry -inf or NaN) is NaN over its
 * visible part, as the scalar formulas give; a NaN among finite entries
 * makes the sum NaN, hence every visible output. Rows are split
 * over the OpenMP pool in cache-sized tasks; rows of one slice grow in
 * length, which the dynamic task schedule balances.
 */
#include "causal_softmax.h"
#include "cpu/vec.h"

#include <math.h>

/* ------------------------------------------------------------ softmax's own vector math */
/* Softmax's e^(x - m) for results rounded to a half type: on AVX-512 one
 * FMA forms t = x log2e - c, c = RN(m log2e) (the caller's scalar), and
 * 2^t by v_exp2_half_512: c's rounding shifts every t of the row by the
 * same amount, a common factor that the division by the row's sum cancels
 * (it is softmax with m' = c / log2e). x = -inf gives 0. AVX2: the same
 * t by one FMA and 2^t by v_exp2_half_256 (x <= m: t is at most c's
 * rounding error above 0, inside its t <= 126).
 * Elsewhere v_exp_neg_h(x - m, true). */
INFINIOP_ALWAYS_INLINE vf v_exp_shifted_half(vf x, float m, float c) {
#if V_FMA && VL == 16
    (void)m;
    __m512 t = _mm512_fmsub_ps((__m512)x, _mm512_set1_ps(1.44269504088896341f), _mm512_set1_ps(c));
    return (vf)v_exp2_half_512(t); /* t = -inf (x = -inf): 0; NaN stays NaN */
#elif V_FMA && VL == 8
    (void)m;
    return v_exp2_half_256((vf)_mm256_fmsub_ps((__m256)x, _mm256_set1_ps(1.44269504088896341f), _mm256_set1_ps(c)));
#else
    (void)c;
    return v_exp_neg_h(x - m, true);
#endif
}
/* v_div for d >= 0 or NaN (softmax's e^(x - m)) with one compare: when
 * d <= 1 (unit: m the maximum), only lanes in (0, 2^-80) need the
 * division; else (m below the maximum: d up to e^88.7) the lanes outside
 * [2^-80, 2^80], zeros included, take it. */
INFINIOP_ALWAYS_INLINE vf v_div_nonneg(vf d, v_div_t dv, bool unit) {
    (void)unit;
#if V_FMA
    if (__builtin_expect(dv.fast, 1)) {
        /* unit: d - 1 below 2^-80's bits - 1 (unsigned) in some lane; else
         * d - 2^-80's bits at or above the span to 2^80 in some lane */
        const uint32_t lo = unit ? 1u : 0x17800000u, span = unit ? 0x17800000u - 1u : 0x67800000u - 0x17800000u + 1u;
#if VL == 16
        __mmask16 in = _mm512_cmplt_epu32_mask(_mm512_sub_epi32((__m512i)d, _mm512_set1_epi32((int)lo)),
                                               _mm512_set1_epi32((int)span));
        bool bad = unit ? in != 0 : in != (__mmask16)0xffff;
#else
        vi in = (vi)((vu)d - lo < span);
        bool bad = unit ? v_any(in) : v_any(~in);
#endif
        if (__builtin_expect(!bad, 1)) {
            vf q = d * dv.y;
            return v_fma(v_fma(-q, dv.b, d), dv.y, q); /* d >= 0: q' is +0 or positive, as d / b */
        }
    }
#endif
    return d / dv.b;
}

#define LANES 16
#define BLOCK 1024

INFINIOP_ALWAYS_INLINE void row(const infiniopCausalSoftmaxInfo *info, infiniDtype_t t, size_t r, char *y,
                                const char *x) {
    const infiniopRowLayout *L = &info->rows;
    size_t T = L->ncols, n = infiniop_causal_visible(info, r);
    ptrdiff_t es = infiniop_cpu_elt_size(t);
    const void *xr = x + infiniop_cpu_row_offset(L, CS_X, r) * es;
    void *yr = y + infiniop_cpu_row_offset(L, CS_Y, r) * es;
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

#define BUF 8192 /* visible columns kept in the stack buffer (32 KiB) */

/* One contiguous row through its three phases (maximum, exp and sum,
 * outputs); rows_body runs two rows phase by phase, so that one row's
 * reductions (maximum, sum, 1 / sum: each waits for a whole pass) overlap
 * the other row's pass. */
typedef struct {
    const void *x;
    void *y;
    size_t n, T; /* visible columns, all columns */
    float m, total;
    float *e; /* e^(x - m) of the visible columns, or NULL (recomputed) */
    bool xbuf; /* e holds x as float32 for the whole vectors (sm_max, half types) */
} smrow_t;

/* Row r, whose position in its S x T slice is i = r % S (the caller steps
 * it without a division). */
INFINIOP_ALWAYS_INLINE void sm_init(smrow_t *s, const infiniopCausalSoftmaxInfo *info, infiniDtype_t t, size_t r,
                                    size_t i, char *y, const char *x, float *buf) {
    const infiniopRowLayout *L = &info->rows;
    ptrdiff_t es = infiniop_cpu_elt_size(t);
    s->T = L->ncols;
    s->n = i + (L->ncols - info->S) + 1; /* infiniop_causal_visible */
    s->x = x + infiniop_cpu_row_offset(L, CS_X, r) * es;
    s->y = y + infiniop_cpu_row_offset(L, CS_Y, r) * es;
    s->e = s->n <= BUF ? buf : NULL;
    s->m = s->total = 0.0f;
    s->xbuf = false;
}

INFINIOP_ALWAYS_INLINE vf sm_keep(float *e, size_t j, vf v) {
    if (e) *(vf_u *)(e + j) = v;
    return v;
}

/* The maximum of the entries that are not NaN (v_max drops a NaN first
 * operand); a NaN entry makes the sum below NaN, hence the whole row. */
INFINIOP_ALWAYS_INLINE void sm_max(smrow_t *s, infiniDtype_t t) {
    const void *xr = s->x;
    size_t n = s->n, j = 0;
    /* half types: x as float32 into the buffer too, for the next pass */
    float *e = t != INFINI_DTYPE_F32 ? s->e : NULL;
#define SM_X(jj) sm_keep(e, (jj), v_load(V_CAT(xr, t, (jj)), t))
    vf vm = v_splat(-INFINITY), vm1 = vm, vm2 = vm, vm3 = vm; /* four chains: vmaxps's latency */
    for (; j + 4 * VL <= n; j += 4 * VL) {
        V_PREFETCH_SPAN(V_CAT(xr, t, j), 4 * VL * (t == INFINI_DTYPE_F32 ? 4 : 2));
        vm = v_max(SM_X(j), vm);
        vm1 = v_max(SM_X(j + VL), vm1);
        vm2 = v_max(SM_X(j + 2 * VL), vm2);
        vm3 = v_max(SM_X(j + 3 * VL), vm3);
    }
    vm = v_max(v_max(vm1, vm), v_max(vm3, vm2));
    /* the rows V_PREFETCH_BYTES ahead see a few more columns than this
     * one (the causal mask): their ends would miss without these */
    V_PREFETCH_SPAN(V_CAT(xr, t, j), 4 * VL * (t == INFINI_DTYPE_F32 ? 4 : 2));
    V_PREFETCH_SPAN(V_CAT(xr, t, n), 128);
    for (; j + VL <= n; j += VL) vm = v_max(SM_X(j), vm);
#undef SM_X
    if (j < n) vm = v_max(v_sel(v_first(n - j), v_load_n(V_CAT(xr, t, j), t, n - j), v_splat(-INFINITY)), vm);
    s->m = v_hmax(vm);
    s->xbuf = e != NULL;
}

/* On AVX-512 (SM_HEAD): the shift m is the maximum of the row's first
 * HEAD visible entries, not of the whole row (softmax is the same for any
 * shift; v_exp_shifted_half takes any argument, and v_exp_neg there any
 * argument up to 88.72, measured at 1.059 ulp over (0, 88.72]), so that the
 * row is read once from memory, by sm_sum, with no pass of its own for the
 * maximum. The sum is then at least 1, and finite unless an entry exceeds
 * m by more than ~88 or the row holds a NaN or +inf: rows_vec then takes
 * the exact maximum (sm_max) and sums again. */
#define SM_HEAD (V_FMA && VL == 16)
/* SM_HEAD rows of half types one after another, each row's output pass
 * run pair by pair inside the next row's sum (sm_sum_out). */
#define SM_FUSE SM_HEAD
/* (The output pass's loads and streaming stores then interleave with the
 * next row's exponentials instead of following them: causal_softmax bf16
 * 8x1024x1024, 2 threads, paired bench, 1.08-1.11x the bytes a second;
 * the same bits, bench/NOTES.md session 17.) */
#define HEAD (4 * VL)
INFINIOP_ALWAYS_INLINE void sm_head(smrow_t *s, infiniDtype_t t) {
    size_t n = s->n < HEAD ? s->n : HEAD, j = 0;
    vf vm = v_splat(-INFINITY);
    for (; j + VL <= n; j += VL) vm = v_max(v_load(V_CAT(s->x, t, j), t), vm);
    if (j < n) vm = v_max(v_sel(v_first(n - j), v_load_n(V_CAT(s->x, t, j), t, n - j), v_splat(-INFINITY)), vm);
    s->m = v_hmax(vm);
    s->xbuf = false;
}

/* e^(x - m) as sm_sum and sm_out compute it: c = RN(m log2e) (half
 * outputs, v_exp_shifted_half). */
INFINIOP_ALWAYS_INLINE vf sm_exp(vf x, float m, float c, bool half) {
    return half ? v_exp_shifted_half(x, m, c) : v_exp_neg_h(x - m, false);
}

/* e = e^(x - m) into the buffer and its sum, in float32 lanes per block.
 * F16/BF16 outputs: v_exp_neg_h's half variant. prefetch: x is read from
 * memory here (SM_HEAD). */
INFINIOP_ALWAYS_INLINE size_t sm_sum_out(smrow_t *s, infiniDtype_t t, bool prefetch, const smrow_t *po, bool stream);
INFINIOP_ALWAYS_INLINE void sm_sum(smrow_t *s, infiniDtype_t t, bool prefetch) { (void)sm_sum_out(s, t, prefetch, NULL, false); }
/* sm_sum, and with po (a half-type row whose sum is known, e in its
 * buffer, m finite) po's output pass over its whole pairs of columns
 * [0, returned), step by step with s's exponentials (SM_FUSE). */
INFINIOP_ALWAYS_INLINE size_t sm_sum_out(smrow_t *s, infiniDtype_t t, bool prefetch, const smrow_t *po, bool stream) {
    const bool half = t != INFINI_DTYPE_F32;
    const void *xr = s->x;
    float *e = s->e, m = s->m, total = 0.0f;
    size_t n = s->n, j, pdone = 0;
    const size_t pn = po ? po->n : 0;
    const float *pe = po ? po->e : NULL;
    void *py = po ? po->y : NULL;
    const vf prcp = v_splat(po ? 1.0f / po->total : 0.0f);
    if (!isfinite(m)) { /* SM_HEAD: a head of -inf (the rest may be finite), +inf or NaN: the caller takes */
        s->total = NAN; /* the row's maximum; after the maximum: sm_out writes the NaN row */
        return 0;
    }
    float c = m * 1.44269504088896341f; /* v_exp_shifted_half's shift */
    for (size_t j0 = 0; j0 < n; j0 += BLOCK) {
        size_t j1 = j0 + BLOCK < n ? j0 + BLOCK : n;
        vf acc[VN];
        for (int k = 0; k < VN; ++k) acc[k] = v_splat(0.0f);
        if (s->xbuf) { /* x from the buffer (every whole vector of the row is there); half types */
            for (j = j0; j + VW <= j1; j += VW)
                for (int k = 0; k < VN; ++k) {
                    vf v = v_exp_shifted_half(*(vf_u *)(e + j + k * VL), m, c);
                    *(vf_u *)(e + j + k * VL) = v;
                    acc[k] += v;
                }
        } else {
            for (j = j0; j + VW <= j1; j += VW) {
                if (prefetch) V_PREFETCH_SPAN(V_CAT(xr, t, j), VW * (t == INFINI_DTYPE_F32 ? 4 : 2));
                for (int k = 0; k < VN; ++k) {
                    vf xv = v_load(V_CAT(xr, t, j + k * VL), t);
                    vf v = sm_exp(xv, m, c, half);
                    if (e) *(vf_u *)(e + j + k * VL) = v;
                    acc[k] += v;
                }
                if (po && j + VW <= pn) { /* po's two pairs at j: sm_out_k's loop */
                    for (size_t q = j; q < j + VW; q += 2 * VL)
                        v_put2(V_AT(py, t, q), t, v_load(pe + q, INFINI_DTYPE_F32) * prcp,
                               v_load(pe + q + VL, INFINI_DTYPE_F32) * prcp, stream);
                    pdone = j + VW;
                }
            }
        }
        for (int k = 0; j < j1 && k < VN; ++k) { /* the last partial step */
            ptrdiff_t w = (ptrdiff_t)(j1 - j) - k * VL;
            if (w <= 0) break;
            vf xv = v_load_upto(V_CAT(xr, t, j + k * VL), t, w);
            vf v = sm_exp(xv, m, c, half);
            v = v_sel(v_first((size_t)w), v, v_splat(0.0f));
            if (e) *(vf_u *)(e + j + k * VL) = v; /* the buffers have VW floats of room past BUF */
            acc[k] += v;
        }
        total += v_hsum_w(acc);
    }
    if (prefetch) { /* the rows V_PREFETCH_BYTES ahead: the few more columns of theirs (sm_max) */
        V_PREFETCH_SPAN(V_CAT(xr, t, n), 128);
    }
    s->total = total;
    return pdone;
}

/* The shift and the sum of rows a and b (b may be NULL): SM_HEAD's shift
 * where it applies, row by row (the row's maximum where its sum is not
 * finite); else the maximum, phase by phase (one row's reductions overlap
 * the other's pass). */
INFINIOP_ALWAYS_INLINE void sm_stats(smrow_t *a, smrow_t *b, infiniDtype_t t) {
    smrow_t *row[2] = {a, b};
    int nrows = b ? 2 : 1;
    if (SM_HEAD) {
        for (int k = 0; k < nrows; ++k) { /* row by row: measured faster than phase by phase here */
            sm_head(row[k], t);
            sm_sum(row[k], t, true);
            if (__builtin_expect(!isfinite(row[k]->total), 0)) {
                sm_max(row[k], t);
                sm_sum(row[k], t, false);
            }
        }
        return;
    }
    for (int k = 0; k < nrows; ++k) sm_max(row[k], t);
    for (int k = 0; k < nrows; ++k) sm_sum(row[k], t, false);
}

/* y = e / total over the visible columns, zeros over the masked ones; a
 * row whose maximum is not finite (+inf, or every visible entry -inf or
 * NaN) is NaN over its visible part, as the scalar formulas give. */
INFINIOP_ALWAYS_INLINE void sm_out_k(const smrow_t *s, infiniDtype_t t, bool stream, bool ebuf, size_t j0) {
    const bool half = t != INFINI_DTYPE_F32;
    const void *xr = s->x;
    void *yr = s->y;
    const float *e = ebuf ? s->e : NULL;
    float m = s->m;
    size_t n = s->n, T = s->T, j;
    if (!isfinite(m)) {
        for (j = 0; j < n; ++j) infiniop_store_f32(yr, (ptrdiff_t)j, t, NAN);
        for (; j < T; ++j) infiniop_store_f32(yr, (ptrdiff_t)j, t, 0.0f);
        return;
    }
    /* e / total: correctly rounded for F32 outputs (v_div_nonneg); for
     * F16 and BF16 outputs e times the correctly rounded 1 / total */
    v_div_t dv = v_div_setup(s->total);
    vf rcp = v_splat(1.0f / s->total);
    float c = m * 1.44269504088896341f;
#define SM_Y(jj) (e ? v_load(e + (jj), INFINI_DTYPE_F32) : sm_exp(v_load(V_CAT(xr, t, (jj)), t), m, c, half))
/* e in [0, 1] after the maximum; up to e^88.7 after SM_HEAD's shift */
#define SM_DIV(v) (half ? (v) * rcp : v_div_nonneg((v), dv, !SM_HEAD))
    /* a finite sum: no e is NaN (a NaN x makes the sum NaN), nor any
     * output; AVX2 and generic only (the AVX-512 loop, one copy, measured
     * 6-9% slower split in two) */
    if (VL == 8 && isfinite(s->total)) {
        for (j = j0; j + 2 * VL <= n; j += 2 * VL) {
            vf a = SM_Y(j), b = SM_Y(j + VL);
            v_put2_nonan(V_AT(yr, t, j), t, SM_DIV(a), SM_DIV(b), stream);
        }
    } else {
        for (j = j0; j + 2 * VL <= n; j += 2 * VL) {
            vf a = SM_Y(j), b = SM_Y(j + VL);
            v_put2(V_AT(yr, t, j), t, SM_DIV(a), SM_DIV(b), stream);
        }
    }
    for (; j + VL <= n; j += VL) v_put(V_AT(yr, t, j), t, SM_DIV(SM_Y(j)), stream);
#undef SM_Y
    if (j < n) { /* the last partial vector of visible columns, then zeros */
        size_t k = n - j, w = T - j < VL ? T - j : VL;
        vf v = e ? v_load_n(e + j, INFINI_DTYPE_F32, k) : sm_exp(v_load_n(V_CAT(xr, t, j), t, k), m, c, half);
        v = v_sel(v_first(k), SM_DIV(v), v_splat(0.0f));
        /* a whole vector goes through v_put: a cache line written by both
         * streaming and ordinary stores (half types: two vectors a line)
         * costs a flush of the partial line, which made bf16 rows slower
         * than float32 ones */
        if (w == VL) v_put(V_AT(yr, t, j), t, v, stream);
        else v_store_n(V_AT(yr, t, j), t, v, w);
        j += w;
    }
#undef SM_DIV
    for (; j + 2 * VL <= T; j += 2 * VL) v_put_zeros2(V_AT(yr, t, j), t, stream);
    for (; j + VL <= T; j += VL) v_put_zeros(V_AT(yr, t, j), t, stream);
    if (j < T) v_store_n(V_AT(yr, t, j), t, v_splat(0.0f), T - j);
}

/* sm_out with stream and "e holds the row" as compile-time constants: the
 * loops test neither (GCC left both tests in the AVX2 output loop, 4 of
 * its 25 instructions a BF16 pair); AVX2 and generic only. */
INFINIOP_ALWAYS_INLINE void sm_out_from(const smrow_t *s, infiniDtype_t t, bool stream, size_t j0) {
    if (VL == 16) { /* AVX-512: one copy, as measured faster (bench/NOTES.md) */
        sm_out_k(s, t, stream, s->e != NULL, j0);
        return;
    }
    if (s->e) {
        if (stream) sm_out_k(s, t, true, true, j0);
        else sm_out_k(s, t, false, true, j0);
    } else {
        if (stream) sm_out_k(s, t, true, false, j0);
        else sm_out_k(s, t, false, false, j0);
    }
}

INFINIOP_ALWAYS_INLINE void sm_out(const smrow_t *s, infiniDtype_t t, bool stream) { sm_out_from(s, t, stream, 0); }

typedef struct {
    const infiniopCausalSoftmaxInfo *info;
    char *y;
    const char *x;
    bool vector, stream;
} ctx_t;

/* Rows [r0, r1): half types on AVX-512 (SM_FUSE) one at a time, each
 * row's output pass in the next row's sum; else two at a time, phase by
 * phase. */
INFINIOP_ALWAYS_INLINE void rows_vec(const ctx_t *c, infiniDtype_t t, size_t r0, size_t r1) {
    float bufa[BUF + VW], bufb[BUF + VW];
    smrow_t a, b;
    size_t r = r0, S = c->info->S, i = r0 % S; /* i: r's row in its slice */
#define SM_NEXT(i) ((i) + 1 == S ? 0 : (i) + 1)
    if (SM_FUSE && t != INFINI_DTYPE_F32) {
        smrow_t rows[2];
        float *bufs[2] = {bufa, bufb};
        smrow_t *p = NULL;
        for (int k = 0; r < r1; ++r, k ^= 1) {
            smrow_t *s = &rows[k];
            sm_init(s, c->info, t, r, i, c->y, c->x, bufs[k]);
            i = SM_NEXT(i);
            sm_head(s, t);
            /* the previous row's output, pair by pair, with this row's sum */
            bool fuse = p && p->e && isfinite(p->m);
            size_t done = sm_sum_out(s, t, true, fuse ? p : NULL, c->stream);
            if (__builtin_expect(!isfinite(s->total), 0)) {
                sm_max(s, t);
                sm_sum(s, t, false);
            }
            if (p) sm_out_from(p, t, c->stream, done);
            p = s;
        }
        if (p) sm_out(p, t, c->stream);
        return;
    }
    for (; r + 2 <= r1; r += 2) {
        sm_init(&a, c->info, t, r, i, c->y, c->x, bufa);
        i = SM_NEXT(i);
        sm_init(&b, c->info, t, r + 1, i, c->y, c->x, bufb);
        i = SM_NEXT(i);
        sm_stats(&a, &b, t);
        sm_out(&a, t, c->stream);
        sm_out(&b, t, c->stream);
    }
#undef SM_NEXT
    if (r < r1) {
        sm_init(&a, c->info, t, r, i, c->y, c->x, bufa);
        sm_stats(&a, NULL, t);
        sm_out(&a, t, c->stream);
    }
}

INFINIOP_ALWAYS_INLINE void rows_body(const void *ctx, size_t r0, size_t r1) {
    const ctx_t *c = ctx;
    INFINIOP_DISPATCH_HALF_FLOAT(c->info->dtype, DT, {
        if (c->vector) {
            rows_vec(c, DT, r0, r1);
            if (c->stream) v_stream_fence();
        } else {
            for (size_t r = r0; r < r1; ++r) row(c->info, DT, r, c->y, c->x);
        }
    });
}
INFINIOP_CPU_KERNEL(causal_softmax_rows, rows_body);

#if INFINIOP_CPU_PASS == 0

infiniStatus_t infiniop_causal_softmax_cpu(const infiniopCausalSoftmaxInfo *info, void *y, const void *x) {
    const infiniopRowLayout *L = &info->rows;
    size_t n = L->nrows;
    size_t bytes = n * L->ncols * infiniop_dtype_size(info->dtype) * 2;
    bool contiguous = L->ncols == 1 || (L->col_stride[CS_X] == 1 && L->col_stride[CS_Y] == 1);
    ctx_t c = {info, y, x, contiguous, bytes / 2 > INFINIOP_CPU_STREAM_BYTES};
    infiniop_cpu_parallel_for(n, bytes, causal_softmax_rows[infiniop_cpu_isa()], &c);
    return INFINI_STATUS_SUCCESS;
}
#endif
