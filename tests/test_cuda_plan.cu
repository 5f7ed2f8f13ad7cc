/* test_cuda_plan.cu - the CUDA row planner's rules (src/cuda/plan_rows.cu),
 * on fake devices: no GPU is needed (label cpu; built where CUDA is). For
 * each shape the kernel the plan names for aligned and for unaligned
 * pointers, and invariants over a grid of shapes: launches that fit the
 * device, register rows that the group holds whole, unaligned launches
 * that never use vectors, the peel only where the layout asks for it. */
#include "cuda_plan_fake.h"

static infiniopCudaRowPlan plan(size_t nrows, size_t ncols, int ve, unsigned flags, bool vec, bool pv, bool peel,
                                 bool unit = false, size_t tile_run = 0) {
    infiniopCudaRowPlan p;
    /* (causal_softmax, the operator with INFINIOP_CUDA_REG_WARP8, peels each row by itself at
     * 4-byte elements) */
    const InfiniopRowShape s = {nrows, ncols, ve, flags, vec, pv, peel, unit, tile_run,
                                (flags & INFINIOP_CUDA_REG_WARP8) != 0 && ve == 4};
    infiniStatus_t st = infiniop_cuda_plan_rows(0, s, &p);
    CHECK(st == INFINI_STATUS_SUCCESS, "status %d", (int)st);
    return p;
}

static bool is_reg(infiniopCudaRowKernel k) {
    return k == INFINIOP_CUDA_ROW_REG_SUB || k == INFINIOP_CUDA_ROW_REG_BLOCK || k == INFINIOP_CUDA_ROW_REG_CLUSTER;
}
static bool is_peel(infiniopCudaRowKernel k) {
    return k == INFINIOP_CUDA_ROW_STREAM_WARP_PEEL || k == INFINIOP_CUDA_ROW_STREAM_BLOCK_PEEL;
}
static bool is_vec(infiniopCudaRowKernel k) {
    return k == INFINIOP_CUDA_ROW_STREAM_WARP_VEC || k == INFINIOP_CUDA_ROW_STREAM_BLOCK_VEC;
}

enum { SOFTMAX = INFINIOP_CUDA_REG_WARP8, LAYER_NORM = 0 };

enum { ADD_RMS_NORM = INFINIOP_CUDA_REG_2IN };

static void named_cases(void) {
    g_dev = H100;
    /* causal_softmax f16 40x777x777: odd T, rows not 16-byte aligned, y like x: the peeled
     * register path, the row's 97 whole aligned vectors a warp, 4 a lane, and its 8 edge elements one
     * a lane */
    infiniopCudaRowPlan p = plan(40 * 777, 777, 8, SOFTMAX, false, true, true, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_SUB && p.aligned.peel && !p.aligned.scalar &&
              p.aligned.lanes == 32 && p.aligned.items == 4 && p.same16,
          "kernel %d peel %d lanes %u items %u", (int)p.aligned.kernel, (int)p.aligned.peel, p.aligned.lanes,
          p.aligned.items);
    /* (pointers apart by other than 16 bytes: one element an access, held in registers, 16 a
     * thread: a block of 64 threads a row) */
    CHECK(p.unaligned.kernel == INFINIOP_CUDA_ROW_REG_BLOCK && p.unaligned.scalar && p.unaligned.items == 16 &&
              p.unaligned.threads == 64 && !p.unaligned.peel,
          "kernel %d items %u threads %u", (int)p.unaligned.kernel, p.unaligned.items, p.unaligned.threads);
    /* ... but 4 a thread where 16 would leave over 1/4 of them idle (637 of 1024) */
    p = plan(6 * 637, 637, 8, SOFTMAX, false, true, false, true);
    CHECK(p.unaligned.kernel == INFINIOP_CUDA_ROW_REG_BLOCK && p.unaligned.scalar && p.unaligned.items == 4 &&
              p.unaligned.threads == 160,
          "kernel %d items %u threads %u", (int)p.unaligned.kernel, p.unaligned.items, p.unaligned.threads);
    /* bf16 2x16x1500x1500: 187 whole vectors, a warp a row at 8 a lane */
    p = plan(2 * 16 * 1500, 1500, 8, SOFTMAX, false, true, true, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_SUB && p.aligned.peel && p.aligned.items == 8 && p.same16,
          "kernel %d items %u", (int)p.aligned.kernel, p.aligned.items);
    /* f16 4x8191x8191: 1023 whole vectors, a block a row at 4 a thread (256 threads) */
    p = plan(4 * 8191, 8191, 8, SOFTMAX, false, true, true, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_BLOCK && p.aligned.peel && p.aligned.items == 4 &&
              p.aligned.threads == 256 && p.same16,
          "kernel %d items %u threads %u", (int)p.aligned.kernel, p.aligned.items, p.aligned.threads);
    /* latency-bound peelable rows of at most 512 elements: one element a thread (f16 8x1x197 and
     * 197x197, spread over a block), not the peeled form */
    p = plan(8, 197, 8, SOFTMAX, false, true, true, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_BLOCK && p.aligned.scalar && p.aligned.items == 1 && !p.same16,
          "kernel %d scalar %d items %u", (int)p.aligned.kernel, (int)p.aligned.scalar, p.aligned.items);
    p = plan(197, 197, 8, SOFTMAX, false, true, true, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_BLOCK && p.aligned.scalar && p.aligned.items == 1 && !p.same16,
          "kernel %d scalar %d items %u", (int)p.aligned.kernel, (int)p.aligned.scalar, p.aligned.items);
    /* ... not latency-bound in elements (f16 2x12x197x197): the peeled warp form */
    p = plan(2 * 12 * 197, 197, 8, SOFTMAX, false, true, true, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_SUB && p.aligned.peel && p.aligned.lanes == 32 &&
              p.aligned.items == 1 && p.same16,
          "kernel %d peel %d lanes %u items %u", (int)p.aligned.kernel, (int)p.aligned.peel, p.aligned.lanes,
          p.aligned.items);
    /* f32 16x257x257: latency-bound in vectors, not in elements: a warp a row (64 vectors, 2 a
     * lane), not spread over a block */
    p = plan(16 * 257, 257, 4, SOFTMAX, false, true, true, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_SUB && p.aligned.peel && p.aligned.lanes == 32 &&
              p.aligned.items == 2 && !p.same16,
          "kernel %d peel %d lanes %u items %u", (int)p.aligned.kernel, (int)p.aligned.peel, p.aligned.lanes,
          p.aligned.items);
    /* latency-bound block-form rows with vector parameters, more rows than SMs: one vector a
     * thread where the blocks all fit at once at 64 registers a thread (bf16 1000x896: 128
     * threads, 8 blocks an SM, 1056 >= 1000), else 2 (layer_norm f32 1132x768: 192 threads, 5 an
     * SM, 660 < 1132; 96 at 2); fewer rows than SMs keep one (f32 100x768) */
    p = plan(1132, 768, 4, LAYER_NORM, true, true, false);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_BLOCK && p.aligned.items == 2 && p.aligned.threads == 96 &&
              p.aligned.early,
          "kernel %d items %u threads %u early %d", (int)p.aligned.kernel, p.aligned.items, p.aligned.threads,
          (int)p.aligned.early);
    /* (a strided or broadcast weight, element by element: one vector a thread, its weight early) */
    p = plan(1132, 768, 4, LAYER_NORM, true, false, false);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_BLOCK && p.aligned.items == 1, "kernel %d items %u",
          (int)p.aligned.kernel, p.aligned.items);
    p = plan(1000, 896, 8, LAYER_NORM, true, true, false);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_BLOCK && p.aligned.items == 1 && p.aligned.threads == 128,
          "kernel %d items %u threads %u", (int)p.aligned.kernel, p.aligned.items, p.aligned.threads);
    p = plan(100, 768, 4, LAYER_NORM, true, true, false);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_BLOCK && p.aligned.items == 1 && p.aligned.threads == 192,
          "kernel %d items %u threads %u", (int)p.aligned.kernel, p.aligned.items, p.aligned.threads);
    /* rows longer than a block holds: the peeled streaming kernel (the peeled register path has
     * no cluster form) */
    p = plan(4 * 20001, 20001, 8, SOFTMAX, false, true, true, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_STREAM_BLOCK_PEEL && p.same16, "kernel %d", (int)p.aligned.kernel);
    p = plan(8, 20001, 8, SOFTMAX, false, true, true, true); /* (decode: one element an access, a cluster) */
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_CLUSTER && p.aligned.scalar && !p.same16, "kernel %d",
          (int)p.aligned.kernel);
    /* whole-row vectors win over the peel */
    p = plan(40 * 768, 768, 8, SOFTMAX, true, true, true, true);
    CHECK(is_reg(p.aligned.kernel) && !p.aligned.scalar && !p.same16, "kernel %d", (int)p.aligned.kernel);
    /* no peel where the operator does not ask (strides differ: permuted x) */
    p = plan(40 * 777, 777, 8, SOFTMAX, false, true, false, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_BLOCK && p.aligned.scalar && !p.same16, "kernel %d",
          (int)p.aligned.kernel);
    /* f32 rows whose strides differ (permuted x, no PEEL layout; 3x834x834: 208 whole vectors a
     * row, a warp each at 8 a lane): softmax peels each row by itself at 4-byte elements, for
     * aligned pointers and not, y stored by elements where its row lies at another offset
     * (same16 is for the peeled streaming kernels) */
    p = plan(3 * 834, 834, 4, SOFTMAX, false, true, false, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_SUB && p.aligned.items == 8 && p.aligned.peel &&
              p.unaligned.peel && !p.same16 && p.unaligned.kernel == p.aligned.kernel &&
              p.unaligned.items == p.aligned.items,
          "kernel %d / %d", (int)p.aligned.kernel, (int)p.unaligned.kernel);
    p = plan(40 * 777, 777, 4, SOFTMAX, false, true, true, true); /* a PEEL layout: the same either way */
    CHECK(is_reg(p.aligned.kernel) && p.aligned.peel && p.unaligned.peel && !p.same16, "kernel %d / %d",
          (int)p.aligned.kernel, (int)p.unaligned.kernel);
    p = plan(40 * 768, 768, 4, SOFTMAX, true, true, true, true); /* whole-row vectors; unaligned: the peel */
    CHECK(is_reg(p.aligned.kernel) && !p.aligned.peel && !p.aligned.scalar && p.unaligned.peel, "kernel %d / %d",
          (int)p.aligned.kernel, (int)p.unaligned.kernel);
    p = plan(3 * 834, 834, 4, SOFTMAX, false, true, false, false); /* transposed: not peeled */
    CHECK(!p.aligned.peel && !p.unaligned.peel, "kernel %d", (int)p.aligned.kernel);
    /* softmax f16 12x197x197 permuted: 197 elements fill more than half of a warp's 32 x 8, the
     * warp form with 8 elements a lane; 32x511x511 sliced: a warp a row, 16 elements a lane */
    p = plan(12 * 197, 197, 8, SOFTMAX, false, true, false, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_SUB && p.aligned.scalar && p.aligned.lanes == 32 &&
              p.aligned.items == 8,
          "kernel %d lanes %u items %u", (int)p.aligned.kernel, p.aligned.lanes, p.aligned.items);
    p = plan(32 * 511, 511, 8, SOFTMAX, false, true, false, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_SUB && p.aligned.scalar && p.aligned.lanes == 32 &&
              p.aligned.items == 16,
          "kernel %d lanes %u items %u", (int)p.aligned.kernel, p.aligned.lanes, p.aligned.items);
    /* ... and decode rows of odd T the peeled register path, a vector a thread (128 whole vectors) */
    p = plan(7, 1031, 8, SOFTMAX, false, true, true, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_BLOCK && p.aligned.peel && p.aligned.items == 1 &&
              p.aligned.threads == 128 && p.same16,
          "kernel %d items %u threads %u", (int)p.aligned.kernel, p.aligned.items, p.aligned.threads);
    /* layer_norm bf16 4096x768: 96 vectors a row, a warp each, 3 a lane, blocks of 128 threads */
    p = plan(4096, 768, 8, LAYER_NORM, true, true, false, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_SUB && p.aligned.lanes == 32 && p.aligned.items == 3 &&
              p.aligned.threads == 128,
          "kernel %d lanes %u items %u threads %u", (int)p.aligned.kernel, p.aligned.lanes, p.aligned.items,
          p.aligned.threads);
    /* latency-bound warp rows (infiniop_cuda_spread_threads): the smallest block that gives
     * every SM one block at the most; layer_norm bf16 8x40x128, 320 rows of 16 lanes: 80
     * blocks of 64 (not 160 of 32); add_rms_norm f32 139x128, 139 rows of 32 lanes: 70 blocks
     * of 64; a call of 112 threads (7x128 bf16) a warp a block: 4 blocks */
    const size_t sub[3][7] = {{320, 128, 8, LAYER_NORM, 16, 64, 80},
                              {139, 128, 4, ADD_RMS_NORM, 32, 64, 70},
                              {7, 128, 8, ADD_RMS_NORM, 16, 32, 4}};
    for (const size_t *k : sub) {
        p = plan(k[0], k[1], (int)k[2], (unsigned)k[3], true, true, false, true);
        CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_SUB && p.aligned.lanes == k[4] && p.aligned.threads == k[5] &&
                  p.aligned.grid == k[6],
              "%zux%zu: kernel %d lanes %u threads %u grid %u", k[0], k[1], (int)p.aligned.kernel, p.aligned.lanes,
              p.aligned.threads, p.aligned.grid);
    }
    /* ... 97 vectors: 4 a lane */
    p = plan(4096, 776, 8, LAYER_NORM, true, true, false, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_SUB && p.aligned.lanes == 32 && p.aligned.items == 4,
          "kernel %d lanes %u items %u", (int)p.aligned.kernel, p.aligned.lanes, p.aligned.items);
    CHECK(p.unaligned.kernel == INFINIOP_CUDA_ROW_REG_BLOCK && p.unaligned.scalar, "kernel %d",
          (int)p.unaligned.kernel);
    CHECK(p.pdl, "pdl on compute capability 9");
    /* a strided weight: the same register plan, the weight loaded element by element */
    p = plan(4096, 768, 8, LAYER_NORM, true, false, false, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_SUB && p.aligned.lanes == 32 && p.aligned.items == 3,
          "kernel %d", (int)p.aligned.kernel);
    /* ... and with many rows of 2049-4096 vectors (f32 1000x14336 add_rms_norm, 3584 vectors,
     * more rows than SMs), a block of 448 threads x 8 vectors, the weight by elements where it
     * is strided and by vectors where it has unit stride */
    p = plan(1000, 14336, 4, ADD_RMS_NORM, true, false, false, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_BLOCK && p.aligned.items == 8 && p.aligned.threads == 448 &&
              !p.aligned.param_vec,
          "kernel %d items %u threads %u", (int)p.aligned.kernel, p.aligned.items, p.aligned.threads);
    p = plan(1000, 14336, 4, ADD_RMS_NORM, true, true, false, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_BLOCK && p.aligned.items == 8 && p.aligned.param_vec,
          "kernel %d items %u", (int)p.aligned.kernel, p.aligned.items);
    /* longer (f32 1000x16388, 4097 vectors): the vector streaming kernel */
    p = plan(1000, 16388, 4, ADD_RMS_NORM, true, true, false, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_STREAM_BLOCK_VEC && p.aligned.param_vec, "kernel %d",
          (int)p.aligned.kernel);
    /* fewer rows than SMs (f32 100x14336): latency-bound, a cluster of 4 vectors a thread */
    p = plan(100, 14336, 4, ADD_RMS_NORM, true, true, false, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_CLUSTER && p.aligned.items == 4, "kernel %d items %u",
          (int)p.aligned.kernel, p.aligned.items);
    /* add_rms_norm: bf16 4096x14336, 1792 vectors, a block of 448 threads x 4 vectors */
    p = plan(4096, 14336, 8, ADD_RMS_NORM, true, true, false, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_BLOCK && p.aligned.items == 4 && p.aligned.threads == 448,
          "kernel %d items %u threads %u", (int)p.aligned.kernel, p.aligned.items, p.aligned.threads);
    /* a transposed input (no unit column stride): the one-element streaming kernel */
    p = plan(4096, 768, 8, LAYER_NORM, false, true, false, false);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_STREAM_WARP && p.unaligned.kernel == INFINIOP_CUDA_ROW_STREAM_WARP,
          "kernel %d", (int)p.aligned.kernel);
    /* ... but latency-bound (fewer rows than SMs: layer_norm bf16 2x20161 transposed), the register
     * path's one-element form at the column stride: a cluster of 5 blocks, 16 elements a thread */
    p = plan(2, 20161, 8, LAYER_NORM, false, true, false, false);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_CLUSTER && p.aligned.scalar && p.aligned.items == 16 &&
              p.aligned.cluster == 5 && p.aligned.early && p.aligned.prefetch == 0,
          "kernel %d items %u cluster %u", (int)p.aligned.kernel, p.aligned.items, p.aligned.cluster);
    /* (102 transposed rows of 768: a block a row of 192 threads, 4 elements each) */
    p = plan(102, 768, 8, LAYER_NORM, false, true, false, false);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_BLOCK && p.aligned.scalar && p.aligned.items == 4 &&
              p.aligned.threads == 192,
          "kernel %d items %u threads %u", (int)p.aligned.kernel, p.aligned.items, p.aligned.threads);
    /* add_rms_norm f32 7x777 (odd rows, decode): a block a row of at most 512 threads, 4 elements each */
    p = plan(7, 777, 4, ADD_RMS_NORM, false, true, false, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_BLOCK && p.aligned.scalar && p.aligned.items == 4 &&
              p.aligned.threads == 224 && p.aligned.early,
          "kernel %d items %u threads %u", (int)p.aligned.kernel, p.aligned.items, p.aligned.threads);
    /* layer_norm bf16 13x4099: 16 elements a thread, 288 threads */
    p = plan(13, 4099, 8, LAYER_NORM, false, true, false, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_BLOCK && p.aligned.scalar && p.aligned.items == 16 &&
              p.aligned.threads == 288,
          "kernel %d items %u threads %u", (int)p.aligned.kernel, p.aligned.items, p.aligned.threads);
    /* layer_norm f16 3x49999: a cluster of 8, 16 elements a thread */
    p = plan(3, 49999, 8, LAYER_NORM, false, true, false, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_CLUSTER && p.aligned.scalar && p.aligned.cluster == 8 &&
              p.aligned.items == 16 && p.aligned.grid == 24,
          "kernel %d cluster %u items %u grid %u", (int)p.aligned.kernel, p.aligned.cluster, p.aligned.items,
          p.aligned.grid);
    /* latency-bound by rule: add_rms_norm bf16 197x896 (more rows than SMs, but 22 K vectors and
     * 0.7 MB of input) spreads each row over a block, a vector a thread, every operand early ... */
    p = plan(197, 896, 8, ADD_RMS_NORM, true, true, false, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_BLOCK && p.aligned.items == 1 && p.aligned.threads == 128 &&
              p.aligned.early && p.aligned.prefetch == 0,
          "kernel %d items %u threads %u early %d", (int)p.aligned.kernel, p.aligned.items, p.aligned.threads,
          (int)p.aligned.early);
    /* ... f32 992x896 (7.1 MB of input: more than the GPU holds in flight) takes the throughput form */
    p = plan(992, 896, 4, ADD_RMS_NORM, true, true, false, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_BLOCK && p.aligned.items == 2 && !p.aligned.early &&
              p.aligned.prefetch > 0,
          "kernel %d items %u early %d", (int)p.aligned.kernel, p.aligned.items, (int)p.aligned.early);
    /* a decode row of 1792 vectors (bf16 1x14336): a cluster of 8 at a vector a thread, not one
     * block at 4; 896 vectors (1x7168) stay in one block at 2 */
    p = plan(1, 14336, 8, LAYER_NORM, true, true, false, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_CLUSTER && p.aligned.cluster == 8 && p.aligned.items == 1 &&
              p.aligned.threads == 224 && p.aligned.grid == 8,
          "kernel %d cluster %u items %u threads %u", (int)p.aligned.kernel, p.aligned.cluster, p.aligned.items,
          p.aligned.threads);
    p = plan(1, 7168, 8, LAYER_NORM, true, true, false, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_BLOCK && p.aligned.items == 2 && p.aligned.threads == 448,
          "kernel %d items %u threads %u", (int)p.aligned.kernel, p.aligned.items, p.aligned.threads);
    /* one long decode row, bf16 1x65536: a cluster of 8 on Hopper ... */
    p = plan(1, 65536, 8, LAYER_NORM, true, true, false, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_REG_CLUSTER && p.aligned.cluster == 8 && p.aligned.early,
          "kernel %d cluster %u", (int)p.aligned.kernel, p.aligned.cluster);
    /* ... and no cluster before compute capability 9, nor PDL */
    g_dev = A100;
    p = plan(1, 65536, 8, LAYER_NORM, true, true, false, true);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_STREAM_BLOCK_VEC && !p.pdl, "kernel %d", (int)p.aligned.kernel);
}

static void tile_cases(void) {
    g_dev = H100; /* 132 SMs: 528 slots of 4 blocks */
    /* layer_norm bf16 4096x768 transposed (rows of unit stride 4096 long):
     * tiles of 16 rows (one sector a column; 32 rows would need 2), 256
     * tiles x 2 blocks (528 / 256), 384 columns a block */
    infiniopCudaRowPlan p = plan(4096, 768, 8, LAYER_NORM, false, true, false, false, 4096);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_TILE_T && p.aligned.tile_rows == 16 && p.aligned.threads == 256 &&
              p.unaligned.kernel == INFINIOP_CUDA_ROW_TILE_T && p.aligned.cluster == 2 &&
              p.aligned.tile_cols == 384 && p.aligned.grid == 512 && p.aligned.smem == 16 * 388 * 2,
          "kernel %d rows %u cols %u cluster %u grid %u smem %zu", (int)p.aligned.kernel, p.aligned.tile_rows,
          p.aligned.tile_cols, p.aligned.cluster, p.aligned.grid, p.aligned.smem);
    /* 93x2x13284: runs of 2 rows, tiles of 2, 93 x 5 blocks */
    p = plan(186, 13284, 8, LAYER_NORM, false, true, false, false, 2);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_TILE_T && p.aligned.tile_rows == 2 && p.aligned.cluster == 5 &&
              p.aligned.tile_cols == 2657 && p.aligned.grid == 465 && p.aligned.smem == 2 * 2720 * 2,
          "kernel %d rows %u cluster %u grid %u smem %zu", (int)p.aligned.kernel, p.aligned.tile_rows,
          p.aligned.cluster, p.aligned.grid, p.aligned.smem);
    /* 13x39x4096: runs of 39, tiles of 16 (3 sectors a column), 39 x 8 blocks */
    p = plan(507, 4096, 8, LAYER_NORM, false, true, false, false, 39);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_TILE_T && p.aligned.tile_rows == 16 && p.aligned.cluster == 8 &&
              p.aligned.grid == 312,
          "kernel %d rows %u cluster %u grid %u", (int)p.aligned.kernel, p.aligned.tile_rows, p.aligned.cluster,
          p.aligned.grid);
    /* f32 1000x1001: tiles of 8 rows (one sector a column), 125 tiles x 3
     * (528 / 125 = 4 blocks would keep 251 columns: under 256) */
    p = plan(1000, 1001, 4, LAYER_NORM, false, true, false, false, 1000);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_TILE_T && p.aligned.tile_rows == 8 && p.aligned.cluster == 3 &&
              p.aligned.grid == 375 && p.aligned.smem == 8 * 356 * 4,
          "kernel %d rows %u cluster %u grid %u smem %zu", (int)p.aligned.kernel, p.aligned.tile_rows,
          p.aligned.cluster, p.aligned.grid, p.aligned.smem);
    /* many tiles: one block a tile, the grid capped at 4 waves of slots */
    p = plan(65536 * 4, 512, 8, LAYER_NORM, false, true, false, false, 65536);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_TILE_T && p.aligned.cluster == 1 && p.aligned.grid == 4 * 528,
          "kernel %d cluster %u grid %u", (int)p.aligned.kernel, p.aligned.cluster, p.aligned.grid);
    /* short rows: a block keeps 256 columns (D = 70 or 511: 1 block) */
    p = plan(8192, 70, 8, LAYER_NORM, false, true, false, false, 8192);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_TILE_T && p.aligned.cluster == 1, "kernel %d cluster %u",
          (int)p.aligned.kernel, p.aligned.cluster);
    p = plan(1000, 511, 8, LAYER_NORM, false, true, false, false, 1000);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_TILE_T && p.aligned.cluster == 1, "kernel %d cluster %u",
          (int)p.aligned.kernel, p.aligned.cluster);
    /* latency-bound: the strided register path as before */
    p = plan(2, 20161, 8, LAYER_NORM, false, false, false, false, 2);
    CHECK(is_reg(p.aligned.kernel) && p.aligned.strided, "kernel %d", (int)p.aligned.kernel);
    /* a tile slice over 38 KB even at 8 blocks and a sector's rows (16 x
     * 8192 bf16): the streaming kernel */
    p = plan(4096, 65536, 8, LAYER_NORM, false, true, false, false, 4096);
    CHECK(p.aligned.kernel == INFINIOP_CUDA_ROW_STREAM_BLOCK, "kernel %d", (int)p.aligned.kernel);
    /* the launch's invariants over transposed shapes: a whole number of
     * clusters of 1..8, every column covered, the last block not empty,
     * tile rows a power of two within 2..32, the slice within 38 KB, the
     * pitch and the run recorded for the launch */
    static const size_t runs[] = {2, 3, 7, 16, 39, 100, 1000, 4096, 65536};
    static const size_t outers[] = {1, 2, 13, 93, 1000};
    static const size_t cols[] = {32, 33, 70, 768, 1001, 4096, 13284, 14336, 65536};
    static const int ves[] = {8, 4};
    for (size_t ri = 0; ri < sizeof runs / sizeof *runs; ri++)
        for (size_t oi = 0; oi < sizeof outers / sizeof *outers; oi++)
            for (size_t ci = 0; ci < sizeof cols / sizeof *cols; ci++)
                for (int vi = 0; vi < 2; vi++) {
                    const size_t run = runs[ri], rows = run * outers[oi], D = cols[ci], es = 16 / ves[vi];
                    if (rows > (1u << 22)) continue;
                    p = plan(rows, D, ves[vi], LAYER_NORM, false, true, false, false, run);
                    const infiniopCudaRowLaunch &a = p.aligned;
                    if (a.kernel != INFINIOP_CUDA_ROW_TILE_T) continue;
                    const unsigned tr = a.tile_rows;
                    CHECK(a.cluster >= 1 && a.cluster <= 8 && a.grid % a.cluster == 0 && a.grid > 0 &&
                              (size_t)a.tile_cols * a.cluster >= D && (size_t)a.tile_cols * (a.cluster - 1) < D &&
                              tr >= 2 && tr <= 32 && (tr & (tr - 1)) == 0 && tr / 2 < run &&
                              a.tile_pitch == infiniop_tile_pitch(a.tile_cols, tr, es) &&
                              a.smem == tr * a.tile_pitch * es && a.smem <= 38u << 10 && a.tile_run == run &&
                              p.unaligned.tile_pitch == a.tile_pitch && p.unaligned.tile_run == run &&
                              a.threads == 256 && p.unaligned.kernel == a.kernel && p.unaligned.grid == a.grid &&
                              p.unaligned.cluster == a.cluster && p.unaligned.smem == a.smem,
                          "run %zu rows %zu D %zu es %zu: cluster %u grid %u cols %u rows %u smem %zu", run, rows, D,
                          es, a.cluster, a.grid, a.tile_cols, tr, a.smem);
                }
    /* before Hopper (no clusters): no TILE_T */
    g_dev = A100;
    p = plan(4096, 768, 8, LAYER_NORM, false, true, false, false, 4096);
    CHECK(p.aligned.kernel != INFINIOP_CUDA_ROW_TILE_T, "kernel %d", (int)p.aligned.kernel);
    g_dev = H100;
}

static void invariants(void) {
    static const size_t rows[] = {1, 2, 7, 64, 107, 108, 131, 132, 133, 1000, 4096, 65536, 1u << 22};
    static const size_t cols[] = {1, 3, 8, 64, 96, 197, 256, 777, 1024, 1025, 1500, 2048, 4096, 8192,
                                  12032, 12040, 14336, 65536, 100003, 1u << 20};
    const infiniopCudaProps devs[2] = {H100, A100};
    for (const infiniopCudaProps &d : devs) {
        g_dev = d;
        for (size_t nr : rows)
            for (size_t nc : cols)
                for (int ve : {8, 4})
                    for (unsigned fl = 0; fl < 8; ++fl)
                        for (int bits = 0; bits < 16; ++bits) {
                            const bool vec = bits & 1, pv = bits & 2, peel = bits & 4, unit = bits & 8;
                            if (vec && nc % ve) continue; /* (a vector layout has whole vectors) */
                            if ((vec || peel) && !unit) continue; /* (both need unit column strides) */
                            const infiniopCudaRowPlan p = plan(nr, nc, ve, fl, vec, pv, peel, unit);
                            const infiniopCudaRowLaunch *ls[2] = {&p.aligned, &p.unaligned};
                            for (const infiniopCudaRowLaunch *q : ls) {
                                CHECK(q->grid >= 1 && q->threads >= 32 && q->threads <= 1024 && q->threads % 32 == 0,
                                      "%zux%zu: grid %u threads %u", nr, nc, q->grid, q->threads);
                                CHECK(q->smem == 0 || q->smem + 1024 <= d.smem_per_block, "%zux%zu: smem %zu", nr, nc,
                                      q->smem);
                                if (is_reg(q->kernel)) {
                                    const size_t held = q->kernel == INFINIOP_CUDA_ROW_REG_SUB
                                                            ? (size_t)q->lanes * q->items
                                                            : (size_t)q->threads * q->items * q->cluster;
                                    CHECK(q->peel ? held >= nc / ve : held * (q->scalar ? 1 : (size_t)ve) >= nc,
                                          "%zux%zu: the group holds %zu accesses", nr, nc, held);
                                    CHECK(q->scalar ? q->items == 1 || q->items == 4 || q->items == 16 ||
                                                          (q->items == 8 && q->kernel == INFINIOP_CUDA_ROW_REG_SUB &&
                                                           (fl & INFINIOP_CUDA_REG_WARP8))
                                                    : q->items == 1 || q->items == 2 || q->items == 4 ||
                                                          ((q->items == 3 || q->items == 8) &&
                                                           q->kernel == INFINIOP_CUDA_ROW_REG_SUB) ||
                                                          (q->items == 8 && q->kernel == INFINIOP_CUDA_ROW_REG_BLOCK &&
                                                           !q->peel && nr >= (size_t)d.sm_count),
                                          "%zux%zu: items %u (an instance exists)", nr, nc, q->items);
                                    /* (rows.cuh's RgWarp32: those instances index and reduce as a
                                     * whole warp) */
                                    CHECK(q->kernel != INFINIOP_CUDA_ROW_REG_SUB || q->items < 2 || q->lanes == 32,
                                          "%zux%zu: a warp form of %u items in %u lanes", nr, nc, q->items, q->lanes);
                                    CHECK(q->kernel != INFINIOP_CUDA_ROW_REG_CLUSTER || !q->scalar || q->items == 16,
                                          "%zux%zu: a one-element cluster of %u items", nr, nc, q->items);
                                    /* (RG_BOUNDS: 512 at 2 or more items; the block form at one item 576
                                     * where B56, so at most 512 planned) */
                                    CHECK(q->threads <= (q->items >= 2 || q->kernel == INFINIOP_CUDA_ROW_REG_BLOCK
                                                             ? 512u
                                                             : 1024u),
                                          "%zux%zu: %u threads over the launch bounds", nr, nc, q->threads);
                                    CHECK(q->grid % q->cluster == 0, "%zux%zu: grid %u cluster %u", nr, nc, q->grid,
                                          q->cluster);
                                    CHECK(q->kernel != INFINIOP_CUDA_ROW_REG_CLUSTER || d.cc_major >= 9,
                                          "%zux%zu: a cluster on compute capability %d", nr, nc, d.cc_major);
                                    /* (softmax peels any unit-stride rows at 4-byte elements, at any pointers) */
                                    const bool pany = (fl & INFINIOP_CUDA_REG_WARP8) && unit && ve == 4;
                                    CHECK(q->scalar              ? unit || q->early
                                          : q->peel              ? (q == &p.aligned ? (peel || pany) && !vec : pany)
                                                                 : vec && q == &p.aligned,
                                          "%zux%zu: register path without its layout (scalar %d peel %d)", nr, nc,
                                          (int)q->scalar, (int)q->peel);
                                    CHECK(!q->peel || q->kernel == INFINIOP_CUDA_ROW_REG_BLOCK ||
                                              (q->kernel == INFINIOP_CUDA_ROW_REG_SUB && q->lanes >= 2u * ve - 2),
                                          "%zux%zu: a peeled warp form of %u lanes (its edge elements)", nr, nc,
                                          q->lanes);
                                    CHECK(!q->peel || (!q->scalar && q->kernel != INFINIOP_CUDA_ROW_REG_CLUSTER),
                                          "%zux%zu: a peeled launch in kernel %d (an instance exists: vectors, "
                                          "warp and block forms)",
                                          nr, nc, (int)q->kernel);
                                    CHECK(q->scalar ? !q->param_vec : q->param_vec == pv,
                                          "%zux%zu: param_vec %d for pv %d (the kernel instance's weight loads)", nr,
                                          nc, (int)q->param_vec, (int)pv);
                                    CHECK(q->strided == (q->scalar && !unit),
                                          "%zux%zu: strided %d for unit %d scalar %d", nr, nc, (int)q->strided,
                                          (int)unit, (int)q->scalar);
                                    CHECK(!q->strided || (q->kernel != INFINIOP_CUDA_ROW_REG_SUB && q->early &&
                                                          q->prefetch == 0),
                                          "%zux%zu: strided rows in kernel %d (an instance exists: block and cluster "
                                          "forms, early loads, no prefetch)",
                                          nr, nc, (int)q->kernel);
                                    CHECK(q->scalar || q->peel || q == &p.aligned,
                                          "%zux%zu: an unaligned launch with vectors", nr, nc);
                                }
                            }
                            CHECK((!is_reg(p.unaligned.kernel) || p.unaligned.scalar || p.unaligned.peel) &&
                                      !is_vec(p.unaligned.kernel) && !is_peel(p.unaligned.kernel),
                                  "%zux%zu: unaligned launch %d uses vectors", nr, nc, (int)p.unaligned.kernel);
                            /* decode shapes of consecutive elements take a register path */
                            if (unit && nr < (size_t)d.sm_count && nc <= 4096)
                                CHECK(is_reg(p.aligned.kernel) && is_reg(p.unaligned.kernel),
                                      "%zux%zu: decode rows off the register path (%d, %d)", nr, nc,
                                      (int)p.aligned.kernel, (int)p.unaligned.kernel);
                            const bool op_any = (fl & INFINIOP_CUDA_REG_WARP8) && ve == 4, pany = op_any && unit;
                            CHECK(p.same16 == (is_peel(p.aligned.kernel) || (p.aligned.peel && !op_any)),
                                  "%zux%zu: same16", nr, nc);
                            CHECK(!is_peel(p.aligned.kernel) || (peel && !vec), "%zux%zu: peel not asked for", nr, nc);
                            CHECK(!p.aligned.peel || ((peel || pany) && !vec), "%zux%zu: peel not asked for", nr, nc);
                            CHECK(!p.unaligned.peel || pany, "%zux%zu: a peeled unaligned launch", nr, nc);
                            CHECK(!is_vec(p.aligned.kernel) || vec, "%zux%zu: vectors without the layout", nr, nc);
                            if (!vec && !peel)
                                CHECK(p.aligned.kernel == p.unaligned.kernel, "%zux%zu: two launches for no vectors",
                                      nr, nc);
                        }
    }
}

/* infiniop_cuda_cap_choice (cuda/plan_rows.cu): the capped instance of the block form at 4 vectors
 * a thread where the uncapped one leaves few warps resident, or, for rows slower than their bytes,
 * where the capped one fills the last wave of rows better by 25% */
static unsigned cap_choice(size_t rows, unsigned threads, int b0, int b1, int b2, size_t s1, size_t s2,
                           bool slow = true) {
    InfiniopCapQuery c = {};
    c.rows = rows, c.threads = threads, c.sms = 132, c.slow_rows = slow;
    c.blocks[0] = b0, c.blocks[1] = b1, c.blocks[2] = b2;
    c.spill[1] = s1, c.spill[2] = s2;
    return infiniop_cuda_cap_choice(c);
}
static void cap_cases(void) {
    /* few warps: one block of 448 threads (14 warps); the capped one of the most blocks, slow rows or not */
    CHECK(cap_choice(8192, 448, 1, 2, 2, 0, 16, false) == 1, "448 threads, 1 block");
    CHECK(cap_choice(8192, 448, 1, 1, 2, 0, 16, false) == 2, "448 threads, the 64-register one holds 2");
    CHECK(cap_choice(8192, 448, 1, 1, 2, 0, 40) == 0, "spill over 32 bytes");
    CHECK(cap_choice(8192, 288, 2, 3, 3, 0, 12) == 1, "288 threads: 3 blocks either way, the less spill");
    /* add_rms_norm f16 512x7168, a strided weight: 224 threads, 3 blocks (21 warps): 2 waves, the second
     * 29% full (0.65); the 72-register instance's 4 blocks take the 512 rows in one (0.97) */
    CHECK(cap_choice(512, 224, 3, 4, 4, 0, 8) == 1, "512 rows x 224 threads");
    /* ... not for streamed rows (a broadcast weight) */
    CHECK(cap_choice(512, 224, 3, 4, 4, 0, 8, false) == 0, "512 rows x 224 threads, streamed");
    /* softmax f32 1659x1660: 128 threads, 6 blocks: 2.09 waves (0.70); 7 blocks 1.80 (0.90), 1.28x */
    CHECK(cap_choice(1659, 128, 6, 7, 8, 0, 16) == 1, "1659 rows x 128 threads");
    /* 1008 rows x 224 threads, 3 -> 4 blocks: 0.85 -> 0.95, under 1.25x */
    CHECK(cap_choice(1008, 224, 3, 4, 4, 0, 8) == 0, "1008 rows x 224 threads");
    /* 4096 rows of 128 threads, 6 -> 8 blocks: 5.17 waves (0.86) -> 3.88 (0.97), under 1.25x */
    CHECK(cap_choice(4096, 128, 6, 7, 8, 0, 0) == 0, "4096 rows x 128 threads");
    /* a whole wave already: rows = 132 x 3 */
    CHECK(cap_choice(396, 224, 3, 4, 4, 0, 0) == 0, "396 rows, one full wave");
    /* more blocks but no better fill: 1.29 waves at 3 blocks, 0.97 at 4, 0.78 at 5: the 4 */
    CHECK(cap_choice(512, 224, 3, 4, 5, 0, 0) == 1, "the better-filled of two");
    CHECK(cap_choice(512, 224, 3, 0, 4, 0, 0) == 2, "only the 64-register instance");
    /* no uncapped figure (a failed query): uncapped */
    CHECK(cap_choice(512, 224, 0, 4, 4, 0, 0) == 0, "no uncapped blocks");
    /* infiniop_cuda_cap_wanted: whether the capped instances are worth querying, from the uncapped
     * one's blocks alone: few warps, or slow rows whose last wave is under 80% full */
    InfiniopCapQuery w = {};
    w.threads = 224, w.sms = 132, w.rows = 512, w.blocks[0] = 3, w.slow_rows = true;
    CHECK(infiniop_cuda_cap_wanted(w), "wanted: 512 rows x 224 threads, slow");
    w.slow_rows = false;
    CHECK(!infiniop_cuda_cap_wanted(w), "not wanted: 512 rows x 224 threads, streamed (21 warps)");
    w.threads = 448, w.blocks[0] = 1;
    CHECK(infiniop_cuda_cap_wanted(w), "wanted: 448 threads, 1 block (14 warps), streamed");
    w.threads = 224, w.blocks[0] = 3, w.slow_rows = true, w.rows = 396;
    CHECK(!infiniop_cuda_cap_wanted(w), "not wanted: 396 rows, one full wave");
    w.rows = 1008; /* 2.55 waves, 0.85 */
    CHECK(!infiniop_cuda_cap_wanted(w), "not wanted: 1008 rows, the last wave 55%% full");
    /* whatever the capped instances hold, the rule takes none where it was not wanted */
    long bad = 0;
    for (size_t rows = 1; rows <= 3000; rows += 7)
        for (unsigned threads = 32; threads <= 512; threads += 32)
            for (int b0 = 1; b0 <= 8; ++b0)
                for (int b1 = 0; b1 <= 9; b1 += 3)
                    for (int b2 = 0; b2 <= 9; b2 += 2) {
                        InfiniopCapQuery c = {};
                        c.rows = rows, c.threads = threads, c.sms = 132, c.slow_rows = (rows + b1) % 2 == 0;
                        c.blocks[0] = b0, c.blocks[1] = b1, c.blocks[2] = b2;
                        if (infiniop_cuda_cap_choice(c) != 0 && !infiniop_cuda_cap_wanted(c)) ++bad;
                    }
    CHECK(bad == 0, "%ld capped choices where the capped instances were not wanted", bad);
}

int main(void) {
    named_cases();
    tile_cases();
    cap_cases();
    invariants();
    printf("test_cuda_plan: %ld checks, %ld failed\n", g_checks, g_fail);
    return g_fail ? 1 : 0;
}
