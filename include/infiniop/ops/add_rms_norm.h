/*
 * infiniop/ops/add_rms_norm.h - fused residual add + RMS norm.
 *
 *   r            = a + b                          (float32)
 *   residual_out = round(r)
 *   y            = round(r * rsqrt(mean(r^2) + epsilon) * weight)
 * over the last dimension D of tensors of shape [rows..., D] (ndim >= 1).
 *
 * a, b, y, residual_out: one activation dtype (F16, BF16 or F32), one shape,
 * stride 1 on the last dimension; other dimensions any stride, each tensor
 * its own. weight: shape [D], any stride; dtype F16/BF16/F32 with F16 or BF16
 * activations, F32 with F32. y or residual_out may alias a or b exactly
 * (in-place). Workspace: 0 bytes.
 *
 * Create errors: NULL_POINTER (handle, desc_ptr or a tensor descriptor,
 * residual_out included); BAD_TENSOR_DTYPE; BAD_TENSOR_SHAPE (mismatched
 * shapes, ndim 0, D == 0); BAD_TENSOR_STRIDES (last stride not 1, an output
 * whose elements overlap); BAD_PARAM (epsilon NaN, infinite or negative).
 * Run errors: NULL_POINTER (a data pointer NULL while the tensor is not
 * empty); INSUFFICIENT_WORKSPACE; BAD_PARAM (a descriptor of another operator,
 * or an output partially overlapping another tensor).
 */
#ifndef __INFINIOP_ADD_RMS_NORM_API_H__
#define __INFINIOP_ADD_RMS_NORM_API_H__

#include "../operator_descriptor.h"

typedef struct InfiniopDescriptor *infiniopAddRMSNormDescriptor_t;

__C __export infiniStatus_t infiniopCreateAddRMSNormDescriptor(
    infiniopHandle_t handle,
    infiniopAddRMSNormDescriptor_t *desc_ptr,
    infiniopTensorDescriptor_t y_desc,
    infiniopTensorDescriptor_t residual_out_desc,
    infiniopTensorDescriptor_t a_desc,
    infiniopTensorDescriptor_t b_desc,
    infiniopTensorDescriptor_t weight_desc,
    float epsilon);

__C __export infiniStatus_t infiniopGetAddRMSNormWorkspaceSize(infiniopAddRMSNormDescriptor_t desc, size_t *size);

__C __export infiniStatus_t infiniopAddRMSNorm(
    infiniopAddRMSNormDescriptor_t desc,
    void *workspace, size_t workspace_size,
    void *y, void *residual_out,
    const void *a, const void *b, const void *weight,
    void *stream);

__C __export infiniStatus_t infiniopDestroyAddRMSNormDescriptor(infiniopAddRMSNormDescriptor_t desc);

#endif /* __INFINIOP_ADD_RMS_NORM_API_H__ */
