/*
 * ops/causal_softmax/cuda.cu - causal softmax on NVIDIA GPUs.
 *
 * A row goes to a group of threads (a warp for short rows, a block for long
 * ones; cuda/device.cu chooses at descriptor creation). Only the n visible
 * columns of row r (n = r % S + T - S + 1) are read. Three passes:
 *   1. m = max over the visible columns; a NaN anywhere makes m NaN, so the
 *      whole row becomes NaN, as on the CPU (fmaxf would drop it);
 *   2. sum of e = exp(x - m) (expf: float32, never half-precision math);
 *   3. y = e / sum on the visible columns, exact zeros on the masked ones.
 * x is kept in shared memory (float32) when the row fits, each thread its
 * own elements, and pass 2 leaves e there for pass 3; otherwise each pass
 * reads x again. Element j is read before it is written, by the same
 * thread, so y may be exactly x.
 */
#include "causal_softmax.h"
#include "cuda/common.cuh"
#include "cuda/rows.cuh"

/* The register path (cuda/rows.cuh): the visible vectors of x are loaded
 * once (masked vectors are never read), all in flight together; max, exp
 * and the sum work on the registers; y is written whole, masked vectors as
 * 16-byte zeros. Same arithmetic as the kernel below. */
template <typename T, int ITEMS, int MODE>
__global__ void __launch_bounds__(RG_MAX_THREADS(ITEMS))
    causal_softmax_reg(const __grid_constant__ infiniopCausalSoftmaxInfo info, typename T::S *y,
                       const typename T::S *x) {
    constexpr int V = VecWidth<T>::value;
    __shared__ RowScratch sc;
    const infiniopRowLayout &L = info.rows;
    const size_t nchunks = L.ncols / V;
    const RowGroup g = row_group<MODE>(info.cuda.reg_lanes);
    for (size_t r = g.row0; r < L.nrows; r += g.rstep) {
        row_next<MODE>(g, r);
        const typename T::S *xr = x + row_off(L, CS_X, r);
        const size_t n = infiniop_causal_visible(&info, r);
        const size_t vchunks = (n + V - 1) / V;
        float v[ITEMS][V];
        float m = -INFINITY;
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const size_t c = g.tid + (size_t)k * g.G;
            if (c < vchunks) {
                load_chunk<T, V>(xr + c * V, v[k]);
#pragma unroll
                for (int e = 0; e < V; ++e)
                    if (c * V + e < n) m = max_nan(m, v[k][e]);
            }
        }
        m = rg_reduce<MODE, true>(g, m, &sc, 0);
        float sum = 0.0f;
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const size_t c = g.tid + (size_t)k * g.G;
            if (c < vchunks) {
#pragma unroll
                for (int e = 0; e < V; ++e) {
                    v[k][e] = expf(v[k][e] - m);
                    if (c * V + e < n) sum += v[k][e];
                }
            }
        }
        sum = rg_reduce<MODE, false>(g, sum, &sc, 1);
        typename T::S *yr = y + row_off(L, CS_Y, r);
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const size_t c = g.tid + (size_t)k * g.G;
            if (c < nchunks) {
                float o[V];
#pragma unroll
                for (int e = 0; e < V; ++e) o[e] = (c < vchunks && c * V + e < n) ? v[k][e] / sum : 0.0f;
                store_chunk<T, V>(yr + c * V, o);
            }
        }
    }
    row_done<MODE>();
}

template <typename T> struct CsReg {
    template <int ITEMS, int MODE> struct K {
        static cudaError_t launch(const infiniopCausalSoftmaxInfo *info, cudaStream_t s, typename T::S *y,
                                  const typename T::S *x) {
            return rg_launch(causal_softmax_reg<T, ITEMS, MODE>, info->cuda, s, *info, y, x);
        }
    };
};

template <typename T, int V, bool WARP>
__global__ void __launch_bounds__(1024)
    causal_softmax_kernel(const __grid_constant__ infiniopCausalSoftmaxInfo info, typename T::S *y,
                          const typename T::S *x) {
    typedef typename T::S S;
    extern __shared__ float4 smem4[];
    __shared__ float red[33];
    const infiniopRowLayout &L = info.rows;
    const size_t Tn = L.ncols;
    const unsigned G = WARP ? 32u : blockDim.x;
    const unsigned tid = WARP ? (threadIdx.x & 31u) : threadIdx.x;
    const unsigned grp = WARP ? (threadIdx.x >> 5) : 0u;
    const size_t groups = WARP ? (blockDim.x >> 5) : 1u;
    float *cache = info.cuda.smem ? reinterpret_cast<float *>(smem4) + grp * Tn : nullptr;
    const size_t nchunks = Tn / V;
    const ptrdiff_t xs = V == 1 ? L.col_stride[CS_X] : 1, ys = V == 1 ? L.col_stride[CS_Y] : 1;

    for (size_t r = blockIdx.x * groups + grp; r < L.nrows; r += (size_t)gridDim.x * groups) {
        const S *xr = x + row_off(L, CS_X, r);
        S *yr = y + row_off(L, CS_Y, r);
        const size_t n = infiniop_causal_visible(&info, r);
        const size_t vchunks = (n + V - 1) / V; /* chunks holding a visible column */

        float m = -INFINITY;
        for (size_t c = tid; c < vchunks; c += G) {
            float v[V];
            load_chunk<T, V>(xr + (ptrdiff_t)c * V * xs, v);
#pragma unroll
            for (int k = 0; k < V; ++k)
                if (c * V + k < n) m = max_nan(m, v[k]);
            if (cache) smem_store<V>(cache + c * V, v);
        }
        m = group_max_nan<WARP>(m, red);

        float sum = 0.0f;
        for (size_t c = tid; c < vchunks; c += G) {
            float v[V];
            if (cache)
                smem_load<V>(cache + c * V, v);
            else
                load_chunk<T, V>(xr + (ptrdiff_t)c * V * xs, v);
#pragma unroll
            for (int k = 0; k < V; ++k) {
                v[k] = expf(v[k] - m);
                if (c * V + k < n) sum += v[k];
            }
            if (cache) smem_store<V>(cache + c * V, v);
        }
        sum = group_sum<WARP>(sum, red);

        for (size_t c = tid; c < nchunks; c += G) {
            float v[V];
            if (c < vchunks) {
                if (cache) {
                    smem_load<V>(cache + c * V, v);
                } else {
                    load_chunk<T, V>(xr + (ptrdiff_t)c * V * xs, v);
#pragma unroll
                    for (int k = 0; k < V; ++k) v[k] = expf(v[k] - m);
                }
#pragma unroll
                for (int k = 0; k < V; ++k) v[k] = c * V + k < n ? v[k] / sum : 0.0f;
            } else {
#pragma unroll
                for (int k = 0; k < V; ++k) v[k] = 0.0f;
            }
            store_chunk<T, V>(yr + (ptrdiff_t)c * V * ys, v);
        }
    }
}

template <typename T>
static cudaError_t launch(const infiniopCausalSoftmaxInfo *info, void *y, const void *x, cudaStream_t stream) {
    typedef typename T::S S;
    constexpr int V = VecWidth<T>::value;
    const infiniopCudaRowPlan &p = info->cuda;
    bool vec = p.vec && infiniop_aligned16(y) && infiniop_aligned16(x);
    dim3 grid(p.grid), block(p.threads);
    if (vec && p.reg_items) return rg_dispatch<CsReg<T>::template K>(p, info, stream, (S *)y, (const S *)x);
    if (p.mode == INFINIOP_CUDA_ROW_WARP) {
        if (vec)
            causal_softmax_kernel<T, V, true><<<grid, block, p.smem, stream>>>(*info, (S *)y, (const S *)x);
        else
            causal_softmax_kernel<T, 1, true><<<grid, block, p.smem, stream>>>(*info, (S *)y, (const S *)x);
    } else {
        if (vec)
            causal_softmax_kernel<T, V, false><<<grid, block, p.smem, stream>>>(*info, (S *)y, (const S *)x);
        else
            causal_softmax_kernel<T, 1, false><<<grid, block, p.smem, stream>>>(*info, (S *)y, (const S *)x);
    }
    return cudaGetLastError();
}

extern "C" infiniStatus_t infiniop_causal_softmax_cuda_plan(infiniopCausalSoftmaxInfo *info, int device_id) {
    size_t es = infiniop_dtype_size(info->dtype);
    int V = (int)(16 / es);
    infiniStatus_t st =
        infiniop_cuda_plan_rows("causal_softmax", device_id, info->rows.nrows, info->rows.ncols, V, &info->cuda);
    if (st != INFINI_STATUS_SUCCESS) return st;
    const int ts[2] = {CS_Y, CS_X};
    info->cuda.vec = infiniop_rows_vec_ok(&info->rows, ts, 2, es, V);
    return INFINI_STATUS_SUCCESS;
}

extern "C" infiniStatus_t infiniop_causal_softmax_cuda(const infiniopCausalSoftmaxInfo *info, int device_id, void *y,
                                                       const void *x, void *stream) {
    InfiniopCudaDeviceGuard guard(device_id);
    if (guard.err != cudaSuccess) return infiniop_cuda_launch_status("causal_softmax", guard.err);
    cudaError_t err = cudaSuccess;
    INFINIOP_CUDA_DISPATCH_HALF_FLOAT(info->dtype, T, err = launch<T>(info, y, x, (cudaStream_t)stream));
    return infiniop_cuda_launch_status("causal_softmax", err);
}
