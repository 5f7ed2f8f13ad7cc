/*
 * reference.h - float64 reference implementations of the five operators,
 * written from SPEC.md section 2 and nothing else.
 *
 * Inputs are strided views of host memory in any supported dtype; every
 * element is read as the double it exactly is (the already-rounded input
 * value). Outputs are float64 arrays in row-major order of the output
 * shape, not rounded: the tests round them (or not) as their tolerance
 * rules say. Rows are all dimensions but the last.
 *
 * These functions are shared by the CPU tests, the GPU tests and fuzzers.
 */
#ifndef INFINIOP_TEST_REFERENCE_H
#define INFINIOP_TEST_REFERENCE_H

#include <infinicore.h>
#include <stddef.h>

typedef struct {
    const void *data;        /* element 0 of the view (host memory) */
    infiniDtype_t dtype;     /* F16, BF16, F32 or F64 */
    size_t ndim;
    const size_t *shape;
    const ptrdiff_t *strides; /* in elements, any sign */
} ref_view_t;

/* Element of linear (row-major) index i of the view, as a double. */
double ref_get(const ref_view_t *v, size_t i);
/* Element (row, j) where row is the linear index over all dims but the last. */
double ref_get_rc(const ref_view_t *v, size_t row, size_t j);

/* add_rms_norm: a, b [rows..., D]; w [D]. y and residual: rows*D doubles.
 * r = a + b; residual = r; y = r / sqrt(mean(r^2) + eps) * w. */
void ref_add_rms_norm(const ref_view_t *a, const ref_view_t *b, const ref_view_t *w, double eps,
                      double *y, double *residual);

/* causal_softmax: x [..., S, T]; y: numel doubles. Row i of each S x T
 * slice sees columns j <= i + T - S; masked entries are 0. A NaN among the
 * visible entries (or an undefined x - max, e.g. inf - inf) makes the
 * visible part of the row NaN. */
void ref_causal_softmax(const ref_view_t *x, double *y);

/* layer_norm: x [rows..., D]; w, b [D] (b may be NULL). out, stdz: rows*D;
 * std: rows; mean (optional, may be NULL): rows. */
void ref_layer_norm(const ref_view_t *x, const ref_view_t *w, const ref_view_t *b, double eps,
                    double *out, double *stdz, double *std, double *mean);

/* Scalar sigmoid / silu in long double (better than float64 where long
 * double is wider, so that it also serves as reference for F64 outputs).
 * Never overflows: sigmoid(-inf) = 0, sigmoid(+inf) = 1, silu(-inf) = 0,
 * silu(+inf) = +inf; NaN in, NaN out. */
long double ref_sigmoid_scalar(long double x);
long double ref_silu_scalar(long double x);

/* Elementwise with numpy broadcasting of x to out_shape (x's ndim <= out's).
 * y: numel(out_shape) values (long double, see above). */
/* The input element that output element i (row-major over out_shape) reads
 * under numpy broadcasting. */
double ref_broadcast_get(const ref_view_t *x, size_t out_ndim, const size_t *out_shape, size_t i);
void ref_sigmoid(const ref_view_t *x, size_t out_ndim, const size_t *out_shape, long double *y);
void ref_silu(const ref_view_t *x, size_t out_ndim, const size_t *out_shape, long double *y);

#endif /* INFINIOP_TEST_REFERENCE_H */
