/*
 * bench/experiments/cuda_elt_knobs.c - environment overrides of the
 * elementwise (silu, sigmoid) CUDA plan, for benchmarking variants without
 * recompiling (scripts/gpu-variants.sh). Compiled into the library only by
 * a build configured with -DINFINIOP_CUDA_EXPERIMENTS=ON; the planner
 * (src/ops/unary/cuda.cu) calls it once per descriptor and a release build
 * reads none of these variables.
 *
 *   INFINIOP_CUDA_UNARY=threads,items  the contiguous VEC kernel's block
 *                                      size (32..512, a power of two) and
 *                                      vectors a thread (1, 2, 4, 8)
 *   INFINIOP_CUDA_UNARY_ONCE=0|1       VEC without (0) or with (1) the
 *                                      evict-first cache hints, whatever
 *                                      the size
 *   INFINIOP_CUDA_UNARY_VIEW=vec|tile|strided
 *                                      the kernel of a transposing view
 *                                      (vec: TRANSPOSE_VEC where allowed,
 *                                      else TRANSPOSE_TILE)
 *   INFINIOP_CUDA_UNARY_TILE_Q=32|64   TRANSPOSE_TILE's edge along q
 *   INFINIOP_CUDA_UNARY_ROWS_REUSE=N   ROWS over a row-broadcast input (large
 *                                      tensors): N rows a thread at the
 *                                      least, within one wave (1..64)
 *   INFINIOP_CUDA_UNARY_ROWS_POW2=1    ROWS (large tensors): lanes a power of
 *                                      two, as before session 19
 *   INFINIOP_CUDA_UNARY_ROWS_SINGLE=1  ROWS (large tensors): one row a step,
 *                                      never two (as before session 22)
 *   INFINIOP_CUDA_UNARY_SPREAD=P       latency-bound launches (STRIDED, FLAT,
 *                                      small VEC and GATHER, small ROWS):
 *                                      blocks shrunk until the grid has P%
 *                                      of the SM count (10..800)
 *   INFINIOP_CUDA_UNARY_TV=fixed       TRANSPOSE_VEC's block as before
 *                                      session 28: 256 threads, 4 warps
 *                                      along p, whatever the shape
 *   INFINIOP_CUDA_UNARY_GATHER=bcast|rows  over a broadcast input, GATHER in
 *                                      place of every ROWS narrower than a
 *                                      vector (bcast), or of none (rows: the
 *                                      rule before session 29)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/plan.h"

void infiniop_cuda_experiment_elt_knobs(infiniopCudaEltKnobs *knobs) {
    const char *e = getenv("INFINIOP_CUDA_UNARY");
    unsigned t = 0, u = 0;
    if (e && sscanf(e, "%u,%u", &t, &u) == 2 && t >= 32 && t <= 512 && (t & (t - 1)) == 0 &&
        (u == 1 || u == 2 || u == 4 || u == 8))
        knobs->threads = t, knobs->items = u;
    const char *o = getenv("INFINIOP_CUDA_UNARY_ONCE");
    if (o && (o[0] == '0' || o[0] == '1') && o[1] == 0) knobs->once = o[0] == '1' ? 2u : 1u;
    const char *v = getenv("INFINIOP_CUDA_UNARY_VIEW");
    if (v) knobs->view = !strcmp(v, "vec") ? 1u : !strcmp(v, "tile") ? 2u : !strcmp(v, "strided") ? 3u : 0u;
    const char *tq = getenv("INFINIOP_CUDA_UNARY_TILE_Q");
    if (tq && (!strcmp(tq, "32") || !strcmp(tq, "64"))) knobs->tile_q = (unsigned)atoi(tq);
    const char *rr = getenv("INFINIOP_CUDA_UNARY_ROWS_REUSE");
    if (rr && atoi(rr) >= 1 && atoi(rr) <= 64) knobs->rows_reuse = (unsigned)atoi(rr);
    const char *rp = getenv("INFINIOP_CUDA_UNARY_ROWS_POW2");
    if (rp && !strcmp(rp, "1")) knobs->rows_pow2 = 1;
    const char *rs = getenv("INFINIOP_CUDA_UNARY_ROWS_SINGLE");
    if (rs && !strcmp(rs, "1")) knobs->rows_single = 1;
    const char *sp = getenv("INFINIOP_CUDA_UNARY_SPREAD");
    if (sp && atoi(sp) >= 10 && atoi(sp) <= 800) knobs->spread_pct = (unsigned)atoi(sp);
    const char *tv = getenv("INFINIOP_CUDA_UNARY_TV");
    if (tv && !strcmp(tv, "fixed")) knobs->tv_fixed = 1;
    const char *gb = getenv("INFINIOP_CUDA_UNARY_GATHER");
    if (gb) knobs->gather_bcast = !strcmp(gb, "bcast") ? 1u : !strcmp(gb, "rows") ? 2u : 0u;
}
