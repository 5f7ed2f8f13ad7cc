/*
 * core/common.h - what every part of libinfiniop shares: limits, the
 * last-error mechanism, dtype facts, and the internal forms of tensor
 * descriptors, handles and operator descriptors.
 */
#ifndef INFINIOP_CORE_COMMON_H
#define INFINIOP_CORE_COMMON_H

#include "infiniop.h"
#include "infinirt.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A tensor descriptor may have up to this many dimensions. */
#define INFINIOP_MAX_NDIM 64
/* Kernels take layouts by value with up to this many dimensions after
 * merging (row dimensions of the row-wise operators, coalesced dimensions of
 * the elementwise ones). More non-mergeable dimensions: BAD_TENSOR_SHAPE. */
#define INFINIOP_MAX_DIMS 12

/* Set the calling thread's last-error message (printf format) and return
 * status, so that a check reads `return infiniop_error(STATUS, "...", ...)`. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
infiniStatus_t infiniop_error(infiniStatus_t status, const char *fmt, ...);

/* Bytes per element of a known dtype; 0 for unknown values. */
size_t infiniop_dtype_size(infiniDtype_t dtype);
/* "F16", "BF16", ...; "unknown" for values that are not dtypes. */
const char *infiniop_dtype_name(infiniDtype_t dtype);

/* Free the memory of a destroyed object (tag already cleared) after a delay:
 * the last few hundred destroyed objects stay allocated, so a stale pointer
 * to one of them is answered with BAD_PARAM instead of a read of freed
 * memory (core/retire.c). */
void infiniop_retire(void *p);

/* ---------------------------------------------------------------- tensors */
#define INFINIOP_TENSOR_MAGIC 0x54656e73u /* "Tens" */

struct InfiniopTensorDescriptor {
    uint32_t magic;
    infiniDtype_t dtype;
    size_t ndim;
    size_t numel;          /* product of shape (0 for an empty tensor) */
    ptrdiff_t min_offset;  /* lowest and highest element offsets reached */
    ptrdiff_t max_offset;  /* (both 0 for an empty tensor) */
    size_t *shape;         /* ndim entries, stored after the struct */
    ptrdiff_t *strides;    /* ndim entries, in elements */
};

/* Check that t is a live tensor descriptor; name says which argument it is
 * in the message ("<op>: <name>: ..."). */
infiniStatus_t infiniop_check_tensor(const char *op, const char *name, infiniopTensorDescriptor_t t);

/* True when the tensor's elements occupy distinct addresses (no stride 0 on
 * a dimension longer than 1, no two indices at one address). Decided by a
 * sufficient test: dimensions sorted by |stride| must each step past the
 * extent of the ones below. */
bool infiniop_tensor_is_non_overlapping(infiniopTensorDescriptor_t t);

/* Byte range [lo, hi) that a tensor's elements occupy relative to its data
 * pointer; empty (lo == hi == 0) for an empty tensor. */
typedef struct {
    ptrdiff_t lo, hi;
} infiniopSpan;
infiniopSpan infiniop_tensor_span(infiniopTensorDescriptor_t t);

/* True when a and b have the same shape, strides and element size. */
bool infiniop_tensor_same_layout(infiniopTensorDescriptor_t a, infiniopTensorDescriptor_t b);

/* Run-time aliasing rule: an output (out, out_span) may be exactly an input
 * (same pointer and same layout: same_layout true) or disjoint from it; any
 * other intersection of the two byte ranges is rejected with BAD_PARAM. */
infiniStatus_t infiniop_check_alias(const char *op,
                                    const char *out_name, const void *out, infiniopSpan out_span,
                                    const char *in_name, const void *in, infiniopSpan in_span,
                                    bool same_layout);

/* ---------------------------------------------------------------- handles */
#define INFINIOP_HANDLE_MAGIC 0x48616e64u /* "Hand" */

struct InfiniopHandle {
    uint32_t magic;
    infiniDevice_t device;
    int device_id;
};

infiniStatus_t infiniop_check_handle(const char *op, infiniopHandle_t handle);

/* ---------------------------------------------------------------- operator descriptors */
#define INFINIOP_DESC_MAGIC 0x4f704465u /* "OpDe" */

typedef enum {
    INFINIOP_OP_ADD_RMS_NORM = 1,
    INFINIOP_OP_CAUSAL_SOFTMAX = 2,
    INFINIOP_OP_LAYER_NORM = 3,
    INFINIOP_OP_SILU = 4,
    INFINIOP_OP_SIGMOID = 5,
} infiniopOp_t;

/* "add_rms_norm", "causal_softmax", ... */
const char *infiniop_op_name(infiniopOp_t op);

/* First member of every operator descriptor. */
struct InfiniopDescriptor {
    uint32_t magic;
    infiniopOp_t op;
    infiniDevice_t device;
    int device_id;
};

/* Allocate a zeroed descriptor of `size` bytes whose header says op and the
 * handle's device; NULL when out of memory. */
void *infiniop_descriptor_new(size_t size, infiniopOp_t op, infiniopHandle_t handle);
/* Check that desc is a live descriptor of operator op (BAD_PARAM for a
 * descriptor of another operator or a destroyed one, NULL_POINTER for NULL). */
infiniStatus_t infiniop_check_descriptor(const char *opname, const struct InfiniopDescriptor *desc, infiniopOp_t op);
/* Check and free. */
infiniStatus_t infiniop_descriptor_destroy(const char *opname, struct InfiniopDescriptor *desc, infiniopOp_t op);

/* The common run-time prologue of every operator: descriptor check and the
 * workspace check (need 0 bytes here; a larger need would be compared). */
infiniStatus_t infiniop_check_run(const char *opname, const struct InfiniopDescriptor *desc, infiniopOp_t op,
                                  size_t workspace_size, size_t workspace_needed);

/* The run call's answer for a device kind without a backend in this build
 * (stream: unused, named so that callers need no #ifdef). */
infiniStatus_t infiniop_no_backend(const char *opname, const struct InfiniopDescriptor *desc, void *stream);

/* infiniopGetXWorkspaceSize for every operator: 0 bytes. */
infiniStatus_t infiniop_workspace_size(const char *opname, const struct InfiniopDescriptor *desc, infiniopOp_t op,
                                       size_t *size);

/* Run-time check that a data pointer is aligned to its element size (the
 * kernels load whole elements; a misaligned pointer is undefined behaviour on
 * the CPU and a fatal, context-wide fault on a GPU): BAD_PARAM otherwise. */
static inline infiniStatus_t infiniop_check_aligned(const char *op, const char *name, const void *p, size_t es) {
    if (es > 1 && ((uintptr_t)p & (es - 1)) != 0)
        return infiniop_error(INFINI_STATUS_BAD_PARAM, "%s: %s pointer %p is not aligned to its %zu-byte elements", op,
                              name, p, es);
    return INFINI_STATUS_SUCCESS;
}

/* One data pointer of a run call, as the run-time checks see it. */
typedef struct {
    const char *name;   /* as the public header names it */
    const void *ptr;
    infiniopSpan span;  /* byte range of its elements (from the descriptor) */
    size_t elem_size;
    bool optional;      /* may be NULL (layer_norm's absent bias) */
} infiniopRunTensor;

/* The run-time pointer checks of every operator. t[0..nout) are outputs.
 * Every pointer must be non-NULL (unless optional) and aligned to its
 * element size (infiniop_check_aligned); every output must be apart from
 * every other tensor, or exactly an input k (same pointer) whose bit
 * (1u << k) is set in inplace[o], i.e. one of the same layout. */
infiniStatus_t infiniop_check_run_tensors(const char *op, const infiniopRunTensor *t, int n, int nout,
                                          const uint32_t *inplace);

/* Dtype helpers for validation. */
static inline bool infiniop_is_half_or_float(infiniDtype_t t) {
    return t == INFINI_DTYPE_F16 || t == INFINI_DTYPE_BF16 || t == INFINI_DTYPE_F32;
}

#ifdef __cplusplus
}
#endif

#endif /* INFINIOP_CORE_COMMON_H */
