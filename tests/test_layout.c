/*
 * test_layout.c - core/layout.h's integer arithmetic, which the kernels of
 * both backends rely on (label cpu): infiniop_div32 (division by a fixed
 * divisor as a multiply-high and a shift) against the C division for
 * divisors of every bit length, powers of two and their neighbours, and
 * numerators at the quotient's steps, the ends of the 32-bit range and
 * random; and the row offsets of a merged row layout (infiniop_row_offset,
 * and infiniop_row_offset32, the GPU kernels' form) against the offsets of
 * the unmerged row dimensions.
 */
#include "core/layout.h"

#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd32(void) { /* xorshift64* */
    g_rng ^= g_rng >> 12, g_rng ^= g_rng << 25, g_rng ^= g_rng >> 27;
    return (uint32_t)((g_rng * 0x2545f4914f6cdd1dull) >> 32);
}

static void check_div(uint32_t n) {
    const infiniopDiv32 d = infiniop_div32_init(n);
    const uint32_t ends[] = {0u, 1u, 2u, n - 1u, n, n + 1u, 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu};
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; ++i) {
        const uint32_t u = ends[i];
        CHECK(infiniop_div32(u, d) == u / n, "%u / %u: %u, expected %u", u, n, infiniop_div32(u, d), u / n);
    }
    /* at the quotient's steps (q n - 1, q n) for quotients spread over the range */
    for (int k = 0; k < 64; ++k) {
        const uint64_t q = k < 32 ? (uint64_t)k + 1 : 1 + (uint64_t)rnd32() % (0xffffffffull / n);
        const uint64_t u = q * n;
        if (u > 0xffffffffull) continue;
        CHECK(infiniop_div32((uint32_t)u, d) == q, "%llu / %u: %u, expected %llu", (unsigned long long)u, n,
              infiniop_div32((uint32_t)u, d), (unsigned long long)q);
        CHECK(infiniop_div32((uint32_t)(u - 1), d) == q - 1, "%llu / %u: %u, expected %llu",
              (unsigned long long)(u - 1), n, infiniop_div32((uint32_t)(u - 1), d), (unsigned long long)(q - 1));
    }
    for (int k = 0; k < 64; ++k) {
        const uint32_t u = rnd32();
        CHECK(infiniop_div32(u, d) == u / n, "%u / %u: %u, expected %u", u, n, infiniop_div32(u, d), u / n);
    }
}

static void test_div32(void) {
    for (uint32_t n = 1; n <= 4096; ++n) check_div(n);
    for (int b = 12; b < 32; ++b) { /* powers of two, their neighbours, and random divisors of each length */
        const uint32_t p = 1u << b;
        check_div(p - 1), check_div(p), check_div(p + 1);
        for (int k = 0; k < 32; ++k) check_div(p | (rnd32() & (p - 1)));
    }
    check_div(0xffffffffu), check_div(0xfffffffeu), check_div(0x80000001u);
}

/* A row layout of shape (a, b, c) x N whose tensor 0 is permuted (strides
 * of (b, a, c) order) and tensor 1 has padded rows: merged into fewer
 * dimensions where the strides allow, its offsets must be those of the
 * plain index arithmetic. */
static void test_row_offsets(void) {
    static const size_t shapes[][3] = {{2, 3, 5}, {7, 1, 13}, {197, 12, 1}, {4, 6, 8}, {1, 1, 9}, {3, 300, 7}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
        const size_t a = shapes[s][0], b = shapes[s][1], c = shapes[s][2], N = 16;
        const size_t shape[3] = {a, b, c};
        const ptrdiff_t st0[3] = {(ptrdiff_t)(c * N), (ptrdiff_t)(a * c * N), (ptrdiff_t)N};  /* (b, a, c) storage */
        const ptrdiff_t st1[3] = {(ptrdiff_t)(b * c * (N + 3)), (ptrdiff_t)(c * (N + 3)), (ptrdiff_t)(N + 3)};
        const ptrdiff_t *strides[2] = {st0, st1};
        const ptrdiff_t col[2] = {1, 1};
        infiniopRowLayout L;
        infiniStatus_t st = infiniop_row_layout_init(&L, "test", 3, shape, N, 2, strides, col);
        CHECK(st == INFINI_STATUS_SUCCESS, "layout init: %d", (int)st);
        CHECK(L.nrows == a * b * c, "nrows %zu", L.nrows);
        for (size_t i = 0, r = 0; i < a; ++i)
            for (size_t j = 0; j < b; ++j)
                for (size_t k = 0; k < c; ++k, ++r)
                    for (int t = 0; t < 2; ++t) {
                        const ptrdiff_t *sv = strides[t];
                        const ptrdiff_t want = (ptrdiff_t)i * sv[0] + (ptrdiff_t)j * sv[1] + (ptrdiff_t)k * sv[2];
                        CHECK(infiniop_row_offset(&L, t, r) == want, "shape %zux%zux%zu row %zu tensor %d: %td, expected %td",
                              a, b, c, r, t, infiniop_row_offset(&L, t, r), want);
                        /* the kernels' form: the merged dimensions' quotients by infiniop_div32 */
                        const ptrdiff_t off = infiniop_row_offset32(&L, t, (uint32_t)r);
                        CHECK(off == want, "shape %zux%zux%zu row %zu tensor %d (div32): %td, expected %td", a, b, c, r, t,
                              off, want);
                    }
    }
}

int main(void) {
    test_div32();
    test_row_offsets();
    printf("test_layout: %ld checks, %ld failed\n", g_checks, g_fail);
    return g_fail ? 1 : 0;
}
