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
 *
 * F16, BF16 and F32 runs with unit strides take the vector path (unary_vec.h:
 * v_sigmoid_h, v_silu_h), four vectors a step, one exp per element:
 *  - AVX-512: sigmoid = 1 / (1 + e^-x) (x clamped to [-88.7, 104], +0
 *    below -88.7), silu = x / (1 + e^-x), the division by vrcp14ps and a
 *    Newton step (F32) or vrcp14ps alone (F16/BF16 outputs, with a shorter
 *    exp); silu vectors holding any x < -85 or NaN take the scalar formula;
 *  - AVX2 and generic: the formulas above lane-wise with e = e^-|x|,
 *    (x >= 0 ? 1 : e) / (1 + e) and (x >= 0 ? x : x e) / (1 + e), by a
 *    division; silu vectors holding any |x| > 80 or NaN take the scalar
 *    formula.
 * Measured over every 7th float32 (tests/test_vec.c), F32 results within
 * 3.25 ulp of the exact value on every instruction set (generic 2.33/3.25
 * for sigmoid/silu, AVX2 2.33/3.14, AVX-512 2.41/2.79; SPEC: a few ulp; the
 * tests: 4 from the correctly rounded value); results rounded to F16/BF16
 * within 2^-14.1 relative before that rounding, inside one ulp of the type.
 * Large negative x: sigmoid gives 0 or a value within 2^-126 of e^x (the
 * tests allow it); silu keeps its tiny result (scalar formula).
 * Elements are split over the OpenMP pool in tasks of about
 * INFINIOP_CPU_TASK_BYTES.
 */
#include "unary.h"
#include "unary_vec.h"

#include <math.h>

/* The scalar formulas, once for float (F32 and the half types, through
 * float) and once for double (F64): F the type, EXP its exp, CUT the x
 * below which e^x is subnormal in F (x e^x is then formed as (x h) h). */
#define UNARY_SCALAR(SUF, F, EXP, CUT)                                                                                \
    INFINIOP_ALWAYS_INLINE F sigmoid_##SUF(F x) {                                                                      \
        if (x >= (F)0) return (F)1 / ((F)1 + EXP(-x));                                                                 \
        F e = EXP(x);                                                                                                  \
        return e / ((F)1 + e);                                                                                         \
    }                                                                                                                  \
    INFINIOP_ALWAYS_INLINE F silu_##SUF(F x) {                                                                         \
        if (x >= (F)0) return x / ((F)1 + EXP(-x));                                                                    \
        if (x > (F)(CUT)) {                                                                                            \
            F e = EXP(x);                                                                                              \
            return x * e / ((F)1 + e);                                                                                 \
        }                                                                                                              \
        if (x == -(F)INFINITY) return -(F)0;                                                                           \
        F h = EXP((F)0.5 * x);                                                                                         \
        return (x * h) * h; /* 1 + e^x == 1 here */                                                                    \
    }
UNARY_SCALAR(f32, float, expf, -80.0f)
UNARY_SCALAR(f64, double, exp, -700.0)
#undef UNARY_SCALAR

/* f of the VL elements v (half: the result is rounded to F16 or BF16). */
INFINIOP_ALWAYS_INLINE vf vec_f(infiniopUnaryKind kind, vf v, bool half) {
    if (kind == INFINIOP_UNARY_SIGMOID) return v_sigmoid_h(v, half); /* any input */
    if (__builtin_expect(!v_silu_fast(v), 0)) { /* x < -85 (AVX-512) or |x| > 80 (others), or NaN */
        float in[VL], out[VL];
        memcpy(in, &v, sizeof in);
        for (int l = 0; l < VL; ++l) out[l] = silu_f32(in[l]);
        memcpy(&v, out, sizeof out);
        return v;
    }
    return v_silu_h(v, half);
}

/* f of the VL elements v where v_silu_fast(v) holds. */
INFINIOP_ALWAYS_INLINE vf vec_fast(infiniopUnaryKind kind, vf v, bool half) {
    return kind == INFINIOP_UNARY_SILU ? v_silu_h(v, half) : v_sigmoid_fast_h(v, half);
}

/* BF16 on AVX2: 32 elements a step in lane-pair order (cpu/vec_mem.h
 * v_load_bf16x2_lp): one vpunpck{l,h}wd a vector where v_load takes a
 * vpmovzxwd and a shift, and the pair's store without the lane permutation
 * (lane-wise work does not care about the order); the same values as the
 * element-order loop, element for element. Returns the elements done. */
INFINIOP_ALWAYS_INLINE size_t run_bf16_lp(infiniopUnaryKind kind, void *out, const void *in, size_t n, bool stream) {
    size_t k = 0;
#if defined(__AVX2__) && VL == 8
    for (; k + 4 * VL <= n; k += 4 * VL) {
        V_PREFETCH_SPAN(V_CAT(in, INFINI_DTYPE_BF16, k), 4 * VL * 2);
        vf x0, x1, x2, x3;
        v_load_bf16x2_lp(V_CAT(in, INFINI_DTYPE_BF16, k), &x0, &x1);
        v_load_bf16x2_lp(V_CAT(in, INFINI_DTYPE_BF16, k + 2 * VL), &x2, &x3);
        if (__builtin_expect(v_silu_fast4(x0, x1, x2, x3), 1)) { /* no lane NaN: finite results */
            v_put2x2_lp(V_AT(out, INFINI_DTYPE_BF16, k), V_AT(out, INFINI_DTYPE_BF16, k + 2 * VL),
                        vec_fast(kind, x0, true), vec_fast(kind, x1, true), vec_fast(kind, x2, true),
                        vec_fast(kind, x3, true), stream, false);
        } else {
            v_put_bf16x2_lp(V_AT(out, INFINI_DTYPE_BF16, k), vec_f(kind, x0, true), vec_f(kind, x1, true), stream,
                            true);
            v_put_bf16x2_lp(V_AT(out, INFINI_DTYPE_BF16, k + 2 * VL), vec_f(kind, x2, true), vec_f(kind, x3, true),
                            stream, true);
        }
    }
#else
    (void)kind, (void)out, (void)in, (void)n, (void)stream;
#endif
    return k;
}

/* A unit-stride run of n elements, two vectors a step (kind, t and stream
 * are compile-time constants at each call). */
INFINIOP_ALWAYS_INLINE void run_vec_k(infiniopUnaryKind kind, infiniDtype_t t, void *out, const void *in, size_t n,
                                      bool stream) {
    const bool half = t != INFINI_DTYPE_F32;
    size_t k = t == INFINI_DTYPE_BF16 ? run_bf16_lp(kind, out, in, n, stream) : 0;
    for (; k + 4 * VL <= n; k += 4 * VL) {
        V_PREFETCH_SPAN(V_CAT(in, t, k), 4 * VL * (t == INFINI_DTYPE_F32 ? 4 : 2));
        vf x0 = v_load(V_CAT(in, t, k), t), x1 = v_load(V_CAT(in, t, k + VL), t);
        vf x2 = v_load(V_CAT(in, t, k + 2 * VL), t), x3 = v_load(V_CAT(in, t, k + 3 * VL), t);
        /* silu, and sigmoid's half outputs on the 8-lane passes
         * (v_sigmoid_fast_h), where every lane passes silu's fast test */
        if ((kind == INFINIOP_UNARY_SILU || (half && VL == 8)) && __builtin_expect(v_silu_fast4(x0, x1, x2, x3), 1)) {
            /* no lane NaN (v_silu_fast4), finite results: no NaN test in the BF16 stores */
            v_put2_nonan(V_AT(out, t, k), t, vec_fast(kind, x0, half), vec_fast(kind, x1, half), stream);
            v_put2_nonan(V_AT(out, t, k + 2 * VL), t, vec_fast(kind, x2, half), vec_fast(kind, x3, half), stream);
        } else {
            v_put2(V_AT(out, t, k), t, vec_f(kind, x0, half), vec_f(kind, x1, half), stream);
            v_put2(V_AT(out, t, k + 2 * VL), t, vec_f(kind, x2, half), vec_f(kind, x3, half), stream);
        }
    }
    for (; k + VL <= n; k += VL) v_put(V_AT(out, t, k), t, vec_f(kind, v_load(V_CAT(in, t, k), t), half), stream);
    if (k < n) v_store_n(V_AT(out, t, k), t, vec_f(kind, v_load_n(V_CAT(in, t, k), t, n - k), half), n - k);
}
INFINIOP_ALWAYS_INLINE void run_vec(infiniopUnaryKind kind, infiniDtype_t t, void *out, const void *in, size_t n,
                                    bool stream) {
    if (kind == INFINIOP_UNARY_SILU) {
        if (stream) run_vec_k(INFINIOP_UNARY_SILU, t, out, in, n, true);
        else run_vec_k(INFINIOP_UNARY_SILU, t, out, in, n, false);
    } else {
        if (stream) run_vec_k(INFINIOP_UNARY_SIGMOID, t, out, in, n, true);
        else run_vec_k(INFINIOP_UNARY_SIGMOID, t, out, in, n, false);
    }
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

typedef struct {
    const infiniopUnaryInfo *info;
    char *out;
    const char *in;
    bool stream;
} ctx_t;

/* Elements [i0, i1) of the layout: walk the innermost dimension in runs,
 * with one index decomposition per run. */
INFINIOP_ALWAYS_INLINE void run_range(const void *ctx, size_t i0, size_t i1) {
    const ctx_t *c = ctx;
    const infiniopUnaryInfo *info = c->info;
    char *out = c->out;
    const char *in = c->in;
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
        bool unit = os == 1 && is == 1;
        switch (info->dtype) {
#define HALF_OR_FLOAT_RUN(DT)                                                                                          \
    case DT:                                                                                                           \
        if (unit) run_vec(info->kind, DT, o, x, n, c->stream);                                                         \
        else run_f32(info->kind, DT, o, os, x, is, n);                                                                 \
        break;
            HALF_OR_FLOAT_RUN(INFINI_DTYPE_F16)
            HALF_OR_FLOAT_RUN(INFINI_DTYPE_BF16)
            HALF_OR_FLOAT_RUN(INFINI_DTYPE_F32)
#undef HALF_OR_FLOAT_RUN
        default: run_f64(info->kind, o, os, x, is, n); break;
        }
        i += n;
    }
    if (c->stream) v_stream_fence();
}
INFINIOP_CPU_KERNEL(unary_range, run_range);

#if INFINIOP_CPU_PASS == 0

infiniStatus_t infiniop_unary_cpu(const infiniopUnaryInfo *info, void *out, const void *in) {
    size_t n = info->layout.n;
    size_t bytes = 2 * n * infiniop_dtype_size(info->dtype);
    ctx_t c = {info, out, in, bytes / 2 > INFINIOP_CPU_STREAM_BYTES};
    infiniop_cpu_parallel_for(n, bytes, unary_range[infiniop_cpu_isa()], &c);
    return INFINI_STATUS_SUCCESS;
}
#endif
