/*
 * bench/experiments/causal_read_pattern.c - the memory traffic of
 * causal_softmax with no arithmetic, against the bench's copy of the same
 * bytes (bench/NOTES.md "Session 19: CPU").
 *
 * x and y are B x S x T of es-byte elements; row i of a slice reads its
 * first i + T - S + 1 elements. Each round times the copy (min_bytes / 2
 * each way, 64-byte streaming stores, as infiniop-bench's) and then one
 * pattern, on 2 threads in tasks of 64 rows (the library's grain for this
 * shape); ratios are per round, copy time / pattern time:
 *
 *   replica      per row: read the visible part (64-byte loads, prefetcht1
 *                16 KiB ahead as sm_sum), then stream the whole y row
 *   contiguous   the same bytes without the gaps: x's first visible-bytes
 *                read in order, y streamed, two bytes written per byte read
 *
 * and read-only times (ms): causal (the visible parts), half (every row's
 * first half: the same bytes), contiguous (those bytes without gaps),
 * full (every row whole, twice the bytes); then the read rate (GB/s) of
 * blocks of b bytes every 2 b, for b = 512 ... 8192 (the same 8 MiB):
 * a cost per block, not per byte, shows as a rate that grows with b.
 *
 *   gcc -O2 -mavx512f -fopenmp bench/experiments/causal_read_pattern.c -o crp
 *   ./crp [es=2] [B=8] [S=1024] [T=1024] [rounds=15]
 */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static size_t B = 8, S = 1024, T = 1024, es = 2;

static char *alloc(size_t n) {
    n = (n + (2u << 20) - 1) / (2u << 20) * (2u << 20);
    char *p = aligned_alloc(2u << 20, n);
    if (!p) exit(1);
    madvise(p, n, MADV_HUGEPAGE);
    memset(p, 1, n);
    return p;
}

static size_t visible(size_t r) { return (r % S + T - S + 1) * es; }

static void sink(__m512i a) {
    if (_mm512_reduce_add_epi32(a) == 12345) printf(".");
}

static double copy(char *d, const char *s, size_t n) {
    double t0 = omp_get_wtime();
#pragma omp parallel num_threads(2)
    {
        size_t c = n / 2 / 64 * 64, lo = (size_t)omp_get_thread_num() * c;
        for (size_t i = lo; i < lo + c; i += 64) _mm512_stream_si512((void *)(d + i), _mm512_load_si512(s + i));
        _mm_sfence();
    }
    return omp_get_wtime() - t0;
}

static double replica(const char *x, char *y) {
    size_t rb = T * es, ntask = B * S / 64;
    double t0 = omp_get_wtime();
#pragma omp parallel for schedule(dynamic, 1) num_threads(2)
    for (size_t k = 0; k < ntask; ++k) {
        __m512i acc = _mm512_setzero_si512();
        for (size_t r = k * 64; r < k * 64 + 64; ++r) {
            const char *xr = x + r * rb;
            char *yr = y + r * rb;
            size_t n = visible(r), j = 0;
            for (; j + 128 <= n; j += 128) {
                _mm_prefetch(xr + j + 16384, _MM_HINT_T1);
                _mm_prefetch(xr + j + 16384 + 64, _MM_HINT_T1);
                acc = _mm512_add_epi32(acc, _mm512_loadu_si512(xr + j));
                acc = _mm512_add_epi32(acc, _mm512_loadu_si512(xr + j + 64));
            }
            for (; j < n; j += 64) acc = _mm512_add_epi32(acc, _mm512_loadu_si512(xr + j));
            for (size_t q = 0; q < rb; q += 64) _mm512_stream_si512((void *)(yr + q), acc);
        }
        _mm_sfence();
        sink(acc);
    }
    return omp_get_wtime() - t0;
}

static double contiguous(const char *x, char *y, size_t rbytes) {
    double t0 = omp_get_wtime();
#pragma omp parallel num_threads(2)
    {
        size_t t = (size_t)omp_get_thread_num(), half = rbytes / 2 / 64 * 64;
        const char *xp = x + t * half;
        char *yp = y + 2 * t * half;
        __m512i acc = _mm512_setzero_si512();
        for (size_t i = 0; i < half; i += 64) {
            acc = _mm512_add_epi32(acc, _mm512_loadu_si512(xp + i));
            _mm512_stream_si512((void *)(yp + 2 * i), acc);
            _mm512_stream_si512((void *)(yp + 2 * i + 64), acc);
        }
        _mm_sfence();
        sink(acc);
    }
    return omp_get_wtime() - t0;
}

/* kind 0 causal, 1 half rows, 2 contiguous (the half rows' bytes), 3 full */
static double reads(const char *x, int kind) {
    size_t rb = T * es, ntask = B * S / 64;
    double t0 = omp_get_wtime();
#pragma omp parallel for schedule(dynamic, 1) num_threads(2)
    for (size_t k = 0; k < ntask; ++k) {
        __m512i acc = _mm512_setzero_si512();
        for (size_t r = k * 64; r < k * 64 + 64; ++r) {
            const char *xr = x + r * rb;
            size_t n = kind == 0 ? visible(r) : kind == 3 ? rb : rb / 2;
            if (kind == 2) xr = x + r * (rb / 2);
            for (size_t j = 0; j < n; j += 64) acc = _mm512_add_epi32(acc, _mm512_loadu_si512(xr + j));
        }
        sink(acc);
    }
    return omp_get_wtime() - t0;
}

/* x's first 16 MiB read in blocks of b bytes every 2 b bytes */
static double blocks(const char *x, size_t b) {
    size_t nb = ((size_t)8 << 20) / b;
    double t0 = omp_get_wtime();
#pragma omp parallel num_threads(2)
    {
        size_t t = (size_t)omp_get_thread_num();
        __m512i acc = _mm512_setzero_si512();
        for (size_t k = t * nb / 2; k < (t + 1) * nb / 2; ++k)
            for (size_t j = 0; j < b; j += 64) acc = _mm512_add_epi32(acc, _mm512_loadu_si512(x + 2 * b * k + j));
        sink(acc);
    }
    return omp_get_wtime() - t0;
}

static int cmp(const void *a, const void *b) {
    double u = *(const double *)a, v = *(const double *)b;
    return u < v ? -1 : u > v;
}
static void q3(double *v, int n, double *lo, double *med, double *hi) {
    qsort(v, (size_t)n, sizeof *v, cmp);
    *lo = v[n / 4], *med = v[n / 2], *hi = v[(3 * n) / 4];
}

int main(int argc, char **argv) {
    int rounds = 15;
    if (argc > 1) es = (size_t)atoi(argv[1]);
    if (argc > 2) B = (size_t)atoi(argv[2]);
    if (argc > 3) S = (size_t)atoi(argv[3]);
    if (argc > 4) T = (size_t)atoi(argv[4]);
    if (argc > 5) rounds = atoi(argv[5]);
    if (rounds < 4 || rounds > 1000 || S > T || (B * S) % 64 || (T * es) % 64) return 2;
    size_t tot = B * S * T * es, vis = 0;
    for (size_t r = 0; r < B * S; ++r) vis += visible(r);
    size_t cb = (vis + tot) / 2;
    char *x = alloc(tot), *y = alloc(tot), *cs = alloc(cb), *cd = alloc(cb);
    double *q = malloc(sizeof(double) * (size_t)rounds), *t = malloc(sizeof(double) * (size_t)rounds), lo, md, hi;
    printf("es %zu, %zux%zux%zu: visible %.1f MiB read, %.1f MiB written; copy %.1f MiB each way\n", es, B, S, T,
           vis / 1048576.0, tot / 1048576.0, cb / 1048576.0);
    for (int m = 0; m < 2; ++m) {
        for (int i = 0; i < rounds; ++i) {
            double c = copy(cd, cs, cb);
            t[i] = m == 0 ? replica(x, y) : contiguous(x, y, vis);
            q[i] = c / t[i];
        }
        q3(q, rounds, &lo, &md, &hi);
        double tl, tm, th;
        q3(t, rounds, &tl, &tm, &th);
        printf("%-10s %.3f ms, %.1f%% [%.1f-%.1f] of copy\n", m == 0 ? "replica" : "contiguous", tm * 1e3, md * 100,
               lo * 100, hi * 100);
    }
    const char *nm[] = {"causal", "half", "contiguous", "full"};
    printf("read only:");
    for (int kind = 0; kind < 4; ++kind) {
        for (int i = 0; i < rounds; ++i) t[i] = reads(x, kind);
        q3(t, rounds, &lo, &md, &hi);
        printf(" %s %.3f ms%s", nm[kind], md * 1e3, kind < 3 ? "," : "\n");
    }
    if (tot >= ((size_t)16 << 20)) {
        printf("blocks of b every 2b, GB/s:");
        for (size_t b = 512; b <= 8192; b *= 2) {
            for (int i = 0; i < rounds; ++i) t[i] = blocks(x, b);
            q3(t, rounds, &lo, &md, &hi);
            printf(" %zu: %.1f%s", b, (8 << 20) / md / 1e9, b < 8192 ? "," : "\n");
        }
    }
    return 0;
}
