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
} infiniopCudaRowPlan;

/* Elementwise operators (silu, sigmoid). */
typedef struct {
    unsigned threads; /* threads per block */
    unsigned grid;    /* blocks; grid-stride loop over the elements */
} infiniopCudaEltPlan;

#ifdef __cplusplus
}
#endif

#endif /* INFINIOP_CUDA_PLAN_H */
