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

/* The row-wise operators (add_rms_norm, layer_norm, causal_softmax): which
 * kernel runs, in the order cuda/plan_rows.cu tries them (the first whose rule
 * holds is the plan; docs/ARCHITECTURE.md lists the rules):
 *   REG_*       the register path (cuda/rows.cuh): each thread holds `items`
 *               accesses of the row, read once: 16-byte vectors (needs
 *               16-byte layouts and pointers; `peel`: rows not 16-byte
 *               aligned, pointers equal modulo 16 bytes) or, `scalar`, one element
 *               each (rows with unit column stride that are not whole
 *               16-byte vectors, or unaligned pointers); weight and bias
 *               of any stride (by vectors where it is 1); three group
 *               forms: `lanes` threads of a warp per row (SUB), a block per
 *               row (BLOCK), a cluster of `cluster` blocks per row (CLUSTER,
 *               Hopper and later);
 *   TILE_T      transposed inputs (the input's innermost row dimension of
 *               unit stride, its column stride not 1) that are not
 *               latency-bound, operators that have it: a cluster of
 *               `cluster` blocks takes a tile of `tile_rows` consecutive
 *               rows, each block `tile_cols` of its columns, read along
 *               the rows (whole sectors) into shared memory once; the row
 *               statistics are added over the cluster through distributed
 *               shared memory, and the outputs stored along the output
 *               rows;
 *   STREAM_*    the streaming kernels (src/ops/<op>/cuda.cu): a warp per
 *               row (WARP, rows of up to 1024 elements) or a block per row
 *               (BLOCK), 16-byte vectors (VEC: layouts and pointers allow),
 *               16-byte vectors after a peeled head of each row (PEEL:
 *               unit column stride, rows not 16-byte aligned, every tensor
 *               with the same row strides and pointers equal modulo 16
 *               bytes; operators that have it) or one element at a time
 *               (any strides, any alignment). */
typedef enum {
    INFINIOP_CUDA_ROW_REG_SUB = 0,
    INFINIOP_CUDA_ROW_REG_BLOCK = 1,
    INFINIOP_CUDA_ROW_REG_CLUSTER = 2,
    INFINIOP_CUDA_ROW_STREAM_WARP_VEC = 3,
    INFINIOP_CUDA_ROW_STREAM_BLOCK_VEC = 4,
    INFINIOP_CUDA_ROW_STREAM_WARP_PEEL = 5,
    INFINIOP_CUDA_ROW_STREAM_BLOCK_PEEL = 6,
    INFINIOP_CUDA_ROW_STREAM_WARP = 7,
    INFINIOP_CUDA_ROW_STREAM_BLOCK = 8,
    INFINIOP_CUDA_ROW_TILE_T = 9,
} infiniopCudaRowKernel;

/* One kernel and its launch parameters. */
typedef struct {
    infiniopCudaRowKernel kernel;
    unsigned threads;  /* threads per block */
    unsigned grid;     /* blocks (a multiple of cluster); kernels loop over further rows */
    unsigned cluster;  /* REG_CLUSTER: blocks per row (2..8); TILE_T: blocks per tile (1..8); 1
                          otherwise */
    unsigned items;    /* REG_*: accesses a thread holds: 16-byte vectors (1, 2, 4; in REG_SUB also 3,
                          and 8 where the operator has it) or, scalar, elements (1, 4, 16; 8 in REG_SUB
                          where the operator has it; CLUSTER: 16) */
    bool scalar;       /* REG_*: one element an access (else 16-byte vectors) */
    bool peel;         /* REG_SUB, REG_BLOCK by vectors, operators that have it (causal_softmax): rows
                          of unit column stride not 16-byte aligned (a PEEL layout, plan.same16; where
                          the operator peels each row by itself, InfiniopRowShape.peel_any, any row
                          strides and pointers): each row's body of whole aligned input vectors is
                          the accesses, its head and tail (at most 2V - 2 elements) one element each
                          to the group's first threads; the output stored by vectors where its row
                          lies at the input row's offset modulo 16 bytes, else element by element */
    bool strided;      /* REG_BLOCK, REG_CLUSTER, scalar: the elements at the tensors' column strides
                          (any; transposed inputs, latency-bound shapes only), not consecutive */
    unsigned lanes;    /* REG_SUB: threads per row (1..32, a power of two); 0 otherwise */
    unsigned prefetch; /* REG_*: > 0: each group asks L2 for the input row this many rows ahead */
    bool early;        /* REG_*: load every operand in the first round trip (fewer rows than
                          multiprocessors: latency is all) */
    unsigned cap;      /* REG_BLOCK at 4 vectors, where the uncapped instance leaves few warps resident
                          or the last wave of blocks part-full (rg_plan_cap, cuda/rows.cuh;
                          infiniop_cuda_cap_choice, cuda/plan_rows.cu): 0 the uncapped instance; 1 the instance
                          compiled for 2 blocks of up to 448 threads an SM (72 registers); 2 for 2
                          blocks of 512 (64 registers) */
    unsigned tile_rows; /* TILE_T: rows a tile (a power of two, 2..32) */
    unsigned tile_cols; /* TILE_T: columns a block of the cluster (the last block may have fewer) */
    unsigned tile_pitch; /* TILE_T: elements a tile row takes in shared memory (infiniop_tile_pitch) */
    size_t tile_run;    /* TILE_T: the input's innermost row extent (InfiniopRowShape.tile_run): tiles
                           do not cross it */
    bool param_vec;    /* STREAM_*_VEC and vector REG_*: weight and bias by 16-byte vectors (unit
                          stride), else element by element */
    size_t smem;       /* STREAM_*: dynamic shared memory, the rows cached as float32 between
                          passes (rows a block x ncols floats; PEEL: ncols rounded up to 4);
                          0: each pass reads global memory. TILE_T: the block's slice of the
                          tile (tile_rows x infiniop_tile_pitch elements) */
} infiniopCudaRowLaunch;

/* TILE_T: the pitch, in elements, of a tile row in shared memory: cols
 * rounded up to a bank period (128 bytes) plus a period / rows, so that the
 * loads' shared-memory writes (rows lanes on one column, 32 / rows columns
 * a warp) fall in distinct banks. */
static inline unsigned infiniop_tile_pitch(unsigned cols, unsigned rows, size_t elem_size) {
    const unsigned period = (unsigned)(128 / elem_size);
    return (cols + period - 1) / period * period + period / rows;
}

/* The plan: `aligned` runs when every pointer the operator reads or writes
 * by 16-byte vectors (its activations; weight and bias where their stride
 * is 1) is 16-byte aligned (same16: when those pointers are equal modulo
 * 16 bytes, for a PEEL kernel), `unaligned` otherwise (a STREAM_* kernel
 * without vectors). Pointer alignment is a property of the call, the one
 * thing the run call tests; where the layout allows no vectors the two
 * are the same launch. */
typedef struct {
    infiniopCudaRowLaunch aligned, unaligned;
    bool same16; /* the aligned launch is a STREAM_*_PEEL kernel */
    bool pdl; /* launch with programmatic stream serialization (cuda/common.cuh) */
} infiniopCudaRowPlan;

/* The planner's free parameters (cuda/plan_rows.cu). A release build uses the
 * defaults; a build with -DINFINIOP_CUDA_EXPERIMENTS=ON also compiles
 * bench/experiments/ into the library, whose
 * infiniop_cuda_experiment_row_knobs the planner calls for every plan to
 * override them (environment variables: bench/experiments/cuda_row_knobs.c). */
typedef struct {
    int policy;    /* register path: 1 by the rules, 2 everywhere, 3 everywhere with 1 vector a thread first,
                      0 nowhere, 4 rows of over 32 accesses spread over a block (1 vector a thread
                      first) as in latency-bound shapes */
    size_t items;  /* vectors a thread for block rows; 0: the planner's choice */
    size_t cluster; /* blocks a cluster for decode rows; 0: the planner's choice */
    bool warp8;    /* 8-vector warp rows where the operator has them */
    bool pdl;      /* programmatic dependent launch (every plan, elementwise too) */
    bool early;    /* `early` loads everywhere */
    long prefetch; /* rows of L2 prefetch; < 0: the planner's choice */
    int scalar;    /* the one-element register path: 0 by the rules, 1 off, 2 only with fewer rows
                      than SMs, 3 wherever it can hold the row (no fill rule, before the peel) */
    unsigned sub_threads; /* REG_SUB: threads a block before the spreading rule halves them; 0: 128 */
    unsigned warp_rows;   /* STREAM_WARP*: rows (warps) a block; 0: WARP_ROWS */
    bool tile_off;        /* TILE_T never */
    unsigned tile_cluster; /* TILE_T: blocks a tile (1..8); 0: the planner's choice */
    unsigned tile_rows;    /* TILE_T: rows a tile (2..32, a power of two); 0: the planner's choice */
    unsigned cap;          /* capped instances (infiniop_cuda_cap_choice): 0 by the rule, 1 never, 2 only
                              the 72-register one, 3 only the 64-register one, 4 by the rule's first
                              condition only (few resident warps) */
    unsigned sub_spread;   /* REG_SUB's grid: 0 by the rule (infiniop_cuda_spread_threads), 1 blocks halved
                              until two an SM (before session 28) */
    unsigned stream_blocks; /* STREAM_*: blocks at most (kernels loop over further rows); 0: the rule */
    unsigned sub_blocks;    /* REG_SUB: blocks an SM at most (groups loop over further rows); 0: the rule */
    bool resident_off;      /* latency-bound block-form rows: 1 vector a thread whether or not the blocks all
                               fit at once (before session 29) */
} infiniopCudaRowKnobs;
#ifdef INFINIOP_CUDA_EXPERIMENTS
void infiniop_cuda_experiment_row_knobs(infiniopCudaRowKnobs *knobs);
#endif

/* Elementwise operators (silu, sigmoid): which kernel runs, in the order
 * infiniop_unary_cuda_plan (ops/unary/cuda.cu) tries them; the first whose
 * rule holds on the folded layout (core/layout.h) is the plan:
 *   VEC        both tensors one dense run of at least one vector:
 *              `vec`-element (16-byte) vectors, `items` a thread, every
 *              load before the first store, one pass (no grid-stride
 *              loop); needs 16-byte aligned pointers;
 *   FLAT       both one dense run, any alignment: one element a thread
 *              (grid-stride loop); VEC's fallback, and the plan of a run
 *              shorter than a vector;
 *   ROWS       the last dimension has unit stride on both sides, the others
 *              anything (padded rows, broadcast rows of stride 0, a
 *              permutation that keeps the last dimension): `lanes`
 *              threads along a row by threads / lanes rows, each thread
 *              `items` accesses a row over `rows` rows, `vec` the widest
 *              access (16, 8, 4 bytes or one element) that the row length
 *              and every row stride allow;
 *              a row whose input is the previous row's (a broadcast) is
 *              stored again from registers, not re-read or recomputed
 *              (large tensors: at least 4 rows a thread over such an
 *              input, while the grid keeps 4 blocks an SM);
 *              needs both pointers aligned to the access width; its
 *              fallback is ROWS with vec = 1; where the input allows no
 *              wider access than one element (odd row pitch, a column
 *              stride other than 1 of under a sector, a broadcast last
 *              dimension) but the output does, `in1`: the input element
 *              by element at its column stride, the output by vectors
 *              (only the output pointer aligned);
 *   TRANSPOSE_VEC  the output's last dimension has unit stride and the
 *              input's unit stride is on another dimension p (`tile_p`):
 *              each thread transposes a V x V block of 16-byte vectors in
 *              registers, a block's warps `tile_wp` along p and the rest
 *              along q; needs both extents and the other strides to be
 *              multiples of V and 16-byte aligned pointers; fallback
 *              TRANSPOSE_TILE;
 *   TRANSPOSE_TILE the same layouts, any extents and alignment: 32 x 64
 *              tiles (32 along p) through shared memory, 8 elements a
 *              thread (`items`), or 32 x 32 with 4 where the 64-wide grid
 *              is under two waves of blocks and the 32-wide q tiles are
 *              3/4 full; both tiled kernels for tensors of two waves of
 *              one element a thread or more; under two waves,
 *              TRANSPOSE_TILE where its tiles are at least half full (at
 *              8-byte elements: 32-wide tiles giving half the SMs a
 *              block), else STRIDED;
 *   GATHER     the output one dense run (fewer than 2^31 elements), in
 *              place of STRIDED and of ROWS narrower than a 16-byte
 *              vector (row lengths or strides not multiples of V; not
 *              over an input broadcast anywhere, which ROWS reads or
 *              computes once a repeated row), where its vectors give every
 *              SM 8 warps or more: a thread writes
 *              `items` `vec`-element vectors of the output, each one
 *              16-byte store, gathering their inputs at the input's
 *              strides (one 16-byte load where they are an aligned
 *              unit-stride run); needs the output pointer 16-byte aligned
 *              (`align_out`), fallback the kernel it replaces;
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
    INFINIOP_CUDA_ELT_GATHER = 6,
} infiniopCudaEltKernel;

/* One kernel and its launch parameters. */
typedef struct {
    infiniopCudaEltKernel kernel;
    unsigned threads;  /* threads per block */
    unsigned grid[3];  /* blocks along x, y, z */
    unsigned vec;      /* elements per access (VEC, ROWS, GATHER); 1 otherwise */
    unsigned items;    /* accesses a thread issues before its first store (VEC, ROWS, GATHER) */
    unsigned lanes;    /* ROWS: threads along a row (blockDim.x); threads / lanes rows at once */
    unsigned rows;     /* ROWS: rows each thread loops over */
    bool in1;          /* ROWS: the input one element at a time, at its last dimension's stride (any
                          small stride: 0, +-1, 2, ...), the output by `vec` */
    bool pair;         /* ROWS: two rows a step, both rows' loads in flight together (no input row repeats) */
    bool idx64;        /* STRIDED: 64-bit element indices (more than 2^31 elements) */
    bool once;         /* VEC: evict-first cache hints (tensors too large to stay in L2) */
    unsigned tile_wp;  /* TRANSPOSE_VEC: warps of a block along p (1, 2 or 4; the rest along q) */
} infiniopCudaEltLaunch;

/* The plan: `aligned` runs when both pointers are aligned to `align`
 * bytes, `unaligned` otherwise (align 0: no requirement, the two are the
 * same launch). Pointer alignment is a property of the call, the one thing
 * the run call tests. */
typedef struct {
    infiniopCudaEltLaunch aligned, unaligned;
    unsigned align;
    bool align_out; /* only the output pointer needs `align` (ROWS with in1, GATHER) */
    int tile_p; /* TRANSPOSE_*: the input's unit-stride dimension; -1 otherwise */
    size_t planes; /* TRANSPOSE_*: the (p, q) planes, the product of the other extents (a kernel
                      with one plane computes no plane offsets) */
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
    unsigned tile_q;  /* TRANSPOSE_TILE: the tile's edge along q, 32 or 64; 0 the planner's rule */
    unsigned rows_reuse; /* ROWS over a row-broadcast input, large tensors: rows a thread at the least
                            (within one wave of blocks); 0 the planner's rule */
    unsigned rows_pow2;  /* ROWS, large tensors: 1 lanes a power of two (the former rule) */
    unsigned rows_single; /* ROWS, large tensors: 1 one row a step (no pairs; the former rule) */
    unsigned spread_pct;  /* latency-bound launches: blocks spread to, in percent of the SMs; 0 the
                             planner's rule */
    unsigned tv_fixed;    /* TRANSPOSE_VEC: 1 the tile before session 28 (256 threads, 4 warps along p) */
    unsigned gather_bcast; /* GATHER in place of ROWS narrower than a vector over a broadcast input: 0 by the
                              rule, 1 always, 2 never (before session 29) */
} infiniopCudaEltKnobs;
#ifdef INFINIOP_CUDA_EXPERIMENTS
void infiniop_cuda_experiment_elt_knobs(infiniopCudaEltKnobs *knobs);
#endif

/* The plan in words, for the verbose line (ops/unary/cuda.cu): the kernel
 * names above in lower case with their launch parameters, and the
 * unaligned-pointer fallback where there is one. */
void infiniop_cuda_elt_plan_text(const infiniopCudaEltPlan *plan, char *buf, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* INFINIOP_CUDA_PLAN_H */
