/*
 * test_threads.c - one operator descriptor used from several threads at
 * once (SPEC: descriptors are immutable and may be used from several
 * threads and streams at once). Each thread has its own buffers (and, on
 * nvidia, its own stream from infinirtStreamCreate) and checks every
 * result against the float64 reference.
 *
 * CPU only, the thread rule (src/cpu/cpu.h, docs/PERFORMANCE.md): a call
 * large enough for the OpenMP pool uses 2..N threads when alone; a call
 * made from inside the caller's OpenMP parallel region runs on its calling
 * thread (team of 1); calls from several caller threads at once never hold
 * more than N threads together. Read through the library's test hook
 * infiniop_cpu_thread_report; results checked as everywhere else.
 */
#define _POSIX_C_SOURCE 200809L
#include "reference.h"
#include "testlib.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* libinfiniop's CPU test hook (src/cpu/cpu.h): the team of this thread's
 * last call, the most threads held together by calls in flight, N. */
void infiniop_cpu_thread_report(int *last_team, int *peak, int *budget);

#define NTHREADS 6

enum { OP_ADD_RMS_NORM, OP_SOFTMAX, OP_LAYER_NORM, OP_SILU, OP_SIGMOID, OP_COUNT };
static const char *k_names[] = {"add_rms_norm", "causal_softmax", "layer_norm", "silu", "sigmoid"};

static struct InfiniopDescriptor *g_desc[OP_COUNT];
static int g_iters;

/* shapes (one per operator) */
static const size_t k_norm_shape[2] = {16, 1531};
static const size_t k_sm_shape[3] = {3, 17, 600};
static const size_t k_ew_shape[2] = {37, 1001};

/* A generous tolerance: the precision rules are the other tests' business;
 * this one looks for races (wrong rows, torn or missing results). */
static double tol_rel(size_t i, double ref, void *ctx) {
    (void)i; (void)ctx;
    return 1e-4 * fabs(ref) + 1e-6;
}
static double tol_masked(size_t i, double ref, void *ctx) {
    size_t T = k_sm_shape[2], S = k_sm_shape[1];
    size_t col = i % T, row = (i / T) % S;
    (void)ctx;
    if (col > row + T - S) return -1.0;
    return 1e-4 * fabs(ref) + 1e-6;
}

#define SNAPVIEW(t) {(unsigned char *)(t)->snap + TL_GUARD_BYTES + (size_t)(-(t)->min_off) * (t)->esize, (t)->dtype, (t)->ndim, (t)->shape, (t)->strides}

static void run_once(int op, tl_rng *rng, infinirtStream_t stream) {
    tl_tensor t[6];
    memset(t, 0, sizeof t);
    int n = 0;
    switch (op) {
    case OP_ADD_RMS_NORM: /* y, residual, a, b, w */
        for (int k = 0; k < 4; k++) tl_tensor_init(&t[k], INFINI_DTYPE_F16, 2, k_norm_shape, NULL);
        tl_tensor_init(&t[4], INFINI_DTYPE_F32, 1, &k_norm_shape[1], NULL);
        n = 5;
        break;
    case OP_SOFTMAX:
        tl_tensor_init(&t[0], INFINI_DTYPE_F32, 3, k_sm_shape, NULL);
        tl_tensor_init(&t[1], INFINI_DTYPE_F32, 3, k_sm_shape, NULL);
        n = 2;
        break;
    case OP_LAYER_NORM: /* out, stdz, std, in, w, b */
        tl_tensor_init(&t[0], INFINI_DTYPE_BF16, 2, k_norm_shape, NULL);
        tl_tensor_init(&t[1], INFINI_DTYPE_BF16, 2, k_norm_shape, NULL);
        tl_tensor_init(&t[2], INFINI_DTYPE_BF16, 1, k_norm_shape, NULL);
        tl_tensor_init(&t[3], INFINI_DTYPE_BF16, 2, k_norm_shape, NULL);
        tl_tensor_init(&t[4], INFINI_DTYPE_BF16, 1, &k_norm_shape[1], NULL);
        tl_tensor_init(&t[5], INFINI_DTYPE_BF16, 1, &k_norm_shape[1], NULL);
        n = 6;
        break;
    default:
        tl_tensor_init(&t[0], INFINI_DTYPE_F32, 2, k_ew_shape, NULL);
        tl_tensor_init(&t[1], INFINI_DTYPE_F32, 2, k_ew_shape, NULL);
        n = 2;
        break;
    }
    int nout = op == OP_ADD_RMS_NORM ? 2 : op == OP_LAYER_NORM ? 3 : 1;
    for (int k = 0; k < n; k++) {
        if (k < nout) tl_tensor_poison(&t[k]);
        else tl_tensor_fill_random(&t[k], rng, -3, 3);
        tl_tensor_upload(&t[k]);
    }
    void *p[6];
    for (int k = 0; k < n; k++) p[k] = tl_tensor_ptr(&t[k]);
    infiniStatus_t st;
    switch (op) {
    case OP_ADD_RMS_NORM: st = infiniopAddRMSNorm(g_desc[op], NULL, 0, p[0], p[1], p[2], p[3], p[4], stream); break;
    case OP_SOFTMAX: st = infiniopCausalSoftmax(g_desc[op], NULL, 0, p[0], p[1], stream); break;
    case OP_LAYER_NORM: st = infiniopLayerNorm(g_desc[op], NULL, 0, p[0], p[1], p[2], p[3], p[4], p[5], stream); break;
    case OP_SILU: st = infiniopSilu(g_desc[op], NULL, 0, p[0], p[1], stream); break;
    default: st = infiniopSigmoid(g_desc[op], NULL, 0, p[0], p[1], stream); break;
    }
    if (TL_OK(st)) {
        if (tl_device != INFINI_DEVICE_CPU) TL_OK(infinirtStreamSynchronize(stream));
        for (int k = 0; k < n; k++) {
            tl_tensor_download(&t[k]);
            tl_tensor_check_untouched(&t[k], k < nout ? "output" : "input", k < nout);
        }
        size_t N = t[0].numel;
        double *r0 = malloc(N * sizeof(double)), *r1 = malloc(N * sizeof(double)), *r2 = malloc(N * sizeof(double));
        if (op == OP_ADD_RMS_NORM) {
            ref_view_t a = SNAPVIEW(&t[2]), b = SNAPVIEW(&t[3]), w = SNAPVIEW(&t[4]);
            ref_add_rms_norm(&a, &b, &w, (double)1e-5f, r0, r1);
            tl_check_close(&t[0], "y", r0, tol_rel, NULL);
            tl_check_close(&t[1], "residual_out", r1, tol_rel, NULL);
        } else if (op == OP_SOFTMAX) {
            ref_view_t x = SNAPVIEW(&t[1]);
            ref_causal_softmax(&x, r0);
            tl_check_close(&t[0], "y", r0, tol_masked, NULL);
        } else if (op == OP_LAYER_NORM) {
            ref_view_t x = SNAPVIEW(&t[3]), w = SNAPVIEW(&t[4]), b = SNAPVIEW(&t[5]);
            ref_layer_norm(&x, &w, &b, (double)1e-5f, r0, r1, r2, NULL);
            tl_check_close(&t[0], "output", r0, tol_rel, NULL);
            tl_check_close(&t[1], "input_standardization", r1, tol_rel, NULL);
            tl_check_close(&t[2], "input_std_deviation", r2, tol_rel, NULL);
        } else {
            ref_view_t x = SNAPVIEW(&t[1]);
            long double *ry = malloc(N * sizeof(long double));
            if (op == OP_SILU) ref_silu(&x, 2, k_ew_shape, ry);
            else ref_sigmoid(&x, 2, k_ew_shape, ry);
            for (size_t i = 0; i < N; i++) r0[i] = (double)ry[i];
            free(ry);
            tl_check_close(&t[0], "y", r0, tol_rel, NULL);
        }
        free(r0); free(r1); free(r2);
    }
    for (int k = 0; k < n; k++) tl_tensor_free(&t[k]);
}

/* ---- the thread rule (CPU) */
static const size_t k_big_shape[2] = {512, 1024}; /* silu F32: 4 MiB of traffic, 16 tasks of the pool */
static struct InfiniopDescriptor *g_big;

/* One silu call on fresh buffers, every element checked; returns the team
 * the call used (0 on a failed call). */
static int big_call(tl_rng *rng) {
    tl_tensor x, y;
    memset(&x, 0, sizeof x);
    memset(&y, 0, sizeof y);
    int team = 0;
    if (tl_tensor_init(&x, INFINI_DTYPE_F32, 2, k_big_shape, NULL) || tl_tensor_init(&y, INFINI_DTYPE_F32, 2, k_big_shape, NULL))
        goto done;
    tl_tensor_fill_random(&x, rng, -6, 6);
    tl_tensor_poison(&y);
    tl_tensor_upload(&x);
    tl_tensor_upload(&y);
    if (TL_OK(infiniopSilu(g_big, NULL, 0, tl_tensor_ptr(&y), tl_tensor_ptr(&x), NULL))) {
        infiniop_cpu_thread_report(&team, NULL, NULL);
        tl_tensor_download(&y);
        tl_tensor_check_untouched(&y, "y", 1);
        ref_view_t xv = SNAPVIEW(&x);
        size_t N = y.numel;
        long double *ry = malloc(N * sizeof(long double));
        double *r0 = malloc(N * sizeof(double));
        ref_silu(&xv, 2, k_big_shape, ry);
        for (size_t i = 0; i < N; i++) r0[i] = (double)ry[i];
        tl_check_close(&y, "y", r0, tol_rel, NULL);
        free(ry);
        free(r0);
    }
done:
    tl_tensor_free(&x);
    tl_tensor_free(&y);
    return team;
}

static void *rule_worker(void *varg) {
    int index = *(int *)varg, budget;
    infiniop_cpu_thread_report(NULL, NULL, &budget);
    tl_rng rng;
    tl_rng_seed(&rng, tl_seed * 7919u + (uint64_t)index);
    for (int it = 0; it < 4; it++) {
        tl_case_begin("thread rule: caller thread %d call %d", index, it);
        int team = big_call(&rng);
        TL_CHECK(team >= 1 && team <= budget, "team of %d threads, budget %d", team, budget);
        tl_case_end();
    }
    return NULL;
}

static void thread_rule(void) {
    int budget = 0, peak = 0;
    infiniop_cpu_thread_report(NULL, NULL, &budget);
    tl_rng rng;
    tl_rng_seed(&rng, tl_seed * 31u + 5u);
    tl_case_begin("thread rule: setup");
    infiniopTensorDescriptor_t d = NULL;
    TL_OK(infiniopCreateTensorDescriptor(&d, 2, k_big_shape, NULL, INFINI_DTYPE_F32));
    TL_OK(infiniopCreateSiluDescriptor(tl_handle, &g_big, d, d));
    if (d) infiniopDestroyTensorDescriptor(d);
    tl_case_end();
    if (!g_big) return;

    /* alone: the pool, 2..N threads (N >= 2) */
    tl_case_begin("thread rule: one call alone (budget %d)", budget);
    int team = big_call(&rng);
    TL_CHECK(budget < 2 ? team == 1 : team >= 2 && team <= budget, "team of %d threads alone, budget %d", team, budget);
    tl_case_end();

#ifdef _OPENMP
    /* from inside the caller's parallel region: the calling thread only.
     * teams[] is published with release/acquire atomics: the region's end
     * orders it too, but libgomp's barrier is invisible to ThreadSanitizer
     * (scripts/hardening.sh, tsan stage). */
    int teams[3] = {0, 0, 0};
#pragma omp parallel num_threads(3)
    {
        tl_rng r;
        tl_rng_seed(&r, tl_seed * 131u + (uint64_t)omp_get_thread_num());
        __atomic_store_n(&teams[omp_get_thread_num()], big_call(&r), __ATOMIC_RELEASE);
    }
    tl_case_begin("thread rule: calls inside the caller's OpenMP region");
    for (int i = 0; i < 3; i++) {
        int t = __atomic_load_n(&teams[i], __ATOMIC_ACQUIRE);
        TL_CHECK(t == 1, "caller thread %d: team of %d threads, want 1", i, t);
    }
    tl_case_end();
#endif

    /* from several caller threads at once: together at most N */
    pthread_t th[NTHREADS];
    int idx[NTHREADS], started[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        idx[i] = i;
        started[i] = pthread_create(&th[i], NULL, rule_worker, &idx[i]) == 0;
        if (!started[i]) tl_fail("pthread_create failed");
    }
    for (int i = 0; i < NTHREADS; i++) if (started[i]) pthread_join(th[i], NULL);
    infiniop_cpu_thread_report(NULL, &peak, &budget);
    tl_case_begin("thread rule: concurrent calls");
    TL_CHECK(peak <= budget, "calls in flight held %d threads together, budget %d", peak, budget);
    tl_case_end();
    TL_OK(infiniopDestroySiluDescriptor(g_big));
}

typedef struct {
    int index;
} worker_arg;

static void *worker(void *varg) {
    worker_arg *a = varg;
    tl_set_thread_device();
    infinirtStream_t stream = NULL;
    if (tl_device != INFINI_DEVICE_CPU) TL_OK(infinirtStreamCreate(&stream));
    tl_rng rng;
    tl_rng_seed(&rng, tl_seed * 1000003u + (uint64_t)a->index);
    for (int it = 0; it < g_iters; it++) {
        /* every thread walks all operators, starting at a different one, so
         * that each descriptor is in use by several threads at a time */
        for (int k = 0; k < OP_COUNT; k++) {
            int op = (k + a->index) % OP_COUNT;
            tl_case_begin("thread %d iteration %d %s", a->index, it, k_names[op]);
            run_once(op, &rng, stream);
            tl_case_end();
        }
    }
    if (stream) TL_OK(infinirtStreamDestroy(stream));
    return NULL;
}

int main(int argc, char **argv) {
    tl_init(argc, argv, "test_threads");
    g_iters = tl_quick ? 2 : 8;
    double t0 = tl_now();
    tl_case_begin("create descriptors");
    infiniopTensorDescriptor_t h16 = NULL, w32 = NULL, sm = NULL, lb = NULL, lbs = NULL, lbw = NULL, ew = NULL;
    TL_OK(infiniopCreateTensorDescriptor(&h16, 2, k_norm_shape, NULL, INFINI_DTYPE_F16));
    TL_OK(infiniopCreateTensorDescriptor(&w32, 1, &k_norm_shape[1], NULL, INFINI_DTYPE_F32));
    TL_OK(infiniopCreateTensorDescriptor(&sm, 3, k_sm_shape, NULL, INFINI_DTYPE_F32));
    TL_OK(infiniopCreateTensorDescriptor(&lb, 2, k_norm_shape, NULL, INFINI_DTYPE_BF16));
    TL_OK(infiniopCreateTensorDescriptor(&lbs, 1, k_norm_shape, NULL, INFINI_DTYPE_BF16));
    TL_OK(infiniopCreateTensorDescriptor(&lbw, 1, &k_norm_shape[1], NULL, INFINI_DTYPE_BF16));
    TL_OK(infiniopCreateTensorDescriptor(&ew, 2, k_ew_shape, NULL, INFINI_DTYPE_F32));
    TL_OK(infiniopCreateAddRMSNormDescriptor(tl_handle, &g_desc[OP_ADD_RMS_NORM], h16, h16, h16, h16, w32, 1e-5f));
    TL_OK(infiniopCreateCausalSoftmaxDescriptor(tl_handle, &g_desc[OP_SOFTMAX], sm, sm));
    TL_OK(infiniopCreateLayerNormDescriptor(tl_handle, &g_desc[OP_LAYER_NORM], lb, lb, lbs, lb, lbw, lbw, 1e-5f));
    TL_OK(infiniopCreateSiluDescriptor(tl_handle, &g_desc[OP_SILU], ew, ew));
    TL_OK(infiniopCreateSigmoidDescriptor(tl_handle, &g_desc[OP_SIGMOID], ew, ew));
    infiniopTensorDescriptor_t all[] = {h16, w32, sm, lb, lbs, lbw, ew};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]) infiniopDestroyTensorDescriptor(all[i]);
    int ok = 1;
    for (int k = 0; k < OP_COUNT; k++) ok &= g_desc[k] != NULL;
    tl_case_end();
    if (ok) {
        pthread_t th[NTHREADS];
        worker_arg args[NTHREADS];
        int started[NTHREADS] = {0};
        for (int i = 0; i < NTHREADS; i++) {
            args[i].index = i;
            started[i] = pthread_create(&th[i], NULL, worker, &args[i]) == 0;
            if (!started[i]) tl_fail("pthread_create failed");
        }
        for (int i = 0; i < NTHREADS; i++) if (started[i]) pthread_join(th[i], NULL);
    }
    if (tl_device == INFINI_DEVICE_CPU) thread_rule();
    if (g_desc[OP_ADD_RMS_NORM]) TL_OK(infiniopDestroyAddRMSNormDescriptor(g_desc[OP_ADD_RMS_NORM]));
    if (g_desc[OP_SOFTMAX]) TL_OK(infiniopDestroyCausalSoftmaxDescriptor(g_desc[OP_SOFTMAX]));
    if (g_desc[OP_LAYER_NORM]) TL_OK(infiniopDestroyLayerNormDescriptor(g_desc[OP_LAYER_NORM]));
    if (g_desc[OP_SILU]) TL_OK(infiniopDestroySiluDescriptor(g_desc[OP_SILU]));
    if (g_desc[OP_SIGMOID]) TL_OK(infiniopDestroySigmoidDescriptor(g_desc[OP_SIGMOID]));
    printf("test_threads: %.2f s\n", tl_now() - t0);
    return tl_finish();
}
