/*
 * test_streams.c - one descriptor per operator, used at once from several
 * host threads, each with its own stream and its own buffers (SPEC:
 * descriptors are immutable and may be used from several threads and
 * streams at once).
 *
 * The main thread creates the descriptors and computes the expected outputs
 * with direct calls on the default stream. Each worker thread then sets the
 * device, creates a stream, waits at a barrier so that all start together,
 * and issues every operator many times on its stream without synchronising
 * in between; at the end its outputs must be bytewise the expected ones.
 * On the CPU the streams are the runtime's CPU streams and the calls run
 * synchronously on each thread.
 */
#define _POSIX_C_SOURCE 200809L
#include "op_set.h"
#include "testlib.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const op_params k_params[] = {
    {OP_ARN, INFINI_DTYPE_BF16, INFINI_DTYPE_F32, 64, 4096, 0},
    {OP_ARN, INFINI_DTYPE_F16, INFINI_DTYPE_F16, 96, 128, 0},
    {OP_LN, INFINI_DTYPE_F16, INFINI_DTYPE_F16, 128, 768, 1},
    {OP_LN, INFINI_DTYPE_F32, INFINI_DTYPE_F32, 3, 20000, 0},
    {OP_CS, INFINI_DTYPE_F32, INFINI_DTYPE_F32, 64, 512, 0},
    {OP_CS, INFINI_DTYPE_BF16, INFINI_DTYPE_BF16, 16, 2000, 0},
    {OP_SILU, INFINI_DTYPE_BF16, INFINI_DTYPE_BF16, 256, 4096, 0},
    {OP_SIGMOID, INFINI_DTYPE_F16, INFINI_DTYPE_F16, 128, 300, 2},
};
#define NOPS (sizeof k_params / sizeof k_params[0])
#define MAX_THREADS 8

static op_inst g_master[NOPS];
static op_saved g_expected[NOPS];
static pthread_barrier_t g_barrier;
static int g_iters;

typedef struct {
    int id;
    op_inst local[NOPS];
} worker;

static void *work(void *arg) {
    worker *w = arg;
    tl_set_thread_device();
    tl_case_begin("thread %d: %d rounds of %zu operator calls on its own stream", w->id, g_iters, (size_t)NOPS);
    infinirtStream_t s = NULL;
    infiniStatus_t st = infinirtStreamCreate(&s);
    if (st != INFINI_STATUS_SUCCESS) tl_fail("infinirtStreamCreate: %d", (int)st);
    pthread_barrier_wait(&g_barrier);
    if (st == INFINI_STATUS_SUCCESS) {
        for (int it = 0; it < g_iters; ++it)
            for (size_t k = 0; k < NOPS; ++k) {
                st = op_inst_run(&w->local[k], g_master[k].desc, s);
                if (st != INFINI_STATUS_SUCCESS) {
                    tl_fail("%s: call %d returned %d: %s", g_master[k].name, it, (int)st, infiniopGetLastErrorMessage());
                    it = g_iters;
                    break;
                }
            }
        TL_OK(infinirtStreamSynchronize(s));
        for (size_t k = 0; k < NOPS; ++k) {
            op_inst_download(&w->local[k]);
            op_inst_compare(&w->local[k], &g_expected[k], g_master[k].name);
        }
        TL_OK(infinirtStreamDestroy(s));
    }
    tl_case_end();
    return NULL;
}

int main(int argc, char **argv) {
    tl_init(argc, argv, "test_streams");
    tl_rng rng;
    tl_rng_seed(&rng, tl_seed);
    int nthreads = tl_quick ? 2 : (tl_device == INFINI_DEVICE_CPU ? 4 : MAX_THREADS);
    g_iters = tl_quick ? 2 : (tl_device == INFINI_DEVICE_CPU ? 3 : 20);

    tl_case_begin("setup: descriptors and expected outputs (default stream)");
    int ok = 1;
    for (size_t k = 0; k < NOPS && ok; ++k) {
        if (op_inst_tensors(&g_master[k], &k_params[k]) || !TL_OK(op_inst_create(&g_master[k]))) {
            ok = 0;
            break;
        }
        op_inst_fill(&g_master[k], &rng);
        op_inst_upload(&g_master[k]);
        if (!TL_OK(op_inst_run(&g_master[k], g_master[k].desc, NULL))) ok = 0;
    }
    tl_sync();
    for (size_t k = 0; k < NOPS && ok; ++k) {
        op_inst_download(&g_master[k]);
        for (int t = 0; t < g_master[k].nt; ++t)
            if (g_master[k].is_out[t]) tl_tensor_check_written(&g_master[k].t[t], g_master[k].name);
        op_inst_save(&g_master[k], &g_expected[k]);
    }
    tl_case_end();
    if (!ok) return tl_finish();

    static worker workers[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    for (int i = 0; i < nthreads; ++i) {
        workers[i].id = i;
        for (size_t k = 0; k < NOPS; ++k) {
            op_inst *o = &workers[i].local[k];
            if (op_inst_tensors(o, &k_params[k])) abort();
            for (int t = 0; t < o->nt; ++t) {
                if (o->is_out[t]) tl_tensor_poison(&o->t[t]);
                else memcpy(o->t[t].host, g_master[k].t[t].snap, o->t[t].bytes);
            }
            op_inst_upload(o);
        }
    }
    pthread_barrier_init(&g_barrier, NULL, (unsigned)nthreads);
    for (int i = 0; i < nthreads; ++i) pthread_create(&th[i], NULL, work, &workers[i]);
    for (int i = 0; i < nthreads; ++i) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&g_barrier);

    for (int i = 0; i < nthreads; ++i)
        for (size_t k = 0; k < NOPS; ++k) op_inst_free(&workers[i].local[k]);
    for (size_t k = 0; k < NOPS; ++k) {
        op_saved_free(&g_expected[k]);
        op_inst_free(&g_master[k]);
    }
    return tl_finish();
}
