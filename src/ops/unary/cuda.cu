/*
 * ops/unary/cuda.cu - silu and sigmoid on NVIDIA GPUs.
 *
 * The formulas are those of ops/unary/cpu.c (no overflow, tiny results of
 * large negative inputs kept, silu(-inf) = -0), in float32 with expf for the
 * half types and F32 (values converted explicitly, never half-precision
 * math), in float64 with exp for F64. One exception: silu(x) for x <= -80
 * (float32 path) is x e^x formed in float64, rounded once.
 *
 * The kernels are those of infiniopCudaEltKernel (cuda/plan.h), in the
 * order the planner (infiniop_unary_cuda_plan, below) tries them; it
 * records the kernel and its launch shape once, at descriptor creation,
 * and the run call only picks the plan's aligned or unaligned launch by the
 * pointers' alignment.
 * Each element is read and then written by one thread, so in-place is safe.
 */
#include "cuda/common.cuh"
#include "unary.h"

#include <stdio.h>

/* The CPU's two branches (x >= 0, x < 0) share e = e^-|x|, so both are one
 * exponential, one select and one division here: no divergence within a
 * warp, and the same values as the CPU formulas.
 *
 * Each formula is split in two: main_t, branch-free, right for every input
 * but the rare ones, and rare_t (out of line) for those (is_rare). A
 * thread computes main_t for all its elements first, then patches the rare
 * ones behind a single test (apply_arr): a per-element branch around an
 * out-of-line call ends a basic block at every element, so the elements'
 * dependent chains (convert, exponential, division: MUFU latencies) ran one
 * after another instead of overlapping, at every size (bench/NOTES.md).
 * Out of line, the rare code's float64 arithmetic also stays out of every
 * kernel's register count. */
/* silu for x <= -80 (float32 path). 1 + e^x == 1 here, and e^x is below
 * float32's normal range (or nearly): x e^x in float64, rounded once. (The
 * CPU's (x h) h with h = e^(x/2) would carry twice the 2-ulp error of
 * CUDA's expf.) */
__device__ __noinline__ float silu_neg_tail(float x) {
    if (x == -INFINITY) return -0.0f;
    return (float)((double)x * exp((double)x));
}
/* silu for x <= -700 (float64 path). */
__device__ __noinline__ double silu_neg_tail(double x) {
    if (x == -INFINITY) return -0.0;
    double h = exp(0.5 * x);
    return (x * h) * h;
}
__device__ __forceinline__ float sigmoid_c(float x) {
    float e = expf(-fabsf(x));
    return (x >= 0.0f ? 1.0f : e) / (1.0f + e);
}
__device__ __forceinline__ float silu_main(float x) {
    float e = expf(-fabsf(x));
    return (x >= 0.0f ? x : x * e) / (1.0f + e);
}
__device__ __forceinline__ float silu_c(float x) { return x <= -80.0f ? silu_neg_tail(x) : silu_main(x); }
__device__ __forceinline__ double sigmoid_c(double x) {
    double e = exp(-fabs(x));
    return (x >= 0.0 ? 1.0 : e) / (1.0 + e);
}
__device__ __forceinline__ double silu_main(double x) {
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
 * accurate to ~2 + 1.5|x| float32 ulp up to |x| = 80; beyond (and NaN),
 * the exact float32 formulas above are used (tiny results are kept: BF16
 * has float32's exponent range). Same values as the exact path within the
 * output's rounding; about a third of its instructions, which matters: at
 * 2 bytes an element the exact path is issue-bound on H100/H200 (about 30
 * instructions an element against the ~33 per element the memory rate
 * leaves). */
__device__ __noinline__ float sigmoid_rare(float x) { return sigmoid_c(x); }
__device__ __noinline__ float silu_rare(float x) { return silu_c(x); }
__device__ __forceinline__ float sigmoid_fast(float x) {
    float e = __expf(-fabsf(x));
    return __fdividef(x >= 0.0f ? 1.0f : e, 1.0f + e);
}
__device__ __forceinline__ float silu_fast(float x) {
    float e = __expf(-fabsf(x));
    return __fdividef(x >= 0.0f ? x : x * e, 1.0f + e);
}

/* The exact formulas out of line (the rare inputs' path). */
__device__ __noinline__ double sigmoid_rare(double x) { return sigmoid_c(x); }
__device__ __noinline__ double silu_rare(double x) { return x <= -700.0 ? silu_neg_tail(x) : silu_main(x); }

/* Rare inputs. FAST: |x| >= 80 and NaN (beyond __expf's accuracy bound).
 * Exact paths: also every input whose division could leave the IEEE
 * division's fast path (a zero, tiny or huge numerator: the compiler's
 * correctly rounded division checks its operands and calls a slow
 * subroutine for those, which cost ~0.7 us in a one-element launch where
 * a zero reached it; bench/NOTES.md). main_t is then evaluated on 1 for
 * them (apply_arr), so it never takes that subroutine, and the rare path
 * computes the same exact formula. */
template <int KIND, bool FAST> __device__ __forceinline__ bool is_rare(float x) {
    const float a = fabsf(x);
    if constexpr (FAST) return !(a < 80.0f); /* also NaN */
    else if constexpr (KIND == INFINIOP_UNARY_SILU) return !(a >= 0x1p-60f && a < 0x1p100f) || x < -40.0f;
    else return !(a < 40.0f); /* e = e^-|x| stays >= 2^-58 */
}
template <int KIND, bool FAST> __device__ __forceinline__ float main_t(float x) {
    if constexpr (FAST) return KIND == INFINIOP_UNARY_SILU ? silu_fast(x) : sigmoid_fast(x);
    else return KIND == INFINIOP_UNARY_SILU ? silu_main(x) : sigmoid_c(x);
}
template <int KIND, bool FAST> __device__ __forceinline__ float rare_t(float x) {
    return KIND == INFINIOP_UNARY_SILU ? silu_rare(x) : sigmoid_rare(x);
}
template <int KIND, bool FAST> __device__ __forceinline__ bool is_rare(double x) {
    const double a = fabs(x);
    if constexpr (KIND == INFINIOP_UNARY_SILU) return !(a >= 0x1p-500 && a < 0x1p500) || x < -300.0;
    else return !(a < 300.0);
}
template <int KIND, bool FAST> __device__ __forceinline__ double main_t(double x) {
    return KIND == INFINIOP_UNARY_SILU ? silu_main(x) : sigmoid_c(x);
}
template <int KIND, bool FAST> __device__ __forceinline__ double rare_t(double x) {
    return KIND == INFINIOP_UNARY_SILU ? silu_rare(x) : sigmoid_rare(x);
}

/* One element. */
template <int KIND, bool FAST, typename C> __device__ __forceinline__ C apply_t(C x) {
    const bool rare = is_rare<KIND, FAST>(x);
    const C m = main_t<KIND, FAST>(rare ? C(1) : x);
    return rare ? rare_t<KIND, FAST>(x) : m;
}
/* N elements of a thread, in place: main_t for all (one basic block, the
 * chains interleaved), then the rare ones behind one test. Lanes without
 * an element hold 1 (the kernels' fill), not a rare input. */
template <int KIND, bool FAST, typename C, int N> __device__ __forceinline__ void apply_arr(C (&x)[N]) {
    C r[N];
    bool rare = false;
#pragma unroll
    for (int k = 0; k < N; ++k) {
        const bool rk = is_rare<KIND, FAST>(x[k]);
        rare |= rk;
        r[k] = main_t<KIND, FAST>(rk ? C(1) : x[k]);
    }
    if (rare) {
#pragma unroll
        for (int k = 0; k < N; ++k)
            if (is_rare<KIND, FAST>(x[k])) r[k] = rare_t<KIND, FAST>(x[k]);
    }
#pragma unroll
    for (int k = 0; k < N; ++k) x[k] = r[k];
}
/* N storage elements in place through the compute type. */
template <typename T, int KIND, int N> __device__ __forceinline__ void apply_store(typename T::S (&v)[N]) {
    typename T::C c[N];
#pragma unroll
    for (int k = 0; k < N; ++k) c[k] = T::load(v[k]);
    apply_arr<KIND, IsHalf<T>::value>(c);
#pragma unroll
    for (int k = 0; k < N; ++k) v[k] = T::store(c[k]);
}

/* VEC: contiguous, both pointers 16-byte aligned: nvec vectors of V
 * elements, ITEMS vectors a thread (all loads issued before the first
 * store: the compiler cannot move a load above a store that may alias it,
 * so a one-vector loop keeps one load in flight a thread), and the
 * n - nvec * V tail elements by the first threads of block 0, loaded with
 * the vectors (not after their stores: a second round trip). Blocks of
 * blockDim.x * ITEMS vectors; the grid covers the tensor (no loop).
 * ONCE: evict-first cache hints on the vectors (load_once, store_once), for
 * tensors too large to stay in L2 (plan rule); a smaller output is read
 * from L2 by the next kernel, and evict-first would give its lines up
 * first. */
template <typename T, int KIND, int ITEMS, bool ONCE>
__global__ void __launch_bounds__(512) unary_vec_kernel(typename T::S *out, const typename T::S *in, size_t n) {
    grid_dependency();
    typedef typename T::S S;
    typedef Vec<S, VecWidth<T>::value> VT;
    constexpr int V = VecWidth<T>::value;
    const size_t nvec = n / V, tail = n - nvec * V;
    const size_t base = (size_t)blockIdx.x * blockDim.x * ITEMS + threadIdx.x;
    const bool has_tail = blockIdx.x == 0 && threadIdx.x < tail;
    S t[1] = {T::store(typename T::C(1))};
    if (has_tail) t[0] = in[nvec * V + threadIdx.x];
    VT q[ITEMS];
#pragma unroll
    for (int u = 0; u < ITEMS; ++u) {
        const size_t i = base + (size_t)u * blockDim.x;
#pragma unroll
        for (int k = 0; k < V; ++k) q[u].v[k] = T::store(typename T::C(1)); /* no element: 1 (apply_arr) */
        if (i < nvec) q[u] = load_word<VT, ONCE>(in + i * V);
    }
#pragma unroll
    for (int u = 0; u < ITEMS; ++u) {
        const size_t i = base + (size_t)u * blockDim.x;
        apply_store<T, KIND>(q[u].v); /* a vector at a time: V chains together, registers as before */
        if (i < nvec) store_word<VT, ONCE>(out + i * V, q[u]); /* one 16-byte store (WordOf) */
    }
    if (has_tail) {
        apply_store<T, KIND>(t);
        out[nvec * V + threadIdx.x] = t[0];
    }
}

/* FLAT: contiguous, any alignment. */
template <typename T, int KIND>
__global__ void unary_flat_kernel(typename T::S *out, const typename T::S *in, size_t n) {
    grid_dependency();
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = T::store(apply_t<KIND, IsHalf<T>::value>(T::load(in[i])));
}

/* STRIDED: any layout: offsets of element i from the coalesced shape and strides.
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

/* Offsets of row r (row-major over every dimension but the last; r below
 * the row count, so dimension 0 takes r itself: one division fewer) in the
 * output and the input. I: the index type of the divisions, uint32_t where
 * the plan bounds the tensor under 2^32 elements (GATHER: the offsets are
 * then only 32-bit code, as a 64-bit division is a long subroutine), else
 * size_t, which takes the 32-bit loop where L.n allows. */
template <typename I>
__device__ __forceinline__ void row_bases(const infiniopEltLayout &L, I r, ptrdiff_t *ob, ptrdiff_t *ib) {
    if constexpr (sizeof(I) > 4) {
        if (L.ndim == 2) { /* the common case of ROWS: no division */
            *ob = (ptrdiff_t)r * L.out_stride[0], *ib = (ptrdiff_t)r * L.in_stride[0];
            return;
        }
        if (L.n <= 0xffffffffu) {
            row_bases<uint32_t>(L, (uint32_t)r, ob, ib);
            return;
        }
    }
    if (L.ndim < 2) { /* one row (GATHER of a 1-d tensor) */
        *ob = *ib = 0;
        return;
    }
    ptrdiff_t o = 0, i = 0;
    for (int d = L.ndim - 2; d > 0; --d) {
        const I len = (I)L.shape[d], k = r % len;
        r /= len;
        o += (ptrdiff_t)k * L.out_stride[d];
        i += (ptrdiff_t)k * L.in_stride[d];
    }
    *ob = o + (ptrdiff_t)r * L.out_stride[0], *ib = i + (ptrdiff_t)r * L.in_stride[0];
}
/* GATHER: the output one dense run (its pointer 16-byte aligned), the
 * input any layout (the plan's rule says which): a thread writes ITEMS
 * 16-byte vectors of V consecutive output elements, each one store, and
 * gathers their V inputs at the input's strides (one 16-byte load where
 * they are an aligned run of unit stride). The input offset of a vector
 * costs one division by the innermost extent Q (and one more a further
 * dimension) for V elements; a vector that crosses a row end (rows of
 * fewer than V elements, or Q not a multiple of V) steps to the next row
 * element by element. 32-bit indices (plan: n < 2^31). All of a thread's
 * loads are issued before its first store. */
template <typename T, int KIND, int ITEMS>
__global__ void __launch_bounds__(256) unary_gather_kernel(const __grid_constant__ infiniopEltLayout L,
                                                           typename T::S *out, const typename T::S *in) {
    grid_dependency();
    typedef typename T::S S;
    typedef Vec<S, VecWidth<T>::value> VT;
    constexpr int V = VecWidth<T>::value;
    const uint32_t n = (uint32_t)L.n, Q = (uint32_t)L.shape[L.ndim - 1];
    const ptrdiff_t ics = L.in_stride[L.ndim - 1];
    const uint32_t base = (uint32_t)blockIdx.x * blockDim.x * ITEMS + threadIdx.x;
    VT x[ITEMS];
#pragma unroll
    for (int u = 0; u < ITEMS; ++u) {
        const uint32_t i0 = (base + (uint32_t)u * blockDim.x) * V;
#pragma unroll
        for (int k = 0; k < V; ++k) x[u].v[k] = T::store(typename T::C(1)); /* no element: 1 (apply_arr) */
        if (i0 >= n) continue;
        uint32_t row = i0 / Q, col = i0 - row * Q;
        ptrdiff_t ob, rb; /* ob unused: its arithmetic is dead code */
        row_bases<uint32_t>(L, row, &ob, &rb);
        if (col + V <= Q && i0 + V <= n) { /* the vector's inputs lie in one row */
            const S *p = in + rb + (ptrdiff_t)col * ics;
            if (ics == 1 && (uintptr_t)p % sizeof(VT) == 0) {
                x[u] = load_word<VT, false>(p);
            } else {
#pragma unroll
                for (int k = 0; k < V; ++k) x[u].v[k] = p[(ptrdiff_t)k * ics];
            }
        } else {
#pragma unroll
            for (int k = 0; k < V; ++k) {
                if (i0 + k >= n) break;
                if (col == Q) col = 0, row_bases<uint32_t>(L, ++row, &ob, &rb);
                x[u].v[k] = in[rb + (ptrdiff_t)col * ics];
                ++col;
            }
        }
    }
#pragma unroll
    for (int u = 0; u < ITEMS; ++u) {
        const uint32_t i0 = (base + (uint32_t)u * blockDim.x) * V;
        apply_store<T, KIND>(x[u].v);
        if (i0 + V <= n) {
            store_word<VT, false>(out + i0, x[u]); /* one 16-byte store (WordOf) */
        } else if (i0 < n) {
#pragma unroll
            for (int k = 0; k < V; ++k)
                if (i0 + k < n) out[i0 + k] = x[u].v[k];
        }
    }
}

/* ROWS: the output's last dimension has unit stride, and so has the
 * input's (IN1 false) or it is read one element at a time at its stride
 * (IN1: any small stride, 0 for a broadcast; plan rule). W elements an
 * access (RawVec: W * sizeof(S) bytes, aligned to its size); with IN1 the
 * W elements of an output access are W loads (a warp's loads of one step
 * lie W elements apart; the steps' sectors are the same, from L1). Blocks are
 * blockDim.x threads along a row by blockDim.y rows (short rows: several
 * rows a warp); a block covers the chunks (of W elements) [blockIdx.x *
 * blockDim.x * ITEMS, ...) of R * blockDim.y rows (R: plan.rows), thread
 * (x, y) chunks x, x + blockDim.x, ... (coalesced) of rows y, y +
 * blockDim.y, ... (one row a step, or two: PAIR below). */
/* Accesses a thread issues per row: 32 bytes in flight (two 16-byte
 * vectors, as VEC's large-tensor shape); 16 one-element accesses at 2-byte
 * types (a cap of 8 left 16 bytes in flight a thread, and sliced bf16 rows
 * with an odd pitch ran at 65-75% of copy: bench/NOTES.md). */
__host__ __device__ constexpr unsigned rows_items(unsigned bytes) {
    return bytes >= 32 ? 1u : 32u / bytes;
}
/* 256-thread blocks a multiprocessor in the launch bounds (at most 64
 * registers; the instances use 48-64: four or five such blocks fit). */
#define ROWS_BLOCKS_PER_SM 4
/* A row's ITEMS accesses of W elements from the input at row offset ib
 * (elements past the row's chunks: 1, apply_arr's filler). */
template <typename T, int W, int ITEMS, bool IN1>
__device__ __forceinline__ void rows_load(RawVec<typename T::S, W> (&x)[ITEMS], const typename T::S *in, ptrdiff_t ib,
                                          size_t c0, unsigned step, size_t nchunks, ptrdiff_t ics, bool any) {
#pragma unroll
    for (int u = 0; u < ITEMS; ++u) {
        const size_t c = c0 + (size_t)u * step;
#pragma unroll
        for (int k = 0; k < W; ++k) x[u].v[k] = T::store(typename T::C(1));
        if (any && c < nchunks) {
            if constexpr (IN1) {
#pragma unroll
                for (int k = 0; k < W; ++k) x[u].v[k] = in[ib + (ptrdiff_t)(c * W + k) * ics];
            } else {
                x[u] = load_word<RawVec<typename T::S, W>, false>(in + ib + (ptrdiff_t)(c * W));
            }
        }
    }
}
/* The formula over a row's ITEMS * W elements at once (one basic block:
 * apply_arr), in place. */
template <typename T, int KIND, int W, int ITEMS>
__device__ __forceinline__ void rows_apply(RawVec<typename T::S, W> (&x)[ITEMS]) {
    typename T::S z[ITEMS * W];
#pragma unroll
    for (int u = 0; u < ITEMS; ++u)
#pragma unroll
        for (int k = 0; k < W; ++k) z[u * W + k] = x[u].v[k];
    apply_store<T, KIND>(z);
#pragma unroll
    for (int u = 0; u < ITEMS; ++u)
#pragma unroll
        for (int k = 0; k < W; ++k) x[u].v[k] = z[u * W + k];
}
template <typename T, int W, int ITEMS>
__device__ __forceinline__ void rows_store(typename T::S *out, ptrdiff_t ob, const RawVec<typename T::S, W> (&y)[ITEMS],
                                           size_t c0, unsigned step, size_t nchunks) {
#pragma unroll
    for (int u = 0; u < ITEMS; ++u) {
        const size_t c = c0 + (size_t)u * step;
        if (c < nchunks) store_word<RawVec<typename T::S, W>, false>(out + ob + (ptrdiff_t)(c * W), y[u]);
    }
}
/* PAIR (plan: no input row repeats along the rows, two or more rows a
 * thread): two of the thread's rows a step, both rows' loads issued before
 * either row's arithmetic, so a thread keeps 64 bytes in flight where one
 * row a step kept 32 and the row's round trip was the wait; the register
 * limit (ROWS_BLOCKS_PER_SM) caps the threads an SM at 1024, and 32 KB in
 * flight an SM fell short of the memory's latency-bandwidth product (H200:
 * f16 8x1024x32x128 permuted (0, 2, 1, 3) 42.4 -> 40.7 us, f32 2047x4096
 * every other row 20.2 -> 19.2, f64 2000x4096 padded 40.5 -> 37.1; no
 * case slower; bench/NOTES.md, session 22). Without
 * PAIR, one row a step, and a row whose input offset equals the thread's
 * previous row's (a broadcast input, stride 0) reuses the results held in
 * registers: the input is read once per block, not once per row. */
template <typename T, int KIND, int W, int ITEMS, bool IN1, bool PAIR>
__global__ void __launch_bounds__(256, ROWS_BLOCKS_PER_SM)
    unary_rows_kernel(const __grid_constant__ infiniopEltLayout L, unsigned R, typename T::S *out,
                      const typename T::S *in) {
    grid_dependency();
    typedef typename T::S S;
    typedef RawVec<S, W> VT;
    const size_t ncols = L.shape[L.ndim - 1], nchunks = ncols / W, nrows = L.n / ncols;
    const ptrdiff_t ics = L.in_stride[L.ndim - 1];
    const size_t c0 = (size_t)blockIdx.x * blockDim.x * ITEMS + threadIdx.x;
    if (c0 >= nchunks) return; /* (no barriers: nothing waits for this thread) */
    const size_t span = (size_t)R * blockDim.y, rb = (size_t)blockIdx.y * span;
    const size_t r1 = rb + span < nrows ? rb + span : nrows;
    if constexpr (PAIR) {
        for (size_t r = rb + threadIdx.y; r < r1; r += 2 * (size_t)blockDim.y) {
            const size_t r2 = r + blockDim.y;
            const bool two = r2 < r1;
            ptrdiff_t oa, ia, ob = 0, ib = 0;
            row_bases<size_t>(L, r, &oa, &ia);
            if (two) row_bases<size_t>(L, r2, &ob, &ib);
            VT a[ITEMS], b[ITEMS];
            rows_load<T, W, ITEMS, IN1>(a, in, ia, c0, blockDim.x, nchunks, ics, true);
            rows_load<T, W, ITEMS, IN1>(b, in, ib, c0, blockDim.x, nchunks, ics, two);
            rows_apply<T, KIND, W, ITEMS>(a);
            rows_store<T, W, ITEMS>(out, oa, a, c0, blockDim.x, nchunks);
            if (two) {
                rows_apply<T, KIND, W, ITEMS>(b);
                rows_store<T, W, ITEMS>(out, ob, b, c0, blockDim.x, nchunks);
            }
        }
        return;
    }
    VT y[ITEMS];
    ptrdiff_t prev = 0;
    for (size_t r = rb + threadIdx.y; r < r1; r += blockDim.y) {
        ptrdiff_t ob, ib;
        row_bases<size_t>(L, r, &ob, &ib);
        /* the thread's first row, or an input row other than its previous
         * row's (rows broadcast from one input row are computed once) */
        if (r == rb + threadIdx.y || ib != prev) {
            prev = ib;
            if (IN1 && ics == 0) {
                /* the row is one value (its last dimension broadcast):
                 * computed once, not once per element (the exact F32 and
                 * F64 formulas are issue-bound) */
                S z1[1] = {in[ib]};
                apply_store<T, KIND>(z1);
#pragma unroll
                for (int u = 0; u < ITEMS; ++u)
#pragma unroll
                    for (int k = 0; k < W; ++k) y[u].v[k] = z1[0];
            } else {
                rows_load<T, W, ITEMS, IN1>(y, in, ib, c0, blockDim.x, nchunks, ics, true);
                rows_apply<T, KIND, W, ITEMS>(y);
            }
        }
        rows_store<T, W, ITEMS>(out, ob, y, c0, blockDim.x, nchunks);
    }
}

/* The transposing path: the output's unit-stride dimension q = ndim - 1
 * differs from the input's, p. A block takes a TILE_P x TILE_Q tile of the
 * (p, q) plane: it reads the input along p (coalesced: a warp's load is 32
 * consecutive elements of one input line), applies the function, keeps the
 * results in shared memory (float, or double for F64; padded against bank
 * conflicts) and writes the output along q (a warp's store is 32
 * consecutive elements of one output line). 256 threads, 8 elements each
 * per phase, all loads in flight together. The other dimensions go to
 * blockIdx.z (a grid-stride loop).
 * Tile size: 32 x 64 (TQ = 64), 8 elements a thread, or 32 x 32 (TQ = 32,
 * 4 a thread) for grids under two waves (the planner's rule). In a
 * stand-alone copy of this kernel (bench/experiments/transpose_tile.cu)
 * 32 x 64 ran every odd-extent
 * transpose measured, 2- to 8-byte elements, 66 K to 161 M elements,
 * 1.2-2.1x faster than 64 x 64 tiles with 16 a thread: more blocks at
 * different phases keep loads in flight while others store, and small
 * tensors give more multiprocessors a block (bench/NOTES.md, "odd-extent
 * transposes"). Launch bounds: six blocks a multiprocessor (40
 * registers), four for F64 (64): at eight (32 registers) the call of the
 * rare-input path (apply_arr) made ptxas spill, and the library's kernel
 * ran 1.4x slower than the stand-alone one. */
#define TILE_P 32
#define TILE_Q 64       /* the tile's edge along q; TILE_Q_SMALL for small grids */
#define TILE_Q_SMALL 32
/* Blocks a multiprocessor in the scalar tiles' launch bounds (the planner
 * counts waves of blocks with it): by element size. */
#define TILE_BLOCKS_PER_SM(es) ((es) == 8 ? 4 : 6)
/* Offsets of plane bi (row-major over every dimension but p and q) in the
 * input and the output: where the tiling kernels' (p, q) plane starts. */
__device__ __forceinline__ void tile_bases(const infiniopEltLayout &L, int p, int q, size_t bi, ptrdiff_t *ib,
                                           ptrdiff_t *ob) {
    ptrdiff_t i = 0, o = 0;
    if (L.ndim == 2) { /* one plane */
        *ib = 0, *ob = 0;
        return;
    }
    const bool small = L.n <= 0xffffffffu; /* 32-bit divisions (as row_bases) */
    for (int d = L.ndim - 1; d >= 0; --d) {
        if (d == p || d == q) continue;
        size_t k;
        if (small) {
            const uint32_t len = (uint32_t)L.shape[d];
            k = (uint32_t)bi % len;
            bi = (uint32_t)bi / len;
        } else {
            k = bi % L.shape[d];
            bi /= L.shape[d];
        }
        i += (ptrdiff_t)k * L.in_stride[d];
        o += (ptrdiff_t)k * L.out_stride[d];
    }
    *ib = i, *ob = o;
}
/* One tile of one plane. Loads: lane along p, warp w + 8 j along q;
 * stores: lane + 32 i along q, warp w + 8 j along p. src and dst are the
 * thread's first element on each side, the others fixed steps away: isq
 * (the input's stride along q) and osp (the output's along p); the input's
 * stride along p and the output's along q are 1 (the plan's rule), known
 * here so that a thread's addresses are a base and constant offsets. np,
 * nq: the tile's extents (the last tiles of a plane are partial). */
template <typename T, int KIND, int TQ>
__device__ __forceinline__ void tile_one(const typename T::S *__restrict__ src, typename T::S *dst, ptrdiff_t isq,
                                         ptrdiff_t osp, unsigned np, unsigned nq,
                                         typename T::C (&tile)[TQ][TILE_P + 1]) {
    typedef typename T::C C;
    constexpr int NJ = TQ / 8, MI = TQ / 32, MJ = TILE_P / 8;
    const unsigned lane = threadIdx.x & 31u, w = threadIdx.x >> 5;
    C v[NJ];
#pragma unroll
    for (int j = 0; j < NJ; ++j) v[j] = lane < np && w + 8 * j < nq ? T::load(src[8 * j * isq]) : (C)1;
    apply_arr<KIND, IsHalf<T>::value>(v);
#pragma unroll
    for (int j = 0; j < NJ; ++j) tile[w + 8 * j][lane] = v[j];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < MJ; ++j)
#pragma unroll
        for (int i = 0; i < MI; ++i)
            if (w + 8 * j < np && lane + 32 * i < nq)
                dst[8 * j * osp + 32 * i] = T::store(tile[lane + 32 * i][w + 8 * j]);
}
/* The input is read through the read-only path (__restrict__): a
 * transposing plan's input never overlaps its output (a layout other than
 * the output's admits no aliasing: core/tensor.c, infiniop_check_alias).
 * A tensor of one plane (nb = 1, every 2-d transpose) takes one tile and
 * computes no plane offsets: the kernel's per-block work is small, and a
 * plane loop and its offsets around it cost it a third of its rate. */
template <typename T, int KIND, int TQ>
__global__ void __launch_bounds__(256, TILE_BLOCKS_PER_SM(sizeof(typename T::S)))
    unary_tile_kernel(const __grid_constant__ infiniopEltLayout L, int p, size_t nb, typename T::S *out,
                      const typename T::S *__restrict__ in) {
    grid_dependency();
    typedef typename T::C C;
    __shared__ C tile[TQ][TILE_P + 1];
    const int q = L.ndim - 1;
    const size_t p0 = (size_t)blockIdx.y * TILE_P, q0 = (size_t)blockIdx.x * TQ;
    const size_t rp = L.shape[p] - p0, rq = L.shape[q] - q0; /* what is left of each extent */
    const unsigned np = rp < TILE_P ? (unsigned)rp : TILE_P, nq = rq < TQ ? (unsigned)rq : TQ;
    const unsigned lane = threadIdx.x & 31u, w = threadIdx.x >> 5;
    const ptrdiff_t isq = L.in_stride[q], osp = L.out_stride[p];
    const typename T::S *src = in + (p0 + lane) + (ptrdiff_t)(q0 + w) * isq;
    typename T::S *dst = out + (ptrdiff_t)(p0 + w) * osp + (q0 + lane);
    if (nb == 1) {
        tile_one<T, KIND, TQ>(src, dst, isq, osp, np, nq, tile);
        return;
    }
    for (size_t bi = blockIdx.z; bi < nb; bi += gridDim.z) {
        ptrdiff_t ib, ob;
        tile_bases(L, p, q, bi, &ib, &ob);
        if (bi != blockIdx.z) __syncthreads(); /* the last tile's readers are done */
        tile_one<T, KIND, TQ>(src + ib, dst + ob, isq, osp, np, nq, tile);
    }
}

/* TRANSPOSE_VEC: the transposing path with 16-byte vectors on both sides (plan rule:
 * both extents along p and q and every other stride a multiple of the
 * vector width V, both pointers 16-byte aligned), without shared memory:
 * a thread loads V input vectors (V consecutive p, at V consecutive q) and
 * stores V output vectors (V consecutive q, at V consecutive p): its V x V
 * block is transposed in registers, where the results are packed into the
 * output vectors anyway. A warp's lanes are 4 along p and 8 along q, so each
 * of its loads covers 8 input lines x 64 bytes and each store 4 output
 * lines x 128 bytes: whole 32-byte sectors on both sides. A block's warps
 * are 2^wp_lg along p (1, 2 or 4: the plan's tile_wp) and the rest along
 * q: a tile of (2^wp_lg x 4 V) x (warps / 2^wp_lg x 8 V) elements (8 warps,
 * 4 along p: 16 V x 16 V, 256 bytes of each line on both sides). (The
 * 64 x 64 float tile in shared memory that this replaces was bound by its
 * scalar shared-memory traffic: bench/NOTES.md.) */
template <typename T, int KIND>
__global__ void __launch_bounds__(256) unary_tile_vec_kernel(const __grid_constant__ infiniopEltLayout L, int p,
                                                             size_t nb, unsigned wp_lg, typename T::S *out,
                                                             const typename T::S *in) {
    grid_dependency();
    typedef typename T::S S;
    typedef Vec<S, VecWidth<T>::value> VT;
    constexpr int V = VecWidth<T>::value;
    const int q = L.ndim - 1;
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const unsigned ep = (4u * V) << wp_lg, eq = ((blockDim.x >> 5) >> wp_lg) * 8u * V; /* the tile */
    const size_t pp = (size_t)blockIdx.y * ep + ((warp & ((1u << wp_lg) - 1u)) * 4u + (lane & 3u)) * V;
    const size_t qq = (size_t)blockIdx.x * eq + ((warp >> wp_lg) * 8u + (lane >> 2)) * V;
    if (pp >= L.shape[p] || qq >= L.shape[q]) return; /* (no barriers: nothing waits for this thread) */
    const ptrdiff_t isq = L.in_stride[q], osp = L.out_stride[p];
    for (size_t bi = blockIdx.z; bi < nb; bi += gridDim.z) {
        ptrdiff_t ib = 0, ob = 0;
        if (nb > 1) tile_bases(L, p, q, bi, &ib, &ob);
        VT v[V];
#pragma unroll
        for (int k = 0; k < V; ++k) v[k] = *reinterpret_cast<const VT *>(in + ib + (ptrdiff_t)(qq + k) * isq + pp);
#pragma unroll
        for (int e = 0; e < V; ++e) {
            VT o;
#pragma unroll
            for (int k = 0; k < V; ++k) forget(v[k]); /* convert in each step: no float copies of the block */
            S z[V];
#pragma unroll
            for (int k = 0; k < V; ++k) z[k] = v[k].v[e];
            apply_store<T, KIND>(z);
#pragma unroll
            for (int k = 0; k < V; ++k) o.v[k] = z[k];
            store_word<VT, false>(out + ob + (ptrdiff_t)(pp + e) * osp + qq, o); /* one 16-byte store (WordOf) */
        }
    }
}

/* ROWS with W elements an access: the plan's items are 1 (latency shape)
 * or rows_items(W * sizeof(S)). */
template <typename T, int KIND, int W>
static cudaError_t launch_rows(const infiniopEltLayout &L, const infiniopCudaEltLaunch &l, dim3 grid, bool pdl,
                               typename T::S *o, const typename T::S *x, cudaStream_t stream) {
    constexpr int FULL = (int)rows_items(W * sizeof(typename T::S));
    auto kernel = l.in1 ? (l.items == 1 ? unary_rows_kernel<T, KIND, W, 1, true, false>
                                        : unary_rows_kernel<T, KIND, W, FULL, true, false>)
                        : (l.items == 1 ? unary_rows_kernel<T, KIND, W, 1, false, false>
                                        : unary_rows_kernel<T, KIND, W, FULL, false, false>);
    if constexpr (W * sizeof(typename T::S) == 16) /* (PAIR: 16-byte accesses of both tensors; plan rule) */
        if (l.pair) kernel = unary_rows_kernel<T, KIND, W, FULL, false, true>;
    return infiniop_cuda_launch(kernel, grid, dim3(l.lanes, l.threads / l.lanes), 0, stream, 1u, pdl, L, l.rows, o, x);
}

template <typename T, int KIND>
static cudaError_t launch(const infiniopUnaryInfo *info, void *out, const void *in, cudaStream_t stream) {
    typedef typename T::S S;
    const infiniopEltLayout &L = info->layout;
    const infiniopCudaEltPlan &P = info->cuda;
    const bool aligned = P.align == 0 || (((uintptr_t)out | (P.align_out ? 0 : (uintptr_t)in)) % P.align == 0);
    const infiniopCudaEltLaunch &l = aligned ? P.aligned : P.unaligned;
    const dim3 grid(l.grid[0], l.grid[1], l.grid[2]), block(l.threads);
    S *o = (S *)out;
    const S *x = (const S *)in;
    const bool pdl = P.pdl;
    switch (l.kernel) {
    case INFINIOP_CUDA_ELT_VEC: {
        auto kernel = l.once ? (l.items == 1   ? unary_vec_kernel<T, KIND, 1, true>
                                : l.items == 2 ? unary_vec_kernel<T, KIND, 2, true>
                                : l.items == 4 ? unary_vec_kernel<T, KIND, 4, true>
                                               : unary_vec_kernel<T, KIND, 8, true>)
                             : (l.items == 1   ? unary_vec_kernel<T, KIND, 1, false>
                                : l.items == 2 ? unary_vec_kernel<T, KIND, 2, false>
                                : l.items == 4 ? unary_vec_kernel<T, KIND, 4, false>
                                               : unary_vec_kernel<T, KIND, 8, false>);
        return infiniop_cuda_launch(kernel, grid, block, 0, stream, 1u, pdl, o, x, L.n);
    }
    case INFINIOP_CUDA_ELT_FLAT:
        return infiniop_cuda_launch(unary_flat_kernel<T, KIND>, grid, block, 0, stream, 1u, pdl, o, x, L.n);
    case INFINIOP_CUDA_ELT_GATHER:
        return infiniop_cuda_launch(l.items == 1 ? unary_gather_kernel<T, KIND, 1> : unary_gather_kernel<T, KIND, 2>,
                                    grid, block, 0, stream, 1u, pdl, L, o, x);
    case INFINIOP_CUDA_ELT_ROWS:
        switch (l.vec) {
        case 1: return launch_rows<T, KIND, 1>(L, l, grid, pdl, o, x, stream);
        case 2: return launch_rows<T, KIND, 2>(L, l, grid, pdl, o, x, stream);
        case 4:
            if constexpr (sizeof(S) <= 4) return launch_rows<T, KIND, 4>(L, l, grid, pdl, o, x, stream);
            break;
        case 8:
            if constexpr (sizeof(S) <= 2) return launch_rows<T, KIND, 8>(L, l, grid, pdl, o, x, stream);
            break;
        }
        return cudaErrorInvalidConfiguration;
    case INFINIOP_CUDA_ELT_TRANSPOSE_VEC:
        return infiniop_cuda_launch(unary_tile_vec_kernel<T, KIND>, grid, block, 0, stream, 1u, pdl, L, P.tile_p, P.planes,
                                    l.tile_wp == 4 ? 2u : l.tile_wp == 2 ? 1u : 0u, o, x);
    case INFINIOP_CUDA_ELT_TRANSPOSE_TILE:
        return infiniop_cuda_launch(l.items == TILE_Q_SMALL / 8 ? unary_tile_kernel<T, KIND, TILE_Q_SMALL>
                                                               : unary_tile_kernel<T, KIND, TILE_Q>,
                                    grid, block, 0, stream, 1u, pdl, L, P.tile_p, P.planes, o, x);
    case INFINIOP_CUDA_ELT_STRIDED:
        return infiniop_cuda_launch(l.idx64 ? unary_strided_kernel<T, KIND, size_t> : unary_strided_kernel<T, KIND, uint32_t>,
                                    grid, block, 0, stream, 1u, pdl, L, o, x);
    }
    return cudaErrorInvalidConfiguration;
}

template <typename T>
static cudaError_t launch_kind(const infiniopUnaryInfo *info, void *out, const void *in, cudaStream_t stream) {
    return info->kind == INFINIOP_UNARY_SILU ? launch<T, INFINIOP_UNARY_SILU>(info, out, in, stream)
                                             : launch<T, INFINIOP_UNARY_SIGMOID>(info, out, in, stream);
}

/* ---------------------------------------------------------------- the planner
 * Launch-shape rules (docs/PERFORMANCE.md, "Elementwise plan"), from the
 * element count, the multiprocessor count and threads a multiprocessor, and
 * the access width the strides allow; no shape is named:
 *  - a tensor too small to fill two waves of one access a thread is
 *    latency-bound: one access a thread, in the smallest blocks (a warp
 *    at the least) that give every multiprocessor one block at the most,
 *    else in blocks shrunk until the grid has two a multiprocessor;
 *  - larger ones: two 16-byte vectors (32 bytes) in flight a thread
 *    (fewer registers than wider unrolling, so more blocks fit a
 *    multiprocessor; bench/NOTES.md), 128-thread blocks for VEC. */
static size_t div_up(size_t a, size_t b) { return (a + b - 1) / b; }
static unsigned clamp_grid(size_t g, size_t cap) { return (unsigned)(g < 1 ? 1 : g > cap ? cap : g); }

/* Latency-bound launches (under two waves of one access a thread):
 * infiniop_cuda_spread_threads' rule (cuda/common.cuh), except that work
 * two blocks of tmax hold is not spread. Measured here on
 * an H200, 313 silu and sigmoid cases whose plan the rule changed from
 * "two blocks an SM": every one of 222 one-block-an-SM grids 0.86-1.01x
 * the former time, geomean 0.94; of the 69 grids of one to two blocks an
 * SM, taken from the first form of this rule, f32 58x2100 1.04x and bf16
 * 16x298x84 broadcast along dimension 0 1.18x, so those keep the
 * two-blocks rule; tensors that two blocks hold are not spread (H200:
 * STRIDED tensors of 112-434 elements 5-19% slower in 32-thread blocks
 * than in 256); bench/NOTES.md, session 27. spread_pct (an experiment's
 * knob): the two-blocks rule at that share of the SMs (rounded up). */
static unsigned spread_threads(size_t work, const infiniopCudaProps &p, unsigned tmax, unsigned spread_pct) {
    const size_t sms = (size_t)p.sm_count;
    if (work <= 2 * (size_t)tmax) return tmax;
    return infiniop_cuda_spread_threads(work, sms, tmax, spread_pct ? div_up(sms * spread_pct, 100) : 0);
}

/* Vectors a thread and threads a block over nvec 16-byte accesses (VEC,
 * GATHER): two vectors a thread in 128-thread blocks from two waves of one
 * a thread, else one, in blocks spread over the SMs. */
static void vec_shape(infiniopCudaEltLaunch &l, size_t nvec, const infiniopCudaProps &p, unsigned spread_pct) {
    const size_t resident = (size_t)p.sm_count * (size_t)p.max_threads_per_sm;
    if (nvec >= 2 * resident) {
        l.items = 2, l.threads = 128;
    } else {
        l.items = 1, l.threads = spread_threads(nvec, p, 128, spread_pct);
    }
}

static infiniopCudaEltLaunch plan_vec(size_t n, size_t es, const infiniopCudaProps &p,
                                      const infiniopCudaEltKnobs &kn) {
    infiniopCudaEltLaunch l = {};
    l.kernel = INFINIOP_CUDA_ELT_VEC;
    l.vec = (unsigned)(16 / es);
    const size_t nvec = n / l.vec;
    vec_shape(l, nvec, p, kn.spread_pct);
    /* evict-first hints only where input and output together exceed half
     * the L2: smaller ones stay there for the next kernel */
    l.once = p.l2_bytes && 2 * n * es > p.l2_bytes / 2;
    if (kn.threads) l.threads = kn.threads;
    if (kn.items) l.items = kn.items;
    if (kn.once) l.once = kn.once == 2;
    if (l.threads < l.vec) l.threads = l.vec; /* block 0 takes the < V tail elements */
    l.grid[0] = clamp_grid(div_up(nvec, (size_t)l.threads * l.items), 0x7fffffff);
    l.grid[1] = l.grid[2] = 1;
    return l;
}

/* One element a thread, grid-stride: at most 4 blocks' worth of threads a
 * multiprocessor can hold, per multiprocessor. */
static infiniopCudaEltLaunch plan_scalar(infiniopCudaEltKernel k, size_t n, const infiniopCudaProps &p, unsigned tmax,
                                         unsigned spread_pct) {
    infiniopCudaEltLaunch l = {};
    l.kernel = k;
    l.vec = l.items = 1;
    l.threads = spread_threads(n, p, tmax, spread_pct);
    l.grid[0] = clamp_grid(div_up(n, l.threads), (size_t)p.sm_count * (size_t)(p.max_threads_per_sm / l.threads) * 4);
    l.grid[1] = l.grid[2] = 1;
    l.idx64 = n > ((size_t)1 << 31); /* 32-bit indices while i + the grid's stride cannot wrap */
    return l;
}

/* GATHER: plan_vec's launch shape over the output's vectors (the last
 * one partial where V does not divide n). */
static infiniopCudaEltLaunch plan_gather(size_t n, size_t es, const infiniopCudaProps &p, unsigned spread_pct) {
    infiniopCudaEltLaunch l = {};
    l.kernel = INFINIOP_CUDA_ELT_GATHER;
    l.vec = (unsigned)(16 / es);
    const size_t nvec = div_up(n, l.vec);
    vec_shape(l, nvec, p, spread_pct);
    l.grid[0] = clamp_grid(div_up(nvec, (size_t)l.threads * l.items), 0x7fffffff);
    l.grid[1] = l.grid[2] = 1;
    return l;
}

/* ROWS with w elements an access: `lanes` threads along a row (the row's
 * accesses, at most 256, when latency-bound; else a power of two covering
 * them at `items` a thread, at most 256), the rest of a 256-thread block
 * on further rows. */
static unsigned pow2_at_least(size_t v, unsigned cap) {
    unsigned t = 1;
    while (t < cap && t < v) t *= 2;
    return t;
}
static size_t gcd32(size_t a) { /* gcd(a, 32) */
    size_t g = 1;
    while (g < 32 && a % (2 * g) == 0) g *= 2;
    return g;
}
/* Whether the input repeats along the rows: a row dimension of extent
 * over 1 that the input broadcasts (stride 0). */
static bool bcast_rows(const infiniopEltLayout &L) {
    for (int d = 0; d < L.ndim - 1; ++d)
        if (L.in_stride[d] == 0 && L.shape[d] > 1) return true;
    return false;
}
/* Whether the input repeats anywhere: along the rows, or a broadcast
 * last dimension of extent over 1. */
static bool bcast_any(const infiniopEltLayout &L) {
    const int q = L.ndim - 1;
    return bcast_rows(L) || (q >= 0 && L.in_stride[q] == 0 && L.shape[q] > 1);
}
/* ROWS, large tensors: rows a thread for a grid of about `want` blocks
 * (bx blocks a block row of ty rows; at most gmax block rows, 65535). */
static size_t rows_a_thread(size_t want, size_t bx, size_t gmax, size_t nrows, size_t ty) {
    size_t gy = div_up(want, bx);
    if (gy > gmax) gy = gmax;
    if (gy > 65535) gy = 65535;
    if (gy < 1) gy = 1;
    return div_up(nrows, gy * ty);
}
/* ROWS, latency-bound: one access a thread. Rows of up to 256 accesses
 * take a thread each, no idle lanes (a warp may span two rows: the kernel
 * has no warp-wide steps; the exact float64 formulas are issue-bound here,
 * and lanes past the row's end take issue slots: a row of 75 on 128 lanes
 * leaves 41% idle). Rows a block: all that 256 threads hold, fewer while
 * the grid has under `target` blocks (one row at the least), then a row
 * over more blocks (down to 32 threads). */
static void rows_spread(size_t chunks, size_t nrows, size_t target, size_t *tx_out, size_t *ty_out) {
    size_t tx = chunks <= 256 ? chunks : 256;
    const size_t want = div_up(target, div_up(chunks, tx)); /* block rows wanted */
    const size_t ty_min = div_up(32, tx);                      /* a warp a block at the least */
    size_t ty = 256 / tx;
    if (ty * want > nrows) ty = nrows / want > ty_min ? nrows / want : ty_min;
    /* whole warps where a multiple of 32 threads is near (tx a divisor of
     * 32: 17 rows of 8 lanes would leave a warp with 8 threads) */
    const size_t wq = 32 / gcd32(tx);
    if (ty >= wq) ty -= ty % wq;
    while (ty == 1 && tx > 32 && div_up(chunks, tx) * nrows < target) tx = div_up(tx, 2) > 32 ? div_up(tx, 2) : 32;
    *tx_out = tx, *ty_out = ty;
}

/* Over a row-broadcast input: rows a thread at the least (each a store of
 * the row read once). H200, f16 64x197x768 broadcast along dimension 1
 * (rows of 96 vectors, 5 a block): 3 rows a thread 8.3 us, 5 7.5 (compile
 * 6.8; 10.3 with the former 2 rows and power-of-two lanes); bf16
 * 3571x7814 broadcast along dimension 0: 4 rows a thread 21.2 us, 7 23.6,
 * 14 25.4 (one wave of blocks): a minimum, not the one-wave grid
 * (bench/NOTES.md, session 19). */
#define ROWS_BCAST_REUSE 4
static infiniopCudaEltLaunch plan_rows(const infiniopEltLayout &L, size_t es, unsigned w, bool in1,
                                       const infiniopCudaProps &p, const infiniopCudaEltKnobs &kn) {
    infiniopCudaEltLaunch l = {};
    l.kernel = INFINIOP_CUDA_ELT_ROWS;
    l.vec = w;
    l.in1 = in1;
    const size_t ncols = L.shape[L.ndim - 1], nrows = L.n / ncols, chunks = ncols / w;
    const size_t resident = (size_t)p.sm_count * (size_t)p.max_threads_per_sm;
    size_t tx, ty, bx, gy, R = 1;
    if (nrows * chunks < 2 * resident) { /* latency-bound: one access a thread, spread */
        l.items = 1;
        /* rows a block and lanes (spread_threads' rule): of
         * rows_spread's shapes for grids of a quarter of the SMs up, the
         * one of most blocks while every SM has one at the most; else
         * the shape for two blocks an SM */
        const size_t S = p.sm_count;
        size_t best = 0;
        for (size_t target = div_up(S, 4); !kn.spread_pct && target <= S; target *= 2) {
            size_t x, y;
            rows_spread(chunks, nrows, target, &x, &y);
            const size_t blocks = div_up(chunks, x) * div_up(nrows, y);
            if (blocks <= S && blocks > best) best = blocks, tx = x, ty = y;
        }
        if (!best) rows_spread(chunks, nrows, kn.spread_pct ? div_up(S * kn.spread_pct, 100) : 2 * S, &tx, &ty);
        bx = div_up(chunks, tx), gy = div_up(nrows, ty);
        /* An input broadcast along the rows (fewer distinct input rows
         * than rows) of 4- and 8-byte elements, whose exact formulas
         * are issue-bound: a thread computes its value once and stores
         * it to R rows (the kernel reuses a row whose input offset
         * repeats), R such that the grid keeps a block row an SM: the
         * computation shrinks R-fold, the stores stay. The 2-byte types'
         * formula is a few instructions, and there R rows a thread
         * only took parallel stores away. (H200: sigmoid f64 1567x75
         * broadcast along the rows 2.27 -> 1.66 us with both rules, silu
         * f64 7263x138 8.85 -> 4.30; silu bf16 4x13x40x18 bcast:2 1.46 ->
         * 1.86 with R = 2; bench/NOTES.md.) */
        if (es >= 4 && bcast_rows(L) && gy > (size_t)p.sm_count) {
            R = gy / (size_t)p.sm_count;
            gy = div_up(nrows, R * ty);
        }
    } else {
        /* Lanes along a row: the row's chunks at `items` a thread over as
         * few blocks as 256 threads allow, each lane a whole share (any
         * count: the kernel has no warp-wide steps; a power of two left
         * lanes idle, 32 of 64 for rows of 96 16-byte chunks). */
        const size_t items = rows_items(w * (unsigned)es);
        l.items = chunks <= 1 ? 1u : (unsigned)items; /* the kernels: 1 or the full count */
        if (kn.rows_pow2) { /* experiment: the former power-of-two lanes */
            tx = pow2_at_least(div_up(chunks, items), 256);
            bx = div_up(chunks, tx * l.items);
        } else {
            bx = div_up(chunks, 256 * (size_t)l.items);
            tx = div_up(chunks, (size_t)l.items * bx);
        }
        ty = 256 / tx;
        /* Rows a thread, each thread looping over its rows: a grid of about
         * two waves of 256-thread blocks at 8 a multiprocessor. Over an
         * input broadcast along the rows, at least ROWS_BCAST_REUSE rows a
         * thread while the grid still gives every multiprocessor
         * ROWS_BLOCKS_PER_SM blocks (the launch bounds' guarantee): a
         * thread reads its repeated input row once (an L2 round trip that
         * its stores wait for) and stores it to that many rows. */
        const size_t gmax = div_up(nrows, ty);
        R = rows_a_thread(2 * (size_t)p.sm_count * (size_t)(p.max_threads_per_sm / 256), bx, gmax, nrows, ty);
        if (bcast_rows(L)) {
            const size_t r1 = rows_a_thread((size_t)p.sm_count * ROWS_BLOCKS_PER_SM, bx, gmax, nrows, ty);
            const size_t reuse = kn.rows_reuse ? kn.rows_reuse : ROWS_BCAST_REUSE;
            const size_t cap = r1 > R ? r1 : R; /* the one-wave grid's rows a thread */
            if (R < reuse) R = reuse < cap ? reuse : cap;
        }
        gy = div_up(nrows, R * ty);
        /* Two rows a step (the kernel's PAIR: 64 bytes in flight a
         * thread) where a thread has two rows, no input row repeats and
         * both tensors take 16-byte accesses (narrower ones hold an
         * element a register: two rows of them spilled, 24-248 bytes) */
        l.pair = l.items > 1 && R >= 2 && !bcast_any(L) && !in1 && w * es == 16 && !kn.rows_single;
    }
    l.lanes = (unsigned)tx;
    l.threads = (unsigned)(tx * ty);
    l.rows = (unsigned)R;
    l.grid[0] = (unsigned)bx;
    l.grid[1] = (unsigned)gy;
    l.grid[2] = 1;
    return l;
}

/* ROWS: the widest access (elements, a power of two, at most wmax)
 * dividing the row length and every row stride of a tensor (strides). */
static unsigned rows_width(const infiniopEltLayout &L, const ptrdiff_t *strides, unsigned wmax) {
    const int q = L.ndim - 1;
    unsigned w = wmax;
    for (; w > 1; w /= 2) {
        bool ok = L.shape[q] % w == 0;
        for (int d = 0; d < q && ok; ++d) ok = strides[d] % (ptrdiff_t)w == 0;
        if (ok) break;
    }
    return w;
}
/* Planes of the transposing kernels: the extents other than p and q. */
static size_t nb_planes(const infiniopEltLayout &L, int tp) { return L.n / (L.shape[tp] * L.shape[L.ndim - 1]); }
static infiniopCudaEltLaunch plan_transpose(const infiniopEltLayout &L, int tp, size_t tq) {
    infiniopCudaEltLaunch l = {};
    const int q = L.ndim - 1;
    const size_t nb = nb_planes(L, tp);
    l.kernel = INFINIOP_CUDA_ELT_TRANSPOSE_TILE;
    l.threads = 256;
    l.vec = 1;
    l.items = (unsigned)(tq / 8); /* elements a thread, 8 (64 along q) or 4 (32) */
    l.grid[0] = (unsigned)div_up(L.shape[q], tq);
    l.grid[1] = (unsigned)div_up(L.shape[tp], TILE_P);
    l.grid[2] = (unsigned)(nb < 65535 ? nb : 65535);
    return l;
}

/* TRANSPOSE_VEC's block (the kernel's comment): a thread a V x V block;
 * tile_wp, the warps along p, the fewest (a power of two, at most 4 and
 * at most the block's warps) whose 4 V-row strips cover the p extent, so
 * that a narrow one leaves no warps idle (f32 28 x 34660 permuted: 4 warps
 * along p covered 64 rows, 28 of them used; 2 cover 32); threads: 256, or
 * where the tensor's V x V blocks, one a thread, are under two waves of
 * the GPU's resident threads (latency-bound: every round trip in flight
 * at once), infiniop_cuda_spread_block's rule over the tile count (one
 * block an SM at the most where a block size gives it: bf16 1000 x 1000
 * took 64 blocks of 256 threads, on 64 SMs; 128 blocks of 128 use 128).
 * fixed (an experiment's knob): 256 threads, 4 warps along p, as before
 * session 28. */
static infiniopCudaEltLaunch plan_transpose_vec(const infiniopEltLayout &L, int tp, size_t es,
                                                const infiniopCudaProps &p, bool fixed) {
    infiniopCudaEltLaunch l = {};
    const int q = L.ndim - 1;
    const size_t nb = nb_planes(L, tp), V = 16 / es, gz = nb < 65535 ? nb : 65535;
    auto wp_of = [&](unsigned t) {
        if (fixed) return 4u;
        unsigned wp = 1;
        while (wp < 4 && wp < t / 32 && wp * 4 * V < L.shape[tp]) wp *= 2;
        return wp;
    };
    auto grid_of = [&](unsigned t, size_t *gx, size_t *gy) {
        const unsigned wp = wp_of(t);
        *gx = div_up(L.shape[q], (size_t)(t / 32 / wp) * 8 * V);
        *gy = div_up(L.shape[tp], (size_t)wp * 4 * V);
    };
    const size_t resident = (size_t)p.sm_count * (size_t)p.max_threads_per_sm;
    unsigned t = 256;
    if (!fixed && L.n / (V * V) < 2 * resident)
        t = infiniop_cuda_spread_block(256, (size_t)p.sm_count, 0, [&](unsigned u) {
            size_t gx, gy;
            grid_of(u, &gx, &gy);
            return gx * gy * gz;
        });
    size_t gx, gy;
    grid_of(t, &gx, &gy);
    if (gy > 65535) t = 256, grid_of(t, &gx, &gy); /* (4 warps along p: the p tiles of TILE_P or more rows) */
    l.kernel = INFINIOP_CUDA_ELT_TRANSPOSE_VEC;
    l.threads = t;
    l.vec = (unsigned)V;
    l.items = 1;
    l.tile_wp = wp_of(t);
    l.grid[0] = (unsigned)gx;
    l.grid[1] = (unsigned)gy;
    l.grid[2] = (unsigned)gz;
    return l;
}

extern "C" infiniStatus_t infiniop_unary_cuda_plan(infiniopUnaryInfo *info, int device_id) {
    infiniopCudaProps p;
    infiniStatus_t st = infiniop_cuda_device_props(device_id, &p);
    if (st != INFINI_STATUS_SUCCESS) return st;
    const infiniopEltLayout &L = info->layout;
    const size_t es = infiniop_dtype_size(info->dtype), n = L.n;
    infiniopCudaEltKnobs kn = {};
#ifdef INFINIOP_CUDA_EXPERIMENTS
    infiniop_cuda_experiment_elt_knobs(&kn);
#endif
    infiniopCudaEltPlan P = {};
    P.tile_p = -1;
    P.pdl = infiniop_cuda_pdl(p);
    const int q = L.ndim - 1;
    if (n == 0) { /* nothing runs (the run call returns first) */
        P.aligned = P.unaligned = plan_scalar(INFINIOP_CUDA_ELT_STRIDED, 1, p, 32, 0);
    } else if (L.contiguous) { /* VEC, fallback FLAT */
        /* VEC needs a whole vector: under one (a 0-d tensor, a few
         * elements) its thread would run the filler lanes' chain before the
         * tail's (0-d float32 silu took 0.90 us, 0.72 before the filler
         * lanes came; bench/NOTES.md); FLAT computes the elements alone */
        const bool vec = n >= 16 / es;
        P.unaligned = plan_scalar(INFINIOP_CUDA_ELT_FLAT, n, p, 128, kn.spread_pct);
        P.aligned = vec ? plan_vec(n, es, p, kn) : P.unaligned;
        P.align = vec ? 16 : 0;
    } else if (L.ndim >= 2 && L.out_stride[q] == 1 && L.shape[q] >= 16 &&
               (size_t)(L.in_stride[q] < 0 ? -L.in_stride[q] : L.in_stride[q]) * es < 32) {
        /* ROWS: the output's last dimension has unit stride, the input's
         * a stride of under a 32-byte sector (1; 0, a broadcast; 2 or 3,
         * a step slice): a row's consecutive elements share sectors, so
         * reading along the rows uses what a tiled transpose would.
         * w_out / w_in: the widest access (elements, a power of two, at
         * most 16 bytes) dividing the row length and every row stride of
         * the output / the input (an input of column stride other than 1:
         * one element). Equal widths: both tensors by w; an input of one
         * element with a wider output: in1 (the input element by element,
         * the output still by vectors: only the output pointer need be
         * aligned); otherwise both by the narrower. */
        const unsigned wmax = (unsigned)(16 / es);
        const unsigned w_out = rows_width(L, L.out_stride, wmax);
        const unsigned w_in = L.in_stride[q] == 1 ? rows_width(L, L.in_stride, wmax) : 1;
        const bool in1 = w_in == 1 && (w_out > 1 || L.in_stride[q] != 1);
        const unsigned w = in1 ? w_out : w_in < w_out ? w_in : w_out;
        P.aligned = plan_rows(L, es, w, in1, p, kn);
        P.unaligned = w > 1 ? plan_rows(L, es, 1, in1, p, kn) : P.aligned;
        P.align = w > 1 ? w * (unsigned)es : 0;
        P.align_out = in1;
    } else {
        /* TRANSPOSE_*: the output's last dimension has unit stride, the
         * input's does not, and another dimension p has the input's unit
         * stride; tiles of 64 (16 V with vectors) along both (grid y holds
         * the p tiles) */
        if (L.ndim >= 2 && L.out_stride[q] == 1 && L.in_stride[q] != 1 && L.shape[q] >= 8) {
            for (int d = 0; d < q; ++d)
                if (L.in_stride[d] == 1 && L.shape[d] >= 8 && div_up(L.shape[d], TILE_P) <= 65535) {
                    P.tile_p = d;
                    break;
                }
        }
        if (P.tile_p >= 0) {
            /* 16-byte vectors on both sides: the extents along p and q and
             * every other dimension's strides (in elements) multiples of V */
            const int tp = P.tile_p;
            const size_t V = 16 / es;
            bool ok = L.shape[tp] % V == 0 && L.shape[q] % V == 0;
            for (int d = 0; d < L.ndim && ok; ++d) {
                if (d != q && L.out_stride[d] % (ptrdiff_t)V != 0) ok = false;
                if (d != tp && L.in_stride[d] % (ptrdiff_t)V != 0) ok = false;
            }
            /* Tensors of two waves of one element a thread or more (the
             * latency-bound limit of plan_vec and plan_rows): the vector
             * tiles where allowed, else the scalar tiles; below, the
             * scalar tiles or STRIDED (one element a thread, every load
             * in flight at once), by the rules below. The scalar tile's
             * edge along q is 32 where the 64-wide tiles would fill under
             * two waves of blocks (more, smaller blocks for the SMs) and
             * the 32-wide q tiles are at least 3/4 full (q = 33 would
             * leave every other block one column: 64), else 64. Under two
             * waves, the tiles where they are at least half full and the
             * elements are of 2 or 4 bytes, or of 8 bytes in 32-wide tiles
             * that give half the SMs a block; else STRIDED. STRIDED reads
             * a 32-byte sector for each element (16x the bytes at 2-byte
             * elements, 4x at 8); a mostly empty tile pays a block for
             * little work. Measured on 39 shapes of 544 to 161 M elements
             * (H100, the library forced to each launch in one process):
             * this rule's launch within 1.006x of the fastest in
             * geometric mean, 1.07x at worst (bench/NOTES.md, "odd-extent
             * transposes", run 13). */
            const size_t resident = (size_t)p.sm_count * (size_t)p.max_threads_per_sm;
            const size_t per_sm = TILE_BLOCKS_PER_SM(es);
            const size_t nb = nb_planes(L, tp), Q = L.shape[q];
            const infiniopCudaEltLaunch t64 = plan_transpose(L, tp, TILE_Q);
            size_t tq = TILE_Q;
            if ((size_t)t64.grid[0] * t64.grid[1] * nb < 2 * per_sm * (size_t)p.sm_count &&
                4 * Q >= 3 * div_up(Q, TILE_Q_SMALL) * TILE_Q_SMALL)
                tq = TILE_Q_SMALL;
            if (kn.tile_q) tq = kn.tile_q;
            infiniopCudaEltLaunch tv = plan_transpose_vec(L, tp, es, p, kn.tv_fixed),
                                  tt = plan_transpose(L, tp, tq);
            infiniopCudaEltLaunch st = plan_scalar(INFINIOP_CUDA_ELT_STRIDED, n, p, 256, kn.spread_pct);
            const size_t tiles = (size_t)tt.grid[0] * tt.grid[1] * nb;
            const bool small_tiles = 2 * n >= tiles * (size_t)TILE_P * tq &&
                                     (es <= 4 || (tq == TILE_Q_SMALL && 2 * tiles >= (size_t)p.sm_count));
            /* Where both kernels may run, the scalar tiles rather than the
             * vector kernel for 4-byte elements in one plane whose V x V
             * blocks (the vector kernel's threads) fill under half of the
             * GPU's resident threads, with p tiles at least 3/4 full: the
             * tiles' 4 or 8 elements a thread give such a tensor 2-4x the
             * threads, each with a shorter chain. Not at 2 bytes (the
             * scalar tiles then move 2 bytes an access and were level or
             * slower everywhere), nor at 8 (V = 2: the vector kernel's n / 4
             * threads already fill the GPU wherever it runs), nor over
             * several planes (the tiles' plane loop and offsets), nor with
             * p tiles mostly empty (p = 16: 1.29x slower). Measured on an
             * H200 over 36 two-dimensional float32 transposes of 1.2 M
             * and 4.8 M elements, p from 8 to 2048: where the rule takes
             * the tiles, 0.76-0.95x the vector kernel's time (silu f32
             * 96x12500 6.22 -> 4.72 us, 28x42860 5.93 -> 4.91); at 4.8 M
             * (1.1 waves of blocks) the tiles were up to 1.30x slower
             * (bench/NOTES.md, session 29). */
            const size_t pe = L.shape[tp];
            const bool tiles_first = es == 4 && nb == 1 && 2 * (n / (V * V)) < resident &&
                                     4 * pe >= 3 * div_up(pe, TILE_P) * TILE_P;
            int pick = n >= 2 * resident ? (ok && !tiles_first ? 0 : 1) : small_tiles ? 1 : 2;
            if (kn.view) pick = kn.view == 1 && !ok ? 1 : (int)kn.view - 1;
            P.aligned = pick == 0 ? tv : pick == 1 ? tt : st;
            P.unaligned = pick == 2 ? st : tt;
            P.align = pick == 0 ? 16 : 0;
            P.planes = nb;
            if (pick == 2) P.tile_p = -1;
        } else {
            P.aligned = P.unaligned = plan_scalar(INFINIOP_CUDA_ELT_STRIDED, n, p, 256, kn.spread_pct);
            P.align = 0;
        }
    }
    /* GATHER in place of a kernel that would not write the dense output by
     * whole 16-byte vectors: STRIDED (one element a thread and a store),
     * and ROWS narrower than a vector whose input repeats nowhere, or,
     * over a repeating (broadcast) input, whose lanes along a row cover
     * under a 32-byte sector per warp access (lanes x access width):
     * a broadcast input is otherwise ROWS's strength (it reads or computes
     * a repeated row, or a broadcast last dimension's value, once), but a
     * warp whose accesses each touch more rows than sectors' worth of
     * bytes (bf16 rows of 27 at 2 lanes x 16 elements: 16 rows, 4 bytes of
     * each) moves a sector for every few bytes. H200, the 59 broadcast
     * cases of the sweep's seeds 0-40 that GATHER could take: GATHER
     * 0.40-0.90x the time at segments of 4-16 bytes (sigmoid bf16
     * 317x7x113x27 broadcast along the last dimension 40.0 -> 15.9 us,
     * bf16 54679x115 along the rows 20.8 -> 12.9), 1.02x at one (f32
     * 22107x27, 16 bytes), and 1.08x slower in geometric mean over the
     * rest, up to 2.0x (bench/NOTES.md, session 29). Only where its
     * V-element threads give every SM 8 warps or more: under that the
     * replaced kernels' V times more threads hide the latency better
     * (H200: 23 K f32 vectors, 5.5 warps an SM, 1.5x slower in GATHER;
     * 52 K bf16 vectors, 12.4 warps, 1.26x faster; bench/NOTES.md). The
     * transposing kernels stay (they read the input by whole sectors along
     * its unit stride). The replaced kernel is the fallback for an
     * unaligned output. kn.gather_bcast (an experiment's knob): 1 every
     * narrow ROWS over a broadcast input, 2 none (before session 29). */
    const infiniopCudaEltLaunch &a = P.aligned;
    const size_t V = 16 / es;
    const bool narrow_seg = kn.gather_bcast == 1 || (kn.gather_bcast == 0 && (size_t)a.lanes * a.vec * es < 32);
    if (n > 0 && !L.contiguous && L.out_contiguous && n < ((size_t)1 << 31) &&
        div_up(n, V) >= 8 * 32 * (size_t)p.sm_count &&
        (a.kernel == INFINIOP_CUDA_ELT_STRIDED ||
         (a.kernel == INFINIOP_CUDA_ELT_ROWS && a.vec < V && (!bcast_any(L) || narrow_seg)))) {
        const infiniopCudaEltLaunch fallback = P.align ? P.unaligned : P.aligned;
        P.aligned = plan_gather(n, es, p, kn.spread_pct);
        P.unaligned = fallback;
        P.align = 16;
        P.align_out = true;
    }
    info->cuda = P;
    return INFINI_STATUS_SUCCESS;
}

static const char *elt_kernel_name(infiniopCudaEltKernel k) {
    switch (k) {
    case INFINIOP_CUDA_ELT_VEC: return "vec";
    case INFINIOP_CUDA_ELT_FLAT: return "flat";
    case INFINIOP_CUDA_ELT_ROWS: return "rows";
    case INFINIOP_CUDA_ELT_TRANSPOSE_VEC: return "transpose-vec";
    case INFINIOP_CUDA_ELT_TRANSPOSE_TILE: return "transpose-tile";
    case INFINIOP_CUDA_ELT_STRIDED: return "strided";
    case INFINIOP_CUDA_ELT_GATHER: return "gather";
    }
    return "?";
}

static int describe_launch(const infiniopCudaEltLaunch &l, int tile_p, char *b, size_t n) {
    int k = snprintf(b, n, "%s threads=%u grid=%u,%u,%u", elt_kernel_name(l.kernel), l.threads, l.grid[0], l.grid[1],
                     l.grid[2]);
    if (k < 0 || (size_t)k >= n) return k;
    int m = 0;
    switch (l.kernel) {
    case INFINIOP_CUDA_ELT_VEC:
        m = snprintf(b + k, n - k, " vec=%u items=%u%s", l.vec, l.items, l.once ? " evict-first" : "");
        break;
    case INFINIOP_CUDA_ELT_GATHER: m = snprintf(b + k, n - k, " vec=%u items=%u", l.vec, l.items); break;
    case INFINIOP_CUDA_ELT_ROWS:
        m = snprintf(b + k, n - k, " block=%ux%u vec=%u items=%u rows=%u%s%s", l.lanes, l.threads / l.lanes, l.vec,
                     l.items, l.rows, l.pair ? " pair" : "", l.in1 ? " input=elem" : "");
        break;
    case INFINIOP_CUDA_ELT_TRANSPOSE_VEC: m = snprintf(b + k, n - k, " p=%d warps-p=%u", tile_p, l.tile_wp); break;
    case INFINIOP_CUDA_ELT_TRANSPOSE_TILE: m = snprintf(b + k, n - k, " p=%d", tile_p); break;
    case INFINIOP_CUDA_ELT_STRIDED: m = snprintf(b + k, n - k, "%s", l.idx64 ? " idx64" : ""); break;
    default: break;
    }
    return m < 0 ? m : k + m;
}

extern "C" void infiniop_cuda_elt_plan_text(const infiniopCudaEltPlan *plan, char *buf, size_t n) {
    if (!n) return;
    buf[0] = 0;
    int k = describe_launch(plan->aligned, plan->tile_p, buf, n);
    if (k >= 0 && (size_t)k < n && plan->align) {
        int m = snprintf(buf + k, n - k, " (%s not %u-byte aligned: ", plan->align_out ? "output" : "pointers",
                         plan->align);
        if (m >= 0 && (size_t)(k + m) < n) {
            k += m;
            m = describe_launch(plan->unaligned, plan->tile_p, buf + k, n - k);
            if (m >= 0 && (size_t)(k + m) < n) k += m, k += snprintf(buf + k, n - k, ")");
        }
    }
    if (k >= 0 && (size_t)k < n && plan->pdl) snprintf(buf + k, n - k, " pdl");
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
