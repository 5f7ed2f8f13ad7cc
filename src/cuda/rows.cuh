/*
 * cuda/rows.cuh - the register path of the row-wise operators.
 *
 * A row goes to a group of threads; each thread holds ITEMS 16-byte vectors
 * of it in registers (vector c = tid + k * G, k < ITEMS), so the row is read
 * from global memory once, all its loads in flight together, and every
 * later phase works on the registers. Three group forms (plan.h's
 * INFINIOP_CUDA_ROW_REG_SUB, _BLOCK, _CLUSTER):
 *   RG_SUB      `lanes` threads of one warp (1..32, a power of two), several
 *               rows per warp: short rows; reductions are shuffles only;
 *   RG_BLOCK    one block per row: reductions are a warp shuffle, one
 *               barrier and a shuffle over the warps' partials;
 *   RG_CLUSTER  a cluster of 2..8 blocks per row (very long rows): the
 *               blocks' partials are exchanged through distributed shared
 *               memory after one cluster barrier.
 * Every thread of a group gets the same reduction result (same values,
 * same order), so the blocks of a cluster agree bit for bit.
 */
#ifndef INFINIOP_CUDA_ROWS_CUH
#define INFINIOP_CUDA_ROWS_CUH

#include <cooperative_groups.h>
#include <type_traits>

/* Thread-block clusters exist from sm_90 on; the sm_80 pass compiles the
 * cluster branches to a trap (the planner never picks them below 9.0). */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define RG_HAS_CLUSTERS 1
#else
#define RG_HAS_CLUSTERS 0
#endif

#include "cuda/common.cuh"

enum { RG_SUB = 0, RG_BLOCK = 1, RG_CLUSTER = 2 };

/* Reductions per row at most (each has its own scratch, so no barrier is
 * needed between them). */
#define RG_MAX_RED 3

struct RowGroup {
    unsigned tid;  /* index of this thread in the row's group */
    unsigned G;    /* threads in the group */
    size_t row0;   /* first row */
    size_t rstep;  /* rows between this group's rows */
    unsigned lanes;
    unsigned cl;   /* RG_CLUSTER: blocks per row */
};

struct RowScratch {
    float red[RG_MAX_RED][32];
    float part[RG_MAX_RED];
};

/* Whether the warp form's group is known at compile time to be the whole
 * warp: the planner (plan_rows.cu) gives a row 2 or more accesses a lane
 * only where it has more than 32 of them, so at ITEMS >= 2 `lanes` is
 * always 32 (tests/test_cuda_plan.cu holds the rule). The kernels then
 * index with G = 32 and reduce with full-warp shuffles of a constant
 * mask, unrolled: with `lanes` at run time each shuffle step took about
 * 12 instructions (a convergence check of the runtime mask and the loop)
 * instead of 2-4, ~100 of a causal softmax row's ~1050 (ncu, H200;
 * bench/NOTES.md, session 23). */
template <int MODE, int ITEMS> struct RgWarp32 {
    static constexpr bool value = MODE == RG_SUB && ITEMS >= 2;
};

/* The row group of this thread; called first by every register-path
 * kernel. It settles the grid dependency (common.cuh) first, unless WAIT
 * is false: the kernel then calls grid_dependency() itself after the
 * setup that reads no global memory (keep, common.cuh). W32: RgWarp32
 * (lanes is then 32). */
template <int MODE, bool W32 = false, bool WAIT = true> __device__ __forceinline__ RowGroup row_group(unsigned lanes) {
    if constexpr (WAIT) grid_dependency();
    RowGroup g;
    g.lanes = lanes;
    g.cl = 1;
    if constexpr (W32) {
        static_assert(MODE == RG_SUB, "the full-warp group is the warp form's");
        const unsigned wpb = blockDim.x >> 5;
        g.lanes = 32;
        g.tid = threadIdx.x & 31u;
        g.G = 32;
        g.row0 = (size_t)blockIdx.x * wpb + (threadIdx.x >> 5);
        g.rstep = (size_t)gridDim.x * wpb;
    } else if constexpr (MODE == RG_SUB) {
        /* lanes is a power of two (plan.h): shifts, not two 32-bit
         * divisions (~35 instructions on every row group's path) */
        const unsigned lg = 31u - (unsigned)__clz(lanes), rpb = blockDim.x >> lg;
        g.tid = threadIdx.x & (lanes - 1);
        g.G = lanes;
        g.row0 = (size_t)blockIdx.x * rpb + (threadIdx.x >> lg);
        g.rstep = (size_t)gridDim.x * rpb;
    } else if constexpr (MODE == RG_BLOCK) {
        g.tid = threadIdx.x;
        g.G = blockDim.x;
        g.row0 = blockIdx.x;
        g.rstep = gridDim.x;
    } else {
#if RG_HAS_CLUSTERS
        namespace cg = cooperative_groups;
        cg::cluster_group cluster = cg::this_cluster();
        g.cl = cluster.num_blocks();
        g.tid = cluster.block_rank() * blockDim.x + threadIdx.x;
        g.G = blockDim.x * g.cl;
        g.row0 = blockIdx.x / g.cl;
        g.rstep = gridDim.x / g.cl;
#else
        __trap();
#endif
    }
    return g;
}

/* The grid dependency of a register-path kernel that called row_group
 * with WAIT false, after the group's first-row check: false where the
 * group has no row (the kernel then returns; a cluster's blocks share
 * their rows, so they return together). The check is a real use of the
 * layout's first constant line (nrows, with ncols and the operator's
 * scalars beside it), a branch ptxas keeps ahead of the wait, so under
 * PDL that line is fetched while the previous kernel finishes. A value
 * that only keep() (common.cuh) held was moved past the wait by ptxas
 * (sm_90, add_rms_norm's and layer_norm's ncols once 1/ncols was no
 * longer computed there, session 30), and the line's first read came in
 * the row's chain instead: their latency-bound rows ran 2-5% longer
 * (H200, bench/NOTES.md, session 31). */
__device__ __forceinline__ bool rg_wait(const RowGroup &g, size_t nrows) {
    if (g.row0 >= nrows) return false;
    grid_dependency();
    return true;
}

/* Before the second and later rows of a group: the scratch of the last row
 * may still be read by slower threads (blocks). */
template <int MODE> __device__ __forceinline__ void row_next(const RowGroup &g, size_t r) {
    if (r == g.row0) return;
    if constexpr (MODE == RG_BLOCK) __syncthreads();
#if RG_HAS_CLUSTERS
    if constexpr (MODE == RG_CLUSTER) cooperative_groups::this_cluster().sync();
#endif
}

/* At the end of the kernel: no block of a cluster may exit while another
 * may still read its shared memory. */
template <int MODE> __device__ __forceinline__ void row_done() {
#if RG_HAS_CLUSTERS
    if constexpr (MODE == RG_CLUSTER) cooperative_groups::this_cluster().sync();
#endif
}

/* The row q.prefetch rows after r (q: the plan's aligned launch, the one
 * register-path kernels run under), whose input a group asks L2 for
 * while it works on row r; 0 when there is none (prefetch off, or past
 * the last row; row 0 is never ahead of another). */
__device__ __forceinline__ size_t rg_ahead(const infiniopCudaRowPlan &p, size_t r, size_t nrows) {
    const unsigned pf = p.aligned.prefetch;
    return pf && r + pf < nrows ? r + pf : 0;
}

/* Asks L2 for `bytes` bytes at p (an input row of rg_ahead), each thread of
 * the group a 128-byte line. */
__device__ __forceinline__ void rg_prefetch(const RowGroup &g, const void *p, size_t bytes) {
    for (size_t off = (size_t)g.tid * 128; off < bytes; off += (size_t)g.G * 128) prefetch_l2((const char *)p + off);
}

template <bool MAX> __device__ __forceinline__ float rg_op(float a, float b) { return MAX ? max_nan(a, b) : a + b; }
/* Over a whole warp: common.cuh's warp_sum / warp_max_nan. */
template <bool MAX> __device__ __forceinline__ float rg_warp(float v) { return MAX ? warp_max_nan(v) : warp_sum(v); }

/* Sums (MAX false) or NaN-keeping maxima (MAX true) of v[0..N) over the
 * row's group, each value on its own (v[i] gets the result for v[i]); the
 * N reductions share one barrier. slot: the first scratch (slot + N <=
 * RG_MAX_RED), distinct from the other reductions of a row.
 * The warp form shuffles with the whole warp's mask also where a group is
 * a part of the warp (xor offsets under `lanes` stay inside the group):
 * with the group's own mask, a runtime value, the compiler checked the
 * lanes' convergence at every step (match, redux, vote and a branch: a
 * step of layer_norm's two-value reduction took 14 instructions, 7 with
 * the full mask; ncu and SASS, sm_90, bench/NOTES.md, session 30). A full
 * mask asks every non-exited lane of the warp to reach
 * the same shuffle (CUDA C++ Programming Guide, warp shuffle functions),
 * which holds because (1) a warp's groups take their rows in step (rows
 * row0 + k rstep), so a group whose rows are done has left the row loop,
 * and every operator's warp-form kernel ends with that loop (row_done is
 * empty for it): the group has exited; (2) no branch that differs between
 * the groups of a warp holds a reduction (layer_norm's second round is
 * taken by the whole warp: rg_any). */
template <int MODE, bool MAX, int N>
__device__ __forceinline__ void rg_reduce_n(const RowGroup &g, float (&v)[N], RowScratch *sc, int slot) {
    const float id = MAX ? -INFINITY : 0.0f;
    if constexpr (MODE == RG_SUB) {
        /* a whole warp (always, RgWarp32): unrolled, of a constant mask */
        if (g.lanes == 32) {
#pragma unroll
            for (unsigned o = 16; o > 0; o >>= 1)
#pragma unroll
                for (int i = 0; i < N; ++i) v[i] = rg_op<MAX>(v[i], __shfl_xor_sync(0xffffffffu, v[i], o));
        } else {
            for (unsigned o = g.lanes >> 1; o > 0; o >>= 1)
#pragma unroll
                for (int i = 0; i < N; ++i) v[i] = rg_op<MAX>(v[i], __shfl_xor_sync(0xffffffffu, v[i], o));
        }
    } else {
        const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
#pragma unroll
        for (int i = 0; i < N; ++i) v[i] = rg_warp<MAX>(v[i]);
        if (lane == 0)
#pragma unroll
            for (int i = 0; i < N; ++i) sc->red[slot + i][warp] = v[i];
        __syncthreads();
#pragma unroll
        for (int i = 0; i < N; ++i) v[i] = rg_warp<MAX>(lane < nwarps ? sc->red[slot + i][lane] : id);
#if RG_HAS_CLUSTERS
        if constexpr (MODE == RG_CLUSTER) {
            namespace cg = cooperative_groups;
            cg::cluster_group cluster = cg::this_cluster();
            if (threadIdx.x == 0)
#pragma unroll
                for (int i = 0; i < N; ++i) sc->part[slot + i] = v[i];
            cluster.sync();
#pragma unroll
            for (int i = 0; i < N; ++i)
                v[i] = rg_warp<MAX>(lane < g.cl ? *cluster.map_shared_rank(&sc->part[slot + i], lane) : id);
        }
#endif
    }
}

/* One value: rg_reduce_n with N = 1. */
template <int MODE, bool MAX>
__device__ __forceinline__ float rg_reduce(const RowGroup &g, float v, RowScratch *sc, int slot) {
    float a[1] = {v};
    rg_reduce_n<MODE, MAX, 1>(g, a, sc, slot);
    return a[0];
}

/* Whether c holds for any group of the warp (RG_SUB) or for the group
 * (the block and cluster forms, over which c is uniform): a branch that
 * holds a reduction is taken by every group of a warp (rg_reduce_n). */
template <int MODE> __device__ __forceinline__ bool rg_any(bool c) {
    if constexpr (MODE == RG_SUB) return __any_sync(0xffffffffu, c);
    else return c;
}

/* Launch one kernel of the register path (a cluster of q.cluster blocks
 * for REG_CLUSTER); kernel null (rg_instance named none):
 * cudaErrorInvalidConfiguration. */
template <typename... KArgs, typename... Args>
static cudaError_t rg_launch(void (*kernel)(KArgs...), const infiniopCudaRowLaunch &q, bool pdl, cudaStream_t stream,
                             Args... args) {
    if (!kernel) return cudaErrorInvalidConfiguration;
    return infiniop_cuda_launch(kernel, dim3(q.grid), dim3(q.threads), 0, stream,
                                q.kernel == INFINIOP_CUDA_ROW_REG_CLUSTER ? q.cluster : 1u, pdl, args...);
}

/* Whether q is a register-path launch. */
static inline bool rg_is_reg(const infiniopCudaRowLaunch &q) {
    return q.kernel == INFINIOP_CUDA_ROW_REG_SUB || q.kernel == INFINIOP_CUDA_ROW_REG_BLOCK ||
           q.kernel == INFINIOP_CUDA_ROW_REG_CLUSTER;
}

/* Chooses the kernel instance for the launch's items, group form, access
 * width and column strides (all from the plan): returns pick(I, M, A, CS),
 * I, M and A std::integral_constant<int> of the items, the mode and the
 * elements an access (VEC, the operator's 16-byte vector width, or 1 for
 * the one-element form, plan.h's `scalar`), CS std::integral_constant<bool>,
 * plan.h's `strided` (block and cluster forms only); R() for a launch
 * that names no instance. pick returns the instance (a kernel pointer, R),
 * e.g.
 *     rg_instance<V, 4, Fn>(q, [&](auto I, auto M, auto A, auto CS) -> Fn {
 *         return my_reg<T, decltype(I)::value, decltype(M)::value, decltype(A)::value,
 *                       decltype(CS)::value>; });
 * The operator's launch and its plan (rg_plan_cap) both call it, so that
 * the instance is chosen in one place.
 * The block form of vectors holds 1, 2, 4 or 8 vectors a thread (8: rows
 * of 2049-4096 vectors that fill the GPU, plan_rows.cu), every operator.
 * SUB8 == 8: the operator also has 8 vectors a thread in the warp form
 * (INFINIOP_CUDA_REG_WARP8), and 8 elements a thread in the warp form of
 * the one-element form, which otherwise holds 1, 4 or 16 elements a
 * thread (a cluster: 16). */
template <int VEC, int SUB8, typename R, typename Pick>
static R rg_instance(const infiniopCudaRowLaunch &q, Pick pick) {
    const int mode = q.kernel == INFINIOP_CUDA_ROW_REG_SUB     ? RG_SUB
                     : q.kernel == INFINIOP_CUDA_ROW_REG_BLOCK ? RG_BLOCK
                                                               : RG_CLUSTER;
#define RG_CASE(I, M, SC, CS)                                                                                          \
    if (q.items == I && mode == M && q.scalar == SC && q.strided == CS)                                                \
        return pick(std::integral_constant<int, I>(), std::integral_constant<int, M>(),                                \
                    std::integral_constant<int, SC ? 1 : VEC>(), std::integral_constant<bool, CS>());
    if constexpr (SUB8 == 8) RG_CASE(8, RG_SUB, false, false)
    RG_CASE(1, RG_SUB, false, false) RG_CASE(2, RG_SUB, false, false) RG_CASE(3, RG_SUB, false, false)
    RG_CASE(4, RG_SUB, false, false)
    RG_CASE(1, RG_BLOCK, false, false) RG_CASE(2, RG_BLOCK, false, false) RG_CASE(4, RG_BLOCK, false, false)
    RG_CASE(8, RG_BLOCK, false, false)
    RG_CASE(1, RG_CLUSTER, false, false) RG_CASE(2, RG_CLUSTER, false, false) RG_CASE(4, RG_CLUSTER, false, false)
    if constexpr (SUB8 == 8) RG_CASE(8, RG_SUB, true, false)
    RG_CASE(1, RG_SUB, true, false) RG_CASE(4, RG_SUB, true, false) RG_CASE(16, RG_SUB, true, false)
    RG_CASE(1, RG_BLOCK, true, false) RG_CASE(4, RG_BLOCK, true, false) RG_CASE(16, RG_BLOCK, true, false)
    RG_CASE(16, RG_CLUSTER, true, false)
    RG_CASE(1, RG_BLOCK, true, true) RG_CASE(4, RG_BLOCK, true, true) RG_CASE(16, RG_BLOCK, true, true)
    RG_CASE(16, RG_CLUSTER, true, true)
#undef RG_CASE
    return R();
}

/* The register path's access of V elements: a 16-byte vector (V > 1,
 * Vec) or one element (V == 1, RawVec<S, 1>: no padding); rg_load reads
 * one through the caches (weight, bias: every row reads them),
 * load_once / store_once (common.cuh) a row's own data. */
template <typename S, int V> using RgVec = typename std::conditional<V == 1, RawVec<S, 1>, Vec<S, V>>::type;
template <typename S, int V> __device__ __forceinline__ RgVec<S, V> rg_load(const S *p) {
    return *reinterpret_cast<const RgVec<S, V> *>(p);
}
/* Element offset of access c of a row tensor: c * V (16-byte vectors, or
 * consecutive elements with V = 1) or, CS (the one-element form at the
 * tensors' column strides: plan.h's `strided`), c * cs. CS is a template
 * parameter of its own, not a runtime multiply in every kernel: a 64-bit
 * multiply at each access made the consecutive one-element path 7-14%
 * slower, and per-thread offsets held across the row loop (first + k *
 * step) cost the vector path registers, up to 1.4x (bench/NOTES.md). */
template <int V, bool CS, typename I> __device__ __forceinline__ ptrdiff_t rg_at(I c, ptrdiff_t cs) {
    if constexpr (CS) return (ptrdiff_t)c * cs;
    else return (ptrdiff_t)(c * V);
}
/* Access c (elements c * V ...) of a parameter vector (weight, bias) of
 * element stride `stride` (any: 1, strided, negative, 0 for a broadcast
 * value), through the caches (every row reads them): V == 1, one element;
 * V > 1, one 16-byte load where the plan says the parameters have unit
 * stride (PV: plan.h's `param_vec`, a template parameter of the kernel),
 * else V element loads, or, at stride 0 (a broadcast value), one element
 * load whose value fills the vector (V loads of one address were V load
 * instructions a vector, 32 a thread a row at 4 vectors); c in the
 * kernel's index type (as rg_at). (A runtime branch between the vector
 * and the element loads in every kernel cost the unit-stride case
 * registers: layer_norm f16 4096x14336 88.7 -> 118.6 us on an H200;
 * bench/NOTES.md. The stride-0 branch is in the element-load instances
 * only.) */
template <typename S, int V, bool PV, typename I>
__device__ __forceinline__ RgVec<S, V> rg_load_param(const S *p, I c, ptrdiff_t stride) {
    if constexpr (V == 1) {
        return rg_load<S, V>(p + (ptrdiff_t)c * stride);
    } else if constexpr (PV) {
        return rg_load<S, V>(p + (ptrdiff_t)c * V);
    } else {
        RgVec<S, V> q;
        if (stride == 0) {
            const S s = *p;
#pragma unroll
            for (int e = 0; e < V; ++e) q.v[e] = s;
            return q;
        }
#pragma unroll
        for (int e = 0; e < V; ++e) q.v[e] = p[((ptrdiff_t)c * V + e) * stride];
        return q;
    }
}

/* A parameter that add_rms_norm's element-load instances (V > 1, !PV)
 * read in the output phase (W_LATE): a broadcast one (stride 0) is one
 * element, loaded once after the grid dependency and held. Loaded item by
 * item in the output phase, each load waited for the stores of the item
 * before (an output might alias it, for all the compiler knows): ITEMS
 * dependent round trips a row (add_rms_norm bf16 2048x896 w:bcast, a warp
 * a row at 4 vectors a lane; bench/NOTES.md, session 26). Other strides
 * load through rg_load_param; the vector instances (PV) and the
 * one-element form hold nothing. (ptxas -v: add_rms_norm's instances gain
 * 1-8 registers and the 4-vector block ones lose their 16 bytes of spill;
 * layer_norm's late w and b, two held values, gave 6 of its capped
 * instances spills, and held from the output phase only, more: layer_norm
 * keeps the item-by-item loads.) p may be null. */
template <typename S, int V, bool PV> struct RgLateParam {
    static constexpr bool HOLD = V > 1 && !PV;
    S one;
    __device__ __forceinline__ RgLateParam(const S *p, ptrdiff_t stride) {
        if constexpr (HOLD) {
            one = S();
            if (p && stride == 0) one = *p;
        }
    }
    template <typename I> __device__ __forceinline__ RgVec<S, V> at(const S *p, I c, ptrdiff_t stride) const {
        if constexpr (HOLD) {
            if (stride == 0) {
                RgVec<S, V> q;
#pragma unroll
                for (int e = 0; e < V; ++e) q.v[e] = one;
                return q;
            }
        }
        return rg_load_param<S, V, PV>(p, c, stride);
    }
};

/* Launch a streaming kernel instance of the plan's STREAM_* launch:
 * pick(WARP, VEC) (std::integral_constant<bool> each) returns the kernel
 * function; the launch passes it args. */
template <typename Pick, typename... Args>
static cudaError_t stream_launch(const infiniopCudaRowLaunch &q, bool pdl, cudaStream_t stream, Pick pick,
                                 Args... args) {
    typedef std::integral_constant<bool, true> Y;
    typedef std::integral_constant<bool, false> N;
    dim3 grid(q.grid), block(q.threads);
    switch (q.kernel) {
    case INFINIOP_CUDA_ROW_STREAM_WARP_VEC: return infiniop_cuda_launch(pick(Y(), Y()), grid, block, q.smem, stream, 1u, pdl, args...);
    case INFINIOP_CUDA_ROW_STREAM_BLOCK_VEC: return infiniop_cuda_launch(pick(N(), Y()), grid, block, q.smem, stream, 1u, pdl, args...);
    case INFINIOP_CUDA_ROW_STREAM_WARP: return infiniop_cuda_launch(pick(Y(), N()), grid, block, q.smem, stream, 1u, pdl, args...);
    case INFINIOP_CUDA_ROW_STREAM_BLOCK: return infiniop_cuda_launch(pick(N(), N()), grid, block, q.smem, stream, 1u, pdl, args...);
    default: return cudaErrorInvalidConfiguration;
    }
}

/* Launch bounds of a register-path kernel (__launch_bounds__(RG_BOUNDS(MODE,
 * ITEMS, CAP, B56))): up to 512 threads a block at 2 or more items a thread
 * (128 registers), up to 1024 at one (64), no minimum of blocks (0) -
 * except
 * - the warp form at one item a thread, whose blocks are at most 128
 *   threads (plan_rows.cu) and of which an SM must hold 9 (56 registers, 36
 *   warps) rather than the 8 that 57-64 registers leave: each of its lanes
 *   has a single vector in flight, so the resident warps are what keeps the
 *   memory system busy (layer_norm f32 512x28x128 took 7% longer when its
 *   instance went from 56 to 58 registers; bench/NOTES.md);
 * - B56, the block form at one item a thread, for the same reason: its
 *   rows are latency-bound (or 129-256 vectors long), its blocks at most
 *   512 threads (plan_rows.cu), and 56 registers (2 blocks of 576) hold 36
 *   warps an SM where 57-64 hold 32. Registers are allocated by 8 a
 *   thread, so an instance of 58 holds as few blocks as one of 64. A
 *   minimum of blocks also makes ptxas use registers up to the bound, so
 *   B56 is for the instances that need more than 56 without it: the
 *   norms' rows of 2-byte elements (V 8: 58-62 registers, 8 elements a
 *   vector unpacked to float32, with their parameters). Measured on an
 *   H200 (bench/NOTES.md, session 32; 170 latency-bound row cases):
 *   add_rms_norm bf16 4x211x1280 with a broadcast weight, 844 rows of 160
 *   threads, 2 waves of 6 blocks an SM at 58 registers, one of 7 at 56:
 *   4.40 -> 3.63 us; bf16 900x1280 w:strided 4.75 -> 3.82, layer_norm
 *   bf16 844x1280 w:bcast 4.66 -> 3.80; the others level (0.97-1.025).
 *   Not float32 rows (V 4: 50-58 registers), where the bound gained no
 *   wave and ran 1.03-1.065x slower (layer_norm f32 500x768 2.76 -> 2.94
 *   us), nor softmax's (40-54) or the one-element forms (32-42), which
 *   took 48-56 under it, fewer blocks (scripts/cuda-res-usage.sh lists
 *   every instance's registers);
 * - CAP (0, 1, 2), the capped instances of RgCappable launches
 *   (rg_plan_cap): 1, 2 blocks of up to 448 threads an SM (72 registers:
 *   65536 / 896 rounded down to ptxas's 8); 2, 2 blocks of 512 (64).
 * (A minimum of 1 rather than 0 changes ptxas's choice of registers below
 * the cap.) */
#define RG_CAP_THREADS(CAP) ((CAP) == 1 ? 448u : 512u)
#define RG_B56(MODE, ITEMS, B56) ((B56) && (MODE) == RG_BLOCK && (ITEMS) == 1)
#define RG_BOUNDS(MODE, ITEMS, CAP, B56)                                                                                \
    ((MODE) == RG_SUB && (ITEMS) == 1 ? 128                                                                             \
     : RG_B56(MODE, ITEMS, B56)       ? 576                                                                             \
     : (CAP)                          ? RG_CAP_THREADS(CAP)                                                             \
     : (ITEMS) >= 2                   ? 512                                                                             \
                                      : 1024),                                                                          \
        ((MODE) == RG_SUB && (ITEMS) == 1 ? 9 : RG_B56(MODE, ITEMS, B56) ? 2 : (CAP) ? 2 : 0)

/* The launches that have capped instances: the block form at 4 16-byte
 * vectors a thread (rows of 1025-2048 vectors take 257-512 threads; its
 * instances hold 72-112 registers, so at 448 threads an SM holds one
 * block). Operators instantiate them where the plan can ask for them (not
 * for early loads: decode shapes have fewer rows than SMs, occupancy is not
 * what bounds them). */
template <int MODE, int ITEMS, int V> struct RgCappable {
    static constexpr bool value = MODE == RG_BLOCK && ITEMS == 4 && V > 1;
};
/* The block form at 8 16-byte vectors a thread: rows of 2049-4096 vectors
 * in shapes that fill the GPU (plan_rows.cu), never early and never
 * peeled; the operators' weight and bias load in the output phase there
 * (held through the reduction they spilled: layer_norm 80-566 bytes). */
template <int MODE, int ITEMS, int V> struct RgBlock8 {
    static constexpr bool value = MODE == RG_BLOCK && ITEMS == 8 && V > 1;
};
/* The instance of launch q's cap: pick(C), C std::integral_constant<int>
 * of q.cap (0 where the launch is not CAPPABLE: every cap then names the
 * same uncapped instance). */
template <bool CAPPABLE, typename Pick> static auto rg_cap(const infiniopCudaRowLaunch &q, Pick pick) {
    if constexpr (CAPPABLE) {
        if (q.cap == 1) return pick(std::integral_constant<int, 1>());
        if (q.cap == 2) return pick(std::integral_constant<int, 2>());
    }
    return pick(std::integral_constant<int, 0>());
}

/* The plan's choice among an RgCappable launch's instances, made once at
 * descriptor creation from what the compiler gave them (pick: the
 * operator's instance for a launch, as its run call chooses it): the
 * blocks an SM each holds and its spill, for infiniop_cuda_cap_choice's
 * rule (cuda/plan_rows.cu). Launches without capped instances, and any
 * error of the queries, keep the uncapped one. */
template <typename Fn>
static void rg_plan_cap(infiniopCudaRowLaunch *q, unsigned sms, bool slow_rows,
                        Fn (*pick)(const infiniopCudaRowLaunch &)) {
    q->cap = 0;
    if (q->kernel != INFINIOP_CUDA_ROW_REG_BLOCK || q->items != 4 || q->scalar || q->early) return;
    const Fn f0 = pick(*q);
    if (!f0) return;
    /* (queries that may load the kernels: in this thread's relaxed capture
     * mode, so that a graph another thread is capturing in global mode is
     * not invalidated by a descriptor created meanwhile) */
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    const bool swapped = cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess;
    InfiniopCapQuery c = {};
    c.rows = q->grid, c.threads = q->threads, c.sms = sms, c.slow_rows = slow_rows;
    bool ok = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&c.blocks[0], f0, (int)q->threads, 0) == cudaSuccess;
    const bool wanted = ok && infiniop_cuda_cap_wanted(c);
    for (unsigned cap = 1; wanted && ok && cap <= 2; ++cap) {
        if (q->threads > RG_CAP_THREADS(cap)) continue;
        infiniopCudaRowLaunch l = *q;
        l.cap = cap;
        const Fn f = pick(l);
        if (!f || f == f0) continue;
        cudaFuncAttributes a = {};
        ok = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&c.blocks[cap], f, (int)q->threads, 0) == cudaSuccess &&
             cudaFuncGetAttributes(&a, f) == cudaSuccess;
        c.spill[cap] = a.localSizeBytes;
    }
    if (swapped) (void)cudaThreadExchangeStreamCaptureMode(&mode);
    if (!ok) {
        (void)cudaGetLastError(); /* (the plan stands uncapped; the error is not the next call's) */
        return;
    }
    if (wanted) q->cap = infiniop_cuda_cap_choice(c);
}
/* rg_plan_cap on both launches of an operator's plan, on its device;
 * slow_rows: InfiniopCapQuery's (cuda/common.cuh). */
template <typename Fn>
static void rg_plan_caps(int device_id, infiniopCudaRowPlan *p, bool slow_rows,
                         Fn (*pick)(const infiniopCudaRowLaunch &)) {
    InfiniopCudaDeviceGuard guard(device_id);
    infiniopCudaProps props;
    if (guard.err != cudaSuccess || infiniop_cuda_device_props(device_id, &props) != INFINI_STATUS_SUCCESS)
        return; /* (the plan stands uncapped) */
    rg_plan_cap(&p->aligned, (unsigned)props.sm_count, slow_rows, pick);
    rg_plan_cap(&p->unaligned, (unsigned)props.sm_count, slow_rows, pick);
}

#endif /* INFINIOP_CUDA_ROWS_CUH */
