/*
 * test_vec.c - exhaustive check of the CPU vector layer (src/cpu/vec*.h,
 * src/ops/unary/unary_vec.h) on every instruction set this machine has:
 *   - float32 -> f16 and -> bf16 for all 2^32 inputs, and f16/bf16 -> float32
 *     for all 2^16, bit for bit against src/cpu/dtype.h; on AVX2 also the
 *     BF16 pair stores (v_put2, v_put_bf16x2_lp: every float32 and its
 *     negation) and the lane-pair loads (v_load_bf16x2_lp);
 *   - v_exp_neg for every float32 in [-87.3365, 0] against e^x (double exp,
 *     whose error is far below float32's half ulp), reporting the largest
 *     error in float32 ulps; below -87.3365 an absolute error under 2^-126;
 *   - v_sigmoid (any float32) and v_silu (the vectors v_silu_fast lets
 *     through: x >= -85 on AVX-512, |x| <= 80 elsewhere) on every 7th float32
 *     against the double formulas, largest error in ulps of the exact value
 *     (outside the subnormal range of the results, where the absolute error
 *     must stay under 2^-126, as the tests allow);
 *   - the variants for results rounded to a half type (v_exp_neg_h and,
 *     on AVX2, v_exp2_half_256 for every t <= 126 and NaN,
 *     v_sigmoid_h, v_sigmoid_fast_h, v_silu_h with half = true): largest
 *     relative error, at most 2^-12 (under half the F16 rounding step, so the rounded result
 *     is within one F16/BF16 ulp of the correctly rounded value);
 *   - v_div (the division by a row constant through Markstein's correction)
 *     and v_div_pos_inrange (positive divisors, lanes in range or zero)
 *     bit for bit against the division: every float32 significand of the
 *     divisor times random powers of two, against random dividends of every
 *     exponent, zeros, infinities, NaN and subnormals.
 * Exit status 0 when every conversion and division matches, exp stays within
 * 1.05 ulp (the FMA passes measure 1.048 over all inputs) and silu/sigmoid
 * within 3.5 ulp
 * of the exact value (so within 4 of the correctly rounded one, the
 * tests' tolerance).
 * Usage: test_vec [--quick]   (--quick: every 61st float32 only, the CTest
 * test test_vec_cpu; the full run, about 5 minutes on two cores, is
 * test_vec_full: tests/CMakeLists.txt)
 */
#include "ops/unary/unary_vec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define TV_HAVE_VALGRIND_H 1
#endif
#endif

typedef struct {
    uint64_t conv_bad, div_bad, div_fast, func_bad;
    double exp_max_ulp, sig_max_ulp, silu_max_ulp;
    double exph_rel, sigh_rel, siluh_rel; /* the half-output variants: largest relative error */
    float exp_worst, sig_worst, silu_worst, div_worst_d, div_worst_b;
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
#if defined(__AVX2__) && VL == 8
            { /* the AVX2 BF16 pair stores: v and its negation, in order (v_put2,
               * NaN lanes through its fallback) and in lane-pair order */
                for (int pass = 0; pass < 2; ++pass) { /* then the ties and their neighbours (low halves 0x8000,
                                                            * 0x7fff, 0x8001, 0), which every 61st input misses */
                    vf a = v, bn = (vf)((vu)v ^ 0x80000000u);
                    if (pass) {
                        const vu low = {0x8000u, 0x7fffu, 0x8001u, 0u, 0x8000u, 0x8000u, 0x7fffu, 0x8001u};
                        a = (vf)(((vu)v & 0xffff0000u) | low);
                        bn = (vf)(((vu)bn & 0xffff0000u) | (vu){0x8000u, 0x8000u, 0x8001u, 0x7fffu, 0u, 0x8000u, 1u, 0xffffu});
                    }
                    float xa[VL], xb[VL];
                    memcpy(xa, &a, sizeof xa);
                    memcpy(xb, &bn, sizeof xb);
                    uint16_t o[16], q[16];
                    v_put2(o, INFINI_DTYPE_BF16, a, bn, false);
                    v_put_bf16x2_lp(q, a, bn, false, true);
                    for (int l = 0; l < 4; ++l)
                        for (int k = 0; k < 2; ++k) { /* lane l + 4k of a: element l + 8k in lane-pair order */
                            uint16_t ea = infiniop_f32_to_bf16(xa[l + 4 * k]), eb = infiniop_f32_to_bf16(xb[l + 4 * k]);
                            bad += o[l + 4 * k] != ea || o[8 + l + 4 * k] != eb;
                            bad += q[l + 8 * k] != ea || q[4 + l + 8 * k] != eb;
                        }
                }
            }
#endif
            if (hi == 0 || hi == 0x8000) { /* the 16-bit inputs, once */
                vh in;
                for (int l = 0; l < VL; ++l) in[l] = (uint16_t)(lo + (uint32_t)l * step);
                vf fh = v_from_f16(in), fb = v_from_bf16(in);
#if defined(__AVX2__) && VL == 8
                { /* lane-pair loads of 16 halves */
                    uint16_t blk[16];
                    for (int l = 0; l < 16; ++l) blk[l] = (uint16_t)(lo + (uint32_t)l * step);
                    vf p0, p1;
                    v_load_bf16x2_lp(blk, &p0, &p1);
                    for (int l = 0; l < 8; ++l) {
                        float e0 = infiniop_bf16_to_f32(blk[l < 4 ? l : l + 4]), e1 = infiniop_bf16_to_f32(blk[l < 4 ? l + 4 : l + 8]);
                        float g0 = p0[l], g1 = p1[l];
                        bad += memcmp(&g0, &e0, 4) != 0;
                        bad += memcmp(&g1, &e1, 4) != 0;
                    }
                }
#endif
                for (int l = 0; l < VL; ++l) {
                    float eh = infiniop_f16_to_f32(in[l]), eb = infiniop_bf16_to_f32(in[l]);
                    float gh = fh[l], gb = fb[l]; /* lanes copied out: clang takes no lane's address */
                    bad += memcmp(&gh, &eh, 4) != 0;
                    bad += memcmp(&gb, &eb, 4) != 0;
                }
            }
            vf e = v_exp_neg(v);
            for (int l = 0; l < VL; ++l) {
                float xl = x[l];
                if (!(xl <= 0.0f)) continue;
                double ref = exp((double)xl);
                if (xl < -87.3365448f) {
                    bad += !(fabs((double)e[l] - ref) < 0x1p-126);
                    continue;
                }
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

/* 64-bit xorshift for the random inputs. */
static uint64_t rng_next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Error of got against the exact value ref in ulps of ref; in the
 * subnormal range of float32 (|ref| < 2^-126) 0 when within 2^-126, else
 * a huge value. NaN must match NaN. */
static double func_err(float got, double ref) {
    if (ref != ref) return got != got ? 0.0 : 1e30;
    if (got != got) return 1e30;
    if (fabs(ref) < 0x1p-126) return fabs((double)got - ref) < 0x1p-126 ? 0.0 : 1e30;
    if (isinf(ref)) return got == (float)ref ? 0.0 : 1e30;
    return fabs((double)got - ref) / ulp_of(fabs(ref));
}
/* Relative error of a half-output variant (results below 2^-126: 0). */
static double rel_err(float got, double ref) {
    if (ref != ref) return got != got ? 0.0 : 1.0;
    if (got != got) return 1.0;
    if (fabs(ref) < 0x1p-126 || isinf(ref)) return got == (float)ref || fabs((double)got - ref) < 0x1p-126 ? 0.0 : 1.0;
    return fabs((double)got - ref) / fabs(ref);
}
static double sig_ref(double x) { return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x)); }
static double silu_ref(double x) { return x * sig_ref(x); }

INFINIOP_ALWAYS_INLINE void check_funcs(result_t *res, uint32_t step) {
    double wsig = 0.0, wsilu = 0.0, hexp = 0.0, hsig = 0.0, hsilu = 0.0;
    float xsig = 0.0f, xsilu = 0.0f;
    uint64_t bad = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : bad) reduction(max : hexp, hsig, hsilu)
    for (uint64_t hi = 0; hi < 65536; ++hi) {
        double ws = 0.0, wl = 0.0;
        float xs = 0.0f, xl = 0.0f;
        for (uint32_t lo = 0; lo < 65536; lo += VL * step) {
            float x[VL];
            for (int l = 0; l < VL; ++l) {
                uint32_t bits = (uint32_t)(hi << 16) | (lo + (uint32_t)l * step);
                memcpy(&x[l], &bits, 4);
            }
            vf v;
            memcpy(&v, x, sizeof v);
            vf s = v_sigmoid(v), sh = v_sigmoid_h(v, true);
            vf eh = v_exp_neg_h((vf)((vu)v | 0x80000000u), true);
#if V_FMA && VL == 8
            vf e2 = v_exp2_half_256(v); /* softmax's 2^t (AVX2), t <= 126 */
#endif
            for (int l = 0; l < VL; ++l) {
#if V_FMA && VL == 8
                if (!(x[l] > 126.0f)) {
                    double re = rel_err(e2[l], exp2((double)x[l]));
                    if (re > hexp) hexp = re;
                }
#endif
                double ref = sig_ref((double)x[l]), err = func_err(s[l], ref), r = rel_err(sh[l], ref);
                if (err > ws) ws = err, xs = x[l];
                if (r > hsig) hsig = r;
                double xn = -fabs((double)x[l]);
                if (xn >= -87.3365448) {
                    double re = rel_err(eh[l], exp(xn));
                    if (re > hexp) hexp = re;
                }
            }
            if (!v_silu_fast(v)) continue; /* the scalar formula takes these */
            vf u = v_silu(v), uh = v_silu_h(v, true), fh = v_sigmoid_fast_h(v, true);
            for (int l = 0; l < VL; ++l) {
                double ref = silu_ref((double)x[l]), err = func_err(u[l], ref), r = rel_err(uh[l], ref);
                if (err > wl) wl = err, xl = x[l];
                if (r > hsilu) hsilu = r;
                double rf = rel_err(fh[l], sig_ref((double)x[l])); /* the sigmoid kernel's fast path */
                if (rf > hsig) hsig = rf;
            }
        }
#pragma omp critical
        {
            if (ws > wsig) wsig = ws, xsig = xs;
            if (wl > wsilu) wsilu = wl, xsilu = xl;
        }
    }
    res->sig_max_ulp = wsig;
    res->sig_worst = xsig;
    res->silu_max_ulp = wsilu;
    res->silu_worst = xsilu;
    res->func_bad = bad;
    res->exph_rel = hexp;
    res->sigh_rel = hsig;
    res->siluh_rel = hsilu;
}

/* v_div against the division, bit for bit (NaN: any NaN). */
INFINIOP_ALWAYS_INLINE void check_div(result_t *res, uint32_t step) {
    uint64_t bad = 0, fast = 0;
    float wd = 0.0f, wb = 0.0f;
    static const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f, -1e-45f, 1e-40f, 1.17549435e-38f,
                                    3.4028235e38f, -3.4028235e38f, 0x1p-80f, 0x1p80f, 0x1.fffffep-81f, 0x1.000002p80f, 1.0f};
    const uint32_t nb = 1u << 23;
#pragma omp parallel for schedule(dynamic, 4096) reduction(+ : bad, fast)
    for (uint32_t m = 0; m < nb; m += step) {
        uint64_t seed = 0x9e3779b97f4a7c15ull ^ ((uint64_t)m * 0x2545f4914f6cdd1dull);
        rng_next(&seed);
        for (int rep = 0; rep < 3; ++rep) {
            /* divisor: significand m, exponent in [-60, 60] (rep 0: [-45, 45] region), any sign */
            uint64_t r = rng_next(&seed);
            int ex = rep == 0 ? (int)(r % 91) - 45 : (int)(r % 255) - 126;
            uint32_t bbits = ((uint32_t)(ex + 127) << 23) | m | (uint32_t)((r >> 40) & 1) << 31;
            float b;
            memcpy(&b, &bbits, 4);
            v_div_t dv = v_div_setup(b);
            fast += dv.fast;
            float d[VL];
            for (int l = 0; l < VL; ++l) {
                uint64_t q = rng_next(&seed);
                uint32_t dbits;
                if (l == 0 && rep == 2) {
                    memcpy(&d[l], &special[(m / step) % (sizeof special / sizeof special[0])], 4);
                    continue;
                }
                if (l & 1) dbits = (uint32_t)q; /* any bits */
                else dbits = ((uint32_t)(q >> 32) & 0x807fffffu) | (uint32_t)(((q % 161) + 47) << 23); /* 2^-80..2^80 */
                memcpy(&d[l], &dbits, 4);
            }
            vf dvv;
            memcpy(&dvv, d, sizeof dvv);
            vf got = v_div(dvv, dv);
            vf want = dvv / dv.b;
            for (int l = 0; l < VL; ++l) {
                float g = got[l], w = want[l];
                bool ok = (g != g && w != w) || memcmp(&g, &w, 4) == 0;
                if (!ok) {
                    ++bad;
#pragma omp critical
                    wd = d[l], wb = b;
                }
            }
            if (dv.fast && b > 0.0f) {
                /* v_div_pos_inrange: lanes +-0 or in [2^-80, 2^80] (the ends included) */
                for (int l = 0; l < VL; ++l) {
                    uint64_t q = rng_next(&seed);
                    uint32_t dbits = ((uint32_t)(q >> 32) & 0x807fffffu) | (uint32_t)(((q % 161) + 47) << 23);
                    if (q % 16 == 0) dbits &= 0x80000000u;
                    if (q % 16 == 1) dbits = (dbits & 0x80000000u) | (q & 32 ? 0x17800000u : 0x67800000u);
                    memcpy(&d[l], &dbits, 4);
                }
                memcpy(&dvv, d, sizeof dvv);
                got = v_div_pos_inrange(dvv, dv);
                want = dvv / dv.b;
                for (int l = 0; l < VL; ++l) {
                    float g = got[l], w = want[l];
                    if (memcmp(&g, &w, 4) != 0) {
                        ++bad;
#pragma omp critical
                        wd = d[l], wb = b;
                    }
                }
            }
        }
    }
    res->div_bad = bad;
    res->div_fast = fast;
    res->div_worst_d = wd;
    res->div_worst_b = wb;
}

/* This file is compiled once per instruction set, like the kernels
 * (cpu.h's INFINIOP_CPU_PASS; tests/CMakeLists.txt): each pass defines
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
    check_funcs(r, step * 7);
    check_div(r, step);
    /* special exp inputs */
    vf s = v_splat(0.0f);
    s[1] = -INFINITY;
    s[2] = NAN;
    s[3] = -0.0f;
    vf e = v_exp_neg(s);
    r->special_ok = e[0] == 1.0f && e[1] == 0.0f && e[2] != e[2] && e[3] == 1.0f;
    /* SPEC section 3: sigmoid(-inf) = +0, sigmoid(+inf) = 1, NaN stays NaN */
    vf u = v_splat(0.0f);
    u[0] = -INFINITY;
    u[1] = INFINITY;
    u[2] = NAN;
    u[3] = -1000.0f;
    for (int half = 0; half < 2; ++half) {
        vf g = v_sigmoid_h(u, half);
        r->special_ok &= g[0] == 0.0f && !signbit(g[0]) && g[1] == 1.0f && g[2] != g[2] && g[3] == 0.0f;
    }
}

#if INFINIOP_CPU_PASS == 0
#ifdef INFINIOP_CPU_MULTI_ISA
void check_avx2(result_t *r, uint32_t step);
void check_avx512(result_t *r, uint32_t step);
void check_avx512bf16(result_t *r, uint32_t step);
/* passes left out of this build (INFINIOP_CPU_MAX_ISA): infiniop_cpu_isa()
 * never selects them */
#if defined(INFINIOP_CPU_MAX_PASS) && INFINIOP_CPU_MAX_PASS < 3
#define check_avx512bf16 check_avx512
#endif
#if defined(INFINIOP_CPU_MAX_PASS) && INFINIOP_CPU_MAX_PASS < 2
#define check_avx512 check_avx2
#endif
#else
#define check_avx512bf16 check_generic
#define check_avx2 check_generic
#define check_avx512 check_generic
#endif

int main(int argc, char **argv) {
    /* --quick or INFINIOP_TEST_QUICK=1: every 61st input; --device cpu
     * accepted (the harness passes it to every test program) */
    const char *q = getenv("INFINIOP_TEST_QUICK");
    uint32_t step = q && *q && strcmp(q, "0") != 0 ? 61 : 1;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--quick")) step = 61;
        else if (!strcmp(argv[i], "--device") && i + 1 < argc && !strcmp(argv[i + 1], "cpu")) ++i;
        else {
            fprintf(stderr, "usage: %s [--quick] [--device cpu]\n", argv[0]);
            return 2;
        }
    }
#if TV_HAVE_VALGRIND_H
    /* valgrind's floating point is not the hardware's (it ignores MXCSR's
     * FTZ/DAZ, emulates few AVX-512 instructions) and an exhaustive check
     * under it would take hours: this test checks arithmetic, not memory */
    if (RUNNING_ON_VALGRIND) {
        printf("test_vec: skipped: under valgrind (its floating point is not the hardware's)\n");
        return 77;
    }
#endif
    if (getenv("INFINIOP_TEST_UNDER_VALGRIND") && strcmp(getenv("INFINIOP_TEST_UNDER_VALGRIND"), "0") != 0) {
        printf("test_vec: skipped: under valgrind (its floating point is not the hardware's)\n");
        return 77;
    }
    int fail = 0;
    {
        /* infiniop_cpu_amd() (the vendor from CPUID, one store rule reads
         * it) against the kernel's vendor_id, where /proc/cpuinfo has one */
        FILE *f = fopen("/proc/cpuinfo", "r");
        char line[256];
        int vendor = -1;
        while (f && vendor < 0 && fgets(line, sizeof line, f))
            if (!strncmp(line, "vendor_id", 9)) vendor = strstr(line, "AuthenticAMD") != NULL;
        if (f) fclose(f);
        if (vendor >= 0) {
            printf("cpu vendor: %s, infiniop_cpu_amd() %d\n", vendor ? "AMD" : "not AMD", (int)infiniop_cpu_amd());
            fail |= (int)infiniop_cpu_amd() != vendor;
        }
    }
    check_fn fns[4] = {check_generic, check_avx2, check_avx512, check_avx512bf16};
    const char *names[4] = {"generic", "avx2", "avx512", "avx512bf16"};
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
            printf("%-8s sigmoid: max error %.3f ulp (at x = %.9g); silu: max error %.3f ulp (at x = %.9g)\n",
                   names[i], r.sig_max_ulp, r.sig_worst, r.silu_max_ulp, r.silu_worst);
            printf("%-8s half-output variants, largest relative error: exp 2^%.1f, sigmoid 2^%.1f, silu 2^%.1f\n",
                   names[i], log2(r.exph_rel + 1e-300), log2(r.sigh_rel + 1e-300), log2(r.siluh_rel + 1e-300));
            printf("%-8s division by a row constant: %llu mismatches (%llu divisors on the FMA path)", names[i],
                   (unsigned long long)r.div_bad, (unsigned long long)r.div_fast);
            if (r.div_bad) printf("; e.g. %a / %a", r.div_worst_d, r.div_worst_b);
            printf("\n");
            fail |= r.conv_bad != 0 || r.exp_max_ulp > 1.05 || !r.special_ok || r.sig_max_ulp > 3.5 ||
                    r.silu_max_ulp > 3.5 || r.div_bad != 0 || r.func_bad != 0 || r.exph_rel > 0x1p-12 ||
                    r.sigh_rel > 0x1p-12 || r.siluh_rel > 0x1p-12;
        }
    }
    printf("%s\n", fail ? "FAILED" : "OK");
    return fail;
}
#endif
