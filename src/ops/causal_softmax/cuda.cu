/*
 * ops/causal_softmax/cuda.cu - causal softmax on NVIDIA GPUs.
 *
 * A row goes to a group of threads (a warp for short rows, a block for long
 * ones; cuda/plan_rows.cu chooses at descriptor creation). Only the n visible
 * columns of row r (n = r % S + T - S + 1) are read. Three phases:
 *   1. m = max over the visible columns;
 *   2. e = exp(x - m) (float32; never half-precision math) and their sum;
 *   3. y = e * (1 / sum) on the visible columns, exact zeros on the masked
 *      ones.
 * The kernels are bound by instruction issue, not memory, unless each
 * element costs only a handful of instructions, so:
 *  - exp is ex2.approx((x - m) log2 e) (cs_exp below, __expf without its
 *    subnormal scaling): the difference is formed exactly rounded first
 *    (pre-scaling x and m by log2(e) separately would lose |m| eps of
 *    absolute accuracy when |m| is large), then ex2.approx: about 2 ulp plus
 *    |x - m| eps/2 relative, within the test's bound (tests/
 *    test_causal_softmax.c);
 *  - one correctly rounded reciprocal of the sum per row and a multiply per
 *    element (at most 1.5 ulp more than a division);
 *  - per-element mask tests only in the one chunk that straddles n;
 *  - NaN: the per-element max is fmaxf, which skips NaN, but a visible NaN
 *    (or +inf, through inf - inf) makes its e NaN, hence the sum and every
 *    visible output NaN, as the specification wants.
 * x is kept in shared memory (float32) when the row fits, each thread its
 * own elements, and phase 2 leaves e there for phase 3; otherwise each
 * phase reads x again. Rows whose starts are not 16-byte aligned (odd T)
 * take the peeled kernel: 16-byte vectors after a head of < V elements. Element j is read before it is written, by the same
 * thread, so y may be exactly x.
 */
#include "causal_softmax.h"
#include "cuda/common.cuh"
#include "cuda/rows.cuh"

/* exp(d) for d = x - m <= 0 (or NaN): ex2.approx of d log2(e), as __expf,
 * but with results below 2^-126 flushed to zero (the sum is at least 1, so
 * that is an absolute error under 2^-126 on the output; tests/
 * test_causal_softmax.c allows it) and without the scaling __expf wraps
 * around ex2 for them: 2 instructions rather than 5. */
__device__ __forceinline__ float cs_exp(float d) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d * 1.4426950408889634f));
    return r;
}

/* Chunk helpers: v holds V consecutive columns of which the first `rem`
 * are visible (rem >= V: all of them). */
template <int V> __device__ __forceinline__ float cs_chunk_max(const float (&v)[V], size_t rem, float m) {
    if (rem >= (size_t)V) {
#pragma unroll
        for (int e = 0; e < V; ++e) m = fmaxf(m, v[e]);
    } else {
#pragma unroll
        for (int e = 0; e < V; ++e)
            if ((size_t)e < rem) m = fmaxf(m, v[e]);
    }
    return m;
}
/* v = exp(v - m); returns sum + the visible ones. */
template <int V> __device__ __forceinline__ float cs_chunk_exp(float (&v)[V], float m, size_t rem, float sum) {
#pragma unroll
    for (int e = 0; e < V; ++e) v[e] = cs_exp(v[e] - m);
    if (rem >= (size_t)V) {
#pragma unroll
        for (int e = 0; e < V; ++e) sum += v[e];
    } else {
#pragma unroll
        for (int e = 0; e < V; ++e)
            if ((size_t)e < rem) sum += v[e];
    }
    return sum;
}
/* v = v * inv on the visible elements, 0 on the others (a whole chunk
 * without the per-element tests: as one expression the compiler kept a
 * compare and a select for every element of every chunk). */
template <int V> __device__ __forceinline__ void cs_chunk_out(float (&v)[V], float inv, size_t rem) {
    if (rem >= (size_t)V) {
#pragma unroll
        for (int e = 0; e < V; ++e) v[e] *= inv;
    } else {
#pragma unroll
        for (int e = 0; e < V; ++e) v[e] = (size_t)e < rem ? v[e] * inv : 0.0f;
    }
}

/* The maximum of a whole vector of a 2-byte type and a running pair `pm`,
 * two elements an instruction (HMNMX2) without converting them to
 * float32: the maximum of the raw values is the maximum of their float32
 * values (the conversion is exact and monotonic), and NaN is skipped as
 * fmaxf skips it. pm starts as two -inf (cs_ninf2); cs_pair_max gives its
 * float32 maximum. Three instructions a vector of 8 rather than 22
 * (conversions and FMNMX). */
template <typename T> __device__ __forceinline__ uint32_t cs_hmax2(uint32_t a, uint32_t b) {
    uint32_t r;
    if constexpr (std::is_same<T, DtBF16>::value) {
        const __nv_bfloat162 m = __hmax2(*reinterpret_cast<const __nv_bfloat162 *>(&a),
                                         *reinterpret_cast<const __nv_bfloat162 *>(&b));
        r = *reinterpret_cast<const uint32_t *>(&m);
    } else {
        const __half2 m = __hmax2(*reinterpret_cast<const __half2 *>(&a), *reinterpret_cast<const __half2 *>(&b));
        r = *reinterpret_cast<const uint32_t *>(&m);
    }
    return r;
}
template <typename T> __device__ __forceinline__ uint32_t cs_ninf2() {
    return std::is_same<T, DtBF16>::value ? 0xff80ff80u : 0xfc00fc00u;
}
template <typename T, typename VT> __device__ __forceinline__ uint32_t cs_vec_max(uint32_t pm, const VT &q) {
    static_assert(sizeof(VT) == 16, "a 16-byte vector");
    const uint32_t *w = reinterpret_cast<const uint32_t *>(&q);
    return cs_hmax2<T>(pm, cs_hmax2<T>(cs_hmax2<T>(w[0], w[1]), cs_hmax2<T>(w[2], w[3])));
}
template <typename T> __device__ __forceinline__ float cs_pair_max(uint32_t pm) {
    return fmaxf(T::load((typename T::S)(pm & 0xffffu)), T::load((typename T::S)(pm >> 16)));
}

/* V consecutive outputs at any (element) alignment, one store each,
 * without the evict-first hint of the vector stores: a sector takes
 * several of a warp's element stores to fill, and an evict-first line
 * could leave L2 partly written. */
template <typename T, int V> __device__ __forceinline__ void store_elems(typename T::S *p, const float (&v)[V]) {
#pragma unroll
    for (int e = 0; e < V; ++e) p[e] = T::store(v[e]);
}

/* The register path (cuda/rows.cuh): the visible accesses of x (16-byte
 * vectors, or single elements with V == 1) are loaded once (masked ones
 * are never read), all in flight together, and kept
 * as raw vectors (for 2-byte types half the registers of float copies: 8
 * vectors a thread in the warp form stay under ~70 registers); max, the
 * sum of exp and the outputs are computed from them; with more than 16
 * elements a thread exp(x - m) is computed once more for the outputs
 * (cheaper than the registers to keep it), otherwise kept. y is written
 * whole, masked vectors as 16-byte zeros. Same arithmetic as the kernel
 * below. */
/* (B56 false: the block form's one-item instances hold 40-54 registers
 * unbounded; RG_BOUNDS, cuda/rows.cuh) */
template <typename T, int ITEMS, int MODE, int V, bool CS, int CAP, bool PEEL>
__global__ void __launch_bounds__(RG_BOUNDS(MODE, ITEMS, CAP, false))
    causal_softmax_reg(typename T::S *y, const typename T::S *x, unsigned lanes,
                       const __grid_constant__ infiniopCausalSoftmaxInfo info) {
    constexpr bool KEEP = ITEMS * V <= 16;
    typedef typename T::S S;
    typedef RgVec<S, V> VT;
    __shared__ RowScratch sc;
    const infiniopRowLayout &L = info.rows;
    /* 32-bit column arithmetic: a register-path row is at most a few
     * thousand vectors (cuda/plan_rows.cu) */
    const unsigned Tn = (unsigned)L.ncols, nwhole = Tn / V;
    const ptrdiff_t xs = L.col_stride[CS_X], ys = L.col_stride[CS_Y]; /* (CS only) */
    const RowGroup g = row_group<MODE, RgWarp32<MODE, ITEMS>::value, false>(lanes);
    /* the group and the constants before the grid dependency (keep,
     * common.cuh). The first row's visible count (its r % S) kept there
     * too, and each later row's computed at the end of the row before,
     * cost the peeled 8-vector warp instances 14 registers (76 -> 90:
     * 5 blocks an SM rather than 6; ptxas, sm_90). */
    keep(nwhole);
    if (!rg_wait(g, L.nrows)) return;
    for (size_t r = g.row0; r < L.nrows; r += g.rstep) {
        row_next<MODE>(g, r);
        /* PEEL (plan.h's `peel`): rows of unit column stride, x's row not
         * 16-byte aligned (or at any pointer). As in the peeled streaming
         * kernel below: a head of h < V columns up to x's row's first
         * 16-byte boundary, the body of nfull whole vectors from there
         * (the accesses c), a tail of fewer than V columns; each of the at
         * most 2V - 2 edge columns is one element held by one of the
         * group's first threads (the plan gives the group at least 2V - 2
         * threads), loaded with the body. y's body is stored by vectors
         * where y's row lies at x's offset modulo 16 bytes (always, in a
         * PEEL layout at pointers equal modulo 16), else element by element
         * (a view whose rows differ from y's in alignment: the loads, the
         * round trip the row waits for, stay vectors). Without PEEL h = 0
         * and there are no edges. */
        const typename T::S *xr = x + row_off(L, CS_X, r);
        const unsigned n0 = (unsigned)infiniop_causal_visible(&info, r); /* visible columns */
        unsigned h = 0, nchunks = nwhole, tcount = 0;
        if constexpr (PEEL) {
            h = (unsigned)((V - (((uintptr_t)xr / sizeof(S)) & (unsigned)(V - 1))) & (unsigned)(V - 1));
            if (h > Tn) h = Tn;
            nchunks = (Tn - h) / V;
            tcount = Tn - h - nchunks * V;
            xr += h; /* the body: 16-byte aligned (yr's too, below) */
        }
        const unsigned n = n0 > h ? n0 - h : 0; /* visible columns of the body and the tail */
        /* (vectors holding a visible column; PEEL: of the body) */
        const unsigned vchunks = !PEEL || (n + V - 1) / V < nchunks ? (n + V - 1) / V : nchunks;
        /* this thread's edge column, relative to the body (the head's are
         * below it: wrapped unsigned offsets, added as signed) */
        const bool edge = PEEL && g.tid < h + tcount;
        const int je = (int)g.tid < (int)h ? (int)g.tid - (int)h : (int)(nchunks * V + (g.tid - h));
        const bool edge_vis = edge && je < (int)n0 - (int)h;
        float xe = 0.0f;
        if constexpr (PEEL)
            if (edge_vis) xe = T::load(xr[je]);
        VT q[ITEMS];
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const unsigned c = g.tid + (unsigned)k * g.G;
            if (c < vchunks) q[k] = load_once<VT>(xr + rg_at<V, CS>(c, xs));
        }
        if (const size_t ra = rg_ahead(info.cuda, r, L.nrows)) /* its visible part */
            rg_prefetch(g, x + row_off(L, CS_X, ra), infiniop_causal_visible(&info, ra) * sizeof(*x));
        float m = edge_vis ? xe : -INFINITY;
        /* whole vectors of 2-byte types: packed maxima (cs_vec_max) */
        constexpr bool PACKED = IsHalf<T>::value && V > 1;
        uint32_t pm = cs_ninf2<T>();
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const unsigned c = g.tid + (unsigned)k * g.G;
            if (c < vchunks) {
                if constexpr (PACKED) {
                    if (n - c * V >= (unsigned)V) {
                        pm = cs_vec_max<T>(pm, q[k]);
                        continue;
                    }
                }
                float v[V];
                unpack<T>(q[k], v);
                m = cs_chunk_max<V>(v, n - c * V, m);
            }
        }
        if constexpr (PACKED) m = fmaxf(m, cs_pair_max<T>(pm));
        m = rg_reduce<MODE, true>(g, m, &sc, 0);
        const float ee = edge_vis ? cs_exp(xe - m) : 0.0f;
        float sum = ee;
        float ev[KEEP ? ITEMS : 1][V]; /* exp(x - m), when kept */
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const unsigned c = g.tid + (unsigned)k * g.G;
            if (c < vchunks) {
                if (!KEEP) forget(q[k]); /* convert again rather than keep float copies live */
                float v[V];
                unpack<T>(q[k], v);
                sum = cs_chunk_exp<V>(v, m, n - c * V, sum);
                if constexpr (KEEP) {
#pragma unroll
                    for (int e = 0; e < V; ++e) ev[KEEP ? k : 0][e] = v[e];
                }
            }
        }
        const float inv = 1.0f / rg_reduce<MODE, false>(g, sum, &sc, 1);
        typename T::S *yr = y + row_off(L, CS_Y, r) + h;
        if constexpr (PEEL)
            if (edge) yr[je] = T::store(edge_vis ? ee * inv : 0.0f);
        /* the output pass, its stores by vectors (VS) or, PEEL with y's row
         * at another offset than x's modulo 16 bytes, by elements (one test
         * a row, uniform over the group) */
        auto out_pass = [&](auto VS) {
            constexpr bool VECS = decltype(VS)::value;
#pragma unroll
            for (int k = 0; k < ITEMS; ++k) {
                const unsigned c = g.tid + (unsigned)k * g.G;
                if (c < vchunks) {
                    float v[V];
                    if constexpr (KEEP) {
#pragma unroll
                        for (int e = 0; e < V; ++e) v[e] = ev[KEEP ? k : 0][e];
                    } else {
                        forget(q[k]); /* recompute exp rather than keep phase 2's values live */
                        unpack<T>(q[k], v);
#pragma unroll
                        for (int e = 0; e < V; ++e) v[e] = cs_exp(v[e] - m);
                    }
                    cs_chunk_out<V>(v, inv, n - c * V);
                    if constexpr (VECS) store_chunk<T, V, true>(yr + rg_at<V, CS>(c, ys), v);
                    else store_elems<T, V>(yr + c * V, v);
                } else if (c < nchunks) { /* masked: never loaded */
                    const float zero[V] = {};
                    if constexpr (VECS) store_chunk<T, V, true>(yr + rg_at<V, CS>(c, ys), zero);
                    else store_elems<T, V>(yr + c * V, zero);
                }
            }
        };
        if constexpr (PEEL) {
            if (infiniop_aligned16(yr)) out_pass(std::true_type());
            else out_pass(std::false_type());
        } else {
            out_pass(std::true_type());
        }
    }
    row_done<MODE>();
}

template <typename T, int V, bool WARP>
__global__ void __launch_bounds__(INFINIOP_CUDA_ROW_MAX_BLOCK)
    causal_softmax_kernel(typename T::S *y, const typename T::S *x, size_t smem,
                          const __grid_constant__ infiniopCausalSoftmaxInfo info) {
    typedef typename T::S S;
    __shared__ float red[33];
    const infiniopRowLayout &L = info.rows;
    const size_t Tn = L.ncols;
    const StreamRows<WARP, V> sr(Tn, smem);
    const ptrdiff_t xs = V == 1 ? L.col_stride[CS_X] : 1, ys = V == 1 ? L.col_stride[CS_Y] : 1;
    /* The first pass keeps 2 chunks a thread in flight (chunks_batched,
     * the exception to STREAM_BATCH, cuda/common.cuh), vectors or
     * one-element chunks: batches of 8 one-element chunks doubled this
     * kernel's registers (32 -> 62) and measured slower on strided and
     * permuted rows on an H100 (f16 12x197x197 permuted 4.68 -> 6.13 us,
     * sliced 3.92 -> 5.09 us), and 1 made transposed rows up to 1.2x
     * slower on an H200 (f32 24x46x446 transposed 7.9 -> 9.4 us, bf16
     * 754x759 transposed 8.8 -> 10.0). The later passes are plain loops,
     * which the compiler unrolls (by 4: four shared-memory reads and exps
     * in flight on a cached row); as batches of one (chunks_batched kept
     * its loop rolled then) the transposed rows ran 3-6% slower on an H200
     * (bf16 21x185x195 6.49 -> 6.91 us, 754x759 8.47 -> 8.81;
     * bench/NOTES.md, session 25). */
    for (size_t r = sr.first(); r < L.nrows; r += sr.step()) {
        const S *xr = x + row_off(L, CS_X, r);
        S *yr = y + row_off(L, CS_Y, r);
        const size_t n = infiniop_causal_visible(&info, r);
        const size_t vchunks = (n + V - 1) / V; /* chunks holding a visible column */

        float m = -INFINITY;
        chunks_batched<2, Vec<S, V>>(
            sr.tid, sr.G, vchunks, [&](size_t c) { return load_raw<S, V>(xr + (ptrdiff_t)c * V * xs); },
            [&](size_t c, const Vec<S, V> &q) {
                float v[V];
#pragma unroll
                for (int k = 0; k < V; ++k) v[k] = T::load(q.v[k]);
                m = cs_chunk_max<V>(v, n - c * V, m);
                if (sr.cache) smem_store<V>(sr.cache + c * V, v);
            });
        m = group_max_nan<WARP>(m, red);

        float sum = 0.0f;
        for (size_t c = sr.tid; c < vchunks; c += sr.G) {
            float v[V];
            if (sr.cache)
                smem_load<V>(sr.cache + c * V, v);
            else
                load_chunk<T, V>(xr + (ptrdiff_t)c * V * xs, v);
            sum = cs_chunk_exp<V>(v, m, n - c * V, sum);
            if (sr.cache) smem_store<V>(sr.cache + c * V, v);
        }
        const float inv = 1.0f / group_sum<WARP>(sum, red);

        /* (masked chunks: never loaded) */
        for (size_t c = sr.tid; c < sr.nchunks; c += sr.G) {
            float v[V];
            if (c < vchunks) {
                if (sr.cache) {
                    smem_load<V>(sr.cache + c * V, v);
                } else {
                    load_chunk<T, V>(xr + (ptrdiff_t)c * V * xs, v);
#pragma unroll
                    for (int k = 0; k < V; ++k) v[k] = cs_exp(v[k] - m);
                }
                cs_chunk_out<V>(v, inv, n - c * V);
            } else {
#pragma unroll
                for (int k = 0; k < V; ++k) v[k] = 0.0f;
            }
            store_chunk<T, V>(yr + (ptrdiff_t)c * V * ys, v);
        }
    }
}

/* The peeled streaming kernel (PEEL kernels, cuda/plan.h): rows of unit
 * column stride whose starts are not 16-byte aligned (T * element size not
 * a multiple of 16: odd T, 197, 777, 1031, 1500 ...), y and x with the same
 * row strides and pointers equal modulo 16 bytes, so row r of y is
 * misaligned exactly as row r of x. Each row is cut into a head of h < V
 * elements up to its first 16-byte boundary, nfull whole vectors, and a
 * tail of fewer than V elements: the body goes by 16-byte vectors (cached
 * in shared memory as float32 between the passes when the plan gives it
 * room) and the at most 2V - 2 edge elements one each to the group's first
 * threads, kept in a register. Same arithmetic and element order per
 * thread as the kernel above; each element is read and then written by
 * one thread, so y may be exactly x. */
template <typename T, bool WARP>
__global__ void __launch_bounds__(INFINIOP_CUDA_ROW_MAX_BLOCK)
    causal_softmax_peel(typename T::S *y, const typename T::S *x, size_t smem,
                        const __grid_constant__ infiniopCausalSoftmaxInfo info) {
    typedef typename T::S S;
    constexpr int V = VecWidth<T>::value;
    __shared__ float red[33];
    const infiniopRowLayout &L = info.rows;
    const size_t Tn = L.ncols;
    const StreamRows<WARP, V> sr(Tn, smem);
    /* (each group's cache slice starts 16-byte aligned: the plan gives it
     * ncols rounded up to 4 floats) */
    float *cache = nullptr;
    if (smem) {
        extern __shared__ float4 stream_rows_smem[];
        cache = reinterpret_cast<float *>(stream_rows_smem) + (size_t)sr.grp * ((Tn + 3) & ~(size_t)3);
    }
    for (size_t r = sr.first(); r < L.nrows; r += sr.step()) {
        const S *xr = x + row_off(L, CS_X, r);
        S *yr = y + row_off(L, CS_Y, r);
        const size_t n = infiniop_causal_visible(&info, r);
        const unsigned mis = (unsigned)(((uintptr_t)xr / sizeof(S)) & (unsigned)(V - 1));
        size_t h = (size_t)((V - mis) & (unsigned)(V - 1));
        if (h > Tn) h = Tn;
        const size_t nfull = (Tn - h) / V, tstart = h + nfull * V, tcount = Tn - tstart;
        const size_t vchunks = n > h ? ((n - h + V - 1) / V < nfull ? (n - h + V - 1) / V : nfull) : 0;
        const S *xb = xr + h; /* 16-byte aligned */
        S *yb = yr + h;
        /* this thread's edge element (head or tail), if any */
        const bool has_edge = sr.tid < h + tcount;
        const size_t je = sr.tid < h ? sr.tid : tstart + (sr.tid - h);
        const bool edge_vis = has_edge && je < n;
        const float xe = edge_vis ? T::load(xr[je]) : 0.0f;

        float m = -INFINITY;
        if (edge_vis) m = fmaxf(m, xe);
        /* (2 loads in flight a thread, as above: 4 spill under the
         * 64-register bound of 1024-thread blocks, ptxas -v) */
        chunks_batched<2, Vec<S, V>>(
            sr.tid, sr.G, vchunks, [&](size_t c) { return load_raw<S, V>(xb + c * V); },
            [&](size_t c, const Vec<S, V> &q) {
                float v[V];
#pragma unroll
                for (int k = 0; k < V; ++k) v[k] = T::load(q.v[k]);
                m = cs_chunk_max<V>(v, n - h - c * V, m);
                if (cache) smem_store<V>(cache + c * V, v);
            });
        m = group_max_nan<WARP>(m, red);

        const float ee = edge_vis ? cs_exp(xe - m) : 0.0f;
        float sum = ee;
        for (size_t c = sr.tid; c < vchunks; c += sr.G) {
            float v[V];
            if (cache)
                smem_load<V>(cache + c * V, v);
            else
                load_chunk<T, V>(xb + c * V, v);
            sum = cs_chunk_exp<V>(v, m, n - h - c * V, sum);
            if (cache) smem_store<V>(cache + c * V, v);
        }
        const float inv = 1.0f / group_sum<WARP>(sum, red);

        for (size_t c = sr.tid; c < nfull; c += sr.G) {
            float v[V];
            if (c < vchunks) {
                if (cache) {
                    smem_load<V>(cache + c * V, v);
                } else {
                    load_chunk<T, V>(xb + c * V, v);
#pragma unroll
                    for (int k = 0; k < V; ++k) v[k] = cs_exp(v[k] - m);
                }
                cs_chunk_out<V>(v, inv, n - h - c * V);
            } else {
#pragma unroll
                for (int k = 0; k < V; ++k) v[k] = 0.0f;
            }
            store_chunk<T, V>(yb + c * V, v);
        }
        if (has_edge) yr[je] = T::store(edge_vis ? ee * inv : 0.0f);
    }
}

/* The register-path instance of launch q (cuda/rows.cuh's rg_instance),
 * for the run call and the plan (rg_plan_cap). */
template <typename T>
using CsRegFn = void (*)(typename T::S *, const typename T::S *, unsigned, const infiniopCausalSoftmaxInfo);
template <typename T> static CsRegFn<T> reg_kernel(const infiniopCudaRowLaunch &q) {
    return rg_instance<VecWidth<T>::value, 8, CsRegFn<T>>(q, [&](auto I, auto M, auto AV, auto CS) -> CsRegFn<T> {
        constexpr int ITEMS = decltype(I)::value, MODE = decltype(M)::value, RV = decltype(AV)::value;
        constexpr bool STRIDED = decltype(CS)::value;
        /* (the peeled form: vectors, warp and block forms, not RgBlock8) */
        constexpr bool PEEL = RV > 1 && MODE != RG_CLUSTER && !RgBlock8<MODE, ITEMS, RV>::value;
        return rg_cap<RgCappable<MODE, ITEMS, RV>::value>(q, [&](auto C) -> CsRegFn<T> {
            constexpr int CAP = decltype(C)::value;
            if (q.peel) {
                if constexpr (PEEL) return causal_softmax_reg<T, ITEMS, MODE, RV, STRIDED, CAP, true>;
                else return nullptr;
            }
            return causal_softmax_reg<T, ITEMS, MODE, RV, STRIDED, CAP, false>;
        });
    });
}

/* Runs the plan (cuda/plan.h): its aligned launch when y and x are 16-byte
 * aligned (a PEEL plan: equal modulo 16 bytes), else its unaligned one. */
template <typename T>
static cudaError_t launch(const infiniopCausalSoftmaxInfo *info, void *y, const void *x, cudaStream_t stream) {
    typedef typename T::S S;
    constexpr int V = VecWidth<T>::value;
    const infiniopCudaRowPlan &p = info->cuda;
    const void *vp[2] = {y, x};
    const infiniopCudaRowLaunch &q = infiniop_row_launch(p, vp, 2);
    if (q.kernel == INFINIOP_CUDA_ROW_STREAM_WARP_PEEL || q.kernel == INFINIOP_CUDA_ROW_STREAM_BLOCK_PEEL)
        return infiniop_cuda_launch(q.kernel == INFINIOP_CUDA_ROW_STREAM_WARP_PEEL ? causal_softmax_peel<T, true>
                                                                                  : causal_softmax_peel<T, false>,
                                    dim3(q.grid), dim3(q.threads), q.smem, stream, 1u, p.pdl, (S *)y, (const S *)x,
                                    q.smem, *info);
    if (rg_is_reg(q)) return rg_launch(reg_kernel<T>(q), q, p.pdl, stream, (S *)y, (const S *)x, q.lanes, *info);
    return stream_launch(
        q, p.pdl, stream,
        [](auto W, auto VEC) { return causal_softmax_kernel<T, decltype(VEC)::value ? V : 1, decltype(W)::value>; },
        (S *)y, (const S *)x, q.smem, *info);
}

extern "C" infiniStatus_t infiniop_causal_softmax_cuda_plan(infiniopCausalSoftmaxInfo *info, int device_id) {
    const size_t es = infiniop_dtype_size(info->dtype);
    const int V = (int)(16 / es);
    const int ts[2] = {CS_Y, CS_X};
    /* peel_any (the peeled register form at any row strides and pointers,
     * y stored by elements where its row lies at another offset than x's
     * modulo 16 bytes) for 4-byte elements only: a lane's element stores
     * there are 16 bytes apart across the warp, so a store instruction
     * writes a part of 32 sectors; with 2-byte elements that measured
     * 1.04-1.63x slower than the one-element form (consecutive elements
     * across the lanes) on sliced bf16 rows (8x1023x2047 sliced 43.3 ->
     * 70.5 us, 1x994x994 4.42 -> 5.75), with 4-byte ones 1.4-1.7x faster
     * (f32 3x834x834 permuted 10.4 -> 6.1 us, 3x13x1530x1577 sliced 249 ->
     * 182; H200, bench/NOTES.md) */
    const InfiniopRowShape s = {info->rows.nrows,
                                info->rows.ncols,
                                V,
                                INFINIOP_CUDA_REG_WARP8,
                                infiniop_rows_vec_ok(&info->rows, ts, 2, es, V),
                                true,
                                infiniop_rows_peel_ok(&info->rows, ts, 2, V),
                                infiniop_rows_unit_ok(&info->rows, ts, 2),
                                0,
                                es == 4};
    const infiniStatus_t st = infiniop_cuda_plan_rows(device_id, s, &info->cuda);
    if (st == INFINI_STATUS_SUCCESS)
        /* slow rows (rg_plan_caps): two reductions and an exponential an element */
        INFINIOP_CUDA_DISPATCH_HALF_FLOAT(info->dtype, T, rg_plan_caps(device_id, &info->cuda, true, reg_kernel<T>));
    return st;
}

extern "C" infiniStatus_t infiniop_causal_softmax_cuda(const infiniopCausalSoftmaxInfo *info, int device_id, void *y,
                                                       const void *x, void *stream) {
    InfiniopCudaDeviceGuard guard(device_id);
    if (guard.err != cudaSuccess) return infiniop_cuda_launch_status("causal_softmax", guard.err);
    cudaError_t err = cudaSuccess;
    INFINIOP_CUDA_DISPATCH_HALF_FLOAT(info->dtype, T, err = launch<T>(info, y, x, (cudaStream_t)stream));
    return infiniop_cuda_launch_status("causal_softmax", err);
}
