/*
 * cuda/common.cuh - device helpers shared by the CUDA kernels.
 *
 *  - dtype traits: each floating dtype as its storage type S with explicit
 *    conversions to and from the compute type (float32; float64 for F64).
 *    float -> half types round to nearest even with the cvt.rn intrinsics
 *    (__float2half_rn, __float2bfloat16_rn); no arithmetic is ever done in a
 *    half type;
 *  - 16-byte vector loads and stores of V elements (Vec<S, V>);
 *  - warp and block reductions (sum; max that keeps NaN);
 *  - device facts read once per device (infiniop_cuda_device_props), a guard
 *    that makes the descriptor's device current for a launch, and the
 *    launch-error check.
 *
 * Kernels are plain: templates only for the dtype and vector width.
 */
#ifndef INFINIOP_CUDA_COMMON_CUH
#define INFINIOP_CUDA_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <type_traits>

#include "core/common.h"
#include "core/layout.h"
#include "cuda/plan.h"

/* ---------------------------------------------------------------- dtypes */
struct DtF16 {
    typedef uint16_t S;
    typedef float C;
    static __device__ __forceinline__ float load(S v) { return __half2float(__ushort_as_half(v)); }
    static __device__ __forceinline__ S store(float v) { return __half_as_ushort(__float2half_rn(v)); }
};
struct DtBF16 {
    typedef uint16_t S;
    typedef float C;
    static __device__ __forceinline__ float load(S v) { return __bfloat162float(__ushort_as_bfloat16(v)); }
    static __device__ __forceinline__ S store(float v) { return __bfloat16_as_ushort(__float2bfloat16_rn(v)); }
};
struct DtF32 {
    typedef float S;
    typedef float C;
    static __device__ __forceinline__ float load(S v) { return v; }
    static __device__ __forceinline__ S store(float v) { return v; }
};
struct DtF64 {
    typedef double S;
    typedef double C;
    static __device__ __forceinline__ double load(S v) { return v; }
    static __device__ __forceinline__ S store(double v) { return v; }
};

/* A half type (F16, BF16): its kernels may use float32 approximations a few
 * float32 ulp off, far under half an ulp of the output. */
template <typename Dt> struct IsHalf { static constexpr bool value = sizeof(typename Dt::S) == 2; };

/* Elements of dtype Dt in one 16-byte vector. */
template <typename Dt> struct VecWidth {
    static constexpr int value = (int)(16 / sizeof(typename Dt::S));
};

/* V elements of storage type S; V * sizeof(S) is a multiple of 16, so a
 * load or store is one or two 16-byte accesses. */
template <typename S, int V> struct alignas(16) Vec {
    S v[V];
};

/* W elements of storage type S as one access of W * sizeof(S) bytes,
 * aligned to its size (Vec without the 16-byte padding: RawVec<S, 1> is
 * one element). */
template <typename S, int W> struct alignas(sizeof(S) * W) RawVec {
    S v[W];
};

/* The V elements of a raw access q (Vec or RawVec of Dt::S) as float32.
 * BF16 pairs by their 32-bit words: the low element is the word shifted
 * left by 16, the high one the word with its low half cleared (one
 * instruction each; element by element the compiler spent two on each high
 * element, a byte permute and a shift). */
/* Element e (a compile-time index after unrolling) of such an access:
 * unpack's conversion of one element, where the element's use is (the
 * conversions of a whole access at once, before their uses, cost some
 * instances registers and spills). */
template <typename Dt, typename Q> __device__ __forceinline__ float unpack1(const Q &q, int e) {
    if constexpr (std::is_same<Dt, DtBF16>::value && sizeof(q.v) % 4 == 0) {
        const uint32_t w = reinterpret_cast<const uint32_t *>(q.v)[e >> 1];
        return __uint_as_float((e & 1) ? (w & 0xffff0000u) : (w << 16));
    } else {
        return Dt::load(q.v[e]);
    }
}
template <typename Dt, int V, typename Q> __device__ __forceinline__ void unpack(const Q &q, float (&v)[V]) {
#pragma unroll
    for (int e = 0; e < V; ++e) v[e] = unpack1<Dt>(q, e);
}

/* Load V consecutive elements (V > 1: 16-byte vectors, p 16-byte aligned) or
 * one element (V == 1) as compute-type values. */
template <typename Dt, int V>
__device__ __forceinline__ void load_chunk(const typename Dt::S *p, typename Dt::C (&out)[V]) {
    if constexpr (V == 1) {
        out[0] = Dt::load(p[0]);
    } else {
        Vec<typename Dt::S, V> q = *reinterpret_cast<const Vec<typename Dt::S, V> *>(p);
#pragma unroll
        for (int k = 0; k < V; ++k) out[k] = Dt::load(q.v[k]);
    }
}

/* One access of sizeof(VT) bytes (a 16-byte vector, or 8, 4 or 2 bytes:
 * narrower vectors, one element) as one machine word, WordOf: a struct of
 * half-type elements assigned as a whole, or even an integer vector
 * stored by a plain assignment, was split into 2- and 4-byte accesses
 * (seen in the PTX).
 * ONCE: data a kernel touches once (a row's input and its outputs, a
 * tensor too large for L2): loads and stores with the evict-first cache
 * hint (ld/st.global.cs, __ldcs / __stcs), so that they do not push out
 * of the caches what is reused (weight, bias); the accesses stay
 * coherent, so in-place calls are safe (a few percent on the long-row
 * norms: bench/NOTES.md). Otherwise a plain load and a store with the
 * default policy as one instruction (__stwb, st.global.wb). */
template <size_t N> struct WordOf;
template <> struct WordOf<2> { typedef unsigned short type; };
template <> struct WordOf<4> { typedef unsigned type; };
template <> struct WordOf<8> { typedef uint2 type; };
template <> struct WordOf<16> { typedef uint4 type; };
template <typename VT, bool ONCE> __device__ __forceinline__ VT load_word(const void *p) {
    typedef typename WordOf<sizeof(VT)>::type Word;
    Word t;
    if constexpr (ONCE) t = __ldcs(reinterpret_cast<const Word *>(p));
    else t = *reinterpret_cast<const Word *>(p);
    VT v;
    memcpy(&v, &t, sizeof v);
    return v;
}
template <typename VT, bool ONCE> __device__ __forceinline__ void store_word(void *p, const VT &v) {
    typedef typename WordOf<sizeof(VT)>::type Word;
    Word t;
    memcpy(&t, &v, sizeof t);
    if constexpr (ONCE) __stcs(reinterpret_cast<Word *>(p), t);
    else __stwb(reinterpret_cast<Word *>(p), t);
}
template <typename VT> __device__ __forceinline__ VT load_once(const void *p) { return load_word<VT, true>(p); }
template <typename VT> __device__ __forceinline__ void store_once(void *p, const VT &v) { store_word<VT, true>(p, v); }

/* Asks L2 for the line holding p (no register, no wait). */
__device__ __forceinline__ void prefetch_l2(const void *p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }

/* ONCE: the vector store with the evict-first hint (store_once). */
template <typename Dt, int V, bool ONCE = false>
__device__ __forceinline__ void store_chunk(typename Dt::S *p, const typename Dt::C (&in)[V]) {
    if constexpr (V == 1) {
        p[0] = Dt::store(in[0]);
    } else {
        Vec<typename Dt::S, V> q;
#pragma unroll
        for (int k = 0; k < V; ++k) q.v[k] = Dt::store(in[k]);
        if constexpr (ONCE) store_once(p, q);
        else *reinterpret_cast<Vec<typename Dt::S, V> *>(p) = q;
    }
}

/* V consecutive elements as one raw vector (V > 1: a 16-byte aligned
 * load) or one element (V == 1: any alignment). */
template <typename S, int V> __device__ __forceinline__ Vec<S, V> load_raw(const S *p) {
    if constexpr (V == 1) {
        Vec<S, V> q;
        q.v[0] = p[0];
        return q;
    } else {
        return *reinterpret_cast<const Vec<S, V> *>(p);
    }
}

/* Makes the compiler forget what it knows of v's bits (no instruction is
 * emitted): values it derived from v earlier are then recomputed rather
 * than kept alive, which is what a kernel wants when registers are scarcer
 * than the few instructions a conversion takes. */
template <typename VT> __device__ __forceinline__ void forget(VT &v) {
    static_assert(sizeof(v) % 4 == 0 || sizeof(v) == 2, "whole 32-bit words or one 16-bit element");
    if constexpr (sizeof(v) == 2) {
        asm volatile("" : "+h"(*reinterpret_cast<unsigned short *>(&v)));
    } else {
        uint32_t *w = reinterpret_cast<uint32_t *>(&v);
#pragma unroll
        for (int i = 0; i < (int)(sizeof(v) / 4); ++i) asm volatile("" : "+r"(w[i]));
    }
}

/* Chunks c = first, first + step, ... below end, B at a time: the B loads
 * of a batch are issued before the first is used. (A loop whose body stores
 * to shared or global memory keeps one load in flight a thread: the
 * compiler cannot move the next iteration's load above a store.) load(c)
 * returns a value of type R; use(c, r) consumes it. */
template <int B, typename R, typename Load, typename Use>
__device__ __forceinline__ void chunks_batched(size_t first, size_t step, size_t end, Load load, Use use) {
    if constexpr (B == 1) {
        /* a plain loop, which nvcc unrolls (by 4): kept rolled, as the
         * batches below, each shared-memory read and exp of a cached row
         * waited for the one before (causal_softmax's transposed rows
         * 3-6% slower; bench/NOTES.md, session 25) */
        for (size_t c = first; c < end; c += step) use(c, load(c));
    } else {
        /* (batches not unrolled further: that would multiply their registers) */
#pragma unroll 1
        for (size_t c0 = first; c0 < end; c0 += (size_t)B * step) {
            R q[B];
#pragma unroll
            for (int u = 0; u < B; ++u) {
                const size_t c = c0 + (size_t)u * step;
                if (c < end) q[u] = load(c);
            }
#pragma unroll
            for (int u = 0; u < B; ++u) {
                const size_t c = c0 + (size_t)u * step;
                if (c < end) use(c, q[u]);
            }
        }
    }
}

/* Loads in flight (the streaming row kernels' rule): every pass that reads
 * global memory one element per access (V == 1: rows whose length or
 * strides allow no 16-byte vectors) goes through chunks_batched with
 * STREAM_BATCH(1, N) chunks a thread, N the global arrays the pass reads
 * an element (x; a and b; x, w and b): 8 / N rounded up, so that a thread
 * has at least 8 independent loads in flight instead of one dependent
 * round trip per element (the compiler does not batch the loads of a
 * runtime-bounded loop, and stores to outputs that may alias the inputs
 * forbid hoisting the next loads; bench/NOTES.md has the latencies). Not
 * 8 chunks whatever N: each chunk in flight holds its 64-bit index and
 * addresses besides its values, and 8 chunks of two or three arrays spill
 * under the 64 registers of the 1024-thread launch bounds (ptxas -v); a
 * kernel whose passes carry more (layer_norm's strided x, z and output)
 * takes fewer, the most that ptxas compiles without spills. 16-byte vectors
 * (V > 1) keep one chunk a batch: their loads already carry 16 bytes.
 * Each element is still read, then written, by one thread, so in-place
 * calls stay exact. causal_softmax's streaming kernel measured slower with
 * it and takes 2 chunks in its first pass, 1 in the others (its comment
 * says why). */
#define STREAM_BATCH(V, N) ((V) == 1 ? (8 + (N) - 1) / (N) : 1)

/* Division of many numerators by one divisor b, correctly rounded, without
 * a division per element: r = RN(1/b) once, then q = RN(a r) and one
 * correction q + (a - q b) r with fmas (Markstein's theorem: the result is
 * RN(a/b) when b and 1/b are normal and no step overflows). Divisors
 * outside [2^-125, 2^125] (zero, subnormal, huge, inf, NaN) take the plain
 * division; so do numerators that are not finite. */
struct DivBy {
    float b, r;
    bool fast;
    __device__ __forceinline__ explicit DivBy(float d) : b(d), r(1.0f / d) {
        fast = fabsf(d) >= 0x1p-125f && fabsf(d) <= 0x1p125f;
    }
    __device__ __forceinline__ float operator()(float a) const {
        const float q = a * r;
        if (!fast || !(fabsf(q) < INFINITY)) return a / b; /* rare: not inlined into the common path */
        return fmaf(fmaf(-q, b, a), r, q);
    }
};

/* sqrt(v) and 1 / sqrt(v) by the hardware approximations (relative error
 * under 2^-22; subnormals kept, v = 0 gives 0 and inf, NaN stays NaN): for
 * the half types, where a correctly rounded sqrt and division would only
 * lengthen the dependent chain of a row. */
__device__ __forceinline__ float sqrt_approx(float v) {
    float r;
    asm("sqrt.approx.f32 %0, %1;" : "=f"(r) : "f"(v));
    return r;
}
__device__ __forceinline__ float rsqrt_approx(float v) {
    float r;
    asm("rsqrt.approx.f32 %0, %1;" : "=f"(r) : "f"(v));
    return r;
}

/* V elements of a float array in shared memory (16-byte aligned when V > 1). */
template <int V> __device__ __forceinline__ void smem_store(float *p, const float (&in)[V]) {
    if constexpr (V % 4 == 0) {
#pragma unroll
        for (int k = 0; k < V; k += 4) *reinterpret_cast<float4 *>(p + k) = make_float4(in[k], in[k + 1], in[k + 2], in[k + 3]);
    } else {
#pragma unroll
        for (int k = 0; k < V; ++k) p[k] = in[k];
    }
}
template <int V> __device__ __forceinline__ void smem_load(const float *p, float (&out)[V]) {
    if constexpr (V % 4 == 0) {
#pragma unroll
        for (int k = 0; k < V; k += 4) {
            float4 q = *reinterpret_cast<const float4 *>(p + k);
            out[k] = q.x, out[k + 1] = q.y, out[k + 2] = q.z, out[k + 3] = q.w;
        }
    } else {
#pragma unroll
        for (int k = 0; k < V; ++k) out[k] = p[k];
    }
}

/* ---------------------------------------------------------------- reductions */
/* max that keeps NaN: once either side is NaN the result is NaN (fmaxf would
 * drop it). */
__device__ __forceinline__ float max_nan(float a, float b) { return (b > a || b != b) ? b : a; }

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float warp_max_nan(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = max_nan(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* Block-wide reductions over all blockDim.x threads (a multiple of 32, at
 * most 1024): sums (MAX false) or NaN-keeping maxima (MAX true); every
 * thread must call and every thread gets the result. red is __shared__
 * float[33]; the trailing barrier lets the next reduction reuse it. */
template <bool MAX> __device__ __forceinline__ float block_reduce(float v, float *red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    v = MAX ? warp_max_nan(v) : warp_sum(v);
    if (lane == 0) red[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < nwarps ? red[lane] : (MAX ? -INFINITY : 0.0f);
        v = MAX ? warp_max_nan(v) : warp_sum(v);
        if (lane == 0) red[32] = v;
    }
    __syncthreads();
    v = red[32];
    __syncthreads();
    return v;
}

/* Sum over the threads of a row group: the warp (WARP) or the block. */
template <bool WARP> __device__ __forceinline__ float group_sum(float v, float *red) {
    return WARP ? warp_sum(v) : block_reduce<false>(v, red);
}
template <bool WARP> __device__ __forceinline__ float group_max_nan(float v, float *red) {
    return WARP ? warp_max_nan(v) : block_reduce<true>(v, red);
}

/* Programmatic dependent launch (Hopper and later; the plans' pdl flag,
 * infiniop_cuda_launch below): a kernel may start while the previous kernel
 * of the stream finishes, so every kernel calls this first, before its
 * first global memory access: it waits until that kernel has completed and
 * its writes are visible, and lets the next kernel of the stream start its
 * own launch at once (that kernel waits for this one in turn). Without PDL
 * both are no-ops. */
__device__ __forceinline__ void grid_dependency(void) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/* Keeps a value computed before this point: an empty asm statement that
 * takes it as input (asm volatile statements keep their order in PTX; a
 * plain constant load that feeds only this, ptxas may still move past a
 * grid_dependency() that follows: rows.cuh's rg_wait). The register
 * kernels of add_rms_norm, layer_norm and causal_softmax compute their
 * group and constants so, before they wait: under PDL that setup runs
 * while the previous kernel of the stream finishes, rather than in the
 * row's chain after it (decode shapes: the chain is most of a call's
 * time). */
__device__ __forceinline__ void keep(float v) { asm volatile("" ::"f"(v)); }
__device__ __forceinline__ void keep(unsigned v) { asm volatile("" ::"r"(v)); }
__device__ __forceinline__ void keep(size_t v) { asm volatile("" ::"l"(v)); }

/* The row groups of the streaming row kernels, constructed first in each
 * (it settles the grid dependency above): a warp per row, blockDim.x / 32
 * rows a block (WARP), or the whole block per row. tid/G: this thread's
 * index in its group and the group's size; rows first(), first() +
 * step(), ... go to this group; nchunks: the row's chunks of V elements
 * (thread tid takes chunks tid, tid + G, ...); cache: the group's slice of
 * the dynamic shared memory (ncols floats a group) when the plan caches
 * rows there (smem_bytes > 0), else nullptr. */
template <bool WARP, int V> struct StreamRows {
    unsigned tid, G, grp;
    size_t groups, nchunks;
    float *cache;
    __device__ __forceinline__ StreamRows(size_t ncols, size_t smem_bytes)
        : tid(WARP ? (threadIdx.x & 31u) : threadIdx.x), G(WARP ? 32u : blockDim.x), grp(WARP ? (threadIdx.x >> 5) : 0u),
          groups(WARP ? (blockDim.x >> 5) : 1u), nchunks(ncols / V) {
        grid_dependency();
        extern __shared__ float4 stream_rows_smem[];
        cache = smem_bytes ? reinterpret_cast<float *>(stream_rows_smem) + grp * ncols : nullptr;
    }
    __device__ __forceinline__ size_t first() const { return (size_t)blockIdx.x * groups + grp; }
    __device__ __forceinline__ size_t step() const { return (size_t)gridDim.x * groups; }
};

/* Element offset of row r of tensor t of a row layout: one row dimension
 * (the common case) without divisions; several (views: permuted, sliced
 * heads), while the row count fits 32 bits, with the layout's 32-bit
 * divisors (infiniop_row_offset32 and infiniop_div32, core/layout.h: a
 * multiply-high and a shift; a kernel takes the offsets of up to four
 * tensors a row, and the compiler did not share the quotients of a loop
 * over a runtime number of dimensions between them: with 32-bit divisions
 * add_rms_norm f16 197x12x64 permuted spent ~100 of its ~450 instructions
 * a row on four of them; ncu, H200, bench/NOTES.md), and none for the outermost
 * dimension (r < nrows: its index is the last quotient). Rows past 2^32:
 * 64-bit divisions (a subroutine of about 70 instructions; inlined: as a
 * call, __noinline__, the kernels' registers grew and 24-byte stack
 * frames appeared, layer_norm f16 4096x14336 1.35x slower on an H200,
 * though it kept the setup of that path's loop, ~20 instructions a thread,
 * out of their prologues; bench/NOTES.md, session 30). */
__device__ __forceinline__ ptrdiff_t row_off(const infiniopRowLayout &L, int t, size_t r) {
    if (L.ndims <= 1) return (ptrdiff_t)r * L.stride[0][t];
    if (L.nrows <= 0xffffffffu) return infiniop_row_offset32(&L, t, (uint32_t)r);
    return infiniop_row_offset(&L, t, r);
}

/* Threads a block of the row-wise streaming kernels at most (their launch
 * bounds; 64 registers a thread). */
#define INFINIOP_CUDA_ROW_MAX_BLOCK 1024

/* ---------------------------------------------------------------- host side */
/* Facts about one device, read once (thread-safe) and cached. */
typedef struct {
    int sm_count;
    int max_threads_per_sm;
    size_t smem_per_block; /* without opt-in */
    size_t l2_bytes;
    int cc_major, cc_minor;
} infiniopCudaProps;

infiniStatus_t infiniop_cuda_device_props(int device, infiniopCudaProps *props);

/* Makes `device` current for the guard's lifetime (restores the previous
 * one); no synchronisation, no allocation. */
struct InfiniopCudaDeviceGuard {
    int prev;
    bool changed;
    cudaError_t err;
    explicit InfiniopCudaDeviceGuard(int device) : prev(-1), changed(false), err(cudaSuccess) {
        err = cudaGetDevice(&prev);
        if (err == cudaSuccess && prev != device) {
            err = cudaSetDevice(device);
            changed = err == cudaSuccess;
        }
    }
    ~InfiniopCudaDeviceGuard() {
        if (changed) cudaSetDevice(prev);
    }
};

/* Threads a block for a latency-bound launch (cuda/plan_rows.cu's warp
 * form, ops/unary/cuda.cu's elementwise kernels) whose grid is blocks(t)
 * blocks of t threads, at most tmax (a power of two) a block: the
 * smallest block, a warp at the least, whose grid still gives every
 * multiprocessor one block at the most; where even tmax needs more blocks than multiprocessors, blocks
 * halved while the grid has under two a multiprocessor (`target`, when not
 * 0: under `target` blocks, an experiment's knob). A block's dispatch and
 * first round trip are a fixed cost, so a second block on a
 * multiprocessor costs more than a bigger first one; a grid of one to two
 * blocks a multiprocessor leaves most with one and the rest with two, and
 * there smaller blocks balance the work better. Measurements:
 * docs/PERFORMANCE.md ("Elementwise plan", rules 1 and 2; "Row operators:
 * which kernel"). */
template <typename Blocks>
static inline unsigned infiniop_cuda_spread_block(unsigned tmax, size_t sms, size_t target, Blocks blocks) {
    unsigned t = tmax;
    if (!target) {
        unsigned one = 0;
        for (unsigned u = tmax; u >= 32; u /= 2)
            if (blocks(u) <= sms) one = u;
        if (one) return one;
        target = 2 * sms;
    }
    while (t > 32 && blocks(t) < target) t /= 2;
    return t;
}
/* The same for `work` threads in one dimension: blocks(t) = work / t rounded up. */
static inline unsigned infiniop_cuda_spread_threads(size_t work, size_t sms, unsigned tmax, size_t target) {
    return infiniop_cuda_spread_block(tmax, sms, target, [work](unsigned t) { return (work + t - 1) / t; });
}

/* Whether the plans of this device launch with PDL (compute capability 9
 * and later; cuda/plan_rows.cu). */
bool infiniop_cuda_pdl(const infiniopCudaProps &p);
/* What rg_plan_cap (cuda/rows.cuh) learns of a block-form launch's
 * instances at descriptor creation, for infiniop_cuda_cap_choice
 * (cuda/plan_rows.cu), which returns the cap to launch (plan.h's `cap`):
 * index 0 the uncapped instance, 1 and 2 the capped ones. */
struct InfiniopCapQuery {
    size_t rows;       /* blocks of the launch, a row each */
    unsigned threads;  /* a block */
    unsigned sms;      /* multiprocessors */
    int blocks[3];     /* blocks an SM holds at once (cudaOccupancyMaxActiveBlocksPerMultiprocessor); 0 where
                          there is no such instance (or it is the uncapped one) */
    size_t spill[3];   /* local memory bytes a thread (cudaFuncAttributes.localSizeBytes) */
    bool slow_rows;    /* the operator's word: a row's time is more than its bytes' (a chain of round trips:
                          element-wise parameter loads, or softmax's two reductions and exponentials), so a
                          part-full last wave of blocks costs a whole wave's time */
};
unsigned infiniop_cuda_cap_choice(const InfiniopCapQuery &c);
/* Whether the rule could take a capped instance at all, from rows, threads,
 * sms, slow_rows and blocks[0] alone: rg_plan_cap queries the capped
 * instances (loading them) only then. */
bool infiniop_cuda_cap_wanted(const InfiniopCapQuery &c);

/* Launch kernel<<<grid, block, smem, stream>>>(args...) as a cluster of
 * `cluster` blocks (> 1) and with programmatic stream serialization when
 * pdl (the kernel calls grid_dependency() first); where the driver refuses
 * PDL, a plain launch. */
template <typename... KArgs, typename... Args>
static cudaError_t infiniop_cuda_launch(void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t smem,
                                        cudaStream_t stream, unsigned cluster, bool pdl, Args... args) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cudaLaunchAttribute attr[2];
    unsigned n = 0;
    if (cluster > 1) {
        attr[n].id = cudaLaunchAttributeClusterDimension;
        attr[n].val.clusterDim.x = cluster;
        attr[n].val.clusterDim.y = 1;
        attr[n].val.clusterDim.z = 1;
        ++n;
    }
    if (pdl) {
        attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[n].val.programmaticStreamSerializationAllowed = 1;
        ++n;
    }
    cfg.attrs = n ? attr : nullptr;
    cfg.numAttrs = n;
    cudaError_t err = cudaLaunchKernelEx(&cfg, kernel, ((KArgs)args)...);
    if (err != cudaSuccess && pdl) { /* the PDL attribute is the last one */
        cudaGetLastError();
        cfg.numAttrs = n - 1;
        err = cudaLaunchKernelEx(&cfg, kernel, ((KArgs)args)...);
    }
    return err;
}

/* After a launch: map the launch error to a status with a message. */
infiniStatus_t infiniop_cuda_launch_status(const char *op, cudaError_t err);

__host__ __device__ static inline bool infiniop_aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* What an operator's register-path kernels offer the planner (each flag
 * set where it measured faster for that operator; bench/NOTES.md):
 *  - REG_WARP8: it is instantiated with 8 vectors a thread in the
 *    warp-per-row form (rg_dispatch<K, 8>), so rows of up to 256 vectors
 *    can go a warp each, without block barriers;
 *  - REG_2IN: two inputs a row (the L2 prefetch distance counts both). */
enum { INFINIOP_CUDA_REG_WARP8 = 2, INFINIOP_CUDA_REG_2IN = 4 };

/* What the row planner is told of a descriptor: rows x ncols elements;
 * vec_elems: elements per 16-byte vector of the activation dtype;
 * reg_flags: INFINIOP_CUDA_REG_* above; vec: the layout allows 16-byte
 * vectors (infiniop_rows_vec_ok below); param_vec: the weight and bias
 * (where the operator has them) have unit stride; peel: the operator has
 * PEEL kernels and the layout allows them (infiniop_rows_peel_ok); unit:
 * every row tensor has unit column stride (infiniop_rows_unit_ok: the
 * register path's one-element form). */
struct InfiniopRowShape {
    size_t nrows, ncols;
    int vec_elems;
    unsigned reg_flags;
    bool vec, param_vec, peel, unit;
    /* TILE_T (operators that have that kernel): the extent of the input's
     * innermost row dimension when its stride there is 1 and its column
     * stride is not (a transposed input); 0 otherwise */
    size_t tile_run;
    /* The operator's peeled register form takes each row at its own
     * alignment (its input's rows peeled by their own offset, the output
     * stored by vectors where its row has the same offset modulo 16
     * bytes, else by elements): it needs unit column strides only (unit,
     * vectors of more than one element), any row strides and any
     * pointers; false where the peeled form needs a PEEL layout (peel) */
    bool peel_any;
};

/* The row-wise plan (cuda/plan.h) for a shape: the first kernel of the
 * implementation list (cuda/plan_rows.cu) whose rule holds, for aligned and
 * for unaligned pointers. */
infiniStatus_t infiniop_cuda_plan_rows(int device, const InfiniopRowShape &s, infiniopCudaRowPlan *plan);

/* The launch of the plan for a call whose n vector pointers are ptrs:
 * the aligned launch when they are each 16-byte aligned (or, for a PEEL
 * plan, equal modulo 16 bytes), else the unaligned one. */
static inline const infiniopCudaRowLaunch &infiniop_row_launch(const infiniopCudaRowPlan &p, const void *const *ptrs,
                                                               int n) {
    bool ok = true;
    for (int i = 0; i < n && ok; ++i)
        ok = p.same16 ? (((uintptr_t)ptrs[i] - (uintptr_t)ptrs[0]) & 15u) == 0 : ((uintptr_t)ptrs[i] & 15u) == 0;
    return ok ? p.aligned : p.unaligned;
}

/* Run the statements with NAME a typedef of the dtype traits of dt (F16,
 * BF16 or F32; the caller has validated dt). */
#define INFINIOP_CUDA_DISPATCH_HALF_FLOAT(dt, NAME, ...)                                                              \
    switch (dt) {                                                                                                      \
    case INFINI_DTYPE_F16: { typedef DtF16 NAME; __VA_ARGS__; } break;                                                 \
    case INFINI_DTYPE_BF16: { typedef DtBF16 NAME; __VA_ARGS__; } break;                                               \
    default: { typedef DtF32 NAME; __VA_ARGS__; } break;                                                               \
    }

/* True when every row stride of the tensors (row layout numbers ts[0..n)) is
 * a multiple of 16 bytes and their column stride is 1: rows then start
 * 16-byte aligned whenever the base pointer is. */
static inline bool infiniop_rows_vec_ok(const infiniopRowLayout *L, const int *ts, int n, size_t esize, int vec) {
    if (vec <= 1 || L->ncols % (size_t)vec != 0) return false;
    for (int i = 0; i < n; ++i) {
        int t = ts[i];
        if (L->col_stride[t] != 1) return false;
        for (int d = 0; d < L->ndims; ++d)
            if (((size_t)L->stride[d][t] * esize) % 16 != 0) return false;
    }
    return true;
}

/* True when the tensors ts[0..n) of a row layout all have unit column
 * stride (rows of consecutive elements, any row strides). */
static inline bool infiniop_rows_unit_ok(const infiniopRowLayout *L, const int *ts, int n) {
    for (int i = 0; i < n; ++i)
        if (L->col_stride[ts[i]] != 1) return false;
    return true;
}

/* The PEEL kernels' layout rule: vectors of more than one element, unit
 * column stride for every tensor ts[0..n), and every tensor with the same
 * row strides (then row r of each starts at the same offset modulo 16
 * bytes whenever the base pointers do; the run call checks those). */
static inline bool infiniop_rows_peel_ok(const infiniopRowLayout *L, const int *ts, int n, int vec) {
    if (vec <= 1) return false;
    for (int i = 0; i < n; ++i) {
        if (L->col_stride[ts[i]] != 1) return false;
        for (int d = 0; d < L->ndims; ++d)
            if (L->stride[d][ts[i]] != L->stride[d][ts[0]]) return false;
    }
    return true;
}

#endif /* INFINIOP_CUDA_COMMON_CUH */
