/*
 * cpu/cpu.h - helpers shared by the CPU kernels: element loads and stores
 * of every floating dtype through float, the threading policy, and the
 * run-time choice of instruction set (vector code itself: cpu/vec.h).
 */
#ifndef INFINIOP_CPU_CPU_H
#define INFINIOP_CPU_CPU_H

#include "core/common.h"
#include "core/layout.h"
#include "cpu/dtype.h"

#define INFINIOP_ALWAYS_INLINE static inline __attribute__((always_inline))

/* Below this many bytes of traffic, a call runs on the calling thread: at
 * ~20 GB/s per core 1 MiB is ~50 us of work, while waking the pool costs
 * microseconds when its threads spin and up to a scheduler tick when they
 * sleep or share the cores with another OpenMP runtime in the process
 * (e.g. torch's); numbers in docs/PERFORMANCE.md. */
#define INFINIOP_CPU_PARALLEL_BYTES ((size_t)1 << 20)
/* Bytes of traffic per parallel task: a few hundred KiB keeps each task's
 * rows in the core's L2 while the hardware prefetchers stream, and gives
 * enough tasks to balance uneven rows (causal softmax). */
#define INFINIOP_CPU_TASK_BYTES ((size_t)1 << 18)
/* Calls whose outputs exceed this many bytes write them with streaming
 * (non-temporal) stores: the outputs cannot stay in the caches anyway, and
 * skipping the read-for-ownership of each destination line saves a third
 * of the traffic. Smaller outputs stay in cache for their consumer. One
 * exception, measured: the AVX2 pass of layer_norm keeps ordinary stores
 * for BF16 outputs (ops/layer_norm/cpu.c, rows_typed). */
#define INFINIOP_CPU_STREAM_BYTES ((size_t)8 << 20)

/* ---------------------------------------------------------------- threading */
/* A kernel over items [i0, i1) (rows, or elements) of one call; ctx carries
 * the call's info and pointers. */
typedef void (*infiniop_range_fn)(const void *ctx, size_t i0, size_t i1);

/* Run fn over [0, n). bytes is the call's memory traffic. The thread rule
 * (docs/PERFORMANCE.md, "Threads of the caller"):
 *  - a call of less than INFINIOP_CPU_PARALLEL_BYTES, or one made from
 *    inside an OpenMP parallel region of the caller (omp_in_parallel()),
 *    runs on the calling thread alone: the caller's threads already occupy
 *    the cores, and a nested team would multiply them;
 *  - otherwise the call takes threads from one process-wide budget of
 *    N = omp_get_max_threads() (as first read: OMP_NUM_THREADS, else the
 *    cores): min(its caller's omp_get_max_threads(), its tasks, the free
 *    ones), counting its calling thread, and gives them back when it
 *    returns; with fewer than 2 free it runs on its calling thread alone.
 *    So calls from many caller threads at once hold at most N threads
 *    together (plus, each, the calling thread it was made on), never
 *    N per call.
 * The team works through tasks of about INFINIOP_CPU_TASK_BYTES,
 * dynamically scheduled (libgomp keeps its threads between calls). */
void infiniop_cpu_parallel_for(size_t n, size_t bytes, infiniop_range_fn fn, const void *ctx);
/* The team infiniop_cpu_parallel_for asks the budget for, for n items and
 * `bytes` of traffic outside the caller's parallel region (1: the calling
 * thread alone); the budget may grant fewer. */
int infiniop_cpu_team_wanted(size_t n, size_t bytes);

/* Test hook (exported, not in the public headers; tests/test_threads.c):
 * the team size of the calling thread's last parallel_for (1: it ran on the
 * calling thread), the most threads that calls in flight ever held together,
 * and the budget N. NULL pointers are skipped. */
__attribute__((visibility("default"))) void infiniop_cpu_thread_report(int *last_team, int *peak, int *budget);

/* ---------------------------------------------------------------- instruction sets */
typedef enum {
    INFINIOP_ISA_GENERIC = 0, /* the compiler's baseline (SSE2 on x86-64) */
    INFINIOP_ISA_AVX2 = 1,    /* AVX2, FMA, F16C */
    INFINIOP_ISA_AVX512 = 2,  /* AVX-512 F, BW, DQ, VL (and the AVX2 set) */
    INFINIOP_ISA_AVX512BF16 = 3, /* and AVX-512 BF16 */
} infiniopCpuIsa;

/* The best instruction set this CPU has, from CPUID, detected once. The
 * environment variable INFINIOP_CPU_ISA=generic|avx2|avx512|avx512bf16 caps it (to
 * test every path on one machine). */
infiniopCpuIsa infiniop_cpu_isa(void);
/* An AMD processor (CPUID vendor): the one store rule measured to differ by
 * vendor reads it (layer_norm/cpu.c). */
bool infiniop_cpu_amd(void);
/* Its name: "generic", "avx2", "avx512", "avx512bf16". */
const char *infiniop_cpu_isa_name(infiniopCpuIsa isa);

/* ---------------------------------------------------------------- verbose line */
/* What a CPU call moves: `items` rows or elements, `bytes` of traffic. */
typedef struct {
    size_t items, bytes;
} infiniopCpuWork;
/* The CPU backend's part of the INFINIOP_VERBOSE line (an
 * infiniopDescribeFn, core/create.h; ctx: an infiniopCpuWork): the
 * instruction set and the threads the call would ask for,
 * "isa=avx2 threads=1". */
void infiniop_cpu_describe(char *buf, size_t n, size_t *len, infiniopHandle_t handle, const void *ctx);

/* Which compile of a kernel source this is: src/ops/<op>/cpu.c is compiled
 * once for the baseline (pass 0: it also holds the operator's entry point
 * and the table of kernels) and, on x86-64 with GCC or Clang, once more for
 * AVX2 (pass 1), AVX-512 (pass 2) and AVX-512 + BF16 (pass 3) with those -m flags (the top-level
 * CMakeLists.txt), so each pass's vector code (cpu/vec.h) is native code
 * of its width. */
#if defined(INFINIOP_CPU_PASS_avx512bf16)
#define INFINIOP_CPU_PASS 3
#elif defined(INFINIOP_CPU_PASS_avx512)
#define INFINIOP_CPU_PASS 2
#elif defined(INFINIOP_CPU_PASS_avx2)
#define INFINIOP_CPU_PASS 1
#else
#define INFINIOP_CPU_PASS 0
#endif

/* Define the kernel NAME (a name unique in the library), the always-inline
 * function BODY(ctx, i0, i1) compiled in this pass: NAME_avx512bf16,
 * NAME_avx512, NAME_avx2 or NAME_generic. In pass 0 it also defines `static
 * const infiniop_range_fn NAME[4]`, indexed by infiniopCpuIsa (the generic kernel
 * where the build has no other passes). */
#if INFINIOP_CPU_PASS == 3
#define INFINIOP_CPU_KERNEL(NAME, BODY)                                                                                \
    void NAME##_avx512bf16(const void *ctx, size_t i0, size_t i1) { BODY(ctx, i0, i1); }                              \
    void NAME##_avx512bf16(const void *ctx, size_t i0, size_t i1)
#elif INFINIOP_CPU_PASS == 2
#define INFINIOP_CPU_KERNEL(NAME, BODY)                                                                                \
    void NAME##_avx512(const void *ctx, size_t i0, size_t i1) { BODY(ctx, i0, i1); }                                  \
    void NAME##_avx512(const void *ctx, size_t i0, size_t i1)
#elif INFINIOP_CPU_PASS == 1
#define INFINIOP_CPU_KERNEL(NAME, BODY)                                                                                \
    void NAME##_avx2(const void *ctx, size_t i0, size_t i1) { BODY(ctx, i0, i1); }                                    \
    void NAME##_avx2(const void *ctx, size_t i0, size_t i1)
#elif defined(INFINIOP_CPU_MULTI_ISA)
/* A build with passes up to INFINIOP_CPU_MAX_PASS only (CMake's
 * INFINIOP_CPU_MAX_ISA) fills the table's higher entries with its widest
 * pass; infiniop_cpu_isa() never returns them there. */
#if !defined(INFINIOP_CPU_MAX_PASS) || INFINIOP_CPU_MAX_PASS >= 3
#define INFINIOP_CPU_FN_3(NAME) NAME##_avx512bf16
#else
#define INFINIOP_CPU_FN_3(NAME) INFINIOP_CPU_FN_2(NAME)
#endif
#if !defined(INFINIOP_CPU_MAX_PASS) || INFINIOP_CPU_MAX_PASS >= 2
#define INFINIOP_CPU_FN_2(NAME) NAME##_avx512
#else
#define INFINIOP_CPU_FN_2(NAME) NAME##_avx2
#endif
#define INFINIOP_CPU_KERNEL(NAME, BODY)                                                                                \
    void NAME##_avx512bf16(const void *ctx, size_t i0, size_t i1);                                                     \
    void NAME##_avx512(const void *ctx, size_t i0, size_t i1);                                                         \
    void NAME##_avx2(const void *ctx, size_t i0, size_t i1);                                                           \
    static void NAME##_generic(const void *ctx, size_t i0, size_t i1) { BODY(ctx, i0, i1); }                          \
    static const infiniop_range_fn NAME[4] = {NAME##_generic, NAME##_avx2, INFINIOP_CPU_FN_2(NAME),                    \
                                              INFINIOP_CPU_FN_3(NAME)}
#else
#define INFINIOP_CPU_KERNEL(NAME, BODY)                                                                                \
    static void NAME##_generic(const void *ctx, size_t i0, size_t i1) { BODY(ctx, i0, i1); }                          \
    static const infiniop_range_fn NAME[4] = {NAME##_generic, NAME##_generic, NAME##_generic, NAME##_generic}
#endif

/* infiniop_row_offset (core/layout.h) without its division per row in the
 * common case of one merged row dimension (contiguous rows of any rank):
 * a 64-bit division per tensor per row was ~15% of a short causal softmax
 * row. */
INFINIOP_ALWAYS_INLINE ptrdiff_t infiniop_cpu_row_offset(const infiniopRowLayout *L, int t, size_t r) {
    if (L->ndims == 1) return (ptrdiff_t)r * L->stride[0][t];
    return infiniop_row_offset(L, t, r);
}

/* The element size of a kernel dtype (F16, BF16, F32, F64), inline: with a
 * constant dtype it folds to a shift. core's infiniop_dtype_size is a call
 * into another object, made per row it cost the short-row kernels (a call
 * and a multiply a row; add_rms_norm bf16 rows of 128: bench/NOTES.md). */
INFINIOP_ALWAYS_INLINE ptrdiff_t infiniop_cpu_elt_size(infiniDtype_t t) {
    return t == INFINI_DTYPE_F16 || t == INFINI_DTYPE_BF16 ? 2 : t == INFINI_DTYPE_F64 ? 8 : 4;
}

/* Load element i of an F16, BF16 or F32 array as float. With a constant
 * dtype (the kernels are instantiated per dtype) the switch folds away. */
INFINIOP_ALWAYS_INLINE float infiniop_load_f32(const void *p, ptrdiff_t i, infiniDtype_t t) {
    switch (t) {
    case INFINI_DTYPE_F16: return infiniop_f16_to_f32(((const uint16_t *)p)[i]);
    case INFINI_DTYPE_BF16: return infiniop_bf16_to_f32(((const uint16_t *)p)[i]);
    default: return ((const float *)p)[i];
    }
}

/* Store float v, rounded once (nearest even) to dtype t, as element i. */
INFINIOP_ALWAYS_INLINE void infiniop_store_f32(void *p, ptrdiff_t i, infiniDtype_t t, float v) {
    switch (t) {
    case INFINI_DTYPE_F16: ((uint16_t *)p)[i] = infiniop_f32_to_f16(v); break;
    case INFINI_DTYPE_BF16: ((uint16_t *)p)[i] = infiniop_f32_to_bf16(v); break;
    default: ((float *)p)[i] = v; break;
    }
}

/* Call BODY with a compile-time-constant dtype variable NAME for F16, BF16
 * and F32, so always-inline kernels are specialised per dtype. */
#define INFINIOP_DISPATCH_HALF_FLOAT(dt, NAME, BODY)                                                                   \
    do {                                                                                                               \
        switch (dt) {                                                                                                  \
        case INFINI_DTYPE_F16: { const infiniDtype_t NAME = INFINI_DTYPE_F16; BODY; break; }                           \
        case INFINI_DTYPE_BF16: { const infiniDtype_t NAME = INFINI_DTYPE_BF16; BODY; break; }                         \
        default: { const infiniDtype_t NAME = INFINI_DTYPE_F32; BODY; break; }                                          \
        }                                                                                                              \
    } while (0)

#endif /* INFINIOP_CPU_CPU_H */
