/*
 * core/layout.h - layouts folded at descriptor creation into plain structs
 * that kernels take by value (no pointers, no allocation).
 *
 * Row layout: the row-wise operators (norms, softmax) see tensors of shape
 * [rows..., N]. The row dimensions are merged where every tensor allows it
 * (dimension j folds into j+1 when stride[j] == stride[j+1] * shape[j+1] for
 * all tensors) and dimensions of length 1 dropped, so most calls become one
 * row dimension with one row stride per tensor. Row r (row-major over the
 * row dimensions) starts at element row_offset(L, t, r) of tensor t.
 *
 * Elementwise layout: output and input dimensions (input broadcast to the
 * output's shape, broadcast dimensions given stride 0) are sorted by the
 * output's strides and coalesced; the common contiguous case becomes one
 * dimension of stride 1 for both.
 */
#ifndef INFINIOP_CORE_LAYOUT_H
#define INFINIOP_CORE_LAYOUT_H

#include "common.h"

#if defined(__CUDACC__)
#define INFINIOP_HD __host__ __device__ __forceinline__
#else
#define INFINIOP_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define INFINIOP_MAX_ROW_TENSORS 4

/* Division of 32-bit values by a fixed divisor n (1 <= n < 2^32) as a
 * multiply-high and a shift (the round-up method of Granlund and
 * Montgomery, "Division by invariant integers using multiplication",
 * 1994): with shift = ceil(log2 n) and mul = floor(2^32 (2^shift - n) / n)
 * + 1, u / n = (umulhi(u, mul) + u) >> shift for every 32-bit u, the sum
 * taken in 64 bits. Built on the host at descriptor creation; a GPU
 * kernel's 32-bit division by a runtime value is a subroutine of about 25
 * instructions, this one 3 (tests/test_layout.c checks it against u / n). */
typedef struct {
    uint32_t mul;
    uint32_t shift;
} infiniopDiv32;

INFINIOP_HD infiniopDiv32 infiniop_div32_init(uint32_t n) {
    infiniopDiv32 d;
    uint32_t s = 0;
    while (s < 32 && ((uint64_t)1 << s) < n) ++s;
    d.shift = s;
    d.mul = (uint32_t)((((uint64_t)1 << 32) * (((uint64_t)1 << s) - n)) / n + 1);
    return d;
}

INFINIOP_HD uint32_t infiniop_div32(uint32_t u, infiniopDiv32 d) {
#if defined(__CUDA_ARCH__)
    const uint64_t hi = __umulhi(u, d.mul);
#else
    const uint64_t hi = ((uint64_t)u * d.mul) >> 32;
#endif
    return (uint32_t)((hi + u) >> d.shift);
}

/* Field order matters to the GPU kernels, which take the struct by value
 * (kernel parameters live in constant memory, and each constant-cache line
 * a kernel touches first costs a miss that stalls the warp): what a kernel
 * reads on the common path (nrows, ncols, inv_ncols, ndims and each
 * tensor's stride of the first row dimension, stride[0][t]) lies in the
 * first 56 bytes. (With inv_ncols at the end of the struct, ~600 bytes
 * on, small add_rms_norm and layer_norm calls ran 4-8% slower on an H200,
 * as a constant-cache line more a warp would make them; computed in each
 * kernel's prologue instead, it is a register held through the row loop,
 * which 12 of layer_norm's 64-register instances spilled; session 30,
 * bench/NOTES.md.) */
typedef struct {
    size_t nrows;                /* product of the row dimensions */
    size_t ncols;                /* N, the length of each row */
    float inv_ncols;             /* 1 / ncols rounded to float32 (as 1.0f / (float)ncols); 0 for no columns */
    int ndims;                   /* merged row dimensions (0: at most one row) */
    ptrdiff_t stride[INFINIOP_MAX_DIMS][INFINIOP_MAX_ROW_TENSORS]; /* [dimension][tensor] */
    ptrdiff_t col_stride[INFINIOP_MAX_ROW_TENSORS]; /* 0 for rows-only tensors */
    size_t shape[INFINIOP_MAX_DIMS];
    infiniopDiv32 div[INFINIOP_MAX_DIMS]; /* division by shape[d] where nrows < 2^32 (row_off, cuda/common.cuh) */
} infiniopRowLayout;

/* Build a row layout. row_shape has nrowdims entries; row_strides[t] points
 * to tensor t's strides of those dimensions; col_strides[t] is its stride
 * along the row (0 for a tensor that has one value per row, like layer
 * norm's std). BAD_TENSOR_SHAPE (with op in the message) when more than
 * INFINIOP_MAX_DIMS row dimensions stay after merging. */
infiniStatus_t infiniop_row_layout_init(infiniopRowLayout *L, const char *op,
                                        size_t nrowdims, const size_t *row_shape, size_t ncols,
                                        int ntensors, const ptrdiff_t *const *row_strides,
                                        const ptrdiff_t *col_strides);

/* Element offset of row r of tensor t. */
INFINIOP_HD ptrdiff_t infiniop_row_offset(const infiniopRowLayout *L, int t, size_t r) {
    ptrdiff_t off = 0;
    for (int d = L->ndims - 1; d >= 0; --d) {
        size_t n = L->shape[d];
        off += (ptrdiff_t)(r % n) * L->stride[d][t];
        r /= n;
    }
    return off;
}

/* The same for a row r < 2^32 of a layout whose row count fits 32 bits:
 * each merged dimension's quotient by its 32-bit divisor (div), none for
 * the outermost dimension (r < nrows: its index is the last quotient).
 * The GPU kernels' form (row_off, cuda/common.cuh). */
INFINIOP_HD ptrdiff_t infiniop_row_offset32(const infiniopRowLayout *L, int t, uint32_t r) {
    ptrdiff_t off = 0;
    for (int d = L->ndims - 1; d > 0; --d) {
        const uint32_t q = infiniop_div32(r, L->div[d]);
        off += (ptrdiff_t)(r - q * (uint32_t)L->shape[d]) * L->stride[d][t];
        r = q;
    }
    return off + (ptrdiff_t)r * L->stride[0][t];
}

typedef struct {
    size_t n;                    /* number of output elements */
    int ndim;                    /* coalesced dimensions */
    size_t shape[INFINIOP_MAX_DIMS];
    ptrdiff_t out_stride[INFINIOP_MAX_DIMS];
    ptrdiff_t in_stride[INFINIOP_MAX_DIMS];
    bool contiguous;             /* both are one dense run of n elements */
    bool out_contiguous;         /* the output alone is one dense run */
} infiniopEltLayout;

/* Build an elementwise layout for out = f(in) where in's shape broadcasts to
 * out's. BAD_TENSOR_SHAPE when it does not broadcast or too many dimensions
 * stay after coalescing. */
infiniStatus_t infiniop_elt_layout_init(infiniopEltLayout *L, const char *op,
                                        const char *out_name, infiniopTensorDescriptor_t out,
                                        const char *in_name, infiniopTensorDescriptor_t in);

/* Offsets of linear element i (row-major over the coalesced shape). */
INFINIOP_HD void infiniop_elt_offsets(const infiniopEltLayout *L, size_t i, ptrdiff_t *out_off, ptrdiff_t *in_off) {
    ptrdiff_t o = 0, x = 0;
    for (int d = L->ndim - 1; d >= 0; --d) {
        size_t n = L->shape[d];
        size_t k = i % n;
        i /= n;
        o += (ptrdiff_t)k * L->out_stride[d];
        x += (ptrdiff_t)k * L->in_stride[d];
    }
    *out_off = o;
    *in_off = x;
}

#ifdef __cplusplus
}
#endif

#endif /* INFINIOP_CORE_LAYOUT_H */
