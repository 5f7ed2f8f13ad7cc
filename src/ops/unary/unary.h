/*
 * ops/unary/unary.h - the elementwise activations (silu, sigmoid) share one
 * descriptor, one validation and one kernel per backend; their public entry
 * points (unary.c) are each a call of infiniop_unary_create /
 * infiniop_unary_run.
 */
#ifndef INFINIOP_OPS_UNARY_H
#define INFINIOP_OPS_UNARY_H

#include "core/layout.h"
#include "cuda/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    INFINIOP_UNARY_SILU = 0,
    INFINIOP_UNARY_SIGMOID = 1,
} infiniopUnaryKind;

typedef struct {
    infiniopUnaryKind kind;
    infiniDtype_t dtype;      /* F16, BF16, F32 or F64, both tensors */
    infiniopEltLayout layout; /* output and broadcast input, coalesced */
    infiniopSpan out_span, in_span;
    bool same_layout;         /* in-place allowed when the pointers match */
    infiniopCudaEltPlan cuda; /* NVIDIA descriptors: the launch plan */
} infiniopUnaryInfo;

typedef struct {
    struct InfiniopDescriptor base;
    infiniopUnaryInfo info;
} infiniopUnaryDescriptor;

infiniStatus_t infiniop_unary_create(infiniopOp_t op, const char *name, infiniopUnaryKind kind,
                                     infiniopHandle_t handle, struct InfiniopDescriptor **desc_ptr,
                                     infiniopTensorDescriptor_t out, infiniopTensorDescriptor_t in);
infiniStatus_t infiniop_unary_run(infiniopOp_t op, const char *name, struct InfiniopDescriptor *desc,
                                  size_t workspace_size, void *out, const void *in, void *stream);

/* Backends: compute out = f(in) for a validated, non-empty problem. */
infiniStatus_t infiniop_unary_cpu(const infiniopUnaryInfo *info, void *out, const void *in);
#ifdef INFINIOP_WITH_CUDA
/* At descriptor creation on an NVIDIA handle: fill info->cuda. */
infiniStatus_t infiniop_unary_cuda_plan(infiniopUnaryInfo *info, int device_id);
infiniStatus_t infiniop_unary_cuda(const infiniopUnaryInfo *info, int device_id, void *out, const void *in,
                                   void *stream);
#endif

#ifdef __cplusplus
}
#endif

#endif /* INFINIOP_OPS_UNARY_H */
