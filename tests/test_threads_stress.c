/*
 * test_threads_stress.c - thread safety of the library on the CPU.
 *
 * Several threads at once, for many iterations:
 *   - run every operator through descriptors created once by the main thread
 *     and shared by all (one shared handle), each thread into its own output
 *     buffers, from shared read-only inputs; results must be bitwise equal to
 *     the single-threaded results computed first;
 *   - the same operators in place (output == input, own buffer);
 *   - create their own handle, tensor descriptors and operator descriptors,
 *     destroy the tensor descriptors at once, run, destroy the rest;
 *   - provoke an error whose message names a number unique to the thread and
 *     iteration, do successful calls while the other threads fail with their
 *     own messages, and check that the message read back is still their own.
 * One case includes an operator large enough to use OpenMP inside the call,
 * so nested threading (caller threads x OpenMP teams) is exercised too.
 * scripts/hardening.sh runs it under ThreadSanitizer (with OMP_NUM_THREADS=1,
 * since libgomp is not TSan-instrumented) and under valgrind.
 * CPU only: --device nvidia reports "skipped".
 */
#define _POSIX_C_SOURCE 200809L /* pthread barriers under -std=c11 */
#include "testlib.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K_ARN, K_CS, K_LN, K_SILU, K_SIGMOID, K_SILU_BIG, NCASES };

typedef struct {
    const char *name;
    infiniDtype_t dt, wdt;
    size_t ndim;
    size_t shape[3];
} case_t;

static const case_t cases[NCASES] = {
    [K_ARN] = {"add_rms_norm F16/F32 [4,64]", INFINI_DTYPE_F16, INFINI_DTYPE_F32, 2, {4, 64}},
    [K_CS] = {"causal_softmax F32 [2,8,16]", INFINI_DTYPE_F32, INFINI_DTYPE_F32, 3, {2, 8, 16}},
    [K_LN] = {"layer_norm BF16 [5,48]", INFINI_DTYPE_BF16, INFINI_DTYPE_BF16, 2, {5, 48}},
    [K_SILU] = {"silu F32 [3,100]", INFINI_DTYPE_F32, INFINI_DTYPE_F32, 2, {3, 100}},
    [K_SIGMOID] = {"sigmoid F64 [257]", INFINI_DTYPE_F64, INFINI_DTYPE_F64, 1, {257}},
    [K_SILU_BIG] = {"silu F16 [64,2048] (OpenMP)", INFINI_DTYPE_F16, INFINI_DTYPE_F16, 2, {64, 2048}},
};

/* Tensors of each case: outputs first, then inputs (index in the call). */
static const int ntensors[NCASES] = {5, 2, 6, 2, 2, 2};
static const int noutputs[NCASES] = {2, 1, 3, 1, 1, 1};

static size_t dsize(infiniDtype_t dt) { return dt == INFINI_DTYPE_F64 ? 8 : dt == INFINI_DTYPE_F32 ? 4 : 2; }

/* Shape and dtype of tensor i of case k. */
static void tensor_shape(int k, int i, size_t *ndim, size_t *shape, infiniDtype_t *dt) {
    const case_t *c = &cases[k];
    *ndim = c->ndim;
    memcpy(shape, c->shape, sizeof c->shape);
    *dt = c->dt;
    size_t D = c->shape[c->ndim - 1];
    if ((k == K_ARN && i == 4) || (k == K_LN && (i == 4 || i == 5))) { /* weight, bias */
        *ndim = 1;
        shape[0] = D;
        *dt = c->wdt;
    } else if (k == K_LN && i == 2) { /* std: rows only */
        *ndim = c->ndim - 1;
    }
}

static size_t tensor_bytes(int k, int i) {
    size_t ndim, shape[3];
    infiniDtype_t dt;
    tensor_shape(k, i, &ndim, shape, &dt);
    size_t n = 1;
    for (size_t d = 0; d < ndim; ++d) n *= shape[d];
    return n * dsize(dt);
}

static infiniStatus_t create_op(int k, infiniopHandle_t h, void **desc, infiniopTensorDescriptor_t *t) {
    switch (k) {
    case K_ARN:
        return infiniopCreateAddRMSNormDescriptor(h, (infiniopAddRMSNormDescriptor_t *)desc, t[0], t[1], t[2], t[3],
                                                  t[4], 1e-6f);
    case K_CS: return infiniopCreateCausalSoftmaxDescriptor(h, (infiniopCausalSoftmaxDescriptor_t *)desc, t[0], t[1]);
    case K_LN:
        return infiniopCreateLayerNormDescriptor(h, (infiniopLayerNormDescriptor_t *)desc, t[0], t[1], t[2], t[3], t[4],
                                                 t[5], 1e-5f);
    case K_SIGMOID: return infiniopCreateSigmoidDescriptor(h, (infiniopSigmoidDescriptor_t *)desc, t[0], t[1]);
    default: return infiniopCreateSiluDescriptor(h, (infiniopSiluDescriptor_t *)desc, t[0], t[1]);
    }
}

static infiniStatus_t run_op(int k, void *desc, void **p) {
    switch (k) {
    case K_ARN: return infiniopAddRMSNorm(desc, NULL, 0, p[0], p[1], p[2], p[3], p[4], NULL);
    case K_CS: return infiniopCausalSoftmax(desc, NULL, 0, p[0], p[1], NULL);
    case K_LN: return infiniopLayerNorm(desc, NULL, 0, p[0], p[1], p[2], p[3], p[4], p[5], NULL);
    case K_SIGMOID: return infiniopSigmoid(desc, NULL, 0, p[0], p[1], NULL);
    default: return infiniopSilu(desc, NULL, 0, p[0], p[1], NULL);
    }
}

static infiniStatus_t destroy_op(int k, void *desc) {
    switch (k) {
    case K_ARN: return infiniopDestroyAddRMSNormDescriptor(desc);
    case K_CS: return infiniopDestroyCausalSoftmaxDescriptor(desc);
    case K_LN: return infiniopDestroyLayerNormDescriptor(desc);
    case K_SIGMOID: return infiniopDestroySigmoidDescriptor(desc);
    default: return infiniopDestroySiluDescriptor(desc);
    }
}

/* Create case k's descriptor from handle h (tensor descriptors destroyed
 * right after). Returns NULL (and reports) on failure. */
static void *make_desc(int k, infiniopHandle_t h) {
    infiniopTensorDescriptor_t t[6] = {0};
    int ok = 1;
    for (int i = 0; i < ntensors[k] && ok; ++i) {
        size_t ndim, shape[3];
        infiniDtype_t dt;
        tensor_shape(k, i, &ndim, shape, &dt);
        ok = TL_OK(infiniopCreateTensorDescriptor(&t[i], ndim, shape, NULL, dt));
    }
    void *desc = NULL;
    if (ok && !TL_OK(create_op(k, h, &desc, t))) desc = NULL;
    for (int i = 0; i < ntensors[k]; ++i)
        if (t[i]) TL_OK(infiniopDestroyTensorDescriptor(t[i]));
    return desc;
}

/* ------------------------------------------------------------------ shared state */
static void *shared_desc[NCASES];
static unsigned char *inputs[NCASES][6];   /* shared, read-only after setup */
static unsigned char *expected[NCASES][6]; /* single-threaded outputs */
static int iters;

static uint64_t lcg(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 11;
}

/* Finite random values in about [-4, 4]. */
static void fill_random(unsigned char *p, size_t bytes, infiniDtype_t dt, uint64_t *s) {
    size_t es = dsize(dt), n = bytes / es;
    for (size_t i = 0; i < n; ++i) {
        double v = (double)(lcg(s) % 2000001) / 250000.0 - 4.0;
        if (dt == INFINI_DTYPE_F64) memcpy(p + 8 * i, &v, 8);
        else if (dt == INFINI_DTYPE_F32) {
            float f = (float)v;
            memcpy(p + 4 * i, &f, 4);
        } else {
            uint16_t h = dt == INFINI_DTYPE_F16 ? tl_double_to_f16(v) : tl_double_to_bf16(v);
            memcpy(p + 2 * i, &h, 2);
        }
    }
}

/* Own output buffers of one thread; pointers for a call. */
typedef struct {
    unsigned char *out[NCASES][3];
    unsigned char *inplace[NCASES];
} thread_bufs;

static void pointers(int k, thread_bufs *b, void **p) {
    for (int i = 0; i < ntensors[k]; ++i) p[i] = i < noutputs[k] ? (void *)b->out[k][i] : (void *)inputs[k][i];
}

static int check_outputs(int k, thread_bufs *b, const char *how, int tid, int it) {
    for (int o = 0; o < noutputs[k]; ++o)
        if (memcmp(b->out[k][o], expected[k][o], tensor_bytes(k, o)) != 0) {
            tl_fail("thread %d iteration %d: %s: %s output %d differs from the single-threaded result", tid, it,
                    cases[k].name, how, o);
            return 0;
        }
    return 1;
}

typedef struct {
    int tid;
    pthread_barrier_t *start;
} worker_arg;

static void *worker(void *argp) {
    worker_arg *arg = argp;
    int tid = arg->tid;
    tl_set_thread_device();
    tl_case_begin("thread %d", tid);
    thread_bufs b;
    memset(&b, 0, sizeof b);
    for (int k = 0; k < NCASES; ++k) {
        for (int o = 0; o < noutputs[k]; ++o) b.out[k][o] = malloc(tensor_bytes(k, o));
        b.inplace[k] = malloc(tensor_bytes(k, noutputs[k]));
    }
    pthread_barrier_wait(arg->start);
    char mine[512], want[64];
    for (int it = 0; it < iters && tl_case_failures() == 0; ++it) {
        /* 1. An error of this thread's own: a unique length in the message. */
        size_t n_out = 1000000 + (size_t)tid * 10000 + (size_t)it, n_in = n_out + 1;
        infiniopTensorDescriptor_t to = NULL, ti = NULL;
        TL_OK(infiniopCreateTensorDescriptor(&to, 1, &n_out, NULL, INFINI_DTYPE_F32));
        TL_OK(infiniopCreateTensorDescriptor(&ti, 1, &n_in, NULL, INFINI_DTYPE_F32));
        infiniopSiluDescriptor_t bad = NULL;
        TL_EXPECT_STATUS(infiniopCreateSiluDescriptor(tl_handle, &bad, to, ti), INFINI_STATUS_BAD_TENSOR_SHAPE);
        TL_OK(infiniopDestroyTensorDescriptor(to));
        TL_OK(infiniopDestroyTensorDescriptor(ti));
        snprintf(mine, sizeof mine, "%s", infiniopGetLastErrorMessage());
        snprintf(want, sizeof want, "%zu", n_in);
        TL_CHECK(strstr(mine, want) != NULL, "thread %d: message \"%s\" does not name %s", tid, mine, want);

        /* 2. Every shared descriptor, concurrently with the other threads. */
        for (int k = 0; k < NCASES; ++k) {
            if (k == K_SILU_BIG && it % 4 != tid % 4) continue; /* the big one now and then */
            void *p[6];
            pointers(k, &b, p);
            for (int o = 0; o < noutputs[k]; ++o) memset(b.out[k][o], 0xA5, tensor_bytes(k, o));
            TL_OK(run_op(k, shared_desc[k], p));
            check_outputs(k, &b, "shared descriptor", tid, it);
        }

        /* 3. In place: output 0 is the (copied) first input, same layout. */
        int kin = (int[]){K_SILU, K_SIGMOID, K_CS}[it % 3];
        size_t ib = tensor_bytes(kin, noutputs[kin]);
        memcpy(b.inplace[kin], inputs[kin][noutputs[kin]], ib);
        void *p[6] = {b.inplace[kin], b.inplace[kin]};
        TL_OK(run_op(kin, shared_desc[kin], p));
        TL_CHECK(memcmp(b.inplace[kin], expected[kin][0], ib) == 0, "thread %d: in-place %s differs", tid,
                 cases[kin].name);

        /* 4. Own handle and descriptors, created and destroyed concurrently. */
        int k = (tid + it) % NCASES;
        if (k == K_SILU_BIG) k = K_SILU;
        infiniopHandle_t h = NULL;
        if (TL_OK(infiniopCreateHandle(&h))) {
            void *d = make_desc(k, h);
            if (d) {
                void *q[6];
                pointers(k, &b, q);
                TL_OK(run_op(k, d, q));
                check_outputs(k, &b, "own descriptor", tid, it);
                TL_OK(destroy_op(k, d));
            }
            TL_OK(infiniopDestroyHandle(h));
        }

        /* 5. The message is still this thread's own after all the above. */
        TL_CHECK(strcmp(infiniopGetLastErrorMessage(), mine) == 0,
                 "thread %d iteration %d: message changed from \"%s\" to \"%s\"", tid, it, mine,
                 infiniopGetLastErrorMessage());
    }
    for (int k = 0; k < NCASES; ++k) {
        for (int o = 0; o < noutputs[k]; ++o) free(b.out[k][o]);
        free(b.inplace[k]);
    }
    tl_case_end();
    return NULL;
}

int main(int argc, char **argv) {
    tl_init(argc, argv, "test_threads_stress");
    if (tl_device != INFINI_DEVICE_CPU) {
        printf("test_threads_stress: skipped: CPU-only test\n");
        return 77;
    }
    int nthreads = tl_quick ? 4 : 8;
    iters = tl_quick ? 25 : 200;
    const char *e = getenv("INFINIOP_TEST_THREADS");
    if (e && atoi(e) > 0) nthreads = atoi(e);

    /* Setup: shared descriptors, inputs and single-threaded results. */
    tl_case_begin("setup: shared descriptors and single-threaded results");
    uint64_t s = tl_seed | 1;
    int ok = 1;
    for (int k = 0; k < NCASES && ok; ++k) {
        shared_desc[k] = make_desc(k, tl_handle);
        ok = shared_desc[k] != NULL;
        void *p[6] = {0};
        for (int i = 0; i < ntensors[k] && ok; ++i) {
            size_t bytes = tensor_bytes(k, i), nd, sh[3];
            infiniDtype_t dt;
            tensor_shape(k, i, &nd, sh, &dt);
            if (i < noutputs[k]) {
                expected[k][i] = calloc(1, bytes);
                p[i] = expected[k][i];
            } else {
                inputs[k][i] = malloc(bytes);
                fill_random(inputs[k][i], bytes, dt, &s);
                p[i] = inputs[k][i];
            }
        }
        if (ok) ok = TL_OK(run_op(k, shared_desc[k], p));
    }
    tl_case_end();

    if (ok) {
        printf("test_threads_stress: %d threads x %d iterations\n", nthreads, iters);
        fflush(stdout);
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, (unsigned)nthreads);
        pthread_t *th = calloc((size_t)nthreads, sizeof *th);
        worker_arg *args = calloc((size_t)nthreads, sizeof *args);
        int started = 0;
        for (int t = 0; t < nthreads; ++t) {
            args[t] = (worker_arg){t, &start};
            if (pthread_create(&th[t], NULL, worker, &args[t]) != 0) {
                fprintf(stderr, "pthread_create failed\n");
                exit(1); /* the barrier would never open */
            }
            ++started;
        }
        for (int t = 0; t < started; ++t) pthread_join(th[t], NULL);
        pthread_barrier_destroy(&start);
        free(th);
        free(args);
    }

    for (int k = 0; k < NCASES; ++k) {
        if (shared_desc[k]) TL_OK(destroy_op(k, shared_desc[k]));
        for (int i = 0; i < 6; ++i) {
            free(inputs[k][i]);
            free(expected[k][i]);
        }
    }
    return tl_finish();
}
