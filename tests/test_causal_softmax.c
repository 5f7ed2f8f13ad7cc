/*
 * test_causal_softmax.c - randomised tests of infiniopCausalSoftmax against
 * the float64 reference (common/reference.c).
 *
 * Tolerances (SPEC 2: float32 arithmetic, one rounding per output):
 *  - masked entries (j > i + T - S): exactly +0.0, whatever x holds there
 *    (the tests put NaN and +-inf under the mask now and then);
 *  - visible entries: y = exp(x - m) / sum. The float32 sum of up to T
 *    terms in (0, 1] has a relative error below about sqrt(T) eps32 for
 *    any practical summation order; expf costs ~2 ulp and its argument
 *    x - m carries an absolute error up to eps32 |x - m| (rounding of the
 *    difference, or of a log2(e) pre-scaling), which is a relative error
 *    of the same size in the result. Hence, for F32 outputs,
 *        |y - ref| <= ((16 + 2 sqrt(Tvis)) eps32 + 2 eps32 |x - m|) |ref|
 *                     + 2^-126   (outputs in float32's subnormal range)
 *    and for F16/BF16 outputs the same plus 1 ulp of the output type.
 *  - NaN among the visible entries makes every visible entry of the row NaN
 *    (+inf visible: the reference's inf - inf = NaN makes the row NaN too).
 */
#include "reference.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const infiniDtype_t k_dtypes[] = {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32};

typedef struct {
    infiniDtype_t dt;
    size_t ndim, shape[TL_MAXDIM];
    ptrdiff_t ys[TL_MAXDIM], xs[TL_MAXDIM];
    int null_strides, inplace;
    double lo, hi;
    int special; /* 0 none, 1 NaN/inf under the mask, 2 NaN visible, 3 -inf visible, 4 +inf visible,
                    5 the first (up to 100) visible entries -inf, the rest finite */
    size_t ypad, xpad;
} scase;

typedef struct {
    size_t S, T;
    const double *absdiff; /* |x - m| per element (0 for masked) */
} tolctx;

static double tol_y(size_t i, double ref, void *vctx) {
    tolctx *c = vctx;
    size_t col = i % c->T, row = (i / c->T) % c->S;
    size_t vis = row + (c->T - c->S) + 1;
    if (col >= vis) return -1.0; /* exact zero */
    double K = 16.0 + 2.0 * sqrt((double)vis);
    return (K + 2.0 * c->absdiff[i]) * TL_EPS32 * fabs(ref) + 0x1p-126;
}

static void run_case(const scase *c, tl_rng *rng) {
    char b0[96], b1[96], b2[96];
    static const char *sp[] = {"", " masked-NaN/inf", " visible-NaN", " visible-(-inf)", " visible-(+inf)",
                               " head-(-inf)"};
    tl_case_begin("causal_softmax %s shape %s y%s x%s%s%s%s", tl_dtype_name(c->dt),
                  tl_fmt_dims(b0, sizeof b0, c->ndim, c->shape),
                  c->null_strides ? "(NULL)" : tl_fmt_strides(b1, sizeof b1, c->ndim, c->ys),
                  c->null_strides ? "(NULL)" : tl_fmt_strides(b2, sizeof b2, c->ndim, c->xs),
                  c->inplace ? " in-place" : "", sp[c->special], c->hi > 100 ? " large-logits" : "");
    tl_tensor xt, yt;
    memset(&yt, 0, sizeof yt);
    tl_tensor *x = &xt, *y = c->inplace ? &xt : &yt;
    size_t S = c->shape[c->ndim - 2], T = c->shape[c->ndim - 1];
    int err = tl_tensor_init_pad(x, c->dt, c->ndim, c->shape, c->null_strides ? NULL : c->xs, c->xpad);
    if (!c->inplace) err |= tl_tensor_init_pad(y, c->dt, c->ndim, c->shape, c->null_strides ? NULL : c->ys, c->ypad);
    if (err) goto done;
    tl_tensor_fill_random(x, rng, c->lo, c->hi);
    if (c->special && x->numel) {
        size_t rows = x->numel / T;
        for (size_t r = 0; r < rows; r++) {
            size_t i = r % S, vis = i + (T - S) + 1;
            if (c->special == 1 && vis < T) {
                static const double junk[] = {NAN, INFINITY, -INFINITY, 1e4};
                for (size_t j = vis; j < T; j++)
                    if (tl_rng_chance(rng, 0.5)) tl_tensor_set(x, r * T + j, junk[tl_rng_below(rng, 4)]);
            } else if (c->special == 2 && tl_rng_chance(rng, 0.3)) {
                tl_tensor_set(x, r * T + tl_rng_below(rng, vis), NAN);
            } else if (c->special == 3 && vis > 1) {
                /* some visible -inf, at least one finite visible entry left */
                size_t keep = tl_rng_below(rng, vis);
                for (size_t j = 0; j < vis; j++)
                    if (j != keep && tl_rng_chance(rng, 0.4)) tl_tensor_set(x, r * T + j, -INFINITY);
            } else if (c->special == 4 && tl_rng_chance(rng, 0.3)) {
                tl_tensor_set(x, r * T + tl_rng_below(rng, vis), INFINITY);
            } else if (c->special == 5 && vis > 1) {
                /* a head of -inf longer than the CPU's 64-entry shift window */
                size_t h = vis - 1 < 100 ? vis - 1 : 100;
                for (size_t j = 0; j < h; j++) tl_tensor_set(x, r * T + j, -INFINITY);
            }
        }
    }
    if (!c->inplace) tl_tensor_poison(y);

    struct InfiniopDescriptor *desc = NULL;
    if (!TL_OK(infiniopCreateCausalSoftmaxDescriptor(tl_handle, &desc, y->desc, x->desc))) goto done;
    size_t ws = 1;
    TL_OK(infiniopGetCausalSoftmaxWorkspaceSize(desc, &ws));
    TL_CHECK(ws == 0, "workspace size %zu, SPEC target is 0", ws);
    tl_tensor_upload(x);
    if (!c->inplace) tl_tensor_upload(y);
    if (TL_OK(infiniopCausalSoftmax(desc, NULL, 0, tl_tensor_ptr(y), tl_tensor_ptr(x), NULL))) {
        tl_sync();
        tl_tensor_download(y);
        if (!c->inplace) tl_tensor_check_untouched(x, "x", 0);
        tl_tensor_check_untouched(y, "y", 1);
        ref_view_t xv = {(unsigned char *)x->snap + TL_GUARD_BYTES + (size_t)(-x->min_off) * x->esize, c->dt,
                         x->ndim, x->shape, x->strides};
        size_t n = x->numel ? x->numel : 1;
        double *ref = malloc(n * sizeof(double)), *ad = calloc(n, sizeof(double));
        if (x->numel) {
            ref_causal_softmax(&xv, ref);
            for (size_t r = 0; r < x->numel / T; r++) {
                size_t vis = r % S + (T - S) + 1;
                double m = -INFINITY;
                for (size_t j = 0; j < vis; j++) {
                    double v = ref_get_rc(&xv, r, j);
                    if (v > m) m = v;
                }
                for (size_t j = 0; j < vis; j++) {
                    double d = fabs(ref_get_rc(&xv, r, j) - m);
                    ad[r * T + j] = isfinite(d) ? d : 0.0;
                }
            }
        }
        tolctx ctx = {S, T, ad};
        tl_check_close(y, "y", ref, tol_y, &ctx);
        free(ref);
        free(ad);
    }
    TL_OK(infiniopDestroyCausalSoftmaxDescriptor(desc));
done:
    if (!c->inplace) tl_tensor_free(y);
    tl_tensor_free(x);
    tl_case_end();
}

static void make_layouts(tl_rng *r, scase *c, int layouts) {
    unsigned all = TL_L_PAD | TL_L_PERMUTE_ALL | TL_L_LAST_STRIDED | TL_L_NEG_LEAD | TL_L_NEG_LAST;
    if (!layouts) {
        tl_contiguous_strides(c->ndim, c->shape, c->ys);
        tl_contiguous_strides(c->ndim, c->shape, c->xs);
        return;
    }
    tl_make_strides(r, c->ndim, c->shape, all, c->ys);
    if (c->inplace) memcpy(c->xs, c->ys, sizeof c->xs);
    else if (tl_rng_chance(r, 0.3)) memcpy(c->xs, c->ys, sizeof c->xs);
    else tl_make_strides(r, c->ndim, c->shape, all | TL_L_ZERO_LEAD, c->xs);
}

int main(int argc, char **argv) {
    tl_init(argc, argv, "test_causal_softmax");
    tl_rng rng;
    tl_rng_seed(&rng, tl_seed);
    double t0 = tl_now();
    size_t max_numel = tl_quick ? (1u << 15) : (1u << 18);
    scase c;

    /* Directed: every dtype x (S, T) pairs incl. T == S, T > S, the odd
     * sizes and T = 65537; 2-D contiguous and 4-D random layouts. */
    static const size_t st_pairs[][2] = {{1, 1},     {1, 3},      {3, 3},       {2, 127},  {127, 127}, {5, 128},
                                         {31, 4097}, {1, 4097},   {1, 65537},   {3, 65537}, {40, 40},  {17, 300}};
    size_t npairs = sizeof st_pairs / sizeof st_pairs[0];
    for (size_t d = 0; d < 3; d++) {
        for (size_t k = 0; k < npairs; k++) {
            for (int lay = 0; lay < 2; lay++) {
                memset(&c, 0, sizeof c);
                c.dt = k_dtypes[d];
                c.ndim = lay ? 4 : 2;
                c.shape[c.ndim - 2] = st_pairs[k][0];
                c.shape[c.ndim - 1] = st_pairs[k][1];
                size_t per = st_pairs[k][0] * st_pairs[k][1];
                tl_random_dims(&rng, c.ndim - 2, c.shape, per * 4 > max_numel ? 1 : max_numel / per / 4);
                c.null_strides = !lay;
                c.lo = -4; c.hi = 4;
                make_layouts(&rng, &c, lay);
                run_case(&c, &rng);
            }
        }
        /* S = T = 700 (490k elements) once per dtype, full mode only */
        if (!tl_quick) {
            memset(&c, 0, sizeof c);
            c.dt = k_dtypes[d]; c.ndim = 2; c.shape[0] = c.shape[1] = 700; c.lo = -4; c.hi = 4;
            make_layouts(&rng, &c, 0);
            run_case(&c, &rng);
        }
        /* in-place, empty batch, specials, large logits */
        memset(&c, 0, sizeof c);
        c.dt = k_dtypes[d]; c.ndim = 3; c.shape[0] = 3; c.shape[1] = 7; c.shape[2] = 130; c.lo = -4; c.hi = 4;
        c.inplace = 1;
        make_layouts(&rng, &c, 1);
        run_case(&c, &rng);
        /* few odd rows in place, columns strided (one element per access
         * on GPUs: no vectors, no peeling); 13001 columns are past the
         * shared-memory cache of a row, so the last pass reads x again
         * where it writes */
        for (int big = 0; big < 2; big++) {
            memset(&c, 0, sizeof c);
            c.dt = k_dtypes[d]; c.ndim = 2; c.shape[0] = 3; c.shape[1] = big ? 13001 : 777; c.lo = -4; c.hi = 4;
            c.inplace = 1;
            c.ys[0] = c.xs[0] = 1; c.ys[1] = c.xs[1] = 3; /* (column-major) */
            run_case(&c, &rng);
        }
        memset(&c, 0, sizeof c);
        c.dt = k_dtypes[d]; c.ndim = 3; c.shape[0] = 3; c.shape[1] = 7; c.shape[2] = 130; c.lo = -4; c.hi = 4;
        c.inplace = 0; c.shape[0] = 0;
        make_layouts(&rng, &c, 1);
        run_case(&c, &rng);
        for (int sp = 1; sp <= 5; sp++) {
            memset(&c, 0, sizeof c);
            c.dt = k_dtypes[d]; c.ndim = 3; c.shape[0] = 2; c.shape[1] = 9;
            c.shape[2] = sp == 5 ? 200 : 13 + 50 * (sp & 1);
            c.lo = -4; c.hi = 4; c.special = sp;
            make_layouts(&rng, &c, 1);
            run_case(&c, &rng);
        }
        /* Rows not 16-byte aligned (odd T; on NVIDIA the peeled kernels,
         * a warp per row up to T = 1024, a block beyond): base pointers
         * offset alike (the peel) and differently (the element-wise
         * fallback), and in place. */
        /* The last two (full mode only): more rows than a GPU holds one
         * element a thread, where the peeled register form runs (its warp
         * form at 1 and at 8 vectors a lane for 2-byte types, its block
         * form for f32 1500). */
        static const size_t odd_st[][3] = {{4, 197, 197}, {3, 37, 777}, {2, 5, 1500}, {2, 7, 1031}, {1, 3, 9},
                                           {6, 255, 255}, {2, 800, 1500}};
        for (size_t k = 0; k < sizeof odd_st / sizeof odd_st[0]; k++)
            for (int pads = 0; pads < 4; pads++) {
                if (tl_quick && k >= 5) continue;
                memset(&c, 0, sizeof c);
                c.dt = k_dtypes[d]; c.ndim = 3; c.lo = -4; c.hi = 4;
                for (int i = 0; i < 3; i++) c.shape[i] = odd_st[k][i];
                c.inplace = pads == 3;
                c.ypad = pads == 1 || pads == 2 ? 1 : 0;
                c.xpad = pads == 1 ? 1 : pads == 2 ? 2 : 0;
                make_layouts(&rng, &c, 0);
                run_case(&c, &rng);
            }
        /* x rows at other offsets modulo 16 bytes than y's (a permuted x:
         * the rows of one head apart by 2 x 963 elements; a sliced x of
         * pitch T + 1 with T a vector multiple; a pitch of T + 2 at few
         * rows): on NVIDIA the peeled register form, x's rows peeled each
         * by its own offset, y stored element by element where its row
         * lies at another offset */
        {
            static const struct {
                size_t shape[3];
                ptrdiff_t xs[3];
            } vv[] = {{{2, 369, 963}, {963, 1926, 1}}, {{2, 700, 768}, {0, 769, 1}}, {{1, 64, 1025}, {0, 1027, 1}}};
            for (size_t k = 0; k < sizeof vv / sizeof vv[0]; k++) {
                memset(&c, 0, sizeof c);
                c.dt = k_dtypes[d]; c.ndim = 3; c.lo = -4; c.hi = 4;
                memcpy(c.shape, vv[k].shape, sizeof vv[k].shape);
                memcpy(c.xs, vv[k].xs, sizeof vv[k].xs);
                if (!c.xs[0]) c.xs[0] = c.xs[1] * (ptrdiff_t)c.shape[1];
                c.ys[2] = 1, c.ys[1] = (ptrdiff_t)c.shape[2], c.ys[0] = c.ys[1] * (ptrdiff_t)c.shape[1];
                run_case(&c, &rng);
            }
        }
        /* a transposed x (each row's elements consecutive down a column)
         * on more rows and columns than the GPU holds one element a
         * thread (on NVIDIA the streaming kernels, one element at a time:
         * a warp a row up to 1024 columns, a block beyond), full mode
         * only; in place (y = x, transposed too), and junk under the
         * mask, NaN and +-inf among the visible columns */
        if (!tl_quick) {
            static const size_t tt[][3] = {{21, 185, 195}, {1, 754, 759}, {1, 300, 2100}, {2, 46, 446}, {8, 200, 300}};
            for (size_t k = 0; k < sizeof tt / sizeof tt[0]; k++)
                for (int v = 0; v < (k == 4 ? 6 : 2); v++) {
                    memset(&c, 0, sizeof c);
                    c.dt = k_dtypes[d]; c.ndim = 3; c.lo = -4; c.hi = 4;
                    for (int i = 0; i < 3; i++) c.shape[i] = tt[k][i];
                    c.xs[0] = (ptrdiff_t)(tt[k][1] * tt[k][2]), c.xs[1] = 1, c.xs[2] = (ptrdiff_t)tt[k][1];
                    c.inplace = v == 1;
                    if (c.inplace) memcpy(c.ys, c.xs, sizeof c.xs);
                    else c.ys[2] = 1, c.ys[1] = (ptrdiff_t)tt[k][2], c.ys[0] = c.ys[1] * (ptrdiff_t)tt[k][1];
                    c.special = v >= 2 ? v - 1 : 0; /* 1 masked junk, 2 NaN, 3 -inf, 4 +inf */
                    run_case(&c, &rng);
                }
        }
        /* many rows of 1152-2048 16-byte vectors (257-512 threads of the
         * GPU's 4-vector block form, where the uncapped instance leaves
         * few warps resident and cuda/rows.cuh's rg_plan_cap takes a
         * capped one: f32 rows of 4608, 288 threads, the 72-register
         * instance; 2-byte rows of 16384, 512 threads, the 64-register
         * one), full mode only */
        if (!tl_quick) {
            memset(&c, 0, sizeof c);
            c.dt = k_dtypes[d]; c.ndim = 3; c.shape[0] = 2; c.shape[1] = 150;
            c.shape[2] = k_dtypes[d] == INFINI_DTYPE_F32 ? 4608 : 16384; c.lo = -4; c.hi = 4;
            make_layouts(&rng, &c, 0);
            run_case(&c, &rng);
            /* rows of 3000 and 4096 vectors, past the 4-vector block form:
             * the GPU's block form at 8 vectors a thread (140 rows, more
             * than the SMs; 384 and 512 threads) */
            for (int k = 0; k < 2; k++) {
                memset(&c, 0, sizeof c);
                c.dt = k_dtypes[d]; c.ndim = 2; c.shape[0] = 140;
                c.shape[1] = (k ? 16384 : 12000) * (k_dtypes[d] == INFINI_DTYPE_F32 ? 1 : 2); c.lo = -4; c.hi = 4;
                make_layouts(&rng, &c, 0);
                run_case(&c, &rng);
            }
        }
        memset(&c, 0, sizeof c);
        c.dt = k_dtypes[d]; c.ndim = 2; c.shape[0] = 16; c.shape[1] = 700; c.lo = -1e4; c.hi = 1e4;
        make_layouts(&rng, &c, 1);
        run_case(&c, &rng);
        c.lo = 1e4 - 20; c.hi = 1e4; /* large logits close together */
        run_case(&c, &rng);
    }

    size_t ncases = tl_quick ? 40 : 250;
    for (size_t i = 0; i < ncases; i++) {
        memset(&c, 0, sizeof c);
        c.dt = k_dtypes[tl_rng_below(&rng, 3)];
        c.ndim = 2 + tl_rng_below(&rng, 4);
        size_t T = tl_rng_chance(&rng, 0.3) ? tl_odd_sizes[tl_rng_below(&rng, 4)] : 1 + tl_rng_below(&rng, 600);
        size_t S = tl_rng_chance(&rng, 0.3) ? T : 1 + tl_rng_below(&rng, T < 200 ? T : 200);
        while (S > 1 && S * T > max_numel) S = (S + 1) / 2;
        c.shape[c.ndim - 1] = T;
        c.shape[c.ndim - 2] = S;
        tl_random_dims(&rng, c.ndim - 2, c.shape, max_numel / (S * T) ? max_numel / (S * T) : 1);
        if (c.ndim > 2 && tl_rng_chance(&rng, 0.03)) c.shape[tl_rng_below(&rng, c.ndim - 2)] = 0;
        c.inplace = tl_rng_chance(&rng, 0.2);
        c.null_strides = tl_rng_chance(&rng, 0.2);
        double range = tl_rng_chance(&rng, 0.1) ? 1e4 : tl_rng_chance(&rng, 0.2) ? 50 : 4;
        c.lo = -range; c.hi = range;
        c.special = tl_rng_chance(&rng, 0.1) ? 1 + (int)tl_rng_below(&rng, 5) : 0;
        if (!c.inplace) {
            c.ypad = tl_rng_below(&rng, 3);
            c.xpad = tl_rng_below(&rng, 3);
        }
        make_layouts(&rng, &c, !c.null_strides);
        run_case(&c, &rng);
    }
    printf("test_causal_softmax: %.2f s\n", tl_now() - t0);
    return tl_finish();
}
