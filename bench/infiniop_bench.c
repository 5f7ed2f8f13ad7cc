/*
 * infiniop_bench.c - runs every operator on representative transformer
 * shapes, verifies every output element against the float64 references of
 * the tests (tests/common/reference.c, with the tests' tolerances), and
 * prints a table: median time, effective bandwidth (the minimum bytes the
 * operator must move / time) and its ratio to the machine's copy bandwidth
 * measured in the same run.
 *
 *   infiniop-bench [--device cpu|nvidia] [--reps N] [--copy-mib M] [--case SUBSTRING] [--no-onednn]
 *                  [--sweep] [--json FILE]
 *
 * --sweep (CPU): every case at two working sets, the listed shape and one
 * of at least 4x the last-level cache (read from sysfs / sysconf; the
 * first dimension scaled up), each at 1..N OpenMP threads, with the copy
 * ceiling measured at the same bytes and thread count (a memcpy of
 * min_bytes / 2 each way). --json writes every measured row as a JSON
 * array (bench/cpu_scaling_plot.py charts it).
 *
 * Copy ceiling: on the CPU a memcpy of a buffer far larger than the caches,
 * split over all OpenMP threads; on nvidia a device-to-device
 * infinirtMemcpy timed with events. Both count bytes read + bytes written.
 * Minimum bytes: every input element read once and every output element
 * written once (causal softmax: only the visible inputs are read).
 * When built with oneDNN (optional, CPU only), oneDNN's layer
 * normalization, swish, logistic and softmax (no mask) primitives are timed
 * on the same data as peers.
 * The device side goes through infinirt only (no CUDA headers here).
 */
#define _GNU_SOURCE /* sysconf(_SC_LEVEL3_CACHE_SIZE) */
#include <infiniop.h>
#include <infinirt.h>

#include "reference.h"
#include "testlib.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef INFINIOP_BENCH_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#endif

#define CHECK_ST(call)                                                                                                 \
    do {                                                                                                               \
        infiniStatus_t st_ = (call);                                                                                   \
        if (st_ != INFINI_STATUS_SUCCESS) {                                                                            \
            fprintf(stderr, "%s:%d: %s failed with status %d: %s\n", __FILE__, __LINE__, #call, (int)st_,              \
                    infiniopGetLastErrorMessage());                                                                    \
            exit(2);                                                                                                   \
        }                                                                                                              \
    } while (0)

static infiniDevice_t g_dev = INFINI_DEVICE_CPU;
static int g_reps = 30;
static infiniopHandle_t g_handle;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ------------------------------------------------------------------ buffers */
/* A host buffer and, on nvidia, its device twin. */
typedef struct {
    void *host, *dev;
    size_t bytes;
} buf_t;

static buf_t buf_new(size_t bytes) {
    buf_t b = {aligned_alloc(64, (bytes + 63) / 64 * 64), NULL, bytes};
    if (!b.host) {
        fprintf(stderr, "out of host memory (%zu bytes)\n", bytes);
        exit(2);
    }
    memset(b.host, 0, bytes);
    if (g_dev == INFINI_DEVICE_CPU) b.dev = b.host;
    else CHECK_ST(infinirtMalloc(&b.dev, bytes));
    return b;
}
static void buf_free(buf_t *b) {
    if (g_dev != INFINI_DEVICE_CPU) infinirtFree(b->dev);
    free(b->host);
}
static void buf_upload(buf_t *b) {
    if (g_dev != INFINI_DEVICE_CPU) CHECK_ST(infinirtMemcpy(b->dev, b->host, b->bytes, INFINIRT_MEMCPY_H2D));
}
static void buf_download(buf_t *b) {
    if (g_dev != INFINI_DEVICE_CPU) CHECK_ST(infinirtMemcpy(b->host, b->dev, b->bytes, INFINIRT_MEMCPY_D2H));
}

/* Uniform random values in [lo, hi), rounded to dt, deterministic. */
static void fill_random(buf_t *b, infiniDtype_t dt, double lo, double hi, uint64_t seed) {
    size_t es = tl_dtype_size(dt), n = b->bytes / es;
#pragma omp parallel
    {
        tl_rng r;
        tl_rng_seed(&r, seed * 1000003u + (uint64_t)omp_get_thread_num());
#pragma omp for schedule(static)
        for (size_t i = 0; i < n; ++i) tl_store(dt, (char *)b->host + i * es, tl_rng_uniform(&r, lo, hi));
    }
    buf_upload(b);
}

static infiniopTensorDescriptor_t tensor(infiniDtype_t dt, size_t ndim, const size_t *shape) {
    infiniopTensorDescriptor_t t;
    CHECK_ST(infiniopCreateTensorDescriptor(&t, ndim, shape, NULL, dt));
    return t;
}

/* A contiguous view of a host buffer (up to 3 dimensions). */
typedef struct {
    ref_view_t v;
    ptrdiff_t strides[3];
} cview;
static cview view(const buf_t *b, infiniDtype_t dt, size_t ndim, const size_t *shape) {
    cview c = {{b->host, dt, ndim, shape, NULL}, {0}};
    tl_contiguous_strides(ndim, shape, c.strides);
    return c;
}
static ref_view_t *vfix(cview *c) {
    c->v.strides = c->strides;
    return &c->v;
}
#define VIEW_FIX(c) vfix(&(c))

/* ------------------------------------------------------------------ timing */
typedef void (*call_fn)(void *state);

/* Median seconds of one call over reps calls (after warm-up calls). */
static double time_median(call_fn fn, void *state, int reps) {
    double *t = malloc((size_t)reps * sizeof *t);
    for (int w = 0; w < 3; ++w) fn(state);
    if (g_dev == INFINI_DEVICE_CPU) {
        for (int r = 0; r < reps; ++r) {
            double t0 = now_s();
            fn(state);
            t[r] = now_s() - t0;
        }
    } else {
        infinirtEvent_t e0, e1;
        CHECK_ST(infinirtEventCreate(&e0));
        CHECK_ST(infinirtEventCreate(&e1));
        CHECK_ST(infinirtDeviceSynchronize());
        for (int r = 0; r < reps; ++r) {
            float ms = 0;
            CHECK_ST(infinirtEventRecord(e0, NULL));
            fn(state);
            CHECK_ST(infinirtEventRecord(e1, NULL));
            CHECK_ST(infinirtEventSynchronize(e1));
            CHECK_ST(infinirtEventElapsedTime(&ms, e0, e1));
            t[r] = 1e-3 * ms;
        }
        infinirtEventDestroy(e0);
        infinirtEventDestroy(e1);
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    double m = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
    free(t);
    return m;
}

/* ------------------------------------------------------------------ copy ceiling */
typedef struct {
    buf_t src, dst;
    size_t bytes;
} copy_state;

static void copy_call(void *p) {
    copy_state *s = p;
    if (g_dev != INFINI_DEVICE_CPU) {
        CHECK_ST(infinirtMemcpy(s->dst.dev, s->src.dev, s->bytes, INFINIRT_MEMCPY_D2D));
        return;
    }
#pragma omp parallel
    {
        size_t nt = (size_t)omp_get_num_threads(), t = (size_t)omp_get_thread_num();
        size_t chunk = (s->bytes / nt + 4095) / 4096 * 4096, lo = t * chunk;
        size_t hi = lo + chunk < s->bytes ? lo + chunk : s->bytes;
        if (lo < hi) memcpy((char *)s->dst.host + lo, (const char *)s->src.host + lo, hi - lo);
    }
}

/* Bytes read + written per second, copying `bytes` (CPU: with the current
 * omp_get_max_threads() threads). */
static double copy_bandwidth_bytes(size_t bytes) {
    copy_state s;
    s.bytes = bytes;
    s.src = buf_new(s.bytes);
    s.dst = buf_new(s.bytes);
    memset(s.src.host, 1, s.bytes);
    buf_upload(&s.src);
    double t = time_median(copy_call, &s, 11);
    buf_free(&s.src);
    buf_free(&s.dst);
    return 2.0 * (double)s.bytes / t;
}
static double copy_bandwidth(size_t mib) { return copy_bandwidth_bytes(mib << 20); }

/* The largest cache of the machine (bytes; 0 if unknown): sysfs's cache
 * entries of cpu0 (the kernel's view), else sysconf (glibc's, from CPUID:
 * on a virtual machine it can report the host's cache, 256 MiB where the
 * guest's CPU has 32). */
static size_t llc_bytes(void) {
    size_t best = 0;
    for (int i = 0; i < 8; ++i) {
        char path[96], buf[32] = "";
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (fgets(buf, sizeof buf, f)) {
            char *end;
            size_t n = (size_t)strtoull(buf, &end, 10);
            n *= *end == 'K' ? 1024 : *end == 'M' ? 1024 * 1024 : 1;
            if (n > best) best = n;
        }
        fclose(f);
    }
#ifdef _SC_LEVEL3_CACHE_SIZE
    if (!best && sysconf(_SC_LEVEL3_CACHE_SIZE) > 0) best = (size_t)sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    return best;
}

/* ------------------------------------------------------------------ verification */
static size_t g_bad_total;

/* Compare n outputs of dtype dt at host pointer p against ref; tol(i, ref)
 * gives the float32 tolerance (tl_close); a negative one means "exactly". */
typedef double (*tol_fn)(size_t i, double ref, const void *ctx);
static size_t check_close(const char *what, const void *p, infiniDtype_t dt, size_t n, const double *ref, tol_fn tol,
                          const void *ctx) {
    size_t es = tl_dtype_size(dt), bad = 0, first = (size_t)-1;
#pragma omp parallel for reduction(+ : bad) schedule(static)
    for (size_t i = 0; i < n; ++i) {
        double got = tl_load(dt, (const char *)p + i * es), t = tol(i, ref[i], ctx);
        int ok = t < 0 ? (got == ref[i] && !signbit(got)) : tl_close(dt, got, ref[i], t);
        if (!ok) {
            ++bad;
#pragma omp critical
            if (i < first) first = i;
        }
    }
    if (bad) {
        double got = tl_load(dt, (const char *)p + first * es);
        fprintf(stderr, "  %s: %zu of %zu elements out of tolerance; first at %zu: got %.9g, want %.9g\n", what, bad,
                n, first, got, ref[first]);
    }
    g_bad_total += bad;
    return bad;
}

/* ------------------------------------------------------------------ cases */
typedef struct bench_case bench_case;
struct bench_case {
    const char *name;
    void (*setup)(bench_case *c);
    call_fn call;
    size_t (*verify)(bench_case *c); /* number of bad elements */
    void (*teardown)(bench_case *c);
    double (*onednn)(bench_case *c); /* seconds, or < 0 when not available */
    int micro;                       /* report in microseconds */
    infiniDtype_t at, wt;
    size_t ndim, shape[3];
    /* state */
    buf_t in[3], out[3];
    size_t min_bytes;
    void *desc;
    double aux[4];
};

static size_t numel(const bench_case *c) {
    size_t n = 1;
    for (size_t d = 0; d < c->ndim; ++d) n *= c->shape[d];
    return n;
}
static size_t lastdim(const bench_case *c) { return c->shape[c->ndim - 1]; }

static void teardown_bufs(bench_case *c) {
    for (int k = 0; k < 3; ++k) {
        if (c->in[k].host) buf_free(&c->in[k]);
        if (c->out[k].host) buf_free(&c->out[k]);
    }
    memset(c->in, 0, sizeof c->in);
    memset(c->out, 0, sizeof c->out);
}

/* ---- add_rms_norm: y, residual_out = f(a, b, w) */
#define ARN_EPS 1e-6f
static void arn_setup(bench_case *c) {
    size_t n = numel(c), D = lastdim(c), es = tl_dtype_size(c->at), ws = tl_dtype_size(c->wt);
    for (int k = 0; k < 2; ++k) {
        c->in[k] = buf_new(n * es);
        fill_random(&c->in[k], c->at, -1.0, 1.0, 11 + (uint64_t)k);
        c->out[k] = buf_new(n * es);
    }
    c->in[2] = buf_new(D * ws);
    fill_random(&c->in[2], c->wt, 0.5, 1.5, 13);
    infiniopTensorDescriptor_t t = tensor(c->at, c->ndim, c->shape), w = tensor(c->wt, 1, &D);
    CHECK_ST(infiniopCreateAddRMSNormDescriptor(g_handle, (infiniopAddRMSNormDescriptor_t *)&c->desc, t, t, t, t, w,
                                                ARN_EPS));
    infiniopDestroyTensorDescriptor(t);
    infiniopDestroyTensorDescriptor(w);
    c->min_bytes = 4 * n * es + D * ws;
}
static void arn_call(void *p) {
    bench_case *c = p;
    CHECK_ST(infiniopAddRMSNorm(c->desc, NULL, 0, c->out[0].dev, c->out[1].dev, c->in[0].dev, c->in[1].dev,
                                c->in[2].dev, NULL));
}
static double tol_res(size_t i, double ref, const void *ctx) {
    (void)i, (void)ctx;
    return 0.5 * tl_ulp(INFINI_DTYPE_F32, ref); /* float32 a + b is correctly rounded */
}
static double tol_scaled(size_t i, double ref, const void *ctx) {
    (void)i;
    return *(const double *)ctx * TL_EPS32 * fabs(ref) + 1e-37;
}
static size_t arn_verify(bench_case *c) {
    size_t n = numel(c), D = lastdim(c);
    double *ry = malloc(n * sizeof *ry), *rr = malloc(n * sizeof *rr);
    cview a = view(&c->in[0], c->at, c->ndim, c->shape), b = view(&c->in[1], c->at, c->ndim, c->shape),
               w = view(&c->in[2], c->wt, 1, &c->shape[c->ndim - 1]);
    ref_add_rms_norm(VIEW_FIX(a), VIEW_FIX(b), VIEW_FIX(w), (double)ARN_EPS, ry, rr);
    double K = 16.0 + 2.0 * sqrt((double)D);
    buf_download(&c->out[0]);
    buf_download(&c->out[1]);
    size_t bad = check_close("y", c->out[0].host, c->at, n, ry, tol_scaled, &K) +
                 check_close("residual_out", c->out[1].host, c->at, n, rr, tol_res, NULL);
    free(ry);
    free(rr);
    return bad;
}
static void arn_teardown(bench_case *c) {
    infiniopDestroyAddRMSNormDescriptor(c->desc);
    teardown_bufs(c);
}

/* ---- layer_norm: output, input_standardization, input_std_deviation = f(x, w, b) */
#define LN_EPS 1e-5f
static void ln_setup(bench_case *c) {
    size_t n = numel(c), D = lastdim(c), rows = n / D, es = tl_dtype_size(c->at);
    c->in[0] = buf_new(n * es);
    fill_random(&c->in[0], c->at, -2.0, 2.0, 21);
    c->in[1] = buf_new(D * es);
    fill_random(&c->in[1], c->at, 0.5, 1.5, 22);
    c->in[2] = buf_new(D * es);
    fill_random(&c->in[2], c->at, -0.5, 0.5, 23);
    c->out[0] = buf_new(n * es);
    c->out[1] = buf_new(n * es);
    c->out[2] = buf_new(rows * es);
    infiniopTensorDescriptor_t x = tensor(c->at, c->ndim, c->shape), s = tensor(c->at, c->ndim - 1, c->shape),
                               w = tensor(c->at, 1, &D);
    CHECK_ST(infiniopCreateLayerNormDescriptor(g_handle, (infiniopLayerNormDescriptor_t *)&c->desc, x, x, s, x, w, w,
                                               LN_EPS));
    infiniopDestroyTensorDescriptor(x);
    infiniopDestroyTensorDescriptor(s);
    infiniopDestroyTensorDescriptor(w);
    c->min_bytes = 3 * n * es + rows * es + 2 * D * es;
}
static void ln_call(void *p) {
    bench_case *c = p;
    CHECK_ST(infiniopLayerNorm(c->desc, NULL, 0, c->out[0].dev, c->out[1].dev, c->out[2].dev, c->in[0].dev,
                               c->in[1].dev, c->in[2].dev, NULL));
}
typedef struct {
    size_t D;
    double K;
    const double *meanabs_over_std, *absw, *absb, *zref;
} ln_tol;
static double ln_tol_z(size_t i, double ref, const void *v) {
    const ln_tol *t = v;
    return t->K * TL_EPS32 * (fabs(ref) + t->meanabs_over_std[i / t->D] + 1.0);
}
static double ln_tol_out(size_t i, double ref, const void *v) {
    const ln_tol *t = v;
    size_t j = i % t->D;
    return ln_tol_z(i, t->zref[i], v) * t->absw[j] + 4.0 * TL_EPS32 * (fabs(ref) + t->absb[j]);
}
static double ln_tol_std(size_t i, double ref, const void *v) {
    (void)i;
    return ((const ln_tol *)v)->K * TL_EPS32 * fabs(ref);
}
static size_t ln_verify(bench_case *c) {
    size_t n = numel(c), D = lastdim(c), rows = n / D;
    double *ro = malloc(n * sizeof(double)), *rz = malloc(n * sizeof(double)), *rs = malloc(rows * sizeof(double));
    double *mas = malloc(rows * sizeof(double)), *aw = malloc(D * sizeof(double)), *ab = malloc(D * sizeof(double));
    cview x = view(&c->in[0], c->at, c->ndim, c->shape), w = view(&c->in[1], c->at, 1, &c->shape[c->ndim - 1]),
               b = view(&c->in[2], c->at, 1, &c->shape[c->ndim - 1]);
    ref_layer_norm(VIEW_FIX(x), VIEW_FIX(w), VIEW_FIX(b), (double)LN_EPS, ro, rz, rs, NULL);
#pragma omp parallel for schedule(static)
    for (size_t r = 0; r < rows; ++r) {
        double s = 0;
        for (size_t j = 0; j < D; ++j) s += fabs(ref_get_rc(&x.v, r, j));
        mas[r] = s / (double)D / rs[r];
    }
    for (size_t j = 0; j < D; ++j) aw[j] = fabs(ref_get(&w.v, j)), ab[j] = fabs(ref_get(&b.v, j));
    ln_tol t = {D, 16.0 + 2.0 * sqrt((double)D), mas, aw, ab, rz};
    for (int k = 0; k < 3; ++k) buf_download(&c->out[k]);
    size_t bad = check_close("output", c->out[0].host, c->at, n, ro, ln_tol_out, &t) +
                 check_close("input_standardization", c->out[1].host, c->at, n, rz, ln_tol_z, &t) +
                 check_close("input_std_deviation", c->out[2].host, c->at, rows, rs, ln_tol_std, &t);
    free(ro), free(rz), free(rs), free(mas), free(aw), free(ab);
    return bad;
}
static void ln_teardown(bench_case *c) {
    infiniopDestroyLayerNormDescriptor(c->desc);
    teardown_bufs(c);
}

/* ---- causal_softmax: y = f(x), x [B, S, T] */
static void cs_setup(bench_case *c) {
    size_t n = numel(c), S = c->shape[c->ndim - 2], T = lastdim(c), es = tl_dtype_size(c->at);
    c->in[0] = buf_new(n * es);
    fill_random(&c->in[0], c->at, -4.0, 4.0, 31);
    c->out[0] = buf_new(n * es);
    infiniopTensorDescriptor_t x = tensor(c->at, c->ndim, c->shape);
    CHECK_ST(infiniopCreateCausalSoftmaxDescriptor(g_handle, (infiniopCausalSoftmaxDescriptor_t *)&c->desc, x, x));
    infiniopDestroyTensorDescriptor(x);
    size_t visible = 0; /* per S x T slice: rows see T - S + 1 ... T columns */
    for (size_t i = 0; i < S; ++i) visible += i + (T - S) + 1;
    c->min_bytes = (n / (S * T)) * visible * es + n * es;
}
static void cs_call(void *p) {
    bench_case *c = p;
    CHECK_ST(infiniopCausalSoftmax(c->desc, NULL, 0, c->out[0].dev, c->in[0].dev, NULL));
}
typedef struct {
    size_t S, T;
    const double *absdiff;
} cs_tol;
static double cs_tol_y(size_t i, double ref, const void *v) {
    const cs_tol *t = v;
    size_t col = i % t->T, row = (i / t->T) % t->S, vis = row + (t->T - t->S) + 1;
    if (col >= vis) return -1.0; /* masked: exactly +0 */
    return (16.0 + 2.0 * sqrt((double)vis) + 2.0 * t->absdiff[i]) * TL_EPS32 * fabs(ref) + 0x1p-126;
}
static size_t cs_verify(bench_case *c) {
    size_t n = numel(c), S = c->shape[c->ndim - 2], T = lastdim(c);
    double *ref = malloc(n * sizeof(double)), *ad = calloc(n, sizeof(double));
    cview x = view(&c->in[0], c->at, c->ndim, c->shape);
    ref_causal_softmax(VIEW_FIX(x), ref);
#pragma omp parallel for schedule(static)
    for (size_t r = 0; r < n / T; ++r) {
        size_t vis = r % S + (T - S) + 1;
        double m = -INFINITY;
        for (size_t j = 0; j < vis; ++j) m = fmax(m, ref_get_rc(&x.v, r, j));
        for (size_t j = 0; j < vis; ++j) ad[r * T + j] = fabs(ref_get_rc(&x.v, r, j) - m);
    }
    cs_tol t = {S, T, ad};
    buf_download(&c->out[0]);
    size_t bad = check_close("y", c->out[0].host, c->at, n, ref, cs_tol_y, &t);
    free(ref);
    free(ad);
    return bad;
}
static void cs_teardown(bench_case *c) {
    infiniopDestroyCausalSoftmaxDescriptor(c->desc);
    teardown_bufs(c);
}

/* ---- silu and sigmoid: y = f(x); aux[0] = 1 for silu */
static void act_setup(bench_case *c) {
    size_t n = numel(c), es = tl_dtype_size(c->at);
    c->in[0] = buf_new(n * es);
    fill_random(&c->in[0], c->at, -8.0, 8.0, 41);
    c->out[0] = buf_new(n * es);
    infiniopTensorDescriptor_t x = tensor(c->at, c->ndim, c->shape);
    if (c->aux[0] == 1.0)
        CHECK_ST(infiniopCreateSiluDescriptor(g_handle, (infiniopSiluDescriptor_t *)&c->desc, x, x));
    else
        CHECK_ST(infiniopCreateSigmoidDescriptor(g_handle, (infiniopSigmoidDescriptor_t *)&c->desc, x, x));
    infiniopDestroyTensorDescriptor(x);
    c->min_bytes = 2 * n * es;
}
static void act_call(void *p) {
    bench_case *c = p;
    if (c->aux[0] == 1.0) CHECK_ST(infiniopSilu(c->desc, NULL, 0, c->out[0].dev, c->in[0].dev, NULL));
    else CHECK_ST(infiniopSigmoid(c->desc, NULL, 0, c->out[0].dev, c->in[0].dev, NULL));
}
static size_t act_verify(bench_case *c) {
    size_t n = numel(c), es = tl_dtype_size(c->at), bad = 0, first = (size_t)-1;
    cview x = view(&c->in[0], c->at, c->ndim, c->shape);
    VIEW_FIX(x);
    buf_download(&c->out[0]);
    int silu = c->aux[0] == 1.0;
#pragma omp parallel for reduction(+ : bad) schedule(static)
    for (size_t i = 0; i < n; ++i) {
        long double xv = ref_get(&x.v, i);
        double want = (double)(silu ? ref_silu_scalar(xv) : ref_sigmoid_scalar(xv));
        double got = tl_load(c->at, (const char *)c->out[0].host + i * es);
        if (!tl_close_ulp(c->at, got, want, 4.0)) { /* the tests' rule: 4 ulp (F32), 1 ulp (halves) */
            ++bad;
#pragma omp critical
            if (i < first) first = i;
        }
    }
    if (bad)
        fprintf(stderr, "  y: %zu of %zu elements out of tolerance; first at %zu (x = %.9g)\n", bad, n, first,
                ref_get(&x.v, first));
    g_bad_total += bad;
    return bad;
}
static void act_teardown(bench_case *c) {
    if (c->aux[0] == 1.0) infiniopDestroySiluDescriptor(c->desc);
    else infiniopDestroySigmoidDescriptor(c->desc);
    teardown_bufs(c);
}

/* ------------------------------------------------------------------ oneDNN peers */
#ifdef INFINIOP_BENCH_ONEDNN
static dnnl_engine_t g_eng;
static dnnl_stream_t g_strm;

static dnnl_data_type_t dnnl_dt(infiniDtype_t t) {
    return t == INFINI_DTYPE_F16 ? dnnl_f16 : t == INFINI_DTYPE_BF16 ? dnnl_bf16 : dnnl_f32;
}

typedef struct {
    dnnl_primitive_t prim;
    int nargs;
    dnnl_exec_arg_t args[8];
} dnnl_run;

static void dnnl_call(void *p) {
    dnnl_run *r = p;
    dnnl_primitive_execute(r->prim, g_strm, r->nargs, r->args);
    dnnl_stream_wait(g_strm);
}

static dnnl_memory_t dnnl_mem(const dnnl_memory_desc_t *md, void *data) {
    dnnl_memory_t m = NULL;
    if (dnnl_memory_create(&m, md, g_eng, data) != dnnl_success) return NULL;
    return m;
}

/* Build the primitive from op_desc, time it, free everything. */
static double dnnl_time(const void *op_desc, dnnl_run *r) {
    dnnl_primitive_desc_t pd;
    if (dnnl_primitive_desc_create(&pd, op_desc, NULL, g_eng, NULL) != dnnl_success) return -1.0;
    dnnl_status_t st = dnnl_primitive_create(&r->prim, pd);
    dnnl_primitive_desc_destroy(pd);
    if (st != dnnl_success) return -1.0;
    double t = time_median(dnnl_call, r, g_reps);
    dnnl_primitive_destroy(r->prim);
    for (int k = 0; k < r->nargs; ++k) dnnl_memory_destroy(r->args[k].memory);
    return t;
}

static void dims_of(const bench_case *c, dnnl_dims_t d) {
    for (size_t k = 0; k < c->ndim; ++k) d[k] = (dnnl_dim_t)c->shape[k];
}

/* Eltwise (logistic or swish) from in[0] to out[0] (after our result was verified). */
static double onednn_act(bench_case *c) {
    dnnl_dims_t d;
    dims_of(c, d);
    dnnl_memory_desc_t md;
    dnnl_memory_desc_init_by_tag(&md, (int)c->ndim, d, dnnl_dt(c->at), c->ndim == 2 ? dnnl_ab : dnnl_abc);
    dnnl_eltwise_desc_t ed;
    if (dnnl_eltwise_forward_desc_init(&ed, dnnl_forward_inference, c->aux[0] == 1.0 ? dnnl_eltwise_swish
                                                                                       : dnnl_eltwise_logistic,
                                       &md, 1.0f, 0.0f) != dnnl_success)
        return -1.0;
    dnnl_run r = {NULL, 2, {{DNNL_ARG_SRC, dnnl_mem(&md, c->in[0].host)}, {DNNL_ARG_DST, dnnl_mem(&md, c->out[0].host)}}};
    return dnnl_time(&ed, &r);
}

/* Softmax over the last axis (no mask) from in[0] to out[0]. */
static double onednn_softmax(bench_case *c) {
    dnnl_dims_t d;
    dims_of(c, d);
    dnnl_memory_desc_t md;
    dnnl_memory_desc_init_by_tag(&md, (int)c->ndim, d, dnnl_dt(c->at), dnnl_abc);
    dnnl_softmax_desc_t sd;
    if (dnnl_softmax_forward_desc_init(&sd, dnnl_forward_inference, &md, (int)c->ndim - 1) != dnnl_success)
        return -1.0;
    dnnl_run r = {NULL, 2, {{DNNL_ARG_SRC, dnnl_mem(&md, c->in[0].host)}, {DNNL_ARG_DST, dnnl_mem(&md, c->out[0].host)}}};
    return dnnl_time(&sd, &r);
}

/* Layer normalization with scale and shift (float32, oneDNN's rule),
 * writing dst and the mean and variance (training: the statistics are
 * outputs, as input_std_deviation is ours). */
static double onednn_ln(bench_case *c) {
    size_t D = lastdim(c), rows = numel(c) / D;
    dnnl_dims_t d, sdims = {(dnnl_dim_t)rows}, wdims = {(dnnl_dim_t)D};
    dims_of(c, d);
    dnnl_memory_desc_t md, smd, wmd;
    dnnl_memory_desc_init_by_tag(&md, 2, d, dnnl_dt(c->at), dnnl_ab);
    dnnl_memory_desc_init_by_tag(&smd, 1, sdims, dnnl_f32, dnnl_a);
    dnnl_memory_desc_init_by_tag(&wmd, 1, wdims, dnnl_f32, dnnl_a);
    dnnl_layer_normalization_desc_t ld;
    if (dnnl_layer_normalization_forward_desc_init(&ld, dnnl_forward_training, &md, &smd, LN_EPS,
                                                   dnnl_use_scale | dnnl_use_shift) != dnnl_success)
        return -1.0;
    float *scale = malloc(D * sizeof(float)), *shift = malloc(D * sizeof(float));
    float *mean = malloc(rows * sizeof(float)), *var = malloc(rows * sizeof(float));
    for (size_t j = 0; j < D; ++j) {
        scale[j] = (float)tl_load(c->at, (char *)c->in[1].host + j * tl_dtype_size(c->at));
        shift[j] = (float)tl_load(c->at, (char *)c->in[2].host + j * tl_dtype_size(c->at));
    }
    dnnl_run r = {NULL, 6,
                  {{DNNL_ARG_SRC, dnnl_mem(&md, c->in[0].host)},
                   {DNNL_ARG_DST, dnnl_mem(&md, c->out[0].host)},
                   {DNNL_ARG_SCALE, dnnl_mem(&wmd, scale)},
                   {DNNL_ARG_SHIFT, dnnl_mem(&wmd, shift)},
                   {DNNL_ARG_MEAN, dnnl_mem(&smd, mean)},
                   {DNNL_ARG_VARIANCE, dnnl_mem(&smd, var)}}};
    double t = dnnl_time(&ld, &r);
    free(scale), free(shift), free(mean), free(var);
    return t;
}
#define ONEDNN_ACT onednn_act
#define ONEDNN_SOFTMAX onednn_softmax
#define ONEDNN_LN onednn_ln
#else
#define ONEDNN_ACT NULL
#define ONEDNN_SOFTMAX NULL
#define ONEDNN_LN NULL
#endif

/* ------------------------------------------------------------------ the cases */
#define F16 INFINI_DTYPE_F16
#define BF16 INFINI_DTYPE_BF16
#define F32 INFINI_DTYPE_F32
#define ARN(name, at, wt, r, d, micro)                                                                                 \
    {name, arn_setup, arn_call, arn_verify, arn_teardown, NULL, micro, at, wt, 2, {r, d, 0}, {{0}}, {{0}}, 0, NULL, {0}}
#define LN(name, t, r, d)                                                                                              \
    {name, ln_setup, ln_call, ln_verify, ln_teardown, ONEDNN_LN, 0, t, t, 2, {r, d, 0}, {{0}}, {{0}}, 0, NULL, {0}}
#define CS(name, t, b, s, tt)                                                                                          \
    {name, cs_setup, cs_call, cs_verify, cs_teardown, ONEDNN_SOFTMAX, 0, t, t, 3, {b, s, tt}, {{0}}, {{0}}, 0, NULL, {0}}
#define ACT(name, silu, t, r, d)                                                                                       \
    {name, act_setup, act_call, act_verify, act_teardown, ONEDNN_ACT, 0, t, t, 2, {r, d, 0}, {{0}}, {{0}}, 0, NULL, {silu}}

static bench_case g_cases[] = {
    ARN("add_rms_norm bf16/bf16 4096x4096", BF16, BF16, 4096, 4096, 0),
    ARN("add_rms_norm f32/f32 4096x4096", F32, F32, 4096, 4096, 0),
    LN("layer_norm bf16 4096x4096", BF16, 4096, 4096),
    LN("layer_norm f32 4096x4096", F32, 4096, 4096),
    CS("causal_softmax f32 8x1024x1024", F32, 8, 1024, 1024),
    CS("causal_softmax bf16 8x1024x1024", BF16, 8, 1024, 1024),
    ACT("silu f32 4096x4096", 1, F32, 4096, 4096),
    ACT("silu bf16 4096x4096", 1, BF16, 4096, 4096),
    ACT("sigmoid f16 4096x4096", 0, F16, 4096, 4096),
    ARN("add_rms_norm bf16/bf16 65536x128", BF16, BF16, 65536, 128, 0),
    ARN("add_rms_norm bf16/bf16 1x4096 (decode)", BF16, BF16, 1, 4096, 1),
};
#define NCASES (sizeof g_cases / sizeof g_cases[0])

/* ------------------------------------------------------------------ JSON records */
static FILE *g_json;
static int g_json_rows;
static void json_row(const bench_case *c, const char *set, int threads, double t, double copy_bw, double td) {
    if (!g_json) return;
    fprintf(g_json, "%s\n  {\"case\": \"%s\", \"set\": \"%s\", \"shape\": [", g_json_rows++ ? "," : "", c->name, set);
    for (size_t d = 0; d < c->ndim; ++d) fprintf(g_json, "%s%zu", d ? ", " : "", c->shape[d]);
    fprintf(g_json, "], \"threads\": %d, \"bytes\": %zu, \"time_s\": %.9g, \"gbps\": %.4g, \"copy_gbps\": %.4g, "
                    "\"of_copy\": %.4g, \"onednn_time_s\": ",
            threads, c->min_bytes, t, (double)c->min_bytes / t * 1e-9, copy_bw * 1e-9, (double)c->min_bytes / t / copy_bw);
    if (td > 0) fprintf(g_json, "%.9g}", td);
    else fprintf(g_json, "null}");
}

/* --sweep: the case at its listed shape and at >= 4x the last-level cache,
 * each at 1..N threads; the copy ceiling at the same bytes and threads. */
static void sweep_case(bench_case *c, size_t llc, int nmax, int use_onednn) {
    size_t shape0 = c->shape[0];
    for (int set = 0; set < 2; ++set) {
        c->shape[0] = shape0;
        c->setup(c);
        if (set == 1) {
            if (llc == 0 || c->min_bytes >= 4 * llc) { /* the listed shape is already that large */
                c->teardown(c);
                break;
            }
            size_t scale = (4 * llc + c->min_bytes - 1) / c->min_bytes;
            c->teardown(c);
            c->shape[0] = shape0 * scale;
            c->setup(c);
        }
        const char *sname = set ? ">=4xLLC" : "listed";
        size_t bad = 0;
        for (int th = 1; th <= nmax; ++th) {
            omp_set_num_threads(th);
            double t = time_median(c->call, c, c->micro ? g_reps * 100 : g_reps);
            if (th == nmax) bad = c->verify(c);
            double cbw = copy_bandwidth_bytes(c->min_bytes / 2);
            double td = use_onednn && c->onednn ? c->onednn(c) : -1.0;
            char tbuf[24], rbuf[24] = "-", shp[48];
            snprintf(tbuf, sizeof tbuf, "%.3f ms", t * 1e3);
            if (td > 0) snprintf(rbuf, sizeof rbuf, "%.2fx", td / t);
            snprintf(shp, sizeof shp, "%zux%zu%s", c->shape[0], c->shape[1], c->ndim == 3 ? "x..." : "");
            printf("| %-40s | %-8s | %14s | %3d | %10s | %7.1f | %7.1f | %6.1f%% | %9s |\n", c->name, sname, shp, th,
                   tbuf, (double)c->min_bytes / t * 1e-9, cbw * 1e-9, 100.0 * (double)c->min_bytes / t / cbw,
                   rbuf);
            fflush(stdout);
            json_row(c, sname, th, t, cbw, td);
        }
        omp_set_num_threads(nmax);
        if (bad) printf("| %s: %zu elements out of tolerance |\n", c->name, bad);
        c->teardown(c);
    }
    c->shape[0] = shape0;
}

static void usage(void) {
    fprintf(stderr, "usage: infiniop-bench [--device cpu|nvidia] [--reps N] [--copy-mib M] [--case SUBSTRING] "
                    "[--no-onednn] [--sweep] [--json FILE]\n");
    exit(2);
}

int main(int argc, char **argv) {
    size_t copy_mib = 1024;
    const char *filter = NULL;
    int use_onednn = 1, sweep = 0;
    const char *json_path = NULL;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--device") && i + 1 < argc) {
            ++i;
            if (!strcmp(argv[i], "cpu")) g_dev = INFINI_DEVICE_CPU;
            else if (!strcmp(argv[i], "nvidia")) g_dev = INFINI_DEVICE_NVIDIA;
            else usage();
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            g_reps = atoi(argv[++i]);
            if (g_reps < 1) usage();
        } else if (!strcmp(argv[i], "--copy-mib") && i + 1 < argc) {
            copy_mib = (size_t)atol(argv[++i]);
            if (!copy_mib) usage();
        } else if (!strcmp(argv[i], "--case") && i + 1 < argc) {
            filter = argv[++i];
        } else if (!strcmp(argv[i], "--sweep")) {
            sweep = 1;
        } else if (!strcmp(argv[i], "--json") && i + 1 < argc) {
            json_path = argv[++i];
        } else if (!strcmp(argv[i], "--no-onednn")) {
            use_onednn = 0;
        } else {
            usage();
        }
    }
    CHECK_ST(infinirtInit());
    if (g_dev != INFINI_DEVICE_CPU) {
        int count = 0;
        if (infinirtGetDeviceCount(g_dev, &count) != INFINI_STATUS_SUCCESS || count < 1) {
            fprintf(stderr, "no nvidia device (or built without CUDA)\n");
            return 77;
        }
        use_onednn = 0;
    }
    CHECK_ST(infinirtSetDevice(g_dev, 0));
    CHECK_ST(infiniopCreateHandle(&g_handle));
#ifdef INFINIOP_BENCH_ONEDNN
    if (use_onednn && (dnnl_engine_create(&g_eng, dnnl_cpu, 0) != dnnl_success ||
                       dnnl_stream_create(&g_strm, g_eng, dnnl_stream_default_flags) != dnnl_success))
        use_onednn = 0;
#else
    use_onednn = 0;
#endif

    printf("infiniop %s, CPU kernels: %s\n", infiniopGetVersion(), infiniopGetCpuIsa());
    if (json_path && !(g_json = fopen(json_path, "w"))) {
        fprintf(stderr, "cannot write %s\n", json_path);
        return 2;
    }
    if (g_json) fprintf(g_json, "[");
    if (sweep && g_dev == INFINI_DEVICE_CPU) {
        size_t llc = llc_bytes();
        int nmax = omp_get_max_threads();
        printf("device: cpu, threads 1..%d, last-level cache %zu KiB (working sets of at least %zu MiB); median of %d "
               "runs; copy ceiling: memcpy of the case's bytes at the same thread count\n\n",
               nmax, llc >> 10, (4 * llc) >> 20, g_reps);
        printf("| %-40s | %-8s | %14s | %3s | %10s | %7s | %7s | %7s | %9s |\n", "case", "set", "shape", "thr", "time",
               "GB/s", "copy", "of copy", "oneDNN/ours");
        printf("|------------------------------------------|----------|----------------|----:|-----------:|--------:|"
               "--------:|--------:|----------:|\n");
        for (size_t k = 0; k < NCASES; ++k)
            if ((!filter || strstr(g_cases[k].name, filter)) && !g_cases[k].micro)
                sweep_case(&g_cases[k], llc, nmax, use_onednn);
        if (g_json) fprintf(g_json, "\n]\n"), fclose(g_json);
        infiniopDestroyHandle(g_handle);
        return g_bad_total ? 1 : 0;
    }
    double copy_bw = copy_bandwidth(copy_mib);
    printf("device: %s", g_dev == INFINI_DEVICE_CPU ? "cpu" : "nvidia");
    if (g_dev == INFINI_DEVICE_CPU) printf(", %d OpenMP threads", omp_get_max_threads());
    printf("; median of %d runs\n", g_reps);
    printf("copy ceiling: %s of %zu MiB: %.1f GB/s (bytes read + written)\n\n",
           g_dev == INFINI_DEVICE_CPU ? "multi-threaded memcpy" : "device-to-device infinirtMemcpy", copy_mib,
           copy_bw * 1e-9);
    printf("| %-40s | %10s | %9s | %8s |%s %6s |\n", "case", "time", "GB/s", "of copy",
           use_onednn ? " oneDNN time | oneDNN/ours |" : "", "check");
    printf("|%s|-----------:|----------:|---------:|%s-------:|\n", "------------------------------------------",
           use_onednn ? "------------:|------------:|" : "");
    fflush(stdout);

    for (size_t k = 0; k < NCASES; ++k) {
        bench_case *c = &g_cases[k];
        if (filter && !strstr(c->name, filter)) continue;
        c->setup(c);
        int reps = c->micro ? g_reps * 100 : g_reps;
        double t = time_median(c->call, c, reps);
        size_t bad = c->verify(c);
        double bw = (double)c->min_bytes / t;
        char tbuf[32], obuf[64] = "";
        if (c->micro) snprintf(tbuf, sizeof tbuf, "%.2f us", t * 1e6);
        else snprintf(tbuf, sizeof tbuf, "%.3f ms", t * 1e3);
        double td = -1.0;
        if (use_onednn) {
            td = c->onednn && g_dev == INFINI_DEVICE_CPU ? c->onednn(c) : -1.0;
            if (td > 0) snprintf(obuf, sizeof obuf, " %8.3f ms | %10.2fx |", td * 1e3, td / t);
            else snprintf(obuf, sizeof obuf, " %11s | %11s |", "-", "-");
        }
        printf("| %-40s | %10s | %9.1f | %7.1f%% |%s %6s |\n", c->name, tbuf, bw * 1e-9, 100.0 * bw / copy_bw, obuf,
               bad ? "FAIL" : "ok");
        json_row(c, "listed", omp_get_max_threads(), t, copy_bw, td);
        fflush(stdout);
        c->teardown(c);
    }
    if (g_json) fprintf(g_json, "\n]\n"), fclose(g_json);
    infiniopDestroyHandle(g_handle);
    if (g_bad_total) {
        printf("\nverification FAILED: %zu elements out of tolerance\n", g_bad_total);
        return 1;
    }
    printf("\nevery output element verified against the float64 reference\n");
    return 0;
}
