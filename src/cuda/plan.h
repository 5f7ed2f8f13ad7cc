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

/* Elementwise operators (silu, sigmoid): which kernel runs, in the order
 * infiniop_unary_cuda_plan (ops/unary/cuda.cu) tries them; the first whose
 * rule holds on the folded layout (core/layout.h) is the plan:
 *   VEC        both tensors one dense run: `vec`-element (16-byte) vectors,
 *              `items` a thread, every load before the first store, one
 *              pass (no grid-stride loop); needs 16-byte aligned pointers;
 *   FLAT       both one dense run, any alignment: one element a thread
 *              (grid-stride loop); VEC's fallback;
 *   ROWS       the last dimension has unit stride on both sides, the others
 *              anything (padded rows, broadcast rows of stride 0, a
 *              permutation that keeps the last dimension): `lanes`
 *              threads along a row by threads / lanes rows, each thread
 *              `items` accesses a row over `rows` rows, `vec` the widest
 *              access (16, 8, 4 bytes or one element) that the row length
 *              and every row stride allow;
 *              a row whose input is the previous row's (a broadcast) is
 *              stored again from registers, not re-read or recomputed;
 *              needs both pointers aligned to the access width; its
 *              fallback is ROWS with vec = 1;
 *   TRANSPOSE_VEC  the output's last dimension has unit stride and the
 *              input's unit stride is on another dimension p (`tile_p`):
 *              each thread transposes a V x V block of 16-byte vectors in
 *              registers; needs both extents and the other strides to be
 *              multiples of V and 16-byte aligned pointers; fallback
 *              TRANSPOSE_TILE;
 *   TRANSPOSE_TILE the same layouts, any extents and alignment: 64 x 64
 *              tiles through shared memory (both tiled kernels only for
 *              tensors of two waves of one element a thread or more;
 *              smaller ones take STRIDED);
 *   STRIDED    anything else: one element a thread, offsets from the
 *              coalesced shape (grid-stride loop).
 * docs/PERFORMANCE.md ("Elementwise plan") gives the launch-shape rules. */
typedef enum {
    INFINIOP_CUDA_ELT_VEC = 0,
    INFINIOP_CUDA_ELT_FLAT = 1,
    INFINIOP_CUDA_ELT_ROWS = 2,
    INFINIOP_CUDA_ELT_TRANSPOSE_VEC = 3,
    INFINIOP_CUDA_ELT_TRANSPOSE_TILE = 4,
    INFINIOP_CUDA_ELT_STRIDED = 5,
} infiniopCudaEltKernel;

/* One kernel and its launch parameters. */
typedef struct {
    infiniopCudaEltKernel kernel;
    unsigned threads;  /* threads per block */
    unsigned grid[3];  /* blocks along x, y, z */
    unsigned vec;      /* elements per access (VEC, ROWS); 1 otherwise */
    unsigned items;    /* accesses a thread issues before its first store (VEC, ROWS) */
    unsigned lanes;    /* ROWS: threads along a row (blockDim.x); threads / lanes rows at once */
    unsigned rows;     /* ROWS: rows each thread loops over */
    bool idx64;        /* STRIDED: 64-bit element indices (more than 2^31 elements) */
    bool once;         /* VEC: evict-first cache hints (tensors too large to stay in L2) */
} infiniopCudaEltLaunch;

/* The plan: `aligned` runs when both pointers are aligned to `align`
 * bytes, `unaligned` otherwise (align 0: no requirement, the two are the
 * same launch). Pointer alignment is a property of the call, the one thing
 * the run call tests. */
typedef struct {
    infiniopCudaEltLaunch aligned, unaligned;
    unsigned align;
    int tile_p; /* TRANSPOSE_*: the input's unit-stride dimension; -1 otherwise */
    bool pdl;   /* launch with programmatic stream serialization (cuda/common.cuh) */
} infiniopCudaEltPlan;

/* The elementwise planner's free parameters. A release build uses the
 * defaults (0: the planner's rule); a build with
 * -DINFINIOP_CUDA_EXPERIMENTS=ON also compiles bench/experiments/ into the
 * library, whose infiniop_cuda_experiment_elt_knobs the planner calls to
 * override them (environment variables: bench/experiments/cuda_elt_knobs.c). */
typedef struct {
    unsigned threads; /* VEC: threads per block (32..512, a power of two) */
    unsigned items;   /* VEC: vectors a thread (1, 2, 4, 8) */
    unsigned once;    /* VEC: evict-first hints: 0 the planner's rule, 1 off, 2 on */
    unsigned view;    /* transposing views: 0 the planner's rule, 1 TRANSPOSE_VEC (where allowed, else
                         TRANSPOSE_TILE), 2 TRANSPOSE_TILE, 3 STRIDED */
} infiniopCudaEltKnobs;
#ifdef INFINIOP_CUDA_EXPERIMENTS
void infiniop_cuda_experiment_elt_knobs(infiniopCudaEltKnobs *knobs);
#endif

/* The plan in words, for the verbose line (ops/unary/cuda.cu): the kernel
 * names above in lower case with their launch parameters, and the
 * unaligned-pointer fallback where there is one. */
void infiniop_cuda_describe_elt(const infiniopCudaEltPlan *plan, char *buf, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* INFINIOP_CUDA_PLAN_H */
