/*
 * cpu/cpu.h - helpers shared by the CPU kernels: element loads and stores
 * of every floating dtype through float, and the threading policy.
 */
#ifndef INFINIOP_CPU_CPU_H
#define INFINIOP_CPU_CPU_H

#include "core/common.h"
#include "cpu/dtype.h"

#define INFINIOP_ALWAYS_INLINE static inline __attribute__((always_inline))

/* Below this many bytes of traffic, a call runs on the calling thread:
 * starting threads would cost more than the work. */
#define INFINIOP_CPU_PARALLEL_BYTES ((size_t)1 << 17)

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
