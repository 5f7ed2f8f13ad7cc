/* core/layout.c - folding tensor layouts into kernel-ready structs. */
#include "layout.h"

#include <string.h>

infiniStatus_t infiniop_row_layout_init(infiniopRowLayout *L, const char *op,
                                        size_t nrowdims, const size_t *row_shape, size_t ncols,
                                        int ntensors, const ptrdiff_t *const *row_strides,
                                        const ptrdiff_t *col_strides) {
    memset(L, 0, sizeof *L);
    L->ncols = ncols;
    L->inv_ncols = ncols ? 1.0f / (float)ncols : 0.0f;
    for (int t = 0; t < ntensors; ++t) L->col_stride[t] = col_strides[t];
    size_t nrows = 1;
    for (size_t d = 0; d < nrowdims; ++d) nrows *= row_shape[d]; /* cannot overflow: numel was checked */
    L->nrows = nrows;
    if (nrows <= 1) return INFINI_STATUS_SUCCESS;

    size_t shp[INFINIOP_MAX_NDIM];
    ptrdiff_t str[INFINIOP_MAX_ROW_TENSORS][INFINIOP_MAX_NDIM];
    int m = 0;
    for (size_t d = 0; d < nrowdims; ++d) {
        size_t n = row_shape[d];
        if (n == 1) continue;
        bool merge = m > 0;
        for (int t = 0; t < ntensors && merge; ++t)
            merge = str[t][m - 1] == row_strides[t][d] * (ptrdiff_t)n;
        if (merge) {
            shp[m - 1] *= n;
            for (int t = 0; t < ntensors; ++t) str[t][m - 1] = row_strides[t][d];
        } else {
            shp[m] = n;
            for (int t = 0; t < ntensors; ++t) str[t][m] = row_strides[t][d];
            ++m;
        }
    }
    if (m > INFINIOP_MAX_DIMS)
        return infiniop_error(INFINI_STATUS_BAD_TENSOR_SHAPE,
                              "%s: %d row dimensions remain after merging; at most %d are supported", op, m,
                              INFINIOP_MAX_DIMS);
    L->ndims = m;
    for (int d = 0; d < m; ++d) {
        L->shape[d] = shp[d];
        if (nrows <= UINT32_MAX) L->div[d] = infiniop_div32_init((uint32_t)shp[d]);
        for (int t = 0; t < ntensors; ++t) L->stride[d][t] = str[t][d];
    }
    return INFINI_STATUS_SUCCESS;
}

/* |x| as an unsigned value: an empty tensor's strides are unchecked and may be
 * PTRDIFF_MIN, whose negation as a ptrdiff_t would overflow. */
static size_t absd(ptrdiff_t x) { return x < 0 ? (size_t)0 - (size_t)x : (size_t)x; }

infiniStatus_t infiniop_elt_layout_init(infiniopEltLayout *L, const char *op,
                                        const char *out_name, infiniopTensorDescriptor_t out,
                                        const char *in_name, infiniopTensorDescriptor_t in) {
    memset(L, 0, sizeof *L);
    size_t no = out->ndim, ni = in->ndim;
    /* Input dimensions beyond the output's must be 1. */
    for (size_t k = 0; k + no < ni; ++k)
        if (in->shape[k] != 1)
            return infiniop_error(INFINI_STATUS_BAD_TENSOR_SHAPE,
                                  "%s: %s has %zu dimensions, %s only %zu: %s.shape[%zu] = %zu does not broadcast",
                                  op, in_name, ni, out_name, no, in_name, k, in->shape[k]);
    size_t sh[INFINIOP_MAX_NDIM];
    ptrdiff_t os[INFINIOP_MAX_NDIM], is[INFINIOP_MAX_NDIM];
    int m = 0;
    for (size_t k = 0; k < no; ++k) {
        size_t n = out->shape[k];
        ptrdiff_t s_in = 0;
        if (k + ni >= no) { /* aligned to an input dimension */
            size_t j = k + ni - no;
            if (in->shape[j] == n) {
                s_in = in->strides[j];
            } else if (in->shape[j] != 1) {
                return infiniop_error(INFINI_STATUS_BAD_TENSOR_SHAPE,
                                      "%s: %s.shape[%zu] = %zu does not broadcast to %s.shape[%zu] = %zu", op,
                                      in_name, j, in->shape[j], out_name, k, n);
            }
        }
        if (n == 1) continue;
        /* Insert sorted by |output stride|, largest first (outermost). */
        int j = m++;
        while (j > 0 && (absd(os[j - 1]) < absd(out->strides[k]) ||
                         (absd(os[j - 1]) == absd(out->strides[k]) && absd(is[j - 1]) < absd(s_in)))) {
            sh[j] = sh[j - 1], os[j] = os[j - 1], is[j] = is[j - 1];
            --j;
        }
        sh[j] = n, os[j] = out->strides[k], is[j] = s_in;
    }
    L->n = out->numel;
    if (L->n == 0) m = 0;
    /* Coalesce an outer dimension into the inner one when both tensors allow. */
    int c = 0;
    for (int d = 0; d < m; ++d) {
        if (c > 0 && os[c - 1] == os[d] * (ptrdiff_t)sh[d] && is[c - 1] == is[d] * (ptrdiff_t)sh[d]) {
            sh[c - 1] *= sh[d];
            os[c - 1] = os[d];
            is[c - 1] = is[d];
        } else {
            sh[c] = sh[d], os[c] = os[d], is[c] = is[d];
            ++c;
        }
    }
    if (c > INFINIOP_MAX_DIMS)
        return infiniop_error(INFINI_STATUS_BAD_TENSOR_SHAPE,
                              "%s: %d dimensions remain after coalescing; at most %d are supported", op, c,
                              INFINIOP_MAX_DIMS);
    L->ndim = c;
    ptrdiff_t expect = 1;
    bool out_dense = true;
    for (int d = c - 1; d >= 0; --d) {
        L->shape[d] = sh[d];
        L->out_stride[d] = os[d];
        L->in_stride[d] = is[d];
        if (os[d] != expect) out_dense = false;
        expect *= (ptrdiff_t)sh[d];
    }
    L->out_contiguous = out_dense;
    L->contiguous = c == 0 || (c == 1 && os[0] == 1 && is[0] == 1);
    return INFINI_STATUS_SUCCESS;
}
