/*
 * bench/experiments/cuda_knobs.h - environment overrides of the CUDA launch
 * plans, for benchmarking variants without recompiling
 * (scripts/gpu-variants.sh, scripts/gpu-profile.sh). Compiled into the
 * library only by a build configured with -DINFINIOP_CUDA_EXPERIMENTS=ON,
 * which adds this folder to the include path; a release build hard-wires the
 * defaults in src/cuda/plan_rows.cu and src/ops/unary/cuda.cu and reads none of
 * these variables.
 *
 * (The row planner's variables: cuda_row_knobs.c beside this.)
 *   INFINIOP_CUDA_UNARY=threads,unroll  the contiguous silu/sigmoid kernel
 *                                  (128/256/512 threads, 2/4/8 vectors)
 */
#ifndef INFINIOP_BENCH_CUDA_KNOBS_H
#define INFINIOP_BENCH_CUDA_KNOBS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The contiguous silu/sigmoid kernel's block size and vectors a thread. */
static inline void experiment_unary_knobs(unsigned *threads, unsigned *unroll) {
    const char *e = getenv("INFINIOP_CUDA_UNARY");
    unsigned t = 0, u = 0;
    if (e && sscanf(e, "%u,%u", &t, &u) == 2 && (t == 128 || t == 256 || t == 512) && (u == 2 || u == 4 || u == 8))
        *threads = t, *unroll = u;
}

#endif
