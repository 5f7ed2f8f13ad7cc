/*
 * infiniop_bench.c - runs every operator on representative transformer
 * shapes, verifies every output element against the float64 references of
 * the tests (tests/common/reference.c, with the tests' tolerances), and
 * prints a table: time, effective bandwidth (the minimum bytes the operator
 * must move / time), its ratio to a copy of the same bytes, and oneDNN's.
 *
 *   infiniop-bench [--device cpu|nvidia] [--case SUBSTRING] [--no-onednn] [--sweep]
 *                  [--threads N,M,...] [--sets listed|dram|both] [--llc-mib M]
 *                  [--time-cap S] [--reps MIN_ROUNDS] [--copy-mib M] [--json FILE]
 *                  [--compare PREVIOUS.json] [--copy stream|memcpy] [--pages huge|4k]
 *
 * Paired rounds (measure()): each case runs in rounds alternating with a
 * copy of the same bytes at the same threads (and with oneDNN where it has
 * the operation), 3 samples of each side in a row; the ratios are per
 * round, reported as median
 * [interquartile range]; rounds go on until the range is within +-5% or
 * --time-cap seconds (default 3), else the row is marked wide.
 * Sets: the listed shape, and (--sets dram / both) one of at least 4x the
 * last-level cache (sysfs, or --llc-mib; the first dimension scaled up).
 * Kind: DRAM when the bytes exceed the last-level cache, else cache; the
 * copy of the same bytes is of the same kind.
 * Threads: the OpenMP maximum, or --threads; --sweep: 1..N, both sets.
 * --json writes every row (one per line); --compare reads such a file of
 * an earlier run and marks the rows whose ratio moved more than 10% since
 * (scripts/bench.sh passes its previous run).
 *
 * The copy (CPU): min_bytes / 2 read and written, split over the team the
 * library's kernels take for those bytes, with streaming stores when the
 * output exceeds 8 MiB (as the kernels'; --copy memcpy: glibc's memcpy
 * throughout, the ceiling of earlier tables); on nvidia a device-to-device
 * infinirtMemcpy timed with events. Both count bytes read + written.
 * Pages (CPU): every host buffer of 2 MiB or more, the case's and its
 * copy's alike, asks for transparent huge pages (madvise); --pages 4k gives
 * them 4 KiB pages, whose physical order depends on what ran before
 * (buf_new has the why; a row whose buffers did not get huge pages says so).
 * Minimum bytes: every input element read once and every output element
 * written once (causal softmax: only the visible inputs are read).
 * When built with oneDNN (optional, CPU only), oneDNN's layer
 * normalization, swish, logistic and softmax (no mask) primitives are timed
 * on the same data as peers.
 * The device side goes through infinirt only (no CUDA headers here).
 */
#define _GNU_SOURCE /* sysconf(_SC_LEVEL3_CACHE_SIZE) */
#if defined(__x86_64__)
#include <emmintrin.h> /* the streaming copy; before the project's headers (their macros) */
#endif
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
#include <sys/mman.h>
#include <sys/resource.h>
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

/* Pages of the host buffers (--pages): the case's and its copy's alike.
 * Huge (the default): a buffer of at least HUGE_BYTES is 2 MiB-aligned,
 * rounded up to 2 MiB and madvise(MADV_HUGEPAGE)d before its first touch, so
 * that the kernel backs it with transparent huge pages where THP is
 * "always" or "madvise" (the usual setting). With 4 KiB pages (--pages 4k:
 * 64-byte alignment and MADV_NOHUGEPAGE) a buffer's physical pages are
 * whatever the page allocator's free lists hold: in a fresh process runs of
 * 32-64 physically contiguous pages, after earlier cases have freed hundreds
 * of MiB nearly every page apart from its neighbours. On the 2-core Sapphire
 * Rapids guest the kernels took 3-19% longer on such scattered pages while
 * a 32 MiB copy did not (sigmoid f16: 90% of copy alone, 78% late in the
 * main job), and the copies of the float32 cases' 96-128 MiB halves,
 * allocated after the verification's frees, ran at 32-36 GB/s against 45-47
 * on huge pages (bench/NOTES.md, session 18). Huge pages make a row
 * independent of what ran before it, for both sides. */
#define HUGE_BYTES ((size_t)2 << 20)
static int g_huge_pages = 1;

static buf_t buf_new(size_t bytes) {
    int huge = g_huge_pages && bytes >= HUGE_BYTES;
    size_t align = huge ? HUGE_BYTES : 64, size = (bytes + align - 1) / align * align;
    buf_t b = {aligned_alloc(align, size), NULL, bytes};
    if (!b.host) {
        fprintf(stderr, "out of host memory (%zu bytes)\n", bytes);
        exit(2);
    }
#ifdef MADV_HUGEPAGE
    if (huge) (void)madvise(b.host, size, MADV_HUGEPAGE); /* advice: the kernel may still give 4 KiB pages */
    else if (!g_huge_pages && bytes >= HUGE_BYTES) {       /* whole pages inside the buffer only */
        uintptr_t lo = ((uintptr_t)b.host + 4095) & ~(uintptr_t)4095, hi = ((uintptr_t)b.host + bytes) & ~(uintptr_t)4095;
        if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_NOHUGEPAGE);
    }
#endif
    memset(b.host, 0, bytes);
    if (g_dev == INFINI_DEVICE_CPU) b.dev = b.host;
    else CHECK_ST(infinirtMalloc(&b.dev, bytes));
    return b;
}
/* The bytes of b that huge pages can back (whole 2 MiB pages of a huge buffer). */
static size_t buf_huge_bytes(const buf_t *b) {
    return g_huge_pages && b->host && b->bytes >= HUGE_BYTES ? b->bytes / HUGE_BYTES * HUGE_BYTES : 0;
}
/* The process's anonymous memory in transparent huge pages (bytes), or -1. */
static double anon_huge_bytes(void) {
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    if (!f) return -1.0;
    char line[256];
    double kb = -1.0;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "AnonHugePages:", 14)) kb = strtod(line + 14, NULL);
    fclose(f);
    return kb < 0 ? -1.0 : kb * 1024.0;
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
/* The same from element `off` on: the float64 references keep no state, so
 * the verifications run them over blocks of rows in parallel. */
static cview view_at(const buf_t *b, infiniDtype_t dt, size_t ndim, const size_t *shape, size_t off) {
    cview c = {{(char *)b->host + off * tl_dtype_size(dt), dt, ndim, shape, NULL}, {0}};
    tl_contiguous_strides(ndim, shape, c.strides);
    return c;
}
#define REF_BLOCK 64 /* rows per parallel reference block (causal softmax: one S x T slice) */
static ref_view_t *vfix(cview *c) {
    c->v.strides = c->strides;
    return &c->v;
}
#define VIEW_FIX(c) vfix(&(c))

/* ------------------------------------------------------------------ timing */
typedef void (*call_fn)(void *state);

/* Involuntary context switches of the whole process so far (every thread):
 * a sample during which one happened had a thread taken off its core. */
static long preemptions(void) {
    struct rusage u;
    return getrusage(RUSAGE_SELF, &u) ? 0 : u.ru_nivcsw;
}
static int g_preempted; /* set by sample(): the last sample was preempted */

/* Seconds per call of `calls` back-to-back calls (nvidia: between events). */
static double sample(call_fn fn, void *state, int calls) {
    if (g_dev == INFINI_DEVICE_CPU) {
        long p0 = preemptions();
        double t0 = now_s();
        for (int k = 0; k < calls; ++k) fn(state);
        double t = (now_s() - t0) / calls;
        g_preempted = preemptions() != p0;
        return t;
    }
    g_preempted = 0;
    infinirtEvent_t e0, e1;
    float ms = 0;
    CHECK_ST(infinirtEventCreate(&e0));
    CHECK_ST(infinirtEventCreate(&e1));
    CHECK_ST(infinirtEventRecord(e0, NULL));
    for (int k = 0; k < calls; ++k) fn(state);
    CHECK_ST(infinirtEventRecord(e1, NULL));
    CHECK_ST(infinirtEventSynchronize(e1));
    CHECK_ST(infinirtEventElapsedTime(&ms, e0, e1));
    infinirtEventDestroy(e0);
    infinirtEventDestroy(e1);
    return 1e-3 * ms / calls;
}

/* Calls per sample so that one sample lasts about 200 us (the clock's and
 * the event's resolution stay under 1% of it); warms the callee up. */
static int calls_per_sample(call_fn fn, void *state) {
    for (int w = 0; w < 3; ++w) fn(state);
    double t = sample(fn, state, 1);
    t = t < sample(fn, state, 1) ? t : sample(fn, state, 1);
    int n = t > 0 ? (int)ceil(200e-6 / t) : 1;
    return n < 1 ? 1 : n > 20000 ? 20000 : n;
}

/* Median and quartiles (linear interpolation) of n values; sorts x. */
typedef struct {
    double med, q1, q3;
} quart_t;
static double quantile(const double *s, int n, double q) {
    double pos = q * (n - 1);
    int i = (int)pos;
    return i + 1 < n ? s[i] + (pos - i) * (s[i + 1] - s[i]) : s[n - 1];
}
static quart_t quartiles(double *x, int n) {
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    quart_t q = {quantile(x, n, 0.5), quantile(x, n, 0.25), quantile(x, n, 0.75)};
    return q;
}
/* The spread rule: the interquartile range within +-SPREAD of the median. */
#define SPREAD 0.05
static int is_wide(quart_t q) { return q.q1 < (1 - SPREAD) * q.med || q.q3 > (1 + SPREAD) * q.med; }

/* ------------------------------------------------------------------ copy of the same bytes */
typedef struct {
    buf_t src, dst;
    size_t bytes; /* each way: read + written = 2 * bytes */
    int team;
} copy_state;

/* Copy n bytes (16-byte aligned, as every chunk here is) with streaming
 * stores when `stream`, as the kernels write outputs larger than the caches
 * (src/cpu/cpu.h INFINIOP_CPU_STREAM_BYTES): the destination is not read
 * for ownership, so the copy moves 2 bytes per byte, not 3. */
static void copy_bytes(char *dst, const char *src, size_t n, int stream) {
#if defined(__x86_64__)
    if (stream && !((uintptr_t)dst & 15) && !((uintptr_t)src & 15)) {
        size_t i = 0;
        for (; i + 64 <= n; i += 64) {
            __m128i a = _mm_load_si128((const __m128i *)(src + i)), b = _mm_load_si128((const __m128i *)(src + i + 16));
            __m128i c = _mm_load_si128((const __m128i *)(src + i + 32)), d = _mm_load_si128((const __m128i *)(src + i + 48));
            _mm_stream_si128((__m128i *)(dst + i), a);
            _mm_stream_si128((__m128i *)(dst + i + 16), b);
            _mm_stream_si128((__m128i *)(dst + i + 32), c);
            _mm_stream_si128((__m128i *)(dst + i + 48), d);
        }
        _mm_sfence();
        if (i < n) memcpy(dst + i, src + i, n - i);
        return;
    }
#endif
    (void)stream;
    memcpy(dst, src, n);
}

static int g_copy_stream = 1; /* --copy memcpy: 0 (glibc's memcpy throughout) */

static void copy_call(void *p) {
    copy_state *s = p;
    if (g_dev != INFINI_DEVICE_CPU) {
        CHECK_ST(infinirtMemcpy(s->dst.dev, s->src.dev, s->bytes, INFINIRT_MEMCPY_D2D));
        return;
    }
    int stream = g_copy_stream && s->bytes > ((size_t)8 << 20);
    if (s->team < 2) {
        copy_bytes(s->dst.host, s->src.host, s->bytes, stream);
        return;
    }
#pragma omp parallel num_threads(s->team)
    {
        size_t nt = (size_t)omp_get_num_threads(), t = (size_t)omp_get_thread_num();
        size_t chunk = (s->bytes / nt + 4095) / 4096 * 4096, lo = t * chunk;
        size_t hi = lo + chunk < s->bytes ? lo + chunk : s->bytes;
        if (lo < hi) copy_bytes((char *)s->dst.host + lo, (const char *)s->src.host + lo, hi - lo, stream);
    }
}

/* The copy of a case's bytes: min_bytes / 2 read and min_bytes / 2 written,
 * with the team the library's CPU kernels take for min_bytes (src/cpu/cpu.c:
 * one thread under 1 MiB, at most one per 256 KiB task, else every OpenMP
 * thread), so a set of one kind (cache, DRAM) meets the ceiling of its kind. */
static copy_state copy_new(size_t min_bytes) {
    copy_state s;
    s.bytes = min_bytes / 2 < 64 ? 64 : min_bytes / 2;
    s.src = buf_new(s.bytes);
    s.dst = buf_new(s.bytes);
    memset(s.src.host, 1, s.bytes);
    buf_upload(&s.src);
    size_t tasks = min_bytes >> 18;
    int team = omp_get_max_threads();
    if ((size_t)team > tasks) team = (int)tasks;
    s.team = min_bytes < ((size_t)1 << 20) ? 1 : team;
    return s;
}
static void copy_free(copy_state *s) {
    buf_free(&s->src);
    buf_free(&s->dst);
}

/* Bytes read + written per second, copying `bytes` with every OpenMP thread
 * (the header's DRAM reference; the cases are paired with their own copy). */
static double copy_bandwidth(size_t bytes) {
    copy_state s = copy_new(2 * bytes);
    s.team = omp_get_max_threads();
    int calls = calls_per_sample(copy_call, &s);
    double t[11];
    for (int r = 0; r < 11; ++r) t[r] = sample(copy_call, &s, calls);
    copy_free(&s);
    return 2.0 * (double)s.bytes / quartiles(t, 11).med;
}

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
    void *(*onednn)(bench_case *c);  /* the oneDNN peer ready to run on the case's buffers, or NULL */
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
    size_t rows = n / D;
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t r0 = 0; r0 < rows; r0 += REF_BLOCK) {
        size_t sh[2] = {rows - r0 < REF_BLOCK ? rows - r0 : REF_BLOCK, D};
        cview a = view_at(&c->in[0], c->at, 2, sh, r0 * D), b = view_at(&c->in[1], c->at, 2, sh, r0 * D),
              w = view(&c->in[2], c->wt, 1, &sh[1]);
        ref_add_rms_norm(VIEW_FIX(a), VIEW_FIX(b), VIEW_FIX(w), (double)ARN_EPS, ry + r0 * D, rr + r0 * D);
    }
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
    (void)VIEW_FIX(x), (void)VIEW_FIX(w), (void)VIEW_FIX(b);
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t r0 = 0; r0 < rows; r0 += REF_BLOCK) {
        size_t sh[2] = {rows - r0 < REF_BLOCK ? rows - r0 : REF_BLOCK, D};
        cview xb = view_at(&c->in[0], c->at, 2, sh, r0 * D);
        ref_layer_norm(VIEW_FIX(xb), &w.v, &b.v, (double)LN_EPS, ro + r0 * D, rz + r0 * D, rs + r0, NULL);
    }
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
    (void)VIEW_FIX(x);
    size_t slices = n / (S * T);
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t s0 = 0; s0 < slices; ++s0) {
        size_t sh[3] = {1, S, T};
        cview xb = view_at(&c->in[0], c->at, 3, sh, s0 * S * T);
        ref_causal_softmax(VIEW_FIX(xb), ref + s0 * S * T);
    }
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
    void *scratch[3]; /* host arrays the arguments point to, freed with it */
} dnnl_run;

/* oneDNN's destination: a buffer of its own the size of the case's first
 * output, not the case's. Written by both sides, an output buffer carried
 * one side's cache state into the other's samples: after oneDNN's ordinary
 * stores the lines were dirty in cache when our streaming stores came
 * (measure() has the figures). */
static void *dnnl_own_dst(const bench_case *c) {
    buf_t b = buf_new(c->out[0].bytes);
    return b.host;
}

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

/* The primitive from op_desc, ready to run (heap), or NULL. */
static void *dnnl_prepare(const void *op_desc, const dnnl_run *proto) {
    dnnl_primitive_desc_t pd;
    dnnl_run *r = malloc(sizeof *r);
    *r = *proto;
    if (dnnl_primitive_desc_create(&pd, op_desc, NULL, g_eng, NULL) != dnnl_success) goto fail;
    dnnl_status_t st = dnnl_primitive_create(&r->prim, pd);
    dnnl_primitive_desc_destroy(pd);
    if (st == dnnl_success) return r;
fail:
    for (int k = 0; k < r->nargs; ++k) dnnl_memory_destroy(r->args[k].memory);
    free(r->scratch[2]); /* the destination (dnnl_own_dst); the callers free their others */
    free(r);
    return NULL;
}
static void dnnl_release(void *p) {
    dnnl_run *r = p;
    dnnl_primitive_destroy(r->prim);
    for (int k = 0; k < r->nargs; ++k) dnnl_memory_destroy(r->args[k].memory);
    for (int k = 0; k < 3; ++k) free(r->scratch[k]);
    free(r);
}

static void dims_of(const bench_case *c, dnnl_dims_t d) {
    for (size_t k = 0; k < c->ndim; ++k) d[k] = (dnnl_dim_t)c->shape[k];
}

/* Eltwise (logistic or swish) from in[0] to a destination of its own. */
static void *onednn_act(bench_case *c) {
    dnnl_dims_t d;
    dims_of(c, d);
    dnnl_memory_desc_t md;
    dnnl_memory_desc_init_by_tag(&md, (int)c->ndim, d, dnnl_dt(c->at), c->ndim == 2 ? dnnl_ab : dnnl_abc);
    dnnl_eltwise_desc_t ed;
    if (dnnl_eltwise_forward_desc_init(&ed, dnnl_forward_inference, c->aux[0] == 1.0 ? dnnl_eltwise_swish
                                                                                       : dnnl_eltwise_logistic,
                                       &md, 1.0f, 0.0f) != dnnl_success)
        return NULL;
    void *dst = dnnl_own_dst(c);
    dnnl_run r = {NULL, 2, {{DNNL_ARG_SRC, dnnl_mem(&md, c->in[0].host)}, {DNNL_ARG_DST, dnnl_mem(&md, dst)}},
                  {NULL, NULL, dst}};
    return dnnl_prepare(&ed, &r);
}

/* Softmax over the last axis (no mask) from in[0] to a destination of its own. */
static void *onednn_softmax(bench_case *c) {
    dnnl_dims_t d;
    dims_of(c, d);
    dnnl_memory_desc_t md;
    dnnl_memory_desc_init_by_tag(&md, (int)c->ndim, d, dnnl_dt(c->at), dnnl_abc);
    dnnl_softmax_desc_t sd;
    if (dnnl_softmax_forward_desc_init(&sd, dnnl_forward_inference, &md, (int)c->ndim - 1) != dnnl_success)
        return NULL;
    void *dst = dnnl_own_dst(c);
    dnnl_run r = {NULL, 2, {{DNNL_ARG_SRC, dnnl_mem(&md, c->in[0].host)}, {DNNL_ARG_DST, dnnl_mem(&md, dst)}},
                  {NULL, NULL, dst}};
    return dnnl_prepare(&sd, &r);
}

/* Layer normalization with scale and shift (float32, oneDNN's rule),
 * writing dst and the mean and variance (training: the statistics are
 * outputs, as input_std_deviation is ours). */
static void *onednn_ln(bench_case *c) {
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
        return NULL;
    float *scale = malloc(2 * D * sizeof(float)), *shift = scale + D;
    float *mean = malloc(2 * rows * sizeof(float)), *var = mean + rows;
    for (size_t j = 0; j < D; ++j) {
        scale[j] = (float)tl_load(c->at, (char *)c->in[1].host + j * tl_dtype_size(c->at));
        shift[j] = (float)tl_load(c->at, (char *)c->in[2].host + j * tl_dtype_size(c->at));
    }
    void *dst = dnnl_own_dst(c);
    dnnl_run r = {NULL, 6,
                  {{DNNL_ARG_SRC, dnnl_mem(&md, c->in[0].host)},
                   {DNNL_ARG_DST, dnnl_mem(&md, dst)},
                   {DNNL_ARG_SCALE, dnnl_mem(&wmd, scale)},
                   {DNNL_ARG_SHIFT, dnnl_mem(&wmd, shift)},
                   {DNNL_ARG_MEAN, dnnl_mem(&smd, mean)},
                   {DNNL_ARG_VARIANCE, dnnl_mem(&smd, var)}},
                  {scale, mean, dst}};
    void *p = dnnl_prepare(&ld, &r);
    if (!p) free(scale), free(mean);
    return p;
}
#define ONEDNN_ACT onednn_act
#define ONEDNN_SOFTMAX onednn_softmax
#define ONEDNN_LN onednn_ln
#else
static void dnnl_call(void *p) { (void)p; }
static void dnnl_release(void *p) { (void)p; }
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

/* ------------------------------------------------------------------ paired rounds */
/* Each case runs in rounds; a round takes PER_ROUND samples of the case,
 * then of the copy of the same bytes with the same threads, then of the
 * oneDNN peer, and keeps the fastest of each; its ratios (copy time / case
 * time, oneDNN time / case time) are that round's. Both sides of a ratio so
 * see the same machine state (frequency, neighbours' load), and each its
 * own steady cache state: interleaved sample by sample, a side's time
 * included the other's footprint (its dirty lines, its reads of the shared
 * input), and the same build read causal_softmax bf16 at 0.82-0.85 ms
 * with oneDNN in the rounds and 0.59-0.62 ms without (bench/NOTES.md,
 * session 15). Rounds go on until the ratios' interquartile ranges are
 * within +-SPREAD of their medians (after at least g_min_rounds) or
 * g_time_cap seconds; a ratio whose range stays wider is reported as wide. */
#define PER_ROUND 3
#define MAX_ROUNDS 201
static int g_min_rounds = 9;
static double g_time_cap = 3.0;

typedef struct {
    int rounds, wide, dnnl_wide, has_dnnl;
    int preempted; /* rounds in which a kept sample had a thread preempted */
    double huge;   /* share of the case's and the copy's buffers in huge pages (--pages huge), or -1 */
    quart_t t, tcopy, of_copy, tdnnl, dnnl_ratio;
} result_t;

static quart_t quart_of(const double *x, int n) {
    double tmp[MAX_ROUNDS];
    memcpy(tmp, x, (size_t)n * sizeof *x);
    return quartiles(tmp, n);
}

/* PER_ROUND samples of one side back to back, and the fastest: its
 * fastest then follows a call of its own, not the other side's (whose
 * cache footprint, dirty lines included, would otherwise be charged to
 * it). Interference (another process, a preempted OpenMP thread) only adds
 * time: the fastest sample is the least disturbed one; *pre_out records
 * whether it was preempted. */
static double fastest_sample(call_fn f, void *arg, int calls, int *pre_out) {
    double best = 0.0;
    int best_pre = 0;
    for (int j = 0; j < PER_ROUND; ++j) {
        double t = sample(f, arg, calls);
        if (j == 0 || t < best) best = t, best_pre = g_preempted;
    }
    *pre_out |= best_pre;
    return best;
}

/* More than a quarter of the rounds preempted: the scheduler, not the code,
 * set those times (they come out in multiples of its time slice, and a
 * case and its copy can then read the same). */
static int busy(int preempted, int rounds) { return 4 * preempted > rounds; }

static result_t measure(bench_case *c, int use_onednn) {
    result_t R;
    memset(&R, 0, sizeof R);
    copy_state cp = copy_new(c->min_bytes);
    void *dn = use_onednn && c->onednn && g_dev == INFINI_DEVICE_CPU ? c->onednn(c) : NULL;
    R.huge = -1.0;
    if (g_dev == INFINI_DEVICE_CPU && g_huge_pages) {
        size_t want = buf_huge_bytes(&cp.src) + buf_huge_bytes(&cp.dst);
        for (int k = 0; k < 3; ++k) want += buf_huge_bytes(&c->in[k]) + buf_huge_bytes(&c->out[k]);
        if (dn) want += buf_huge_bytes(&c->out[0]); /* oneDNN's destination, of the same size (dnnl_own_dst) */
        double got = anon_huge_bytes();
        if (want && got >= 0) R.huge = got >= (double)want ? 1.0 : got / (double)want;
    }
    int nc = calls_per_sample(c->call, c), nk = calls_per_sample(copy_call, &cp);
    int nd = dn ? calls_per_sample(dnnl_call, dn) : 0;
    static double tc[MAX_ROUNDS], tk[MAX_ROUNDS], td[MAX_ROUNDS], rk[MAX_ROUNDS], rd[MAX_ROUNDS];
    double t0 = now_s();
    int n = 0;
    while (n < MAX_ROUNDS) {
        int pre = 0;
        tc[n] = fastest_sample(c->call, c, nc, &pre);
        tk[n] = fastest_sample(copy_call, &cp, nk, &pre);
        td[n] = dn ? fastest_sample(dnnl_call, dn, nd, &pre) : 0.0;
        R.preempted += pre;
        rk[n] = tk[n] / tc[n];
        rd[n] = td[n] / tc[n];
        ++n;
        if (n < g_min_rounds) continue;
        int wide = is_wide(quart_of(rk, n)) || (dn && is_wide(quart_of(rd, n))) || busy(R.preempted, n);
        if (!wide || now_s() - t0 > g_time_cap) break;
    }
    R.rounds = n;
    R.t = quart_of(tc, n);
    R.tcopy = quart_of(tk, n);
    R.of_copy = quart_of(rk, n);
    R.wide = is_wide(R.of_copy);
    if (dn) {
        R.has_dnnl = 1;
        R.tdnnl = quart_of(td, n);
        R.dnnl_ratio = quart_of(rd, n);
        R.dnnl_wide = is_wide(R.dnnl_ratio);
        dnnl_release(dn);
    }
    copy_free(&cp);
    return R;
}

/* ------------------------------------------------------------------ the previous run (--compare) */
/* Rows of an earlier --json file: the ratios each row had, to say which rows
 * moved by more than MOVED since. One JSON row per line (json_row). */
#define MOVED 0.10
typedef struct {
    char key[160];
    double of_copy, dnnl_ratio;
} prev_row;
static prev_row *g_prev;
static int g_nprev;

static void row_key(char *key, size_t n, const char *name, const char *set, int threads) {
    snprintf(key, n, "%s|%s|%d", name, set, threads);
}
static double json_num(const char *line, const char *field) {
    const char *p = strstr(line, field);
    return p ? strtod(p + strlen(field), NULL) : -1.0;
}
static void load_prev(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return; /* no earlier run: nothing to compare */
    char line[2048];
    while (fgets(line, sizeof line, f)) {
        char name[100], set[32];
        const char *p = strstr(line, "\"case\": \""), *q = strstr(line, "\"set\": \"");
        if (!p || !q || sscanf(p + 9, "%99[^\"]", name) != 1 || sscanf(q + 8, "%31[^\"]", set) != 1) continue;
        g_prev = realloc(g_prev, (size_t)(g_nprev + 1) * sizeof *g_prev);
        prev_row *r = &g_prev[g_nprev++];
        row_key(r->key, sizeof r->key, name, set, (int)json_num(line, "\"threads\": "));
        r->of_copy = json_num(line, "\"of_copy\": ");
        r->dnnl_ratio = json_num(line, "\"onednn_ratio\": ");
    }
    fclose(f);
}
/* Writes a note into buf when a ratio moved by more than MOVED; returns 1 then. */
static int moved_note(const char *name, const char *set, int threads, const result_t *R, char *buf, size_t n) {
    char key[160];
    row_key(key, sizeof key, name, set, threads);
    for (int i = 0; i < g_nprev; ++i) {
        if (strcmp(g_prev[i].key, key)) continue;
        double a = g_prev[i].of_copy, b = g_prev[i].dnnl_ratio;
        if (a > 0 && fabs(R->of_copy.med / a - 1) > MOVED) {
            snprintf(buf, n, "unstable: %.0f%% last run", 100 * a);
            return 1;
        }
        if (R->has_dnnl && b > 0 && fabs(R->dnnl_ratio.med / b - 1) > MOVED) {
            snprintf(buf, n, "unstable: oneDNN %.2fx last run", b);
            return 1;
        }
        return 0;
    }
    return 0;
}

/* ------------------------------------------------------------------ JSON records */
static FILE *g_json;
static int g_json_rows;
static void json_row(const bench_case *c, const char *set, const char *kind, int threads, const result_t *R) {
    if (!g_json) return;
    fprintf(g_json, "%s\n  {\"case\": \"%s\", \"set\": \"%s\", \"kind\": \"%s\", \"shape\": [", g_json_rows++ ? "," : "",
            c->name, set, kind);
    for (size_t d = 0; d < c->ndim; ++d) fprintf(g_json, "%s%zu", d ? ", " : "", c->shape[d]);
    double B = (double)c->min_bytes;
    fprintf(g_json,
            "], \"threads\": %d, \"bytes\": %zu, \"rounds\": %d, \"time_s\": %.9g, \"time_q1_s\": %.9g, "
            "\"time_q3_s\": %.9g, \"gbps\": %.4g, \"copy_gbps\": %.4g, \"of_copy\": %.4g, \"of_copy_q1\": %.4g, "
            "\"of_copy_q3\": %.4g, \"wide\": %s, \"preempted_rounds\": %d, \"huge_pages\": %.3g, \"onednn_time_s\": ",
            threads, c->min_bytes, R->rounds, R->t.med, R->t.q1, R->t.q3, B / R->t.med * 1e-9, B / R->tcopy.med * 1e-9,
            R->of_copy.med, R->of_copy.q1, R->of_copy.q3, R->wide || R->dnnl_wide ? "true" : "false", R->preempted,
            R->huge);
    if (R->has_dnnl)
        fprintf(g_json, "%.9g, \"onednn_ratio\": %.4g, \"onednn_ratio_q1\": %.4g, \"onednn_ratio_q3\": %.4g}",
                R->tdnnl.med, R->dnnl_ratio.med, R->dnnl_ratio.q1, R->dnnl_ratio.q3);
    else fprintf(g_json, "null, \"onednn_ratio\": null}");
}

/* ------------------------------------------------------------------ the table */
static int g_wide_rows, g_moved_rows, g_rows;

static void table_header(int use_onednn) {
    printf("| %-40s | %-8s | %-5s | %3s | %10s | %7s | %7s | %-22s |%s %6s | %5s | %s\n", "case", "set", "kind", "thr",
           "time", "GB/s", "copy", "of copy: median [IQR]", use_onednn ? " oneDNN/ours: median [IQR] |" : "",
           "rounds", "check", "note |");
    printf("|------------------------------------------|----------|-------|----:|-----------:|--------:|--------:|"
           "------------------------|%s-------:|------:|------|\n",
           use_onednn ? "---------------------------:|" : "");
}

static void table_row(const bench_case *c, const char *set, const char *kind, int th, const result_t *R, size_t bad,
                      int use_onednn) {
    char tbuf[32], oc[48], dn[64] = "", note[192] = "";
    if (c->micro) snprintf(tbuf, sizeof tbuf, "%.2f us", R->t.med * 1e6);
    else snprintf(tbuf, sizeof tbuf, "%.3f ms", R->t.med * 1e3);
    snprintf(oc, sizeof oc, "%5.1f%% [%.1f-%.1f]", 100 * R->of_copy.med, 100 * R->of_copy.q1, 100 * R->of_copy.q3);
    if (R->has_dnnl) {
        char t[48];
        snprintf(t, sizeof t, "%.2fx [%.2f-%.2f]", R->dnnl_ratio.med, R->dnnl_ratio.q1, R->dnnl_ratio.q3);
        snprintf(dn, sizeof dn, " %-26s |", t);
    } else if (use_onednn) {
        snprintf(dn, sizeof dn, " %-26s |", "-");
    }
    int pre = busy(R->preempted, R->rounds), wide = R->wide || R->dnnl_wide || pre;
    if (R->wide || R->dnnl_wide) snprintf(note, sizeof note, "wide spread (IQR beyond +-%.0f%%)", 100 * SPREAD);
    if (pre) {
        size_t l = strlen(note);
        snprintf(note + l, sizeof note - l, "%spreempted in %d of %d rounds (busy machine)", l ? "; " : "",
                 R->preempted, R->rounds);
    }
    if (R->huge >= 0 && R->huge < 0.9) { /* asked for, not granted (THP "never", or no free 2 MiB blocks) */
        size_t l = strlen(note);
        snprintf(note + l, sizeof note - l, "%sonly %.0f%% of the buffers in huge pages", l ? "; " : "", 100 * R->huge);
    }
    char mv[64];
    if (moved_note(c->name, set, th, R, mv, sizeof mv)) {
        ++g_moved_rows;
        size_t l = strlen(note);
        snprintf(note + l, sizeof note - l, "%s%s", l ? "; " : "", mv);
    }
    g_wide_rows += wide;
    ++g_rows;
    double B = (double)c->min_bytes;
    printf("| %-40s | %-8s | %-5s | %3d | %10s | %7.1f | %7.1f | %-22s |%s %6d | %5s | %s |\n", c->name, set, kind, th,
           tbuf, B / R->t.med * 1e-9, B / R->tcopy.med * 1e-9, oc, dn, R->rounds, bad ? "FAIL" : "ok", note);
    fflush(stdout);
}

/* One case: each working set (the listed shape; >= 4x the last-level cache,
 * the first dimension scaled up) at each thread count; verified against the
 * float64 reference at the largest thread count, before its rounds. */
static void run_case(bench_case *c, size_t llc, const int *threads, int nthreads, int sets, int use_onednn) {
    size_t shape0 = c->shape[0];
    int tmax = 0;
    for (int i = 0; i < nthreads; ++i) tmax = threads[i] > tmax ? threads[i] : tmax;
    for (int set = 0; set < 2; ++set) {
        if (!(sets & (1 << set)) || (set == 1 && c->micro)) continue; /* decode: its one row only */
        c->shape[0] = shape0;
        c->setup(c);
        if (set == 1) {
            if (llc == 0 || (c->min_bytes >= 4 * llc && (sets & 1))) { /* none, or the listed set is one */
                c->teardown(c);
                break;
            }
            if (c->min_bytes < 4 * llc) {
                size_t scale = (4 * llc + c->min_bytes - 1) / c->min_bytes;
                c->teardown(c);
                c->shape[0] = shape0 * scale;
                c->setup(c);
            }
        }
        const char *sname = set ? ">=4xLLC" : "listed";
        const char *kind = g_dev != INFINI_DEVICE_CPU ? "-" : !llc ? "?" : c->min_bytes > llc ? "DRAM" : "cache";
        /* The first library call of the process fixes its thread budget
         * (cpu/cpu.c: omp_get_max_threads() then): make it at the largest
         * count, so that every count of the list runs with the threads it
         * asks for (a list starting at 2 would cap a later 16 at 2). The
         * check against float64 runs on this call's output. */
        omp_set_num_threads(tmax);
        c->call(c);
        const size_t bad_tmax = c->verify(c);
        for (int i = 0; i < nthreads; ++i) {
            omp_set_num_threads(threads[i]);
            const size_t bad = threads[i] == tmax ? bad_tmax : 0;
            result_t R = measure(c, use_onednn);
            table_row(c, sname, kind, threads[i], &R, bad, use_onednn);
            json_row(c, sname, kind, threads[i], &R);
        }
        omp_set_num_threads(tmax);
        c->teardown(c);
    }
    c->shape[0] = shape0;
}

static void usage(void) {
    fprintf(stderr, "usage: infiniop-bench [--device cpu|nvidia] [--case SUBSTRING] [--no-onednn] [--sweep]\n"
                    "                      [--threads N,M,...] [--sets listed|dram|both] [--llc-mib M]\n"
                    "                      [--time-cap S] [--reps MIN_ROUNDS] [--copy-mib M] [--json FILE]\n"
                    "                      [--compare PREVIOUS.json] [--copy stream|memcpy] [--pages huge|4k]\n");
    exit(2);
}

int main(int argc, char **argv) {
    size_t copy_mib = 1024, llc_mib = 0;
    const char *filter = NULL, *json_path = NULL, *sets_arg = NULL, *compare = NULL;
    int use_onednn = 1, sweep = 0, threads[64], nthreads = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--device") && i + 1 < argc) {
            ++i;
            if (!strcmp(argv[i], "cpu")) g_dev = INFINI_DEVICE_CPU;
            else if (!strcmp(argv[i], "nvidia")) g_dev = INFINI_DEVICE_NVIDIA;
            else usage();
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            g_min_rounds = atoi(argv[++i]);
            if (g_min_rounds < 1 || g_min_rounds > MAX_ROUNDS) usage();
        } else if (!strcmp(argv[i], "--time-cap") && i + 1 < argc) {
            g_time_cap = atof(argv[++i]);
            if (!(g_time_cap >= 0)) usage();
        } else if (!strcmp(argv[i], "--copy-mib") && i + 1 < argc) {
            copy_mib = (size_t)atol(argv[++i]);
            if (!copy_mib) usage();
        } else if (!strcmp(argv[i], "--llc-mib") && i + 1 < argc) {
            llc_mib = (size_t)atol(argv[++i]);
            if (!llc_mib) usage();
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            for (char *p = argv[++i]; *p;) {
                char *end;
                long v = strtol(p, &end, 10);
                if (end == p || v < 1 || v > 4096 || nthreads == 64) usage();
                threads[nthreads++] = (int)v;
                p = *end == ',' ? end + 1 : end;
                if (*end && *end != ',') usage();
            }
        } else if (!strcmp(argv[i], "--sets") && i + 1 < argc) {
            sets_arg = argv[++i];
            if (strcmp(sets_arg, "listed") && strcmp(sets_arg, "dram") && strcmp(sets_arg, "both")) usage();
        } else if (!strcmp(argv[i], "--case") && i + 1 < argc) {
            filter = argv[++i];
        } else if (!strcmp(argv[i], "--sweep")) {
            sweep = 1;
        } else if (!strcmp(argv[i], "--json") && i + 1 < argc) {
            json_path = argv[++i];
        } else if (!strcmp(argv[i], "--compare") && i + 1 < argc) {
            compare = argv[++i];
        } else if (!strcmp(argv[i], "--copy") && i + 1 < argc) {
            ++i;
            if (!strcmp(argv[i], "memcpy")) g_copy_stream = 0;
            else if (!strcmp(argv[i], "stream")) g_copy_stream = 1;
            else usage();
        } else if (!strcmp(argv[i], "--pages") && i + 1 < argc) {
            ++i;
            if (!strcmp(argv[i], "huge")) g_huge_pages = 1;
            else if (!strcmp(argv[i], "4k")) g_huge_pages = 0;
            else usage();
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
        sweep = 0;
        sets_arg = "listed";
        nthreads = 0;
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
    int nmax = omp_get_max_threads();
    if (!nthreads) {
        if (sweep)
            for (int t = 1; t <= nmax && nthreads < 64; ++t) threads[nthreads++] = t;
        else threads[nthreads++] = nmax;
    }
    int sets = !sets_arg ? (sweep ? 3 : 1) : !strcmp(sets_arg, "listed") ? 1 : !strcmp(sets_arg, "dram") ? 2 : 3;
    size_t llc = g_dev != INFINI_DEVICE_CPU ? 0 : llc_mib ? llc_mib << 20 : llc_bytes();
    if (compare) load_prev(compare);

    printf("infiniop %s, CPU kernels: %s\n", infiniopGetVersion(), infiniopGetCpuIsa());
    if (json_path && !(g_json = fopen(json_path, "w"))) {
        fprintf(stderr, "cannot write %s\n", json_path);
        return 2;
    }
    if (g_json) fprintf(g_json, "[");
    printf("device: %s", g_dev == INFINI_DEVICE_CPU ? "cpu" : "nvidia");
    if (g_dev == INFINI_DEVICE_CPU) {
        printf(", threads");
        for (int i = 0; i < nthreads; ++i) printf("%s%d", i ? "," : " ", threads[i]);
        printf(" (of %d), last-level cache %zu KiB%s", nmax, llc >> 10, llc_mib ? " (--llc-mib)" : "");
        double dram = copy_bandwidth(copy_mib << 20);
        printf("; DRAM copy of %zu MiB at %d threads, for reference: %.1f GB/s", copy_mib, nmax, dram * 1e-9);
        char thp[96] = "?";
        FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
        if (f) {
            if (!fgets(thp, sizeof thp, f)) strcpy(thp, "?");
            thp[strcspn(thp, "\n")] = 0;
            fclose(f);
        }
        printf("\npages: %s (transparent huge pages: %s)",
               g_huge_pages ? "huge (madvise) for buffers of 2 MiB or more" : "4 KiB (--pages 4k)", thp);
    }
    printf("\npaired rounds: each case alternating with a copy (%s) of the same bytes and threads%s, 3 samples of each "
           "side in a row; ratios per round, "
           "median [interquartile range] over at least %d rounds, until the range is within +-%.0f%% or %.1f s\n"
           "kind: DRAM when the set's bytes exceed the last-level cache, else cache (its copy is of the same kind)\n\n",
           g_copy_stream ? "streaming stores above 8 MiB" : "memcpy", use_onednn ? " and with oneDNN" : "", g_min_rounds, 100 * SPREAD, g_time_cap);
    table_header(use_onednn);
    for (size_t k = 0; k < NCASES; ++k) {
        bench_case *c = &g_cases[k];
        if (filter && !strstr(c->name, filter)) continue;
        if (sweep && c->micro) continue; /* the decode case is no working-set or thread question */
        run_case(c, llc, threads, nthreads, sets, use_onednn);
    }
    if (g_json) fprintf(g_json, "\n]\n"), fclose(g_json);
    infiniopDestroyHandle(g_handle);
    printf("\n%d rows; %d with a wide spread or preempted", g_rows, g_wide_rows);
    if (compare)
        printf("; %d whose ratio moved more than %.0f%% since %s%s", g_moved_rows, 100 * MOVED, compare,
               g_nprev ? "" : " (no earlier run there)");
    printf("\n");
    free(g_prev);
    if (g_bad_total) {
        printf("verification FAILED: %zu elements out of tolerance\n", g_bad_total);
        return 1;
    }
    printf("every output element verified against the float64 reference\n");
    return 0;
}
