/*
 * ops/add_rms_norm/cuda.cu - add_rms_norm on NVIDIA GPUs.
 *
 * A row goes to a group of threads (a warp for short rows, a block for
 * long ones; cuda/plan_rows.cu chooses at descriptor creation). Two passes:
 *   1. r = a + b (float32), sum r^2 over the group; r is kept in shared
 *      memory when the row fits, each thread its own elements;
 *   2. scale = 1 / sqrt(mean + eps); residual_out = round(r),
 *      y = round(r * scale * w).
 * Element j is read before it is written, by the same thread, so y or
 * residual_out may be exactly a or b. 16-byte vectors when the layout (at
 * creation) and the pointers (here) allow, one element at a time otherwise.
 */
#include "add_rms_norm.h"
#include "cuda/common.cuh"
#include "cuda/rows.cuh"

/* The register path (cuda/rows.cuh): a, b and w are loaded once, all
 * accesses in flight together; r = a + b stays in registers for the second
 * phase. V: 16-byte vectors or 1 (one element an access); the weight at
 * any stride (rg_load_param). Same arithmetic as the streaming kernel
 * below. */
template <typename A, typename W, int ITEMS, int MODE, int V, bool CS, bool PV, int CAP>
__global__ void __launch_bounds__(RG_BOUNDS(MODE, ITEMS, CAP, V == 8))
    add_rms_norm_reg(typename A::S *y, typename A::S *res, const typename A::S *a, const typename A::S *b,
                     const typename W::S *w, unsigned lanes, const __grid_constant__ infiniopAddRMSNormInfo info) {
    __shared__ RowScratch sc;
    const infiniopRowLayout &L = info.rows;
    const size_t D = L.ncols;
    /* a register row is at most a cluster's threads x 16 accesses: 32-bit
     * access indices (64-bit ones doubled the kernel's integer work) */
    const unsigned nchunks = (unsigned)(D / V);
    const ptrdiff_t ws = info.w_stride;
    const ptrdiff_t as = L.col_stride[ARN_A], bs = L.col_stride[ARN_B], ys = L.col_stride[ARN_Y],
                    rs = L.col_stride[ARN_RES]; /* (CS only) */
    const float invD = L.inv_ncols;
    const RowGroup g = row_group<MODE, RgWarp32<MODE, ITEMS>::value, false>(lanes);
    typedef RgVec<typename A::S, V> VA;
    typedef RgVec<typename W::S, V> VW;
    /* The weight is loaded with a and b (one round trip), except element
     * loads (a strided or broadcast weight) at 2 or more items a thread:
     * those go to the output phase, since V element registers an item held
     * through the reduction spilled (bf16, 4 items: 128 registers and 144
     * bytes of spill, 74 and none late) and measured on an H200 1.09-1.48x
     * slower (add_rms_norm f16 9x8x4x14336 w:bcast 15.9 -> 10.8 us,
     * 7112x7168 w:strided 174 -> 138); at one item the late load's extra
     * round trip is exposed instead (latency-bound shapes, 1.16-1.20x
     * slower late; bench/NOTES.md). At 8 vectors a thread (the block
     * form's rows of 2049-4096 vectors, with rows that fill the GPU) the
     * weight always loads late: early, a + b + w of float32 rows are 96
     * registers of data alone. The one-element form's 16 items keep the
     * early load (late, on an H200: add_rms_norm bf16 13x4099 2.94 -> 4.85
     * us, f16 999x3001 13.0 -> 15.4). A broadcast weight (stride 0) loaded
     * late is one element held from the start (RgLateParam, rows.cuh: bf16
     * 2048x896 w:bcast 6.62 -> 5.81 us). */
    constexpr bool W_LATE = (!PV && ITEMS >= 2) || RgBlock8<MODE, ITEMS, V>::value;
    /* the constants before the grid dependency (keep, common.cuh; rg_wait) */
    keep(nchunks);
    if (!rg_wait(g, L.nrows)) return;
    const RgLateParam<typename W::S, V, PV> wl(W_LATE ? w : nullptr, ws); /* (a broadcast weight) */
    for (size_t r = g.row0; r < L.nrows; r += g.rstep) {
        row_next<MODE>(g, r);
        const typename A::S *ar = a + row_off(L, ARN_A, r), *br = b + row_off(L, ARN_B, r);
        /* raw vectors (half the registers of float copies for 2-byte types);
         * r = a + b is formed again, identically, in the second phase */
        VA qa[ITEMS], qb[ITEMS];
        VW qw[W_LATE ? 1 : ITEMS];
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const unsigned c = g.tid + (unsigned)k * g.G;
            if (c < nchunks) {
                qa[k] = load_once<VA>(ar + rg_at<V, CS>(c, as));
                qb[k] = load_once<VA>(br + rg_at<V, CS>(c, bs));
                if constexpr (!W_LATE) qw[k] = rg_load_param<typename W::S, V, PV>(w, c, ws);
            }
        }
        if (const size_t ra = rg_ahead(info.cuda, r, L.nrows)) {
            rg_prefetch(g, a + row_off(L, ARN_A, ra), D * sizeof(*a));
            rg_prefetch(g, b + row_off(L, ARN_B, ra), D * sizeof(*b));
        }
        float ss = 0.0f;
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const unsigned c = g.tid + (unsigned)k * g.G;
            if (c < nchunks) {
                float va[V], vb[V];
                unpack<A>(qa[k], va);
                unpack<A>(qb[k], vb);
#pragma unroll
                for (int e = 0; e < V; ++e) {
                    const float v = va[e] + vb[e];
                    ss += v * v;
                }
            }
        }
        ss = rg_reduce<MODE, false>(g, ss, &sc, 0);
        /* F32 outputs: correctly rounded division and square root; half
         * types (outputs of 8 or 11 bits): the mean by a multiply and the
         * hardware rsqrt (2 float32 ulp), as layer_norm's half types */
        const float scale = IsHalf<A>::value ? rsqrt_approx(ss * invD + info.epsilon)
                                             : 1.0f / sqrtf(ss / (float)D + info.epsilon);
        typename A::S *yr = y + row_off(L, ARN_Y, r), *rr = res + row_off(L, ARN_RES, r);
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const unsigned c = g.tid + (unsigned)k * g.G;
            if (c < nchunks) {
                forget(qa[k]); /* convert again rather than keep float copies live */
                forget(qb[k]);
                VA o, q;
                VW wk;
                if constexpr (W_LATE) wk = wl.at(w, c, ws);
                else wk = qw[k];
                float va[V], vb[V];
                unpack<A>(qa[k], va);
                unpack<A>(qb[k], vb);
#pragma unroll
                for (int e = 0; e < V; ++e) {
                    const float v = va[e] + vb[e];
                    q.v[e] = A::store(v);
                    o.v[e] = A::store(v * scale * W::load(wk.v[e]));
                }
                store_once(rr + rg_at<V, CS>(c, rs), q);
                store_once(yr + rg_at<V, CS>(c, ys), o);
            }
        }
    }
    row_done<MODE>();
}

template <typename A, typename W, int V, bool WARP>
__global__ void __launch_bounds__(INFINIOP_CUDA_ROW_MAX_BLOCK)
    add_rms_norm_kernel(typename A::S *y, typename A::S *res, const typename A::S *a, const typename A::S *b,
                        const typename W::S *w, bool w_vec, size_t smem,
                        const __grid_constant__ infiniopAddRMSNormInfo info) {
    typedef typename A::S S;
    __shared__ float red[33];
    const infiniopRowLayout &L = info.rows;
    const size_t D = L.ncols;
    const StreamRows<WARP, V> sr(D, smem);
    const ptrdiff_t ws = info.w_stride;
    constexpr int U1 = STREAM_BATCH(V, 2), U2 = STREAM_BATCH(V, 3);
    struct P1 {
        Vec<S, V> a, b;
    };
    struct P2 {
        float v[V], w[V];
    };

    for (size_t r = sr.first(); r < L.nrows; r += sr.step()) {
        const S *ar = a + row_off(L, ARN_A, r);
        const S *br = b + row_off(L, ARN_B, r);
        S *yr = y + row_off(L, ARN_Y, r);
        S *rr = res + row_off(L, ARN_RES, r);

        /* (loads in flight: STREAM_BATCH, cuda/common.cuh) */
        float ss = 0.0f;
        chunks_batched<U1, P1>(
            sr.tid, sr.G, sr.nchunks,
            [&](size_t c) {
                P1 p;
                p.a = load_raw<S, V>(ar + c * V);
                p.b = load_raw<S, V>(br + c * V);
                return p;
            },
            [&](size_t c, const P1 &p) {
                float va[V];
#pragma unroll
                for (int k = 0; k < V; ++k) {
                    va[k] = A::load(p.a.v[k]) + A::load(p.b.v[k]);
                    ss += va[k] * va[k];
                }
                if (sr.cache) smem_store<V>(sr.cache + c * V, va);
            });
        ss = group_sum<WARP>(ss, red);
        const float scale = 1.0f / sqrtf(ss / (float)D + info.epsilon);

        /* r (from the cache or a + b again) and w, U2 chunks at a time,
         * then the outputs */
        chunks_batched<U2, P2>(
            sr.tid, sr.G, sr.nchunks,
            [&](size_t c) {
                P2 p;
                if (sr.cache) {
                    smem_load<V>(sr.cache + c * V, p.v);
                } else {
                    float vb[V];
                    load_chunk<A, V>(ar + c * V, p.v);
                    load_chunk<A, V>(br + c * V, vb);
#pragma unroll
                    for (int k = 0; k < V; ++k) p.v[k] += vb[k];
                }
                if (V > 1 && w_vec) {
                    load_chunk<W, V>(w + c * V, p.w);
                } else {
#pragma unroll
                    for (int k = 0; k < V; ++k) p.w[k] = W::load(w[(ptrdiff_t)(c * V + k) * ws]);
                }
                return p;
            },
            [&](size_t c, const P2 &p) {
                float o[V];
#pragma unroll
                for (int k = 0; k < V; ++k) o[k] = p.v[k] * scale * p.w[k];
                store_chunk<A, V>(rr + c * V, p.v);
                store_chunk<A, V>(yr + c * V, o);
            });
    }
}

/* The register-path instance of launch q (cuda/rows.cuh's rg_instance),
 * for the run call and the plan (rg_plan_cap). */
template <typename A, typename W>
using ArnRegFn = void (*)(typename A::S *, typename A::S *, const typename A::S *, const typename A::S *,
                          const typename W::S *, unsigned, const infiniopAddRMSNormInfo);
template <typename A, typename W> static ArnRegFn<A, W> reg_kernel(const infiniopCudaRowLaunch &q) {
    typedef ArnRegFn<A, W> Fn;
    return rg_instance<VecWidth<A>::value, 4, Fn>(q, [&](auto I, auto M, auto AV, auto CS) -> Fn {
        constexpr int ITEMS = decltype(I)::value, MODE = decltype(M)::value, RV = decltype(AV)::value;
        constexpr bool STRIDED = decltype(CS)::value;
        return rg_cap<RgCappable<MODE, ITEMS, RV>::value>(q, [&](auto C) -> Fn {
            constexpr int CAP = decltype(C)::value;
            if constexpr (RV > 1) /* a weight of another stride than 1: element loads */
                if (!q.param_vec) return add_rms_norm_reg<A, W, ITEMS, MODE, RV, STRIDED, false, CAP>;
            return add_rms_norm_reg<A, W, ITEMS, MODE, RV, STRIDED, true, CAP>;
        });
    });
}

/* Runs the plan (cuda/plan.h): its aligned launch when y, residual_out, a,
 * b and (unit-stride) w are 16-byte aligned, else its unaligned one. */
template <typename A, typename W>
static cudaError_t launch(const infiniopAddRMSNormInfo *info, void *y, void *res, const void *a, const void *b,
                          const void *w, cudaStream_t stream) {
    typedef typename A::S S;
    typedef typename W::S SW;
    constexpr int V = VecWidth<A>::value;
    const infiniopCudaRowPlan &p = info->cuda;
    const void *vp[5] = {y, res, a, b, w};
    const infiniopCudaRowLaunch &q = infiniop_row_launch(p, vp, info->w_stride == 1 ? 5 : 4);
    S *ys = (S *)y, *rs = (S *)res;
    const S *as = (const S *)a, *bs = (const S *)b;
    const SW *wp = (const SW *)w;
    if (rg_is_reg(q)) return rg_launch(reg_kernel<A, W>(q), q, p.pdl, stream, ys, rs, as, bs, wp, q.lanes, *info);
    return stream_launch(
        q, p.pdl, stream,
        [](auto WARP, auto VEC) {
            return add_rms_norm_kernel<A, W, decltype(VEC)::value ? V : 1, decltype(WARP)::value>;
        },
        ys, rs, as, bs, wp, q.param_vec, q.smem, *info);
}

/* F32 activations take F32 weights only (validated at creation): the other
 * two pairs are never instantiated. */
template <typename A, typename W>
static cudaError_t launch_pair(const infiniopAddRMSNormInfo *info, void *y, void *res, const void *a, const void *b,
                               const void *w, cudaStream_t stream) {
    if constexpr (sizeof(typename A::S) == 4 && sizeof(typename W::S) != 4)
        return cudaErrorInvalidValue;
    else
        return launch<A, W>(info, y, res, a, b, w, stream);
}

extern "C" infiniStatus_t infiniop_add_rms_norm_cuda_plan(infiniopAddRMSNormInfo *info, int device_id) {
    const size_t es = infiniop_dtype_size(info->atype);
    const int V = (int)(16 / es);
    const int ts[4] = {ARN_Y, ARN_RES, ARN_A, ARN_B};
    const InfiniopRowShape s = {
        info->rows.nrows,
        info->rows.ncols,
        V,
        INFINIOP_CUDA_REG_2IN,
        infiniop_rows_vec_ok(&info->rows, ts, 4, es, V),
        info->w_stride == 1,
        false,
        infiniop_rows_unit_ok(&info->rows, ts, 4)};
    const infiniStatus_t st = infiniop_cuda_plan_rows(device_id, s, &info->cuda);
    if (st == INFINI_STATUS_SUCCESS)
        INFINIOP_CUDA_DISPATCH_HALF_FLOAT(info->atype, A, {
            INFINIOP_CUDA_DISPATCH_HALF_FLOAT(info->wtype, W, {
                /* (F32 activations take F32 weights only, as launch_pair) */
                /* slow rows (rg_plan_caps): a weight loaded element by element,
                 * V loads a vector (a broadcast one is one value held) */
                if constexpr (sizeof(typename A::S) != 4 || sizeof(typename W::S) == 4)
                    rg_plan_caps(device_id, &info->cuda, info->w_stride != 1 && info->w_stride != 0,
                                 reg_kernel<A, W>);
            });
        });
    return st;
}

extern "C" infiniStatus_t infiniop_add_rms_norm_cuda(const infiniopAddRMSNormInfo *info, int device_id, void *y,
                                                     void *residual_out, const void *a, const void *b, const void *w,
                                                     void *stream) {
    InfiniopCudaDeviceGuard guard(device_id);
    if (guard.err != cudaSuccess) return infiniop_cuda_launch_status("add_rms_norm", guard.err);
    cudaStream_t s = (cudaStream_t)stream;
    cudaError_t err = cudaSuccess;
    INFINIOP_CUDA_DISPATCH_HALF_FLOAT(info->atype, A, {
        INFINIOP_CUDA_DISPATCH_HALF_FLOAT(info->wtype, W, err = launch_pair<A, W>(info, y, residual_out, a, b, w, s));
    });
    return infiniop_cuda_launch_status("add_rms_norm", err);
}
