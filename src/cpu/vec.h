/*
 * cpu/vec.h - the CPU kernels' vector layer: float32 lanes written once with
 * GCC/Clang vector extensions, compiled for several instruction sets. The
 * one header a kernel includes; its parts:
 *   cpu/vec_lanes.h    vector types (VL lanes), lane operations, sums, FMA
 *   cpu/vec_convert.h  F16 / BF16 <-> float32 conversions
 *   cpu/vec_mem.h      loads, stores (streaming, partial, paired), prefetch
 *   cpu/vec_math.h     exp and division shared by several operators
 * Math used by one operator lives with it: silu/sigmoid in
 * ops/unary/unary_vec.h, softmax's exp and division in
 * ops/causal_softmax/cpu.c, the row statistics in ops/layer_norm/rowstats.h.
 *
 * The kernels are always-inline functions over the vector types. Each
 * kernel source is compiled once per instruction set (INFINIOP_CPU_PASS in
 * cpu.h; flags in the top-level CMakeLists.txt): AVX-512 (16 lanes, zmm),
 * AVX2 + FMA + F16C (8 lanes, ymm) and the baseline x86-64 / any other
 * target (8 lanes over whatever registers it has). infiniop_cpu_isa() picks
 * one at run time from CPUID, so one binary runs on any x86-64.
 *
 * Exactness: each instruction set gives deterministic results (not the
 * same bits across sets: FMA, sums over VW lanes, the half-output
 * variants). Every sum runs over VW = 4 VL lanes, four vectors, reduced
 * by one fixed tree (v_hsum_w). The half-type conversions
 * (cpu/vec_convert.h) equal cpu/dtype.h for every input.
 * tests/test_vec.c checks all of it exhaustively on each instruction set.
 */
#ifndef INFINIOP_CPU_VEC_H
#define INFINIOP_CPU_VEC_H

#include "cpu/vec_lanes.h"
#include "cpu/vec_convert.h"
#include "cpu/vec_mem.h"
#include "cpu/vec_math.h"

#endif /* INFINIOP_CPU_VEC_H */
