/* core/tensor.c - tensor descriptors: validated once, at creation. */
#include "common.h"

#include <stdlib.h>
#include <string.h>

__C __export infiniStatus_t infiniopCreateTensorDescriptor(infiniopTensorDescriptor_t *desc_ptr, size_t ndim,
                                                           size_t const *shape, ptrdiff_t const *strides,
                                                           infiniDtype_t dtype) {
    const char *op = "infiniopCreateTensorDescriptor";
    if (!desc_ptr) return infiniop_error(INFINI_STATUS_NULL_POINTER, "%s: desc_ptr is NULL", op);
    if (ndim > 0 && !shape) return infiniop_error(INFINI_STATUS_NULL_POINTER, "%s: shape is NULL with ndim %zu", op, ndim);
    size_t es = infiniop_dtype_size(dtype);
    if (es == 0)
        return infiniop_error(INFINI_STATUS_BAD_TENSOR_DTYPE, "%s: dtype %d is not a valid infiniDtype_t", op, (int)dtype);
    if (ndim > INFINIOP_MAX_NDIM)
        return infiniop_error(INFINI_STATUS_BAD_TENSOR_SHAPE, "%s: ndim %zu exceeds the limit of %d", op, ndim,
                              INFINIOP_MAX_NDIM);

    /* Element count, checked for overflow. */
    size_t numel = 1;
    for (size_t i = 0; i < ndim; ++i) {
        if (shape[i] > (size_t)PTRDIFF_MAX || __builtin_mul_overflow(numel, shape[i], &numel))
            return infiniop_error(INFINI_STATUS_BAD_TENSOR_SHAPE,
                                  "%s: shape[%zu] = %zu makes the element count overflow", op, i, shape[i]);
    }

    struct InfiniopTensorDescriptor *t =
        malloc(sizeof *t + ndim * (sizeof(size_t) + sizeof(ptrdiff_t)));
    if (!t) return infiniop_error(INFINI_STATUS_INTERNAL_ERROR, "%s: out of host memory", op);
    t->shape = (size_t *)(t + 1);
    t->strides = (ptrdiff_t *)(t->shape + ndim);
    if (ndim) memcpy(t->shape, shape, ndim * sizeof(size_t));

    /* Strides: given, or contiguous row-major. Offsets reached, checked. */
    ptrdiff_t lo = 0, hi = 0, contiguous = 1;
    bool bad = false;
    size_t bad_dim = 0;
    for (size_t k = ndim; k-- > 0;) {
        ptrdiff_t s;
        if (strides) {
            s = strides[k];
        } else {
            s = contiguous;
            if (shape[k] > 1 && __builtin_mul_overflow(contiguous, (ptrdiff_t)shape[k], &contiguous)) {
                bad = true, bad_dim = k;
                break;
            }
        }
        t->strides[k] = s;
        if (numel == 0 || shape[k] <= 1) continue;
        ptrdiff_t reach;
        if (__builtin_mul_overflow(s, (ptrdiff_t)(shape[k] - 1), &reach) ||
            (reach > 0 && __builtin_add_overflow(hi, reach, &hi)) ||
            (reach < 0 && __builtin_add_overflow(lo, reach, &lo))) {
            bad = true, bad_dim = k;
            break;
        }
    }
    /* The byte extent (hi - lo + 1) * es must fit in a ptrdiff_t. */
    ptrdiff_t extent, bytes;
    if (!bad && (__builtin_sub_overflow(hi, lo, &extent) || __builtin_add_overflow(extent, 1, &extent) ||
                 __builtin_mul_overflow(extent, (ptrdiff_t)es, &bytes) ||
                 __builtin_mul_overflow(lo, (ptrdiff_t)es, &bytes) ||
                 __builtin_mul_overflow(hi + 1, (ptrdiff_t)es, &bytes))) {
        bad = true, bad_dim = ndim ? ndim - 1 : 0;
    }
    if (bad) {
        free(t);
        return infiniop_error(INFINI_STATUS_BAD_TENSOR_STRIDES,
                              "%s: dimension %zu (shape %zu) makes the tensor's byte extent overflow", op,
                              bad_dim, shape[bad_dim]);
    }
    t->magic = INFINIOP_TENSOR_MAGIC;
    t->dtype = dtype;
    t->ndim = ndim;
    t->numel = numel;
    t->min_offset = lo;
    t->max_offset = hi;
    *desc_ptr = t;
    return INFINI_STATUS_SUCCESS;
}

__C __export infiniStatus_t infiniopDestroyTensorDescriptor(infiniopTensorDescriptor_t desc) {
    infiniStatus_t st = infiniop_check_tensor("infiniopDestroyTensorDescriptor", "desc", desc);
    if (st != INFINI_STATUS_SUCCESS) return st;
    desc->magic = 0;
    infiniop_retire(desc);
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infiniop_check_tensor(const char *op, const char *name, infiniopTensorDescriptor_t t) {
    if (!t) return infiniop_error(INFINI_STATUS_NULL_POINTER, "%s: %s: tensor descriptor is NULL", op, name);
    if (t->magic != INFINIOP_TENSOR_MAGIC)
        return infiniop_error(INFINI_STATUS_BAD_PARAM, "%s: %s: not a live tensor descriptor", op, name);
    return INFINI_STATUS_SUCCESS;
}

bool infiniop_tensor_is_non_overlapping(infiniopTensorDescriptor_t t) {
    if (t->numel <= 1) return true;
    /* Insertion-sort the dimensions longer than 1 by |stride|. */
    size_t n = 0;
    ptrdiff_t st[INFINIOP_MAX_NDIM];
    size_t sh[INFINIOP_MAX_NDIM];
    for (size_t i = 0; i < t->ndim; ++i) {
        if (t->shape[i] <= 1) continue;
        ptrdiff_t s = t->strides[i] < 0 ? -t->strides[i] : t->strides[i];
        size_t j = n++;
        while (j > 0 && st[j - 1] > s) {
            st[j] = st[j - 1];
            sh[j] = sh[j - 1];
            --j;
        }
        st[j] = s;
        sh[j] = t->shape[i];
    }
    ptrdiff_t reach = 0; /* highest offset reached by the dimensions so far */
    for (size_t i = 0; i < n; ++i) {
        if (st[i] <= reach) return false;
        reach += st[i] * (ptrdiff_t)(sh[i] - 1); /* cannot overflow: checked at creation */
    }
    return true;
}

infiniopSpan infiniop_tensor_span(infiniopTensorDescriptor_t t) {
    infiniopSpan s = {0, 0};
    if (t->numel == 0) return s;
    ptrdiff_t es = (ptrdiff_t)infiniop_dtype_size(t->dtype);
    s.lo = t->min_offset * es;
    s.hi = (t->max_offset + 1) * es;
    return s;
}

bool infiniop_tensor_same_layout(infiniopTensorDescriptor_t a, infiniopTensorDescriptor_t b) {
    if (a->ndim != b->ndim || infiniop_dtype_size(a->dtype) != infiniop_dtype_size(b->dtype)) return false;
    for (size_t i = 0; i < a->ndim; ++i)
        if (a->shape[i] != b->shape[i] || (a->shape[i] > 1 && a->strides[i] != b->strides[i])) return false;
    return true;
}

infiniStatus_t infiniop_check_alias(const char *op, const char *out_name, const void *out, infiniopSpan out_span,
                                    const char *in_name, const void *in, infiniopSpan in_span, bool same_layout) {
    if (out_span.hi == out_span.lo || in_span.hi == in_span.lo || !out || !in) return INFINI_STATUS_SUCCESS;
    uintptr_t o = (uintptr_t)out, i = (uintptr_t)in;
    uintptr_t olo = o + (uintptr_t)out_span.lo, ohi = o + (uintptr_t)out_span.hi;
    uintptr_t ilo = i + (uintptr_t)in_span.lo, ihi = i + (uintptr_t)in_span.hi;
    if (olo >= ihi || ilo >= ohi) return INFINI_STATUS_SUCCESS;
    if (o == i && same_layout) return INFINI_STATUS_SUCCESS;
    return infiniop_error(INFINI_STATUS_BAD_PARAM,
                          "%s: %s partially overlaps %s (only exact in-place aliasing, same pointer and layout, "
                          "is allowed)",
                          op, out_name, in_name);
}

/* The checks below, with their messages: taken only when the fast test
 * of infiniop_check_run_tensors finds something to report. */
static infiniStatus_t check_run_tensors_slow(const char *op, const infiniopRunTensor *t, int n, int nout,
                                             const uint32_t *inplace) {
    infiniStatus_t st;
    for (int i = 0; i < n; ++i) {
        if (!t[i].ptr) {
            if (t[i].optional) continue;
            return infiniop_error(INFINI_STATUS_NULL_POINTER, "%s: %s pointer is NULL", op, t[i].name);
        }
        if ((st = infiniop_check_aligned(op, t[i].name, t[i].ptr, t[i].elem_size))) return st;
    }
    for (int o = 0; o < nout; ++o)
        for (int i = 0; i < n; ++i) {
            if (i == o) continue;
            bool same = (inplace[o] >> i) & 1u;
            if ((st = infiniop_check_alias(op, t[o].name, t[o].ptr, t[o].span, t[i].name, t[i].ptr, t[i].span, same)))
                return st;
        }
    return INFINI_STATUS_SUCCESS;
}

/* Every call of every operator passes here (the decode case's per-call
 * cost): one pass computes each tensor's byte range, OR-s the misalignment
 * and NULL bits, then tests each output against each other tensor with two
 * comparisons; only a finding takes the slow path, which reports it. */
infiniStatus_t infiniop_check_run_tensors(const char *op, const infiniopRunTensor *t, int n, int nout,
                                          const uint32_t *inplace) {
    enum { MAXT = 8 };
    if (n > MAXT) return check_run_tensors_slow(op, t, n, nout, inplace);
    uintptr_t lo[MAXT], hi[MAXT], flags = 0;
    for (int i = 0; i < n; ++i) {
        uintptr_t p = (uintptr_t)t[i].ptr;
        flags |= (p & (t[i].elem_size - 1)) | (uintptr_t)(!p && !t[i].optional);
        bool none = !p || t[i].span.hi == t[i].span.lo; /* nothing to overlap */
        lo[i] = none ? UINTPTR_MAX : p + (uintptr_t)t[i].span.lo;
        hi[i] = none ? 0 : p + (uintptr_t)t[i].span.hi;
    }
    for (int o = 0; o < nout; ++o)
        for (int i = 0; i < n; ++i)
            if (i != o && lo[o] < hi[i] && lo[i] < hi[o] &&
                !(t[o].ptr == t[i].ptr && ((inplace[o] >> i) & 1u)))
                flags = 1;
    return flags ? check_run_tensors_slow(op, t, n, nout, inplace) : INFINI_STATUS_SUCCESS;
}
