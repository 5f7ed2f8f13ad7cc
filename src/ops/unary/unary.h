/*
 * ops/unary/unary.h - the elementwise activations (silu, sigmoid) share one
 * descriptor, one validation and one kernel per backend; ops/silu/silu.c
 * and ops/sigmoid/sigmoid.c are their public entry points.
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

/* The four public functions of one activation, e.g.
 * INFINIOP_UNARY_PUBLIC_API(Silu, "silu", INFINIOP_OP_SILU, INFINIOP_UNARY_SILU)
 * defines infiniopCreateSiluDescriptor, infiniopGetSiluWorkspaceSize,
 * infiniopSilu and infiniopDestroySiluDescriptor. */
#define INFINIOP_UNARY_PUBLIC_API(Name, name, OP, KIND)                                                                \
    __C __export infiniStatus_t infiniopCreate##Name##Descriptor(infiniopHandle_t handle,                              \
                                                                 infiniop##Name##Descriptor_t *desc_ptr,               \
                                                                 infiniopTensorDescriptor_t out_desc,                  \
                                                                 infiniopTensorDescriptor_t in_desc) {                 \
        return infiniop_unary_create(OP, name, KIND, handle, desc_ptr, out_desc, in_desc);                             \
    }                                                                                                                  \
    __C __export infiniStatus_t infiniopGet##Name##WorkspaceSize(infiniop##Name##Descriptor_t desc, size_t *size) {    \
        return infiniop_workspace_size(name, desc, OP, size);                                                          \
    }                                                                                                                  \
    __C __export infiniStatus_t infiniop##Name(infiniop##Name##Descriptor_t desc, void *workspace,                     \
                                               size_t workspace_size, void *out, const void *in, void *stream) {       \
        (void)workspace;                                                                                               \
        return infiniop_unary_run(OP, name, desc, workspace_size, out, in, stream);                                    \
    }                                                                                                                  \
    __C __export infiniStatus_t infiniopDestroy##Name##Descriptor(infiniop##Name##Descriptor_t desc) {                 \
        return infiniop_descriptor_destroy(name, desc, OP);                                                            \
    }

#ifdef __cplusplus
}
#endif

#endif /* INFINIOP_OPS_UNARY_H */
