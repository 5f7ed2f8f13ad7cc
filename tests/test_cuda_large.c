/*
 * test_cuda_large.c - sizes that only the GPU tests reach (SPEC: rows of any
 * length; tensors of more than 2^31 elements).
 *
 * 1. Long rows, checked against the float64 references with the tolerances
 *    of the operator tests: add_rms_norm and layer_norm with D = 2^20 (and an
 *    odd D just below, for the scalar path), causal_softmax with T = 2^20.
 *    These take the streaming (multi-pass) strategy of the CUDA kernels.
 * 2. More than 2^31 elements (skipped with --quick / INFINIOP_TEST_QUICK=1,
 *    e.g. under compute-sanitizer; each needs 4 to 9 GB of device memory):
 *    - silu, BF16, 2^31 + 2^20 + 3 contiguous elements (vector path + tail);
 *    - sigmoid, F16, output [2^16 + 1, 2^15] from an input [2^15] broadcast
 *      over the rows (strided path, 64-bit offsets);
 *    - causal_softmax, BF16, in place on [2^16 + 3, 16, 2048].
 *    Inputs come from a hash of the 64-bit element index, so an element
 *    computed from the wrong index (a 32-bit wrap) shows. The elementwise
 *    results are checked against a table of the operator over every one of
 *    the 65536 half-type values (computed on the GPU, itself checked
 *    against the reference); softmax batches on both sides of element 2^31
 *    against the reference.
 *
 * GPU only: with --device cpu it reports "skipped".
 */
#include "layer_norm_tol.h"
#include "reference.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ long rows */
static double g_K;
static double tol_res(size_t i, double ref, void *ctx) {
    (void)i, (void)ctx;
    return 0.5 * tl_ulp(INFINI_DTYPE_F32, ref);
}
static double tol_y(size_t i, double ref, void *ctx) {
    (void)i, (void)ctx;
    return g_K * TL_EPS32 * fabs(ref) + 1e-37;
}

static ref_view_t view_of(const tl_tensor *t) {
    ref_view_t v = {(unsigned char *)t->snap + TL_GUARD_BYTES + (size_t)(-t->min_off) * t->esize, t->dtype, t->ndim,
                    t->shape, t->strides};
    return v;
}

static void long_add_rms_norm(infiniDtype_t at, infiniDtype_t wt, size_t rows, size_t D, tl_rng *rng) {
    tl_case_begin("add_rms_norm %s/%s [%zu, %zu]", tl_dtype_name(at), tl_dtype_name(wt), rows, D);
    size_t shape[2] = {rows, D}, wshape[1] = {D};
    tl_tensor T[5];
    memset(T, 0, sizeof T);
    int err = 0;
    for (int k = 0; k < 4; ++k) err |= tl_tensor_init(&T[k], at, 2, shape, NULL);
    err |= tl_tensor_init(&T[4], wt, 1, wshape, NULL);
    struct InfiniopDescriptor *d = NULL;
    if (!err && TL_OK(infiniopCreateAddRMSNormDescriptor(tl_handle, &d, T[0].desc, T[1].desc, T[2].desc, T[3].desc,
                                                         T[4].desc, 1e-6f))) {
        tl_tensor_fill_random(&T[2], rng, -2, 2);
        tl_tensor_fill_random(&T[3], rng, -2, 2);
        tl_tensor_fill_random(&T[4], rng, -2, 2);
        for (int k = 0; k < 5; ++k) tl_tensor_upload(&T[k]);
        if (TL_OK(infiniopAddRMSNorm(d, NULL, 0, tl_tensor_ptr(&T[0]), tl_tensor_ptr(&T[1]), tl_tensor_ptr(&T[2]),
                                     tl_tensor_ptr(&T[3]), tl_tensor_ptr(&T[4]), NULL))) {
            tl_sync();
            for (int k = 0; k < 5; ++k) tl_tensor_download(&T[k]);
            double *ry = malloc(rows * D * sizeof(double)), *rr = malloc(rows * D * sizeof(double));
            ref_view_t av = view_of(&T[2]), bv = view_of(&T[3]), wv = view_of(&T[4]);
            ref_add_rms_norm(&av, &bv, &wv, (double)1e-6f, ry, rr);
            g_K = 16.0 + 2.0 * sqrt((double)D);
            for (int k = 0; k < 5; ++k) tl_tensor_check_untouched(&T[k], "tensor", k < 2);
            tl_check_close(&T[1], "residual_out", rr, tol_res, NULL);
            tl_check_close(&T[0], "y", ry, tol_y, NULL);
            free(ry);
            free(rr);
        }
        TL_OK(infiniopDestroyAddRMSNormDescriptor(d));
    }
    for (int k = 0; k < 5; ++k) tl_tensor_free(&T[k]);
    tl_case_end();
}

static void long_layer_norm(infiniDtype_t dt, size_t rows, size_t D, int bias, tl_rng *rng) {
    tl_case_begin("layer_norm %s [%zu, %zu]%s", tl_dtype_name(dt), rows, D, bias ? " bias" : "");
    size_t shape[2] = {rows, D}, wshape[1] = {D}, sshape[1] = {rows};
    tl_tensor T[6]; /* out, stdz, std, in, w, b */
    memset(T, 0, sizeof T);
    int nt = bias ? 6 : 5, err = 0;
    err |= tl_tensor_init(&T[0], dt, 2, shape, NULL);
    err |= tl_tensor_init(&T[1], dt, 2, shape, NULL);
    err |= tl_tensor_init(&T[2], dt, 1, sshape, NULL);
    err |= tl_tensor_init(&T[3], dt, 2, shape, NULL);
    err |= tl_tensor_init(&T[4], dt, 1, wshape, NULL);
    if (bias) err |= tl_tensor_init(&T[5], dt, 1, wshape, NULL);
    struct InfiniopDescriptor *d = NULL;
    if (!err && TL_OK(infiniopCreateLayerNormDescriptor(tl_handle, &d, T[0].desc, T[1].desc, T[2].desc, T[3].desc,
                                                        T[4].desc, bias ? T[5].desc : NULL, 1e-5f))) {
        tl_tensor_fill_random(&T[3], rng, 3, 5); /* a mean far from 0: the two-pass variance matters */
        tl_tensor_fill_random(&T[4], rng, -2, 2);
        if (bias) tl_tensor_fill_random(&T[5], rng, -2, 2);
        for (int k = 0; k < nt; ++k) tl_tensor_upload(&T[k]);
        if (TL_OK(infiniopLayerNorm(d, NULL, 0, tl_tensor_ptr(&T[0]), tl_tensor_ptr(&T[1]), tl_tensor_ptr(&T[2]),
                                    tl_tensor_ptr(&T[3]), tl_tensor_ptr(&T[4]), bias ? tl_tensor_ptr(&T[5]) : NULL,
                                    NULL))) {
            tl_sync();
            for (int k = 0; k < nt; ++k) tl_tensor_download(&T[k]);
            size_t n = rows * D;
            double *ro = malloc(n * sizeof(double)), *rz = malloc(n * sizeof(double));
            double *rs = malloc(rows * sizeof(double)), *rm = malloc(rows * sizeof(double));
            double *mos = malloc(rows * sizeof(double)), *aw = malloc(D * sizeof(double)),
                   *ab = calloc(D, sizeof(double));
            ref_view_t xv = view_of(&T[3]), wv = view_of(&T[4]), bv = bias ? view_of(&T[5]) : xv;
            ref_layer_norm(&xv, &wv, bias ? &bv : NULL, (double)1e-5f, ro, rz, rs, rm);
            for (size_t r = 0; r < rows; ++r) {
                double s = 0;
                for (size_t j = 0; j < D; ++j) s += fabs(ref_get_rc(&xv, r, j));
                mos[r] = s / (double)D / rs[r];
            }
            for (size_t j = 0; j < D; ++j) {
                aw[j] = fabs(ref_get(&wv, j));
                if (bias) ab[j] = fabs(ref_get(&bv, j));
            }
            ln_tol_ctx ctx = {D, mos, aw, ab, rz, ln_tol_k(D)};
            for (int k = 0; k < nt; ++k) tl_tensor_check_untouched(&T[k], "tensor", k < 3);
            tl_check_close(&T[1], "input_standardization", rz, ln_tol_z, &ctx);
            tl_check_close(&T[0], "output", ro, ln_tol_out, &ctx);
            tl_check_close(&T[2], "input_std_deviation", rs, ln_tol_std, &ctx);
            free(ro), free(rz), free(rs), free(rm), free(mos), free(aw), free(ab);
        }
        TL_OK(infiniopDestroyLayerNormDescriptor(d));
    }
    for (int k = 0; k < nt; ++k) tl_tensor_free(&T[k]);
    tl_case_end();
}

/* Softmax check of one S x T slice: x and y point at element 0 of the slice
 * (host memory, contiguous rows). Returns the number of bad elements. */
static size_t check_softmax_slice(infiniDtype_t dt, const void *x, const void *y, size_t S, size_t T,
                                  const char *what) {
    size_t shape[2] = {S, T};
    ptrdiff_t st[2] = {(ptrdiff_t)T, 1};
    ref_view_t xv = {x, dt, 2, shape, st};
    double *ref = malloc(S * T * sizeof(double));
    ref_causal_softmax(&xv, ref);
    size_t bad = 0, es = tl_dtype_size(dt);
    for (size_t i = 0; i < S; ++i) {
        size_t vis = i + (T - S) + 1;
        double m = -INFINITY;
        for (size_t j = 0; j < vis; ++j) m = fmax(m, ref_get_rc(&xv, i, j));
        for (size_t j = 0; j < T; ++j) {
            double got = tl_load(dt, (const unsigned char *)y + (i * T + j) * es), want = ref[i * T + j];
            int ok;
            if (j >= vis) {
                ok = got == 0.0 && !signbit(got);
            } else {
                double K = 16.0 + 2.0 * sqrt((double)vis);
                double ad = fabs(ref_get_rc(&xv, i, j) - m);
                ok = tl_close(dt, got, want, (K + 2.0 * ad) * TL_EPS32 * fabs(want) + 0x1p-126);
            }
            if (!ok && bad++ < 4) tl_fail("%s: row %zu column %zu: got %.9g, want %.9g", what, i, j, got, want);
        }
    }
    free(ref);
    return bad;
}

static void long_softmax(infiniDtype_t dt, size_t S, size_t T, tl_rng *rng) {
    tl_case_begin("causal_softmax %s [1, %zu, %zu]", tl_dtype_name(dt), S, T);
    size_t shape[3] = {1, S, T};
    tl_tensor x, y;
    memset(&x, 0, sizeof x), memset(&y, 0, sizeof y);
    int err = tl_tensor_init(&x, dt, 3, shape, NULL) | tl_tensor_init(&y, dt, 3, shape, NULL);
    struct InfiniopDescriptor *d = NULL;
    if (!err && TL_OK(infiniopCreateCausalSoftmaxDescriptor(tl_handle, &d, y.desc, x.desc))) {
        tl_tensor_fill_random(&x, rng, -10, 10);
        tl_tensor_upload(&x);
        tl_tensor_upload(&y);
        if (TL_OK(infiniopCausalSoftmax(d, NULL, 0, tl_tensor_ptr(&y), tl_tensor_ptr(&x), NULL))) {
            tl_sync();
            tl_tensor_download(&x);
            tl_tensor_download(&y);
            tl_tensor_check_untouched(&x, "x", 0);
            tl_tensor_check_untouched(&y, "y", 1);
            check_softmax_slice(dt, tl_tensor_host_base(&x), tl_tensor_host_base(&y), S, T, "y");
        }
        TL_OK(infiniopDestroyCausalSoftmaxDescriptor(d));
    }
    tl_tensor_free(&x);
    tl_tensor_free(&y);
    tl_case_end();
}

/* ------------------------------------------------------------ > 2^31 elements */
static uint64_t mix(uint64_t i) {
    uint64_t x = (i + 0x9E3779B97F4A7C15ull) * 0xBF58476D1CE4E5B9ull;
    return x ^ (x >> 31);
}

typedef infiniStatus_t (*unary_create_fn)(infiniopHandle_t, struct InfiniopDescriptor **, infiniopTensorDescriptor_t,
                                          infiniopTensorDescriptor_t);
typedef infiniStatus_t (*unary_run_fn)(struct InfiniopDescriptor *, void *, size_t, void *, const void *, void *);
typedef infiniStatus_t (*unary_destroy_fn)(struct InfiniopDescriptor *);
typedef struct {
    const char *name;
    unary_create_fn create;
    unary_run_fn run;
    unary_destroy_fn destroy;
    long double (*ref)(long double);
} unary_api;

static void *dev_alloc(size_t bytes) {
    void *p = NULL;
    if (infinirtMalloc(&p, bytes) != INFINI_STATUS_SUCCESS) return NULL;
    return p;
}

/* table[v] = op(v) for every 16-bit pattern v of dt, computed by the library
 * on the GPU and checked against the reference (1 ulp). Returns 0 on success. */
static int unary_table(const unary_api *op, infiniDtype_t dt, uint16_t *table) {
    tl_case_begin("%s %s over all 65536 values", op->name, tl_dtype_name(dt));
    size_t n = 65536, shape[1] = {n};
    uint16_t *in = malloc(n * 2);
    for (size_t v = 0; v < n; ++v) in[v] = (uint16_t)v;
    infiniopTensorDescriptor_t td = NULL;
    struct InfiniopDescriptor *d = NULL;
    void *din = dev_alloc(n * 2), *dout = dev_alloc(n * 2);
    int ok = din && dout && TL_OK(infiniopCreateTensorDescriptor(&td, 1, shape, NULL, dt)) &&
             TL_OK(op->create(tl_handle, &d, td, td)) &&
             TL_OK(infinirtMemcpy(din, in, n * 2, INFINIRT_MEMCPY_H2D)) &&
             TL_OK(op->run(d, NULL, 0, dout, din, NULL)) && TL_OK(infinirtDeviceSynchronize()) &&
             TL_OK(infinirtMemcpy(table, dout, n * 2, INFINIRT_MEMCPY_D2H));
    if (ok) {
        size_t bad = 0;
        for (size_t v = 0; v < n; ++v) {
            double x = tl_load(dt, &in[v]), got = tl_load(dt, &table[v]);
            double want = (double)op->ref((long double)x);
            if (!tl_close_ulp(dt, got, want, 4.0) && bad++ < 4)
                tl_fail("%s(%.9g): got %.9g, want %.9g", op->name, x, got, want);
        }
    }
    if (d) TL_OK(op->destroy(d));
    if (td) TL_OK(infiniopDestroyTensorDescriptor(td));
    infinirtFree(din), infinirtFree(dout);
    free(in);
    ok = ok && !tl_case_failures();
    tl_case_end();
    return ok ? 0 : -1;
}

static int same16(const uint16_t *table, uint16_t in, uint16_t got, infiniDtype_t dt) {
    uint16_t want = table[in];
    if (got == want) return 1;
    return isnan(tl_load(dt, &want)) && isnan(tl_load(dt, &got));
}

/* out = op(in): contiguous (inner == 0) or in [inner] broadcast over rows. */
static void huge_unary(const unary_api *op, infiniDtype_t dt, size_t rows, size_t inner, size_t n_flat) {
    uint16_t *table = malloc(65536 * 2);
    if (unary_table(op, dt, table)) {
        free(table);
        return;
    }
    size_t n = inner ? rows * inner : n_flat;
    size_t nin = inner ? inner : n;
    if (inner) tl_case_begin("%s %s output [%zu, %zu] (%zu elements), input [%zu] broadcast", op->name,
                             tl_dtype_name(dt), rows, inner, n, inner);
    else tl_case_begin("%s %s contiguous, %zu elements", op->name, tl_dtype_name(dt), n);
    uint16_t *hin = malloc(nin * 2), *hout = malloc(n * 2);
    void *din = dev_alloc(nin * 2), *dout = dev_alloc(n * 2);
    if (!hin || !hout || !din || !dout) {
        printf("  (not run: cannot allocate %zu bytes of host or device memory)\n", (nin + n) * 2);
        goto done;
    }
    for (size_t i = 0; i < nin; ++i) hin[i] = (uint16_t)(mix(i) >> 20);
    infiniopTensorDescriptor_t to = NULL, ti = NULL;
    struct InfiniopDescriptor *d = NULL;
    size_t oshape[2] = {rows, inner}, flat[1] = {n}, ishape[1] = {nin};
    if (TL_OK(inner ? infiniopCreateTensorDescriptor(&to, 2, oshape, NULL, dt)
                    : infiniopCreateTensorDescriptor(&to, 1, flat, NULL, dt)) &&
        TL_OK(infiniopCreateTensorDescriptor(&ti, 1, ishape, NULL, dt)) && TL_OK(op->create(tl_handle, &d, to, ti)) &&
        TL_OK(infinirtMemcpy(din, hin, nin * 2, INFINIRT_MEMCPY_H2D)) &&
        TL_OK(infinirtMemset(dout, 0xff, n * 2)) && /* 0xffff: NaN, never a result of a finite input */
        TL_OK(op->run(d, NULL, 0, dout, din, NULL)) && TL_OK(infinirtDeviceSynchronize()) &&
        TL_OK(infinirtMemcpy(hout, dout, n * 2, INFINIRT_MEMCPY_D2H))) {
        size_t bad = 0;
        for (size_t i = 0; i < n; ++i) {
            uint16_t x = hin[inner ? i % inner : i];
            if (!same16(table, x, hout[i], dt) && bad++ < 4)
                tl_fail("element %zu: input bits 0x%04x, got bits 0x%04x, want 0x%04x", i, x, hout[i], table[x]);
        }
        if (bad > 4) tl_fail("%zu of %zu elements wrong", bad, n);
    }
    if (d) TL_OK(op->destroy(d));
    if (to) TL_OK(infiniopDestroyTensorDescriptor(to));
    if (ti) TL_OK(infiniopDestroyTensorDescriptor(ti));
done:
    infinirtFree(din), infinirtFree(dout);
    free(hin), free(hout), free(table);
    tl_case_end();
}

static void huge_softmax(void) {
    const infiniDtype_t dt = INFINI_DTYPE_BF16;
    const size_t B = (1u << 16) + 3, S = 16, T = 2048, n = B * S * T, slice = S * T;
    tl_case_begin("causal_softmax BF16 in place [%zu, %zu, %zu] (%zu elements)", B, S, T, n);
    uint16_t vals[4096];
    for (int k = 0; k < 4096; ++k) vals[k] = tl_double_to_bf16(-8.0 + 16.0 * (k + 0.5) / 4096.0);
    uint16_t *hx = malloc(n * 2), *hy = malloc(slice * 2);
    void *dx = dev_alloc(n * 2);
    infiniopTensorDescriptor_t td = NULL;
    struct InfiniopDescriptor *d = NULL;
    if (!hx || !hy || !dx) {
        printf("  (not run: cannot allocate %zu bytes of host or device memory)\n", n * 2);
        goto done;
    }
    for (size_t i = 0; i < n; ++i) hx[i] = vals[mix(i) >> 52];
    size_t shape[3] = {B, S, T};
    if (TL_OK(infiniopCreateTensorDescriptor(&td, 3, shape, NULL, dt)) &&
        TL_OK(infiniopCreateCausalSoftmaxDescriptor(tl_handle, &d, td, td)) &&
        TL_OK(infinirtMemcpy(dx, hx, n * 2, INFINIRT_MEMCPY_H2D)) &&
        TL_OK(infiniopCausalSoftmax(d, NULL, 0, dx, dx, NULL)) && TL_OK(infinirtDeviceSynchronize())) {
        /* batches on both sides of element 2^31 (batch 65536 starts there) and at both ends */
        const size_t check[] = {0, 1, 65535, 65536, B - 1};
        for (size_t c = 0; c < sizeof check / sizeof check[0]; ++c) {
            size_t b = check[c];
            char what[64];
            snprintf(what, sizeof what, "batch %zu", b);
            if (TL_OK(infinirtMemcpy(hy, (uint16_t *)dx + b * slice, slice * 2, INFINIRT_MEMCPY_D2H)))
                check_softmax_slice(dt, hx + b * slice, hy, S, T, what);
        }
    }
    if (d) TL_OK(infiniopDestroyCausalSoftmaxDescriptor(d));
    if (td) TL_OK(infiniopDestroyTensorDescriptor(td));
done:
    infinirtFree(dx);
    free(hx), free(hy);
    tl_case_end();
}

int main(int argc, char **argv) {
    tl_init(argc, argv, "test_cuda_large");
    if (tl_device != INFINI_DEVICE_NVIDIA) {
        printf("test_cuda_large: skipped: GPU-only sizes (use --device nvidia)\n");
        return 77;
    }
    tl_rng rng;
    tl_rng_seed(&rng, tl_seed);
    const size_t M = (size_t)1 << 20;

    long_add_rms_norm(INFINI_DTYPE_F16, INFINI_DTYPE_F16, 2, M, &rng);
    long_add_rms_norm(INFINI_DTYPE_BF16, INFINI_DTYPE_F32, 2, M, &rng);
    long_add_rms_norm(INFINI_DTYPE_F32, INFINI_DTYPE_F32, 2, M, &rng);
    long_add_rms_norm(INFINI_DTYPE_BF16, INFINI_DTYPE_BF16, 1, M - 1, &rng);
    long_layer_norm(INFINI_DTYPE_F16, 2, M, 1, &rng);
    long_layer_norm(INFINI_DTYPE_BF16, 2, M, 0, &rng);
    long_layer_norm(INFINI_DTYPE_F32, 1, M - 3, 1, &rng);
    long_softmax(INFINI_DTYPE_F16, 3, M, &rng);
    long_softmax(INFINI_DTYPE_BF16, 2, M - 1, &rng);
    long_softmax(INFINI_DTYPE_F32, 3, M, &rng);

    if (tl_quick) {
        printf("test_cuda_large: quick mode: the cases of more than 2^31 elements are not run\n");
    } else {
        const unary_api silu = {"silu", infiniopCreateSiluDescriptor, infiniopSilu, infiniopDestroySiluDescriptor,
                                ref_silu_scalar};
        const unary_api sigmoid = {"sigmoid", infiniopCreateSigmoidDescriptor, infiniopSigmoid,
                                   infiniopDestroySigmoidDescriptor, ref_sigmoid_scalar};
        double t0 = tl_now();
        huge_unary(&silu, INFINI_DTYPE_BF16, 0, 0, ((size_t)1 << 31) + M + 3);
        huge_unary(&sigmoid, INFINI_DTYPE_F16, ((size_t)1 << 16) + 1, (size_t)1 << 15, 0);
        huge_softmax();
        printf("test_cuda_large: cases of more than 2^31 elements took %.1f s\n", tl_now() - t0);
    }
    return tl_finish();
}
