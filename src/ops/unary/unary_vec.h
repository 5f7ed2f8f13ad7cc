/*
 * ops/unary/unary_vec.h - silu and sigmoid a vector at a time (the CPU
 * kernel, ops/unary/cpu.c, and tests/test_vec.c), on cpu/vec.h's exp.
 */
#ifndef INFINIOP_OPS_UNARY_VEC_H
#define INFINIOP_OPS_UNARY_VEC_H

#include "cpu/vec.h"

/* n / d, approximately: on AVX-512, n times the hardware estimate of 1 / d
 * (vrcp14ps, 2^-14 relative) after one Newton step y + y (1 - d y): about
 * 2^-28 relative before the final roundings. Elsewhere the division (AVX2's
 * vrcpps estimate, 1.5 * 2^-12, leaves 2^-22.8 after a Newton step: silu
 * measured 4.3 ulp, beyond the tests' 4). For d in [1, 2^64) (the
 * silu/sigmoid denominators); tests/test_vec.c measures silu/sigmoid. */
INFINIOP_ALWAYS_INLINE vf v_div_approx(vf n, vf d) {
#if V_FMA && VL == 16
    vf y = (vf)_mm512_rcp14_ps((__m512)d);
    y = v_fma(v_fma(-d, y, v_splat(1.0f)), y, y);
    return n * y;
#else
    return n / d;
#endif
}

/* ------------------------------------------------------------ sigmoid, silu */
#if V_FMA && VL == 16
/* AVX-512: e^-x for x clamped to [-88.7, 104] (e^88.7 < FLT_MAX: 1 + e
 * stays finite; above 104 it is 0; low = false: the caller knows x >=
 * -88.7), NaN kept: v_exp_neg's steps on -x, the negation folded into
 * the FMAs. half: no clamps, any x: v_exp2_half_512 of t = -x log2e
 * (vreduceps gives 0 for t = +-inf and for |t| >= 2^23, vscalefps then
 * +inf or 0: e^-x overflows to +inf below x = -88.7 and is 0 above 103.3). */
INFINIOP_ALWAYS_INLINE __m512 v_exp_minus_512(__m512 x, bool low, bool half) {
    const float log2e = 1.44269504088896341f, ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
    const float shifter = 12582912.0f;
    if (half) return v_exp2_half_512(_mm512_mul_ps(x, _mm512_set1_ps(-log2e)));
    if (low) x = _mm512_max_ps(_mm512_set1_ps(-88.7f), x); /* NaN: the second operand */
    x = _mm512_min_ps(_mm512_set1_ps(104.0f), x);
    __m512 t = _mm512_fnmadd_ps(x, _mm512_set1_ps(log2e), _mm512_set1_ps(shifter)); /* -x log2e, rounded to n */
    __m512 n = _mm512_sub_ps(t, _mm512_set1_ps(shifter));
    __m512 r = _mm512_fnmsub_ps(n, _mm512_set1_ps(ln2_hi), x); /* -x - n ln2_hi, exact */
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(ln2_lo), r);
    return _mm512_scalef_ps((__m512)v_exp_poly((vf)r, half), n);
}
/* 1 / (1 + e^-x) by vrcp14ps and, unless half, one Newton step; low:
 * x below -88.7 (clamped in v_exp_minus_512) gives +0 (the exact value is
 * under 2^-126; sigmoid(-inf) = 0); half: vrcp14ps of 1 + e^-x = +inf
 * is that +0, of a sum above 2^126 0 or a subnormal under 2^-126. */
INFINIOP_ALWAYS_INLINE __m512 v_sigmoid_512(__m512 x, bool low, bool half) {
    __m512 d = _mm512_add_ps(v_exp_minus_512(x, low, half), _mm512_set1_ps(1.0f));
    if (half) return _mm512_rcp14_ps(d);
    __mmask16 k = low ? _mm512_cmp_ps_mask(x, _mm512_set1_ps(-88.7f), _CMP_NLT_UQ) : (__mmask16)0xffff;
    __m512 y = _mm512_rcp14_ps(d);
    return _mm512_maskz_fmadd_ps(k, _mm512_fnmadd_ps(d, y, _mm512_set1_ps(1.0f)), y, y);
}
#endif

/* sigmoid(x), any x: +-inf and NaN give 1, 0 and NaN; below -87.3 the
 * result is within 2^-126 of e^x (0 or a subnormal).
 *  - AVX-512: 1 / (1 + e^-x), x clamped to [-88.7, 104] (and +0 below
 *    -88.7), the division by vrcp14ps and a Newton step;
 *  - elsewhere: (x >= 0 ? 1 : e) / (1 + e), e = e^-|x|, by
 *    v_exp_neg and v_div_approx.
 * half (a compile-time constant): the result is rounded to F16 or BF16
 * next; on AVX-512 the degree-4 exp and no Newton step (2^-13.9 relative,
 * tests/test_vec.c), within the half types' 2^-11 rounding step. */
INFINIOP_ALWAYS_INLINE vf v_sigmoid_h(vf x, bool half) {
#if V_FMA && VL == 16
    return (vf)v_sigmoid_512((__m512)x, true, half);
#else
    vf e = v_exp_neg_h((vf)((vu)x | 0x80000000u), half); /* e^-|x| */
    return v_div_approx(v_sel(x >= 0.0f, v_splat(1.0f), e), 1.0f + e);
#endif
}
INFINIOP_ALWAYS_INLINE vf v_sigmoid(vf x) { return v_sigmoid_h(x, false); }
/* silu(x) = x sigmoid(x), for x >= -85 only (not NaN; below, x e^x nears
 * the subnormal range: the callers take a scalar formula that keeps it
 * accurate, v_silu_fast tells which vectors may come here);
 * AVX-512, and AVX2 for half outputs: x / (1 + e^-x); elsewhere
 * (x >= 0 ? x : x e) / (1 + e), e = e^-|x| (v_exp_neg's argument must be
 * <= 0), for |x| <= 80. half: as v_sigmoid_h. */
#if V_FMA && VL == 16
#define V_SILU_LIMIT 85.0f
INFINIOP_ALWAYS_INLINE bool v_silu_fast(vf x) { /* every lane x >= -85 */
    return _mm512_cmp_ps_mask((__m512)x, _mm512_set1_ps(-V_SILU_LIMIT), _CMP_NGE_UQ) == 0;
}
#else
#define V_SILU_LIMIT 80.0f
/* every lane |x| <= 80: the bits of |x| (below 2^31, so a signed compare
 * orders them; NaN above +inf's) at most 80's */
INFINIOP_ALWAYS_INLINE vi v_abs_bits(vf x) { return (vi)((vu)x & 0x7fffffffu); }
INFINIOP_ALWAYS_INLINE bool v_silu_fast(vf x) { return !v_any(v_abs_bits(x) > 0x42a00000); }
#endif
/* v_silu_fast of four vectors at once. */
INFINIOP_ALWAYS_INLINE bool v_silu_fast4(vf a, vf b, vf c, vf d) {
#if V_FMA && VL == 16
    /* x >= -85 in every lane: four compares, each masked by the last, and
     * one kortest (no mask moves to general registers) */
    __m512 lim = _mm512_set1_ps(-V_SILU_LIMIT);
    __mmask16 k = _mm512_cmp_ps_mask((__m512)a, lim, _CMP_GE_OQ);
    k = _mm512_mask_cmp_ps_mask(k, (__m512)b, lim, _CMP_GE_OQ);
    k = _mm512_mask_cmp_ps_mask(k, (__m512)c, lim, _CMP_GE_OQ);
    k = _mm512_mask_cmp_ps_mask(k, (__m512)d, lim, _CMP_GE_OQ);
    return _kortestc_mask16_u8(k, k);
#elif defined(__AVX2__) && VL == 8
    /* the largest |x| bits of the four (signed max: they are below 2^31),
     * one compare and one test (four of each took 16 operations) */
    __m256i m = _mm256_max_epi32(_mm256_max_epi32((__m256i)v_abs_bits(a), (__m256i)v_abs_bits(b)),
                                 _mm256_max_epi32((__m256i)v_abs_bits(c), (__m256i)v_abs_bits(d)));
    return _mm256_testz_si256(_mm256_cmpgt_epi32(m, _mm256_set1_epi32(0x42a00000)), _mm256_set1_epi32(-1));
#else
    return v_silu_fast(a) && v_silu_fast(b) && v_silu_fast(c) && v_silu_fast(d);
#endif
}
INFINIOP_ALWAYS_INLINE vf v_silu_h(vf x, bool half) {
#if V_FMA && VL == 16
    return (vf)_mm512_mul_ps((__m512)x, v_sigmoid_512((__m512)x, false, half));
#else
#if V_FMA && VL == 8
    /* half outputs on AVX2: x / (1 + e^-x) for either sign, as AVX-512
     * does: |x| <= 80 puts t = -x log2e in [-115.5, 115.5], inside
     * v_exp2_half_256's unclamped range (e^80 < 2^116: 1 + e finite), so
     * no e^-|x|, compare, product and select (about 6 of 18 operations a
     * vector; silu bf16 1.3x faster, bench/NOTES.md session 15) */
    if (half) return v_div_approx(x, 1.0f + v_exp2_half_256_c(x * v_splat(-1.44269504088896341f), false));
#endif
    /* |x| <= V_SILU_LIMIT = 80 here (v_silu_fast): e^-80 is normal, no underflow */
    vf e = v_exp_neg_hu((vf)((vu)x | 0x80000000u), half, false);
    return v_div_approx(v_sel(x >= 0.0f, x, x * e), 1.0f + e);
#endif
}
INFINIOP_ALWAYS_INLINE vf v_silu(vf x) { return v_silu_h(x, false); }
/* sigmoid(x) where v_silu_fast(x) holds (no NaN; AVX2: |x| <= 80). Half
 * outputs on AVX2: 1 / (1 + e^-x) for either sign, t = -x log2e in
 * v_exp2_half_256's unclamped range, as v_silu_h (v_sigmoid_h's e^-|x|
 * and select serve any x: below -87.3 the result is a BF16 subnormal that
 * 1 / (1 + e^-x) would lose); elsewhere v_sigmoid_h. */
INFINIOP_ALWAYS_INLINE vf v_sigmoid_fast_h(vf x, bool half) {
#if V_FMA && VL == 8
    if (half) return v_div_approx(v_splat(1.0f), 1.0f + v_exp2_half_256_c(x * v_splat(-1.44269504088896341f), false));
#endif
    return v_sigmoid_h(x, half);
}

#endif /* INFINIOP_OPS_UNARY_VEC_H */
