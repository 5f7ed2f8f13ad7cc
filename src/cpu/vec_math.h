/*
 * cpu/vec_math.h - the vector math that several operators share: e^x for
 * x <= 0 (causal_softmax's e^(x - m), and the e^-|x| of silu and sigmoid
 * in ops/unary/unary_vec.h) and the correctly rounded division by a row
 * constant (layer_norm's standardization, causal_softmax's normalization).
 * One copy here, below both operators, rather than in one operator's folder
 * included by the other. Part of cpu/vec.h.
 */
#ifndef INFINIOP_CPU_VEC_MATH_H
#define INFINIOP_CPU_VEC_MATH_H

#include "cpu/vec_lanes.h"

/* ------------------------------------------------------------ exp */
/* e^x for x <= 0 (any such float, -inf included; x > 0 is not allowed,
 * except on AVX-512: x up to 88.72, +inf above; 1.059 ulp measured over
 * every float32 in (0, 88.72]); NaN in gives NaN out. Reduction x = n ln2 + r, |r| <= ln2/2 (ln2 split
 * in two so that n * ln2_hi is exact), a polynomial for e^r, and the
 * scaling by 2^n.
 *  - FMA passes (AVX2, AVX-512): FMA in the reduction and a degree-6
 *    polynomial 1 + r + c2 r^2 + ... + c6 r^6 (a relative minimax fit,
 *    2^-28.9 before rounding its coefficients to float) by Horner's rule
 *    in FMAs. AVX-512 scales by vscalefps, so results below the smallest
 *    normal float are the correctly scaled subnormals (one rounding);
 *    AVX2 returns 0 below it, as the generic pass.
 *  - generic pass: Cephes' polynomial 1 + r + r^2 P(r), P of degree 5, no
 *    FMA; results below the smallest normal float (x < -87.3365 =
 *    ln 2^-126) are 0: an absolute error under 2^-126.
 * Error bound, measured against the correctly rounded e^x over every
 * float32 in [-87.3365, 0] (tests/test_vec.c): generic 0.982 ulp, FMA
 * passes 1.048 ulp (the degree-6 fit
 * trades 2 operations for it); below -87.3365 an absolute error under
 * 2^-126 on every pass. */
#define V_EXP_C6 0.0013843810884281993f
#define V_EXP_C5 0.008374202065169811f
#define V_EXP_C4 0.04166800156235695f
#define V_EXP_C3 0.16666430234909058f
#define V_EXP_C2 0.4999999403953552f
/* e^r for |r| <= ln2/2 on the FMA passes: the degree-6 fit above, or for
 * results that end in a half type (half = true) a degree-4 relative fit
 * 1 + h1 r + ... + h4 r^4 (2^-18.4 before rounding; the half types' own
 * rounding step is 2^-11 (f16) or 2^-8 (bf16) relative). */
INFINIOP_ALWAYS_INLINE vf v_exp_poly(vf r, bool half) {
    vf p;
    if (half) {
        p = v_fma(v_splat(0.04151473566889763f), r, v_splat(0.16787628829479218f));
        p = v_fma(p, r, v_splat(0.5000301003456116f));
        p = v_fma(p, r, v_splat(0.9999667406082153f));
    } else {
        p = v_fma(v_splat(V_EXP_C6), r, v_splat(V_EXP_C5));
        p = v_fma(p, r, v_splat(V_EXP_C4));
        p = v_fma(p, r, v_splat(V_EXP_C3));
        p = v_fma(p, r, v_splat(V_EXP_C2));
        p = v_fma(p, r, v_splat(1.0f));
    }
    return v_fma(p, r, v_splat(1.0f));
}
#if V_FMA && VL == 16
/* 2^t for results rounded to a half type next (AVX-512): f = t - floor(t)
 * in [0, 1) by one vreduceps, a degree-4 relative fit of 2^f (2^-18.4),
 * and p 2^floor(t) by vscalefps. t itself carries the rounding of x log2e
 * (2^-24 relative: 2^-16.8 absolute at |t| = 150), so this is for half
 * outputs only. Any t: vreduceps gives 0 for t = +-inf (and |t| >= 2^23),
 * so +inf gives +inf, -inf gives 0, NaN stays NaN. */
INFINIOP_ALWAYS_INLINE __m512 v_exp2_half_512(__m512 t) {
    __m512 f = _mm512_reduce_ps(t, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(0.01342670526355505f), f, _mm512_set1_ps(0.052242428064346313f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0.24128024280071259f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0.6930448412895203f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, t); /* p 2^floor(t) */
}
#endif
#if V_FMA && VL == 8
/* 2^t for results rounded to a half type next (AVX2), t <= 126 or NaN
 * (every caller has t <= 0 up to a rounding): t clamped below at -128
 * (vmaxps with t second keeps a NaN t), n = RN(t) by the shifter, g = t - n
 * in [-0.5, 0.5] (exact), a degree-4 relative minimax fit of 2^g (2^-18.5
 * measured in float32 over every g; its constant term is not 1: 2^0 comes
 * out 1 - 7e-7), halved, times 2^(n + 1) built from the shifted bits:
 * n = -128 gives exponent field 0, the scale +0, so t <= -127.5 (2^t <
 * 2^-127.5) and t = -inf give +0 without a compare or select; t in
 * (-127.5, -126.5) gives p 2^-127, a float32 subnormal within 2^-126 of
 * 2^t (the clamp at -127 with the bias added gave +0 there). 11 operations
 * a vector (the bias add and its constant gone: callgrind AVX2 silu bf16
 * -5%, causal_softmax bf16 -3%, bench/NOTES.md session 7) where
 * v_exp_neg_h's half variant of an x - m took 17 (the reduction in ln 2
 * parts, the underflow compare and two selects). */
INFINIOP_ALWAYS_INLINE vf v_exp2_half_256_c(vf tv, bool clamp) {
    /* the shifter 1.5 * 2^23 + 128 (even: k = t + shifter rounds to the
     * same n as 1.5 * 2^23 does); k's bits are 0x4b400000 + n + 128, and
     * shifted left by 23 they are the exponent field n + 128 (n >= -128),
     * 2^(n + 1): no add of the bias. The coefficients are halved (exactly)
     * to give p / 2, so p / 2 2^(n + 1) = p 2^n. */
    const __m256 shifter = _mm256_set1_ps(12583040.0f);
    __m256 t = clamp ? _mm256_max_ps(_mm256_set1_ps(-128.0f), (__m256)tv) : (__m256)tv;
    __m256 k = _mm256_add_ps(t, shifter);
    __m256 g = _mm256_sub_ps(t, _mm256_sub_ps(k, shifter));
    __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(9.570102207e-03f * 0.5f), g, _mm256_set1_ps(5.591785908e-02f * 0.5f));
    p = _mm256_fmadd_ps(p, g, _mm256_set1_ps(2.402474433e-01f * 0.5f));
    p = _mm256_fmadd_ps(p, g, _mm256_set1_ps(6.931217909e-01f * 0.5f));
    p = _mm256_fmadd_ps(p, g, _mm256_set1_ps(9.999992847e-01f * 0.5f));
    return (vf)_mm256_mul_ps(p, (__m256)_mm256_slli_epi32((__m256i)k, 23));
}
/* clamp = false (a compile-time constant): the caller promises t >= -127
 * (or NaN); no clamp. */
INFINIOP_ALWAYS_INLINE vf v_exp2_half_256(vf t) { return v_exp2_half_256_c(t, true); }
#endif
/* v_exp_neg, and with half = true (FMA passes only; a compile-time
 * constant) for results rounded to a half type: the degree-4 polynomial
 * (AVX2: v_exp2_half_256 of RN(x log2e), 2^-17.2 relative over every float32 (ctest's sampled run: 2^-17.3), the
 * product's rounding included), or
 * v_exp2_half_512 (AVX-512: 2^-17.2), as measured (tests/test_vec.c). */
/* v_exp_neg_hu(x, half, under): under = false (a compile-time constant)
 * promises x >= -87.3365 (no result below 2^-126) and drops the
 * underflow clamp and select of the AVX2 and generic passes (AVX-512
 * ignores it: vscalefps needs none). v_exp_neg_h is under = true. */
INFINIOP_ALWAYS_INLINE vf v_exp_neg_hu(vf x, bool half, bool under) {
    const float log2e = 1.44269504088896341f, ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
    const float shifter = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
#if V_FMA && VL == 16
    /* below -104, e^x rounds to 0 (< 2^-150); vmaxps keeps a NaN x (its second operand) */
    (void)under;
    __m512 xv = _mm512_max_ps(_mm512_set1_ps(-104.0f), (__m512)x);
    if (half) return (vf)v_exp2_half_512(_mm512_mul_ps(xv, _mm512_set1_ps(log2e)));
    __m512 t = _mm512_fmadd_ps(xv, _mm512_set1_ps(log2e), _mm512_set1_ps(shifter));
    __m512 n = _mm512_sub_ps(t, _mm512_set1_ps(shifter));
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(ln2_hi), xv);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(ln2_lo), r);
    /* p 2^n, n >= -150: gradual underflow, one rounding */
    return (vf)_mm512_scalef_ps((__m512)v_exp_poly((vf)r, half), n);
#else
#if V_FMA && VL == 8
    /* half outputs: 2^(x log2e) by v_exp2_half_256, whose clamp (under:
     * sigmoid) gives 0 below 2^-127.5 and within 2^-126 of 2^t above, with
     * no compare or select (11 operations where the steps below take 17);
     * without it (silu, x >= -87.3365: t >= -126) 10, and fewer constants
     * held in registers */
    if (half) return v_exp2_half_256_c(x * v_splat(log2e), under);
#endif
    vi underflow = x < -87.3365448f; /* ln(2^-126): below it e^x is subnormal */
    if (under) x = v_sel(underflow, v_splat(-87.3365448f), x); /* NaN stays NaN */
    vf t = x * log2e + shifter;
    vf n = t - shifter;
#if V_FMA
    vf r = v_fma(-n, v_splat(ln2_hi), x);
    r = v_fma(-n, v_splat(ln2_lo), r);
    vf p = v_exp_poly(r, half);
#else
    (void)half;
    vf r = (x - n * ln2_hi) - n * ln2_lo;
    vf p = v_splat(1.9875691500e-4f);
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = (p * (r * r) + r) + 1.0f;
#endif
    vf scale = (vf)(((vu)t - 0x4b400000u + 127u) << 23); /* 2^n, n >= -126 */
    return under ? v_sel(underflow, v_splat(0.0f), p * scale) : p * scale;
#endif
}
INFINIOP_ALWAYS_INLINE vf v_exp_neg_h(vf x, bool half) { return v_exp_neg_hu(x, half, true); }
INFINIOP_ALWAYS_INLINE vf v_exp_neg(vf x) { return v_exp_neg_h(x, false); }

/* ------------------------------------------------------------ division */
/* Correctly rounded division by a row constant: d / b for every lane, equal
 * bit for bit to the division, without a vector division on FMA targets.
 * y = RN(1 / b) is computed once per row (v_div_setup); then
 *   q = RN(d y);  r = d - q b (exact, by one FMA);  q' = RN(q + r y)
 * is the correctly rounded d / b (Markstein's theorem: y within half an
 * ulp of 1/b, q within one ulp of d/b, no underflow or overflow on the
 * way). The conditions are checked: b must be normal with 2^-40 <= |b| <=
 * 2^40 (else the row divides), and a vector with any lane outside
 * 2^-80 <= |d| <= 2^80 (other than d = +-0: q' is then a zero, given q's
 * sign) divides; so |q| stays in [2^-120, 2^120] and the residual's
 * exponent at or above -103 (exact in float32). tests/test_vec.c compares
 * it with the division on random and edge inputs. */
typedef struct {
    vf b, y;
    bool fast; /* Markstein's correction applies to this divisor */
} v_div_t;
INFINIOP_ALWAYS_INLINE v_div_t v_div_setup(float b) {
    float a = b < 0.0f ? -b : b;
    v_div_t dv = {v_splat(b), v_splat(1.0f / b), V_FMA && a >= 0x1p-40f && a <= 0x1p40f};
    return dv;
}
INFINIOP_ALWAYS_INLINE vf v_div(vf d, v_div_t dv) {
#if V_FMA
    if (__builtin_expect(dv.fast, 1)) {
        /* lanes outside [2^-80, 2^80] and not zero; unsigned wrap-around
         * puts a = 0 far above the range, the nonzero test takes it back */
#if VL == 16
        __m512i a = _mm512_and_si512((__m512i)d, _mm512_set1_epi32(0x7fffffff));
        __mmask16 bad = _mm512_mask_cmpgt_epu32_mask(_mm512_test_epi32_mask(a, a),
                                                     _mm512_sub_epi32(a, _mm512_set1_epi32(0x17800000)),
                                                     _mm512_set1_epi32(0x67800000 - 0x17800000));
        if (__builtin_expect(bad == 0, 1)) {
#else
        vu a = (vu)d & 0x7fffffffu;
        vi bad = (vi)(a - 0x17800000u > 0x67800000u - 0x17800000u) & (vi)(a != 0u);
        if (__builtin_expect(!v_any(bad), 1)) {
#endif
            vf q = d * dv.y;
            vf r = v_fma(-q, dv.b, d);
            vf q1 = v_fma(r, dv.y, q);
            return (vf)((vu)q1 | ((vu)q & 0x80000000u)); /* a zero takes q's sign */
        }
    }
#endif
    return d / dv.b;
}
/* v_div for a positive divisor with dv.fast, the caller having proved
 * that every lane d is a zero or within 2^-80 <= |d| <= 2^80 (v_div's
 * conditions): no lane test. q' = RN(q - (q b - d) y), the same value as
 * v_div's RN(q + r y); for b > 0 its zero (d = +-0 only) has d's sign,
 * with no sign fix. */
INFINIOP_ALWAYS_INLINE vf v_div_pos_inrange(vf d, v_div_t dv) {
#if V_FMA && VL == 16
    __m512 q = _mm512_mul_ps((__m512)d, (__m512)dv.y);
    return (vf)_mm512_fnmadd_ps(_mm512_fmsub_ps(q, (__m512)dv.b, (__m512)d), (__m512)dv.y, q);
#elif V_FMA
    __m256 q = _mm256_mul_ps((__m256)d, (__m256)dv.y);
    return (vf)_mm256_fnmadd_ps(_mm256_fmsub_ps(q, (__m256)dv.b, (__m256)d), (__m256)dv.y, q);
#else
    return d / dv.b;
#endif
}

#endif /* INFINIOP_CPU_VEC_MATH_H */
