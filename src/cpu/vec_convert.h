/*
 * cpu/vec_convert.h - F16 and BF16 <-> float32, a vector at a time. Part of
 * cpu/vec.h.
 *
 * The half-type conversions round to nearest even and equal cpu/dtype.h for
 * every input (NaN payloads included) whatever MXCSR's FTZ/DAZ say: F16C's
 * vcvtph2ps / vcvtps2ph (imm 0: nearest even; they ignore FTZ, and DAZ only
 * zeroes float32 subnormals, which round to a signed zero half anyway)
 * where the target has it, else lane-wise bit operations; bf16 -> float32
 * by a shift; float32 -> bf16 by AVX-512 BF16's vcvtneps2bf16 where present
 * (pass 3), except for vectors holding a float32 subnormal (it flushes them;
 * dtype.h keeps them), which take the lane-wise bit operations used
 * everywhere else. tests/test_vec.c checks every input.
 */
#ifndef INFINIOP_CPU_VEC_CONVERT_H
#define INFINIOP_CPU_VEC_CONVERT_H

#include "cpu/vec_lanes.h"

INFINIOP_ALWAYS_INLINE vf v_from_bf16(vh h) {
#if defined(__AVX512F__) && VL == 16
    return (vf)_mm512_slli_epi32(_mm512_cvtepu16_epi32((__m256i)h), 16); /* one vpmovzxwd (GCC's convertvector: four shuffles) */
#elif defined(__AVX2__) && VL == 8
    return (vf)_mm256_slli_epi32(_mm256_cvtepu16_epi32((__m128i)h), 16);
#else
    return (vf)(__builtin_convertvector(h, vu) << 16);
#endif
}

INFINIOP_ALWAYS_INLINE vh v_to_bf16_bits(vf f) {
    vu u = (vu)f;
    vi nan = (vi)((u & 0x7fffffffu) > 0x7f800000u);
    vu r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16; /* round to nearest even */
    return __builtin_convertvector(v_selu(nan, (u >> 16) | 0x40u, r), vh);
}
INFINIOP_ALWAYS_INLINE vh v_to_bf16(vf f) {
#if defined(__AVX512BF16__) && VL == 16
    /* vcvtneps2bf16: nearest even whatever MXCSR says, NaN -> (u >> 16) |
     * 0x40 as above; only float32 subnormals differ (it flushes them to a
     * signed zero): a vector holding one takes the bit operations. */
    /* lanes with a zero exponent field (zero or subnormal): one vptestnmd;
     * only then the exact subnormal test (an integer test: vfpclassps obeys DAZ) */
    __mmask16 z = _mm512_testn_epi32_mask((__m512i)f, _mm512_set1_epi32(0x7f800000));
    if (__builtin_expect(z != 0, 0)) {
        __m512i a = _mm512_and_si512((__m512i)f, _mm512_set1_epi32(0x7fffffff));
        if (_mm512_cmplt_epu32_mask(_mm512_sub_epi32(a, _mm512_set1_epi32(1)), _mm512_set1_epi32(0x7fffff)))
            return v_to_bf16_bits(f);
    }
    return (vh)_mm512_cvtneps_pbh((__m512)f);
#else
    return v_to_bf16_bits(f);
#endif
}

/* F16 -> float32 as the hardware converts (vcvtph2ps, exact, except that a
 * signalling NaN comes back quiet: mantissa bit 22 set); elsewhere
 * v_from_f16. */
INFINIOP_ALWAYS_INLINE vf v_from_f16(vh h);
INFINIOP_ALWAYS_INLINE vf v_from_f16_quiet(vh h) {
#if defined(__F16C__) && VL == 16 && defined(__AVX512F__)
    return (vf)_mm512_cvtph_ps((__m256i)h);
#elif defined(__F16C__) && VL == 8
    return (vf)_mm256_cvtph_ps((__m128i)h);
#else
    return v_from_f16(h);
#endif
}
INFINIOP_ALWAYS_INLINE vf v_from_f16(vh h) {
#if defined(__F16C__) && (VL == 8 || defined(__AVX512F__))
    vf r = v_from_f16_quiet(h);
    /* vcvtph2ps quiets signalling NaNs (sets mantissa bit 22); dtype.h
     * keeps the payload as it is: bit 22 from the half's bit 9 (vectors
     * holding a NaN only: the test is one compare) */
#if VL == 16
    if (__builtin_expect(_mm512_cmp_ps_mask((__m512)r, (__m512)r, _CMP_UNORD_Q) == 0, 1)) return r;
    vu hw = (vu)_mm512_cvtepu16_epi32((__m256i)h);
#else
    if (__builtin_expect(_mm256_movemask_ps(_mm256_cmp_ps((__m256)r, (__m256)r, _CMP_UNORD_Q)) == 0, 1)) return r;
    vu hw = (vu)_mm256_cvtepu16_epi32((__m128i)h);
#endif
    vu q = ((vu)r & ~0x400000u) | ((hw << 13) & 0x400000u);
    return v_sel(r != r, (vf)q, r);
#else
    vu w = __builtin_convertvector(h, vu);
    vu sign = (w & 0x8000u) << 16, a = w & 0x7fffu;
    vu normal = (a << 13) + 0x38000000u;                               /* rebias 15 -> 127 */
    normal = v_selu((vi)(a >= 0x7c00u), normal + 0x38000000u, normal); /* inf / NaN: exponent 255 */
    /* zero or subnormal: a * 2^-24, exact (an integer below 2^10 times a power of two) */
    vu sub = (vu)(__builtin_convertvector((vi)a, vf) * 5.9604644775390625e-8f);
    return (vf)(sign | v_selu((vi)(a < 0x400u), sub, normal));
#endif
}

INFINIOP_ALWAYS_INLINE vh v_to_f16(vf f) {
#if defined(__AVX512F__) && VL == 16
    return (vh)_mm512_cvtps_ph((__m512)f, 0x08 /* nearest even, no exceptions */);
#elif defined(__F16C__) && VL == 8
    return (vh)_mm256_cvtps_ph((__m256)f, 0x08 /* nearest even */);
#else
    vu u = (vu)f;
    vu sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    vu r = a - 0x38000000u; /* normal half: rebias 127 -> 15, round to nearest even */
    vu normal = (r + 0xfffu + ((r >> 13) & 1u)) >> 13;
    /* subnormal half: round(|f| * 2^24) to an integer, nearest even, by the
     * float addition of 1.5 * 2^23 (|f| * 2^24 < 2^10 here, and is a normal
     * float, so FTZ/DAZ cannot change it); a < 0x33000000 rounds to 0 */
    vf scaled = v_abs(f) * 16777216.0f + 12582912.0f;
    vu sub = (vu)scaled - 0x4b400000u;
    vu h = v_selu((vi)(a >= 0x38800000u), normal, sub);
    h = v_selu((vi)(a >= 0x477ff000u), (vu){0} + 0x7c00u, h); /* rounds to >= 65520: infinity */
    h = v_selu((vi)(a > 0x7f800000u), 0x7e00u | ((a >> 13) & 0x3ffu), h); /* NaN, quiet */
    return __builtin_convertvector(sign | h, vh);
#endif
}

#endif /* INFINIOP_CPU_VEC_CONVERT_H */
