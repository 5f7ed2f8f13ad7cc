/*
 * layer_norm_tol.h - the layer_norm tolerances of test_layer_norm.c (whose
 * header comment derives them) for tl_check_close, shared with
 * test_cuda_large.c. With K = 16 + 2 sqrt(D) (ln_tol_k):
 *     |z - ref|   <= K eps32 (|ref| + mean|x| / std + 1)
 *     |std - ref| <= K eps32 |ref|
 *     |out - ref| <= tol(z) |w| + 4 eps32 (|out| + |b|)
 */
#ifndef INFINIOP_TEST_LAYER_NORM_TOL_H
#define INFINIOP_TEST_LAYER_NORM_TOL_H

#include "testlib.h"

#include <math.h>
#include <stddef.h>

typedef struct {
    size_t D;
    const double *meanabs_over_std; /* per row */
    const double *w, *b;            /* per column, |.| */
    const double *zref;
    double K;
} ln_tol_ctx;

static inline double ln_tol_k(size_t D) { return 16.0 + 2.0 * sqrt((double)D); }

static inline double ln_tol_z(size_t i, double ref, void *v) {
    ln_tol_ctx *c = v;
    return c->K * TL_EPS32 * (fabs(ref) + c->meanabs_over_std[i / c->D] + 1.0);
}
static inline double ln_tol_out(size_t i, double ref, void *v) {
    ln_tol_ctx *c = v;
    size_t j = i % c->D;
    return ln_tol_z(i, c->zref[i], v) * c->w[j] + 4.0 * TL_EPS32 * (fabs(ref) + c->b[j]);
}
static inline double ln_tol_std(size_t i, double ref, void *v) {
    (void)i;
    ln_tol_ctx *c = v;
    return c->K * TL_EPS32 * fabs(ref);
}

#endif /* INFINIOP_TEST_LAYER_NORM_TOL_H */
