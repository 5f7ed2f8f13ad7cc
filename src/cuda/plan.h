/*
 * cuda/plan.h - launch plans of the NVIDIA backend, chosen once when an
 * operator descriptor is created (infiniop_<op>_cuda_plan) and stored in the
 * operator's info struct, so that the run call only launches.
 *
 * Plain C: the info structs that hold these are shared with the C code. On
 * builds without CUDA the fields exist but stay zero.
 */
#ifndef INFINIOP_CUDA_PLAN_H
#define INFINIOP_CUDA_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How the row-wise operators (add_rms_norm, layer_norm, causal_softmax)
 * map rows to threads. */
typedef enum {
    INFINIOP_CUDA_ROW_WARP = 0,  /* one warp per row, several rows per block (short rows) */
    INFINIOP_CUDA_ROW_BLOCK = 1, /* one block per row */
} infiniopCudaRowMode;

typedef struct {
    infiniopCudaRowMode mode;
    unsigned threads;        /* threads per block */
    unsigned rows_per_block; /* 1 in block mode, threads / 32 in warp mode */
    unsigned grid;           /* blocks; kernels loop over the rows (grid-stride) */
    size_t smem;             /* dynamic shared memory: rows_per_block * ncols floats when the row is
                                cached between passes; 0: every pass streams from global memory */
    bool vec;                /* layouts allow 16-byte vectors (unit column stride, ncols and every
                                row stride a multiple of 16 bytes); pointers are checked at run */
    bool w_vec, b_vec;       /* weight / bias have unit stride (16-byte loads if the pointer allows) */
    bool pdl;                /* launch with programmatic stream serialization (cuda/common.cuh) */
    /* The register path (16-byte layouts and pointers only): each thread
     * holds `reg_items` vectors of the row in registers, so the row is read
     * from global memory once and every phase reuses it. reg_items == 0: off
     * (the fields above are used). */
    unsigned reg_items;      /* vectors per thread: 1, 2 or 4; 8 in the warp form (INFINIOP_CUDA_REG_WARP8) */
    unsigned reg_lanes;      /* 1..32 (power of two): threads per row, rows packed into warps;
                                0: a whole block per row, or a cluster of blocks */
    unsigned reg_cluster;    /* blocks per row when reg_lanes == 0: 1, or 2..8 (a thread-block cluster) */
    unsigned reg_threads;    /* threads per block */
    unsigned reg_grid;       /* blocks (a multiple of reg_cluster); kernels loop over the rows */
    unsigned reg_prefetch;   /* > 0: each group prefetches into L2 the input row this many rows ahead */
    bool reg_latency;        /* fewer rows than multiprocessors (decode shapes): latency is all, so
                                kernels load every operand in the first round trip */
} infiniopCudaRowPlan;

/* Elementwise operators (silu, sigmoid). */
typedef struct {
    unsigned threads; /* threads per block */
    unsigned grid;    /* blocks; grid-stride loop over the elements (the contiguous path: blocks of
                         threads x UNROLL 16-byte vectors) */
    int tile_p;       /* >= 0: the transposing path (blocks transposed in registers, or a shared-memory
                         tile without 16-byte vectors) over dimensions tile_p (the
                         input's unit-stride one) and ndim - 1 (the output's); -1: off */
    unsigned unroll;  /* the contiguous 16-byte path: vectors a thread (2, 4 or 8) */
    bool tile_vec;    /* the transposing path may use 16-byte vectors (extents and strides allow;
                         pointers are checked at run) */
    bool pdl;         /* launch with programmatic stream serialization (cuda/common.cuh) */
} infiniopCudaEltPlan;

#ifdef __cplusplus
}
#endif

#endif /* INFINIOP_CUDA_PLAN_H */
