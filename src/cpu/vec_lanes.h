/*
 * cpu/vec_lanes.h - the vector types of the CPU kernels (VL float32 lanes:
 * the target's register width), lane-wise operations, the fixed-order sum
 * over VW lanes and the fused multiply-add. Part of cpu/vec.h.
 */
#ifndef INFINIOP_CPU_VEC_LANES_H
#define INFINIOP_CPU_VEC_LANES_H

#include "cpu/cpu.h"

#include <string.h>
#if defined(__x86_64__)
/* Intrinsics, not compiler builtins: GCC and clang both build this file.
 * The intrinsics headers name parameters __C, which infinicore.h defines as
 * a macro (as InfiniOP's header does): hide it while they are read. */
#pragma push_macro("__C")
#undef __C
#include <immintrin.h>
#pragma pop_macro("__C")
#endif

/* Vector arguments of static always-inline helpers never reach an ABI
 * boundary; silence GCC's notes about AVX vector ABI changes. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

/* Lanes per vector: the target's register width (GCC lowers vectors wider
 * than the registers poorly: compares and selects become scalar code). */
#if defined(__AVX512F__)
#define VL 16
#else
#define VL 8
#endif
/* Lanes of every float32 sum (and elements per accumulation step): VN = 4
 * vectors of VL lanes, four independent accumulators (one 16-lane
 * accumulator made the sums wait on the adds' 4-cycle latency: layer_norm's
 * two sum passes ran at 4 cycles per 16 elements each; two still held them
 * at 2 cycles, above their 1.5 cycles of operations). 64 lanes on AVX-512,
 * 32 elsewhere. */
#define VN 4
#define VW (VN * VL)

typedef float vf __attribute__((vector_size(4 * VL)));
typedef int32_t vi __attribute__((vector_size(4 * VL)));
typedef uint32_t vu __attribute__((vector_size(4 * VL)));
typedef uint16_t vh __attribute__((vector_size(2 * VL)));
typedef short vhs __attribute__((vector_size(2 * VL)));
typedef long long vq __attribute__((vector_size(4 * VL)));
typedef long long vhq __attribute__((vector_size(2 * VL)));
/* Unaligned forms for loads and stores through pointers. */
typedef vf vf_u __attribute__((aligned(1), may_alias));
typedef vh vh_u __attribute__((aligned(1), may_alias));

INFINIOP_ALWAYS_INLINE vf v_splat(float x) { return (vf){0} + x; }
/* Lane-wise select: m lanes are all-ones (true) or zero, as comparisons give. */
INFINIOP_ALWAYS_INLINE vf v_sel(vi m, vf a, vf b) { return (vf)(((vi)a & m) | ((vi)b & ~m)); }
INFINIOP_ALWAYS_INLINE vu v_selu(vi m, vu a, vu b) { return (a & (vu)m) | (b & ~(vu)m); }
/* max(a, b); a NaN a gives b (as vmaxps does). */
INFINIOP_ALWAYS_INLINE vf v_max(vf a, vf b) {
#if defined(__AVX512F__) && VL == 16
    return (vf)_mm512_max_ps((__m512)a, (__m512)b);
#elif defined(__AVX__) && VL == 8
    return (vf)_mm256_max_ps((__m256)a, (__m256)b); /* GCC made the select a compare and a vpblendvb */
#else
    return v_sel(a > b, a, b);
#endif
}
INFINIOP_ALWAYS_INLINE vf v_abs(vf a) { return (vf)((vu)a & 0x7fffffffu); }
/* Lanes 0..n-1 true. */
INFINIOP_ALWAYS_INLINE vi v_first(size_t n) {
#if VL == 16
    const vi lane = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
#else
    const vi lane = {0, 1, 2, 3, 4, 5, 6, 7};
#endif
    return lane < (int32_t)n;
}
/* Any lane of the mask m true. */
INFINIOP_ALWAYS_INLINE bool v_any(vi m) {
#if defined(__AVX512F__) && VL == 16
    return _mm512_test_epi32_mask((__m512i)m, (__m512i)m) != 0;
#elif defined(__AVX__) && VL == 8
    return !_mm256_testz_si256((__m256i)m, (__m256i)m);
#else
    uint32_t acc = 0;
    for (int l = 0; l < VL; ++l) acc |= (uint32_t)m[l];
    return acc != 0;
#endif
}

/* Any lane of a greater than c (unsigned): one compare into a mask
 * register on AVX-512 (GCC's vector compare goes through a vector). */
INFINIOP_ALWAYS_INLINE bool v_any_gtu(vu a, uint32_t c) {
#if defined(__AVX512F__) && VL == 16
    return _mm512_cmpgt_epu32_mask((__m512i)a, _mm512_set1_epi32((int)c)) != 0;
#else
    return v_any((vi)(a > c));
#endif
}

/* Sum of the VW lanes of acc[0..VN-1] (elements j + l of each step in
 * lane l), as a fixed pairwise tree: vectors (0 + 2) + (1 + 3), then in
 * the VL-lane sum lanes l and l + 8 (AVX-512), l and l + 4, then
 * (0 + 2) + (1 + 3). */
INFINIOP_ALWAYS_INLINE float v_hsum_w(const vf *acc_w) {
    vf acc = (acc_w[0] + acc_w[2]) + (acc_w[1] + acc_w[3]);
#if defined(__AVX__)
    /* the same tree by shuffles (GCC makes the scalar form ~30 extracts) */
#if VL == 16
    __m256 s8 = _mm256_add_ps(_mm512_castps512_ps256((__m512)acc),
                              _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd((__m512)acc), 1)));
#else
    __m256 s8 = (__m256)acc;
#endif
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
    __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));             /* (0 + 2), (1 + 3) */
    __m128 s1 = _mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1));          /* (0 + 2) + (1 + 3) */
    return _mm_cvtss_f32(s1);
#else
    float s8[8], s4[4];
#if VL == 16
    for (int l = 0; l < 8; ++l) s8[l] = acc[l] + acc[l + 8];
#else
    for (int l = 0; l < 8; ++l) s8[l] = acc[l];
#endif
    for (int l = 0; l < 4; ++l) s4[l] = s8[l] + s8[l + 4];
    return (s4[0] + s4[2]) + (s4[1] + s4[3]);
#endif
}
/* The largest lane (lanes are never NaN where it is used). */
INFINIOP_ALWAYS_INLINE float v_hmax(vf v) {
#if defined(__AVX512F__) && VL == 16
    return _mm512_reduce_max_ps((__m512)v);
#else
    float m = v[0];
    for (int l = 1; l < VL; ++l) m = v[l] > m ? v[l] : m;
    return m;
#endif
}

/* ------------------------------------------------------------ fused multiply-add */
/* V_FMA: the target has FMA (the AVX2 and AVX-512 passes). v_fma(a, b, c) =
 * a * b + c, rounded once there; elsewhere two roundings (only the
 * approximations below use it, each with its bound for both forms). */
#if defined(__FMA__) && (VL == 8 || defined(__AVX512F__))
#define V_FMA 1
#else
#define V_FMA 0
#endif
INFINIOP_ALWAYS_INLINE vf v_fma(vf a, vf b, vf c) {
#if V_FMA && VL == 16
    return (vf)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
#elif V_FMA
    return (vf)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
#else
    return a * b + c;
#endif
}

#endif /* INFINIOP_CPU_VEC_LANES_H */
