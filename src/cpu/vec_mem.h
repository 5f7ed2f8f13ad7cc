/*
 * cpu/vec_mem.h - loads and stores of VL elements of a dtype (F16, BF16,
 * F32) as float32 vectors: whole, partial (n < VL), streaming, paired (two
 * vectors, one conversion on AVX2 / AVX-512 BF16); software prefetch; element
 * pointer arithmetic. Part of cpu/vec.h.
 */
#ifndef INFINIOP_CPU_VEC_MEM_H
#define INFINIOP_CPU_VEC_MEM_H

#include "cpu/vec_convert.h"

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

/* ------------------------------------------------------------ paired stores, zeros */
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
/* AVX2: v0, v1 rounded to BF16 as v_to_bf16_bits (no NaN lane), 16
 * halves. Each vector's low and high 16-bit halves are gathered by one
 * vpshufb (lows to the low qword of each 128-bit lane), and two vpunpck
 * {l,h}qdq give L and H, the low and high halves of the 16 elements; then
 * in 16-bit lanes, for all 16 at once: round up (H + 1) exactly when
 * L + lsb(H) + 0x7fff carries, i.e. L + lsb >= 0x8001, i.e.
 * (L ^ 0x8000) + lsb > 0 as signed 16-bit (vpaddsw: the sum saturates at
 * 0x7fff, still > 0, when L = 0xffff and lsb = 1); H + 1 of the largest
 * finite half gives infinity, as dtype.h does. 9 operations a pair where
 * the 32-bit form (shift, and, two adds, shift a vector, one pack) took
 * 11. The halves come out as v0[0..3] v1[0..3] v0[4..7] v1[4..7];
 * in_order: one vpermq (qwords 0 2 1 3) restores the order; without it
 * the 16 halves are in order when v0, v1 hold elements 0-3, 8-11 and 4-7,
 * 12-15 (the lane-pair order of v_load_bf16x2_lp). tests/test_vec.c checks
 * every float32. */
INFINIOP_ALWAYS_INLINE __m256i v_bf16x2_avx2(vf v0, vf v1, bool in_order) {
    const __m256i split = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15, /* lane 0 */
                                           0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
    __m256i a = _mm256_shuffle_epi8((__m256i)v0, split), b = _mm256_shuffle_epi8((__m256i)v1, split);
    __m256i l = _mm256_unpacklo_epi64(a, b), h = _mm256_unpackhi_epi64(a, b);
    __m256i lsb = _mm256_and_si256(h, _mm256_set1_epi16(1));
    __m256i up = _mm256_cmpgt_epi16(_mm256_adds_epi16(_mm256_xor_si256(l, _mm256_set1_epi16((short)0x8000)), lsb),
                                    _mm256_setzero_si256());
    __m256i r = _mm256_sub_epi16(h, up); /* up: -1 where rounding up */
    return in_order ? _mm256_permute4x64_epi64(r, 0xd8) : r;
}
/* Any lane of v0 or v1 NaN: one vcmpunordps of the two (unordered when
 * either lane is NaN) and one vtestps (a compare for each and their or
 * took two operations more). */
INFINIOP_ALWAYS_INLINE bool v_any_nan2(vf v0, vf v1) {
    __m256 m = _mm256_cmp_ps((__m256)v0, (__m256)v1, _CMP_UNORD_Q);
    return !_mm256_testz_ps(m, m);
}
/* All-ones in each lane where a0 or a1, or b0 or b1, holds a NaN:
 * v_any_nan2's compare for each pair and their or (the two-output
 * kernels' one NaN test for two pairs: vtestps of it). */
INFINIOP_ALWAYS_INLINE __m256 v_nan_lanes4(vf a0, vf a1, vf b0, vf b1) {
    return _mm256_or_ps(_mm256_cmp_ps((__m256)a0, (__m256)a1, _CMP_UNORD_Q),
                        _mm256_cmp_ps((__m256)b0, (__m256)b1, _CMP_UNORD_Q));
}
INFINIOP_ALWAYS_INLINE void v_store_h2(void *p, __m256i h, bool stream) {
    if (stream && ((uintptr_t)p & 31) == 0) _mm256_stream_si256((__m256i *)p, h);
    else _mm256_storeu_si256((__m256i *)p, h);
}
/* AVX2: v0, v1 as 16 BF16 in order, rounded as v_to_bf16_bits, by one
 * pack and one lane permutation for the pair (v_to_bf16 converts each
 * vector with its own pack, permutation and NaN select: ~12 operations a
 * vector, ~8 here); false, nothing stored, when check is set and a lane is
 * NaN (the caller takes v_put, which keeps NaN payloads as dtype.h does). */
INFINIOP_ALWAYS_INLINE bool v_put_bf16x2_avx2_c(void *p, vf v0, vf v1, bool stream, bool check) {
    if (check && __builtin_expect(v_any_nan2(v0, v1), 0)) return false;
    v_store_h2(p, v_bf16x2_avx2(v0, v1, true), stream);
    return true;
}
INFINIOP_ALWAYS_INLINE bool v_put_bf16x2_avx2(void *p, vf v0, vf v1, bool stream) {
    return v_put_bf16x2_avx2_c(p, v0, v1, stream, true);
}
/* ------------------------------------------------------------ BF16 in lane-pair order (AVX2) */
/* 16 BF16 at p as two float32 vectors in lane-pair order: lo holds
 * elements 0-3, 8-11, hi 4-7, 12-15 (vpunpcklwd / vpunpckhwd with zero put
 * each half in the high word of its lane: one operation a vector, the load
 * folded in, where v_load takes a vpmovzxwd and a shift). Lane-wise work
 * does not care about the order; v_put_bf16x2_lp stores such a pair back in
 * element order with one pack and no permutation. Sums must map the lanes
 * back (add_rms_norm's pass 1 does). */
INFINIOP_ALWAYS_INLINE void v_load_bf16x2_lp(const void *p, vf *lo, vf *hi) {
    __m256i u = _mm256_loadu_si256((const __m256i *)p), z = _mm256_setzero_si256();
    *lo = (vf)_mm256_unpacklo_epi16(z, u);
    *hi = (vf)_mm256_unpackhi_epi16(z, u);
}
/* Vector k (0: lo, 1: hi) of the 16 BF16 at p in lane-pair order: one
 * vpunpck{l,h}wd, the load folded in (a kernel loading both halves of a
 * block in separate places). */
INFINIOP_ALWAYS_INLINE vf v_load_bf16_lp(const void *p, int k) {
    __m256i u = _mm256_loadu_si256((const __m256i *)p), z = _mm256_setzero_si256();
    return (vf)(k ? _mm256_unpackhi_epi16(z, u) : _mm256_unpacklo_epi16(z, u));
}
/* lo, hi in lane-pair order, stored as 16 BF16 in element order, rounded
 * as v_to_bf16; check: a pair holding a NaN goes back to element order
 * (two vperm2f128) and takes v_put, which keeps the payloads. Callers that
 * have proved the pair NaN-free pass check = false. */
INFINIOP_ALWAYS_INLINE void v_put_bf16x2_lp(void *p, vf lo, vf hi, bool stream, bool check) {
    if (check && __builtin_expect(v_any_nan2(lo, hi), 0)) {
        v_put(p, INFINI_DTYPE_BF16, (vf)_mm256_permute2f128_ps((__m256)lo, (__m256)hi, 0x20), stream);
        v_put(V_AT(p, INFINI_DTYPE_BF16, VL), INFINI_DTYPE_BF16,
              (vf)_mm256_permute2f128_ps((__m256)lo, (__m256)hi, 0x31), stream);
        return;
    }
    v_store_h2(p, v_bf16x2_avx2(lo, hi, false), stream);
}
/* v_put_bf16x2_lp of a0, a1 at p and b0, b1 at q; check: one NaN test for
 * the four vectors (a pair holding a NaN takes v_put_bf16x2_lp's path). */
INFINIOP_ALWAYS_INLINE void v_put2x2_lp(void *p, void *q, vf a0, vf a1, vf b0, vf b1, bool stream, bool check) {
    if (check) {
        __m256 m = v_nan_lanes4(a0, a1, b0, b1);
        if (__builtin_expect(!_mm256_testz_ps(m, m), 0)) {
            v_put_bf16x2_lp(p, a0, a1, stream, true);
            v_put_bf16x2_lp(q, b0, b1, stream, true);
            return;
        }
    }
    v_store_h2(p, v_bf16x2_avx2(a0, a1, false), stream);
    v_store_h2(q, v_bf16x2_avx2(b0, b1, false), stream);
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
 * the four vectors on AVX-512 BF16, one NaN test on AVX2 (two-output
 * kernels). */
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
#elif defined(__AVX2__) && VL == 8
    if (t == INFINI_DTYPE_BF16) { /* one NaN test for the four vectors */
        __m256 m = v_nan_lanes4(a0, a1, b0, b1);
        if (__builtin_expect(_mm256_testz_ps(m, m), 1)) {
            v_store_h2(p, v_bf16x2_avx2(a0, a1, true), stream);
            v_store_h2(q, v_bf16x2_avx2(b0, b1, true), stream);
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
/* v_put2 of two vectors the caller has proved NaN-free: on AVX2 a BF16
 * pair skips v_put_bf16x2_avx2's NaN test (5 of its ~16 operations). */
INFINIOP_ALWAYS_INLINE void v_put2_nonan(void *p, infiniDtype_t t, vf v0, vf v1, bool stream) {
#if defined(__AVX2__) && VL == 8
    if (t == INFINI_DTYPE_BF16) {
        v_put_bf16x2_avx2_c(p, v0, v1, stream, false);
        return;
    }
#endif
    v_put2(p, t, v0, v1, stream);
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

#endif /* INFINIOP_CPU_VEC_MEM_H */
