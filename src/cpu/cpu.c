/* cpu/cpu.c - the CPU backend's threading driver and instruction-set choice. */
#include "cpu/cpu.h"
#include "core/create.h" /* infiniop_append */

#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* The thread rule (cpu.h): a process-wide budget of N = omp_get_max_threads()
 * (read once: OMP_NUM_THREADS, else the cores) threads shared by the calls in
 * flight. g_in_use counts the threads held; g_peak its high-water mark;
 * t_last_team the team of this thread's last call (test hooks). */
static int g_budget, g_in_use, g_peak;
static _Thread_local int t_last_team;

static int budget(void) {
    int n = __atomic_load_n(&g_budget, __ATOMIC_RELAXED);
    if (n == 0) { /* racing first calls store the same value */
        n = omp_get_max_threads();
        if (n < 1) n = 1;
        __atomic_store_n(&g_budget, n, __ATOMIC_RELAXED);
    }
    return n;
}

/* Take up to want (>= 2) threads from the budget: what is free, or 0 when
 * fewer than 2 are free (the call then runs on its calling thread). */
static int acquire(int want) {
    int n = budget(), cur = __atomic_load_n(&g_in_use, __ATOMIC_RELAXED), got;
    do {
        got = n - cur < want ? n - cur : want;
        if (got < 2) return 0;
    } while (!__atomic_compare_exchange_n(&g_in_use, &cur, cur + got, true, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
    int peak = __atomic_load_n(&g_peak, __ATOMIC_RELAXED);
    while (cur + got > peak &&
           !__atomic_compare_exchange_n(&g_peak, &peak, cur + got, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return got;
}

/* Tasks of about INFINIOP_CPU_TASK_BYTES each, at most one per item. */
static size_t task_count(size_t n, size_t bytes) {
    size_t ntasks = bytes / INFINIOP_CPU_TASK_BYTES;
    return ntasks > n ? n : ntasks;
}

int infiniop_cpu_team_wanted(size_t n, size_t bytes) {
    size_t ntasks = task_count(n, bytes);
    int want = omp_get_max_threads();
    if ((size_t)want > ntasks) want = (int)ntasks;
    return bytes < INFINIOP_CPU_PARALLEL_BYTES || want < 2 ? 1 : want;
}

void infiniop_cpu_parallel_for(size_t n, size_t bytes, infiniop_range_fn fn, const void *ctx) {
    if (n == 0) return;
    size_t ntasks = task_count(n, bytes);
    int want = infiniop_cpu_team_wanted(n, bytes);
    int team = want < 2 || omp_in_parallel() ? 0 : acquire(want);
    t_last_team = team ? team : 1;
    if (!team) {
        fn(ctx, 0, n);
        return;
    }
    /* Task k covers q or q + 1 items: the first n % ntasks tasks one more. */
    size_t q = n / ntasks, extra = n % ntasks;
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
    for (size_t k = 0; k < ntasks; ++k) {
        size_t i0 = k * q + (k < extra ? k : extra);
        fn(ctx, i0, i0 + q + (k < extra));
    }
    __atomic_fetch_sub(&g_in_use, team, __ATOMIC_ACQ_REL);
}

void infiniop_cpu_thread_report(int *last_team, int *peak, int *budget_out) {
    if (last_team) *last_team = t_last_team;
    if (peak) *peak = __atomic_load_n(&g_peak, __ATOMIC_RELAXED);
    if (budget_out) *budget_out = budget();
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
/* XCR0: which register states the operating system saves. */
static uint64_t xgetbv0(void) {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}
#endif

/* The widest kernel set this CPU and OS can run, from CPUID directly
 * (compilers disagree on the feature names __builtin_cpu_supports knows). */
static infiniopCpuIsa detect(void) {
    infiniopCpuIsa isa = INFINIOP_ISA_GENERIC;
#if defined(__x86_64__) && defined(__GNUC__)
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return isa;
    bool fma = c & (1u << 12), osxsave = c & (1u << 27), avx = c & (1u << 28), f16c = c & (1u << 29);
    if (!osxsave || !avx) return isa;
    uint64_t xcr0 = xgetbv0();
    bool os_avx = (xcr0 & 0x6) == 0x6, os_avx512 = (xcr0 & 0xe6) == 0xe6;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return isa;
    bool avx2 = b & (1u << 5), avx512f = b & (1u << 16), avx512dq = b & (1u << 17), avx512bw = b & (1u << 30),
         avx512vl = b & (1u << 31);
    unsigned a1 = 0, b1, c1, d1;
    bool bf16 = a >= 1 && __get_cpuid_count(7, 1, &a1, &b1, &c1, &d1) && (a1 & (1u << 5));
    if (os_avx && avx2 && fma && f16c) isa = INFINIOP_ISA_AVX2;
    if (isa == INFINIOP_ISA_AVX2 && os_avx512 && avx512f && avx512dq && avx512bw && avx512vl) isa = INFINIOP_ISA_AVX512;
    if (isa == INFINIOP_ISA_AVX512 && bf16) isa = INFINIOP_ISA_AVX512BF16;
#endif
#if defined(INFINIOP_CPU_MAX_PASS)
    /* a build with fewer kernel passes (CMake's INFINIOP_CPU_MAX_ISA) */
    if (isa > (infiniopCpuIsa)INFINIOP_CPU_MAX_PASS) isa = (infiniopCpuIsa)INFINIOP_CPU_MAX_PASS;
#endif
    const char *cap = getenv("INFINIOP_CPU_ISA");
    if (cap) {
        infiniopCpuIsa want = !strcmp(cap, "generic") ? INFINIOP_ISA_GENERIC
                           : !strcmp(cap, "avx2")  ? INFINIOP_ISA_AVX2
                           : !strcmp(cap, "avx512") ? INFINIOP_ISA_AVX512
                                                    : INFINIOP_ISA_AVX512BF16;
        if (want < isa) isa = want;
    }
    return isa;
}

/* "AuthenticAMD" in CPUID leaf 0. */
static bool detect_amd(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d)) return false;
    return b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u; /* "Auth" "enti" "cAMD" */
#else
    return false;
#endif
}

/* What the CPU reports, detected once: the kernel set in the low byte,
 * bit 8 for an AMD processor. Racing first calls compute the same value:
 * a benign relaxed store. */
static int cpu_facts(void) {
    static int cached = -1;
    int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v < 0) {
        v = (int)detect() | (detect_amd() ? 0x100 : 0);
        __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
    }
    return v;
}
infiniopCpuIsa infiniop_cpu_isa(void) { return (infiniopCpuIsa)(cpu_facts() & 0xff); }
bool infiniop_cpu_amd(void) { return (cpu_facts() & 0x100) != 0; }

const char *infiniop_cpu_isa_name(infiniopCpuIsa isa) {
    switch (isa) {
    case INFINIOP_ISA_AVX2: return "avx2";
    case INFINIOP_ISA_AVX512: return "avx512";
    case INFINIOP_ISA_AVX512BF16: return "avx512bf16";
    default: return "generic";
    }
}

/* The instruction set the CPU kernels run with (an extension of the
 * InfiniOP ABI, infiniop/version.h). */
__C __export const char *infiniopGetCpuIsa(void) {
#if defined(INFINIOP_CPU_MULTI_ISA)
    return infiniop_cpu_isa_name(infiniop_cpu_isa());
#else
    /* The compiler's baseline: the only kernels of a build without the
     * x86-64 instruction-set passes. */
    return "generic";
#endif
}

void infiniop_cpu_describe(char *buf, size_t n, size_t *len, infiniopHandle_t handle, const void *ctx) {
    (void)handle;
    const infiniopCpuWork *w = (const infiniopCpuWork *)ctx;
    infiniop_append(buf, n, len, "isa=%s threads=%zu", infiniop_cpu_isa_name(infiniop_cpu_isa()),
                    (size_t)infiniop_cpu_team_wanted(w->items, w->bytes));
}
