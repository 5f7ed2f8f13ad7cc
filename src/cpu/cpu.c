/* cpu/cpu.c - the CPU backend's threading driver and instruction-set choice. */
#include "cpu/cpu.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

void infiniop_cpu_parallel_for(size_t n, size_t bytes, infiniop_range_fn fn, const void *ctx) {
    if (n == 0) return;
    size_t ntasks = bytes / INFINIOP_CPU_TASK_BYTES;
    if (ntasks > n) ntasks = n;
    if (bytes < INFINIOP_CPU_PARALLEL_BYTES || ntasks < 2 || omp_get_max_threads() < 2 || omp_in_parallel()) {
        fn(ctx, 0, n);
        return;
    }
    /* Task k covers q or q + 1 items: the first n % ntasks tasks one more. */
    size_t q = n / ntasks, extra = n % ntasks;
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t k = 0; k < ntasks; ++k) {
        size_t i0 = k * q + (k < extra ? k : extra);
        fn(ctx, i0, i0 + q + (k < extra));
    }
}

static infiniopCpuIsa detect(void) {
    infiniopCpuIsa isa = INFINIOP_ISA_GENERIC;
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c"))
        isa = INFINIOP_ISA_AVX2;
    if (isa == INFINIOP_ISA_AVX2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        isa = INFINIOP_ISA_AVX512;
    if (isa == INFINIOP_ISA_AVX512 && __builtin_cpu_supports("avx512bf16")) isa = INFINIOP_ISA_AVX512BF16;
#endif
    const char *cap = getenv("INFINIOP_CPU_ISA");
    if (cap) {
        infiniopCpuIsa c = !strcmp(cap, "generic") ? INFINIOP_ISA_GENERIC
                           : !strcmp(cap, "avx2")  ? INFINIOP_ISA_AVX2
                           : !strcmp(cap, "avx512") ? INFINIOP_ISA_AVX512
                                                    : INFINIOP_ISA_AVX512BF16;
        if (c < isa) isa = c;
    }
    return isa;
}

infiniopCpuIsa infiniop_cpu_isa(void) {
    /* Racing first calls compute the same value: a benign relaxed store. */
    static int cached = -1;
    int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v < 0) {
        v = (int)detect();
        __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
    }
    return (infiniopCpuIsa)v;
}
