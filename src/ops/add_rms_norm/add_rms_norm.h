/*
 * ops/add_rms_norm/add_rms_norm.h - what the descriptor folds the tensors
 * into, and the backend kernels that consume it.
 */
#ifndef INFINIOP_OPS_ADD_RMS_NORM_H
#define INFINIOP_OPS_ADD_RMS_NORM_H

#include "core/layout.h"
#include "cuda/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Tensor numbers in the row layout. */
enum { ARN_Y = 0, ARN_RES = 1, ARN_A = 2, ARN_B = 3 };

/* The GPU kernels take this by value: the scalars they read come first,
 * then the row layout, whose hot fields lead (core/layout.h). */
typedef struct {
    float epsilon;
    infiniDtype_t atype;     /* a, b, y, residual_out */
    infiniDtype_t wtype;     /* weight */
    ptrdiff_t w_stride;
    infiniopRowLayout rows;  /* y, residual_out, a, b: col_stride is 1 (or D == 1) */
    infiniopSpan span[5];    /* y, residual_out, a, b, weight */
    bool same_layout[2][2];  /* [y, residual_out][a, b]: exact in-place allowed */
    infiniopCudaRowPlan cuda; /* NVIDIA descriptors: the launch plan */
} infiniopAddRMSNormInfo;

infiniStatus_t infiniop_add_rms_norm_cpu(const infiniopAddRMSNormInfo *info, void *y, void *residual_out,
                                         const void *a, const void *b, const void *w);
#ifdef INFINIOP_WITH_CUDA
/* At descriptor creation on an NVIDIA handle: fill info->cuda. */
infiniStatus_t infiniop_add_rms_norm_cuda_plan(infiniopAddRMSNormInfo *info, int device_id);
infiniStatus_t infiniop_add_rms_norm_cuda(const infiniopAddRMSNormInfo *info, int device_id, void *y,
                                          void *residual_out, const void *a, const void *b, const void *w,
                                          void *stream);
#endif

#ifdef __cplusplus
}
#endif

#endif /* INFINIOP_OPS_ADD_RMS_NORM_H */
