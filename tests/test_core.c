/*
 * test_core.c - tensor descriptors, handles, the runtime (on the device
 * under test), descriptor queries and status strings.
 */
#define _POSIX_C_SOURCE 200809L
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void test_tensor_descriptors(tl_rng *rng) {
    tl_case_begin("tensor descriptors");
    infiniopTensorDescriptor_t d = NULL;
    /* every dtype can describe a tensor */
    for (int dt = INFINI_DTYPE_BYTE; dt <= INFINI_DTYPE_BF16; dt++) {
        if (TL_OK(infiniopCreateTensorDescriptor(&d, 2, (const size_t[]){3, 4}, NULL, (infiniDtype_t)dt)))
            TL_OK(infiniopDestroyTensorDescriptor(d));
    }
    /* ndim 0, shape NULL */
    if (TL_OK(infiniopCreateTensorDescriptor(&d, 0, NULL, NULL, INFINI_DTYPE_F32))) TL_OK(infiniopDestroyTensorDescriptor(d));
    tl_case_end();

    /* NULL strides mean contiguous row-major: silu with a NULL-strides output
     * and an explicitly strided contiguous input, and the reverse, must give
     * the element-for-element result; the arrays are copied (we overwrite
     * ours after creation), and the tensor descriptors may be destroyed
     * right after the operator descriptor is created. */
    tl_case_begin("NULL strides = contiguous; descriptors copy their arrays");
    size_t shape[3] = {3, 5, 7};
    ptrdiff_t strides[3] = {35, 7, 1};
    tl_tensor x, y;
    tl_tensor_init(&x, INFINI_DTYPE_F32, 3, shape, strides); /* explicit */
    tl_tensor_init(&y, INFINI_DTYPE_F32, 3, shape, NULL);    /* NULL strides */
    tl_tensor_fill_random(&x, rng, -3, 3);
    tl_tensor_poison(&y);
    infiniopTensorDescriptor_t xd = NULL, yd = NULL;
    size_t sh2[3] = {3, 5, 7};
    ptrdiff_t st2[3] = {35, 7, 1};
    TL_OK(infiniopCreateTensorDescriptor(&xd, 3, sh2, st2, INFINI_DTYPE_F32));
    TL_OK(infiniopCreateTensorDescriptor(&yd, 3, sh2, NULL, INFINI_DTYPE_F32));
    sh2[0] = 1000; st2[0] = -1; /* must not matter: the descriptors copied them */
    infiniopSiluDescriptor_t op = NULL;
    if (TL_OK(infiniopCreateSiluDescriptor(tl_handle, &op, yd, xd))) {
        TL_OK(infiniopDestroyTensorDescriptor(xd));
        TL_OK(infiniopDestroyTensorDescriptor(yd));
        tl_tensor_upload(&x);
        tl_tensor_upload(&y);
        TL_OK(infiniopSilu(op, NULL, 0, tl_tensor_ptr(&y), tl_tensor_ptr(&x), NULL));
        tl_sync();
        tl_tensor_download(&y);
        tl_tensor_check_untouched(&y, "y", 1);
        for (size_t i = 0; i < y.numel; i++) {
            double xv = tl_tensor_get(&x, i), got = tl_tensor_get(&y, i);
            double want = xv / (1.0 + exp(-xv));
            if (!(fabs(got - want) <= 1e-5 * fabs(want) + 1e-30)) {
                tl_fail("element %zu: silu(%g) = %.9g, want %.9g", i, xv, got, want);
                break;
            }
        }
        infiniDevice_t dev = (infiniDevice_t)-1;
        int id = -1;
        TL_OK(infiniopGetDescriptorDeviceType(op, &dev));
        TL_OK(infiniopGetDescriptorDeviceId(op, &id));
        TL_CHECK(dev == tl_device, "descriptor device type %d, expected %d", (int)dev, (int)tl_device);
        TL_CHECK(id == 0, "descriptor device id %d, expected 0", id);
        TL_OK(infiniopDestroySiluDescriptor(op));
    }
    tl_tensor_free(&x);
    tl_tensor_free(&y);
    tl_case_end();

    tl_case_begin("descriptor device queries for every operator");
    infiniopTensorDescriptor_t m = NULL, w = NULL, s = NULL;
    TL_OK(infiniopCreateTensorDescriptor(&m, 2, (const size_t[]){4, 16}, NULL, INFINI_DTYPE_F32));
    TL_OK(infiniopCreateTensorDescriptor(&w, 1, (const size_t[]){16}, NULL, INFINI_DTYPE_F32));
    TL_OK(infiniopCreateTensorDescriptor(&s, 1, (const size_t[]){4}, NULL, INFINI_DTYPE_F32));
    struct InfiniopDescriptor *ops[5] = {0};
    TL_OK(infiniopCreateAddRMSNormDescriptor(tl_handle, &ops[0], m, m, m, m, w, 1e-5f));
    TL_OK(infiniopCreateCausalSoftmaxDescriptor(tl_handle, &ops[1], m, m));
    TL_OK(infiniopCreateLayerNormDescriptor(tl_handle, &ops[2], m, m, s, m, w, w, 1e-5f));
    TL_OK(infiniopCreateSiluDescriptor(tl_handle, &ops[3], m, m));
    TL_OK(infiniopCreateSigmoidDescriptor(tl_handle, &ops[4], m, m));
    for (int i = 0; i < 5; i++) {
        if (!ops[i]) continue;
        infiniDevice_t dev = (infiniDevice_t)-1;
        int id = -1;
        TL_OK(infiniopGetDescriptorDeviceType(ops[i], &dev));
        TL_OK(infiniopGetDescriptorDeviceId(ops[i], &id));
        TL_CHECK(dev == tl_device && id == 0, "operator %d: device %d:%d", i, (int)dev, id);
    }
    if (ops[0]) TL_OK(infiniopDestroyAddRMSNormDescriptor(ops[0]));
    if (ops[1]) TL_OK(infiniopDestroyCausalSoftmaxDescriptor(ops[1]));
    if (ops[2]) TL_OK(infiniopDestroyLayerNormDescriptor(ops[2]));
    if (ops[3]) TL_OK(infiniopDestroySiluDescriptor(ops[3]));
    if (ops[4]) TL_OK(infiniopDestroySigmoidDescriptor(ops[4]));
    TL_OK(infiniopDestroyTensorDescriptor(m));
    TL_OK(infiniopDestroyTensorDescriptor(w));
    TL_OK(infiniopDestroyTensorDescriptor(s));
    tl_case_end();
}

static void test_handles(void) {
    tl_case_begin("handles");
    infiniopHandle_t h[4] = {0};
    for (int i = 0; i < 4; i++) TL_OK(infiniopCreateHandle(&h[i]));
    TL_CHECK(h[0] && h[1] && h[0] != h[1], "distinct handles expected");
    for (int i = 0; i < 4; i++) if (h[i]) TL_OK(infiniopDestroyHandle(h[i]));
    /* a CPU handle while the thread's device is CPU */
    if (tl_device != INFINI_DEVICE_CPU) {
        TL_OK(infinirtSetDevice(INFINI_DEVICE_CPU, 0));
        infiniopHandle_t c = NULL;
        if (TL_OK(infiniopCreateHandle(&c))) {
            infiniopTensorDescriptor_t m = NULL;
            TL_OK(infiniopCreateTensorDescriptor(&m, 1, (const size_t[]){8}, NULL, INFINI_DTYPE_F32));
            infiniopSiluDescriptor_t op = NULL;
            if (TL_OK(infiniopCreateSiluDescriptor(c, &op, m, m))) {
                infiniDevice_t dev;
                TL_OK(infiniopGetDescriptorDeviceType(op, &dev));
                TL_CHECK(dev == INFINI_DEVICE_CPU, "CPU handle's descriptor on device %d", (int)dev);
                TL_OK(infiniopDestroySiluDescriptor(op));
            }
            TL_OK(infiniopDestroyTensorDescriptor(m));
            TL_OK(infiniopDestroyHandle(c));
        }
        TL_OK(infinirtSetDevice(tl_device, 0));
    }
    tl_case_end();
}

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void test_runtime(void) {
    tl_case_begin("infinirt devices");
    TL_OK(infinirtInit());
    TL_OK(infinirtInit());
    int n = -1;
    TL_OK(infinirtGetDeviceCount(INFINI_DEVICE_CPU, &n));
    TL_CHECK(n == 1, "CPU device count %d, expected 1", n);
    int counts[INFINI_DEVICE_TYPE_COUNT];
    for (int i = 0; i < INFINI_DEVICE_TYPE_COUNT; i++) counts[i] = -1;
    TL_OK(infinirtGetAllDeviceCount(counts));
    TL_CHECK(counts[INFINI_DEVICE_CPU] == 1, "all counts: CPU %d", counts[INFINI_DEVICE_CPU]);
    for (int i = INFINI_DEVICE_CAMBRICON; i < INFINI_DEVICE_TYPE_COUNT; i++)
        TL_CHECK(counts[i] == 0, "all counts: kind %d has %d", i, counts[i]);
    int ng = -1;
    infiniStatus_t st = infinirtGetDeviceCount(INFINI_DEVICE_NVIDIA, &ng);
    TL_CHECK(st == INFINI_STATUS_SUCCESS, "GetDeviceCount(NVIDIA) returned %d (0 devices expected, not an error)", (int)st);
    TL_CHECK(ng == counts[INFINI_DEVICE_NVIDIA], "NVIDIA count %d vs all counts %d", ng, counts[INFINI_DEVICE_NVIDIA]);
#ifndef INFINIOP_TEST_WITH_CUDA
    TL_CHECK(ng == 0, "NVIDIA count %d in a build without CUDA", ng);
#endif
    infiniDevice_t dev;
    int id;
    TL_OK(infinirtGetDevice(&dev, &id));
    TL_CHECK(dev == tl_device && id == 0, "current device %d:%d", (int)dev, id);
    TL_OK(infinirtSetDevice(INFINI_DEVICE_CPU, 0));
    TL_OK(infinirtGetDevice(&dev, &id));
    TL_CHECK(dev == INFINI_DEVICE_CPU && id == 0, "after SetDevice(CPU,0): %d:%d", (int)dev, id);
    TL_OK(infinirtSetDevice(tl_device, 0));
    TL_OK(infinirtGetDevice(&dev, &id));
    TL_CHECK(dev == tl_device && id == 0, "after SetDevice back: %d:%d", (int)dev, id);
    TL_OK(infinirtDeviceSynchronize());
    tl_case_end();

    tl_case_begin("infinirt memory");
    const size_t N = 1 << 16;
    unsigned char *h1 = NULL, *h2 = NULL;
    TL_OK(infinirtMallocHost((void **)&h1, N));
    h2 = malloc(N);
    void *d1 = NULL, *d2 = NULL;
    TL_OK(infinirtMalloc(&d1, N));
    TL_OK(infinirtMalloc(&d2, N));
    void *z = (void *)1;
    TL_OK(infinirtMalloc(&z, 0));
    TL_CHECK(z == NULL, "infinirtMalloc of 0 bytes gave %p, expected NULL", z);
    if (h1 && h2 && d1 && d2) {
        for (size_t i = 0; i < N; i++) h1[i] = (unsigned char)(i * 7 + 3);
        TL_OK(infinirtMemcpy(d1, h1, N, INFINIRT_MEMCPY_H2D));
        TL_OK(infinirtMemcpy(d2, d1, N, INFINIRT_MEMCPY_D2D));
        memset(h2, 0, N);
        TL_OK(infinirtMemcpy(h2, d2, N, INFINIRT_MEMCPY_D2H));
        TL_CHECK(!memcmp(h1, h2, N), "H2D, D2D, D2H round trip differs");
        TL_OK(infinirtMemset(d1, 0xab, N / 2));
        TL_OK(infinirtMemcpy(h2, d1, N, INFINIRT_MEMCPY_D2H));
        size_t bad = 0;
        for (size_t i = 0; i < N; i++) bad += h2[i] != (i < N / 2 ? 0xab : h1[i]);
        TL_CHECK(bad == 0, "infinirtMemset: %zu bytes wrong", bad);
        if (tl_device == INFINI_DEVICE_CPU) {
            /* on the CPU every kind copies host memory */
            unsigned char a[64], b[64];
            for (int k = 0; k < 4; k++) {
                memset(a, k + 1, sizeof a);
                memset(b, 0, sizeof b);
                TL_OK(infinirtMemcpy(b, a, sizeof a, (infinirtMemcpyKind_t)k));
                TL_CHECK(!memcmp(a, b, sizeof a), "CPU memcpy kind %d", k);
            }
        }
        memset(h2, 0, N);
        TL_OK(infinirtMemcpy(h2, h1, N, INFINIRT_MEMCPY_H2H));
        TL_CHECK(!memcmp(h1, h2, N), "H2H copy differs");
        /* async copies on a stream, stream-ordered allocation */
        infinirtStream_t s = NULL;
        if (TL_OK(infinirtStreamCreate(&s))) {
            void *d3 = NULL;
            TL_OK(infinirtMallocAsync(&d3, N, s));
            TL_OK(infinirtMemcpyAsync(d3, h1, N, INFINIRT_MEMCPY_H2D, s));
            memset(h2, 0, N);
            TL_OK(infinirtMemcpyAsync(h2, d3, N, INFINIRT_MEMCPY_D2H, s));
            TL_OK(infinirtStreamSynchronize(s));
            TL_CHECK(!memcmp(h1, h2, N), "async round trip differs");
            TL_OK(infinirtFreeAsync(d3, s));
            TL_OK(infinirtStreamSynchronize(s));
            TL_OK(infinirtStreamDestroy(s));
        }
        TL_OK(infinirtMemcpy(h2, h1, 0, INFINIRT_MEMCPY_H2H)); /* 0 bytes */
    }
    TL_OK(infinirtFree(d1));
    TL_OK(infinirtFree(d2));
    TL_OK(infinirtFree(NULL));
    TL_OK(infinirtFreeHost(h1));
    free(h2);
    tl_case_end();

    tl_case_begin("infinirt streams and events");
    infinirtStream_t s1 = NULL, s2 = NULL;
    TL_OK(infinirtStreamCreate(&s1));
    TL_OK(infinirtStreamCreate(&s2));
    infinirtEvent_t e1 = NULL, e2 = NULL;
    TL_OK(infinirtEventCreate(&e1));
    TL_OK(infinirtEventCreate(&e2));
    if (s1 && s2 && e1 && e2) {
        TL_OK(infinirtEventRecord(e1, s1));
        sleep_ms(30);
        TL_OK(infinirtEventRecord(e2, s1));
        TL_OK(infinirtEventSynchronize(e2));
        infinirtEventStatus_t es = INFINIRT_EVENT_NOT_READY;
        TL_OK(infinirtEventQuery(e2, &es));
        TL_CHECK(es == INFINIRT_EVENT_COMPLETE, "event not complete after synchronize");
        float ms = -1.0f;
        TL_OK(infinirtEventElapsedTime(&ms, e1, e2));
        TL_CHECK(ms >= 0.0f && ms < 60000.0f, "elapsed time %g ms", ms);
        if (tl_device == INFINI_DEVICE_CPU) /* host wall time between the records */
            TL_CHECK(ms >= 20.0f, "elapsed time %g ms across a 30 ms sleep", ms);
        TL_OK(infinirtStreamWaitEvent(s2, e2));
        TL_OK(infinirtStreamSynchronize(s2));
        TL_OK(infinirtEventRecord(e1, NULL)); /* the default stream */
        TL_OK(infinirtEventSynchronize(e1));
        TL_OK(infinirtStreamSynchronize(NULL));
    }
    if (e1) TL_OK(infinirtEventDestroy(e1));
    if (e2) TL_OK(infinirtEventDestroy(e2));
    if (s1) TL_OK(infinirtStreamDestroy(s1));
    if (s2) TL_OK(infinirtStreamDestroy(s2));
    tl_case_end();
}

static void test_status_strings(void) {
    tl_case_begin("status strings");
    static const struct { int s; const char *name; } k[] = {
        {0, "INFINI_STATUS_SUCCESS"}, {1, "INFINI_STATUS_INTERNAL_ERROR"}, {2, "INFINI_STATUS_NOT_IMPLEMENTED"},
        {3, "INFINI_STATUS_BAD_PARAM"}, {4, "INFINI_STATUS_NULL_POINTER"},
        {5, "INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED"}, {6, "INFINI_STATUS_DEVICE_NOT_FOUND"},
        {7, "INFINI_STATUS_DEVICE_NOT_INITIALIZED"}, {8, "INFINI_STATUS_DEVICE_ARCHITECTURE_NOT_SUPPORTED"},
        {10, "INFINI_STATUS_BAD_TENSOR_DTYPE"}, {11, "INFINI_STATUS_BAD_TENSOR_SHAPE"},
        {12, "INFINI_STATUS_BAD_TENSOR_STRIDES"}, {13, "INFINI_STATUS_INSUFFICIENT_WORKSPACE"},
        {9, "INFINI_STATUS_UNKNOWN"}, {14, "INFINI_STATUS_UNKNOWN"}, {99, "INFINI_STATUS_UNKNOWN"},
        {-1, "INFINI_STATUS_UNKNOWN"},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        const char *s = infiniopGetStatusString((infiniStatus_t)k[i].s);
        TL_CHECK(s && !strcmp(s, k[i].name), "status %d: \"%s\", expected \"%s\"", k[i].s, s ? s : "(null)", k[i].name);
    }
    const char *m = infiniopGetLastErrorMessage();
    TL_CHECK(m != NULL, "infiniopGetLastErrorMessage() returned NULL");
    tl_case_end();
}

int main(int argc, char **argv) {
    tl_init(argc, argv, "test_core");
    tl_rng rng;
    tl_rng_seed(&rng, tl_seed);
    test_status_strings(); /* before any failure: the message must be "" */
    tl_case_begin("no failure yet: empty message");
    TL_CHECK(!strcmp(infiniopGetLastErrorMessage(), ""), "message \"%s\" before any failure", infiniopGetLastErrorMessage());
    tl_case_end();
    test_tensor_descriptors(&rng);
    test_handles();
    test_runtime();
    return tl_finish();
}
