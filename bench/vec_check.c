/*
 * vec_check.c - exhaustive check of the CPU vector layer (src/cpu/vec.h)
 * on every instruction set this machine has:
 *   - float32 -> f16 and -> bf16 for all 2^32 inputs, and f16/bf16 -> float32
 *     for all 2^16, bit for bit against src/cpu/dtype.h;
 *   - v_exp_neg for every float32 in [-87.3365, 0] against the correctly
 *     rounded e^x (from double exp, whose error is far below float32's
 *     half ulp), reporting the largest error in float32 ulps; 0 below.
 * Exit status 0 when every conversion matches and exp stays within 1 ulp.
 * Usage: vec_check [--quick]   (--quick: every 61st float32 only)
 */
#include "cpu/vec.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    uint64_t conv_bad;
    double exp_max_ulp;
    float exp_worst;
    int special_ok;
} result_t;

static double ulp_of(double v) {
    int e;
    frexp(v, &e);            /* v = m 2^e, 0.5 <= m < 1 */
    if (e - 24 < -149) return ldexp(1.0, -149);
    return ldexp(1.0, e - 24);
}

INFINIOP_ALWAYS_INLINE void check_body(result_t *res, uint32_t step) {
    uint64_t bad = 0;
    double worst = 0.0;
    float worst_x = 0.0f;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : bad)
    for (uint64_t hi = 0; hi < 65536; ++hi) {
        double w = 0.0;
        float wx = 0.0f;
        for (uint32_t lo = 0; lo < 65536; lo += VL * step) {
            uint32_t bits[VL];
            float x[VL];
            for (int l = 0; l < VL; ++l) bits[l] = (uint32_t)(hi << 16) | (lo + (uint32_t)l * step);
            memcpy(x, bits, sizeof x);
            vf v;
            memcpy(&v, x, sizeof v);
            vh h = v_to_f16(v), b = v_to_bf16(v);
            for (int l = 0; l < VL; ++l) {
                bad += h[l] != infiniop_f32_to_f16(x[l]);
                bad += b[l] != infiniop_f32_to_bf16(x[l]);
            }
            if (hi == 0 || hi == 0x8000) { /* the 16-bit inputs, once */
                vh in;
                for (int l = 0; l < VL; ++l) in[l] = (uint16_t)(lo + (uint32_t)l * step);
                vf fh = v_from_f16(in), fb = v_from_bf16(in);
                for (int l = 0; l < VL; ++l) {
                    float eh = infiniop_f16_to_f32(in[l]), eb = infiniop_bf16_to_f32(in[l]);
                    bad += memcmp(&fh[l], &eh, 4) != 0;
                    bad += memcmp(&fb[l], &eb, 4) != 0;
                }
            }
            vf e = v_exp_neg(v);
            for (int l = 0; l < VL; ++l) {
                float xl = x[l];
                if (!(xl <= 0.0f)) continue;
                if (xl < -87.3365448f) {
                    bad += e[l] != 0.0f;
                    continue;
                }
                double ref = exp((double)xl);
                double err = fabs((double)e[l] - ref) / ulp_of(ref);
                if (err > w) w = err, wx = xl;
            }
        }
#pragma omp critical
        if (w > worst) worst = w, worst_x = wx;
    }
    res->conv_bad = bad;
    res->exp_max_ulp = worst;
    res->exp_worst = worst_x;
}

/* This file is compiled once per instruction set, like the kernels
 * (cpu.h's INFINIOP_CPU_PASS; bench/CMakeLists.txt): each pass defines
 * check_<isa>, pass 0 also main. */
typedef void (*check_fn)(result_t *, uint32_t);
#if INFINIOP_CPU_PASS == 3
#define CHECK_NAME check_avx512bf16
#elif INFINIOP_CPU_PASS == 2
#define CHECK_NAME check_avx512
#elif INFINIOP_CPU_PASS == 1
#define CHECK_NAME check_avx2
#else
#define CHECK_NAME check_generic
#endif
void CHECK_NAME(result_t *r, uint32_t step);
void CHECK_NAME(result_t *r, uint32_t step) {
    check_body(r, step);
    /* special exp inputs */
    vf s = v_splat(0.0f);
    s[1] = -INFINITY;
    s[2] = NAN;
    s[3] = -0.0f;
    vf e = v_exp_neg(s);
    r->special_ok = e[0] == 1.0f && e[1] == 0.0f && e[2] != e[2] && e[3] == 1.0f;
}

#if INFINIOP_CPU_PASS == 0
#ifdef INFINIOP_CPU_MULTI_ISA
void check_avx2(result_t *r, uint32_t step);
void check_avx512(result_t *r, uint32_t step);
void check_avx512bf16(result_t *r, uint32_t step);
#else
#define check_avx512bf16 check_generic
#define check_avx2 check_generic
#define check_avx512 check_generic
#endif

int main(int argc, char **argv) {
    uint32_t step = argc > 1 && !strcmp(argv[1], "--quick") ? 61 : 1;
    check_fn fns[4] = {check_generic, check_avx2, check_avx512, check_avx512bf16};
    const char *names[4] = {"generic", "avx2", "avx512", "avx512bf16"};
    int fail = 0;
    for (int i = 0; i <= (int)infiniop_cpu_isa(); ++i) {
        for (int ftz = 0; ftz < 2; ++ftz) {
            result_t r;
#if defined(__x86_64__) && defined(__GNUC__)
            /* the conversions must not depend on MXCSR: once more with
             * FTZ and DAZ set (in every OpenMP thread), every 7th input */
            unsigned csr = __builtin_ia32_stmxcsr();
#pragma omp parallel
            __builtin_ia32_ldmxcsr(ftz ? csr | 0x8040u : csr & ~0x8040u);
            fns[i](&r, ftz ? step * 7 : step);
#pragma omp parallel
            __builtin_ia32_ldmxcsr(csr & ~0x8040u);
            if (ftz) {
                printf("%-8s conversions with FTZ+DAZ: %llu mismatches\n", names[i], (unsigned long long)r.conv_bad);
                fail |= r.conv_bad != 0;
                continue;
            }
#else
            if (ftz) continue;
            fns[i](&r, step);
#endif
            printf("%-8s conversions: %llu mismatches; exp: max error %.3f ulp (at x = %.9g)%s\n", names[i],
                   (unsigned long long)r.conv_bad, r.exp_max_ulp, r.exp_worst,
                   r.special_ok ? "" : "; special inputs WRONG");
            fail |= r.conv_bad != 0 || r.exp_max_ulp > 1.0 || !r.special_ok;
        }
    }
    printf("%s\n", fail ? "FAILED" : "OK");
    return fail;
}
#endif
