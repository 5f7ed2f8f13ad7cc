/*
 * ops/layer_norm/cuda.cu - layer_norm on NVIDIA GPUs.
 *
 * A row goes to a group of threads (a warp for short rows, a block for long
 * ones; cuda/device.cu chooses at descriptor creation). The statistics are
 * those of the CPU: the variance as the mean of squared deviations (stable,
 * never E[x^2] - mean^2) with the corrected two-pass term that cancels the
 * mean's rounding error, var = (sum d^2 - (sum d)^2 / D) / D, d = x - mean,
 * clamped at 0 (NaN kept); then the outputs: z = (x - mean) / std
 * (correctly rounded, from one reciprocal a row: DivBy in cuda/common.cuh),
 * output = z * w + b, std = sqrt(var + eps).
 *  - The register path (the row held in registers) takes the statistics in
 *    one reduction, shifted by the mean of the row's first 8 elements, and
 *    falls back to the two passes (mean, then variance) for the rare rows
 *    where that shift is too far from the mean (see layer_norm_reg). For
 *    the half types it multiplies by 1/D and takes std and 1/std from the
 *    hardware approximations (a few float32 ulp, far under the output's
 *    rounding; as the unary operators do for half outputs).
 *  - The streaming kernel (longer rows, strided weight or bias) makes three
 *    passes; x is kept in shared memory (float32) between them when the row
 *    fits, each thread its own elements; otherwise each pass reads it again.
 * Element j is read before it is written, by the same thread, so output or
 * input_standardization may be exactly input.
 */
#include "cuda/common.cuh"
#include "cuda/rows.cuh"
#include "layer_norm.h"

/* The register path (cuda/rows.cuh; unit-stride w and b): x is loaded once,
 * all its vectors in flight together, and the statistics and the outputs
 * work on the registers; w and b come with x for decode shapes (WB_EARLY),
 * in the output phase otherwise. */
template <typename T, int ITEMS, int MODE, bool WB_EARLY>
__global__ void __launch_bounds__(RG_MAX_THREADS(ITEMS))
    layer_norm_reg(typename T::S *out, typename T::S *stdz, typename T::S *stdv, const typename T::S *in,
                   const typename T::S *w, const typename T::S *b, unsigned lanes,
                   const __grid_constant__ infiniopLayerNormInfo info) {
    constexpr int V = VecWidth<T>::value;
    __shared__ RowScratch sc;
    const infiniopRowLayout &L = info.rows;
    constexpr bool FAST = IsHalf<T>::value;
    const size_t D = L.ncols, nchunks = D / V;
    const float invD = 1.0f / (float)D; /* half types multiply by it */
    const RowGroup g = row_group<MODE>(lanes);
    const bool has_bias = info.has_bias;
    typedef Vec<typename T::S, V> VT;
    for (size_t r = g.row0; r < L.nrows; r += g.rstep) {
        row_next<MODE>(g, r);
        const typename T::S *x = in + row_off(L, LN_IN, r);
        /* raw vectors: half the registers of float copies for 2-byte types.
         * WB_EARLY (decode shapes, plan.reg_latency: latency is all): w and
         * b are loaded with x, in one round trip; otherwise they are read in
         * the last phase (cached: every row reads them), which saves the
         * registers (layer_norm f32 65536x512: 104 vs 140 us; bench/NOTES.md). */
        VT qx[ITEMS], qw[WB_EARLY ? ITEMS : 1], qb[WB_EARLY ? ITEMS : 1];
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const size_t c = g.tid + (size_t)k * g.G;
            if (c < nchunks) {
                qx[k] = load_once<VT>(x + c * V);
                if constexpr (WB_EARLY) {
                    qw[k] = *reinterpret_cast<const VT *>(w + c * V);
                    if (has_bias) qb[k] = *reinterpret_cast<const VT *>(b + c * V);
                }
            }
        }
        if (const size_t ra = rg_ahead(info.cuda, r, L.nrows))
            rg_prefetch(g, in + row_off(L, LN_IN, ra), D * sizeof(*in));
        /* The statistics in one reduction (one barrier in the block form),
         * shifted by K, the mean of the row's first 8 elements (every
         * thread loads them; cached): S1 = sum (x - K), S2 = sum (x - K)^2,
         *   delta = S1 / D,  mean = K + delta,  var = (S2 - S1 delta) / D,
         * the corrected two-pass formula with K in place of the rounded
         * mean. Its rounding error grows with delta^2 / var, so a row keeps
         * it only when delta^2 <= var (|mean - K| <= std: S2 <= 2 D var, and
         * the error at most ~5 times the two-pass bound, well inside the
         * tests' tolerance); K from 8 independent values misses that with
         * probability ~0.5%. Other rows (and non-finite ones) take the two
         * passes: mean = sum x / D, then the corrected two-pass variance.
         * Every thread of the group has the same sums, so the branch is
         * uniform. */
        constexpr int KV = V >= 8 ? 1 : 8 / V; /* vectors in the shift: 8 elements (fewer if the row is shorter) */
        float K = 0.0f;
        if constexpr (FAST) { /* pairwise: a short dependent chain */
            float kh[KV * V];
#pragma unroll
            for (int k = 0; k < KV; ++k) {
                VT h;
                if ((size_t)k < nchunks) h = *reinterpret_cast<const VT *>(x + k * V);
#pragma unroll
                for (int e = 0; e < V; ++e) kh[k * V + e] = (size_t)k < nchunks ? T::load(h.v[e]) : 0.0f;
            }
#pragma unroll
            for (int s = KV * V / 2; s > 0; s /= 2)
#pragma unroll
                for (int i = 0; i < s; ++i) kh[i] += kh[i + s];
            K = kh[0];
        } else { /* (F32: in order, fewer registers) */
#pragma unroll
            for (int k = 0; k < KV; ++k)
                if ((size_t)k < nchunks) {
                    const VT h = *reinterpret_cast<const VT *>(x + k * V);
#pragma unroll
                    for (int e = 0; e < V; ++e) K += T::load(h.v[e]);
                }
        }
        K *= nchunks >= (size_t)KV ? 1.0f / (float)(KV * V) : 1.0f / (float)V; /* (a power of two: exact) */
        /* half types: two accumulators each, half the dependent chain (F32
         * keeps one: the registers of layer_norm f32 65536x512's 64) */
        float st[2] = {0.0f, 0.0f}, st2[2] = {0.0f, 0.0f};
#pragma unroll
        for (int k = 0; k < ITEMS; ++k)
            if (g.tid + (size_t)k * g.G < nchunks) {
#pragma unroll
                for (int e = 0; e < V; ++e) {
                    const float d = T::load(qx[k].v[e]) - K;
                    float *a = FAST && (e & 1) ? st2 : st;
                    a[0] += d;
                    a[1] = fmaf(d, d, a[1]);
                }
            }
        st[0] += st2[0], st[1] += st2[1];
        rg_reduce_n<MODE, false, 2>(g, st, &sc, 0);
        const float delta = FAST ? st[0] * invD : st[0] / (float)D;
        float mean = K + delta, var = FAST ? (st[1] - st[0] * delta) * invD : (st[1] - st[0] * delta) / (float)D;
        if (!(delta * delta <= var)) { /* the two passes (rare); NaN and inf too */
            float sum = 0.0f;
#pragma unroll
            for (int k = 0; k < ITEMS; ++k)
                if (g.tid + (size_t)k * g.G < nchunks) {
                    forget(qx[k]); /* convert again in each phase rather than keep float copies live */
#pragma unroll
                    for (int e = 0; e < V; ++e) sum += T::load(qx[k].v[e]);
                }
            /* (slot 2: slots 0 and 1 may still be read; after this
             * reduction's barrier they are free again) */
            mean = rg_reduce<MODE, false>(g, sum, &sc, 2) / (float)D;
            float ds[2] = {0.0f, 0.0f};
#pragma unroll
            for (int k = 0; k < ITEMS; ++k)
                if (g.tid + (size_t)k * g.G < nchunks) {
                    forget(qx[k]);
#pragma unroll
                    for (int e = 0; e < V; ++e) {
                        const float d = T::load(qx[k].v[e]) - mean;
                        ds[0] += d;
                        ds[1] += d * d;
                    }
                }
            rg_reduce_n<MODE, false, 2>(g, ds, &sc, 0);
            var = (ds[1] - ds[0] * ds[0] / (float)D) / (float)D;
        }
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
            const size_t c = g.tid + (size_t)k * g.G;
            if (c < nchunks) {
                forget(qx[k]);
                VT zq, oq, wk, bk;
                if constexpr (WB_EARLY) {
                    wk = qw[k], bk = qb[k];
                } else {
                    wk = *reinterpret_cast<const VT *>(w + c * V);
                    if (has_bias) bk = *reinterpret_cast<const VT *>(b + c * V);
                }
#pragma unroll
                for (int e = 0; e < V; ++e) {
                    const float d = T::load(qx[k].v[e]) - mean;
                    const float zo = FAST ? d * rs : div(d);
                    float oo = zo * T::load(wk.v[e]);
                    if (has_bias) oo += T::load(bk.v[e]);
                    zq.v[e] = T::store(zo);
                    oq.v[e] = T::store(oo);
                }
                store_once(z + c * V, zq);
                store_once(o + c * V, oq);
            }
        }
    }
    row_done<MODE>();
}

template <typename T, bool WB_EARLY> struct LnReg {
    template <int ITEMS, int MODE> struct K {
        static cudaError_t launch(const infiniopLayerNormInfo *info, cudaStream_t s, typename T::S *o,
                                  typename T::S *z, typename T::S *sd, const typename T::S *x, const typename T::S *w,
                                  const typename T::S *b) {
            return rg_launch(layer_norm_reg<T, ITEMS, MODE, WB_EARLY>, info->cuda, s, o, z, sd, x, w, b,
                             info->cuda.reg_lanes, *info);
        }
    };
};

template <typename T, int V, bool WARP>
__global__ void __launch_bounds__(INFINIOP_CUDA_ROW_MAX_BLOCK)
    layer_norm_kernel(typename T::S *out, typename T::S *stdz, typename T::S *stdv, const typename T::S *in,
                      const typename T::S *w, const typename T::S *b, bool wb_vec, size_t smem,
                      const __grid_constant__ infiniopLayerNormInfo info) {
    typedef typename T::S S;
    __shared__ float red[33];
    const infiniopRowLayout &L = info.rows;
    const size_t D = L.ncols;
    const StreamRows<WARP> sr;
    const unsigned G = sr.G, tid = sr.tid;
    float *cache = sr.cache(smem, D);
    const size_t nchunks = D / V;
    /* Scalar path: element j of a row at j * column stride (any sign). */
    const ptrdiff_t xs = V == 1 ? L.col_stride[LN_IN] : 1, os = V == 1 ? L.col_stride[LN_OUT] : 1,
                    zs = V == 1 ? L.col_stride[LN_STDZ] : 1;
    const ptrdiff_t wst = info.w_stride, bst = info.b_stride;
    const bool has_bias = info.has_bias;

    for (size_t r = sr.first(); r < L.nrows; r += sr.step()) {
        const S *x = in + row_off(L, LN_IN, r);
        S *o = out + row_off(L, LN_OUT, r);
        S *z = stdz + row_off(L, LN_STDZ, r);

        float sum = 0.0f;
        for (size_t c = tid; c < nchunks; c += G) {
            float v[V];
            load_chunk<T, V>(x + (ptrdiff_t)c * V * xs, v);
#pragma unroll
            for (int k = 0; k < V; ++k) sum += v[k];
            if (cache) smem_store<V>(cache + c * V, v);
        }
        const float mean = group_sum<WARP>(sum, red) / (float)D;

        float sq = 0.0f, dev = 0.0f;
        for (size_t c = tid; c < nchunks; c += G) {
            float v[V];
            if (cache)
                smem_load<V>(cache + c * V, v);
            else
                load_chunk<T, V>(x + (ptrdiff_t)c * V * xs, v);
#pragma unroll
            for (int k = 0; k < V; ++k) {
                float d = v[k] - mean;
                dev += d;
                sq += d * d;
            }
        }
        dev = group_sum<WARP>(dev, red);
        float var = (group_sum<WARP>(sq, red) - dev * dev / (float)D) / (float)D;
        if (var < 0.0f) var = 0.0f; /* rounding; NaN stays NaN */
        const float sd = sqrtf(var + info.eps);
        const DivBy div(sd);
        if (tid == 0) stdv[row_off(L, LN_STD, r)] = T::store(sd);

        for (size_t c = tid; c < nchunks; c += G) {
            float v[V], wv[V], bv[V], zo[V], oo[V];
            if (cache)
                smem_load<V>(cache + c * V, v);
            else
                load_chunk<T, V>(x + (ptrdiff_t)c * V * xs, v);
            if (V > 1 && wb_vec) {
                load_chunk<T, V>(w + c * V, wv);
                if (has_bias) load_chunk<T, V>(b + c * V, bv);
            } else {
#pragma unroll
                for (int k = 0; k < V; ++k) {
                    wv[k] = T::load(w[(ptrdiff_t)(c * V + k) * wst]);
                    if (has_bias) bv[k] = T::load(b[(ptrdiff_t)(c * V + k) * bst]);
                }
            }
#pragma unroll
            for (int k = 0; k < V; ++k) {
                zo[k] = div(v[k] - mean);
                oo[k] = zo[k] * wv[k];
                if (has_bias) oo[k] += bv[k];
            }
            store_chunk<T, V>(z + (ptrdiff_t)c * V * zs, zo);
            store_chunk<T, V>(o + (ptrdiff_t)c * V * os, oo);
        }
    }
}

template <typename T>
static cudaError_t launch(const infiniopLayerNormInfo *info, void *out, void *stdz, void *stdv, const void *in,
                          const void *w, const void *b, cudaStream_t stream) {
    typedef typename T::S S;
    constexpr int V = VecWidth<T>::value;
    const infiniopCudaRowPlan &p = info->cuda;
    bool vec = p.vec && infiniop_aligned16(out) && infiniop_aligned16(stdz) && infiniop_aligned16(in);
    bool wb_vec = p.w_vec && infiniop_aligned16(w) && (!info->has_bias || (p.b_vec && infiniop_aligned16(b)));
    dim3 grid(p.grid), block(p.threads);
    S *o = (S *)out, *z = (S *)stdz, *sd = (S *)stdv;
    const S *x = (const S *)in, *ws = (const S *)w, *bs = (const S *)b;
    if (vec && wb_vec && p.reg_items) /* (strided weight or bias: the streaming kernel) */
        return p.reg_latency ? rg_dispatch<LnReg<T, true>::template K>(p, info, stream, o, z, sd, x, ws, bs)
                             : rg_dispatch<LnReg<T, false>::template K>(p, info, stream, o, z, sd, x, ws, bs);
    const bool warp = p.mode == INFINIOP_CUDA_ROW_WARP;
    auto kernel = warp ? (vec ? layer_norm_kernel<T, V, true> : layer_norm_kernel<T, 1, true>)
                       : (vec ? layer_norm_kernel<T, V, false> : layer_norm_kernel<T, 1, false>);
    return infiniop_cuda_launch(kernel, grid, block, p.smem, stream, 1u, p.pdl, o, z, sd, x, ws, bs, vec && wb_vec,
                                p.smem, *info);
}

extern "C" infiniStatus_t infiniop_layer_norm_cuda_plan(infiniopLayerNormInfo *info, int device_id) {
    size_t es = infiniop_dtype_size(info->dtype);
    int V = (int)(16 / es);
    infiniStatus_t st =
        infiniop_cuda_plan_rows(device_id, info->rows.nrows, info->rows.ncols, V,
                                INFINIOP_CUDA_REG_LONG, &info->cuda);
    if (st != INFINI_STATUS_SUCCESS) return st;
    const int ts[3] = {LN_OUT, LN_STDZ, LN_IN};
    info->cuda.vec = infiniop_rows_vec_ok(&info->rows, ts, 3, es, V);
    info->cuda.w_vec = info->w_stride == 1;
    info->cuda.b_vec = info->has_bias && info->b_stride == 1;
    return INFINI_STATUS_SUCCESS;
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
