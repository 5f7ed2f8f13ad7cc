/*
 * reference.c - see reference.h. Plain loops, float64 arithmetic
 * (long double for the elementwise functions), no library code.
 */
#include "reference.h"
#include "testlib.h" /* exact dtype conversions only */

#include <math.h>
#include <stdlib.h>

static ptrdiff_t row_offset(const ref_view_t *v, size_t row) {
    /* offset of element (row, 0): row is linear over dims [0, ndim-1) */
    ptrdiff_t off = 0;
    for (size_t i = v->ndim - 1; i-- > 0;) {
        size_t n = v->shape[i];
        off += (ptrdiff_t)(row % n) * v->strides[i];
        row /= n;
    }
    return off;
}

static double load_off(const ref_view_t *v, ptrdiff_t off) {
    size_t es = tl_dtype_size(v->dtype);
    return tl_load(v->dtype, (const unsigned char *)v->data + off * (ptrdiff_t)es);
}

double ref_get(const ref_view_t *v, size_t i) {
    return load_off(v, tl_offset_of(v->ndim, v->shape, v->strides, i));
}

double ref_get_rc(const ref_view_t *v, size_t row, size_t j) {
    return load_off(v, row_offset(v, row) + (ptrdiff_t)j * v->strides[v->ndim - 1]);
}

static size_t rows_of(const ref_view_t *v) {
    size_t rows = 1;
    for (size_t i = 0; i + 1 < v->ndim; i++) rows *= v->shape[i];
    return rows;
}

void ref_add_rms_norm(const ref_view_t *a, const ref_view_t *b, const ref_view_t *w, double eps,
                      double *y, double *residual) {
    size_t D = a->shape[a->ndim - 1], rows = rows_of(a);
    for (size_t r = 0; r < rows; r++) {
        double ss = 0.0;
        for (size_t j = 0; j < D; j++) {
            double v = ref_get_rc(a, r, j) + ref_get_rc(b, r, j);
            residual[r * D + j] = v;
            ss += v * v;
        }
        double inv = 1.0 / sqrt(ss / (double)D + eps);
        for (size_t j = 0; j < D; j++) y[r * D + j] = residual[r * D + j] * inv * ref_get(w, j);
    }
}

void ref_causal_softmax(const ref_view_t *x, double *y) {
    size_t nd = x->ndim, T = x->shape[nd - 1], S = x->shape[nd - 2], rows = rows_of(x);
    for (size_t r = 0; r < rows; r++) {
        size_t i = r % S;
        size_t visible = i + (T - S) + 1; /* columns 0 .. i + T - S */
        double m = -INFINITY;
        int nan = 0;
        for (size_t j = 0; j < visible; j++) {
            double v = ref_get_rc(x, r, j);
            if (isnan(v)) nan = 1;
            else if (v > m) m = v;
        }
        double sum = 0.0;
        for (size_t j = 0; j < visible; j++) {
            double e = exp(ref_get_rc(x, r, j) - m); /* NaN for inf - inf */
            y[r * T + j] = e;
            sum += e;
        }
        for (size_t j = 0; j < visible; j++) y[r * T + j] = nan ? NAN : y[r * T + j] / sum;
        for (size_t j = visible; j < T; j++) y[r * T + j] = 0.0;
    }
}

void ref_layer_norm(const ref_view_t *x, const ref_view_t *w, const ref_view_t *b, double eps,
                    double *out, double *stdz, double *std, double *mean_out) {
    size_t D = x->shape[x->ndim - 1], rows = rows_of(x);
    for (size_t r = 0; r < rows; r++) {
        double s = 0.0;
        for (size_t j = 0; j < D; j++) s += ref_get_rc(x, r, j);
        double mean = s / (double)D;
        double v = 0.0;
        for (size_t j = 0; j < D; j++) {
            double d = ref_get_rc(x, r, j) - mean;
            v += d * d;
        }
        double sd = sqrt(v / (double)D + eps);
        std[r] = sd;
        if (mean_out) mean_out[r] = mean;
        for (size_t j = 0; j < D; j++) {
            double z = (ref_get_rc(x, r, j) - mean) / sd;
            stdz[r * D + j] = z;
            out[r * D + j] = z * ref_get(w, j) + (b ? ref_get(b, j) : 0.0);
        }
    }
}

long double ref_sigmoid_scalar(long double x) {
    if (isnan(x)) return x;
    if (x >= 0) return 1.0L / (1.0L + expl(-x));
    long double e = expl(x); /* x < 0: no overflow; exp(-inf) = 0 */
    return e / (1.0L + e);
}

long double ref_silu_scalar(long double x) {
    if (isnan(x)) return x;
    if (isinf(x)) return x > 0 ? x : 0.0L;
    return x * ref_sigmoid_scalar(x);
}

double ref_broadcast_get(const ref_view_t *x, size_t out_ndim, const size_t *out_shape, size_t i) {
    /* x's dims align with the trailing dims of out; a dim of size 1 in x
     * is repeated */
    size_t lead = out_ndim - x->ndim, lin = i;
    ptrdiff_t off = 0;
    for (size_t d = out_ndim; d-- > 0;) {
        size_t idx = lin % out_shape[d];
        lin /= out_shape[d];
        if (d >= lead) {
            size_t xd = d - lead;
            if (x->shape[xd] != 1) off += (ptrdiff_t)idx * x->strides[xd];
        }
    }
    return load_off(x, off);
}

static void elementwise(const ref_view_t *x, size_t out_ndim, const size_t *out_shape, long double *y,
                        long double (*f)(long double)) {
    size_t n = tl_numel(out_ndim, out_shape);
    for (size_t i = 0; i < n; i++) y[i] = f((long double)ref_broadcast_get(x, out_ndim, out_shape, i));
}

void ref_sigmoid(const ref_view_t *x, size_t out_ndim, const size_t *out_shape, long double *y) {
    elementwise(x, out_ndim, out_shape, y, ref_sigmoid_scalar);
}

void ref_silu(const ref_view_t *x, size_t out_ndim, const size_t *out_shape, long double *y) {
    elementwise(x, out_ndim, out_shape, y, ref_silu_scalar);
}
