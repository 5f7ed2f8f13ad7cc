/*
 * unary_test.c - randomised tests of an elementwise operator y = f(x).
 *
 * Tolerances (SPEC 2, silu and sigmoid):
 *  - F32 and F64: within 4 ulp of the correctly rounded value. The
 *    reference is computed in long double and rounded once to the output
 *    type, so it is the correctly rounded value (up to ties). A float32
 *    1/(1+expf(-x)) costs about 1 ulp for expf plus 0.5 for each of the add
 *    and the divide (and 0.5 more for silu's product): 4 ulp is "a few".
 *    Exact results in the subnormal range of F32/BF16/F64 may be off by up
 *    to the smallest normal (tl_close_ulp): relative accuracy there is not
 *    meaningful and flush-to-zero arithmetic is common.
 *  - F16 and BF16: within 1 ulp of the reference rounded to the output type
 *    (the float32 result rounded once is within 0.5 ulp of the float32
 *    result, which is a few float32 ulp from the exact value: at most one
 *    output ulp from the correctly rounded value).
 *  - NaN in gives NaN out; no other input gives NaN; +-inf and huge inputs
 *    give the limits (sigmoid(-inf) = 0, sigmoid(+inf) = 1, silu(-inf) = 0,
 *    silu(+inf) = +inf).
 */
#include "unary_test.h"
#include "reference.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const infiniDtype_t k_dtypes[] = {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32, INFINI_DTYPE_F64};

typedef struct {
    infiniDtype_t dt;
    size_t ondim, oshape[TL_MAXDIM];
    ptrdiff_t ostrides[TL_MAXDIM];
    int ostrides_null;
    size_t indim, ishape[TL_MAXDIM];
    ptrdiff_t istrides[TL_MAXDIM];
    int istrides_null;
    int inplace;
    int special;   /* inject special values */
    double lo, hi; /* value range */
    size_t opad, ipad;
} ucase;

static const double k_special[] = {
    0.0, -0.0, 1e-3, -1e-3, 0.5, -0.5, 1, -1, 2, -2, 5, -5, 10, -10, 15, -15, 17, -17, 20, -20, 30, -30,
    50, -50, 87, -87, 88.7, -88.7, 89, -89, 100, -100, 103, -103, 104, -104, 110, -110, 150, -150, 700, -700,
    709, -709, 710, -710, 745, -745, 746, -746, 1000, -1000, 1e4, -1e4, 65504, -65504, 1e30, -1e30, 1e300,
    -1e300, 1e-30, -1e-30, 1e-40, -1e-40, 1e-310, -1e-310, INFINITY, -INFINITY, NAN,
};

/* In a memory-checking run (under valgrind, or INFINIOP_TEST_MEMCHECK=1:
 * scripts/hardening.sh's memcheck and asan stages) nearly all of the time
 * is this harness's per-element work (random values, long double
 * references, comparisons), not the operator's: a case of more than
 * MC_VALUES elements there fills only its first MC_VALUES input elements
 * (linear order) with random and special values and repeats them over the
 * rest, and compares a sample of about MC_VALUES outputs with the reference
 * (the first and last MC_VALUES / 8, then evenly spaced). Every case keeps
 * its shape, layout, dtype and kernel path; the operator still reads and
 * writes every element under the checker, every output is checked written
 * and all guard bytes and padding untouched. The full value checks are the
 * plain runs' (ctest). */
#define MC_VALUES ((size_t)16384)

static int memcheck_run(void) {
    const char *v = getenv("INFINIOP_TEST_MEMCHECK");
    return tl_under_valgrind() || (v && *v && strcmp(v, "0") != 0);
}

static size_t mc_values(size_t numel) { return numel > MC_VALUES && memcheck_run() ? MC_VALUES : numel; }

/* Random values (as tl_tensor_fill_random) in the first k elements only. */
static void fill_first(tl_tensor *x, tl_rng *rng, double lo, double hi, size_t k) {
    if (k == x->numel) {
        tl_tensor_fill_random(x, rng, lo, hi);
        return;
    }
    for (size_t i = 0; i < k; i++) {
        double v;
        do {
            v = tl_round_to(x->dtype, tl_rng_uniform(rng, lo, hi));
        } while (v == 0.0);
        tl_tensor_set(x, i, v);
    }
}

/* Elements k.. repeat elements 0..k-1. */
static void repeat_first(tl_tensor *x, size_t k) {
    if (k == x->numel) return;
    unsigned char *base = tl_tensor_host_base(x);
    size_t di[TL_MAXDIM] = {0}, si[TL_MAXDIM] = {0};
    ptrdiff_t d = 0, s = 0;
    for (size_t i = 0; i < k; i++) tl_offset_next(x->ndim, x->shape, x->strides, di, &d);
    for (size_t i = k; i < x->numel; i++) {
        memcpy(base + d * (ptrdiff_t)x->esize, base + s * (ptrdiff_t)x->esize, x->esize);
        tl_offset_next(x->ndim, x->shape, x->strides, di, &d);
        tl_offset_next(x->ndim, x->shape, x->strides, si, &s);
    }
}

static void describe(const ucase *c, char *buf, size_t n, const char *op) {
    char a[96], b[96], d[96], e[96];
    snprintf(buf, n, "%s %s out %s%s in %s%s%s%s", op, tl_dtype_name(c->dt),
             tl_fmt_dims(a, sizeof a, c->ondim, c->oshape),
             c->ostrides_null ? "(NULL strides)" : tl_fmt_strides(b, sizeof b, c->ondim, c->ostrides),
             tl_fmt_dims(d, sizeof d, c->indim, c->ishape),
             c->istrides_null ? "(NULL strides)" : tl_fmt_strides(e, sizeof e, c->indim, c->istrides),
             c->inplace ? " in-place" : "", c->special ? " special-values" : "");
}

static void run_case(const unary_op_t *op, const ucase *c, tl_rng *rng) {
    char name[512];
    describe(c, name, sizeof name, op->name);
    tl_case_begin("%s", name);
    tl_tensor out, in;
    tl_tensor *x = &in, *y = &out;
    if (tl_tensor_init_pad(&in, c->dt, c->indim, c->ishape, c->istrides_null ? NULL : c->istrides, c->ipad)) {
        tl_tensor_free(&in);
        tl_case_end();
        return;
    }
    if (c->inplace) y = x;
    else if (tl_tensor_init_pad(&out, c->dt, c->ondim, c->oshape, c->ostrides_null ? NULL : c->ostrides, c->opad)) {
        tl_tensor_free(&in);
        tl_tensor_free(&out);
        tl_case_end();
        return;
    }
    const size_t nv = mc_values(x->numel);
    fill_first(x, rng, c->lo, c->hi, nv);
    if (c->special) {
        size_t ns = sizeof k_special / sizeof k_special[0];
        for (size_t i = 0; i < nv; i++) {
            if (i < ns || tl_rng_chance(rng, 0.3)) tl_tensor_set(x, i, k_special[i < ns ? i : tl_rng_below(rng, ns)]);
        }
    }
    repeat_first(x, nv);
    if (c->special) {
        /* the smallest subnormal and the largest finite value of the type */
        if (x->numel > 2 && c->dt != INFINI_DTYPE_F64) {
            tl_tensor_set(x, x->numel - 1, tl_ulp(c->dt, 0.0));
            tl_tensor_set(x, x->numel - 2, -tl_ulp(c->dt, 0.0));
        }
    }
    if (!c->inplace) tl_tensor_poison(y);

    struct InfiniopDescriptor *desc = NULL;
    if (!TL_OK(op->create(tl_handle, &desc, y->desc, x->desc))) goto done;
    size_t ws = 1234;
    TL_OK(op->workspace(desc, &ws));
    TL_CHECK(ws == 0, "workspace size %zu, SPEC target is 0", ws);
    tl_tensor_upload(x);
    if (y != x) tl_tensor_upload(y);
    /* a NULL workspace of size 0 (every operator needs none) */
    if (TL_OK(op->run(desc, NULL, 0, tl_tensor_ptr(y), tl_tensor_ptr(x), NULL))) {
        tl_sync();
        tl_tensor_download(y);
        if (y != x) tl_tensor_check_untouched(x, "input", 0);
        tl_tensor_check_untouched(y, "output", 1);
        /* reference from the pre-call snapshot of the input */
        ref_view_t xv = {x->snap + TL_GUARD_BYTES + (size_t)(-x->min_off) * x->esize, c->dt, x->ndim, x->shape,
                         x->strides};
        size_t bad = 0;
        const int vg = tl_under_valgrind();
        /* every element, or in a memory-checking run a sample of about MC_VALUES */
        const size_t edge = mc_values(y->numel) == y->numel ? y->numel : MC_VALUES / 8,
                     every = y->numel > 2 * edge ? (y->numel - 2 * edge) / (MC_VALUES - 2 * edge) + 1 : 1;
        unsigned char *ybase = tl_tensor_host_base(y);
        size_t yidx[TL_MAXDIM] = {0};
        ptrdiff_t yoff = 0;
        for (size_t i = 0; i < y->numel; i++, tl_offset_next(y->ndim, y->shape, y->strides, yidx, &yoff)) {
            void *p = ybase + yoff * (ptrdiff_t)y->esize;
            if (tl_is_poison(c->dt, p)) {
                if (bad++ < 5) tl_fail("output element %zu never written", i);
                continue;
            }
            if (i >= edge && i < y->numel - edge && (i - edge) % every) continue;
            const double xi = ref_broadcast_get(&xv, y->ndim, y->shape, i);
            /* Under valgrind long double is float64 (64-bit x87
             * precision) and its infinities fail isinfl: the references
             * of F64 results (which need long double's extra precision
             * and range: e^x underflows first in float64) and of infinite
             * inputs (silu(-inf) came out NaN) are wrong there only. */
            if (vg && (c->dt == INFINI_DTYPE_F64 || isinf(xi)) &&
                tl_skip_under_valgrind("F64 results and results of infinite inputs (long double references)"))
                continue;
            const long double exact = op->ref((long double)xi);
            double got = tl_load(c->dt, p);
            double want = (double)exact;
            if (!tl_close_ulp(c->dt, got, want, 4.0)) {
                if (bad++ < 5) {
                    tl_fail("element %zu: %s(%.9g = %a) got %.9g, want %.9g (%.17Lg exact; rounded %.9g, ulp distance %g)",
                            i, op->name, xi, xi, got, want, exact, tl_round_to(c->dt, want),
                            tl_ulp_distance(c->dt, got, tl_round_to(c->dt, want)));
                }
            }
        }
        if (bad > 5) tl_fail("%zu of %zu elements wrong", bad, y->numel);
    }
    TL_OK(op->destroy(desc));
done:
    if (y != x) tl_tensor_free(y);
    tl_tensor_free(x);
    tl_case_end();
}

/* Out shape and a layout; then the input: same layout, another layout,
 * broadcast (shape or stride 0), or the same tensor (in-place). */
static void random_case(tl_rng *r, ucase *c, size_t max_numel) {
    memset(c, 0, sizeof *c);
    c->dt = k_dtypes[tl_rng_below(r, 4)];
    c->ondim = tl_rng_below(r, 6);
    tl_random_dims(r, c->ondim, c->oshape, max_numel);
    if (c->ondim && tl_rng_chance(r, 0.4)) { /* one dim of an odd size */
        size_t d = tl_rng_below(r, c->ondim);
        size_t n = tl_odd_sizes[tl_rng_below(r, 5)];
        for (size_t i = 0; i < c->ondim; i++) if (i != d) c->oshape[i] = 1 + (tl_rng_chance(r, 0.2) ? 1 : 0);
        while (n > max_numel) n /= 3;
        c->oshape[d] = n;
    }
    if (c->ondim && tl_rng_chance(r, 0.05)) c->oshape[tl_rng_below(r, c->ondim)] = 0; /* empty */
    unsigned all = TL_L_PAD | TL_L_PERMUTE_ALL | TL_L_LAST_STRIDED | TL_L_NEG_LEAD | TL_L_NEG_LAST;
    if (tl_rng_chance(r, 0.3)) {
        c->ostrides_null = 1;
        tl_contiguous_strides(c->ondim, c->oshape, c->ostrides);
    } else {
        tl_make_strides(r, c->ondim, c->oshape, all, c->ostrides);
    }
    c->opad = tl_rng_chance(r, 0.3) ? tl_rng_below(r, 4) : 0;
    c->ipad = tl_rng_chance(r, 0.3) ? tl_rng_below(r, 4) : 0;
    int kind = (int)tl_rng_below(r, 4);
    c->indim = c->ondim;
    memcpy(c->ishape, c->oshape, sizeof c->ishape);
    switch (kind) {
    case 0: /* same layout */
        memcpy(c->istrides, c->ostrides, sizeof c->istrides);
        c->istrides_null = c->ostrides_null;
        break;
    case 1: /* another layout, maybe with stride-0 (broadcast) dims */
        tl_make_strides(r, c->indim, c->ishape, all | TL_L_ZERO_LEAD, c->istrides);
        if (c->indim && tl_rng_chance(r, 0.1)) c->istrides[c->indim - 1] = 0;
        break;
    case 2: /* shape broadcasting: fewer dims and/or dims of size 1 */
        c->indim = tl_rng_below(r, c->ondim + 1);
        for (size_t i = 0; i < c->indim; i++) {
            size_t od = c->ondim - c->indim + i;
            c->ishape[i] = tl_rng_chance(r, 0.5) ? 1 : c->oshape[od];
        }
        tl_make_strides(r, c->indim, c->ishape, all, c->istrides);
        break;
    default:
        c->inplace = 1;
        memcpy(c->istrides, c->ostrides, sizeof c->istrides);
        c->istrides_null = c->ostrides_null;
        c->ipad = c->opad;
        break;
    }
    double ranges[][2] = {{-8, 8}, {-1, 1}, {-30, 30}, {-120, 120}, {-1e4, 1e4}};
    size_t k = tl_rng_below(r, 5);
    c->lo = ranges[k][0];
    c->hi = ranges[k][1];
    c->special = tl_rng_chance(r, 0.15);
}

int unary_test_main(int argc, char **argv, const unary_op_t *op) {
    char prog[64];
    snprintf(prog, sizeof prog, "test_%s", op->name);
    tl_init(argc, argv, prog);
    tl_rng rng;
    tl_rng_seed(&rng, tl_seed);
    double t0 = tl_now();
    ucase c;
    if (memcheck_run()) {
        printf("%s: %s: cases of more than %zu elements fill %zu input values and compare %zu "
               "outputs with the reference (every element still computed, checked written and memory-checked)\n",
               prog, tl_under_valgrind() ? "under valgrind" : "memory-checking run", MC_VALUES, MC_VALUES, MC_VALUES);
        fflush(stdout);
    }

    /* Directed cases first: every dtype x {special values, 0-d, 0-d
     * broadcast, odd contiguous sizes, empty, in-place}. */
    for (size_t di = 0; di < 4; di++) {
        infiniDtype_t dt = k_dtypes[di];
        /* special values, contiguous and reversed */
        for (int rev = 0; rev < 2; rev++) {
            memset(&c, 0, sizeof c);
            c.dt = dt; c.ondim = c.indim = 1; c.oshape[0] = c.ishape[0] = 200;
            c.ostrides[0] = 1; c.istrides[0] = rev ? -1 : 1;
            c.special = 1; c.lo = -50; c.hi = 50;
            run_case(op, &c, &rng);
        }
        /* 0-d */
        memset(&c, 0, sizeof c);
        c.dt = dt; c.lo = -5; c.hi = 5;
        run_case(op, &c, &rng);
        c.inplace = 1;
        run_case(op, &c, &rng);
        /* 0-d input broadcast to [3, 5] */
        memset(&c, 0, sizeof c);
        c.dt = dt; c.lo = -5; c.hi = 5; c.ondim = 2; c.oshape[0] = 3; c.oshape[1] = 5;
        tl_contiguous_strides(2, c.oshape, c.ostrides);
        run_case(op, &c, &rng);
        /* [4,1] input broadcast to [4, 127] (numpy rules), and [127] to [4,127] */
        c.indim = 2; c.ishape[0] = 4; c.ishape[1] = 1; c.oshape[0] = 4; c.oshape[1] = 127;
        tl_contiguous_strides(2, c.oshape, c.ostrides);
        tl_contiguous_strides(2, c.ishape, c.istrides);
        run_case(op, &c, &rng);
        c.indim = 1; c.ishape[0] = 127; c.istrides[0] = 1;
        run_case(op, &c, &rng);
        /* stride-0 broadcast: input [4,127] with strides (0,1) */
        c.indim = 2; c.ishape[0] = 4; c.ishape[1] = 127; c.istrides[0] = 0; c.istrides[1] = 1;
        run_case(op, &c, &rng);
        /* odd contiguous sizes, NULL strides; unaligned starts */
        for (size_t k = 0; k < 5; k++) {
            memset(&c, 0, sizeof c);
            c.dt = dt; c.lo = -10; c.hi = 10; c.ondim = c.indim = 1;
            c.oshape[0] = c.ishape[0] = tl_odd_sizes[k] * (tl_quick ? 1 : 3);
            c.ostrides_null = c.istrides_null = 1;
            c.opad = k & 1; c.ipad = (k >> 1) & 1;
            run_case(op, &c, &rng);
            c.inplace = 1; c.ipad = c.opad;
            run_case(op, &c, &rng);
        }
        /* transposed inputs into a contiguous output (the transposing
         * path): 2-D column-major with extents that leave partial tiles,
         * 16-byte vectors possible, then the same with the input one
         * element off alignment, a 3-D case (unit input stride on the
         * middle dimension), extents no vector width divides, and one
         * of several whole blocks plus partial ones along both dimensions */
        {
            static const size_t shp[5][3] = {{72, 136, 0}, {72, 136, 0}, {3, 40, 24}, {20, 30, 0}, {264, 392, 0}};
            for (int k = 0; k < 5; k++) {
                memset(&c, 0, sizeof c);
                c.dt = dt; c.lo = -120; c.hi = 120; c.special = k == 0;
                c.ondim = c.indim = shp[k][2] ? 3 : 2;
                memcpy(c.oshape, shp[k], sizeof shp[k]);
                memcpy(c.ishape, shp[k], sizeof shp[k]);
                tl_contiguous_strides(c.ondim, c.oshape, c.ostrides);
                if (c.ondim == 2) {
                    c.istrides[0] = 1; c.istrides[1] = (ptrdiff_t)shp[k][0];
                } else {
                    c.istrides[1] = 1; c.istrides[2] = (ptrdiff_t)shp[k][1];
                    c.istrides[0] = (ptrdiff_t)(shp[k][1] * shp[k][2]);
                }
                c.ipad = k == 1;
                run_case(op, &c, &rng);
            }
        }
        /* transposed inputs large enough for the tiled kernels (CUDA:
         * two waves of one element a thread or more; the small ones above
         * take STRIDED or the tiles by the planner's rule): 12 x 12 tiles of 16-byte vectors (TRANSPOSE_VEC
         * edge 16 V) with special values, the same one element off
         * alignment (its fallback), and odd extents (TRANSPOSE_TILE:
         * 25 x 23 partial tiles of 32 x 32); then p extents of 2 V and
         * 6 V (TRANSPOSE_VEC with 1 and 2 warps along p; 640 K elements,
         * partial tiles along q) */
        {
            const size_t V = 16 / tl_dtype_size(dt), edge = 16 * V;
            const size_t shp[5][2] = {{12 * edge, 12 * edge}, {12 * edge, 12 * edge}, {12 * 64 + 1, 11 * 64 + 1},
                                      {2 * V, 320000 / V}, {6 * V, (640000 / (6 * V) / V + 1) * V}};
            for (int k = 0; k < 5; k++) {
                memset(&c, 0, sizeof c);
                c.dt = dt; c.lo = -120; c.hi = 120; c.special = k != 1;
                c.ondim = c.indim = 2;
                c.oshape[0] = c.ishape[0] = shp[k][0];
                c.oshape[1] = c.ishape[1] = shp[k][1];
                tl_contiguous_strides(2, c.oshape, c.ostrides);
                c.istrides[0] = 1; c.istrides[1] = (ptrdiff_t)shp[k][0];
                c.ipad = k == 1;
                run_case(op, &c, &rng);
            }
        }
        /* transposes of several (p, q) planes with odd extents (CUDA: the
         * tiled kernels' plane loop and partial tiles): the input's unit
         * stride on dimension 1, the output's on dimension 2, planes along
         * dimension 0; 5 x 331 x 347 (574 K elements) and 3 x 257 x 301
         * (232 K): 32 x 32 tiles at every type; 1 x 8192 x 33: 32 x 64
         * tiles (a 32-wide tile would hold one column) at 2- and 4-byte
         * types, STRIDED at 8 */
        {
            const size_t shp[3][3] = {{5, 331, 347}, {3, 257, 301}, {1, 8192, 33}};
            for (int k = 0; k < 3; k++) {
                memset(&c, 0, sizeof c);
                c.dt = dt; c.lo = -120; c.hi = 120; c.special = 1;
                c.ondim = c.indim = 3;
                for (int d = 0; d < 3; d++) c.oshape[d] = c.ishape[d] = shp[k][d];
                tl_contiguous_strides(3, c.oshape, c.ostrides);
                c.istrides[0] = (ptrdiff_t)(shp[k][1] * shp[k][2]);
                c.istrides[1] = 1;
                c.istrides[2] = (ptrdiff_t)shp[k][1];
                run_case(op, &c, &rng);
            }
        }
        /* rows whose last dimension has unit stride on both sides (the
         * CUDA rows path): padded rows with a row length that allows 16-,
         * 8-, 4-byte or no vectors; the input broadcast along rows (stride
         * 0) with odd row lengths, enough rows that a block loops over
         * several (4500 x 1040), and a 3-D broadcast whose input changes
         * every 1500 rows (reuse within a run of equal rows only); a
         * permutation that keeps the last dimension; rows too short for a
         * warp (the strided path); one element off alignment (the
         * unaligned fallback) and in-place; and the in1 layouts below */
        {
            static const struct {
                size_t nd, shape[3];
                ptrdiff_t ostr[3], istr[3];
                size_t ipad, opad;
                int inplace;
            } rc[] = {
                {2, {33, 96}, {104, 1}, {100, 1}, 0, 0, 0},           /* padded, 16 bytes at 2-byte types */
                {2, {17, 1030}, {1030, 1}, {1034, 1}, 0, 0, 0},       /* 4-byte vectors at 2-byte types */
                {2, {9, 4097}, {4097, 1}, {4100, 1}, 0, 0, 0},        /* odd rows: no vectors */
                {2, {600, 1001}, {1001, 1}, {1003, 1}, 0, 0, 0},      /* odd rows, 600 K elements: the full
                                                                         accesses a thread, no vectors */
                {2, {37, 7814}, {7814, 1}, {0, 1}, 0, 0, 0},          /* broadcast rows, 15628-byte pitch */
                {2, {4500, 1040}, {1040, 1}, {0, 1}, 0, 0, 0},        /* broadcast, several rows a block */
                {3, {3, 1500, 1040}, {1560000, 1040, 1}, {1040, 0, 1}, 0, 0, 0},
                {3, {6, 5, 264}, {1320, 264, 1}, {264, 1584, 1}, 0, 0, 0}, /* dims 0 and 1 swapped */
                /* large enough for two or more rows a thread (CUDA, a
                 * grid past two waves): two rows a step, with a last step
                 * of one row (2200 rows of 16-byte vectors, padded) and a
                 * 3-D view with dims 0 and 1 swapped */
                {2, {2200, 4104}, {4104, 1}, {4112, 1}, 0, 0, 0},
                {3, {71, 512, 256}, {131072, 256, 1}, {256, 18176, 1}, 0, 0, 0},
                {2, {300, 20}, {24, 1}, {0, 1}, 0, 0, 0},             /* 20-element rows: strided */
                {2, {33, 96}, {104, 1}, {100, 1}, 1, 0, 0},           /* input one element off */
                {2, {37, 7814}, {7814, 1}, {0, 1}, 0, 1, 0},          /* output one element off */
                {2, {33, 96}, {104, 1}, {104, 1}, 0, 0, 1},           /* in-place */
                {2, {5, 64}, {64, 1}, {0, 1}, 0, 0, 0},               /* decode-sized broadcast */
                /* an input that allows no vectors into an output that does
                 * (in1: the input element by element, the output by
                 * vectors): odd input pitch (624 K elements), the same one
                 * element off (input alignment does not matter) and with
                 * the output off (the fallback), column strides 2 and -1,
                 * the last dimension broadcast (column stride 0) */
                {2, {600, 1040}, {1040, 1}, {1041, 1}, 0, 0, 0},
                {2, {600, 1040}, {1040, 1}, {1041, 1}, 1, 0, 0},
                {2, {600, 1040}, {1040, 1}, {1041, 1}, 0, 1, 0},
                {2, {300, 1024}, {1024, 1}, {2051, 2}, 0, 0, 0},
                {2, {64, 96}, {96, 1}, {96, -1}, 0, 0, 0},
                {2, {330, 2000}, {2000, 1}, {1, 0}, 0, 0, 0},
                {3, {7, 3, 40}, {120, 40, 1}, {3, 1, 0}, 0, 0, 0},
                /* a dense output gathered (GATHER, on GPUs of up to 140
                 * SMs): a 1-d input of stride 2 whose length no vector
                 * width divides; rows of 3 (each vector spans rows) from
                 * a transposed input; odd rows of a stride-2 input, 4.4 M
                 * elements (two vectors a thread at 2-byte types), and
                 * the same with the output one element off (the
                 * fallback) */
                {1, {600001}, {1}, {2}, 0, 0, 0},
                {2, {100000, 3}, {3, 1}, {1, 100000}, 0, 0, 0},
                {2, {1100, 4001}, {4001, 1}, {8004, 2}, 0, 0, 0},
                {2, {1100, 4001}, {4001, 1}, {8004, 2}, 0, 1, 0},
                /* broadcast inputs whose ROWS launch would cover under a
                 * sector of a row per warp access (GATHER at some element
                 * sizes): rows of 27 with the last dimension broadcast
                 * (2.1 M elements), and with the output one element off
                 * (the fallback); rows of 115 broadcast along the rows */
                {3, {700, 113, 27}, {113 * 27, 27, 1}, {113, 1, 0}, 0, 0, 0},
                {3, {700, 113, 27}, {113 * 27, 27, 1}, {113, 1, 0}, 0, 1, 0},
                {2, {20000, 115}, {115, 1}, {0, 1}, 0, 0, 0},
            };
            for (size_t k = 0; k < sizeof rc / sizeof rc[0]; k++) {
                if (tl_quick && rc[k].shape[0] * rc[k].shape[1] * (rc[k].nd == 3 ? rc[k].shape[2] : 1) > 2000000 &&
                    dt == INFINI_DTYPE_F64)
                    continue;
                memset(&c, 0, sizeof c);
                c.dt = dt; c.lo = -90; c.hi = 90;
                c.ondim = c.indim = rc[k].nd;
                memcpy(c.oshape, rc[k].shape, sizeof rc[k].shape);
                memcpy(c.ishape, rc[k].shape, sizeof rc[k].shape);
                memcpy(c.ostrides, rc[k].ostr, sizeof rc[k].ostr);
                memcpy(c.istrides, rc[k].istr, sizeof rc[k].istr);
                c.ipad = rc[k].ipad; c.opad = rc[k].opad; c.inplace = rc[k].inplace;
                run_case(op, &c, &rng);
            }
        }
        /* contiguous sizes around the vector width and a warp, and a
         * size that leaves a tail of V - 1 elements (the latency shapes
         * of the contiguous path) */
        {
            static const size_t sz[] = {1, 7, 8, 9, 31, 33, 255, 257, 4103, 65536 + 7};
            for (size_t k = 0; k < sizeof sz / sizeof sz[0]; k++) {
                memset(&c, 0, sizeof c);
                c.dt = dt; c.lo = -30; c.hi = 30; c.ondim = c.indim = 1;
                c.oshape[0] = c.ishape[0] = sz[k];
                c.ostrides_null = c.istrides_null = 1;
                run_case(op, &c, &rng);
            }
        }
        /* empty: a 0-length dim */
        memset(&c, 0, sizeof c);
        c.dt = dt; c.lo = -1; c.hi = 1; c.ondim = c.indim = 3;
        c.oshape[0] = c.ishape[0] = 4; c.oshape[1] = c.ishape[1] = 0; c.oshape[2] = c.ishape[2] = 5;
        c.ostrides_null = c.istrides_null = 1;
        run_case(op, &c, &rng);
    }

    size_t ncases = tl_quick ? 60 : 400;
    size_t max_numel = tl_quick ? (1u << 14) : (1u << 18);
    for (size_t i = 0; i < ncases; i++) {
        random_case(&rng, &c, max_numel);
        run_case(op, &c, &rng);
    }
    printf("%s: %.2f s\n", prog, tl_now() - t0);
    return tl_finish();
}
