/*
 * ops/add_rms_norm/cpu.c - add_rms_norm on the CPU.
 *
 * Rows are split over the OpenMP pool in cache-sized tasks (one call on the
 * calling thread when small: decode). Two passes over a row, the second
 * from cache:
 *   1. r = a + b, accumulate r^2 in float32 vector lanes per 1024-element
 *      block, blocks summed in order (error grows with D/1024, not D); half
 *      rows of up to RBUF elements (vector path) keep r in a float32 buffer;
 *   2. read r back from it (or recompute it), write residual_out = round(r)
 *      and y = round(r * rsqrt(mean + eps) * w).
 * Outputs are written only in pass 2, element j after a[j], b[j] are read,
 * so y or residual_out may alias a or b exactly.
 * The vector path (cpu/vec.h) needs a weight of stride 1; a strided weight
 * takes the scalar path, which keeps the same summation structure.
 */
#include "add_rms_norm.h"
#include "cpu/vec.h"

#include <math.h>

#define BLOCK 1024
/* Half-precision rows up to RBUF long keep r in a float32 stack buffer
 * (32 KiB): pass 2 reads it instead of loading, widening and adding a and b
 * again: fewer instructions a row, the decode case's cost. float32 rows
 * recompute r: nothing to widen, and the buffer's stores did not pay there
 * (measurements: bench/NOTES.md, CPU decode). */
#define RBUF 8192

typedef struct {
    const infiniopAddRMSNormInfo *info;
    char *y, *res;
    const char *a, *b, *w;
    bool stream; /* outputs larger than the caches: streaming stores */
    bool skew;    /* streaming stores, the weight of unit stride, and float32 rows and weight
                     (rows_f32_skew) or half rows whose two rows of r fit the buffer
                     (rows_typed; on the AVX2 pass BF16 rows and weight rows_bf16_lp_skew):
                     rows skewed by one where the pass's vector step divides D */
    size_t group; /* rows per item of the parallel loop (rows_body) */
} ctx_t;

/* Row r's pointers to a, b, y, residual_out. */
typedef struct {
    const char *a, *b;
    char *y, *res;
} rowptr_t;

INFINIOP_ALWAYS_INLINE rowptr_t row_pointers(const ctx_t *c, infiniDtype_t at, size_t r) {
    const infiniopRowLayout *L = &c->info->rows;
    ptrdiff_t es = infiniop_cpu_elt_size(at);
    rowptr_t p = {c->a + infiniop_cpu_row_offset(L, ARN_A, r) * es, c->b + infiniop_cpu_row_offset(L, ARN_B, r) * es,
                  c->y + infiniop_cpu_row_offset(L, ARN_Y, r) * es, c->res + infiniop_cpu_row_offset(L, ARN_RES, r) * es};
    return p;
}

INFINIOP_ALWAYS_INLINE void row_scalar(const ctx_t *c, infiniDtype_t at, infiniDtype_t wt, size_t r) {
    const infiniopAddRMSNormInfo *info = c->info;
    size_t D = info->rows.ncols;
    rowptr_t p = row_pointers(c, at, r);
    float total = 0.0f;
    for (size_t j0 = 0; j0 < D; j0 += BLOCK) {
        size_t j1 = j0 + BLOCK < D ? j0 + BLOCK : D;
        float s = 0.0f;
        for (size_t j = j0; j < j1; ++j) {
            float v = infiniop_load_f32(p.a, (ptrdiff_t)j, at) + infiniop_load_f32(p.b, (ptrdiff_t)j, at);
            s += v * v;
        }
        total += s;
    }
    float scale = 1.0f / sqrtf(total / (float)D + info->epsilon);
    for (size_t j = 0; j < D; ++j) {
        float v = infiniop_load_f32(p.a, (ptrdiff_t)j, at) + infiniop_load_f32(p.b, (ptrdiff_t)j, at);
        infiniop_store_f32(p.res, (ptrdiff_t)j, at, v);
        infiniop_store_f32(p.y, (ptrdiff_t)j, at, v * scale * infiniop_load_f32(c->w, (ptrdiff_t)j * info->w_stride, wt));
    }
}

/* rb: NULL, or room for D rounded up to VL floats: pass 1 keeps r there and
 * pass 2 reads it back instead of loading, converting and adding a and b
 * again (the same float32 values, so the same outputs). wb: NULL, or the
 * weight as float32 (the same values as its loads give). */
INFINIOP_ALWAYS_INLINE void row_vector(const ctx_t *c, infiniDtype_t at, infiniDtype_t wt, size_t r, float *rb,
                                       const float *wb) {
    const infiniopAddRMSNormInfo *info = c->info;
    size_t D = info->rows.ncols;
    rowptr_t p = row_pointers(c, at, r);
    float total = 0.0f;
    for (size_t j0 = 0; j0 < D; j0 += BLOCK) {
        size_t j1 = j0 + BLOCK < D ? j0 + BLOCK : D, j = j0;
        vf acc[VN];
        for (int k = 0; k < VN; ++k) acc[k] = v_splat(0.0f);
        for (; j + VW <= j1; j += VW) {
            V_PREFETCH_SPAN(V_CAT(p.a, at, j), VW * (at == INFINI_DTYPE_F32 ? 4 : 2));
            V_PREFETCH_SPAN(V_CAT(p.b, at, j), VW * (at == INFINI_DTYPE_F32 ? 4 : 2));
            for (int k = 0; k < VN; ++k) {
                vf v = v_load(V_CAT(p.a, at, j + k * VL), at) + v_load(V_CAT(p.b, at, j + k * VL), at);
                if (rb) v_store(rb + j + k * VL, INFINI_DTYPE_F32, v);
                acc[k] += v * v;
            }
        }
        for (int k = 0; j < j1 && k < VN; ++k) { /* the last partial step: zero lanes add 0 */
            ptrdiff_t n = (ptrdiff_t)(j1 - j) - k * VL;
            vf v = v_load_upto(V_CAT(p.a, at, j + k * VL), at, n) + v_load_upto(V_CAT(p.b, at, j + k * VL), at, n);
            if (rb) v_store(rb + j + k * VL, INFINI_DTYPE_F32, v);
            acc[k] += v * v;
        }
        total += v_hsum_w(acc);
    }
    float scale = 1.0f / sqrtf(total / (float)D + info->epsilon);
    bool stream = c->stream; /* locals: the stores may alias *c for the compiler */
    const char *w = c->w;
#define ARN_W(jj) (wb ? v_load(wb + (jj), INFINI_DTYPE_F32) : v_load(V_CAT(w, wt, (jj)), wt))
    size_t j = 0;
    for (; j + 2 * VL <= D; j += 2 * VL) {
        vf v0 = rb ? v_load(rb + j, INFINI_DTYPE_F32) : v_load(V_CAT(p.a, at, j), at) + v_load(V_CAT(p.b, at, j), at);
        vf v1 = rb ? v_load(rb + j + VL, INFINI_DTYPE_F32)
                   : v_load(V_CAT(p.a, at, j + VL), at) + v_load(V_CAT(p.b, at, j + VL), at);
        v_put2x2(V_AT(p.res, at, j), V_AT(p.y, at, j), at, v0, v1, v0 * scale * ARN_W(j), v1 * scale * ARN_W(j + VL),
                 stream);
    }
    for (; j + VL <= D; j += VL) {
        vf v = rb ? v_load(rb + j, INFINI_DTYPE_F32) : v_load(V_CAT(p.a, at, j), at) + v_load(V_CAT(p.b, at, j), at);
        v_put(V_AT(p.res, at, j), at, v, stream);
        v_put(V_AT(p.y, at, j), at, v * scale * ARN_W(j), stream);
    }
#undef ARN_W
    if (j < D) {
        size_t n = D - j;
        vf v = rb ? v_load(rb + j, INFINI_DTYPE_F32) : v_load_n(V_CAT(p.a, at, j), at, n) + v_load_n(V_CAT(p.b, at, j), at, n);
        v_store_n(V_AT(p.res, at, j), at, v, n);
        v_store_n(V_AT(p.y, at, j), at, v * scale * v_load_n(V_CAT(c->w, wt, j), wt, n), n);
    }
}

#if defined(__AVX2__) && VL == 8
/* Sum of the four accumulators of row_bf16_lp (lane-pair order, below) by
 * the tree of v_hsum_w over the element-order accumulators A0..A3 (A_k:
 * elements 8k..8k+7 of each step of 32): acc[0] = A0[0..3] A1[0..3],
 * acc[1] = A0[4..7] A1[4..7], acc[2], acc[3] the same of A2, A3. So
 * X = acc[0] + acc[2] holds (A0 + A2)[0..3], (A1 + A3)[0..3] and
 * Y = acc[1] + acc[3] lanes 4..7 of both; v_hsum_w's lanes 0-3 are
 * X.lo + X.hi, lanes 4-7 Y.lo + Y.hi, and its l + (l + 4) step their sum.
 * Every addition is v_hsum_w's, operands in its order: the same float. */
INFINIOP_ALWAYS_INLINE float hsum_lp(const vf *acc) {
    __m256 x = (__m256)(acc[0] + acc[2]), y = (__m256)(acc[1] + acc[3]);
    __m128 x4 = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
    __m128 y4 = _mm_add_ps(_mm256_castps256_ps128(y), _mm256_extractf128_ps(y, 1));
    __m128 s4 = _mm_add_ps(x4, y4);
    __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    __m128 s1 = _mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1));
    return _mm_cvtss_f32(s1);
}

/* Pass 1 on 32 BF16 of a and b in lane-pair order: r into rb (the same
 * order), r^2 into acc. */
INFINIOP_ALWAYS_INLINE void step_bf16_lp(const char *a, const char *b, float *rb, vf *acc) {
    for (int k = 0; k < 2; ++k) {
        vf a0, a1, b0, b1;
        v_load_bf16x2_lp(a + 32 * k, &a0, &a1);
        v_load_bf16x2_lp(b + 32 * k, &b0, &b1);
        vf v0 = a0 + b0, v1 = a1 + b1;
        *(vf *)(rb + 16 * k) = v0;
        *(vf *)(rb + 16 * k + 8) = v1;
        acc[2 * k] += v0 * v0;
        acc[2 * k + 1] += v1 * v1;
    }
}

/* Pass 2 of row_bf16_lp: residual_out and y from rb (lane-pair order);
 * check_res: residual_out's pairs take the NaN test. */
INFINIOP_ALWAYS_INLINE void out_bf16_lp(rowptr_t p, const char *w, const float *rb, size_t D, float scale, bool stream,
                                        bool check_res) {
    vf sv = v_splat(scale);
    size_t j = 0;
    for (; j + 4 * VL <= D; j += 4 * VL) /* two pairs an iteration: half the loop's own operations */
        for (size_t k = j; k < j + 4 * VL; k += 2 * VL) {
            vf v0 = *(const vf *)(rb + k), v1 = *(const vf *)(rb + k + VL), w0, w1;
            v_load_bf16x2_lp(w + 2 * k, &w0, &w1);
            v_put_bf16x2_lp(p.res + 2 * k, v0, v1, stream, check_res);
            v_put_bf16x2_lp(p.y + 2 * k, v0 * sv * w0, v1 * sv * w1, stream, true);
        }
    for (; j + 2 * VL <= D; j += 2 * VL) {
        vf v0 = *(const vf *)(rb + j), v1 = *(const vf *)(rb + j + VL), w0, w1;
        v_load_bf16x2_lp(w + 2 * j, &w0, &w1);
        v_put_bf16x2_lp(p.res + 2 * j, v0, v1, stream, check_res);
        v_put_bf16x2_lp(p.y + 2 * j, v0 * sv * w0, v1 * sv * w1, stream, true);
    }
    if (j < D) {
        size_t n = D - j;
        _Alignas(32) uint16_t tw[2 * VL] = {0}, tr[2 * VL], ty[2 * VL];
        memcpy(tw, w + 2 * j, 2 * n);
        vf v0 = *(const vf *)(rb + j), v1 = *(const vf *)(rb + j + VL), w0, w1;
        v_load_bf16x2_lp(tw, &w0, &w1);
        v_put_bf16x2_lp(tr, v0, v1, false, true);
        v_put_bf16x2_lp(ty, v0 * sv * w0, v1 * sv * w1, false, true);
        memcpy(p.res + 2 * j, tr, 2 * n);
        memcpy(p.y + 2 * j, ty, 2 * n);
    }
}

/* BF16 rows with a BF16 weight on AVX2 (the decode case): row_vector's
 * arithmetic, the same floats in the same order (so the same bits), in
 * lane-pair order (v_load_bf16x2_lp): each load of 8 halves one operation
 * where v_load takes two, each pair store one pack without the lane
 * permutation. r is proved finite when the sum of squares is (an infinite
 * or NaN r makes it so): then residual_out's pairs skip the NaN test; y's
 * keep it (a NaN or infinite weight). Partial steps go through zero-filled
 * stack copies (the zeros add +0 to the sums, as v_load_upto's lanes do),
 * rb holding D rounded up to 32. */
INFINIOP_ALWAYS_INLINE void row_bf16_lp(const ctx_t *c, size_t r, float *rb, bool stream, bool prefetch) {
    const infiniopAddRMSNormInfo *info = c->info;
    size_t D = info->rows.ncols;
    rowptr_t p = row_pointers(c, INFINI_DTYPE_BF16, r);
    float total = 0.0f;
    for (size_t j0 = 0; j0 < D; j0 += BLOCK) {
        size_t j1 = j0 + BLOCK < D ? j0 + BLOCK : D, j = j0;
        vf acc[VN];
        for (int k = 0; k < VN; ++k) acc[k] = v_splat(0.0f);
        for (; j + VW <= j1; j += VW) {
            if (prefetch) {
                V_PREFETCH(p.a + 2 * j);
                V_PREFETCH(p.b + 2 * j);
            }
            step_bf16_lp(p.a + 2 * j, p.b + 2 * j, rb + j, acc);
        }
        if (j < j1) {
            _Alignas(32) uint16_t ta[VW] = {0}, tb[VW] = {0};
            memcpy(ta, p.a + 2 * j, 2 * (j1 - j));
            memcpy(tb, p.b + 2 * j, 2 * (j1 - j));
            step_bf16_lp((const char *)ta, (const char *)tb, rb + j, acc);
        }
        total += hsum_lp(acc);
    }
    float scale = 1.0f / sqrtf(total / (float)D + info->epsilon);
    /* every r finite: residual_out has no NaN (a loop without the test) */
    if (isfinite(total)) out_bf16_lp(p, c->w, rb, D, scale, stream, false);
    else out_bf16_lp(p, c->w, rb, D, scale, stream, true);
}
/* Streaming BF16 rows with D % VW == 0: pass 1 of row pn (r into rbn; its
 * sum, returned) in the same loop as pass 2 of row po (from rbo, outputs at
 * scale); either may be NULL. Each row takes row_bf16_lp's operations in its
 * order (the same floats, so the same bits); only the two rows' instructions
 * interleave, so that the next row's reads overlap this row's streaming
 * stores, as rows_f32_skew does for float32 rows (2-vCPU Sapphire Rapids
 * guest, 2 threads, % of copy: bf16 65536x128 72-76% -> 92-94%, 4096x4096
 * with items of 16 rows 80-84% -> 88-91%; bench/NOTES.md session 19). */
INFINIOP_ALWAYS_INLINE float bf16_lp_skew(const ctx_t *c, const rowptr_t *pn, float *rbn, const rowptr_t *po,
                                          const float *rbo, float scale, bool check_res) {
    size_t D = c->info->rows.ncols;
    const char *w = c->w;
    const vf sv = v_splat(scale);
    float total = 0.0f;
    for (size_t j0 = 0; j0 < D; j0 += BLOCK) {
        size_t j1 = j0 + BLOCK < D ? j0 + BLOCK : D;
        vf acc[VN];
        for (int k = 0; k < VN; ++k) acc[k] = v_splat(0.0f);
        for (size_t j = j0; j < j1; j += VW) {
            if (pn) {
                V_PREFETCH(pn->a + 2 * j);
                V_PREFETCH(pn->b + 2 * j);
                step_bf16_lp(pn->a + 2 * j, pn->b + 2 * j, rbn + j, acc);
            }
            if (po)
                for (size_t k = j; k < j + VW; k += 2 * VL) {
                    vf v0 = *(const vf *)(rbo + k), v1 = *(const vf *)(rbo + k + VL), w0, w1;
                    v_load_bf16x2_lp(w + 2 * k, &w0, &w1);
                    v_put_bf16x2_lp(po->res + 2 * k, v0, v1, true, check_res);
                    v_put_bf16x2_lp(po->y + 2 * k, v0 * sv * w0, v1 * sv * w1, true, true);
                }
        }
        if (pn) total += hsum_lp(acc);
    }
    return total;
}
/* Each variant its own function: inlined into the kernel with the other
 * dtype pairs, GCC kept pass 1's accumulators on the stack (one row:
 * 16,175 instructions against 14,723 with the prefetch). */
static __attribute__((noinline)) void rows_bf16_lp_stream(const ctx_t *c, size_t r0, size_t r1, float *rb) {
    for (size_t r = r0; r < r1; ++r) row_bf16_lp(c, r, rb, true, true);
    v_stream_fence();
}
static __attribute__((noinline)) void rows_bf16_lp_rows(const ctx_t *c, size_t r0, size_t r1, float *rb) {
    for (size_t r = r0; r < r1; ++r) row_bf16_lp(c, r, rb, false, true);
}
static __attribute__((noinline)) void rows_bf16_lp_one(const ctx_t *c, size_t r, float *rb) { row_bf16_lp(c, r, rb, false, false); }
#endif

/* Streaming rows (outputs larger than the caches), D % VW == 0, a weight of
 * unit stride: pass 1 of row pn (its sum, returned) in the same loop as
 * pass 2 of row po (outputs at scale); either may be NULL. Each row takes
 * row_vector's operations in its order (the same bits); only the two rows'
 * instructions interleave, so the memory reads of the next row overlap the
 * streaming stores of this one, where row_vector runs a read-only pass then
 * a store-only pass (f32 4096x4096, 2 threads: 81-84% of copy -> 90-93%,
 * bench/NOTES.md session 18; BF16 on a Zen 4 guest's AVX-512 pass:
 * bench/NOTES.md session 24). float32 rows (rbn, rbo NULL) form r = a + b
 * again in pass 2; half rows keep it in the buffers rbn (pn's, written)
 * and rbo (po's, read); the weight is read as it is, of type wt (the
 * same values as row_vector's float32 copy of a half weight). Rows are
 * distinct (po's outputs may alias po's inputs exactly, as in row_vector,
 * never pn's). */
INFINIOP_ALWAYS_INLINE float vec_skew(const ctx_t *c, infiniDtype_t at, const rowptr_t *pn, float *rbn,
                                      const rowptr_t *po, const float *rbo, infiniDtype_t wt, float scale) {
    size_t D = c->info->rows.ncols;
    const char *w = c->w;
    const size_t es = at == INFINI_DTYPE_F32 ? 4 : 2;
    float total = 0.0f;
    for (size_t j0 = 0; j0 < D; j0 += BLOCK) {
        size_t j1 = j0 + BLOCK < D ? j0 + BLOCK : D;
        vf acc[VN];
        for (int k = 0; k < VN; ++k) acc[k] = v_splat(0.0f);
        for (size_t j = j0; j < j1; j += VW) {
            if (pn) {
                V_PREFETCH_SPAN(V_CAT(pn->a, at, j), VW * es);
                V_PREFETCH_SPAN(V_CAT(pn->b, at, j), VW * es);
                for (int k = 0; k < VN; ++k) {
                    vf v = v_load(V_CAT(pn->a, at, j + k * VL), at) + v_load(V_CAT(pn->b, at, j + k * VL), at);
                    if (rbn) v_store(rbn + j + k * VL, INFINI_DTYPE_F32, v);
                    acc[k] += v * v;
                }
            }
            if (po)
                for (size_t i = j; i < j + VW; i += 2 * VL) {
                    vf v0 = rbo ? v_load(rbo + i, INFINI_DTYPE_F32)
                                : v_load(V_CAT(po->a, at, i), at) + v_load(V_CAT(po->b, at, i), at);
                    vf v1 = rbo ? v_load(rbo + i + VL, INFINI_DTYPE_F32)
                                : v_load(V_CAT(po->a, at, i + VL), at) + v_load(V_CAT(po->b, at, i + VL), at);
                    v_put2x2(V_AT(po->res, at, i), V_AT(po->y, at, i), at, v0, v1,
                             v0 * scale * v_load(V_CAT(w, wt, i), wt), v1 * scale * v_load(V_CAT(w, wt, i + VL), wt),
                             true);
                }
        }
        if (pn) total += v_hsum_w(acc);
    }
    return total;
}

/* One step of the skewed rows: pass 1 of row pn with pass 2 of row po (either
 * may be NULL), BF16 lane-pair rows through the buffers rbn, rbo (lp, the AVX2
 * pass) or vec_skew's rows (half rows through rbn, rbo, float32 rows without);
 * its sum of row pn returned. */
INFINIOP_ALWAYS_INLINE float skew_step(const ctx_t *c, infiniDtype_t at, bool lp, const rowptr_t *pn, float *rbn,
                                       const rowptr_t *po, const float *rbo, infiniDtype_t wt, float scale,
                                       bool check_res) {
#if defined(__AVX2__) && VL == 8
    if (lp)
        return check_res ? bf16_lp_skew(c, pn, rbn, po, rbo, scale, true)
                         : bf16_lp_skew(c, pn, rbn, po, rbo, scale, false);
#endif
    (void)lp, (void)check_res;
    return vec_skew(c, at, pn, rbn, po, rbo, wt, scale);
}
/* Rows r0..r1-1 skewed by one: row r's outputs with row r + 1's sum (rb:
 * NULL for float32 rows, else room for two rows' r, 2 D <= RBUF; wt: the
 * weight's type). */
INFINIOP_ALWAYS_INLINE void rows_skew(const ctx_t *c, infiniDtype_t at, infiniDtype_t wt, bool lp, size_t r0,
                                      size_t r1, float *rb) {
    const infiniopAddRMSNormInfo *info = c->info;
    size_t D = info->rows.ncols;
    float *rbo = rb, *rbn = rb ? rb + D : NULL;
    rowptr_t po = row_pointers(c, at, r0);
    float total = skew_step(c, at, lp, &po, rbo, NULL, NULL, wt, 0.0f, false);
    for (size_t r = r0; r < r1; ++r) {
        float scale = 1.0f / sqrtf(total / (float)D + info->epsilon);
        bool check_res = !isfinite(total); /* row_bf16_lp's rule (the others need none) */
        const bool next = r + 1 < r1;
        rowptr_t pn = next ? row_pointers(c, at, r + 1) : po;
        total = skew_step(c, at, lp, next ? &pn : NULL, rbn, &po, rbo, wt, scale, check_res);
        po = pn;
        float *tb = rbo;
        rbo = rbn, rbn = tb;
    }
    v_stream_fence();
}
static __attribute__((noinline)) void rows_f32_skew(const ctx_t *c, size_t r0, size_t r1) {
    rows_skew(c, INFINI_DTYPE_F32, INFINI_DTYPE_F32, false, r0, r1, NULL);
}
#if defined(__AVX2__) && VL == 8
static __attribute__((noinline)) void rows_bf16_lp_skew(const ctx_t *c, size_t r0, size_t r1, float *rb) {
    rows_skew(c, INFINI_DTYPE_BF16, INFINI_DTYPE_BF16, true, r0, r1, rb);
}
#endif

INFINIOP_ALWAYS_INLINE void rows_typed(const ctx_t *c, infiniDtype_t at, infiniDtype_t wt, size_t r0, size_t r1) {
    size_t D = c->info->rows.ncols;
    if ((c->info->w_stride == 1 || D == 1) && at != INFINI_DTYPE_F32 && D <= RBUF) {
        _Alignas(64) float rb[RBUF + VL];
#if defined(__AVX2__) && VL == 8
        if (at == INFINI_DTYPE_BF16 && wt == INFINI_DTYPE_BF16) {
            /* one row (decode): no prefetch; D <= RBUF, so every line
             * V_PREFETCH_BYTES ahead lies past the row's end */
            if (c->skew && D % VW == 0) rows_bf16_lp_skew(c, r0, r1, rb);
            else if (c->stream) rows_bf16_lp_stream(c, r0, r1, rb);
            else if (c->info->rows.nrows > 1) rows_bf16_lp_rows(c, r0, r1, rb);
            else rows_bf16_lp_one(c, r0, rb);
            return;
        }
#endif
        /* streaming rows skewed by one (ctx_t's skew; D % VW == 0), the
         * weight read as it is: a float32 copy of it (wb below) beside the
         * two rows' buffers measured slower, likely for L1 (Zen 4 guest,
         * bf16 4096x4096, four alternations: 82-84% of copy against
         * 88-93%) */
        if (c->skew && D % VW == 0 && r1 - r0 > 1) {
            rows_skew(c, at, wt, false, r0, r1, rb);
            return;
        }
        /* several rows: the weight converted to float32 once (wb), not on
         * every row (two of pass 2's operations a half-type vector: bf16
         * rows of 128, 1 thread, in cache: bench/NOTES.md session 17);
         * one row (decode) reads it as it is */
        _Alignas(64) float wb[RBUF + VL];
        const float *wp = NULL;
        if (wt != INFINI_DTYPE_F32 && r1 - r0 > 1) {
            size_t j = 0;
            for (; j + VL <= D; j += VL) v_store(wb + j, INFINI_DTYPE_F32, v_load(V_CAT(c->w, wt, j), wt));
            if (j < D) v_store(wb + j, INFINI_DTYPE_F32, v_load_n(V_CAT(c->w, wt, j), wt, D - j));
            wp = wb;
        }
        for (size_t r = r0; r < r1; ++r) row_vector(c, at, wt, r, rb, wp);
        if (c->stream) v_stream_fence();
    } else if (c->skew && D % VW == 0) {
        rows_f32_skew(c, r0, r1);
    } else if (c->info->w_stride == 1 || D == 1) {
        for (size_t r = r0; r < r1; ++r) row_vector(c, at, wt, r, NULL, NULL);
        if (c->stream) v_stream_fence();
    } else {
        for (size_t r = r0; r < r1; ++r) row_scalar(c, at, wt, r);
    }
}

INFINIOP_ALWAYS_INLINE void rows_body(const void *ctx, size_t g0, size_t g1) {
    const ctx_t *c = ctx;
    size_t n = c->info->rows.nrows, r0 = g0 * c->group, r1 = g1 * c->group < n ? g1 * c->group : n;
    INFINIOP_DISPATCH_HALF_FLOAT(c->info->atype, AT, {
        INFINIOP_DISPATCH_HALF_FLOAT(c->info->wtype, WT, rows_typed(c, AT, WT, r0, r1));
    });
}
INFINIOP_CPU_KERNEL(add_rms_norm_rows, rows_body);

#if INFINIOP_CPU_PASS == 0

infiniStatus_t infiniop_add_rms_norm_cpu(const infiniopAddRMSNormInfo *info, void *y, void *residual_out,
                                         const void *a, const void *b, const void *w) {
    size_t n = info->rows.nrows;
    size_t bytes = n * info->rows.ncols * infiniop_dtype_size(info->atype) * 4;
    const bool stream = bytes / 2 > INFINIOP_CPU_STREAM_BYTES;
    const size_t D = info->rows.ncols;
    const bool f32 = info->atype == INFINI_DTYPE_F32 && info->wtype == INFINI_DTYPE_F32;
    const bool bf16_lp = infiniop_cpu_isa() == INFINIOP_ISA_AVX2 && info->atype == INFINI_DTYPE_BF16 &&
                         info->wtype == INFINI_DTYPE_BF16 && info->w_stride == 1 && 2 * D <= RBUF;
    /* (half rows: rows_typed's buffered path, two rows' r in its buffer) */
    const bool half = info->atype != INFINI_DTYPE_F32 && 2 * D <= RBUF;
    ctx_t c = {info, y, residual_out, a, b, w, stream,
               stream && (f32 || half) && (info->w_stride == 1 || D == 1), 1};
    /* the skewed rows' tasks: each runs its first row's pass 1 alone, so
     * items of up to 16 rows (at least 32 items) where the task size
     * (INFINIOP_CPU_TASK_BYTES) would give fewer (f32 4096x4096: 4 rows a
     * task, 85-87% of copy; 16: 90-94%), for rows that every pass skews
     * (D a multiple of the widest vector step: AVX-512's 64, or the AVX2
     * pass's 32 for its BF16 lane-pair rows) */
    if (c.skew && D % (bf16_lp ? 32 : 64) == 0) {
        c.group = n / 32 < 16 ? n / 32 : 16;
        if (c.group < 1) c.group = 1;
    }
    infiniop_cpu_parallel_for((n + c.group - 1) / c.group, bytes, add_rms_norm_rows[infiniop_cpu_isa()], &c);
    return INFINI_STATUS_SUCCESS;
}
#endif
