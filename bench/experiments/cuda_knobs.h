/*
 * bench/experiments/cuda_knobs.h - environment overrides of the CUDA launch
 * plans, for benchmarking variants without recompiling
 * (scripts/gpu-variants.sh, scripts/gpu-profile.sh). Compiled into the
 * library only by a build configured with -DINFINIOP_CUDA_EXPERIMENTS=ON,
 * which adds this folder to the include path; a release build hard-wires the
 * defaults in src/cuda/device.cu and src/ops/unary/cuda.cu and reads none of
 * these variables.
 *
 *   INFINIOP_CUDA_REG=all|wide     the register path everywhere (wide: with 1
 *                                  vector a thread first)
 *   INFINIOP_CUDA_REG_ITEMS=1|2|4  vectors a thread for rows of one block
 *   INFINIOP_CUDA_REG_CLUSTER=2..8 decode rows go to a cluster of that many
 *                                  blocks (Hopper)
 *   INFINIOP_CUDA_REG_WARP8=0      no 8-vector warp rows
 *   INFINIOP_CUDA_PDL=0            no programmatic dependent launch
 *   INFINIOP_CUDA_REG_EARLY=1      plan.reg_latency everywhere
 *   INFINIOP_CUDA_PREFETCH=rows    plan.reg_prefetch (0: off)
 * (The elementwise plan's overrides: bench/experiments/cuda_elt_knobs.c.)
 */
#ifndef INFINIOP_BENCH_CUDA_KNOBS_H
#define INFINIOP_BENCH_CUDA_KNOBS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Row planner knobs: each output keeps its value unless its variable is set. */
static inline void experiment_row_knobs(int *policy, size_t *items, size_t *cluster, bool *warp8, bool *pdl,
                                        bool *early, long *prefetch) {
    const char *e = getenv("INFINIOP_CUDA_REG");
    if (e) *policy = !strcmp(e, "all") ? 2 : !strcmp(e, "wide") ? 3 : 1;
    if ((e = getenv("INFINIOP_CUDA_REG_ITEMS"))) {
        int v = atoi(e);
        *items = v == 1 || v == 2 || v == 4 ? (size_t)v : 0;
    }
    if ((e = getenv("INFINIOP_CUDA_REG_CLUSTER"))) {
        int v = atoi(e);
        *cluster = v >= 2 && v <= 8 ? (size_t)v : 0;
    }
    if ((e = getenv("INFINIOP_CUDA_REG_WARP8"))) *warp8 = strcmp(e, "0") != 0;
    if ((e = getenv("INFINIOP_CUDA_PDL"))) *pdl = strcmp(e, "0") != 0;
    if ((e = getenv("INFINIOP_CUDA_REG_EARLY"))) *early = !strcmp(e, "1");
    if ((e = getenv("INFINIOP_CUDA_PREFETCH"))) *prefetch = atol(e);
}

#endif
