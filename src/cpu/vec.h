/*
 * cpu/vec.h - the CPU kernels' vector layer: float32 lanes written once with
 * GCC/Clang vector extensions, compiled for several instruction sets.
 *
 * The kernels are always-inline functions over the vector types below. Each
 * kernel source is compiled once per instruction set (INFINIOP_CPU_PASS in
 * cpu.h; flags in the top-level CMakeLists.txt): AVX-512 (16 lanes, zmm),
 * AVX2 + FMA + F16C (8 lanes, ymm) and the baseline x86-64 / any other
 * target (8 lanes over whatever registers it has). infiniop_cpu_isa() picks
 * one at run time from CPUID, so one binary runs on any x86-64.
 *
 * Exactness: each instruction set gives deterministic results (not the
 * same bits across sets: FMA, sums over VW lanes, the half-output
 * variants). Every sum runs over VW = 4 VL lanes, four vectors, reduced
 * by one fixed tree (v_hsum_w). The half-type conversions round to nearest even and equal
 * cpu/dtype.h for every input (NaN payloads included) whatever MXCSR's
 * FTZ/DAZ say: F16C's vcvtph2ps / vcvtps2ph (imm 0: nearest even; they
 * ignore FTZ, and DAZ only zeroes float32 subnormals, which round to a
 * signed zero half anyway) where the target has it, else lane-wise bit
 * operations; bf16 -> float32 by a shift; float32 -> bf16 by AVX-512 BF16's
 * vcvtneps2bf16 where present (pass 3), except for vectors holding a
 * float32 subnormal (it flushes them; dtype.h keeps them), which take the
 * lane-wise bit operations used everywhere else.
 * bench/vec_check.c checks all of it exhaustively on each instruction set.
 */
#ifndef INFINIOP_CPU_VEC_H
#define INFINIOP_CPU_VEC_H

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

/* ------------------------------------------------------------ conversions */
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

/* ------------------------------------------------------------ loads, stores */
/* VL elements of dtype t at p (unaligned), as float. A signalling F16 NaN
 * comes back quiet (v_from_f16_quiet: the NaN test and fix-up of
 * v_from_f16 were two of sigmoid f16's ~21 operations a vector): every
 * kernel computes with what it loads, and its arithmetic would quiet the
 * NaN anyway, keeping the payload. */
INFINIOP_ALWAYS_INLINE vf v_load(const void *p, infiniDtype_t t) {
    switch (t) {
    case INFINI_DTYPE_F16: return v_from_f16_quiet(*(const vh_u *)p);
    case INFINI_DTYPE_BF16: return v_from_bf16(*(const vh_u *)p);
    default: return *(const vf_u *)p;
    }
}
INFINIOP_ALWAYS_INLINE void v_store(void *p, infiniDtype_t t, vf v) {
    switch (t) {
    case INFINI_DTYPE_F16: *(vh_u *)p = v_to_f16(v); break;
    case INFINI_DTYPE_BF16: *(vh_u *)p = v_to_bf16(v); break;
    default: *(vf_u *)p = v; break;
    }
}
/* Streaming (non-temporal) store of VL elements: for outputs far larger
 * than the caches, it skips the read-for-ownership of the destination lines
 * (what memcpy does for large copies). A destination not aligned to the
 * stored size takes a normal store. After a kernel's streaming stores:
 * v_stream_fence(). */
INFINIOP_ALWAYS_INLINE void v_stream(void *p, infiniDtype_t t, vf v) {
#if defined(__x86_64__)
    if (t == INFINI_DTYPE_F32) {
        if (((uintptr_t)p & (sizeof(vf) - 1)) == 0) {
#if VL == 16
            _mm512_stream_si512((void *)p, (__m512i)v);
#elif defined(__AVX__)
            _mm256_stream_si256((__m256i *)p, (__m256i)v);
#else
            __m128i lo = _mm_set_epi64x(((vq)v)[1], ((vq)v)[0]), hi = _mm_set_epi64x(((vq)v)[3], ((vq)v)[2]);
            _mm_stream_si128((__m128i *)p, lo);
            _mm_stream_si128((__m128i *)p + 1, hi);
#endif
            return;
        }
    } else if (((uintptr_t)p & (sizeof(vh) - 1)) == 0) {
        vh h = t == INFINI_DTYPE_F16 ? v_to_f16(v) : v_to_bf16(v);
#if VL == 16
        _mm256_stream_si256((__m256i *)p, (__m256i)h);
#else
        _mm_stream_si128((__m128i *)p, (__m128i)h);
#endif
        return;
    }
#endif
    v_store(p, t, v);
}
INFINIOP_ALWAYS_INLINE void v_stream_fence(void) {
#if defined(__x86_64__)
    _mm_sfence();
#endif
}
/* Store through v_stream when stream is set, else v_store. */
INFINIOP_ALWAYS_INLINE void v_put(void *p, infiniDtype_t t, vf v, bool stream) {
    if (stream) v_stream(p, t, v);
    else v_store(p, t, v);
}

/* The first n < VL elements; the other lanes are 0. */
INFINIOP_ALWAYS_INLINE vf v_load_n(const void *p, infiniDtype_t t, size_t n) {
#if defined(__AVX512F__) && VL == 16
    __mmask16 k = (__mmask16)((1u << n) - 1u); /* masked loads: no fault beyond the n elements */
    if (t == INFINI_DTYPE_F32) return (vf)_mm512_maskz_loadu_ps(k, p);
    vh h = (vh)_mm256_maskz_loadu_epi16(k, p);
    return t == INFINI_DTYPE_F16 ? v_from_f16_quiet(h) : v_from_bf16(h);
#endif
    uint32_t tmp[VL] = {0};
    memcpy(tmp, p, n * (t == INFINI_DTYPE_F32 ? 4 : 2));
    return v_load(tmp, t);
}
INFINIOP_ALWAYS_INLINE void v_store_n(void *p, infiniDtype_t t, vf v, size_t n) {
#if defined(__AVX512F__) && VL == 16
    __mmask16 k = (__mmask16)((1u << n) - 1u);
    if (t == INFINI_DTYPE_F32) _mm512_mask_storeu_ps(p, k, (__m512)v);
    else _mm256_mask_storeu_epi16(p, k, (__m256i)(t == INFINI_DTYPE_F16 ? v_to_f16(v) : v_to_bf16(v)));
    return;
#endif
    uint32_t tmp[VL];
    v_store(tmp, t, v);
    memcpy(p, tmp, n * (t == INFINI_DTYPE_F32 ? 4 : 2));
}
/* The first n elements (any n; n >= VL: a whole vector, n <= 0: zeros). */
INFINIOP_ALWAYS_INLINE vf v_load_upto(const void *p, infiniDtype_t t, ptrdiff_t n) {
    if (n >= VL) return v_load(p, t);
    return n > 0 ? v_load_n(p, t, (size_t)n) : v_splat(0.0f);
}
/* Software prefetch, into L2 (prefetcht1), of the line V_PREFETCH_BYTES
 * ahead of a streaming read. The rule: the hardware prefetchers of some
 * machines (virtual machines in particular) keep too few lines in flight for
 * one read stream per core to reach the memory bandwidth; a distance of a
 * few KiB covers the memory latency at full bandwidth (~100 ns x ~20 GB/s
 * per core = 2 KiB) with margin, and L2 (not L1) holds that much without
 * evicting the rows being worked on. Measurements: bench/NOTES.md
 * ("software prefetch"). */
#define V_PREFETCH_BYTES 16384
#define V_PREFETCH(p) __builtin_prefetch((const char *)(p) + V_PREFETCH_BYTES, 0, 2 /* prefetcht1 */)
/* V_PREFETCH for each 64-byte line of a step of this many bytes. */
#define V_PREFETCH_SPAN(p, bytes)                                                                                      \
    do {                                                                                                               \
        for (size_t pf_ = 0; pf_ < (size_t)(bytes); pf_ += 64) V_PREFETCH((const char *)(p) + pf_);                    \
    } while (0)

/* Element pointer arithmetic for a dtype of 2 or 4 bytes. */
#define V_AT(p, t, j) ((char *)(p) + (ptrdiff_t)(j) * ((t) == INFINI_DTYPE_F32 ? 4 : 2))
#define V_CAT(p, t, j) ((const char *)(p) + (ptrdiff_t)(j) * ((t) == INFINI_DTYPE_F32 ? 4 : 2))

/* 2 VL elements at p as two vectors, in an order fit only for sums and
 * other order-free uses: on AVX-512 a BF16 pair is one 64-byte load, the
 * even elements shifted into place and the odd ones masked (two operations
 * where two v_loads take four); elsewhere v_load's order. */
INFINIOP_ALWAYS_INLINE void v_load2_unordered(const void *p, infiniDtype_t t, vf *a, vf *b) {
#if defined(__AVX512F__) && VL == 16
    if (t == INFINI_DTYPE_BF16) {
        __m512i u = _mm512_loadu_si512(p);
        *a = (vf)_mm512_slli_epi32(u, 16);
        *b = (vf)_mm512_and_si512(u, _mm512_set1_epi32((int)0xffff0000u));
        return;
    }
#endif
    *a = v_load(p, t);
    *b = v_load(V_CAT(p, t, VL), t);
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
 * float32 in [-87.3365, 0] (bench/vec_check.c): generic 0.982 ulp, FMA
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
/* v_exp_neg, and with half = true (FMA passes only; a compile-time
 * constant) for results rounded to a half type: the degree-4 polynomial
 * (AVX2: 2^-18.4 relative), or v_exp2_half_512 (AVX-512: 2^-17.2), as
 * measured
 * (bench/vec_check.c). */
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

/* Softmax's e^(x - m) for results rounded to a half type: on AVX-512 one
 * FMA forms t = x log2e - c, c = RN(m log2e) (the caller's scalar), and
 * 2^t by v_exp2_half_512: c's rounding shifts every t of the row by the
 * same amount, a common factor that the division by the row's sum cancels
 * (it is softmax with m' = c / log2e). x = -inf gives 0.
 * Elsewhere v_exp_neg_h(x - m, true). */
INFINIOP_ALWAYS_INLINE vf v_exp_shifted_half(vf x, float m, float c) {
#if V_FMA && VL == 16
    (void)m;
    __m512 t = _mm512_fmsub_ps((__m512)x, _mm512_set1_ps(1.44269504088896341f), _mm512_set1_ps(c));
    return (vf)v_exp2_half_512(t); /* t = -inf (x = -inf): 0; NaN stays NaN */
#else
    (void)c;
    return v_exp_neg_h(x - m, true);
#endif
}

/* ------------------------------------------------------------ division */
/* n / d, approximately: on AVX-512, n times the hardware estimate of 1 / d
 * (vrcp14ps, 2^-14 relative) after one Newton step y + y (1 - d y): about
 * 2^-28 relative before the final roundings. Elsewhere the division (AVX2's
 * vrcpps estimate, 1.5 * 2^-12, leaves 2^-22.8 after a Newton step: silu
 * measured 4.3 ulp, beyond the tests' 4). For d in [1, 2^64) (the
 * silu/sigmoid denominators); bench/vec_check.c measures silu/sigmoid. */
INFINIOP_ALWAYS_INLINE vf v_div_approx(vf n, vf d) {
#if V_FMA && VL == 16
    vf y = (vf)_mm512_rcp14_ps((__m512)d);
    y = v_fma(v_fma(-d, y, v_splat(1.0f)), y, y);
    return n * y;
#else
    return n / d;
#endif
}

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
 * exponent at or above -103 (exact in float32). bench/vec_check.c compares
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
#if defined(__AVX512BF16__) && VL == 16
/* k and, lane by lane, "v has a nonzero exponent field" (not zero, not
 * subnormal: v_to_bf16's fast rule): one vptestmd masked by k. Chained
 * over several vectors and tested by one kortest (an or of vptestnmd masks
 * went through general registers: two more operations a pair). */
INFINIOP_ALWAYS_INLINE __mmask16 v_normal_and(__mmask16 k, vf v) {
    return _mm512_mask_test_epi32_mask(k, (__m512i)v, _mm512_set1_epi32(0x7f800000));
}
/* v0, v1 as BF16 by one vcvtne2ps2bf16 (every lane normal, infinite or
 * NaN), one 64-byte store: a whole line for the streaming store. */
INFINIOP_ALWAYS_INLINE void v_put_bf16x2(void *p, vf v0, vf v1, bool stream) {
    __m512i h = (__m512i)_mm512_cvtne2ps_pbh((__m512)v1, (__m512)v0);
    if (stream && ((uintptr_t)p & 63) == 0) _mm512_stream_si512(p, h);
    else _mm512_storeu_si512(p, h);
}
#endif
#if defined(__AVX2__) && VL == 8
/* AVX2: v0, v1 as 16 BF16 in order, rounded as v_to_bf16_bits, by one
 * pack and one lane permutation for the pair (v_to_bf16 converts each
 * vector with its own pack, permutation and NaN select: ~12 operations a
 * vector, ~8 here); false, nothing stored, when a lane is NaN (the caller
 * takes v_put, which keeps NaN payloads as dtype.h does). */
INFINIOP_ALWAYS_INLINE bool v_put_bf16x2_avx2_c(void *p, vf v0, vf v1, bool stream, bool check) {
    if (check) {
        __m256 nan = _mm256_or_ps(_mm256_cmp_ps((__m256)v0, (__m256)v0, _CMP_UNORD_Q),
                                  _mm256_cmp_ps((__m256)v1, (__m256)v1, _CMP_UNORD_Q));
        if (__builtin_expect(!_mm256_testz_ps(nan, nan), 0)) return false;
    }
    const __m256i one = _mm256_set1_epi32(1), half = _mm256_set1_epi32(0x7fff);
    __m256i u0 = (__m256i)v0, u1 = (__m256i)v1;
    __m256i r0 = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u0, half), _mm256_and_si256(_mm256_srli_epi32(u0, 16), one)), 16);
    __m256i r1 = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u1, half), _mm256_and_si256(_mm256_srli_epi32(u1, 16), one)), 16);
    /* packus per 128-bit lane: v0[0..3] v1[0..3] v0[4..7] v1[4..7]; qwords 0 2 1 3 restore the order */
    __m256i h = _mm256_permute4x64_epi64(_mm256_packus_epi32(r0, r1), 0xd8);
    if (stream && ((uintptr_t)p & 31) == 0) _mm256_stream_si256((__m256i *)p, h);
    else _mm256_storeu_si256((__m256i *)p, h);
    return true;
}
INFINIOP_ALWAYS_INLINE bool v_put_bf16x2_avx2(void *p, vf v0, vf v1, bool stream) {
    return v_put_bf16x2_avx2_c(p, v0, v1, stream, true);
}
#endif
/* Two vectors, 2 VL elements, as v_put: on AVX-512 BF16 v_put_bf16x2
 * unless either vector holds a zero exponent (v_to_bf16's subnormal
 * rule); on AVX2 v_put_bf16x2_avx2 unless a lane is NaN. */
INFINIOP_ALWAYS_INLINE void v_put2(void *p, infiniDtype_t t, vf v0, vf v1, bool stream) {
#if defined(__AVX512BF16__) && VL == 16
    if (t == INFINI_DTYPE_BF16 && __builtin_expect(_kortestc_mask16_u8(v_normal_and(v_normal_and(0xffff, v0), v1), 0), 1)) {
        v_put_bf16x2(p, v0, v1, stream);
        return;
    }
#elif defined(__AVX2__) && VL == 8
    if (t == INFINI_DTYPE_BF16 && __builtin_expect(v_put_bf16x2_avx2(p, v0, v1, stream), 1)) return;
#endif
    v_put(p, t, v0, stream);
    v_put(V_AT(p, t, VL), t, v1, stream);
}
/* v_put2 of a0, a1 at p and of b0, b1 at q, with one subnormal test for
 * the four vectors on AVX-512 BF16 (two-output kernels). */
INFINIOP_ALWAYS_INLINE void v_put2x2(void *p, void *q, infiniDtype_t t, vf a0, vf a1, vf b0, vf b1, bool stream) {
#if defined(__AVX512BF16__) && VL == 16
    if (t == INFINI_DTYPE_BF16) {
        __mmask16 k = v_normal_and(v_normal_and(v_normal_and(v_normal_and(0xffff, a0), a1), b0), b1);
        if (__builtin_expect(_kortestc_mask16_u8(k, 0), 1)) {
            v_put_bf16x2(p, a0, a1, stream);
            v_put_bf16x2(q, b0, b1, stream);
            return;
        }
    }
#endif
    v_put2(p, t, a0, a1, stream);
    v_put2(q, t, b0, b1, stream);
}
/* v_put2x2 of vectors the caller has proved NaN-free (no lane NaN): on
 * AVX2 the BF16 pairs skip v_put_bf16x2_avx2's NaN test (the rounding
 * alone is then dtype.h's); elsewhere v_put2x2. */
INFINIOP_ALWAYS_INLINE void v_put2x2_nonan(void *p, void *q, infiniDtype_t t, vf a0, vf a1, vf b0, vf b1,
                                           bool stream) {
#if defined(__AVX2__) && VL == 8
    if (t == INFINI_DTYPE_BF16) {
        v_put_bf16x2_avx2_c(p, a0, a1, stream, false);
        v_put_bf16x2_avx2_c(q, b0, b1, stream, false);
        return;
    }
#endif
    v_put2x2(p, q, t, a0, a1, b0, b1, stream);
}
/* Store 2 VL zeros: one 64-byte streaming store for an aligned half-type
 * pair on AVX-512, else two v_put_zeros. */
INFINIOP_ALWAYS_INLINE void v_put_zeros(void *p, infiniDtype_t t, bool stream);
INFINIOP_ALWAYS_INLINE void v_put_zeros2(void *p, infiniDtype_t t, bool stream) {
#if defined(__AVX512F__) && VL == 16
    if (t != INFINI_DTYPE_F32 && stream && ((uintptr_t)p & 63) == 0) {
        _mm512_stream_si512(p, _mm512_setzero_si512());
        return;
    }
#endif
    v_put_zeros(p, t, stream);
    v_put_zeros(V_AT(p, t, VL), t, stream);
}
/* Store VL zeros (any dtype: all bits zero). */
INFINIOP_ALWAYS_INLINE void v_put_zeros(void *p, infiniDtype_t t, bool stream) {
    if (t == INFINI_DTYPE_F32) v_put(p, t, v_splat(0.0f), stream);
#if defined(__x86_64__)
    else if (stream && ((uintptr_t)p & (sizeof(vh) - 1)) == 0) {
#if VL == 16
        _mm256_stream_si256((__m256i *)p, _mm256_setzero_si256());
#else
        _mm_stream_si128((__m128i *)p, _mm_setzero_si128());
#endif
    }
#endif
    else memset(p, 0, sizeof(vh));
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
 * bench/vec_check.c), within the half types' 2^-11 rounding step. */
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
 * AVX-512: x / (1 + e^-x) as above; elsewhere (x >= 0 ? x : x e) / (1 + e),
 * e = e^-|x|, for |x| <= 80. half: as v_sigmoid_h. */
#if V_FMA && VL == 16
#define V_SILU_LIMIT 85.0f
INFINIOP_ALWAYS_INLINE bool v_silu_fast(vf x) { /* every lane x >= -85 */
    return _mm512_cmp_ps_mask((__m512)x, _mm512_set1_ps(-V_SILU_LIMIT), _CMP_NGE_UQ) == 0;
}
#else
#define V_SILU_LIMIT 80.0f
INFINIOP_ALWAYS_INLINE bool v_silu_fast(vf x) { /* every lane |x| <= 80 */
    return !v_any_gtu((vu)x & 0x7fffffffu, 0x42a00000u);
}
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
#else
    return v_silu_fast(a) && v_silu_fast(b) && v_silu_fast(c) && v_silu_fast(d);
#endif
}
INFINIOP_ALWAYS_INLINE vf v_silu_h(vf x, bool half) {
#if V_FMA && VL == 16
    return (vf)_mm512_mul_ps((__m512)x, v_sigmoid_512((__m512)x, false, half));
#else
    /* |x| <= V_SILU_LIMIT = 80 here (v_silu_fast): e^-80 is normal, no underflow */
    vf e = v_exp_neg_hu((vf)((vu)x | 0x80000000u), half, false);
    return v_div_approx(v_sel(x >= 0.0f, x, x * e), 1.0f + e);
#endif
}
INFINIOP_ALWAYS_INLINE vf v_silu(vf x) { return v_silu_h(x, false); }

#endif /* INFINIOP_CPU_VEC_H */
