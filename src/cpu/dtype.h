/*
 * cpu/dtype.h - exact conversions between the half types and float32 on the
 * CPU, by bit operations (no dependence on compiler half support).
 * float -> half rounds to nearest even; NaN stays NaN (quiet); overflow
 * gives infinity; underflow gives subnormals or signed zero.
 */
#ifndef INFINIOP_CPU_DTYPE_H
#define INFINIOP_CPU_DTYPE_H

#include <stdint.h>
#include <string.h>

static inline uint32_t infiniop_f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static inline float infiniop_bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline float infiniop_bf16_to_f32(uint16_t h) { return infiniop_bits_f32((uint32_t)h << 16); }

static inline uint16_t infiniop_f32_to_bf16(float f) {
    uint32_t u = infiniop_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);                                                  /* round to nearest even */
    return (uint16_t)(u >> 16);
}

static inline float infiniop_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0x1f) return infiniop_bits_f32(sign | 0x7f800000u | (man << 13)); /* inf / NaN */
    if (exp != 0) return infiniop_bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
    /* zero or subnormal: man * 2^-24, exact in float32 */
    float v = (float)man * 5.9604644775390625e-8f;
    return sign ? -v : v;
}

static inline uint16_t infiniop_f32_to_f16(float f) {
    uint32_t u = infiniop_f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu)); /* NaN */
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to >= 65520: infinity */
    if (a >= 0x38800000u) {                                   /* normal half */
        uint32_t r = a - 0x38000000u;                         /* rebias exponent 127 -> 15 */
        r += 0xfffu + ((r >> 13) & 1u);
        return (uint16_t)(sign | (r >> 13));
    }
    if (a < 0x33000000u) return sign; /* below half the smallest subnormal: zero */
    /* subnormal half: value = m * 2^-24, m = round(a_value * 2^24) */
    uint32_t e = a >> 23;                  /* 102..112 */
    uint32_t m = (a & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126u - e;             /* 14..24 */
    uint32_t q = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return (uint16_t)(sign | q);
}

#endif /* INFINIOP_CPU_DTYPE_H */
