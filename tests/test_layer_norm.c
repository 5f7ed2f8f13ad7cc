/*
 * test_layer_norm.c - randomised tests of infiniopLayerNorm against the
 * float64 reference (common/reference.c).
 *
 * Tolerances (SPEC 2: float32 arithmetic, two-pass variance, one rounding
 * per output). Let K = 16 + 2 sqrt(D): the float32 sums over D have a
 * relative error (relative to the sum of the magnitudes) below about
 * sqrt(D) eps32 for any practical order, and the few per-element
 * operations add a handful of roundings.
 *  - mean carries an absolute error up to K eps32 mean|x|, which reaches
 *    z = (x - mean) / std divided by std; var (two-pass) and std carry a
 *    relative error up to K eps32. So, for F32:
 *        |z - ref| <= K eps32 (|ref| + mean|x| / std + 1)
 *        |std - ref| <= K eps32 |ref|
 *        |out - ref| <= tol(z) |w| + 4 eps32 (|out| + |b|)
 *    and for F16/BF16 outputs 1 ulp of the type on top. A one-pass
 *    E[x^2] - mean^2 fails the rows with a large mean and a small
 *    deviation that the tests include (error ~ mean^2 eps32 / var).
 */
#include "layer_norm_tol.h"
#include "reference.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const infiniDtype_t k_dtypes[] = {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32};

enum { AL_NONE, AL_OUT_IN, AL_STDZ_IN, AL_COUNT };

typedef struct {
    infiniDtype_t dt;
    size_t ndim, shape[TL_MAXDIM];
    ptrdiff_t st[4][TL_MAXDIM]; /* output, standardization, std (ndim-1), input */
    ptrdiff_t ws, bs;
    int null_strides, bias, alias;
    double eps, lo, hi, offset, step; /* step: added to the first `head` elements of each row */
    size_t head;                       /* 0: half the row */
    size_t step_mod;                   /* > 0: the step on rows r with r % step_mod == 0 only */
    int special; /* 1: NaN in a row, 2: inf in a row */
    int strict;  /* F32 rows with a large common offset: 1e-5 relative of float64 (below) */
    size_t pad[6];
} lcase;

/* The strict check (F32 only): input_standardization and output within 1e-5
 * of float64 relative to max(1, |z|) (to |z w| + |w| + |b| for the output),
 * input_std_deviation within 1e-5 relative, for rows whose mean is up to
 * 1e4 times their standard deviation: the statistics must not lose the
 * spread to the rounding of a mean of magnitude 1e4 (ulp 2^-10). */
static double tol_z_strict(size_t i, double ref, void *v) {
    (void)i; (void)v;
    return 1e-5 * fmax(1.0, fabs(ref));
}
static double tol_out_strict(size_t i, double ref, void *v) {
    ln_tol_ctx *c = v;
    size_t j = i % c->D;
    (void)ref;
    return 1e-5 * (fmax(1.0, fabs(c->zref[i])) * c->w[j] + c->b[j]);
}
static double tol_std_strict(size_t i, double ref, void *v) {
    (void)i; (void)v;
    return 1e-5 * fabs(ref);
}

static void run_case(const lcase *c, tl_rng *rng) {
    char b0[96], b1[96], b2[96];
    size_t D = c->shape[c->ndim - 1];
    tl_case_begin("layer_norm %s shape %s out%s in%s w(%td) b%s(%td) eps %g%s%s%s", tl_dtype_name(c->dt),
                  tl_fmt_dims(b0, sizeof b0, c->ndim, c->shape),
                  c->null_strides ? "(NULL)" : tl_fmt_strides(b1, sizeof b1, c->ndim, c->st[0]),
                  c->null_strides ? "(NULL)" : tl_fmt_strides(b2, sizeof b2, c->ndim, c->st[3]), c->ws,
                  c->bias ? "" : "(absent)", c->bs, c->eps,
                  c->alias == AL_OUT_IN ? " output=input" : c->alias == AL_STDZ_IN ? " standardization=input" : "",
                  c->special == 1 ? " NaN-row" : c->special == 2 ? " inf-row" : "",
                  c->strict ? " offset-rows(strict)" : c->offset != 0 ? " offset-rows" : c->step != 0 ? " step-rows" : "");
    tl_tensor T[6]; /* output, stdz, std, input, weight, bias */
    memset(T, 0, sizeof T);
    tl_tensor *out = &T[0], *stdz = &T[1], *sd = &T[2], *in = &T[3], *w = &T[4], *b = &T[5];
    int own[6] = {1, 1, 1, 1, 1, c->bias};
    if (c->alias == AL_OUT_IN) { own[0] = 0; out = in; }
    if (c->alias == AL_STDZ_IN) { own[1] = 0; stdz = in; }
    int err = 0;
    for (int k = 0; k < 4; k++) {
        if (!own[k]) continue;
        size_t nd = k == 2 ? c->ndim - 1 : c->ndim;
        err |= tl_tensor_init_pad(&T[k], c->dt, nd, c->shape, c->null_strides ? NULL : c->st[k], c->pad[k]);
    }
    size_t vs[1] = {D};
    ptrdiff_t wst[1] = {c->ws}, bst[1] = {c->bs};
    err |= tl_tensor_init_pad(w, c->dt, 1, vs, wst, c->pad[4]);
    if (c->bias) err |= tl_tensor_init_pad(b, c->dt, 1, vs, bst, c->pad[5]);
    if (err) goto done;
    tl_tensor_fill_random(in, rng, c->lo, c->hi);
    if (c->offset != 0) /* rows with a large mean and a small deviation */
        for (size_t i = 0; i < in->numel; i++) tl_tensor_set(in, i, tl_tensor_get(in, i) + c->offset);
    if (c->step != 0) /* rows whose head sits apart from their mean (the one-pass statistics fall back) */
        for (size_t i = 0; i < in->numel; i++)
            if (i % D < (c->head ? c->head : D / 2) && (!c->step_mod || i / D % c->step_mod == 0))
                tl_tensor_set(in, i, tl_tensor_get(in, i) + c->step);
    if (c->special && in->numel)
        tl_tensor_set(in, tl_rng_below(rng, in->numel), c->special == 1 ? NAN : INFINITY);
    tl_tensor_fill_random(w, rng, -2, 2);
    if (c->bias) tl_tensor_fill_random(b, rng, -1, 1);
    for (int k = 0; k < 3; k++) if (own[k]) tl_tensor_poison(&T[k]);

    struct InfiniopDescriptor *desc = NULL;
    if (!TL_OK(infiniopCreateLayerNormDescriptor(tl_handle, &desc, out->desc, stdz->desc, sd->desc, in->desc, w->desc,
                                                 c->bias ? b->desc : NULL, (float)c->eps)))
        goto done;
    size_t wsz = 1;
    TL_OK(infiniopGetLayerNormWorkspaceSize(desc, &wsz));
    TL_CHECK(wsz == 0, "workspace size %zu, SPEC target is 0", wsz);
    for (int k = 0; k < 6; k++) if (own[k]) tl_tensor_upload(&T[k]);
    if (TL_OK(infiniopLayerNorm(desc, NULL, 0, tl_tensor_ptr(out), tl_tensor_ptr(stdz), tl_tensor_ptr(sd),
                                tl_tensor_ptr(in), tl_tensor_ptr(w), c->bias ? tl_tensor_ptr(b) : NULL, NULL))) {
        tl_sync();
        for (int k = 0; k < 6; k++) if (own[k]) tl_tensor_download(&T[k]);
        static const char *names[] = {"output", "input_standardization", "input_std_deviation", "input", "weight", "bias"};
        for (int k = 0; k < 6; k++) {
            if (!own[k]) continue;
            tl_tensor *t = &T[k];
            tl_tensor_check_untouched(t, names[k], t == out || t == stdz || t == sd);
        }
#define VIEW(t) {(unsigned char *)(t)->snap + TL_GUARD_BYTES + (size_t)(-(t)->min_off) * (t)->esize, c->dt, (t)->ndim, (t)->shape, (t)->strides}
        ref_view_t iv = VIEW(in), wv = VIEW(w), bv = VIEW(b);
        size_t n = in->numel ? in->numel : 1, rows = in->numel / D;
        double *ro = malloc(n * sizeof(double)), *rz = malloc(n * sizeof(double));
        double *rs = malloc((rows + 1) * sizeof(double)), *rm = malloc((rows + 1) * sizeof(double));
        double *mas = malloc((rows + 1) * sizeof(double)), *aw = malloc(D * sizeof(double)), *ab = calloc(D, sizeof(double));
        if (in->numel) ref_layer_norm(&iv, &wv, c->bias ? &bv : NULL, (double)(float)c->eps, ro, rz, rs, rm);
        for (size_t r = 0; r < rows; r++) {
            double s = 0;
            for (size_t j = 0; j < D; j++) s += fabs(ref_get_rc(&iv, r, j));
            mas[r] = s / (double)D / rs[r];
        }
        for (size_t j = 0; j < D; j++) {
            aw[j] = fabs(ref_get(&wv, j));
            if (c->bias) ab[j] = fabs(ref_get(&bv, j));
        }
        ln_tol_ctx ctx = {D, mas, aw, ab, rz, ln_tol_k(D)};
        tl_check_close(stdz, "input_standardization", rz, c->strict ? tol_z_strict : ln_tol_z, &ctx);
        tl_check_close(out, "output", ro, c->strict ? tol_out_strict : ln_tol_out, &ctx);
        tl_check_close(sd, "input_std_deviation", rs, c->strict ? tol_std_strict : ln_tol_std, &ctx);
        free(ro); free(rz); free(rs); free(rm); free(mas); free(aw); free(ab);
    }
    TL_OK(infiniopDestroyLayerNormDescriptor(desc));
done:
    for (int k = 0; k < 6; k++) if (own[k]) tl_tensor_free(&T[k]);
    tl_case_end();
}

static void make_layouts(tl_rng *r, lcase *c, int layouts) {
    unsigned all = TL_L_PAD | TL_L_PERMUTE_ALL | TL_L_LAST_STRIDED | TL_L_NEG_LEAD | TL_L_NEG_LAST;
    for (int k = 0; k < 4; k++) {
        size_t nd = k == 2 ? c->ndim - 1 : c->ndim;
        if (!layouts) tl_contiguous_strides(nd, c->shape, c->st[k]);
        else tl_make_strides(r, nd, c->shape, k == 3 && c->alias == AL_NONE ? all | TL_L_ZERO_LEAD : all, c->st[k]);
    }
    if (c->alias == AL_OUT_IN) memcpy(c->st[0], c->st[3], sizeof c->st[0]);
    if (c->alias == AL_STDZ_IN) memcpy(c->st[1], c->st[3], sizeof c->st[0]);
    static const ptrdiff_t vstrides[] = {1, 1, 1, 2, 3, -1, -2};
    c->ws = layouts ? vstrides[tl_rng_below(r, 7)] : 1;
    c->bs = layouts ? vstrides[tl_rng_below(r, 7)] : 1;
    if (layouts && tl_rng_chance(r, 0.05)) c->ws = 0;
}

int main(int argc, char **argv) {
    tl_init(argc, argv, "test_layer_norm");
    tl_rng rng;
    tl_rng_seed(&rng, tl_seed);
    double t0 = tl_now();
    static const double eps_choices[] = {1e-6, 1e-5, 1e-3, 0.0, 0.5};
    size_t max_numel = tl_quick ? (1u << 14) : (1u << 18);
    lcase c;

    for (size_t d = 0; d < 3; d++) {
        for (size_t k = 0; k < 5; k++) {
            for (int lay = 0; lay < 2; lay++) {
                memset(&c, 0, sizeof c);
                c.dt = k_dtypes[d];
                size_t D = tl_odd_sizes[k];
                c.ndim = lay ? 3 : 2;
                tl_row_shape_directed(&rng, c.ndim, c.shape, D, max_numel);
                c.eps = D == 1 ? 1e-5 : eps_choices[tl_rng_below(&rng, 5)];
                c.bias = (int)((k + lay) & 1);
                c.lo = -2; c.hi = 2;
                c.null_strides = !lay;
                make_layouts(&rng, &c, lay);
                run_case(&c, &rng);
            }
        }
        for (int al = 0; al < AL_COUNT; al++) {
            for (int bias = 0; bias < 2; bias++) {
                memset(&c, 0, sizeof c);
                c.dt = k_dtypes[d]; c.ndim = 2; c.shape[0] = 6; c.shape[1] = 129;
                c.alias = al; c.bias = bias; c.eps = 1e-5; c.lo = -3; c.hi = 3;
                make_layouts(&rng, &c, 1);
                run_case(&c, &rng);
            }
        }
        /* the vector pass's block and tail lengths (AVX2 BF16: blocks of
         * 16 columns in lane-pair order, weight and bias buffers of 4096
         * columns), one row and several, unit and strided weight and bias */
        static const size_t k_tails[] = {15, 16, 17, 31, 33, 4096, 4101, 4111};
        for (size_t k = 0; k < sizeof k_tails / sizeof k_tails[0]; k++)
            for (int v = 0; v < 4; v++) {
                memset(&c, 0, sizeof c);
                c.dt = k_dtypes[d]; c.ndim = 2; c.shape[0] = v & 1 ? 5 : 1; c.shape[1] = k_tails[k];
                c.bias = (int)(k & 1); c.eps = 1e-5; c.lo = -3; c.hi = 3;
                make_layouts(&rng, &c, 0);
                if (v & 2) { c.ws = 2; c.bs = -1; }
                run_case(&c, &rng);
            }
        /* few odd rows in place, contiguous (one element per access on
         * GPUs); 13001 columns are past the shared-memory cache of a row
         * (48 KB of float32): the last pass reads x again where it writes */
        for (int al = AL_OUT_IN; al < AL_COUNT; al++) {
            for (int big = 0; big < 2; big++) {
                memset(&c, 0, sizeof c);
                c.dt = k_dtypes[d]; c.ndim = 2; c.shape[0] = 3; c.shape[1] = big ? 13001 : 777;
                c.alias = al; c.bias = big; c.eps = 1e-5; c.lo = -3; c.hi = 3;
                make_layouts(&rng, &c, 0);
                run_case(&c, &rng);
            }
        }
        /* 1-D input: input_std_deviation is a 0-d tensor */
        memset(&c, 0, sizeof c);
        c.dt = k_dtypes[d]; c.ndim = 1; c.shape[0] = 77; c.eps = 1e-5; c.lo = -1; c.hi = 1; c.bias = 1;
        make_layouts(&rng, &c, 1);
        run_case(&c, &rng);
        /* empty rows */
        memset(&c, 0, sizeof c);
        c.dt = k_dtypes[d]; c.ndim = 3; c.shape[0] = 0; c.shape[1] = 4; c.shape[2] = 32; c.eps = 1e-5; c.lo = -1; c.hi = 1;
        make_layouts(&rng, &c, 0);
        run_case(&c, &rng);
        /* stability: large mean, small deviation (two-pass variance) */
        memset(&c, 0, sizeof c);
        c.dt = k_dtypes[d]; c.ndim = 2; c.shape[0] = 8; c.shape[1] = 1024; c.eps = 1e-6; c.bias = 1;
        c.lo = -1; c.hi = 1; c.offset = c.dt == INFINI_DTYPE_F32 ? 3000.0 : 300.0;
        make_layouts(&rng, &c, 0);
        run_case(&c, &rng);
        /* F32 rows with mean 1e4 and standard deviation 1 (uniform on
         * +-sqrt(3)): within 1e-5 of float64 (tol_z_strict), contiguous
         * (vector path) and strided (scalar path), short and odd lengths */
        if (k_dtypes[d] == INFINI_DTYPE_F32)
            for (int lay = 0; lay < 2; lay++) {
                memset(&c, 0, sizeof c);
                c.dt = k_dtypes[d]; c.ndim = 2; c.shape[0] = lay ? 3 : 8; c.shape[1] = lay ? 4097 : 1024;
                c.eps = 1e-6; c.bias = 1; c.lo = -1.7320508075688772; c.hi = 1.7320508075688772;
                c.offset = 1e4; c.strict = 1;
                make_layouts(&rng, &c, lay);
                run_case(&c, &rng);
            }
        /* contiguous rows, strided weight and bias, rows longer than the
         * kernel's weight buffer (gathered in chunks, groups of rows) */
        for (int k = 0; k < 2; k++) {
            memset(&c, 0, sizeof c);
            c.dt = k_dtypes[d]; c.ndim = 2; c.shape[0] = k ? 18 : 3; c.shape[1] = k ? 9001 : 7168; c.eps = 1e-5;
            c.bias = 1; c.lo = -1; c.hi = 1;
            make_layouts(&rng, &c, 0);
            c.ws = k ? -2 : 2; c.bs = k ? 3 : -1;
            run_case(&c, &rng);
        }
        /* first half of each row apart from the second (mean far from the first elements) */
        memset(&c, 0, sizeof c);
        c.dt = k_dtypes[d]; c.ndim = 2; c.shape[0] = 4; c.shape[1] = 1000; c.eps = 1e-6; c.bias = 1;
        c.lo = -1; c.hi = 1; c.step = 20.0;
        make_layouts(&rng, &c, 0);
        run_case(&c, &rng);
        /* long rows whose first 8 elements (the GPU's shift) sit far from
         * the mean: |mean - shift|^2 / var ~ D / 8, so the one-pass
         * statistics, kept, would miss the std tolerance ~4 times over */
        memset(&c, 0, sizeof c);
        c.dt = k_dtypes[d]; c.ndim = 2; c.shape[0] = 2; c.shape[1] = 32768; c.eps = 1e-6; c.bias = 1;
        c.lo = -1; c.hi = 1; c.step = 1000.0; c.head = 8;
        make_layouts(&rng, &c, 0);
        run_case(&c, &rng);
        /* short rows that a warp holds several of (the GPU's warp form at
         * 4-16 threads a row), a row count that leaves the last warp part
         * full, and only some rows' shift far from their mean: the groups
         * of a warp that keep their one-pass statistics and those that
         * take the second round (rows.cuh: the warp takes it together) */
        for (int k = 0; k < 3; k++) {
            static const size_t rows[3] = {13, 7, 37}, cols[3] = {64, 24, 200}, mods[3] = {3, 2, 5};
            memset(&c, 0, sizeof c);
            c.dt = k_dtypes[d]; c.ndim = 2; c.shape[0] = rows[k]; c.shape[1] = cols[k]; c.eps = 1e-6; c.bias = k != 1;
            c.lo = -1; c.hi = 1; c.step = 50.0; c.head = 8; c.step_mod = mods[k];
            make_layouts(&rng, &c, 0);
            run_case(&c, &rng);
        }
        /* large values, special values */
        memset(&c, 0, sizeof c);
        c.dt = k_dtypes[d]; c.ndim = 2; c.shape[0] = 4; c.shape[1] = 500; c.eps = 1e-5; c.bias = 1;
        c.lo = -1e4; c.hi = 1e4;
        make_layouts(&rng, &c, 1);
        run_case(&c, &rng);
        for (int sp = 1; sp <= 2; sp++) {
            memset(&c, 0, sizeof c);
            c.dt = k_dtypes[d]; c.ndim = 2; c.shape[0] = 3; c.shape[1] = 40; c.eps = 1e-5; c.bias = 1;
            c.lo = -1; c.hi = 1; c.special = sp;
            make_layouts(&rng, &c, 0);
            run_case(&c, &rng);
        }
        /* transposed inputs, contiguous outputs, shapes that fill a GPU
         * (not latency-bound: the tiled row kernel TILE_T there): R x 768
         * (one run of R rows of unit stride), 4x39x2048 (runs of 39:
         * tiles of 16, 16 and 7), 93x2x2000 (runs of 2), and
         * R x 768 whose rows' first element sits 100 from the rest (a
         * shift far from the mean), and in place: output = input (R x
         * 768) and input_standardization = input (4x39x2048), each in
         * the input's transposed layout */
        for (int v = 0; v < 6; v++) {
            memset(&c, 0, sizeof c);
            const size_t R = tl_quick ? 512 : 4096;
            c.dt = k_dtypes[d]; c.eps = 1e-5; c.bias = v != 2; c.lo = -2; c.hi = 2;
            if (v == 1 || v == 5) { c.ndim = 3; c.shape[0] = 4; c.shape[1] = 39; c.shape[2] = 2048; }
            else if (v == 2) { c.ndim = 3; c.shape[0] = 93; c.shape[1] = 2; c.shape[2] = 2000; }
            else { c.ndim = 2; c.shape[0] = v == 3 ? R / 4 : R; c.shape[1] = 768; }
            if (v == 3) { c.step = 100.0; c.head = 1; }
            make_layouts(&rng, &c, 0);
            const size_t nd = c.ndim, Dn = c.shape[nd - 1], J = c.shape[nd - 2];
            c.st[3][nd - 2] = 1;          /* the rows of a run: consecutive */
            c.st[3][nd - 1] = (ptrdiff_t)J; /* the columns: runs apart */
            if (nd == 3) c.st[3][0] = (ptrdiff_t)(J * Dn);
            if (v == 4) { c.alias = AL_OUT_IN; memcpy(c.st[0], c.st[3], sizeof c.st[0]); }
            if (v == 5) { c.alias = AL_STDZ_IN; memcpy(c.st[1], c.st[3], sizeof c.st[0]); }
            run_case(&c, &rng);
        }
        /* a broadcast (stride 0) and a strided weight and bias on many
         * rows of 16-byte vectors, more input than the GPU holds in flight
         * (past its latency-bound rule): the register path's element
         * parameter loads at 4 vectors a thread in the warp form (896
         * columns of a 2-byte type), 2 (3072) and 4 (7168) in the block
         * form; and 14336 and 16384 (1792 and 2048 vectors of a 2-byte
         * type: 448 and 512 threads, where the GPU's capped instances
         * run, cuda/rows.cuh's rg_plan_cap: 72 and 64 registers) */
        static const size_t k_wcols[5] = {896, 3072, 7168, 14336, 16384}, k_wrows[5] = {2600, 800, 320, 300, 264};
        for (int k = 0; k < 5; k++)
            for (int ws = 0; ws <= 2; ws++) {
                if (tl_quick && (k || ws)) continue;
                if (ws == 1 && k != 3) continue; /* (unit strides: the 14336 columns only) */
                memset(&c, 0, sizeof c);
                c.dt = k_dtypes[d]; c.eps = 1e-5; c.bias = 1; c.lo = -2; c.hi = 2;
                c.ndim = 2; c.shape[0] = k_wrows[k]; c.shape[1] = k_wcols[k];
                make_layouts(&rng, &c, 0);
                c.ws = ws; c.bs = ws == 1 ? 1 : ws ? 0 : 2;
                run_case(&c, &rng);
            }
        /* many short rows, past the latency-bound rule (40001 rows, more
         * vectors than any GPU's resident threads): on NVIDIA the warp
         * form at one 16-byte vector a lane with its L2 prefetch, rows of
         * 64 and 40 elements (8 and 5 vectors of a 2-byte type, 16 and 10
         * of float32: lanes left idle), an odd count of rows, rows whose
         * first 8 elements (the GPU's shift) sit 20 above the rest (the
         * second round), in place, a strided weight without bias, and a
         * 3-D view of random layout (full mode) */
        for (int v = 0; v < 4 && !tl_quick; v++) {
            memset(&c, 0, sizeof c);
            c.dt = k_dtypes[d]; c.eps = 1e-5; c.bias = v != 2; c.lo = -2; c.hi = 2;
            if (v == 3) { c.ndim = 3; c.shape[0] = 3; c.shape[1] = 13335; c.shape[2] = 64; }
            else { c.ndim = 2; c.shape[0] = 40001; c.shape[1] = v == 1 ? 40 : 64; }
            if (v == 1) { c.step = 20.0; c.head = 8; }
            make_layouts(&rng, &c, v == 3);
            if (v == 0) { c.alias = AL_OUT_IN; memcpy(c.st[0], c.st[3], sizeof c.st[0]); }
            if (v == 2) { c.ws = 2; c.bs = 0; }
            run_case(&c, &rng);
        }
        /* many rows of 2049-4096 16-byte vectors, past the 4-vector block
         * form: on NVIDIA the block form at 8 vectors a thread where the
         * rows outnumber the SMs (140 rows of 12000 and 16384 float32
         * columns, 24576 and 32768 of a 2-byte type: 384 and 512 threads),
         * with a broadcast, a unit and a strided weight and bias (full
         * mode) */
        for (int k = 0; k < 2 && !tl_quick; k++)
            for (int ws = 0; ws <= 2; ws++) {
                if (k && ws != 1) continue;
                memset(&c, 0, sizeof c);
                c.dt = k_dtypes[d]; c.eps = 1e-5; c.bias = 1; c.lo = -2; c.hi = 2;
                static const size_t k_lcols[2][2] = {{12000, 16384}, {24576, 32768}}; /* float32, 2-byte */
                c.ndim = 2; c.shape[0] = 140; c.shape[1] = k_lcols[k_dtypes[d] == INFINI_DTYPE_F32 ? 0 : 1][k];
                make_layouts(&rng, &c, 0);
                c.ws = ws; c.bs = ws == 1 ? 1 : ws ? 0 : 2;
                run_case(&c, &rng);
            }
    }

    size_t ncases = tl_quick ? 40 : 250;
    for (size_t i = 0; i < ncases; i++) {
        memset(&c, 0, sizeof c);
        c.dt = k_dtypes[tl_rng_below(&rng, 3)];
        size_t D = tl_row_shape_random(&rng, &c.ndim, c.shape, max_numel);
        c.alias = tl_rng_chance(&rng, 0.2) ? (int)tl_rng_below(&rng, AL_COUNT) : AL_NONE;
        c.bias = tl_rng_chance(&rng, 0.6);
        c.eps = eps_choices[tl_rng_below(&rng, 5)];
        if (D == 1 && c.eps == 0.0) c.eps = 1e-5; /* var = 0: eps 0 would give 0/0 */
        double range = tl_rng_chance(&rng, 0.1) ? 1e4 : tl_rng_chance(&rng, 0.3) ? 0.01 : 2;
        c.lo = -range; c.hi = range;
        if (tl_rng_chance(&rng, 0.1)) { c.lo = -1; c.hi = 1; c.offset = 100; }
        c.null_strides = tl_rng_chance(&rng, 0.2) && c.alias == AL_NONE;
        for (int k = 0; k < 6; k++) c.pad[k] = tl_rng_chance(&rng, 0.3) ? tl_rng_below(&rng, 4) : 0;
        make_layouts(&rng, &c, !c.null_strides);
        run_case(&c, &rng);
    }
    printf("test_layer_norm: %.2f s\n", tl_now() - t0);
    return tl_finish();
}
