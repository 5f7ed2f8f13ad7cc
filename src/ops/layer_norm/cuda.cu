/*
 * ops/layer_norm/cuda.cu - layer_norm on NVIDIA GPUs.
 *
 * A row goes to a group of threads (a warp for short rows, a block for long
 * ones; cuda/plan_rows.cu chooses at descriptor creation). Both kernels take
 * their statistics from one routine, ln_stats below: sums of the row's
 * deviations from a shift K, and the standardized value formed from them
 * without ever rounding the mean. Then std = sqrt(var + eps), output =
 * z * w + b.
 *  - The register path (the row held in registers) reads the row once and
 *    takes K from its first 8 elements, falling back to K = the rounded
 *    mean (a second round over the registers) for the rare rows where that
 *    shift is too far off (see layer_norm_reg). For the half types it
 *    multiplies by 1/D and takes std and 1/std from the hardware
 *    approximations (a few float32 ulp, far under the output's rounding;
 *    as the unary operators do for half outputs).
 *  - The streaming kernel (longer rows, strided weight or bias) makes three
 *    passes: K = the rounded mean, the deviation sums, the outputs; x is
 *    kept in shared memory (float32) between them when the row fits, each
 *    thread its own elements; otherwise each pass reads it again.
 * Element j is read before it is written, by the same thread, so output or
 * input_standardization may be exactly input.
 */
#include "cuda/common.cuh"
#include "cuda/rows.cuh"
#include "layer_norm.h"

/* The row statistics of layer_norm (both kernels).
 *
 * With a shift K (any float32 near the row's values), a thread sums
 * d = x - K and d^2 over its elements (ln_add), the group adds the threads'
 * sums (S1, S2), and ln_stats forms
 *     delta = S1 / D,   var = (S2 - S1 delta) / D   (clamped at 0, NaN kept),
 * the corrected two-pass formula: mean = K + delta exactly in real
 * arithmetic, but the mean itself is never rounded. The standardized value
 * is z = ((x - K) - delta) / std (ln_center): x - K is exact (Sterbenz) for
 * x within a factor 2 of K, so a row with a large common offset (mean 1e4
 * times its std) loses nothing to the offset, where x - round(mean) would
 * lose |mean| 2^-24 / std relative.
 *
 * Error bound (float32, u = 2^-24, k = the longest chain of additions into
 * one sum: elements a thread adds plus log2 of the group's threads, plus
 * 2): while delta^2 <= var (|K - mean| <= std), the relative error of var
 * is at most about 2 (3k + 2) u, whatever the ratio |mean| / std; z and
 * std then carry half of that plus 2 u. (S2's error is k u S2, S1 delta's
 * at most 2 k u S2 by Cauchy-Schwarz, and S2 / D = var + delta^2 <= 2 var.)
 * Beyond delta^2 <= var the bound grows by the factor 1 + delta^2 / var,
 * which is why the register path then falls back to K = the rounded mean
 * (|K - mean| is then k u |mean|, far under std unless |mean| / std
 * exceeds about 1 / (k u)). Typical errors are a few u; the tests
 * (tests/test_layer_norm.c) check against float64 references, including
 * rows of mean 1e4 std 1. docs/ARCHITECTURE.md states the same bound. */
__device__ __forceinline__ void ln_add(float x, float K, float (&s)[2]) {
    const float d = x - K;
    s[0] += d;
    s[1] = fmaf(d, d, s[1]);
}
struct LnStats {
    float K, delta, var;
};
/* FAST (half types): multiplies by invD = 1 / D rather than dividing (a
 * few float32 ulp). */
template <bool FAST> __device__ __forceinline__ LnStats ln_stats(float K, float S1, float S2, size_t D, float invD) {
    LnStats st;
    st.K = K;
    st.delta = FAST ? S1 * invD : S1 / (float)D;
    st.var = FAST ? (S2 - S1 * st.delta) * invD : (S2 - S1 * st.delta) / (float)D;
    return st;
}
/* x - mean, as (x - K) - delta. */
__device__ __forceinline__ float ln_center(const LnStats &st, float x) { return (x - st.K) - st.delta; }

/* The register path (cuda/rows.cuh): x is loaded once, all its accesses
 * in flight together, and the statistics and the outputs work on the
 * registers; w and b come with x for decode shapes (WB_EARLY), in the
 * output phase otherwise. V: 16-byte vectors or 1 (one element an
 * access); w and b at any stride (rg_load_param). */
template <typename T, int ITEMS, int MODE, bool WB_EARLY, int V, bool CS, bool PV, int CAP>
__global__ void __launch_bounds__(RG_BOUNDS(MODE, ITEMS, CAP, V == 8))
    layer_norm_reg(typename T::S *out, typename T::S *stdz, typename T::S *stdv, const typename T::S *in,
                   const typename T::S *w, const typename T::S *b, unsigned lanes,
                   const __grid_constant__ infiniopLayerNormInfo info) {
    __shared__ RowScratch sc;
    const infiniopRowLayout &L = info.rows;
    constexpr bool FAST = IsHalf<T>::value;
    const ptrdiff_t wst = info.w_stride, bst = info.b_stride;
    const ptrdiff_t xs = L.col_stride[LN_IN], os = L.col_stride[LN_OUT], zs = L.col_stride[LN_STDZ]; /* (CS) */
    const size_t D = L.ncols;
    /* access indices: 32-bit in the warp form and the one-element block
     * form (a register row is at most a block's threads x 16 accesses;
     * 64-bit ones doubled the integer work), 64-bit in the cluster form and
     * the vector block form, where 32-bit ones measured 3-11% slower
     * (ptxas then gave the 4-vector block instance 64 registers and 22
     * bytes of spill instead of 80 and none; bench/NOTES.md, session 14) */
    typedef typename std::conditional<MODE == RG_CLUSTER || (MODE == RG_BLOCK && V > 1), size_t, unsigned>::type Idx;
    const Idx nchunks = (Idx)(D / V);
    const float invD = L.inv_ncols; /* half types multiply by it (core/layout.h) */
    constexpr int KV = V >= 8 ? 1 : 8 / V; /* vectors in the shift: 8 elements (fewer if the row is shorter) */
    const RowGroup g = row_group<MODE, RgWarp32<MODE, ITEMS>::value, false>(lanes);
    /* the constants before the grid dependency (keep, common.cuh; rg_wait) */
    keep(nchunks);
    if (!rg_wait(g, L.nrows)) return;
    const bool has_bias = info.has_bias;
    typedef typename T::S S;
    typedef RgVec<S, V> VT;
    for (size_t r = g.row0; r < L.nrows; r += g.rstep) {
        row_next<MODE>(g, r);
        const typename T::S *x = in + row_off(L, LN_IN, r);
        /* raw vectors: half the registers of float copies for 2-byte types.
         * WB_EARLY (decode shapes, the launch's `early`: latency is all): w and
         * b are loaded with x, in one round trip; otherwise they are read in
         * the last phase (cached: every row reads them), which saves the
         * registers that bound occupancy on long runs of rows (bench/NOTES.md). */
        VT qx[ITEMS], qw[WB_EARLY ? ITEMS : 1], qb[WB_EARLY ? ITEMS : 1];
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const Idx c = g.tid + (Idx)k * g.G;
            if (c < nchunks) {
                qx[k] = load_once<VT>(x + rg_at<V, CS>(c, xs));
                if constexpr (WB_EARLY) {
                    qw[k] = rg_load_param<S, V, PV>(w, c, wst);
                    if (has_bias) qb[k] = rg_load_param<S, V, PV>(b, c, bst);
                }
            }
        }
        if (const size_t ra = rg_ahead(info.cuda, r, L.nrows))
            rg_prefetch(g, in + row_off(L, LN_IN, ra), D * sizeof(*in));
        /* The statistics (ln_stats) in one reduction (one barrier in the
         * block form), shifted by K, the mean of the row's first 8 elements
         * (every thread loads them, cached, or takes them by a shuffle:
         * K_SHFL below). A row keeps them when
         * delta^2 <= var (|mean - K| <= std: ln_stats' error bound); K from
         * 8 independent values misses that with probability ~0.5%. Other
         * rows (and non-finite ones) take a second round over the
         * registers with K = the rounded mean. Every thread of the group
         * has the same sums, so the branch is uniform. */
        /* the warp form at one vector of 8 (half types): the group's first
         * thread holds them (access 0), and the others take its sum by a
         * shuffle (of the whole warp's mask, as rg_reduce_n) rather than
         * load and convert them again */
        constexpr bool K_SHFL = FAST && MODE == RG_SUB && KV == 1;
        float K = 0.0f;
        if constexpr (FAST) { /* pairwise: a short dependent chain */
            float kh[KV * V];
#pragma unroll
            for (int k = 0; k < KV; ++k) {
                VT h;
                if constexpr (K_SHFL) h = qx[0]; /* (set where the thread holds access 0) */
                else if ((Idx)k < nchunks) h = rg_load<S, V>(x + rg_at<V, CS>(k, xs));
#pragma unroll
                for (int e = 0; e < V; ++e) kh[k * V + e] = (Idx)k < nchunks ? unpack1<T>(h, e) : 0.0f;
            }
#pragma unroll
            for (int s = KV * V / 2; s > 0; s /= 2)
#pragma unroll
                for (int i = 0; i < s; ++i) kh[i] += kh[i + s];
            K = kh[0];
            if constexpr (K_SHFL) K = __shfl_sync(0xffffffffu, K, (threadIdx.x & 31u) & ~(g.lanes - 1u));
        } else { /* (F32: in order, fewer registers) */
#pragma unroll
            for (int k = 0; k < KV; ++k)
                if ((Idx)k < nchunks) {
                    const VT h = rg_load<S, V>(x + rg_at<V, CS>(k, xs));
#pragma unroll
                    for (int e = 0; e < V; ++e) K += T::load(h.v[e]);
                }
        }
        /* the mean of the 8 elements summed, by a constant: a row shorter
         * than 8 elements gets a K short by its factor (fewer summed), which
         * the test below sends to the exact second round where it matters.
         * (Dividing by the count summed, a runtime value, cost the half
         * types' block form ~8 instructions a row, recomputed there; held
         * from the prologue, 19 instances grew spills; ptxas, sm_90.) */
        K *= 1.0f / (float)(KV * V);
        /* half types: two accumulators each, half the dependent chain (F32
         * keeps one, for registers) */
        float st[2] = {0.0f, 0.0f}, st2[2] = {0.0f, 0.0f};
#pragma unroll
        for (int k = 0; k < ITEMS; ++k)
            if (g.tid + (Idx)k * g.G < nchunks) {
#pragma unroll
                for (int e = 0; e < V; ++e) ln_add(unpack1<T>(qx[k], e), K, FAST && (e & 1) ? st2 : st);
            }
        st[0] += st2[0], st[1] += st2[1];
        rg_reduce_n<MODE, false, 2>(g, st, &sc, 0);
        LnStats ls = ln_stats<FAST>(K, st[0], st[1], D, invD);
        /* (rg_any: in the warp form every group of the warp takes the branch
         * if one does, rows.cuh; the others' second round is as exact) */
        if (rg_any<MODE>(!(ls.delta * ls.delta <= ls.var))) { /* the second round (rare); NaN and inf too */
            float sum = 0.0f;
#pragma unroll
            for (int k = 0; k < ITEMS; ++k)
                if (g.tid + (Idx)k * g.G < nchunks) {
                    forget(qx[k]); /* convert again in each phase rather than keep float copies live */
#pragma unroll
                    for (int e = 0; e < V; ++e) sum += unpack1<T>(qx[k], e);
                }
            /* (slot 2: slots 0 and 1 may still be read; after this
             * reduction's barrier they are free again) */
            const float K2 = rg_reduce<MODE, false>(g, sum, &sc, 2) / (float)D;
            float ds[2] = {0.0f, 0.0f};
#pragma unroll
            for (int k = 0; k < ITEMS; ++k)
                if (g.tid + (Idx)k * g.G < nchunks) {
                    forget(qx[k]);
#pragma unroll
                    for (int e = 0; e < V; ++e) ln_add(unpack1<T>(qx[k], e), K2, ds);
                }
            rg_reduce_n<MODE, false, 2>(g, ds, &sc, 0);
            ls = ln_stats<false>(K2, ds[0], ds[1], D, invD);
        }
        float var = ls.var;
        if (var < 0.0f) var = 0.0f; /* rounding; NaN stays NaN */
        /* F32: std correctly rounded, z by DivBy; half types: the hardware
         * approximations (z = (x - mean) rs, a few float32 ulp) */
        const float ve = var + info.eps;
        const float sd = FAST ? sqrt_approx(ve) : sqrtf(ve), rs = FAST ? rsqrt_approx(ve) : 0.0f;
        const DivBy div(sd); /* (not computed for half types: unused) */
        if (g.tid == 0) stdv[row_off(L, LN_STD, r)] = T::store(sd);
        typename T::S *o = out + row_off(L, LN_OUT, r), *z = stdz + row_off(L, LN_STDZ, r);
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const Idx c = g.tid + (Idx)k * g.G;
            if (c < nchunks) {
                forget(qx[k]);
                VT zq, oq, wk, bk;
                if constexpr (WB_EARLY) {
                    wk = qw[k], bk = qb[k];
                } else {
                    wk = rg_load_param<S, V, PV>(w, c, wst);
                    if (has_bias) bk = rg_load_param<S, V, PV>(b, c, bst);
                }
#pragma unroll
                for (int e = 0; e < V; ++e) {
                    const float d = ln_center(ls, unpack1<T>(qx[k], e));
                    const float zo = FAST ? d * rs : div(d);
                    float oo = zo * unpack1<T>(wk, e);
                    if (has_bias) oo += unpack1<T>(bk, e);
                    zq.v[e] = T::store(zo);
                    oq.v[e] = T::store(oo);
                }
                store_once(z + rg_at<V, CS>(c, zs), zq);
                store_once(o + rg_at<V, CS>(c, os), oq);
            }
        }
    }
    row_done<MODE>();
}

template <typename T, int V, bool WARP>
__global__ void __launch_bounds__(INFINIOP_CUDA_ROW_MAX_BLOCK)
    layer_norm_kernel(typename T::S *out, typename T::S *stdz, typename T::S *stdv, const typename T::S *in,
                      const typename T::S *w, const typename T::S *b, bool wb_vec, size_t smem,
                      const __grid_constant__ infiniopLayerNormInfo info) {
    typedef typename T::S S;
    __shared__ float red[33];
    const infiniopRowLayout &L = info.rows;
    const size_t D = L.ncols;
    const StreamRows<WARP, V> sr(D, smem);
    /* Scalar path: element j of a row at j * column stride (any sign). */
    const ptrdiff_t xs = V == 1 ? L.col_stride[LN_IN] : 1, os = V == 1 ? L.col_stride[LN_OUT] : 1,
                    zs = V == 1 ? L.col_stride[LN_STDZ] : 1;
    const ptrdiff_t wst = info.w_stride, bst = info.b_stride;
    const bool has_bias = info.has_bias;
    /* loads in flight (STREAM_BATCH, cuda/common.cuh): 8 / N would spill
     * here (strided x, z and output, 64-bit addresses each); the most
     * that ptxas -v compiles without spills: 6 chunks a thread in the
     * statistics passes and 3 in the output pass (x, w and b) in the
     * warp form, 2 and 2 in the block form (its group size is not a
     * constant, so each chunk's index costs more) */
    constexpr int U = V == 1 ? (WARP ? 6 : 2) : 1, U3 = V == 1 ? (WARP ? 3 : 2) : 1;
    struct F1 {
        float v[V];
    };
    struct F3 {
        float v[V], w[V], b[V];
    };

    for (size_t r = sr.first(); r < L.nrows; r += sr.step()) {
        const S *x = in + row_off(L, LN_IN, r);
        S *o = out + row_off(L, LN_OUT, r);
        S *z = stdz + row_off(L, LN_STDZ, r);

        /* every pass: U (U3) chunks' loads in flight, then their use
         * (STREAM_BATCH, cuda/common.cuh) */
        float sum = 0.0f;
        chunks_batched<U, Vec<S, V>>(
            sr.tid, sr.G, sr.nchunks, [&](size_t c) { return load_raw<S, V>(x + (ptrdiff_t)c * V * xs); },
            [&](size_t c, const Vec<S, V> &q) {
                float v[V];
#pragma unroll
                for (int k = 0; k < V; ++k) {
                    v[k] = T::load(q.v[k]);
                    sum += v[k];
                }
                if (sr.cache) smem_store<V>(sr.cache + c * V, v);
            });
        const float K = group_sum<WARP>(sum, red) / (float)D; /* the shift: the rounded mean */

        float ds[2] = {0.0f, 0.0f};
        chunks_batched<U, F1>(
            sr.tid, sr.G, sr.nchunks,
            [&](size_t c) {
                F1 p;
                if (sr.cache)
                    smem_load<V>(sr.cache + c * V, p.v);
                else
                    load_chunk<T, V>(x + (ptrdiff_t)c * V * xs, p.v);
                return p;
            },
            [&](size_t, const F1 &p) {
#pragma unroll
                for (int k = 0; k < V; ++k) ln_add(p.v[k], K, ds);
            });
        ds[0] = group_sum<WARP>(ds[0], red);
        ds[1] = group_sum<WARP>(ds[1], red);
        const LnStats ls = ln_stats<false>(K, ds[0], ds[1], D, 0.0f);
        float var = ls.var;
        if (var < 0.0f) var = 0.0f; /* rounding; NaN stays NaN */
        const float sd = sqrtf(var + info.eps);
        const DivBy div(sd);
        if (sr.tid == 0) stdv[row_off(L, LN_STD, r)] = T::store(sd);

        /* x, w and b of U3 chunks, then the outputs */
        chunks_batched<U3, F3>(
            sr.tid, sr.G, sr.nchunks,
            [&](size_t c) {
                F3 p;
                if (sr.cache)
                    smem_load<V>(sr.cache + c * V, p.v);
                else
                    load_chunk<T, V>(x + (ptrdiff_t)c * V * xs, p.v);
                if (V > 1 && wb_vec) {
                    load_chunk<T, V>(w + c * V, p.w);
                    if (has_bias) load_chunk<T, V>(b + c * V, p.b);
                } else {
#pragma unroll
                    for (int k = 0; k < V; ++k) {
                        p.w[k] = T::load(w[(ptrdiff_t)(c * V + k) * wst]);
                        p.b[k] = has_bias ? T::load(b[(ptrdiff_t)(c * V + k) * bst]) : 0.0f;
                    }
                }
                return p;
            },
            [&](size_t c, const F3 &p) {
                float zo[V], oo[V];
#pragma unroll
                for (int k = 0; k < V; ++k) {
                    zo[k] = div(ln_center(ls, p.v[k]));
                    oo[k] = zo[k] * p.w[k];
                    if (has_bias) oo[k] += p.b[k];
                }
                store_chunk<T, V>(z + (ptrdiff_t)c * V * zs, zo);
                store_chunk<T, V>(o + (ptrdiff_t)c * V * os, oo);
            });
    }
}

/* TILE_T (cuda/plan.h; the rule: cuda/plan_rows.cu's plan_tile): a
 * transposed input, whose rows are consecutive elements at each column. A
 * cluster of `cs` blocks takes a tile of tr consecutive rows of one run
 * (the input's innermost row dimension: `run` rows of unit stride); block
 * `rank` of it takes columns [rank W, rank W + W) of those rows. Thread t
 * loads row t % tr at columns t / tr + k CG (CG = 256 / tr column groups),
 * so one warp load covers tr adjacent elements of each of 32 / tr columns
 * (whole sectors, where a kernel walking a row reads one element of each),
 * into the block's slice of the tile in shared memory (pitch P elements:
 * infiniop_tile_pitch, no bank conflict on these writes). The input is
 * read once.
 *
 * Statistics: each block takes its slice's own shift, Kb = the slice's
 * rounded mean (a first block reduction), then its shifted sums S1b =
 * sum (x - Kb), S2b = sum (x - Kb)^2 over shared memory (the corrected
 * two-pass of ln_stats, per slice: no shift far from the mean, so no
 * second round), and sends (Kb, S1b, S2b) into every block of the cluster
 * (distributed shared memory stores, then one cluster barrier; a buffer
 * for each tile parity, so a block one tile ahead never overwrites a
 * slot still read). Every block then merges the slices in rank order
 * (bit-identical results): K = K0, S1 = sum (S1b + nb (Kb - K)), delta =
 * S1 / D, and M2 = sum (S2b - S1b^2 / nb) + nb (mb - delta)^2 with mb =
 * (Kb - K) + S1b / nb (Chan et al.'s pairwise update: every term a
 * difference of nearby values), var = M2 / D; z = ((x - K) - delta) / std
 * as ln_center. Then the outputs: thread t on columns t, t + 256, ... of
 * the slice, each for every row of the tile, so a warp stores along the
 * output rows. Every element is read (into shared memory) before the
 * cluster barrier and written after it, by the block that read it, so
 * output or input_standardization may be exactly input. */
#define LN_TILE_THREADS 256
#define LN_TILE_WARPS (LN_TILE_THREADS / 32)
#define LN_TILE_MAXR 32
#define LN_TILE_MAXCS 8

/* Sums v[0..N) of the threads of each tile row over the block (thread t
 * works on row t % tr, tr <= 32): the lanes of a warp on one row first
 * (shuffles), then the warps; after the barrier, row j's sums are
 * red[i][0..LN_TILE_WARPS)[j] (added by ln_tile_total). */
template <int N>
__device__ __forceinline__ void ln_tile_reduce(float (&v)[N], unsigned tr,
                                               float (*red)[LN_TILE_WARPS][LN_TILE_MAXR]) {
    for (unsigned o = tr; o < 32; o <<= 1)
#pragma unroll
        for (int i = 0; i < N; ++i) v[i] += __shfl_xor_sync(0xffffffffu, v[i], o);
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    if (lane < tr)
#pragma unroll
        for (int i = 0; i < N; ++i) red[i][warp][lane] = v[i];
    __syncthreads();
}
__device__ __forceinline__ float ln_tile_total(const float (*red)[LN_TILE_MAXR], unsigned j) {
    float a = 0.0f;
#pragma unroll
    for (int w = 0; w < LN_TILE_WARPS; ++w) a += red[w][j];
    return a;
}

template <typename T>
__global__ void __launch_bounds__(LN_TILE_THREADS, 4)
    layer_norm_tile(typename T::S *out, typename T::S *stdz, typename T::S *stdv, const typename T::S *in,
                    const typename T::S *w, const typename T::S *b, unsigned tr, unsigned W, unsigned P, size_t run,
                    const __grid_constant__ infiniopLayerNormInfo info) {
#if RG_HAS_CLUSTERS
    namespace cg = cooperative_groups;
    typedef typename T::S S;
    constexpr bool FAST = IsHalf<T>::value;
    constexpr int U = (int)(32 / sizeof(S)); /* loads in flight a thread: 32 bytes */
    extern __shared__ __align__(16) unsigned char ln_tile_smem[];
    S *tile = (S *)ln_tile_smem; /* tr rows x P */
    __shared__ float red[2][LN_TILE_WARPS][LN_TILE_MAXR];
    __shared__ float xch[2][LN_TILE_MAXCS][LN_TILE_MAXR][3]; /* [tile parity][rank][row]: Kb, S1b, S2b */
    __shared__ float rst[LN_TILE_MAXR][3];                    /* a row's K, delta, then 1/sd (half) or sd */
    __shared__ ptrdiff_t offs[2][LN_TILE_MAXR];               /* the tile rows' offsets: output, stdz */
    grid_dependency();
    cg::cluster_group cluster = cg::this_cluster();
    /* distributed shared memory may be written only once its block runs:
     * a cluster barrier, arrived at here and waited for before the first
     * remote store (the loads run in between) */
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
    auto cluster_started_wait = [] { asm volatile("barrier.cluster.wait.aligned;" ::: "memory"); };
    bool started = false;
    const unsigned cs = cluster.num_blocks(), rank = cluster.block_rank();
    const infiniopRowLayout &L = info.rows;
    const size_t D = L.ncols, c0 = (size_t)rank * W;
    /* the columns of block k: [k W, min(D, k W + W)) (possibly none) */
    auto ncols_of = [&](unsigned k) -> unsigned {
        const size_t a = (size_t)k * W;
        return D > a ? (D - a < W ? (unsigned)(D - a) : W) : 0u;
    };
    const unsigned nc = ncols_of(rank);
    const float invD = L.inv_ncols;
    const unsigned t = threadIdx.x, jl = t & (tr - 1), cgi = t / tr, CG = LN_TILE_THREADS / tr;
    const ptrdiff_t xs = L.col_stride[LN_IN], os = L.col_stride[LN_OUT], zs = L.col_stride[LN_STDZ];
    const ptrdiff_t wst = info.w_stride, bst = info.b_stride;
    const bool has_bias = info.has_bias;
    const size_t per_run = (run + tr - 1) / tr, ntiles = L.nrows / run * per_run;
    unsigned par = 0;
    for (size_t tile_i = blockIdx.x / cs; tile_i < ntiles; tile_i += gridDim.x / cs, par ^= 1u) {
        const size_t outer = tile_i / per_run, j0 = (tile_i - outer * per_run) * tr, r0 = outer * run + j0;
        const unsigned nr = run - j0 < tr ? (unsigned)(run - j0) : tr; /* rows in this tile */
        __syncthreads(); /* (the last tile's shared memory is read no more) */
        if (t < nr) {
            offs[0][t] = row_off(L, LN_OUT, r0 + t);
            offs[1][t] = row_off(L, LN_STDZ, r0 + t);
        }
        const bool act = jl < nr;
        const S *x = in + (act ? row_off(L, LN_IN, r0 + jl) : 0);
        S *trow = tile + (size_t)jl * P;
        /* the loads, into shared memory, and the slice's plain sums */
        float v1[1] = {0.0f};
        if (act)
            for (unsigned cc = cgi; cc < nc; cc += CG * U) {
                S v[U];
#pragma unroll
                for (int k = 0; k < U; ++k) {
                    const unsigned c = cc + (unsigned)k * CG;
                    if (c < nc) v[k] = x[(ptrdiff_t)(c0 + c) * xs];
                }
#pragma unroll
                for (int k = 0; k < U; ++k)
                    if (cc + (unsigned)k * CG < nc) {
                        trow[cc + (unsigned)k * CG] = v[k];
                        v1[0] += T::load(v[k]);
                    }
            }
        ln_tile_reduce<1>(v1, tr, red);
        if (t < nr) rst[t][0] = nc ? ln_tile_total(red[0], t) / (float)nc : 0.0f;
        __syncthreads();
        /* the slice's sums shifted by its rounded mean (its own elements:
         * this thread wrote them) */
        float v2[2] = {0.0f, 0.0f};
        if (act) {
            const float Kb = rst[jl][0];
            for (unsigned c = cgi; c < nc; c += CG) ln_add(T::load(trow[c]), Kb, v2);
        }
        ln_tile_reduce<2>(v2, tr, red);
        if (!started) cluster_started_wait(), started = true;
        if (t < nr) {
            const float e[3] = {rst[t][0], ln_tile_total(red[0], t), ln_tile_total(red[1], t)};
            for (unsigned k = 0; k < cs; ++k) {
                float *d = cluster.map_shared_rank(&xch[par][rank][t][0], k);
                d[0] = e[0], d[1] = e[1], d[2] = e[2];
            }
        }
        cluster.sync(); /* every block's slice sums in every block (and every input element read) */
        if (t < nr) {
            const float(*xb)[LN_TILE_MAXR][3] = xch[par];
            const float K = xb[0][t][0];
            float S1 = 0.0f;
            for (unsigned k = 0; k < cs; ++k)
                if (const unsigned nb = ncols_of(k)) S1 += xb[k][t][1] + (float)nb * (xb[k][t][0] - K);
            const float delta = FAST ? S1 * invD : S1 / (float)D;
            float M2 = 0.0f;
            for (unsigned k = 0; k < cs; ++k)
                if (const unsigned nb = ncols_of(k)) {
                    const float s1 = xb[k][t][1], dm = ((xb[k][t][0] - K) + s1 / (float)nb) - delta;
                    M2 += (xb[k][t][2] - s1 * (s1 / (float)nb)) + (float)nb * dm * dm;
                }
            float var = FAST ? M2 * invD : M2 / (float)D;
            if (var < 0.0f) var = 0.0f; /* rounding; NaN stays NaN */
            const float ve = var + info.eps;
            const float sd = FAST ? sqrt_approx(ve) : sqrtf(ve);
            if (rank == 0) stdv[row_off(L, LN_STD, r0 + t)] = T::store(sd);
            rst[t][0] = K, rst[t][1] = delta, rst[t][2] = FAST ? rsqrt_approx(ve) : sd;
        }
        __syncthreads();
        /* OW columns a thread at a time, their weight and bias loads first
         * (in flight together: a store may alias them, so the compiler
         * cannot move a later load above it) */
        constexpr unsigned OW = 4;
        for (unsigned c1 = t; c1 < nc; c1 += OW * LN_TILE_THREADS) {
            float wv[OW], bv[OW];
#pragma unroll
            for (unsigned k = 0; k < OW; ++k) {
                const unsigned c = c1 + k * LN_TILE_THREADS;
                const ptrdiff_t cc = (ptrdiff_t)(c0 + c);
                wv[k] = c < nc ? T::load(w[cc * wst]) : 0.0f;
                bv[k] = c < nc && has_bias ? T::load(b[cc * bst]) : 0.0f;
            }
#pragma unroll
            for (unsigned k = 0; k < OW; ++k) {
                const unsigned c = c1 + k * LN_TILE_THREADS;
                if (c >= nc) break;
                const ptrdiff_t cc = (ptrdiff_t)(c0 + c);
                for (unsigned i = 0; i < nr; ++i) {
                    LnStats li;
                    li.K = rst[i][0], li.delta = rst[i][1], li.var = 0.0f;
                    const float d = ln_center(li, T::load(tile[(size_t)i * P + c]));
                    const float zo = FAST ? d * rst[i][2] : d / rst[i][2]; /* (F32: correctly rounded) */
                    float oo = zo * wv[k];
                    if (has_bias) oo += bv[k];
                    stdz[offs[1][i] + cc * zs] = T::store(zo);
                    out[offs[0][i] + cc * os] = T::store(oo);
                }
            }
        }
    }
    if (!started) cluster_started_wait();
#else
    __trap();
#endif
}

/* The TILE_T run (plan_tile; the plan keeps it as tile_run): the extent
 * of the input's innermost row dimension when its stride there is 1 and
 * its column stride is not (a transposed input); 0 otherwise. */
static size_t ln_tile_run(const infiniopRowLayout &L) {
    if (L.col_stride[LN_IN] == 1 || L.nrows < 2) return 0;
    const int d = L.ndims >= 1 ? L.ndims - 1 : 0;
    if (L.ndims < 1 || L.stride[d][LN_IN] != 1) return 0;
    return L.shape[d];
}

/* The register-path instance of launch q (cuda/rows.cuh's rg_instance),
 * for the run call and the plan (rg_plan_cap). */
template <typename T>
using LnRegFn = void (*)(typename T::S *, typename T::S *, typename T::S *, const typename T::S *,
                         const typename T::S *, const typename T::S *, unsigned, const infiniopLayerNormInfo);
template <typename T> static LnRegFn<T> reg_kernel(const infiniopCudaRowLaunch &q) {
    return rg_instance<VecWidth<T>::value, 4, LnRegFn<T>>(q, [&](auto I, auto M, auto AV, auto CS) -> LnRegFn<T> {
        constexpr int ITEMS = decltype(I)::value, MODE = decltype(M)::value, RV = decltype(AV)::value;
        /* (strided rows are latency-bound: early loads only) */
        if constexpr (decltype(CS)::value) return layer_norm_reg<T, ITEMS, MODE, true, RV, true, true, 0>;
        /* weight or bias of another stride than 1: element loads (RgBlock8:
         * late loads only) */
        if constexpr (!RgBlock8<MODE, ITEMS, RV>::value) {
            if constexpr (RV > 1)
                if (!q.param_vec && q.early) return layer_norm_reg<T, ITEMS, MODE, true, RV, false, false, 0>;
            if (q.early) return layer_norm_reg<T, ITEMS, MODE, true, RV, false, true, 0>;
        }
        return rg_cap<RgCappable<MODE, ITEMS, RV>::value>(q, [&](auto C) -> LnRegFn<T> {
            constexpr int CAP = decltype(C)::value;
            if constexpr (RV > 1)
                if (!q.param_vec) return layer_norm_reg<T, ITEMS, MODE, false, RV, false, false, CAP>;
            return layer_norm_reg<T, ITEMS, MODE, false, RV, false, true, CAP>;
        });
    });
}

/* Runs the plan (cuda/plan.h): its aligned launch when every pointer it
 * reads or writes by vectors is 16-byte aligned, else its unaligned one. */
template <typename T>
static cudaError_t launch(const infiniopLayerNormInfo *info, void *out, void *stdz, void *stdv, const void *in,
                          const void *w, const void *b, cudaStream_t stream) {
    typedef typename T::S S;
    constexpr int V = VecWidth<T>::value;
    const infiniopCudaRowPlan &p = info->cuda;
    const void *vp[5] = {out, stdz, in};
    int nvp = 3;
    if (info->w_stride == 1) vp[nvp++] = w;
    if (info->has_bias && info->b_stride == 1) vp[nvp++] = b;
    const infiniopCudaRowLaunch &q = infiniop_row_launch(p, vp, nvp);
    S *o = (S *)out, *z = (S *)stdz, *sd = (S *)stdv;
    const S *x = (const S *)in, *ws = (const S *)w, *bs = (const S *)b;
    if (q.kernel == INFINIOP_CUDA_ROW_TILE_T)
        return infiniop_cuda_launch(layer_norm_tile<T>, dim3(q.grid), dim3(q.threads), q.smem, stream, q.cluster,
                                    p.pdl, o, z, sd, x, ws, bs, q.tile_rows, q.tile_cols, q.tile_pitch,
                                    q.tile_run, *info);
    if (rg_is_reg(q)) return rg_launch(reg_kernel<T>(q), q, p.pdl, stream, o, z, sd, x, ws, bs, q.lanes, *info);
    return stream_launch(
        q, p.pdl, stream,
        [](auto W, auto VEC) { return layer_norm_kernel<T, decltype(VEC)::value ? V : 1, decltype(W)::value>; }, o, z,
        sd, x, ws, bs, q.param_vec, q.smem, *info);
}

extern "C" infiniStatus_t infiniop_layer_norm_cuda_plan(infiniopLayerNormInfo *info, int device_id) {
    const size_t es = infiniop_dtype_size(info->dtype);
    const int V = (int)(16 / es);
    const int ts[3] = {LN_OUT, LN_STDZ, LN_IN};
    const InfiniopRowShape s = {info->rows.nrows,
                                info->rows.ncols,
                                V,
                                0,
                                infiniop_rows_vec_ok(&info->rows, ts, 3, es, V),
                                info->w_stride == 1 && (!info->has_bias || info->b_stride == 1),
                                false,
                                infiniop_rows_unit_ok(&info->rows, ts, 3),
                                ln_tile_run(info->rows)};
    const infiniStatus_t st = infiniop_cuda_plan_rows(device_id, s, &info->cuda);
    /* slow rows (rg_plan_caps): weight and bias loaded element by element
     * (V loads a vector; broadcast ones one load a vector), item by item
     * in the output phase */
    const bool slow = !s.param_vec;
    if (st == INFINI_STATUS_SUCCESS)
        INFINIOP_CUDA_DISPATCH_HALF_FLOAT(info->dtype, T, rg_plan_caps(device_id, &info->cuda, slow, reg_kernel<T>));
    return st;
}

extern "C" infiniStatus_t infiniop_layer_norm_cuda(const infiniopLayerNormInfo *info, int device_id, void *out,
                                                   void *stdz, void *std, const void *in, const void *w,
                                                   const void *b, void *stream) {
    InfiniopCudaDeviceGuard guard(device_id);
    if (guard.err != cudaSuccess) return infiniop_cuda_launch_status("layer_norm", guard.err);
    cudaError_t err = cudaSuccess;
    INFINIOP_CUDA_DISPATCH_HALF_FLOAT(info->dtype, T,
                                      err = launch<T>(info, out, stdz, std, in, w, b, (cudaStream_t)stream));
    return infiniop_cuda_launch_status("layer_norm", err);
}
