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
 *    output's elements, offsets (64-bit) from the coalesced layout; the
 *    index arithmetic is 32-bit up to 2^31 elements, 64-bit beyond.
 * Each element is read and then written by one thread, so in-place is safe.
 */
#include "cuda/common.cuh"
#include "unary.h"

/* The CPU's two branches (x >= 0, x < 0) share e = e^-|x|, so both are one
 * expf, one select and one division here: no divergence within a warp,
 * and the same values as the CPU formulas. */
__device__ __forceinline__ float sigmoid_c(float x) {
    float e = expf(-fabsf(x));
    return (x >= 0.0f ? 1.0f : e) / (1.0f + e);
}
__device__ __forceinline__ float silu_c(float x) {
    if (x <= -80.0f) {
        if (x == -INFINITY) return -0.0f;
        /* 1 + e^x == 1 here, and e^x is below float32's normal range (or
         * nearly): x e^x in float64, rounded once. (The CPU's (x h) h with
         * h = e^(x/2) would carry twice the 2-ulp error of CUDA's expf.) */
        return (float)((double)x * exp((double)x));
    }
    float e = expf(-fabsf(x));
    return (x >= 0.0f ? x : x * e) / (1.0f + e);
}
__device__ __forceinline__ double sigmoid_c(double x) {
    double e = exp(-fabs(x));
    return (x >= 0.0 ? 1.0 : e) / (1.0 + e);
}
__device__ __forceinline__ double silu_c(double x) {
    if (x <= -700.0) {
        if (x == -INFINITY) return -0.0;
        double h = exp(0.5 * x);
        return (x * h) * h;
    }
    double e = exp(-fabs(x));
    return (x >= 0.0 ? x : x * e) / (1.0 + e);
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

/* Any layout: offsets of element i from the coalesced shape and strides.
 * I is the index type: 32-bit when the element count allows (divisions by
 * the dimension lengths are much cheaper), 64-bit otherwise. */
template <typename T, int KIND, typename I>
__global__ void unary_strided_kernel(const __grid_constant__ infiniopEltLayout L, typename T::S *out,
                                     const typename T::S *in) {
    const I n = (I)L.n, stride = (I)gridDim.x * blockDim.x;
    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        ptrdiff_t oo = 0, io = 0;
        I rest = i;
        for (int d = L.ndim - 1; d >= 0; --d) {
            const I len = (I)L.shape[d];
            const I k = rest % len;
            rest /= len;
            oo += (ptrdiff_t)k * L.out_stride[d];
            io += (ptrdiff_t)k * L.in_stride[d];
        }
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
        /* 32-bit indices while i + the grid's stride cannot wrap */
        if (L.n <= ((size_t)1 << 31))
            unary_strided_kernel<T, KIND, uint32_t><<<grid, block, 0, stream>>>(L, (S *)out, (const S *)in);
        else
            unary_strided_kernel<T, KIND, size_t><<<grid, block, 0, stream>>>(L, (S *)out, (const S *)in);
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
