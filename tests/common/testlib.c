/*
 * testlib.c - see testlib.h.
 */
#define _POSIX_C_SOURCE 200809L
#include "testlib.h"

#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define TL_HAVE_VALGRIND_H 1
#endif
#endif

/* ================================================================== RNG */
static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void tl_rng_seed(tl_rng *r, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t tl_rng_u64(tl_rng *r) {
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

size_t tl_rng_below(tl_rng *r, size_t n) { return n ? (size_t)(tl_rng_u64(r) % n) : 0; }

double tl_rng_uniform(tl_rng *r, double lo, double hi) {
    double u = (double)(tl_rng_u64(r) >> 11) * 0x1.0p-53;
    return lo + (hi - lo) * u;
}

int tl_rng_chance(tl_rng *r, double p) { return tl_rng_uniform(r, 0.0, 1.0) < p; }

size_t tl_rng_pick(tl_rng *r, const size_t *values, size_t n) { return values[tl_rng_below(r, n)]; }

/* ================================================================== dtypes */
size_t tl_dtype_size(infiniDtype_t dt) {
    switch (dt) {
    case INFINI_DTYPE_BYTE: case INFINI_DTYPE_BOOL: case INFINI_DTYPE_I8: case INFINI_DTYPE_U8:
    case INFINI_DTYPE_F8: return 1;
    case INFINI_DTYPE_I16: case INFINI_DTYPE_U16: case INFINI_DTYPE_F16: case INFINI_DTYPE_BF16:
    case INFINI_DTYPE_C16: return 2;
    case INFINI_DTYPE_I32: case INFINI_DTYPE_U32: case INFINI_DTYPE_F32: case INFINI_DTYPE_C32: return 4;
    case INFINI_DTYPE_I64: case INFINI_DTYPE_U64: case INFINI_DTYPE_F64: case INFINI_DTYPE_C64: return 8;
    case INFINI_DTYPE_C128: return 16;
    default: return 0;
    }
}

const char *tl_dtype_name(infiniDtype_t dt) {
    switch (dt) {
    case INFINI_DTYPE_F16: return "F16";
    case INFINI_DTYPE_BF16: return "BF16";
    case INFINI_DTYPE_F32: return "F32";
    case INFINI_DTYPE_F64: return "F64";
    case INFINI_DTYPE_I32: return "I32";
    default: return "dtype?";
    }
}

int tl_dtype_is_float(infiniDtype_t dt) {
    return dt == INFINI_DTYPE_F16 || dt == INFINI_DTYPE_BF16 || dt == INFINI_DTYPE_F32 || dt == INFINI_DTYPE_F64;
}

double tl_f16_to_double(uint16_t h) {
    int sign = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v;
    if (e == 0) v = ldexp((double)m, -24);
    else if (e == 31) v = m ? NAN : INFINITY;
    else v = ldexp((double)(1024 + m), e - 25);
    return sign ? -v : v;
}

double tl_bf16_to_double(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return (double)f;
}

/* Round d to a binary format with p significand bits, normal exponent range
 * [emin, emax], subnormals, ties to even; overflow gives +-inf. */
static double round_format(double d, int p, int emin, int emax) {
    if (isnan(d) || isinf(d) || d == 0.0) return d;
    int e;
    frexp(fabs(d), &e); /* |d| = m * 2^e, m in [0.5, 1): leading bit 2^(e-1) */
    int lead = e - 1;
    if (lead < emin) lead = emin;
    int qe = lead - (p - 1); /* exponent of the quantum */
    double r = ldexp(nearbyint(ldexp(d, -qe)), qe);
    if (fabs(r) >= ldexp(1.0, emax + 1)) return copysign(INFINITY, d);
    return r;
}

uint16_t tl_double_to_f16(double d) {
    uint16_t sign = signbit(d) ? 0x8000 : 0;
    if (isnan(d)) return sign | 0x7e00;
    double r = round_format(d, 11, -14, 15);
    if (isinf(r)) return sign | 0x7c00;
    double a = fabs(r);
    if (a < 0x1p-14) return sign | (uint16_t)ldexp(a, 24); /* subnormal (or zero) */
    int e;
    frexp(a, &e);
    int lead = e - 1;
    uint16_t m = (uint16_t)(ldexp(a, -lead) * 1024.0 - 1024.0);
    return sign | (uint16_t)((lead + 15) << 10) | m;
}

uint16_t tl_double_to_bf16(double d) {
    uint16_t sign = signbit(d) ? 0x8000 : 0;
    if (isnan(d)) return sign | 0x7fc0;
    double r = round_format(d, 8, -126, 127);
    float f = (float)r; /* exact: every bf16 value is a float32 value */
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}

double tl_round_to(infiniDtype_t dt, double d) {
    switch (dt) {
    case INFINI_DTYPE_F16: return isnan(d) ? d : round_format(d, 11, -14, 15);
    case INFINI_DTYPE_BF16: return isnan(d) ? d : round_format(d, 8, -126, 127);
    case INFINI_DTYPE_F32: return (double)(float)d; /* IEEE conversion: nearest even */
    default: return d;
    }
}

double tl_load(infiniDtype_t dt, const void *p) {
    switch (dt) {
    case INFINI_DTYPE_F16: { uint16_t h; memcpy(&h, p, 2); return tl_f16_to_double(h); }
    case INFINI_DTYPE_BF16: { uint16_t h; memcpy(&h, p, 2); return tl_bf16_to_double(h); }
    case INFINI_DTYPE_F32: { float f; memcpy(&f, p, 4); return f; }
    case INFINI_DTYPE_F64: { double f; memcpy(&f, p, 8); return f; }
    default: abort();
    }
}

void tl_store(infiniDtype_t dt, void *p, double v) {
    switch (dt) {
    case INFINI_DTYPE_F16: { uint16_t h = tl_double_to_f16(v); memcpy(p, &h, 2); break; }
    case INFINI_DTYPE_BF16: { uint16_t h = tl_double_to_bf16(v); memcpy(p, &h, 2); break; }
    case INFINI_DTYPE_F32: { float f = (float)v; memcpy(p, &f, 4); break; }
    case INFINI_DTYPE_F64: memcpy(p, &v, 8); break;
    default: abort();
    }
}

uint64_t tl_bits(infiniDtype_t dt, const void *p) {
    uint64_t u = 0;
    size_t n = tl_dtype_size(dt);
    if (n == 2) { uint16_t h; memcpy(&h, p, 2); u = h; }
    else if (n == 4) { uint32_t w; memcpy(&w, p, 4); u = w; }
    else if (n == 8) memcpy(&u, p, 8);
    else if (n == 1) u = *(const unsigned char *)p;
    return u;
}

static void fmt_params(infiniDtype_t dt, int *p, int *emin) {
    switch (dt) {
    case INFINI_DTYPE_F16: *p = 11; *emin = -14; break;
    case INFINI_DTYPE_BF16: *p = 8; *emin = -126; break;
    case INFINI_DTYPE_F32: *p = 24; *emin = -126; break;
    default: *p = 53; *emin = -1022; break;
    }
}

double tl_ulp(infiniDtype_t dt, double v) {
    int p, emin;
    fmt_params(dt, &p, &emin);
    if (isinf(v) || isnan(v)) return INFINITY;
    int lead = emin;
    if (v != 0.0) {
        int e;
        frexp(fabs(v), &e);
        if (e - 1 > lead) lead = e - 1;
    }
    return ldexp(1.0, lead - (p - 1));
}

double tl_min_normal(infiniDtype_t dt) {
    int p, emin;
    fmt_params(dt, &p, &emin);
    (void)p;
    return ldexp(1.0, emin);
}

static int64_t ordered(infiniDtype_t dt, double v) {
    unsigned char buf[8];
    tl_store(dt, buf, v);
    uint64_t u = tl_bits(dt, buf);
    size_t n = tl_dtype_size(dt);
    uint64_t signbit_ = (uint64_t)1 << (8 * n - 1);
    int64_t mag = (int64_t)(u & (signbit_ - 1));
    return (u & signbit_) ? -mag : mag;
}

double tl_ulp_distance(infiniDtype_t dt, double a, double b) {
    if (isnan(a) || isnan(b)) return INFINITY;
    int64_t x = ordered(dt, a), y = ordered(dt, b);
    return x > y ? (double)(x - y) : (double)(y - x);
}

uint64_t tl_poison_bits(infiniDtype_t dt) {
    switch (dt) {
    case INFINI_DTYPE_F16: return 0x7d5a;             /* sNaN, payload 0x15a */
    case INFINI_DTYPE_BF16: return 0x7f9a;            /* sNaN, payload 0x1a */
    case INFINI_DTYPE_F32: return 0x7fa5a5a5u;        /* sNaN */
    case INFINI_DTYPE_F64: return 0x7ff4a5a5a5a5a5a5ull; /* sNaN */
    default: return 0xa5a5a5a5a5a5a5a5ull;
    }
}

static void put_bits(infiniDtype_t dt, void *p, uint64_t bits) {
    size_t n = tl_dtype_size(dt);
    if (n == 2) { uint16_t h = (uint16_t)bits; memcpy(p, &h, 2); }
    else if (n == 4) { uint32_t w = (uint32_t)bits; memcpy(p, &w, 4); }
    else if (n == 8) memcpy(p, &bits, 8);
    else memset(p, (int)(bits & 0xff), n);
}

int tl_is_poison(infiniDtype_t dt, const void *p) { return tl_bits(dt, p) == tl_poison_bits(dt); }

/* ================================================================== layouts */
size_t tl_numel(size_t ndim, const size_t *shape) {
    size_t n = 1;
    for (size_t i = 0; i < ndim; i++) n *= shape[i];
    return n;
}

void tl_contiguous_strides(size_t ndim, const size_t *shape, ptrdiff_t *strides) {
    ptrdiff_t s = 1;
    for (size_t i = ndim; i-- > 0;) {
        strides[i] = s;
        s *= (ptrdiff_t)(shape[i] ? shape[i] : 1);
    }
}

void tl_make_strides(tl_rng *r, size_t ndim, const size_t *shape, unsigned flags, ptrdiff_t *strides) {
    if (ndim == 0) return;
    size_t order[TL_MAXDIM]; /* memory order, outermost first */
    for (size_t i = 0; i < ndim; i++) order[i] = i;
    size_t nperm = 0;
    if ((flags & TL_L_PERMUTE_ALL) && tl_rng_chance(r, 0.7)) nperm = ndim;
    else if ((flags & (TL_L_PERMUTE_LEAD | TL_L_PERMUTE_ALL)) && tl_rng_chance(r, 0.7)) nperm = ndim - 1;
    for (size_t i = nperm; i > 1; i--) { /* Fisher-Yates on order[0..nperm) */
        size_t j = tl_rng_below(r, i);
        size_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    int pad = (flags & TL_L_PAD) && tl_rng_chance(r, 0.7);
    ptrdiff_t cur = 1;
    if ((flags & TL_L_LAST_STRIDED) && tl_rng_chance(r, 0.6)) cur = 2 + (ptrdiff_t)tl_rng_below(r, 2);
    for (size_t k = ndim; k-- > 0;) {
        size_t d = order[k];
        strides[d] = cur;
        cur = cur * (ptrdiff_t)(shape[d] ? shape[d] : 1);
        if (pad && tl_rng_chance(r, 0.6)) cur += 1 + (ptrdiff_t)tl_rng_below(r, 5);
    }
    for (size_t d = 0; d < ndim; d++) {
        int last = d == ndim - 1;
        if (!last && (flags & TL_L_NEG_LEAD) && tl_rng_chance(r, 0.35)) strides[d] = -strides[d];
        if (last && (flags & TL_L_NEG_LAST) && tl_rng_chance(r, 0.35)) strides[d] = -strides[d];
        if (!last && (flags & TL_L_ZERO_LEAD) && tl_rng_chance(r, 0.2)) strides[d] = 0;
    }
}

const size_t tl_odd_sizes[5] = {1, 3, 127, 4097, 65537};

void tl_random_dims(tl_rng *r, size_t n, size_t *dims, size_t max_rows) {
    static const size_t choices[] = {1, 1, 2, 3, 4, 5, 7, 8, 13, 16, 31, 64};
    size_t prod = 1;
    for (size_t i = 0; i < n; i++) {
        size_t d = choices[tl_rng_below(r, sizeof choices / sizeof choices[0])];
        while (d > 1 && prod * d > max_rows) d /= 2;
        if (d == 0) d = 1;
        dims[i] = d;
        prod *= d;
    }
}

void tl_row_shape_directed(tl_rng *r, size_t ndim, size_t *shape, size_t D, size_t max_numel) {
    shape[ndim - 1] = D;
    tl_random_dims(r, ndim - 1, shape, D >= 65537 ? (tl_quick ? 1 : 3) : max_numel / D);
}

size_t tl_row_shape_random(tl_rng *r, size_t *ndim, size_t *shape, size_t max_numel) {
    size_t nd = *ndim = 1 + tl_rng_below(r, 5);
    size_t D = tl_rng_chance(r, 0.4) ? tl_odd_sizes[tl_rng_below(r, 4)] : 1 + tl_rng_below(r, 700);
    shape[nd - 1] = D;
    tl_random_dims(r, nd - 1, shape, max_numel / D ? max_numel / D : 1);
    if (nd > 1 && tl_rng_chance(r, 0.03)) shape[tl_rng_below(r, nd - 1)] = 0;
    return D;
}

ptrdiff_t tl_offset_of(size_t ndim, const size_t *shape, const ptrdiff_t *strides, size_t linear) {
    ptrdiff_t off = 0;
    for (size_t i = ndim; i-- > 0;) {
        size_t n = shape[i];
        off += (ptrdiff_t)(linear % n) * strides[i];
        linear /= n;
    }
    return off;
}

/* "<open>v0,v1,...<close>" into buf (n bytes, cut short where full): the
 * values from shape, or from strides where shape is NULL. */
static char *fmt_list(char *buf, size_t n, size_t ndim, const size_t *shape, const ptrdiff_t *strides,
                      const char *open, const char *close) {
    size_t k = 0;
    k += (size_t)snprintf(buf + k, n - k, "%s", open);
    for (size_t i = 0; i < ndim && k < n; i++)
        k += shape ? (size_t)snprintf(buf + k, n - k, "%s%zu", i ? "," : "", shape[i])
                   : (size_t)snprintf(buf + k, n - k, "%s%td", i ? "," : "", strides[i]);
    if (k < n) snprintf(buf + k, n - k, "%s", close);
    return buf;
}

char *tl_fmt_dims(char *buf, size_t n, size_t ndim, const size_t *shape) {
    return fmt_list(buf, n, ndim, shape, NULL, "[", "]");
}

char *tl_fmt_strides(char *buf, size_t n, size_t ndim, const ptrdiff_t *strides) {
    return fmt_list(buf, n, ndim, NULL, strides, "(", ")");
}

/* ================================================================== program state */
infiniDevice_t tl_device = INFINI_DEVICE_CPU;
int tl_quick = 0;
uint64_t tl_seed = 0;
infiniopHandle_t tl_handle = NULL;
static const char *g_program = "test";
static atomic_size_t g_passed, g_failed, g_orphan_failures;
static _Thread_local char t_case[512];
static _Thread_local int t_in_case;
static _Thread_local size_t t_case_fail;

double tl_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *status_name(infiniStatus_t s) {
    switch (s) {
    case INFINI_STATUS_SUCCESS: return "SUCCESS";
    case INFINI_STATUS_INTERNAL_ERROR: return "INTERNAL_ERROR";
    case INFINI_STATUS_NOT_IMPLEMENTED: return "NOT_IMPLEMENTED";
    case INFINI_STATUS_BAD_PARAM: return "BAD_PARAM";
    case INFINI_STATUS_NULL_POINTER: return "NULL_POINTER";
    case INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED: return "DEVICE_TYPE_NOT_SUPPORTED";
    case INFINI_STATUS_DEVICE_NOT_FOUND: return "DEVICE_NOT_FOUND";
    case INFINI_STATUS_DEVICE_NOT_INITIALIZED: return "DEVICE_NOT_INITIALIZED";
    case INFINI_STATUS_DEVICE_ARCHITECTURE_NOT_SUPPORTED: return "DEVICE_ARCHITECTURE_NOT_SUPPORTED";
    case INFINI_STATUS_BAD_TENSOR_DTYPE: return "BAD_TENSOR_DTYPE";
    case INFINI_STATUS_BAD_TENSOR_SHAPE: return "BAD_TENSOR_SHAPE";
    case INFINI_STATUS_BAD_TENSOR_STRIDES: return "BAD_TENSOR_STRIDES";
    case INFINI_STATUS_INSUFFICIENT_WORKSPACE: return "INSUFFICIENT_WORKSPACE";
    default: return "?";
    }
}

static void vreport(const char *fmt, va_list ap) {
    /* one fprintf per line so that threads do not interleave mid-line */
    char msg[2048];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (t_in_case) {
        if (t_case_fail <= TL_MAX_MESSAGES_PER_CASE)
            fprintf(stderr, "FAIL [%s] %s\n", t_case, msg);
        else if (t_case_fail == TL_MAX_MESSAGES_PER_CASE + 1)
            fprintf(stderr, "FAIL [%s] (further failures of this case not shown)\n", t_case);
    } else {
        fprintf(stderr, "FAIL %s\n", msg);
    }
}

void tl_fail(const char *fmt, ...) {
    if (t_in_case) t_case_fail++;
    else atomic_fetch_add(&g_orphan_failures, 1);
    va_list ap;
    va_start(ap, fmt);
    vreport(fmt, ap);
    va_end(ap);
}

void tl_fail_at(const char *file, int line, const char *fmt, ...) {
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *base = strrchr(file, '/');
    tl_fail("%s:%d: %s", base ? base + 1 : file, line, msg);
}

size_t tl_case_failures(void) { return t_case_fail; }

void tl_case_begin(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t_case, sizeof t_case, fmt, ap);
    va_end(ap);
    t_in_case = 1;
    t_case_fail = 0;
    if (getenv("INFINIOP_TEST_VERBOSE")) fprintf(stderr, "case %s\n", t_case);
}

void tl_case_end(void) {
    if (t_case_fail) atomic_fetch_add(&g_failed, 1);
    else atomic_fetch_add(&g_passed, 1);
    t_in_case = 0;
    t_case_fail = 0;
}

int tl_expect_status(infiniStatus_t got, infiniStatus_t want, const char *what, int line) {
    if (got == want) return 1;
    tl_fail("line %d: %s returned %s (%d), expected %s (%d); last error message: \"%s\"", line, what,
            status_name(got), (int)got, status_name(want), (int)want, infiniopGetLastErrorMessage());
    return 0;
}

int tl_under_valgrind(void) {
#ifdef TL_HAVE_VALGRIND_H
    if (RUNNING_ON_VALGRIND) return 1;
#endif
    const char *v = getenv("INFINIOP_TEST_UNDER_VALGRIND");
    return v && *v && strcmp(v, "0") != 0;
}

int tl_skip_under_valgrind(const char *what) {
    static atomic_int said;
    if (!tl_under_valgrind()) return 0;
    if (atomic_exchange(&said, 1) == 0) {
        printf("%s: under valgrind: %s not checked (valgrind's floating point differs from the hardware's: "
               "64-bit x87 long double, no FTZ/DAZ)\n", g_program, what);
        fflush(stdout);
    }
    return 1;
}

static void skip(const char *why) {
    printf("%s: skipped: %s\n", g_program, why);
    fflush(stdout);
    exit(77);
}

void tl_init(int argc, char **argv, const char *program) {
    g_program = program;
    const char *dev = "cpu";
    const char *seed_s = getenv("INFINIOP_TEST_SEED");
    const char *q = getenv("INFINIOP_TEST_QUICK");
    if (q && *q && strcmp(q, "0") != 0) tl_quick = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--device") && i + 1 < argc) dev = argv[++i];
        else if (!strncmp(argv[i], "--device=", 9)) dev = argv[i] + 9;
        else if (!strcmp(argv[i], "--quick")) tl_quick = 1;
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed_s = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--device cpu|nvidia] [--quick] [--seed N]\n"
                            "env: INFINIOP_TEST_SEED, INFINIOP_TEST_QUICK=1, INFINIOP_TEST_VERBOSE=1\n", argv[0]);
            exit(2);
        }
    }
    if (seed_s && *seed_s) tl_seed = strtoull(seed_s, NULL, 0);
    else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t x = (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec;
        tl_seed = splitmix64(&x) % 1000000000u;
    }
    if (!strcmp(dev, "cpu")) tl_device = INFINI_DEVICE_CPU;
    else if (!strcmp(dev, "nvidia")) tl_device = INFINI_DEVICE_NVIDIA;
    else {
        fprintf(stderr, "%s: unknown device '%s' (cpu or nvidia)\n", program, dev);
        exit(2);
    }
    printf("%s: device %s, seed %llu (INFINIOP_TEST_SEED=%llu reproduces)%s\n", program, dev,
           (unsigned long long)tl_seed, (unsigned long long)tl_seed, tl_quick ? ", quick" : "");
    fflush(stdout);
    if (tl_device == INFINI_DEVICE_NVIDIA) {
#ifndef INFINIOP_TEST_WITH_CUDA
        skip("built without CUDA");
#endif
        int n = 0;
        infiniStatus_t st = infinirtGetDeviceCount(INFINI_DEVICE_NVIDIA, &n);
        if (st != INFINI_STATUS_SUCCESS || n <= 0) skip("no GPU");
        st = infinirtSetDevice(INFINI_DEVICE_NVIDIA, 0);
        if (st == INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED) skip("built without CUDA");
        if (st != INFINI_STATUS_SUCCESS) {
            fprintf(stderr, "%s: infinirtSetDevice(NVIDIA, 0) failed: %s\n", program, status_name(st));
            exit(1);
        }
    }
    infiniStatus_t st = infiniopCreateHandle(&tl_handle);
    if (st != INFINI_STATUS_SUCCESS) {
        fprintf(stderr, "%s: infiniopCreateHandle failed: %s (%s)\n", program, status_name(st),
                infiniopGetLastErrorMessage());
        exit(1);
    }
}

void tl_set_thread_device(void) {
    if (tl_device != INFINI_DEVICE_CPU) {
        infiniStatus_t st = infinirtSetDevice(tl_device, 0);
        if (st != INFINI_STATUS_SUCCESS) tl_fail("infinirtSetDevice in worker thread: %s", status_name(st));
    }
}

void tl_sync(void) {
    if (tl_device != INFINI_DEVICE_CPU) {
        infiniStatus_t st = infinirtDeviceSynchronize();
        if (st != INFINI_STATUS_SUCCESS) tl_fail("infinirtDeviceSynchronize: %s", status_name(st));
    }
}

int tl_finish(void) {
    size_t passed = atomic_load(&g_passed), failed = atomic_load(&g_failed);
    size_t orphan = atomic_load(&g_orphan_failures);
    if (tl_handle) {
        infiniStatus_t st = infiniopDestroyHandle(tl_handle);
        if (st != INFINI_STATUS_SUCCESS) {
            fprintf(stderr, "FAIL infiniopDestroyHandle: %s\n", status_name(st));
            orphan++;
        }
        tl_handle = NULL;
    }
    failed += orphan;
    printf("%s: %zu passed, %zu failed\n", g_program, passed, failed);
    fflush(stdout);
    return failed ? 1 : 0;
}

/* ================================================================== tensors */
static unsigned char guard_byte(size_t i) { return (unsigned char)(0x5a ^ (i * 37u)); }

int tl_tensor_init(tl_tensor *t, infiniDtype_t dt, size_t ndim, const size_t *shape, const ptrdiff_t *strides) {
    return tl_tensor_init_pad(t, dt, ndim, shape, strides, 0);
}

int tl_tensor_init_pad(tl_tensor *t, infiniDtype_t dt, size_t ndim, const size_t *shape, const ptrdiff_t *strides,
                       size_t front_pad) {
    memset(t, 0, sizeof *t);
    if (ndim > TL_MAXDIM) abort();
    t->dtype = dt;
    t->esize = tl_dtype_size(dt);
    t->ndim = ndim;
    for (size_t i = 0; i < ndim; i++) t->shape[i] = shape[i];
    if (strides) for (size_t i = 0; i < ndim; i++) t->strides[i] = strides[i];
    else tl_contiguous_strides(ndim, shape, t->strides);
    t->numel = tl_numel(ndim, shape);
    if (t->numel) {
        for (size_t i = 0; i < ndim; i++) {
            ptrdiff_t e = (ptrdiff_t)(shape[i] - 1) * t->strides[i];
            if (e > 0) t->max_off += e;
            else t->min_off += e;
        }
        t->min_off -= (ptrdiff_t)front_pad;
        t->span = (size_t)(t->max_off - t->min_off + 1);
    }
    t->bytes = 2 * TL_GUARD_BYTES + t->span * t->esize;
    t->host = malloc(t->bytes);
    t->snap = malloc(t->bytes);
    t->inview = calloc(t->span ? t->span : 1, 1);
    if (!t->host || !t->snap || !t->inview) {
        fprintf(stderr, "out of host memory (%zu bytes)\n", t->bytes);
        abort();
    }
    size_t idx[TL_MAXDIM] = {0};
    ptrdiff_t off = 0;
    for (size_t i = 0; i < t->numel; i++, tl_offset_next(ndim, t->shape, t->strides, idx, &off))
        t->inview[off - t->min_off] = 1;
    tl_tensor_poison(t);
    infiniStatus_t st = infiniopCreateTensorDescriptor(&t->desc, ndim, t->shape, strides ? t->strides : NULL, dt);
    if (st != INFINI_STATUS_SUCCESS) {
        char b1[128], b2[128];
        tl_fail("infiniopCreateTensorDescriptor(%s, shape %s, strides %s) returned %s: %s", tl_dtype_name(dt),
                tl_fmt_dims(b1, sizeof b1, ndim, shape), tl_fmt_strides(b2, sizeof b2, ndim, t->strides),
                status_name(st), infiniopGetLastErrorMessage());
        t->desc = NULL;
        return -1;
    }
    return 0;
}

void tl_tensor_free(tl_tensor *t) {
    if (t->desc) {
        infiniStatus_t st = infiniopDestroyTensorDescriptor(t->desc);
        if (st != INFINI_STATUS_SUCCESS) tl_fail("infiniopDestroyTensorDescriptor: %s", status_name(st));
    }
    if (t->dev) infinirtFree(t->dev);
    free(t->host);
    free(t->snap);
    free(t->inview);
    memset(t, 0, sizeof *t);
}

static unsigned char *span_host(const tl_tensor *t) { return t->host + TL_GUARD_BYTES; }

static void fill_guards_and_padding(tl_tensor *t) {
    for (size_t i = 0; i < TL_GUARD_BYTES; i++) {
        t->host[i] = guard_byte(i);
        t->host[t->bytes - TL_GUARD_BYTES + i] = guard_byte(i + 7);
    }
    uint64_t pb = tl_poison_bits(t->dtype);
    for (size_t k = 0; k < t->span; k++) put_bits(t->dtype, span_host(t) + k * t->esize, pb);
}

void tl_tensor_poison(tl_tensor *t) { fill_guards_and_padding(t); }

void *tl_tensor_host_elem(const tl_tensor *t, size_t i) {
    ptrdiff_t off = tl_offset_of(t->ndim, t->shape, t->strides, i) - t->min_off;
    return span_host(t) + (size_t)off * t->esize;
}

double tl_tensor_get(const tl_tensor *t, size_t i) { return tl_load(t->dtype, tl_tensor_host_elem(t, i)); }

void tl_tensor_set(tl_tensor *t, size_t i, double v) { tl_store(t->dtype, tl_tensor_host_elem(t, i), v); }

void tl_tensor_fill_random(tl_tensor *t, tl_rng *r, double lo, double hi) {
    fill_guards_and_padding(t);
    for (size_t i = 0; i < t->numel; i++) {
        double v;
        do {
            v = tl_round_to(t->dtype, tl_rng_uniform(r, lo, hi));
        } while (v == 0.0);
        tl_tensor_set(t, i, v);
    }
}

void *tl_tensor_host_base(const tl_tensor *t) {
    return span_host(t) + (size_t)(-t->min_off) * t->esize;
}

void *tl_tensor_ptr(const tl_tensor *t) {
    if (tl_device == INFINI_DEVICE_CPU) return tl_tensor_host_base(t);
    return (unsigned char *)t->dev + TL_GUARD_BYTES + (size_t)(-t->min_off) * t->esize;
}

void tl_tensor_upload(tl_tensor *t) {
    memcpy(t->snap, t->host, t->bytes);
    if (tl_device == INFINI_DEVICE_CPU) return;
    if (!t->dev) {
        infiniStatus_t st = infinirtMalloc(&t->dev, t->bytes);
        if (st != INFINI_STATUS_SUCCESS || !t->dev) {
            fprintf(stderr, "infinirtMalloc(%zu) failed: %s\n", t->bytes, status_name(st));
            abort();
        }
    }
    infiniStatus_t st = infinirtMemcpy(t->dev, t->host, t->bytes, INFINIRT_MEMCPY_H2D);
    if (st != INFINI_STATUS_SUCCESS) tl_fail("infinirtMemcpy H2D: %s", status_name(st));
}

void tl_tensor_download(tl_tensor *t) {
    if (tl_device == INFINI_DEVICE_CPU) return;
    infiniStatus_t st = infinirtMemcpy(t->host, t->dev, t->bytes, INFINIRT_MEMCPY_D2H);
    if (st != INFINI_STATUS_SUCCESS) tl_fail("infinirtMemcpy D2H: %s", status_name(st));
}

size_t tl_tensor_check_untouched(const tl_tensor *t, const char *name, int written) {
    size_t bad = 0;
    for (size_t i = 0; i < TL_GUARD_BYTES; i++) {
        if (t->host[i] != t->snap[i]) {
            if (!bad++) tl_fail("%s: guard byte %zu before the tensor's extent was overwritten", name, TL_GUARD_BYTES - i);
        }
        size_t j = t->bytes - TL_GUARD_BYTES + i;
        if (t->host[j] != t->snap[j]) {
            if (!bad++) tl_fail("%s: guard byte %zu after the tensor's extent was overwritten", name, i);
        }
    }
    for (size_t k = 0; k < t->span; k++) {
        if (written && t->inview[k]) continue;
        size_t o = TL_GUARD_BYTES + k * t->esize;
        if (memcmp(t->host + o, t->snap + o, t->esize)) {
            if (bad++ < 3)
                tl_fail("%s: %s element at offset %td (relative to element 0) was modified", name,
                        t->inview[k] ? "view" : "padding", (ptrdiff_t)k + t->min_off);
        }
    }
    if (bad > 3) tl_fail("%s: %zu bytes/elements modified that must not be", name, bad);
    return bad;
}

size_t tl_tensor_check_written(const tl_tensor *t, const char *name) {
    size_t bad = 0;
    for (size_t i = 0; i < t->numel; i++) {
        if (tl_is_poison(t->dtype, tl_tensor_host_elem(t, i))) {
            if (bad++ < 3) tl_fail("%s: element %zu (linear index) was never written", name, i);
        }
    }
    if (bad > 3) tl_fail("%s: %zu of %zu elements never written", name, bad, t->numel);
    return bad;
}

/* ================================================================== checks */
int tl_close(infiniDtype_t dt, double got, double ref, double tol32) {
    if (isnan(ref)) return isnan(got);
    if (isinf(ref)) return got == ref;
    if (isnan(got)) return 0;
    int half = dt == INFINI_DTYPE_F16 || dt == INFINI_DTYPE_BF16;
    if (isinf(got)) {
        /* only a half type can overflow where the float32 result was finite */
        if (!half) return 0;
        double edge = ref + copysign(tol32 + tl_ulp(dt, ref), ref);
        return tl_round_to(dt, edge) == got;
    }
    double err = fabs(got - ref);
    if (!half) return err <= tol32;
    double u = tl_ulp(dt, fabs(ref) > fabs(got) ? ref : got);
    return err <= tol32 + u;
}

int tl_close_ulp(infiniDtype_t dt, double got, double ref, double max_ulp) {
    if (isnan(ref)) return isnan(got);
    if (isnan(got)) return 0;
    double rr = tl_round_to(dt, ref);
    int half = dt == INFINI_DTYPE_F16 || dt == INFINI_DTYPE_BF16;
    /* Results whose exact value lies in the subnormal range of a type with
     * float32's (or float64's) exponent range: relative accuracy is not
     * meaningful there (flush-to-zero arithmetic, or x * sigmoid(x) with a
     * subnormal sigmoid, lose it legitimately): absolute error up to the
     * smallest normal. F16 subnormals are normal float32 values, so F16
     * keeps the 1-ulp rule there. */
    if (dt != INFINI_DTYPE_F16 && !isinf(ref) && fabs(ref) < tl_min_normal(dt) && !isinf(got))
        if (fabs(got - ref) <= tl_min_normal(dt)) return 1;
    return tl_ulp_distance(dt, got, rr) <= (half ? 1.0 : max_ulp);
}

size_t tl_check_close(const tl_tensor *t, const char *name, const double *ref,
                      double (*tol)(size_t i, double ref, void *ctx), void *ctx) {
    size_t bad = 0;
    for (size_t i = 0; i < t->numel; i++) {
        const void *p = tl_tensor_host_elem(t, i);
        if (tl_is_poison(t->dtype, p)) {
            if (bad++ < 4) tl_fail("%s: element %zu never written (want %.9g)", name, i, ref[i]);
            continue;
        }
        double got = tl_load(t->dtype, p);
        double tl = tol(i, ref[i], ctx);
        int ok;
        if (tl < 0) ok = ref[i] == 0.0 ? (got == 0.0 && !signbit(got)) : got == ref[i];
        else ok = tl_close(t->dtype, got, ref[i], tl);
        if (!ok && bad++ < 4)
            tl_fail("%s: element %zu: got %.9g, want %.9g (allowed %s%.3g, error %.3g)", name, i, got, ref[i],
                    tl < 0 ? "exactly, " : "", tl < 0 ? 0.0 : tl, fabs(got - ref[i]));
    }
    if (bad > 4) tl_fail("%s: %zu of %zu elements wrong", name, bad, t->numel);
    return bad;
}
