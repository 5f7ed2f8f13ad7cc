/*
 * ops/unary/cuda.cu - silu and sigmoid on NVIDIA GPUs.
 *
 * The formulas are those of ops/unary/cpu.c (no overflow, tiny results of
 * large negative inputs kept, silu(-inf) = -0), in float32 with expf for the
 * half types and F32 (values converted explicitly, never half-precision
 * math), in float64 with exp for F64. One exception: silu(x) for x <= -80
 * (float32 path) is x e^x formed in float64, rounded once.
 *
 * Two paths, chosen by the layout folded at creation:
 *  - contiguous (output and input one dense run): a flat grid-stride loop
 *    over 16-byte vectors when both pointers are 16-byte aligned, one
 *    element at a time otherwise;
 *  - anything else (strides, broadcast input): a grid-stride loop over the
 *    output's elements with 64-bit offsets from the coalesced layout.
 * Each element is read and then written by one thread, so in-place is safe.
 */
#include "cuda/common.cuh"
#include "unary.h"

__device__ __forceinline__ float sigmoid_c(float x) {
    if (x >= 0.0f) return 1.0f / (1.0f + expf(-x));
    float e = expf(x);
    return e / (1.0f + e);
}
__device__ __forceinline__ float silu_c(float x) {
    if (x >= 0.0f) return x / (1.0f + expf(-x));
    if (x > -80.0f) {
        float e = expf(x);
        return x * e / (1.0f + e);
    }
    if (x == -INFINITY) return -0.0f;
    /* 1 + e^x == 1 here, and e^x is below float32's normal range (or nearly):
     * x e^x in float64, rounded once. (The CPU's (x h) h with h = e^(x/2)
     * would carry twice the 2-ulp error of CUDA's expf: up to 5 ulp.) */
    return (float)((double)x * exp((double)x));
}
__device__ __forceinline__ double sigmoid_c(double x) {
    if (x >= 0.0) return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}
__device__ __forceinline__ double silu_c(double x) {
    if (x >= 0.0) return x / (1.0 + exp(-x));
    if (x > -700.0) {
        double e = exp(x);
        return x * e / (1.0 + e);
    }
    if (x == -INFINITY) return -0.0;
    double h = exp(0.5 * x);
    return (x * h) * h;
}

template <int KIND, typename C> __device__ __forceinline__ C apply(C x) {
    return KIND == INFINIOP_UNARY_SILU ? silu_c(x) : sigmoid_c(x);
}

/* Contiguous, both pointers 16-byte aligned: nvec vectors of V elements,
 * then the n - nvec * V tail elements. */
template <typename T, int KIND>
__global__ void unary_vec_kernel(typename T::S *out, const typename T::S *in, size_t n) {
    typedef typename T::S S;
    typedef typename T::C C;
    constexpr int V = VecWidth<T>::value;
    const size_t nvec = n / V;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const size_t i0 = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (size_t i = i0; i < nvec; i += stride) {
        C v[V];
        load_chunk<T, V>(in + i * V, v);
#pragma unroll
        for (int k = 0; k < V; ++k) v[k] = apply<KIND>(v[k]);
        store_chunk<T, V>(out + i * V, v);
    }
    for (size_t i = nvec * V + i0; i < n; i += stride) out[i] = T::store(apply<KIND>(T::load(in[i])));
}

/* Contiguous but not 16-byte aligned. */
template <typename T, int KIND>
__global__ void unary_flat_kernel(typename T::S *out, const typename T::S *in, size_t n) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = T::store(apply<KIND>(T::load(in[i])));
}

/* Any layout: offsets of element i from the coalesced shape and strides. */
template <typename T, int KIND>
__global__ void unary_strided_kernel(const __grid_constant__ infiniopEltLayout L, typename T::S *out,
                                     const typename T::S *in) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < L.n; i += stride) {
        ptrdiff_t oo, io;
        infiniop_elt_offsets(&L, i, &oo, &io);
        out[oo] = T::store(apply<KIND>(T::load(in[io])));
    }
}

template <typename T, int KIND>
static cudaError_t launch(const infiniopUnaryInfo *info, void *out, const void *in, cudaStream_t stream) {
    typedef typename T::S S;
    const infiniopEltLayout &L = info->layout;
    dim3 grid(info->cuda.grid), block(info->cuda.threads);
    if (L.contiguous) {
        if (infiniop_aligned16(out) && infiniop_aligned16(in))
            unary_vec_kernel<T, KIND><<<grid, block, 0, stream>>>((S *)out, (const S *)in, L.n);
        else
            unary_flat_kernel<T, KIND><<<grid, block, 0, stream>>>((S *)out, (const S *)in, L.n);
    } else {
        unary_strided_kernel<T, KIND><<<grid, block, 0, stream>>>(L, (S *)out, (const S *)in);
    }
    return cudaGetLastError();
}

template <typename T>
static cudaError_t launch_kind(const infiniopUnaryInfo *info, void *out, const void *in, cudaStream_t stream) {
    return info->kind == INFINIOP_UNARY_SILU ? launch<T, INFINIOP_UNARY_SILU>(info, out, in, stream)
                                             : launch<T, INFINIOP_UNARY_SIGMOID>(info, out, in, stream);
}

#define THREADS 256

extern "C" infiniStatus_t infiniop_unary_cuda_plan(infiniopUnaryInfo *info, int device_id) {
    infiniopCudaProps p;
    infiniStatus_t st = infiniop_cuda_device_props(device_id, &p);
    if (st != INFINI_STATUS_SUCCESS) return st;
    size_t n = info->layout.n;
    size_t per_thread = info->layout.contiguous ? (size_t)(16 / infiniop_dtype_size(info->dtype)) : 1;
    size_t work = (n + per_thread - 1) / per_thread;
    size_t blocks = (work + THREADS - 1) / THREADS;
    /* Enough blocks to fill every SM several times over; larger tensors loop. */
    size_t cap = (size_t)p.sm_count * (size_t)(p.max_threads_per_sm / THREADS) * 4;
    if (blocks > cap) blocks = cap;
    if (blocks < 1) blocks = 1;
    info->cuda.threads = THREADS;
    info->cuda.grid = (unsigned)blocks;
    return INFINI_STATUS_SUCCESS;
}

extern "C" infiniStatus_t infiniop_unary_cuda(const infiniopUnaryInfo *info, int device_id, void *out,
                                              const void *in, void *stream) {
    const char *name = info->kind == INFINIOP_UNARY_SILU ? "silu" : "sigmoid";
    InfiniopCudaDeviceGuard guard(device_id);
    if (guard.err != cudaSuccess) return infiniop_cuda_launch_status(name, guard.err);
    cudaStream_t s = (cudaStream_t)stream;
    cudaError_t err;
    switch (info->dtype) {
    case INFINI_DTYPE_F16: err = launch_kind<DtF16>(info, out, in, s); break;
    case INFINI_DTYPE_BF16: err = launch_kind<DtBF16>(info, out, in, s); break;
    case INFINI_DTYPE_F32: err = launch_kind<DtF32>(info, out, in, s); break;
    default: err = launch_kind<DtF64>(info, out, in, s); break;
    }
    return infiniop_cuda_launch_status(name, err);
}
