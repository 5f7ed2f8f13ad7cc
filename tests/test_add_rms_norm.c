/*
 * test_add_rms_norm.c - randomised tests of infiniopAddRMSNorm against the
 * float64 reference (common/reference.c).
 *
 * Tolerances (SPEC 2: float32 arithmetic, one rounding per output):
 *  - residual_out = round(a + b): float32 addition is correctly rounded, so
 *    F32 must be within 0.5 float32 ulp of the exact sum (i.e. exactly the
 *    float32 sum); F16/BF16 within 1 ulp of their type (tl_close).
 *  - y: the float32 sum of D squares has a relative error that grows with
 *    D; for any summation order in practice (sequential, blocked, tree) it
 *    stays below about sqrt(D) eps32 (random-walk growth), and rsqrt halves
 *    it. The multiplications r * inv * w add about 3 roundings, rsqrt
 *    (approximate on some devices) 2 ulp. Hence
 *        |y - ref| <= (16 + 2 sqrt(D)) eps32 |ref|      (F32 output),
 *    and for F16/BF16 outputs that plus 1 ulp of the output type. The
 *    rounding of r itself (F32 inputs) is within the 16 eps32.
 *  - NaN anywhere in a row makes its y NaN; +-inf in a row gives NaN where
 *    r is infinite and 0 elsewhere (the reference's r * 0).
 */
#include "reference.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    infiniDtype_t at, wt;
} dpair;
static const dpair k_pairs[] = {
    {INFINI_DTYPE_F16, INFINI_DTYPE_F16},   {INFINI_DTYPE_F16, INFINI_DTYPE_BF16},
    {INFINI_DTYPE_F16, INFINI_DTYPE_F32},   {INFINI_DTYPE_BF16, INFINI_DTYPE_BF16},
    {INFINI_DTYPE_BF16, INFINI_DTYPE_F16},  {INFINI_DTYPE_BF16, INFINI_DTYPE_F32},
    {INFINI_DTYPE_F32, INFINI_DTYPE_F32},
};
#define NPAIRS (sizeof k_pairs / sizeof k_pairs[0])

enum { AL_NONE, AL_Y_A, AL_R_B, AL_Y_A_R_B, AL_Y_B_R_A, AL_A_B, AL_COUNT };
static const char *k_alias_names[] = {"", " y=a", " residual=b", " y=a,residual=b", " y=b,residual=a", " a=b"};

typedef struct {
    dpair p;
    size_t ndim, shape[TL_MAXDIM];
    ptrdiff_t st[4][TL_MAXDIM]; /* y, residual_out, a, b */
    ptrdiff_t wstride;
    int null_strides;
    int alias;
    double eps, lo, hi;
    int special; /* 0 none, 1 NaN in one row, 2 inf in one row */
    size_t pad[5];
} rcase;

static double g_K;
static double tol_res(size_t i, double ref, void *ctx) {
    (void)i; (void)ctx;
    return 0.5 * tl_ulp(INFINI_DTYPE_F32, ref);
}
static double tol_y(size_t i, double ref, void *ctx) {
    (void)i; (void)ctx;
    return g_K * TL_EPS32 * fabs(ref) + 1e-37;
}

static void run_case(const rcase *c, tl_rng *rng) {
    char b0[64], b1[64], b2[64], b3[64], b4[64];
    size_t D = c->ndim ? c->shape[c->ndim - 1] : 0;
    tl_case_begin("add_rms_norm a=%s w=%s shape %s strides y%s r%s a%s b%s w(%td) eps %g%s%s%s",
                  tl_dtype_name(c->p.at), tl_dtype_name(c->p.wt), tl_fmt_dims(b0, sizeof b0, c->ndim, c->shape),
                  c->null_strides ? "(NULL)" : tl_fmt_strides(b1, sizeof b1, c->ndim, c->st[0]),
                  tl_fmt_strides(b2, sizeof b2, c->ndim, c->st[1]), tl_fmt_strides(b3, sizeof b3, c->ndim, c->st[2]),
                  tl_fmt_strides(b4, sizeof b4, c->ndim, c->st[3]), c->wstride, c->eps, k_alias_names[c->alias],
                  c->special == 1 ? " NaN-row" : c->special == 2 ? " inf-row" : c->special == 3 ? " weight-NaN/inf" : "",
                  c->lo < -100 ? " large-values" : "");
    tl_tensor T[5]; /* y, residual, a, b, w */
    memset(T, 0, sizeof T);
    tl_tensor *y = &T[0], *res = &T[1], *a = &T[2], *b = &T[3], *w = &T[4];
    int own[5] = {1, 1, 1, 1, 1};
    switch (c->alias) {
    case AL_Y_A: own[0] = 0; y = a; break;
    case AL_R_B: own[1] = 0; res = b; break;
    case AL_Y_A_R_B: own[0] = own[1] = 0; y = a; res = b; break;
    case AL_Y_B_R_A: own[0] = own[1] = 0; y = b; res = a; break;
    case AL_A_B: own[3] = 0; b = a; break;
    }
    int err = 0;
    for (int k = 0; k < 4; k++)
        if (own[k]) err |= tl_tensor_init_pad(&T[k], c->p.at, c->ndim, c->shape, c->null_strides ? NULL : c->st[k], c->pad[k]);
    size_t wshape[1] = {D};
    ptrdiff_t wst[1] = {c->wstride};
    err |= tl_tensor_init_pad(w, c->p.wt, 1, wshape, wst, c->pad[4]);
    if (err) goto done;
    tl_tensor_fill_random(a, rng, c->lo, c->hi);
    if (b != a) tl_tensor_fill_random(b, rng, c->lo, c->hi);
    tl_tensor_fill_random(w, rng, -2, 2);
    if (c->special == 3 && D) { /* a NaN or an infinity in the weight */
        size_t i = tl_rng_below(rng, D);
        tl_tensor_set(w, i, tl_rng_chance(rng, 0.5) ? NAN : (tl_rng_chance(rng, 0.5) ? INFINITY : -INFINITY));
    } else if (c->special && a->numel) {
        size_t i = tl_rng_below(rng, a->numel);
        tl_tensor_set(a, i, c->special == 1 ? NAN : (tl_rng_chance(rng, 0.5) ? INFINITY : -INFINITY));
    }
    if (own[0]) tl_tensor_poison(y);
    if (own[1]) tl_tensor_poison(res);

    struct InfiniopDescriptor *desc = NULL;
    if (!TL_OK(infiniopCreateAddRMSNormDescriptor(tl_handle, &desc, y->desc, res->desc, a->desc, b->desc, w->desc,
                                                  (float)c->eps)))
        goto done;
    size_t ws = 1;
    TL_OK(infiniopGetAddRMSNormWorkspaceSize(desc, &ws));
    TL_CHECK(ws == 0, "workspace size %zu, SPEC target is 0", ws);
    for (int k = 0; k < 5; k++) if (own[k]) tl_tensor_upload(&T[k]);
    if (TL_OK(infiniopAddRMSNorm(desc, NULL, 0, tl_tensor_ptr(y), tl_tensor_ptr(res), tl_tensor_ptr(a),
                                 tl_tensor_ptr(b), tl_tensor_ptr(w), NULL))) {
        tl_sync();
        for (int k = 0; k < 5; k++) if (own[k]) tl_tensor_download(&T[k]);
        /* reference from the snapshots taken before the call */
        ref_view_t av = {(unsigned char *)a->snap + TL_GUARD_BYTES + (size_t)(-a->min_off) * a->esize, c->p.at,
                         a->ndim, a->shape, a->strides};
        ref_view_t bv = {(unsigned char *)b->snap + TL_GUARD_BYTES + (size_t)(-b->min_off) * b->esize, c->p.at,
                         b->ndim, b->shape, b->strides};
        ref_view_t wv = {(unsigned char *)w->snap + TL_GUARD_BYTES + (size_t)(-w->min_off) * w->esize, c->p.wt, 1,
                         w->shape, w->strides};
        size_t n = a->numel ? a->numel : 1;
        double *ry = malloc(n * sizeof(double)), *rr = malloc(n * sizeof(double));
        if (a->numel) ref_add_rms_norm(&av, &bv, &wv, (double)(float)c->eps, ry, rr);
        g_K = 16.0 + 2.0 * sqrt((double)D);
        /* y and residual_out are written; every other tensor must be
         * untouched (an input aliased by an output is checked as that output) */
        static const char *names[] = {"y", "residual_out", "a", "b", "weight"};
        for (int k = 0; k < 5; k++)
            if (own[k]) tl_tensor_check_untouched(&T[k], names[k], &T[k] == y || &T[k] == res);
        tl_check_close(res, "residual_out", rr, tol_res, NULL);
        tl_check_close(y, "y", ry, tol_y, NULL);
        free(ry);
        free(rr);
    }
    TL_OK(infiniopDestroyAddRMSNormDescriptor(desc));
done:
    for (int k = 0; k < 5; k++) if (own[k]) tl_tensor_free(&T[k]);
    tl_case_end();
}

static void make_layouts(tl_rng *r, rcase *c, int layouts) {
    unsigned out_flags = TL_L_PAD | TL_L_PERMUTE_LEAD | TL_L_NEG_LEAD;
    unsigned in_flags = out_flags | TL_L_ZERO_LEAD;
    for (int k = 0; k < 4; k++) {
        if (!layouts) tl_contiguous_strides(c->ndim, c->shape, c->st[k]);
        else tl_make_strides(r, c->ndim, c->shape, k < 2 ? out_flags : in_flags, c->st[k]);
    }
    /* aliased tensors share one layout */
    if (c->alias == AL_Y_A || c->alias == AL_Y_A_R_B) memcpy(c->st[0], c->st[2], sizeof c->st[0]);
    if (c->alias == AL_R_B || c->alias == AL_Y_A_R_B) memcpy(c->st[1], c->st[3], sizeof c->st[0]);
    if (c->alias == AL_Y_B_R_A) {
        memcpy(c->st[0], c->st[3], sizeof c->st[0]);
        memcpy(c->st[1], c->st[2], sizeof c->st[0]);
    }
    if (c->alias == AL_A_B) memcpy(c->st[3], c->st[2], sizeof c->st[0]);
    /* an input aliased by an output must not have stride 0 (the output
     * would overlap itself) */
    if (c->alias != AL_NONE && c->alias != AL_A_B)
        for (int k = 0; k < 4; k++)
            for (size_t d = 0; d < c->ndim; d++)
                if (c->st[k][d] == 0) tl_contiguous_strides(c->ndim, c->shape, c->st[k]);
    static const ptrdiff_t wstrides[] = {1, 1, 1, 2, 3, -1, -2};
    c->wstride = layouts ? wstrides[tl_rng_below(r, 7)] : 1;
    if (layouts && c->shape[c->ndim - 1] > 1 && tl_rng_chance(r, 0.05)) c->wstride = 0;
}

/* CPU: a row's outputs do not depend on the call it is in (each
 * instruction set is deterministic for itself, docs/PERFORMANCE.md): a
 * streaming call (outputs past the 8 MiB streaming threshold, D a multiple
 * of every pass's vector step: the rows skewed by one) against the same
 * rows one call each, bit for bit, for every dtype pair. */
static void row_invariance(tl_rng *rng) {
    if (tl_device != INFINI_DEVICE_CPU || tl_quick) return;
    const size_t R = 1100, D = 2048; /* 2-byte rows: 18 MB of traffic; float32: 36 MB */
    const size_t all[2] = {R, D}, one[2] = {1, D}, wsh[1] = {D};
    for (size_t p = 0; p < NPAIRS; p++) {
        const infiniDtype_t at = k_pairs[p].at, wt = k_pairs[p].wt;
        tl_case_begin("add_rms_norm a=%s w=%s %zux%zu: a streaming call against one call a row, bit for bit",
                      tl_dtype_name(at), tl_dtype_name(wt), R, D);
        tl_tensor T[8]; /* a, b, w, y, residual (the streaming call), y, residual (a row a call), a row */
        memset(T, 0, sizeof T);
        int err = 0;
        for (int k = 0; k < 7; k++) err |= k == 2 ? tl_tensor_init(&T[k], wt, 1, wsh, NULL)
                                                  : tl_tensor_init(&T[k], at, 2, all, NULL);
        err |= tl_tensor_init(&T[7], at, 2, one, NULL);
        infiniopAddRMSNormDescriptor_t dall = NULL, done = NULL;
        if (!err) {
            for (int k = 0; k < 3; k++) tl_tensor_fill_random(&T[k], rng, -2, 2);
            const infiniopTensorDescriptor_t dr = T[7].desc;
            TL_CHECK(infiniopCreateAddRMSNormDescriptor(tl_handle, &dall, T[3].desc, T[4].desc, T[0].desc, T[1].desc,
                                                        T[2].desc, 1e-6f) == INFINI_STATUS_SUCCESS &&
                         infiniopCreateAddRMSNormDescriptor(tl_handle, &done, dr, dr, dr, dr, T[2].desc, 1e-6f) ==
                             INFINI_STATUS_SUCCESS,
                     "descriptors");
        }
        if (dall && done) {
            char *base[7];
            for (int k = 0; k < 7; k++) base[k] = tl_tensor_host_base(&T[k]);
            TL_CHECK(infiniopAddRMSNorm(dall, NULL, 0, base[3], base[4], base[0], base[1], base[2], NULL) ==
                         INFINI_STATUS_SUCCESS,
                     "the streaming call");
            const size_t rb = D * T[0].esize; /* bytes a row */
            for (size_t r = 0; r < R; r++)
                TL_CHECK(infiniopAddRMSNorm(done, NULL, 0, base[5] + r * rb, base[6] + r * rb, base[0] + r * rb,
                                            base[1] + r * rb, base[2], NULL) == INFINI_STATUS_SUCCESS,
                         "row %zu's call", r);
            size_t bad = 0, first = 0;
            for (size_t i = 0; i < R * D; i++)
                if (memcmp(tl_tensor_host_elem(&T[3], i), tl_tensor_host_elem(&T[5], i), T[0].esize) ||
                    memcmp(tl_tensor_host_elem(&T[4], i), tl_tensor_host_elem(&T[6], i), T[0].esize))
                    if (!bad++) first = i;
            TL_CHECK(bad == 0, "%zu elements differ, the first at row %zu column %zu", bad, first / D, first % D);
        }
        infiniopDestroyAddRMSNormDescriptor(dall);
        infiniopDestroyAddRMSNormDescriptor(done);
        for (int k = 0; k < 8; k++) tl_tensor_free(&T[k]);
        tl_case_end();
    }
}

int main(int argc, char **argv) {
    tl_init(argc, argv, "test_add_rms_norm");
    tl_rng rng;
    tl_rng_seed(&rng, tl_seed);
    double t0 = tl_now();
    static const double eps_choices[] = {1e-6, 1e-5, 1e-3, 0.0, 0.5};
    size_t max_numel = tl_quick ? (1u << 14) : (1u << 18);
    rcase c;

    /* Directed: every dtype pair x every odd D, 2-D contiguous and 3-D with
     * random layouts; the largest D once per pair in quick mode. */
    for (size_t p = 0; p < NPAIRS; p++) {
        for (size_t k = 0; k < 5; k++) {
            for (int lay = 0; lay < 2; lay++) {
                memset(&c, 0, sizeof c);
                c.p = k_pairs[p];
                size_t D = tl_odd_sizes[k];
                c.ndim = lay ? 3 : 2;
                tl_row_shape_directed(&rng, c.ndim, c.shape, D, max_numel);
                c.eps = eps_choices[tl_rng_below(&rng, 5)];
                c.lo = -2; c.hi = 2;
                c.null_strides = !lay;
                make_layouts(&rng, &c, lay);
                run_case(&c, &rng);
            }
        }
        /* in-place variants, a == b, empty, 1-D, special values */
        for (int al = 1; al < AL_COUNT; al++) {
            memset(&c, 0, sizeof c);
            c.p = k_pairs[p]; c.ndim = 2; c.shape[0] = 5; c.shape[1] = 127;
            c.alias = al; c.eps = 1e-5; c.lo = -3; c.hi = 3;
            make_layouts(&rng, &c, 1);
            run_case(&c, &rng);
        }
        /* few odd rows in place, contiguous (one element per access on
         * GPUs): 13001 columns are past the shared-memory cache of a row
         * (48 KB of float32), so the outputs are written over the inputs
         * by the pass that reads them again */
        for (int al = AL_Y_A; al <= AL_Y_B_R_A; al++) {
            memset(&c, 0, sizeof c);
            c.p = k_pairs[p]; c.ndim = 2; c.shape[0] = 3; c.shape[1] = al & 1 ? 13001 : 777;
            c.alias = al; c.eps = 1e-5; c.lo = -3; c.hi = 3;
            make_layouts(&rng, &c, 0);
            run_case(&c, &rng);
        }
        memset(&c, 0, sizeof c);
        c.p = k_pairs[p]; c.ndim = 3; c.shape[0] = 2; c.shape[1] = 0; c.shape[2] = 64; c.eps = 1e-5; c.lo = -1; c.hi = 1;
        make_layouts(&rng, &c, 0);
        run_case(&c, &rng); /* empty: success, nothing written */
        memset(&c, 0, sizeof c);
        c.p = k_pairs[p]; c.ndim = 1; c.shape[0] = 300; c.eps = 1e-6; c.lo = -1; c.hi = 1;
        make_layouts(&rng, &c, 0);
        run_case(&c, &rng);
        for (int sp = 1; sp <= 2; sp++) {
            memset(&c, 0, sizeof c);
            c.p = k_pairs[p]; c.ndim = 2; c.shape[0] = 4; c.shape[1] = 33; c.eps = 1e-5; c.lo = -1; c.hi = 1;
            c.special = sp;
            make_layouts(&rng, &c, 0);
            run_case(&c, &rng);
        }
        /* the vector passes' step and tail lengths (AVX2 BF16: steps of 32
         * and pairs of 16 in lane-pair order, zero-filled partial steps; the
         * float32 row buffer up to 8192), with NaN / inf in a row or in the
         * weight, and in place */
        static const size_t k_tails[] = {1, 7, 8, 15, 16, 17, 24, 31, 32, 33, 47, 1023, 1024, 1025, 1040, 4096, 4101, 8191, 8192, 8193};
        for (size_t k = 0; k < sizeof k_tails / sizeof k_tails[0]; k++)
            for (int sp = 0; sp <= 3; sp++) {
                if (tl_quick && sp && k % 3) continue;
                memset(&c, 0, sizeof c);
                c.p = k_pairs[p]; c.ndim = 2; c.shape[0] = 3; c.shape[1] = k_tails[k];
                c.eps = 1e-5; c.lo = -2; c.hi = 2; c.special = sp;
                c.alias = sp == 0 && (k & 1) ? AL_Y_A_R_B : AL_NONE;
                make_layouts(&rng, &c, 0);
                run_case(&c, &rng);
            }
        /* many long rows (more data than the GPU holds in flight at once:
         * the register block form at 4 vectors a thread on NVIDIA, 640 to
         * 1280 vectors a row; on the CPU, outputs past the streaming
         * threshold: float32 rows of 5120 take the skewed loop, groups of 8
         * rows), in place, contiguous, and of a length no vector divides */
        for (int k = 0; k < 3; k++) {
            memset(&c, 0, sizeof c);
            c.p = k_pairs[p]; c.ndim = 2; c.shape[0] = 264; c.shape[1] = k == 1 ? 5121 : 5120;
            c.eps = 1e-5; c.lo = -2; c.hi = 2; c.alias = k ? AL_NONE : AL_Y_A_R_B;
            make_layouts(&rng, &c, 0);
            run_case(&c, &rng);
        }
        /* a broadcast (stride 0) and a strided weight on many rows of
         * 16-byte vectors, more input than the GPU holds in flight (past
         * its latency-bound rule): the register path's element weight
         * loads at 4 vectors a thread in the warp form (896 columns of a
         * 2-byte type), 2 (3072) and 4 (7168) in the block form, where
         * those loads are made in the output phase */
        static const size_t k_wcols[3] = {896, 3072, 7168}, k_wrows[3] = {1300, 400, 160};
        for (int k = 0; k < 3; k++)
            for (int ws = 0; ws <= 2; ws += 2) {
                if (tl_quick && (k || ws)) continue;
                memset(&c, 0, sizeof c);
                c.p = k_pairs[p]; c.ndim = 2; c.shape[0] = k_wrows[k]; c.shape[1] = k_wcols[k];
                c.eps = 1e-5; c.lo = -2; c.hi = 2;
                make_layouts(&rng, &c, 0);
                c.wstride = ws;
                run_case(&c, &rng);
            }
        /* many rows of 2049-4096 16-byte vectors, past the 4-vector block
         * form: on NVIDIA the block form at 8 vectors a thread where the
         * rows outnumber the SMs (140 rows; float32 12000 columns, 3000
         * vectors, 384 threads; 16384, 512 threads; 2-byte 24576, 384
         * threads; the longer rows of each type stream), with a broadcast,
         * a strided and a unit weight, the last in place (full mode) */
        static const size_t k_lcols[3] = {12000, 16384, 24576};
        for (int k = 0; k < 3 && !tl_quick; k++) {
            memset(&c, 0, sizeof c);
            c.p = k_pairs[p]; c.ndim = 2; c.shape[0] = 140; c.shape[1] = k_lcols[k];
            c.eps = 1e-5; c.lo = -2; c.hi = 2; c.alias = k == 2 ? AL_Y_A_R_B : AL_NONE;
            make_layouts(&rng, &c, 0);
            c.wstride = k == 0 ? 0 : k == 1 ? 2 : 1;
            run_case(&c, &rng);
        }
        /* many short rows, past the latency-bound rule (40001 rows, more
         * vectors than any GPU's resident threads): on NVIDIA the warp
         * form at one 16-byte vector a lane with its L2 prefetch, rows of
         * 64 and 40 elements (8 and 5 vectors of a 2-byte type, 16 and 10
         * of float32: lanes left idle), an odd count of rows, in place, a
         * strided weight, and a 3-D view of random layout (full mode) */
        for (int v = 0; v < 3 && !tl_quick; v++) {
            memset(&c, 0, sizeof c);
            c.p = k_pairs[p]; c.eps = 1e-5; c.lo = -2; c.hi = 2;
            if (v == 2) { c.ndim = 3; c.shape[0] = 3; c.shape[1] = 13335; c.shape[2] = 64; }
            else { c.ndim = 2; c.shape[0] = 40001; c.shape[1] = v == 1 ? 40 : 64; }
            c.alias = v == 0 ? AL_Y_A_R_B : AL_NONE;
            make_layouts(&rng, &c, v == 2);
            if (v == 1) c.wstride = 2;
            run_case(&c, &rng);
        }
        /* large values |x| up to 1e4 */
        memset(&c, 0, sizeof c);
        c.p = k_pairs[p]; c.ndim = 2; c.shape[0] = 3; c.shape[1] = 1000; c.eps = 1e-5; c.lo = -1e4; c.hi = 1e4;
        make_layouts(&rng, &c, 1);
        run_case(&c, &rng);
    }

    row_invariance(&rng);

    size_t ncases = tl_quick ? 40 : 250;
    for (size_t i = 0; i < ncases; i++) {
        memset(&c, 0, sizeof c);
        c.p = k_pairs[tl_rng_below(&rng, NPAIRS)];
        tl_row_shape_random(&rng, &c.ndim, c.shape, max_numel);
        c.alias = tl_rng_chance(&rng, 0.25) ? (int)tl_rng_below(&rng, AL_COUNT) : AL_NONE;
        c.eps = eps_choices[tl_rng_below(&rng, 5)];
        double range = tl_rng_chance(&rng, 0.1) ? 1e4 : tl_rng_chance(&rng, 0.3) ? 0.01 : 2;
        c.lo = -range; c.hi = range;
        if (tl_rng_chance(&rng, 0.2)) { c.lo = 0.5; c.hi = 3; } /* one-signed rows */
        c.special = tl_rng_chance(&rng, 0.05) ? 1 + (int)tl_rng_below(&rng, 2) : 0;
        c.null_strides = tl_rng_chance(&rng, 0.2) && c.alias == AL_NONE;
        for (int k = 0; k < 5; k++) c.pad[k] = tl_rng_chance(&rng, 0.3) ? tl_rng_below(&rng, 4) : 0;
        if (c.alias != AL_NONE) c.pad[0] = c.pad[1] = 0;
        make_layouts(&rng, &c, !c.null_strides);
        run_case(&c, &rng);
    }
    printf("test_add_rms_norm: %.2f s\n", tl_now() - t0);
    return tl_finish();
}
