/*
 * ops/unary/cuda.cu - silu and sigmoid on NVIDIA GPUs.
 *
 * The formulas are those of ops/unary/cpu.c (no overflow, tiny results of
 * large negative inputs kept, silu(-inf) = -0), in float32 with expf for the
 * half types and F32 (values converted explicitly, never half-precision
 * math), in float64 with exp for F64. One exception: silu(x) for x <= -80
 * (float32 path) is x e^x formed in float64, rounded once.
 *
 * Three paths, chosen by the layout folded at creation:
 *  - contiguous (output and input one dense run): 16-byte vectors, 2 a
 *    thread with every load issued before the first store, when both
 *    pointers are 16-byte aligned; one element at a time otherwise;
 *  - transposing (the input's unit stride on another dimension than the
 *    output's last): with 16-byte vectors, each thread transposes a block
 *    of V x V elements in registers; otherwise 64 x 64 tiles through
 *    shared memory; both sides coalesced;
 *  - anything else (strides, broadcast input): a grid-stride loop over the
 *    output's elements, offsets (64-bit) from the coalesced layout; the
 *    index arithmetic is 32-bit up to 2^31 elements, 64-bit beyond.
 * Each element is read and then written by one thread, so in-place is safe.
 */
#include "cuda/common.cuh"
#include "unary.h"

#ifdef INFINIOP_CUDA_EXPERIMENTS
#include "cuda_knobs.h" /* bench/experiments/ */
#endif

/* The CPU's two branches (x >= 0, x < 0) share e = e^-|x|, so both are one
 * expf, one select and one division here: no divergence within a warp,
 * and the same values as the CPU formulas. */
__device__ __forceinline__ float sigmoid_c(float x) {
    float e = expf(-fabsf(x));
    return (x >= 0.0f ? 1.0f : e) / (1.0f + e);
}
/* silu for x <= -80 (out of line: rare, and its float64 code would raise
 * every kernel's register count). 1 + e^x == 1 here, and e^x is below
 * float32's normal range (or nearly): x e^x in float64, rounded once. (The
 * CPU's (x h) h with h = e^(x/2) would carry twice the 2-ulp error of
 * CUDA's expf.) */
__device__ __noinline__ float silu_neg_tail(float x) {
    if (x == -INFINITY) return -0.0f;
    return (float)((double)x * exp((double)x));
}
__device__ __forceinline__ float silu_c(float x) {
    if (x <= -80.0f) return silu_neg_tail(x);
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

/* Half-precision outputs (F16, BF16): float32 with the fast exponential
 * (ex2.approx) and the fast division (reciprocal approximation and a
 * multiply). e = e^-|x| lies in (0, 1], so the divisor 1 + e lies in
 * [1, 2] where __fdividef is exact to 2 ulp; the float32 result is then
 * within a few float32 ulp, three orders of magnitude under half an ulp of
 * the output type (2^-9 relative for BF16, 2^-12 for F16), so the rounded
 * output stays within 1 ulp of the exact value. __expf is relatively
 * accurate to ~2 + 1.5|x| float32 ulp up to |x| = 80; beyond, and for
 * silu's x <= -80 branch, the exact formulas above are used (tiny results
 * are kept: BF16 has float32's exponent range). Same values as the exact
 * path within the output's rounding; about a third of its instructions,
 * which matters: at 2 bytes an element the exact path is issue-bound on
 * H100/H200 (about 30 instructions an element against the ~33 per element
 * the memory rate leaves). */
/* The rare branches out of line: inlined, their float64 code would set the
 * register count of every kernel (and with it the occupancy). */
__device__ __noinline__ float sigmoid_rare(float x) { return sigmoid_c(x); }
__device__ __noinline__ float silu_rare(float x) { return silu_c(x); }
__device__ __forceinline__ float sigmoid_fast(float x) {
    if (!(fabsf(x) < 80.0f)) return sigmoid_rare(x); /* also NaN */
    float e = __expf(-fabsf(x));
    return __fdividef(x >= 0.0f ? 1.0f : e, 1.0f + e);
}
__device__ __forceinline__ float silu_fast(float x) {
    if (!(fabsf(x) < 80.0f)) return silu_rare(x);
    float e = __expf(-fabsf(x));
    return __fdividef(x >= 0.0f ? x : x * e, 1.0f + e);
}

template <int KIND, typename C> __device__ __forceinline__ C apply(C x) {
    return KIND == INFINIOP_UNARY_SILU ? silu_c(x) : sigmoid_c(x);
}
/* FAST: the half-output formulas (float32 only). */
template <int KIND, bool FAST> __device__ __forceinline__ float apply_t(float x) {
    if constexpr (FAST) return KIND == INFINIOP_UNARY_SILU ? silu_fast(x) : sigmoid_fast(x);
    else return apply<KIND>(x);
}
template <int KIND, bool FAST> __device__ __forceinline__ double apply_t(double x) { return apply<KIND>(x); }

/* Contiguous, both pointers 16-byte aligned: nvec vectors of V elements,
 * UNROLL vectors a thread (all loads issued before the first store: the
 * compiler cannot move a load above a store that may alias it, so a
 * one-vector loop keeps one load in flight a thread), then the n - nvec * V
 * tail elements. Blocks of blockDim.x * UNROLL vectors; a grid-stride loop
 * over such spans beyond the grid. */
template <typename T, int KIND, int UNROLL>
__global__ void __launch_bounds__(512) unary_vec_kernel(typename T::S *out, const typename T::S *in, size_t n) {
    grid_dependency();
    typedef typename T::S S;
    constexpr int V = VecWidth<T>::value;
    constexpr bool FAST = IsHalf<T>::value;
    const size_t nvec = n / V;
    const size_t span = (size_t)blockDim.x * UNROLL;
    for (size_t base = (size_t)blockIdx.x * span + threadIdx.x; base < nvec; base += (size_t)gridDim.x * span) {
        Vec<S, V> q[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const size_t i = base + (size_t)u * blockDim.x;
            if (i < nvec) q[u] = load_once<Vec<S, V>>(in + i * V); /* evict-first: input read once */
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const size_t i = base + (size_t)u * blockDim.x;
            if (i < nvec) {
#pragma unroll
                for (int k = 0; k < V; ++k) q[u].v[k] = T::store(apply_t<KIND, FAST>(T::load(q[u].v[k])));
                store_once(out + i * V, q[u]);
            }
        }
    }
    const size_t tail = n - nvec * V, t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < tail) out[nvec * V + t] = T::store(apply_t<KIND, FAST>(T::load(in[nvec * V + t])));
}

/* Contiguous but not 16-byte aligned. */
template <typename T, int KIND>
__global__ void unary_flat_kernel(typename T::S *out, const typename T::S *in, size_t n) {
    grid_dependency();
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = T::store(apply_t<KIND, IsHalf<T>::value>(T::load(in[i])));
}

/* Any layout: offsets of element i from the coalesced shape and strides.
 * I is the index type: 32-bit when the element count allows (divisions by
 * the dimension lengths are much cheaper), 64-bit otherwise. */
template <typename T, int KIND, typename I>
__global__ void unary_strided_kernel(const __grid_constant__ infiniopEltLayout L, typename T::S *out,
                                     const typename T::S *in) {
    grid_dependency();
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
        out[oo] = T::store(apply_t<KIND, IsHalf<T>::value>(T::load(in[io])));
    }
}

/* The transposing path: the output's unit-stride dimension q = ndim - 1
 * differs from the input's, p. A block takes a TILE x TILE tile of the
 * (p, q) plane: it reads the input along p (coalesced), applies the
 * function, keeps the results in shared memory (float, or double for F64;
 * padded against bank conflicts) and writes the output along q (coalesced).
 * 256 threads, 16 elements each per phase, all loads in flight together.
 * The other dimensions go to blockIdx.z (a grid-stride loop). */
#define TILE 64
/* Number of (p, q) planes: the product of the other extents (multiplies
 * only: a 64-bit division in every thread is costly enough to show). */
__device__ __forceinline__ size_t tile_planes(const infiniopEltLayout &L, int p, int q) {
    size_t nb = 1;
    for (int d = 0; d < L.ndim; ++d)
        if (d != p && d != q) nb *= L.shape[d];
    return nb;
}
/* Offsets of plane bi (row-major over every dimension but p and q) in the
 * input and the output: where the tiling kernels' (p, q) plane starts. */
__device__ __forceinline__ void tile_bases(const infiniopEltLayout &L, int p, int q, size_t bi, ptrdiff_t *ib,
                                           ptrdiff_t *ob) {
    ptrdiff_t i = 0, o = 0;
    for (int d = L.ndim - 1; d >= 0; --d) {
        if (d == p || d == q) continue;
        const size_t k = bi % L.shape[d];
        bi /= L.shape[d];
        i += (ptrdiff_t)k * L.in_stride[d];
        o += (ptrdiff_t)k * L.out_stride[d];
    }
    *ib = i, *ob = o;
}
template <typename T, int KIND>
__global__ void __launch_bounds__(256) unary_tile_kernel(const __grid_constant__ infiniopEltLayout L, int p,
                                                         typename T::S *out, const typename T::S *in) {
    grid_dependency();
    typedef typename T::C C;
    __shared__ C tile[TILE][TILE + 1];
    const int q = L.ndim - 1;
    const size_t P = L.shape[p], Q = L.shape[q];
    const size_t p0 = (size_t)blockIdx.y * TILE, q0 = (size_t)blockIdx.x * TILE;
    const unsigned tx = threadIdx.x & 31u, ty = threadIdx.x >> 5;
    const size_t nb = tile_planes(L, p, q);
    const ptrdiff_t isp = L.in_stride[p], isq = L.in_stride[q], osp = L.out_stride[p], osq = L.out_stride[q];
    for (size_t bi = blockIdx.z; bi < nb; bi += gridDim.z) {
        ptrdiff_t ib, ob;
        tile_bases(L, p, q, bi, &ib, &ob);
        if (bi != blockIdx.z) __syncthreads(); /* the last tile's readers are done */
        C v[2][8];
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                const size_t pp = p0 + tx + 32 * i, qq = q0 + ty + 8 * j;
                v[i][j] = pp < P && qq < Q ? T::load(in[ib + (ptrdiff_t)pp * isp + (ptrdiff_t)qq * isq]) : (C)0;
            }
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j) tile[ty + 8 * j][tx + 32 * i] = apply_t<KIND, IsHalf<T>::value>(v[i][j]);
        __syncthreads();
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                const size_t qq = q0 + tx + 32 * i, pp = p0 + ty + 8 * j;
                if (pp < P && qq < Q)
                    out[ob + (ptrdiff_t)pp * osp + (ptrdiff_t)qq * osq] = T::store(tile[tx + 32 * i][ty + 8 * j]);
            }
    }
}

/* The transposing path with 16-byte vectors on both sides (plan: tile_vec;
 * both extents along p and q and every other stride a multiple of the
 * vector width V, both pointers 16-byte aligned), without shared memory:
 * a thread loads V input vectors (V consecutive p, at V consecutive q) and
 * stores V output vectors (V consecutive q, at V consecutive p): its V x V
 * block is transposed in registers, where the results are packed into the
 * output vectors anyway. A warp's lanes are 4 along p and 8 along q, so each
 * of its loads covers 8 input lines x 64 bytes and each store 4 output
 * lines x 128 bytes: whole 32-byte sectors on both sides. A block (8 warps,
 * 4 along p, 2 along q) covers TV x TV elements, 256 bytes of each line on
 * both sides. (The 64 x 64 float tile in shared memory that this replaces
 * was bound by its scalar shared-memory traffic: bench/NOTES.md.) */
#define TV_EDGE(V) (16 * (V))
template <typename T, int KIND>
__global__ void __launch_bounds__(256) unary_tile_vec_kernel(const __grid_constant__ infiniopEltLayout L, int p,
                                                             typename T::S *out, const typename T::S *in) {
    grid_dependency();
    typedef typename T::S S;
    typedef Vec<S, VecWidth<T>::value> VT;
    constexpr int V = VecWidth<T>::value, TV = TV_EDGE(V);
    const int q = L.ndim - 1;
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const size_t pp = (size_t)blockIdx.y * TV + ((warp & 3u) * 4u + (lane & 3u)) * V;
    const size_t qq = (size_t)blockIdx.x * TV + ((warp >> 2) * 8u + (lane >> 2)) * V;
    if (pp >= L.shape[p] || qq >= L.shape[q]) return; /* (no barriers: nothing waits for this thread) */
    const size_t nb = tile_planes(L, p, q);
    const ptrdiff_t isq = L.in_stride[q], osp = L.out_stride[p];
    for (size_t bi = blockIdx.z; bi < nb; bi += gridDim.z) {
        ptrdiff_t ib, ob;
        tile_bases(L, p, q, bi, &ib, &ob);
        VT v[V];
#pragma unroll
        for (int k = 0; k < V; ++k) v[k] = *reinterpret_cast<const VT *>(in + ib + (ptrdiff_t)(qq + k) * isq + pp);
#pragma unroll
        for (int e = 0; e < V; ++e) {
            VT o;
#pragma unroll
            for (int k = 0; k < V; ++k) forget(v[k]); /* convert in each step: no float copies of the block */
#pragma unroll
            for (int k = 0; k < V; ++k) o.v[k] = T::store(apply_t<KIND, IsHalf<T>::value>(T::load(v[k].v[e])));
            *reinterpret_cast<VT *>(out + ob + (ptrdiff_t)(pp + e) * osp + qq) = o;
        }
    }
}

template <typename T, int KIND>
static cudaError_t launch(const infiniopUnaryInfo *info, void *out, const void *in, cudaStream_t stream) {
    typedef typename T::S S;
    const infiniopEltLayout &L = info->layout;
    dim3 grid(info->cuda.grid), block(info->cuda.threads);
    S *o = (S *)out;
    const S *x = (const S *)in;
    const bool pdl = info->cuda.pdl;
    if (L.contiguous) {
        if (!infiniop_aligned16(out) || !infiniop_aligned16(in))
            return infiniop_cuda_launch(unary_flat_kernel<T, KIND>, grid, block, 0, stream, 1u, pdl, o, x, L.n);
        const unsigned u = info->cuda.unroll;
        auto kernel = u == 2 ? unary_vec_kernel<T, KIND, 2> : u == 8 ? unary_vec_kernel<T, KIND, 8>
                                                                    : unary_vec_kernel<T, KIND, 4>;
        return infiniop_cuda_launch(kernel, grid, block, 0, stream, 1u, pdl, o, x, L.n);
    }
    if (info->cuda.tile_p >= 0) {
        const int p = info->cuda.tile_p, q = L.ndim - 1;
        size_t nb = L.n / (L.shape[p] * L.shape[q]);
        const unsigned z = (unsigned)(nb < 65535 ? nb : 65535);
        if (info->cuda.tile_vec && infiniop_aligned16(out) && infiniop_aligned16(in)) {
            const size_t tv = TV_EDGE(VecWidth<T>::value);
            dim3 tg((unsigned)((L.shape[q] + tv - 1) / tv), (unsigned)((L.shape[p] + tv - 1) / tv), z);
            return infiniop_cuda_launch(unary_tile_vec_kernel<T, KIND>, tg, dim3(256), 0, stream, 1u, pdl, L, p, o, x);
        }
        dim3 tg((unsigned)((L.shape[q] + TILE - 1) / TILE), (unsigned)((L.shape[p] + TILE - 1) / TILE), z);
        return infiniop_cuda_launch(unary_tile_kernel<T, KIND>, tg, dim3(256), 0, stream, 1u, pdl, L, p, o, x);
    }
    /* 32-bit indices while i + the grid's stride cannot wrap */
    auto kernel = L.n <= ((size_t)1 << 31) ? unary_strided_kernel<T, KIND, uint32_t>
                                           : unary_strided_kernel<T, KIND, size_t>;
    return infiniop_cuda_launch(kernel, grid, block, 0, stream, 1u, pdl, L, o, x);
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
    const infiniopEltLayout &L = info->layout;
    size_t n = L.n;
    /* The transposing path: the output's last dimension has unit stride,
     * the input's does not, and another dimension p has the input's unit
     * stride; tiles of 64 along both (grid y holds the p tiles). */
    info->cuda.tile_p = -1;
    if (!L.contiguous && L.ndim >= 2 && L.out_stride[L.ndim - 1] == 1 && L.in_stride[L.ndim - 1] != 1 &&
        L.shape[L.ndim - 1] >= 8) {
        for (int d = 0; d < L.ndim - 1; ++d)
            if (L.in_stride[d] == 1 && L.shape[d] >= 8 && (L.shape[d] + 63) / 64 <= 65535) {
                info->cuda.tile_p = d;
                break;
            }
    }
    /* 16-byte vectors on both sides of the tile: the extents along p and q
     * and every other dimension's strides (in elements) multiples of V */
    info->cuda.tile_vec = false;
    if (info->cuda.tile_p >= 0) {
        const int tp = info->cuda.tile_p, tq = L.ndim - 1;
        const size_t V = 16 / infiniop_dtype_size(info->dtype);
        bool ok = L.shape[tp] % V == 0 && L.shape[tq] % V == 0 && (L.shape[tp] + 16 * V - 1) / (16 * V) <= 65535;
        for (int d = 0; d < L.ndim && ok; ++d) {
            if (d != tq && L.out_stride[d] % (ptrdiff_t)V != 0) ok = false;
            if (d != tp && L.in_stride[d] % (ptrdiff_t)V != 0) ok = false;
        }
        info->cuda.tile_vec = ok;
    }
    /* The contiguous path: blocks of 128 threads, 2 vectors a thread. The
     * 2-vector kernel needs few registers, so more blocks fit a
     * multiprocessor and more loads are in flight than with wider
     * unrolling or larger blocks (bench/NOTES.md). A build with
     * -DINFINIOP_CUDA_EXPERIMENTS=ON takes them from INFINIOP_CUDA_UNARY
     * (bench/experiments/cuda_knobs.h) to benchmark the others. */
    unsigned threads = 128, unroll = 2;
#ifdef INFINIOP_CUDA_EXPERIMENTS
    experiment_unary_knobs(&threads, &unroll);
#endif
    info->cuda.unroll = unroll;
    size_t per_thread = L.contiguous ? (size_t)(16 / infiniop_dtype_size(info->dtype)) * unroll : 1;
    if (!L.contiguous) threads = THREADS;
    size_t work = (n + per_thread - 1) / per_thread;
    size_t blocks = (work + threads - 1) / threads;
    /* Enough blocks to fill every SM many times over (the contiguous path:
     * every vector its own thread up to 2^20 blocks, so no thread loops);
     * larger tensors loop. */
    size_t cap = L.contiguous ? ((size_t)1 << 20) : (size_t)p.sm_count * (size_t)(p.max_threads_per_sm / THREADS) * 4;
    if (blocks > cap) blocks = cap;
    if (blocks < 1) blocks = 1;
    info->cuda.threads = threads;
    info->cuda.grid = (unsigned)blocks;
    info->cuda.pdl = infiniop_cuda_pdl(p);
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
