/*
 * bench/experiments/cuda_row_knobs.c - environment overrides of the CUDA
 * row planner (src/cuda/plan_rows.cu), for benchmarking variants without
 * recompiling (scripts/gpu-variants.sh, scripts/gpu-profile.sh). A build
 * configured with -DINFINIOP_CUDA_EXPERIMENTS=ON compiles this folder's .c
 * files into the library; the planner calls the hook below at every plan, through
 * the declaration in src/cuda/plan.h (src/ includes nothing from here). A
 * release build neither compiles this nor reads these variables.
 *
 *   INFINIOP_CUDA_REG=all|wide|off|spread  the register path everywhere
 *                                  (wide: with 1 vector a thread first), or
 *                                  nowhere; spread: rows of over 32 accesses
 *                                  over a block, 1 vector a thread first, as
 *                                  in latency-bound shapes
 *   INFINIOP_CUDA_REG_ITEMS=1|2|4  vectors a thread for rows of one block
 *   INFINIOP_CUDA_REG_CLUSTER=2..8 decode rows go to a cluster of that many
 *                                  blocks (Hopper)
 *   INFINIOP_CUDA_REG_WARP8=0      no 8-vector warp rows
 *   INFINIOP_CUDA_PDL=0            no programmatic dependent launch (every plan)
 *   INFINIOP_CUDA_REG_EARLY=1      the launches' `early` everywhere
 *   INFINIOP_CUDA_PREFETCH=rows    the launches' `prefetch` (0: off)
 *   INFINIOP_CUDA_REG_SUB_THREADS=32..512  threads a block of warp-form rows (before the spreading rule)
 *   INFINIOP_CUDA_WARP_ROWS=1..32  rows (warps) a block of the warp streaming kernels
 *   INFINIOP_CUDA_REG_SCALAR=off|decode|all  the one-element register path
 *                                  off, only for fewer rows than SMs, or
 *                                  wherever it holds the row (no fill rule,
 *                                  ahead of the peeled streaming kernel)
 *   INFINIOP_CUDA_TILE=off         no TILE_T (transposed rows take the other kernels)
 *   INFINIOP_CUDA_TILE_CLUSTER=1..8  TILE_T: blocks a tile
 *   INFINIOP_CUDA_TILE_ROWS=2..32  TILE_T: rows a tile (a power of two)
 *   INFINIOP_CUDA_REG_SUB_SPREAD=two  the warp form's latency-bound grid as
 *                                  before session 28: blocks halved until
 *                                  two an SM
 *   INFINIOP_CUDA_STREAM_BLOCKS=N  the streaming kernels' grid at most N
 *                                  blocks (they loop over further rows)
 *   INFINIOP_CUDA_REG_SUB_BLOCKS=N  the warp form's grid at most N blocks an
 *                                  SM (its groups loop over further rows)
 *   INFINIOP_CUDA_REG_RESIDENT=off  latency-bound block-form rows keep one
 *                                  vector a thread even where their blocks do
 *                                  not all fit at once (the rule before
 *                                  session 29)
 *   INFINIOP_CUDA_REG_CAP=off|72|64|warps  capped block instances never,
 *                                  or only the 72- or the 64-register one
 *                                  (where infiniop_cuda_cap_choice's rule
 *                                  takes a cap), or by the rule's first
 *                                  condition only (few resident warps; the
 *                                  rule before session 31)
 */
#include "cuda/plan.h"

#include <stdlib.h>
#include <string.h>

/* Each knob keeps its value unless its variable is set. */
void infiniop_cuda_experiment_row_knobs(infiniopCudaRowKnobs *k) {
    const char *e = getenv("INFINIOP_CUDA_REG");
    if (e) k->policy = !strcmp(e, "all") ? 2 : !strcmp(e, "wide") ? 3 : !strcmp(e, "off") ? 0 : !strcmp(e, "spread") ? 4 : 1;
    if ((e = getenv("INFINIOP_CUDA_REG_ITEMS"))) {
        int v = atoi(e);
        k->items = v == 1 || v == 2 || v == 4 ? (size_t)v : 0;
    }
    if ((e = getenv("INFINIOP_CUDA_REG_CLUSTER"))) {
        int v = atoi(e);
        k->cluster = v >= 2 && v <= 8 ? (size_t)v : 0;
    }
    if ((e = getenv("INFINIOP_CUDA_REG_WARP8"))) k->warp8 = strcmp(e, "0") != 0;
    if ((e = getenv("INFINIOP_CUDA_PDL"))) k->pdl = strcmp(e, "0") != 0;
    if ((e = getenv("INFINIOP_CUDA_REG_EARLY"))) k->early = !strcmp(e, "1");
    if ((e = getenv("INFINIOP_CUDA_PREFETCH"))) k->prefetch = atol(e);
    if ((e = getenv("INFINIOP_CUDA_REG_SUB_THREADS"))) {
        int v = atoi(e);
        k->sub_threads = v == 32 || v == 64 || v == 128 ? (unsigned)v : 0; /* the warp form's launch bound */
    }
    if ((e = getenv("INFINIOP_CUDA_WARP_ROWS"))) {
        int v = atoi(e);
        k->warp_rows = v >= 1 && v <= 32 ? (unsigned)v : 0;
    }
    if ((e = getenv("INFINIOP_CUDA_TILE"))) k->tile_off = !strcmp(e, "off");
    if ((e = getenv("INFINIOP_CUDA_TILE_CLUSTER"))) {
        int v = atoi(e);
        k->tile_cluster = v >= 1 && v <= 8 ? (unsigned)v : 0;
    }
    if ((e = getenv("INFINIOP_CUDA_TILE_ROWS"))) {
        int v = atoi(e);
        k->tile_rows = v >= 2 && v <= 32 && (v & (v - 1)) == 0 ? (unsigned)v : 0;
    }
    if ((e = getenv("INFINIOP_CUDA_REG_CAP")))
        k->cap = !strcmp(e, "off") ? 1 : !strcmp(e, "72") ? 2 : !strcmp(e, "64") ? 3 : !strcmp(e, "warps") ? 4 : 0;
    if ((e = getenv("INFINIOP_CUDA_REG_SUB_SPREAD"))) k->sub_spread = !strcmp(e, "two") ? 1 : 0;
    if ((e = getenv("INFINIOP_CUDA_STREAM_BLOCKS"))) k->stream_blocks = (unsigned)atoi(e);
    if ((e = getenv("INFINIOP_CUDA_REG_SUB_BLOCKS"))) k->sub_blocks = (unsigned)atoi(e);
    if ((e = getenv("INFINIOP_CUDA_REG_RESIDENT"))) k->resident_off = !strcmp(e, "off");
    if ((e = getenv("INFINIOP_CUDA_REG_SCALAR")))
        k->scalar = !strcmp(e, "off") ? 1 : !strcmp(e, "decode") ? 2 : !strcmp(e, "all") ? 3 : 0;
}
