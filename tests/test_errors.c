/*
 * test_errors.c - every error path of SPEC.md and of the public headers.
 *
 * Each failing call must return the exact status code, leave a non-empty
 * message for the calling thread (a new one: the harness first provokes a
 * different error, and the message must change), name the tensor at
 * fault where that is cheap to check (as a word: "b", "weight", ...), and
 * write nothing (outputs keep their poison, guards and inputs untouched).
 */
#define _POSIX_C_SOURCE 200809L
#include "testlib.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef infiniDtype_t dt_t;
#define F16 INFINI_DTYPE_F16
#define BF16 INFINI_DTYPE_BF16
#define F32 INFINI_DTYPE_F32
#define F64 INFINI_DTYPE_F64
#define I32 INFINI_DTYPE_I32
#define S_OK INFINI_STATUS_SUCCESS
#define S_NULL INFINI_STATUS_NULL_POINTER
#define S_PARAM INFINI_STATUS_BAD_PARAM
#define S_DTYPE INFINI_STATUS_BAD_TENSOR_DTYPE
#define S_SHAPE INFINI_STATUS_BAD_TENSOR_SHAPE
#define S_STRIDES INFINI_STATUS_BAD_TENSOR_STRIDES

/* ------------------------------------------------------------ helpers */
/* Tensor descriptors made for the checks; all destroyed at the end. */
static infiniopTensorDescriptor_t g_pool[512];
static size_t g_npool;

static infiniopTensorDescriptor_t td(dt_t dt, size_t ndim, const size_t *shape, const ptrdiff_t *strides) {
    infiniopTensorDescriptor_t d = NULL;
    infiniStatus_t st = infiniopCreateTensorDescriptor(&d, ndim, shape, strides, dt);
    if (st != S_OK) {
        tl_fail("helper: infiniopCreateTensorDescriptor failed (%d): %s", (int)st, infiniopGetLastErrorMessage());
        return NULL;
    }
    if (g_npool < sizeof g_pool / sizeof g_pool[0]) g_pool[g_npool++] = d;
    return d;
}
#define SH(...) ((const size_t[]){__VA_ARGS__})
#define ST(...) ((const ptrdiff_t[]){__VA_ARGS__})

/* Provoke a known error so that the next failure's message can be seen to
 * be new. */
static char g_marker[1024];
static void set_marker(void) {
    size_t shape[1] = {1};
    (void)infiniopCreateTensorDescriptor(NULL, 1, shape, NULL, F32);
    snprintf(g_marker, sizeof g_marker, "%s", infiniopGetLastErrorMessage());
}

static int names1(const char *msg, const char *name) {
    size_t n = strlen(name);
    for (const char *p = strstr(msg, name); p; p = strstr(p + 1, name)) {
        int before = p == msg || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
        const char *q = p + n;
        int after = !(isalnum((unsigned char)*q) || *q == '_') || !strncmp(q, "_desc", 5);
        if (before && after) return 1;
    }
    return 0;
}

/* name occurs in msg as a word (optionally followed by "_desc");
 * "y|output" accepts either. */
static int names(const char *msg, const char *alts) {
    char buf[128];
    snprintf(buf, sizeof buf, "%s", alts);
    for (char *save = NULL, *name = strtok_r(buf, "|", &save); name; name = strtok_r(NULL, "|", &save))
        if (names1(msg, name)) return 1;
    return 0;
}

static void expect_err(infiniStatus_t got, infiniStatus_t want, infiniStatus_t alt, const char *what, int line,
                       const char *name) {
    if (got != want && got != alt) {
        tl_expect_status(got, want, what, line);
        return;
    }
    if (want == S_OK) return;
    const char *m = infiniopGetLastErrorMessage();
    if (!m) tl_fail("line %d: %s: infiniopGetLastErrorMessage() returned NULL", line, what);
    else if (!*m) tl_fail("line %d: %s: empty error message", line, what);
    else if (!strcmp(m, g_marker)) tl_fail("line %d: %s: the error message was not set by this call (still \"%s\")", line, what, m);
    else if (name && !names(m, name)) tl_fail("line %d: %s: message \"%s\" does not name '%s'", line, what, m, name);
}
/* EXPECT(call, status, name-or-NULL) */
#define EXPECT(call, want, name) do { set_marker(); expect_err((call), (want), (want), #call, __LINE__, (name)); } while (0)
#define EXPECT2(call, want, alt, name) do { set_marker(); expect_err((call), (want), (alt), #call, __LINE__, (name)); } while (0)

/* A fake object: not a live descriptor/handle, but readable memory. */
static _Alignas(64) unsigned char g_fake[4096];

/* ------------------------------------------------------------ tensor descriptors */
static void test_tensor_descriptors(void) {
    tl_case_begin("tensor descriptor errors");
    infiniopTensorDescriptor_t d = NULL;
    g_marker[0] = 0; /* this is the marker error itself */
    expect_err(infiniopCreateTensorDescriptor(NULL, 2, SH(2, 3), NULL, F32), S_NULL, S_NULL, "CreateTensorDescriptor(NULL, ...)", __LINE__, "desc_ptr|desc");
    EXPECT(infiniopCreateTensorDescriptor(&d, 2, NULL, NULL, F32), S_NULL, NULL);
    EXPECT(infiniopCreateTensorDescriptor(&d, 2, SH(2, 3), NULL, (infiniDtype_t)99), S_DTYPE, NULL);
    EXPECT(infiniopCreateTensorDescriptor(&d, 2, SH(2, 3), NULL, (infiniDtype_t)-1), S_DTYPE, NULL);
    EXPECT(infiniopCreateTensorDescriptor(&d, 2, SH(2, 3), NULL, (infiniDtype_t)20), S_DTYPE, NULL);
    EXPECT(infiniopCreateTensorDescriptor(&d, 2, SH(2, 3), NULL, INFINI_DTYPE_INVALID), S_DTYPE, NULL);
    size_t big[65];
    for (int i = 0; i < 65; i++) big[i] = 1;
    EXPECT(infiniopCreateTensorDescriptor(&d, 65, big, NULL, F32), S_SHAPE, NULL);
    if (TL_OK(infiniopCreateTensorDescriptor(&d, 64, big, NULL, F32))) infiniopDestroyTensorDescriptor(d);
    /* element count overflow */
    EXPECT(infiniopCreateTensorDescriptor(&d, 2, SH((size_t)1 << 33, (size_t)1 << 33), NULL, F32), S_SHAPE, NULL);
    EXPECT(infiniopCreateTensorDescriptor(&d, 3, SH(SIZE_MAX / 2, 3, 1), NULL, F16), S_SHAPE, NULL);
    /* byte extent beyond 63 bits with explicit strides */
    EXPECT(infiniopCreateTensorDescriptor(&d, 1, SH((size_t)1 << 20), ST((ptrdiff_t)1 << 50), F32), S_STRIDES, NULL);
    EXPECT(infiniopCreateTensorDescriptor(&d, 1, SH((size_t)1 << 20), ST(-((ptrdiff_t)1 << 50)), F32), S_STRIDES, NULL);
    EXPECT(infiniopCreateTensorDescriptor(&d, 2, SH(3, 2), ST(PTRDIFF_MAX / 2, 1), F64), S_STRIDES, NULL);
    EXPECT(infiniopCreateTensorDescriptor(&d, 1, SH(2), ST(PTRDIFF_MIN), F32), S_STRIDES, NULL);
    /* contiguous, 2^62 F32 elements: the count fits, the byte count does not
     * (the header does not say which of the two codes: either) */
    EXPECT2(infiniopCreateTensorDescriptor(&d, 1, SH((size_t)1 << 62), NULL, F32), S_STRIDES, S_SHAPE, NULL);
    /* valid corner cases */
    if (TL_OK(infiniopCreateTensorDescriptor(&d, 0, NULL, NULL, F32))) TL_OK(infiniopDestroyTensorDescriptor(d));
    if (TL_OK(infiniopCreateTensorDescriptor(&d, 2, SH(0, 5), NULL, F16))) TL_OK(infiniopDestroyTensorDescriptor(d));
    if (TL_OK(infiniopCreateTensorDescriptor(&d, 2, SH(3, 4), ST(0, -1), BF16))) TL_OK(infiniopDestroyTensorDescriptor(d));
    if (TL_OK(infiniopCreateTensorDescriptor(&d, 1, SH(5), NULL, I32))) TL_OK(infiniopDestroyTensorDescriptor(d));
    tl_case_end();
}

/* ------------------------------------------------------------ handles and devices */
static void test_handles_devices(void) {
    tl_case_begin("handle and device errors");
    EXPECT(infiniopCreateHandle(NULL), S_NULL, NULL);
    EXPECT(infiniopDestroyHandle(NULL), S_NULL, NULL);
    memset(g_fake, 0, sizeof g_fake);
    EXPECT(infiniopDestroyHandle((infiniopHandle_t)(void *)g_fake), S_PARAM, NULL);
    memset(g_fake, 0xff, sizeof g_fake);
    EXPECT(infiniopDestroyHandle((infiniopHandle_t)(void *)g_fake), S_PARAM, NULL);

    infiniDevice_t dev0; int id0;
    TL_OK(infinirtGetDevice(&dev0, &id0));
    TL_CHECK(dev0 == tl_device && id0 == 0, "current device %d:%d, expected %d:0", (int)dev0, id0, (int)tl_device);
    static const int bad_kinds[] = {INFINI_DEVICE_CAMBRICON, INFINI_DEVICE_ASCEND, INFINI_DEVICE_METAX,
                                    INFINI_DEVICE_MOORE, INFINI_DEVICE_ILUVATAR, INFINI_DEVICE_KUNLUN,
                                    INFINI_DEVICE_HYGON, INFINI_DEVICE_QY, INFINI_DEVICE_ALI,
                                    INFINI_DEVICE_TYPE_COUNT, 99, -1};
    for (size_t i = 0; i < sizeof bad_kinds / sizeof bad_kinds[0]; i++) {
        infiniStatus_t st = infinirtSetDevice((infiniDevice_t)bad_kinds[i], 0);
        if (st != INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED)
            tl_fail("infinirtSetDevice(kind %d, 0) returned %d, expected DEVICE_TYPE_NOT_SUPPORTED (5)", bad_kinds[i], (int)st);
        int n = -1;
        st = infinirtGetDeviceCount((infiniDevice_t)bad_kinds[i], &n);
        if (st == S_OK) TL_CHECK(n == 0, "infinirtGetDeviceCount(kind %d) = %d, expected 0", bad_kinds[i], n);
    }
    TL_EXPECT_STATUS(infinirtSetDevice(INFINI_DEVICE_CPU, 1), INFINI_STATUS_DEVICE_NOT_FOUND);
    TL_EXPECT_STATUS(infinirtSetDevice(INFINI_DEVICE_CPU, -1), INFINI_STATUS_DEVICE_NOT_FOUND);
#ifndef INFINIOP_TEST_WITH_CUDA
    TL_EXPECT_STATUS(infinirtSetDevice(INFINI_DEVICE_NVIDIA, 0), INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED);
#else
    int ngpu = 0;
    if (infinirtGetDeviceCount(INFINI_DEVICE_NVIDIA, &ngpu) == S_OK && ngpu > 0)
        TL_EXPECT_STATUS(infinirtSetDevice(INFINI_DEVICE_NVIDIA, ngpu), INFINI_STATUS_DEVICE_NOT_FOUND);
#endif
    /* failures changed nothing */
    infiniDevice_t dev1; int id1;
    TL_OK(infinirtGetDevice(&dev1, &id1));
    TL_CHECK(dev1 == dev0 && id1 == id0, "failed infinirtSetDevice calls changed the device to %d:%d", (int)dev1, id1);
    TL_EXPECT_STATUS(infinirtMemcpy(g_fake, g_fake + 64, 8, (infinirtMemcpyKind_t)7), S_PARAM);
    tl_case_end();
}

/* ------------------------------------------------------------ add_rms_norm */
static void test_add_rms_norm_create(void) {
    tl_case_begin("add_rms_norm create errors");
    infiniopAddRMSNormDescriptor_t op = NULL;
    infiniopHandle_t h = tl_handle;
    infiniopTensorDescriptor_t x = td(F16, 2, SH(4, 64), NULL), w = td(F32, 1, SH(64), NULL);
#define ARN(y_, r_, a_, b_, w_, eps_) infiniopCreateAddRMSNormDescriptor(h, &op, y_, r_, a_, b_, w_, eps_)
    EXPECT(infiniopCreateAddRMSNormDescriptor(NULL, &op, x, x, x, x, w, 1e-5f), S_NULL, NULL);
    EXPECT(infiniopCreateAddRMSNormDescriptor(h, NULL, x, x, x, x, w, 1e-5f), S_NULL, NULL);
    EXPECT(ARN(NULL, x, x, x, w, 1e-5f), S_NULL, "y");
    EXPECT2(ARN(x, NULL, x, x, w, 1e-5f), S_NULL, S_PARAM, "residual_out");
    EXPECT(ARN(x, x, NULL, x, w, 1e-5f), S_NULL, "a");
    EXPECT(ARN(x, x, x, NULL, w, 1e-5f), S_NULL, "b");
    EXPECT(ARN(x, x, x, x, NULL, 1e-5f), S_NULL, "weight");
    /* dtypes */
    infiniopTensorDescriptor_t xi = td(I32, 2, SH(4, 64), NULL), wi = td(I32, 1, SH(64), NULL);
    infiniopTensorDescriptor_t x64 = td(F64, 2, SH(4, 64), NULL), w64 = td(F64, 1, SH(64), NULL);
    infiniopTensorDescriptor_t x32 = td(F32, 2, SH(4, 64), NULL), xb = td(BF16, 2, SH(4, 64), NULL);
    infiniopTensorDescriptor_t w16 = td(F16, 1, SH(64), NULL), wb = td(BF16, 1, SH(64), NULL);
    EXPECT(ARN(xi, xi, xi, xi, wi, 1e-5f), S_DTYPE, NULL);
    EXPECT(ARN(x64, x64, x64, x64, w64, 1e-5f), S_DTYPE, NULL);
    EXPECT(ARN(x64, x64, x64, x64, w, 1e-5f), S_DTYPE, NULL);
    EXPECT(ARN(x, x, x, x32, w, 1e-5f), S_DTYPE, "b");
    EXPECT(ARN(x, x, xb, x, w, 1e-5f), S_DTYPE, "a");
    EXPECT(ARN(x32, x, x, x, w, 1e-5f), S_DTYPE, "y");
    EXPECT(ARN(x, xb, x, x, w, 1e-5f), S_DTYPE, "residual_out");
    EXPECT(ARN(x32, x32, x32, x32, w16, 1e-5f), S_DTYPE, "weight");
    EXPECT(ARN(x32, x32, x32, x32, wb, 1e-5f), S_DTYPE, "weight");
    EXPECT(ARN(x, x, x, x, wi, 1e-5f), S_DTYPE, "weight");
    EXPECT(ARN(x, x, x, x, w64, 1e-5f), S_DTYPE, "weight");
    /* allowed pairs */
    const infiniopTensorDescriptor_t acts[] = {x, xb}, ws[] = {w16, wb, w};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            if (TL_OK(ARN(acts[i], acts[i], acts[i], acts[i], ws[j], 1e-5f))) infiniopDestroyAddRMSNormDescriptor(op);
    /* shapes */
    EXPECT(ARN(x, x, x, td(F16, 2, SH(4, 65), NULL), w, 1e-5f), S_SHAPE, "b");
    EXPECT(ARN(td(F16, 2, SH(5, 64), NULL), x, x, x, w, 1e-5f), S_SHAPE, "y");
    EXPECT(ARN(x, td(F16, 3, SH(4, 1, 64), NULL), x, x, w, 1e-5f), S_SHAPE, "residual_out");
    EXPECT(ARN(x, x, x, x, td(F32, 1, SH(65), NULL), 1e-5f), S_SHAPE, "weight");
    EXPECT(ARN(x, x, x, x, td(F32, 2, SH(1, 64), NULL), 1e-5f), S_SHAPE, "weight");
    infiniopTensorDescriptor_t s0 = td(F16, 0, NULL, NULL), w0 = td(F32, 0, NULL, NULL);
    EXPECT(ARN(s0, s0, s0, s0, w0, 1e-5f), S_SHAPE, NULL);
    infiniopTensorDescriptor_t d0 = td(F16, 2, SH(4, 0), NULL), wd0 = td(F32, 1, SH(0), NULL);
    EXPECT(ARN(d0, d0, d0, d0, wd0, 1e-5f), S_SHAPE, NULL);
    infiniopTensorDescriptor_t dd0 = td(F16, 2, SH(0, 0), NULL);
    EXPECT(ARN(dd0, dd0, dd0, dd0, wd0, 1e-5f), S_SHAPE, NULL);
    /* strides */
    infiniopTensorDescriptor_t ls = td(F16, 2, SH(4, 64), ST(128, 2));
    EXPECT(ARN(x, x, ls, x, w, 1e-5f), S_STRIDES, "a");
    EXPECT(ARN(x, x, x, ls, w, 1e-5f), S_STRIDES, "b");
    EXPECT(ARN(ls, x, x, x, w, 1e-5f), S_STRIDES, "y");
    EXPECT(ARN(x, ls, x, x, w, 1e-5f), S_STRIDES, "residual_out");
    infiniopTensorDescriptor_t neg = td(F16, 2, SH(4, 64), ST(64, -1));
    EXPECT(ARN(x, x, neg, x, w, 1e-5f), S_STRIDES, "a");
    infiniopTensorDescriptor_t z0 = td(F16, 2, SH(4, 64), ST(0, 1)), ov = td(F16, 2, SH(4, 64), ST(32, 1));
    EXPECT(ARN(z0, x, x, x, w, 1e-5f), S_STRIDES, "y");
    EXPECT(ARN(x, ov, x, x, w, 1e-5f), S_STRIDES, "residual_out");
    if (TL_OK(ARN(x, x, z0, ov, td(F32, 1, SH(64), ST(-3)), 1e-5f))) infiniopDestroyAddRMSNormDescriptor(op);
    /* a stride-0 dim of length 1 is not an overlap */
    infiniopTensorDescriptor_t x3 = td(F16, 3, SH(4, 1, 64), NULL);
    if (TL_OK(ARN(td(F16, 3, SH(4, 1, 64), ST(64, 0, 1)), x3, x3, x3, w, 1e-5f))) infiniopDestroyAddRMSNormDescriptor(op);
    /* epsilon */
    EXPECT(ARN(x, x, x, x, w, NAN), S_PARAM, NULL);
    EXPECT(ARN(x, x, x, x, w, -1e-5f), S_PARAM, NULL);
    EXPECT(ARN(x, x, x, x, w, INFINITY), S_PARAM, NULL);
    EXPECT(ARN(x, x, x, x, w, -INFINITY), S_PARAM, NULL);
    const char *m = infiniopGetLastErrorMessage();
    TL_CHECK(strstr(m, "eps") != NULL, "epsilon message \"%s\" does not mention eps", m);
    if (TL_OK(ARN(x, x, x, x, w, 0.0f))) infiniopDestroyAddRMSNormDescriptor(op);
#undef ARN
    tl_case_end();
}

/* Byte offset k elements from a tensor's element 0 on the active device. */
static void *at(const tl_tensor *t, ptrdiff_t k) { return (unsigned char *)tl_tensor_ptr(t) + k * (ptrdiff_t)t->esize; }

static void prepare(tl_tensor *t, dt_t dt, size_t ndim, const size_t *shape, int output, tl_rng *rng) {
    tl_tensor_init(t, dt, ndim, shape, NULL);
    if (output) tl_tensor_poison(t);
    else tl_tensor_fill_random(t, rng, -2, 2);
    tl_tensor_upload(t);
}

/* After failing calls: nothing written anywhere. */
static void untouched(tl_tensor *t, const char *name) {
    tl_sync();
    tl_tensor_download(t);
    tl_tensor_check_untouched(t, name, 0);
}

static infiniopCausalSoftmaxDescriptor_t other_descriptor(void) {
    infiniopCausalSoftmaxDescriptor_t sm = NULL;
    infiniopTensorDescriptor_t s = td(F32, 2, SH(4, 8), NULL);
    TL_OK(infiniopCreateCausalSoftmaxDescriptor(tl_handle, &sm, s, s));
    return sm;
}

static void test_add_rms_norm_run(tl_rng *rng) {
    tl_case_begin("add_rms_norm run errors");
    tl_tensor y, r, a, b, w, pool;
    prepare(&y, F16, 2, SH(4, 64), 1, rng);
    prepare(&r, F16, 2, SH(4, 64), 1, rng);
    prepare(&a, F16, 2, SH(4, 64), 0, rng);
    prepare(&b, F16, 2, SH(4, 64), 0, rng);
    prepare(&w, F32, 1, SH(64), 0, rng);
    prepare(&pool, F16, 1, SH(1024), 1, rng);
    infiniopAddRMSNormDescriptor_t op = NULL;
    if (!TL_OK(infiniopCreateAddRMSNormDescriptor(tl_handle, &op, y.desc, r.desc, a.desc, b.desc, w.desc, 1e-5f))) goto out;
    void *Y = tl_tensor_ptr(&y), *R = tl_tensor_ptr(&r), *A = tl_tensor_ptr(&a), *B = tl_tensor_ptr(&b), *W = tl_tensor_ptr(&w);
    EXPECT(infiniopAddRMSNorm(NULL, NULL, 0, Y, R, A, B, W, NULL), S_NULL, NULL);
    EXPECT(infiniopAddRMSNorm(op, NULL, 0, NULL, R, A, B, W, NULL), S_NULL, "y");
    EXPECT(infiniopAddRMSNorm(op, NULL, 0, Y, NULL, A, B, W, NULL), S_NULL, "residual_out");
    EXPECT(infiniopAddRMSNorm(op, NULL, 0, Y, R, NULL, B, W, NULL), S_NULL, "a");
    EXPECT(infiniopAddRMSNorm(op, NULL, 0, Y, R, A, NULL, W, NULL), S_NULL, "b");
    EXPECT(infiniopAddRMSNorm(op, NULL, 0, Y, R, A, B, NULL, NULL), S_NULL, "weight");
    infiniopCausalSoftmaxDescriptor_t sm = other_descriptor();
    EXPECT(infiniopAddRMSNorm(sm, NULL, 0, Y, R, A, B, W, NULL), S_PARAM, NULL);
    size_t ws = 7;
    EXPECT(infiniopGetAddRMSNormWorkspaceSize(sm, &ws), S_PARAM, NULL);
    EXPECT(infiniopDestroyAddRMSNormDescriptor(sm), S_PARAM, NULL);
    TL_OK(infiniopDestroyCausalSoftmaxDescriptor(sm)); /* still alive after the refused destroy */
    EXPECT(infiniopGetAddRMSNormWorkspaceSize(NULL, &ws), S_NULL, NULL);
    EXPECT(infiniopGetAddRMSNormWorkspaceSize(op, NULL), S_NULL, NULL);
    memset(g_fake, 0, sizeof g_fake);
    EXPECT(infiniopAddRMSNorm((infiniopAddRMSNormDescriptor_t)(void *)g_fake, NULL, 0, Y, R, A, B, W, NULL), S_PARAM, NULL);
    /* partial overlaps: y one element past a; residual_out inside y */
    void *P = tl_tensor_ptr(&pool);
    EXPECT(infiniopAddRMSNorm(op, NULL, 0, at(&pool, 1), R, P, B, W, NULL), S_PARAM, NULL);
    EXPECT(infiniopAddRMSNorm(op, NULL, 0, at(&pool, 300), at(&pool, 332), A, B, W, NULL), S_PARAM, NULL);
    EXPECT(infiniopAddRMSNorm(op, NULL, 0, Y, at(&pool, 1), A, P, W, NULL), S_PARAM, NULL);
    EXPECT(infiniopAddRMSNorm(op, NULL, 0, at(&pool, 64), R, A, B, P, NULL), S_PARAM, NULL); /* y over weight */
    untouched(&y, "y"); untouched(&r, "residual_out"); untouched(&a, "a"); untouched(&b, "b");
    untouched(&w, "weight"); untouched(&pool, "pool");
    TL_OK(infiniopGetAddRMSNormWorkspaceSize(op, &ws));
    if (ws > 0) EXPECT(infiniopAddRMSNorm(op, NULL, ws - 1, Y, R, A, B, W, NULL), INFINI_STATUS_INSUFFICIENT_WORKSPACE, NULL);
    else TL_OK(infiniopAddRMSNorm(op, NULL, 0, Y, R, A, B, W, NULL)); /* NULL workspace of size 0 */
    tl_sync();
    tl_tensor_poison(&y); tl_tensor_upload(&y);
    tl_tensor_poison(&r); tl_tensor_upload(&r);
    TL_OK(infiniopDestroyAddRMSNormDescriptor(op));
    /* empty rows: success with NULL data pointers, nothing written */
    infiniopTensorDescriptor_t e = td(F16, 2, SH(0, 64), NULL);
    if (TL_OK(infiniopCreateAddRMSNormDescriptor(tl_handle, &op, e, e, e, e, w.desc, 1e-5f))) {
        TL_OK(infiniopAddRMSNorm(op, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL));
        TL_OK(infiniopAddRMSNorm(op, NULL, 0, Y, R, A, B, W, NULL));
        TL_OK(infiniopDestroyAddRMSNormDescriptor(op));
    }
    untouched(&y, "y (empty-op)"); untouched(&r, "residual_out (empty-op)");
out:
    tl_tensor_free(&y); tl_tensor_free(&r); tl_tensor_free(&a); tl_tensor_free(&b); tl_tensor_free(&w);
    tl_tensor_free(&pool);
    tl_case_end();
}

/* ------------------------------------------------------------ causal_softmax */
static void test_causal_softmax_errors(tl_rng *rng) {
    tl_case_begin("causal_softmax errors");
    infiniopCausalSoftmaxDescriptor_t op = NULL;
    infiniopHandle_t h = tl_handle;
    infiniopTensorDescriptor_t x = td(F32, 3, SH(2, 4, 8), NULL);
    EXPECT(infiniopCreateCausalSoftmaxDescriptor(NULL, &op, x, x), S_NULL, NULL);
    EXPECT(infiniopCreateCausalSoftmaxDescriptor(h, NULL, x, x), S_NULL, NULL);
    EXPECT(infiniopCreateCausalSoftmaxDescriptor(h, &op, NULL, x), S_NULL, "y");
    EXPECT(infiniopCreateCausalSoftmaxDescriptor(h, &op, x, NULL), S_NULL, "x");
    infiniopTensorDescriptor_t xi = td(I32, 3, SH(2, 4, 8), NULL), x64 = td(F64, 3, SH(2, 4, 8), NULL);
    infiniopTensorDescriptor_t x16 = td(F16, 3, SH(2, 4, 8), NULL);
    EXPECT(infiniopCreateCausalSoftmaxDescriptor(h, &op, xi, xi), S_DTYPE, NULL);
    EXPECT(infiniopCreateCausalSoftmaxDescriptor(h, &op, x64, x64), S_DTYPE, NULL);
    EXPECT(infiniopCreateCausalSoftmaxDescriptor(h, &op, x, x16), S_DTYPE, NULL);
    EXPECT(infiniopCreateCausalSoftmaxDescriptor(h, &op, x16, x), S_DTYPE, NULL);
    infiniopTensorDescriptor_t v1 = td(F32, 1, SH(8), NULL), s0 = td(F32, 0, NULL, NULL);
    EXPECT(infiniopCreateCausalSoftmaxDescriptor(h, &op, v1, v1), S_SHAPE, NULL);
    EXPECT(infiniopCreateCausalSoftmaxDescriptor(h, &op, s0, s0), S_SHAPE, NULL);
    EXPECT(infiniopCreateCausalSoftmaxDescriptor(h, &op, x, td(F32, 3, SH(2, 4, 9), NULL)), S_SHAPE, NULL);
    EXPECT(infiniopCreateCausalSoftmaxDescriptor(h, &op, td(F32, 3, SH(3, 4, 8), NULL), x), S_SHAPE, NULL);
    EXPECT(infiniopCreateCausalSoftmaxDescriptor(h, &op, x, td(F32, 2, SH(4, 8), NULL)), S_SHAPE, NULL);
    infiniopTensorDescriptor_t tls = td(F32, 3, SH(2, 8, 4), NULL); /* T < S */
    EXPECT(infiniopCreateCausalSoftmaxDescriptor(h, &op, tls, tls), S_SHAPE, NULL);
    infiniopTensorDescriptor_t t0 = td(F32, 3, SH(2, 0, 0), NULL), t0b = td(F32, 2, SH(3, 0), NULL);
    EXPECT(infiniopCreateCausalSoftmaxDescriptor(h, &op, t0, t0), S_SHAPE, NULL);
    EXPECT(infiniopCreateCausalSoftmaxDescriptor(h, &op, t0b, t0b), S_SHAPE, NULL);
    infiniopTensorDescriptor_t yz = td(F32, 3, SH(2, 4, 8), ST(0, 8, 1)), yo = td(F32, 3, SH(2, 4, 8), ST(32, 4, 1));
    infiniopTensorDescriptor_t yl = td(F32, 3, SH(2, 4, 8), ST(32, 8, 0));
    EXPECT(infiniopCreateCausalSoftmaxDescriptor(h, &op, yz, x), S_STRIDES, "y");
    EXPECT(infiniopCreateCausalSoftmaxDescriptor(h, &op, yo, x), S_STRIDES, "y");
    EXPECT(infiniopCreateCausalSoftmaxDescriptor(h, &op, yl, x), S_STRIDES, "y");
    if (TL_OK(infiniopCreateCausalSoftmaxDescriptor(h, &op, x, yz))) infiniopDestroyCausalSoftmaxDescriptor(op); /* inputs: any strides */
    if (TL_OK(infiniopCreateCausalSoftmaxDescriptor(h, &op, x, yl))) infiniopDestroyCausalSoftmaxDescriptor(op);

    tl_tensor y, xt, pool;
    prepare(&y, F32, 3, SH(2, 4, 8), 1, rng);
    prepare(&xt, F32, 3, SH(2, 4, 8), 0, rng);
    prepare(&pool, F32, 1, SH(256), 1, rng);
    if (TL_OK(infiniopCreateCausalSoftmaxDescriptor(h, &op, y.desc, xt.desc))) {
        void *Y = tl_tensor_ptr(&y), *X = tl_tensor_ptr(&xt);
        EXPECT(infiniopCausalSoftmax(NULL, NULL, 0, Y, X, NULL), S_NULL, NULL);
        EXPECT(infiniopCausalSoftmax(op, NULL, 0, NULL, X, NULL), S_NULL, "y");
        EXPECT(infiniopCausalSoftmax(op, NULL, 0, Y, NULL, NULL), S_NULL, "x");
        EXPECT(infiniopCausalSoftmax(op, NULL, 0, at(&pool, 1), tl_tensor_ptr(&pool), NULL), S_PARAM, NULL);
        EXPECT(infiniopCausalSoftmax(op, NULL, 0, tl_tensor_ptr(&pool), at(&pool, 63), NULL), S_PARAM, NULL);
        infiniopSiluDescriptor_t si = NULL;
        if (TL_OK(infiniopCreateSiluDescriptor(h, &si, x, x))) {
            EXPECT(infiniopCausalSoftmax(si, NULL, 0, Y, X, NULL), S_PARAM, NULL);
            size_t ws;
            EXPECT(infiniopGetCausalSoftmaxWorkspaceSize(si, &ws), S_PARAM, NULL);
            EXPECT(infiniopDestroyCausalSoftmaxDescriptor(si), S_PARAM, NULL);
            TL_OK(infiniopDestroySiluDescriptor(si));
        }
        untouched(&y, "y"); untouched(&xt, "x"); untouched(&pool, "pool");
        TL_OK(infiniopCausalSoftmax(op, NULL, 0, Y, X, NULL));
        TL_OK(infiniopCausalSoftmax(op, NULL, 0, X, X, NULL)); /* in-place */
        TL_OK(infiniopDestroyCausalSoftmaxDescriptor(op));
    }
    infiniopTensorDescriptor_t e = td(F32, 3, SH(0, 4, 8), NULL);
    if (TL_OK(infiniopCreateCausalSoftmaxDescriptor(h, &op, e, e))) {
        TL_OK(infiniopCausalSoftmax(op, NULL, 0, NULL, NULL, NULL));
        TL_OK(infiniopDestroyCausalSoftmaxDescriptor(op));
    }
    tl_tensor_free(&y); tl_tensor_free(&xt); tl_tensor_free(&pool);
    tl_case_end();
}

/* ------------------------------------------------------------ layer_norm */
static void test_layer_norm_errors(tl_rng *rng) {
    tl_case_begin("layer_norm errors");
    infiniopLayerNormDescriptor_t op = NULL;
    infiniopHandle_t h = tl_handle;
    infiniopTensorDescriptor_t x = td(F32, 2, SH(4, 64), NULL), s = td(F32, 1, SH(4), NULL), w = td(F32, 1, SH(64), NULL);
#define LN(o_, z_, s_, i_, w_, b_, e_) infiniopCreateLayerNormDescriptor(h, &op, o_, z_, s_, i_, w_, b_, e_)
    EXPECT(infiniopCreateLayerNormDescriptor(NULL, &op, x, x, s, x, w, w, 1e-5f), S_NULL, NULL);
    EXPECT(infiniopCreateLayerNormDescriptor(h, NULL, x, x, s, x, w, w, 1e-5f), S_NULL, NULL);
    EXPECT(LN(NULL, x, s, x, w, w, 1e-5f), S_NULL, "output");
    EXPECT(LN(x, NULL, s, x, w, w, 1e-5f), S_NULL, "input_standardization");
    EXPECT(LN(x, x, NULL, x, w, w, 1e-5f), S_NULL, "input_std_deviation");
    EXPECT(LN(x, x, s, NULL, w, w, 1e-5f), S_NULL, "input");
    EXPECT(LN(x, x, s, x, NULL, w, 1e-5f), S_NULL, "weight");
    infiniopTensorDescriptor_t xi = td(I32, 2, SH(4, 64), NULL), si = td(I32, 1, SH(4), NULL), wi = td(I32, 1, SH(64), NULL);
    infiniopTensorDescriptor_t x64 = td(F64, 2, SH(4, 64), NULL), s64 = td(F64, 1, SH(4), NULL), w64 = td(F64, 1, SH(64), NULL);
    infiniopTensorDescriptor_t x16 = td(F16, 2, SH(4, 64), NULL), s16 = td(F16, 1, SH(4), NULL), w16 = td(F16, 1, SH(64), NULL);
    EXPECT(LN(xi, xi, si, xi, wi, wi, 1e-5f), S_DTYPE, NULL);
    EXPECT(LN(x64, x64, s64, x64, w64, w64, 1e-5f), S_DTYPE, NULL);
    EXPECT(LN(x, x, s, x, w16, w, 1e-5f), S_DTYPE, "weight");
    EXPECT(LN(x, x, s, x, w, w16, 1e-5f), S_DTYPE, "bias");
    EXPECT(LN(x, x, s16, x, w, w, 1e-5f), S_DTYPE, "input_std_deviation");
    EXPECT(LN(x16, x, s, x, w, w, 1e-5f), S_DTYPE, "output");
    EXPECT(LN(x, x16, s, x, w, w, 1e-5f), S_DTYPE, "input_standardization");
    if (TL_OK(LN(x16, x16, s16, x16, w16, NULL, 1e-5f))) infiniopDestroyLayerNormDescriptor(op);
    EXPECT(LN(x, x, s, x, w, td(F32, 1, SH(65), NULL), 1e-5f), S_SHAPE, "bias");
    EXPECT(LN(x, x, s, x, td(F32, 1, SH(63), NULL), w, 1e-5f), S_SHAPE, "weight");
    EXPECT(LN(x, x, td(F32, 1, SH(5), NULL), x, w, w, 1e-5f), S_SHAPE, "input_std_deviation");
    EXPECT(LN(x, x, td(F32, 2, SH(4, 1), NULL), x, w, w, 1e-5f), S_SHAPE, "input_std_deviation");
    EXPECT(LN(td(F32, 2, SH(4, 65), NULL), x, s, x, w, w, 1e-5f), S_SHAPE, "output");
    EXPECT(LN(x, td(F32, 2, SH(3, 64), NULL), s, x, w, w, 1e-5f), S_SHAPE, "input_standardization");
    infiniopTensorDescriptor_t z0 = td(F32, 0, NULL, NULL);
    EXPECT(LN(z0, z0, z0, z0, z0, NULL, 1e-5f), S_SHAPE, NULL);
    infiniopTensorDescriptor_t d0 = td(F32, 2, SH(4, 0), NULL), wd0 = td(F32, 1, SH(0), NULL);
    EXPECT(LN(d0, d0, s, d0, wd0, NULL, 1e-5f), S_SHAPE, NULL);
    infiniopTensorDescriptor_t oz = td(F32, 2, SH(4, 64), ST(0, 1)), ol = td(F32, 2, SH(4, 64), ST(64, 0));
    infiniopTensorDescriptor_t oo = td(F32, 2, SH(4, 64), ST(16, 1)), sz = td(F32, 1, SH(4), ST(0));
    EXPECT(LN(oz, x, s, x, w, w, 1e-5f), S_STRIDES, "output");
    EXPECT(LN(x, ol, s, x, w, w, 1e-5f), S_STRIDES, "input_standardization");
    EXPECT(LN(oo, x, s, x, w, w, 1e-5f), S_STRIDES, "output");
    EXPECT(LN(x, x, sz, x, w, w, 1e-5f), S_STRIDES, "input_std_deviation");
    if (TL_OK(LN(x, x, s, oz, td(F32, 1, SH(64), ST(0)), td(F32, 1, SH(64), ST(-2)), 1e-5f)))
        infiniopDestroyLayerNormDescriptor(op);
    EXPECT(LN(x, x, s, x, w, w, NAN), S_PARAM, NULL);
    EXPECT(LN(x, x, s, x, w, w, -1.0f), S_PARAM, NULL);
    EXPECT(LN(x, x, s, x, w, w, INFINITY), S_PARAM, NULL);
    const char *m = infiniopGetLastErrorMessage();
    TL_CHECK(strstr(m, "eps") != NULL, "epsilon message \"%s\" does not mention eps", m);

    tl_tensor o, z, sd, in, wt, bt, pool;
    prepare(&o, F32, 2, SH(4, 64), 1, rng);
    prepare(&z, F32, 2, SH(4, 64), 1, rng);
    prepare(&sd, F32, 1, SH(4), 1, rng);
    prepare(&in, F32, 2, SH(4, 64), 0, rng);
    prepare(&wt, F32, 1, SH(64), 0, rng);
    prepare(&bt, F32, 1, SH(64), 0, rng);
    prepare(&pool, F32, 1, SH(1024), 1, rng);
    void *O = tl_tensor_ptr(&o), *Z = tl_tensor_ptr(&z), *SD = tl_tensor_ptr(&sd), *I = tl_tensor_ptr(&in);
    void *W = tl_tensor_ptr(&wt), *B = tl_tensor_ptr(&bt);
    infiniopLayerNormDescriptor_t nob = NULL;
    if (TL_OK(LN(o.desc, z.desc, sd.desc, in.desc, wt.desc, bt.desc, 1e-5f)) &&
        TL_OK(infiniopCreateLayerNormDescriptor(h, &nob, o.desc, z.desc, sd.desc, in.desc, wt.desc, NULL, 1e-5f))) {
        EXPECT(infiniopLayerNorm(NULL, NULL, 0, O, Z, SD, I, W, B, NULL), S_NULL, NULL);
        EXPECT(infiniopLayerNorm(op, NULL, 0, NULL, Z, SD, I, W, B, NULL), S_NULL, "output");
        EXPECT(infiniopLayerNorm(op, NULL, 0, O, NULL, SD, I, W, B, NULL), S_NULL, "input_standardization");
        EXPECT(infiniopLayerNorm(op, NULL, 0, O, Z, NULL, I, W, B, NULL), S_NULL, "input_std_deviation");
        EXPECT(infiniopLayerNorm(op, NULL, 0, O, Z, SD, NULL, W, B, NULL), S_NULL, "input");
        EXPECT(infiniopLayerNorm(op, NULL, 0, O, Z, SD, I, NULL, B, NULL), S_NULL, "weight");
        EXPECT(infiniopLayerNorm(op, NULL, 0, O, Z, SD, I, W, NULL, NULL), S_PARAM, "bias");
        EXPECT(infiniopLayerNorm(nob, NULL, 0, O, Z, SD, I, W, B, NULL), S_PARAM, "bias");
        infiniopCausalSoftmaxDescriptor_t smd = other_descriptor();
        EXPECT(infiniopLayerNorm(smd, NULL, 0, O, Z, SD, I, W, B, NULL), S_PARAM, NULL);
        size_t ws;
        EXPECT(infiniopGetLayerNormWorkspaceSize(smd, &ws), S_PARAM, NULL);
        EXPECT(infiniopDestroyLayerNormDescriptor(smd), S_PARAM, NULL);
        TL_OK(infiniopDestroyCausalSoftmaxDescriptor(smd));
        /* partial overlaps between outputs, and output over an input */
        EXPECT(infiniopLayerNorm(op, NULL, 0, tl_tensor_ptr(&pool), at(&pool, 100), SD, I, W, B, NULL), S_PARAM, NULL);
        EXPECT(infiniopLayerNorm(op, NULL, 0, O, Z, at(&pool, 2), at(&pool, 0), W, B, NULL), S_PARAM, NULL);
        EXPECT(infiniopLayerNorm(op, NULL, 0, at(&pool, 1), Z, SD, tl_tensor_ptr(&pool), W, B, NULL), S_PARAM, NULL);
        EXPECT(infiniopLayerNorm(op, NULL, 0, O, at(&pool, 0), SD, I, W, at(&pool, 200), NULL), S_PARAM, NULL);
        untouched(&o, "output"); untouched(&z, "input_standardization"); untouched(&sd, "input_std_deviation");
        untouched(&in, "input"); untouched(&wt, "weight"); untouched(&bt, "bias"); untouched(&pool, "pool");
        TL_OK(infiniopLayerNorm(op, NULL, 0, O, Z, SD, I, W, B, NULL));
        TL_OK(infiniopLayerNorm(nob, NULL, 0, O, Z, SD, I, W, NULL, NULL));
    }
    if (op) TL_OK(infiniopDestroyLayerNormDescriptor(op));
    if (nob) TL_OK(infiniopDestroyLayerNormDescriptor(nob));
    infiniopTensorDescriptor_t e = td(F32, 2, SH(0, 64), NULL), es = td(F32, 1, SH(0), NULL);
    if (TL_OK(LN(e, e, es, e, w, NULL, 1e-5f))) {
        TL_OK(infiniopLayerNorm(op, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
        TL_OK(infiniopDestroyLayerNormDescriptor(op));
    }
#undef LN
    tl_tensor_free(&o); tl_tensor_free(&z); tl_tensor_free(&sd); tl_tensor_free(&in);
    tl_tensor_free(&wt); tl_tensor_free(&bt); tl_tensor_free(&pool);
    tl_case_end();
}

/* ------------------------------------------------------------ silu / sigmoid */
typedef infiniStatus_t (*ucreate_t)(infiniopHandle_t, struct InfiniopDescriptor **, infiniopTensorDescriptor_t,
                                    infiniopTensorDescriptor_t);
typedef infiniStatus_t (*urun_t)(struct InfiniopDescriptor *, void *, size_t, void *, const void *, void *);
typedef infiniStatus_t (*uws_t)(struct InfiniopDescriptor *, size_t *);
typedef infiniStatus_t (*udestroy_t)(struct InfiniopDescriptor *);

static void test_unary_errors(const char *name, const char *out_name, const char *in_name, ucreate_t create,
                              urun_t run, uws_t wsf, udestroy_t destroy, tl_rng *rng) {
    tl_case_begin("%s errors", name);
    struct InfiniopDescriptor *op = NULL;
    infiniopHandle_t h = tl_handle;
    infiniopTensorDescriptor_t x = td(F32, 2, SH(4, 64), NULL);
    EXPECT(create(NULL, &op, x, x), S_NULL, NULL);
    EXPECT(create(h, NULL, x, x), S_NULL, NULL);
    EXPECT(create(h, &op, NULL, x), S_NULL, out_name);
    EXPECT(create(h, &op, x, NULL), S_NULL, in_name);
    infiniopTensorDescriptor_t xi = td(I32, 2, SH(4, 64), NULL), x16 = td(F16, 2, SH(4, 64), NULL);
    infiniopTensorDescriptor_t x64 = td(F64, 2, SH(4, 64), NULL), xb = td(INFINI_DTYPE_BYTE, 2, SH(4, 64), NULL);
    EXPECT(create(h, &op, xi, xi), S_DTYPE, NULL);
    EXPECT(create(h, &op, xb, xb), S_DTYPE, NULL);
    EXPECT(create(h, &op, x16, x), S_DTYPE, NULL);
    EXPECT(create(h, &op, x, x64), S_DTYPE, NULL);
    EXPECT(create(h, &op, x, td(F32, 1, SH(3), NULL)), S_SHAPE, in_name);
    EXPECT(create(h, &op, x, td(F32, 3, SH(2, 4, 64), NULL)), S_SHAPE, in_name);
    EXPECT(create(h, &op, td(F32, 2, SH(1, 64), NULL), x), S_SHAPE, NULL);
    EXPECT(create(h, &op, x, td(F32, 2, SH(4, 0), NULL)), S_SHAPE, NULL);
    EXPECT(create(h, &op, td(F32, 2, SH(4, 64), ST(0, 1)), x), S_STRIDES, out_name);
    EXPECT(create(h, &op, td(F32, 2, SH(4, 64), ST(32, 1)), x), S_STRIDES, out_name);
    EXPECT(create(h, &op, td(F32, 2, SH(4, 64), ST(1, 2)), x), S_STRIDES, out_name);
    /* valid: broadcast inputs, 0-d, empty */
    const infiniopTensorDescriptor_t okin[] = {td(F32, 2, SH(4, 64), ST(0, 1)), td(F32, 1, SH(64), NULL),
                                               td(F32, 2, SH(4, 1), NULL), td(F32, 0, NULL, NULL),
                                               td(F32, 2, SH(4, 64), ST(0, 0))};
    for (size_t i = 0; i < 5; i++)
        if (TL_OK(create(h, &op, x, okin[i]))) destroy(op);
    infiniopTensorDescriptor_t s0 = td(F64, 0, NULL, NULL), e = td(F32, 3, SH(2, 0, 3), NULL);
    if (TL_OK(create(h, &op, s0, s0))) destroy(op);
    if (TL_OK(create(h, &op, e, e))) {
        TL_OK(run(op, NULL, 0, NULL, NULL, NULL));
        destroy(op);
    }
    tl_tensor y, xt, pool;
    prepare(&y, F32, 2, SH(4, 64), 1, rng);
    prepare(&xt, F32, 2, SH(4, 64), 0, rng);
    prepare(&pool, F32, 1, SH(1024), 1, rng);
    if (TL_OK(create(h, &op, y.desc, xt.desc))) {
        void *Y = tl_tensor_ptr(&y), *X = tl_tensor_ptr(&xt);
        EXPECT(run(NULL, NULL, 0, Y, X, NULL), S_NULL, NULL);
        EXPECT(run(op, NULL, 0, NULL, X, NULL), S_NULL, out_name);
        EXPECT(run(op, NULL, 0, Y, NULL, NULL), S_NULL, in_name);
        EXPECT(run(op, NULL, 0, at(&pool, 1), tl_tensor_ptr(&pool), NULL), S_PARAM, NULL);
        EXPECT(run(op, NULL, 0, at(&pool, 100), at(&pool, 200), NULL), S_PARAM, NULL);
        infiniopCausalSoftmaxDescriptor_t smd = other_descriptor();
        EXPECT(run(smd, NULL, 0, Y, X, NULL), S_PARAM, NULL);
        size_t ws;
        EXPECT(wsf(smd, &ws), S_PARAM, NULL);
        EXPECT(wsf(NULL, &ws), S_NULL, NULL);
        EXPECT(wsf(op, NULL), S_NULL, NULL);
        EXPECT(destroy(smd), S_PARAM, NULL);
        TL_OK(infiniopDestroyCausalSoftmaxDescriptor(smd));
        untouched(&y, out_name); untouched(&xt, in_name); untouched(&pool, "pool");
        TL_OK(wsf(op, &ws));
        if (ws == 0) TL_OK(run(op, NULL, 0, Y, X, NULL));
        TL_OK(run(op, NULL, 0, X, X, NULL));
        TL_OK(destroy(op));
    }
    tl_tensor_free(&y); tl_tensor_free(&xt); tl_tensor_free(&pool);
    tl_case_end();
}

/* ------------------------------------------------------------ descriptors in general */
static void test_descriptor_queries(void) {
    tl_case_begin("descriptor queries");
    infiniopCausalSoftmaxDescriptor_t sm = other_descriptor();
    infiniDevice_t d;
    int id;
    EXPECT(infiniopGetDescriptorDeviceType(NULL, &d), S_NULL, NULL);
    EXPECT(infiniopGetDescriptorDeviceId(NULL, &id), S_NULL, NULL);
    EXPECT(infiniopGetDescriptorDeviceType(sm, NULL), S_NULL, NULL);
    EXPECT(infiniopGetDescriptorDeviceId(sm, NULL), S_NULL, NULL);
    memset(g_fake, 0, sizeof g_fake);
    EXPECT(infiniopGetDescriptorDeviceType((const struct InfiniopDescriptor *)(void *)g_fake, &d), S_PARAM, NULL);
    EXPECT(infiniopGetDescriptorDeviceId((const struct InfiniopDescriptor *)(void *)g_fake, &id), S_PARAM, NULL);
    EXPECT(infiniopDestroyCausalSoftmaxDescriptor((infiniopCausalSoftmaxDescriptor_t)(void *)g_fake), S_PARAM, NULL);
    if (TL_OK(infiniopGetDescriptorDeviceType(sm, &d))) TL_CHECK(d == tl_device, "device type %d", (int)d);
    TL_OK(infiniopDestroyCausalSoftmaxDescriptor(sm));
    tl_case_end();
}

/* ------------------------------------------------------------ per-thread messages */
typedef struct {
    char initial[1024], after[1024];
    infiniStatus_t st;
} thread_msgs;

static void *second_thread(void *arg) {
    thread_msgs *m = arg;
    snprintf(m->initial, sizeof m->initial, "%s", infiniopGetLastErrorMessage());
    infiniopTensorDescriptor_t d = NULL;
    m->st = infiniopCreateTensorDescriptor(&d, 2, SH(2, 3), NULL, (infiniDtype_t)99);
    snprintf(m->after, sizeof m->after, "%s", infiniopGetLastErrorMessage());
    return NULL;
}

static void test_thread_messages(void) {
    tl_case_begin("error messages are per thread");
    infiniopCausalSoftmaxDescriptor_t op = NULL;
    infiniopTensorDescriptor_t tls = td(F32, 2, SH(8, 4), NULL);
    TL_EXPECT_STATUS(infiniopCreateCausalSoftmaxDescriptor(tl_handle, &op, tls, tls), S_SHAPE);
    char mine[1024];
    snprintf(mine, sizeof mine, "%s", infiniopGetLastErrorMessage());
    TL_CHECK(*mine, "no message after a failure");
    /* a successful call leaves the message unchanged */
    infiniopTensorDescriptor_t ok = td(F32, 2, SH(4, 8), NULL);
    if (TL_OK(infiniopCreateCausalSoftmaxDescriptor(tl_handle, &op, ok, ok))) infiniopDestroyCausalSoftmaxDescriptor(op);
    TL_CHECK(!strcmp(mine, infiniopGetLastErrorMessage()), "a successful call changed the message to \"%s\"",
             infiniopGetLastErrorMessage());
    thread_msgs m;
    memset(&m, 0, sizeof m);
    pthread_t t;
    if (pthread_create(&t, NULL, second_thread, &m) == 0) {
        pthread_join(t, NULL);
        TL_CHECK(m.initial[0] == 0, "a new thread's message is \"%s\", expected empty", m.initial);
        TL_CHECK(m.st == S_DTYPE, "second thread: status %d", (int)m.st);
        TL_CHECK(m.after[0] && strcmp(m.after, mine), "second thread's message \"%s\"", m.after);
        TL_CHECK(!strcmp(mine, infiniopGetLastErrorMessage()),
                 "another thread's failure changed this thread's message from \"%s\" to \"%s\"", mine,
                 infiniopGetLastErrorMessage());
    }
    tl_case_end();
}

int main(int argc, char **argv) {
    tl_init(argc, argv, "test_errors");
    tl_rng rng;
    tl_rng_seed(&rng, tl_seed);
    test_thread_messages(); /* first, while this thread's message history is short */
    test_tensor_descriptors();
    test_handles_devices();
    test_descriptor_queries();
    test_add_rms_norm_create();
    test_add_rms_norm_run(&rng);
    test_causal_softmax_errors(&rng);
    test_layer_norm_errors(&rng);
    test_unary_errors("silu", "output|y", "input|x", infiniopCreateSiluDescriptor, infiniopSilu,
                      infiniopGetSiluWorkspaceSize, infiniopDestroySiluDescriptor, &rng);
    test_unary_errors("sigmoid", "y|output", "x|input", infiniopCreateSigmoidDescriptor, infiniopSigmoid,
                      infiniopGetSigmoidWorkspaceSize, infiniopDestroySigmoidDescriptor, &rng);
    for (size_t i = 0; i < g_npool; i++) infiniopDestroyTensorDescriptor(g_pool[i]);
    return tl_finish();
}
