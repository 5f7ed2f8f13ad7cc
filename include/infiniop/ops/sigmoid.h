/*
 * infiniop/ops/sigmoid.h - elementwise sigmoid: y = 1 / (1 + exp(-x)).
 *
 * y and x: one dtype (F16, BF16, F32 or F64); any ndim, 0 included. x
 * has y's shape or a shape broadcastable to it (numpy rules; stride 0
 * broadcasting too); both may have any strides. Computed in float32 (float64
 * for F64) without overflow for any input; F32/F64 results within a few ulp
 * of the correctly rounded value, F16/BF16 within one ulp of the float32
 * result. y may be x (in-place). Workspace: 0 bytes.
 *
 * Create errors: NULL_POINTER; BAD_TENSOR_DTYPE (unsupported or differing
 * dtypes); BAD_TENSOR_SHAPE (x not broadcastable to y);
 * BAD_TENSOR_STRIDES (y's elements overlap).
 * Run errors: NULL_POINTER, INSUFFICIENT_WORKSPACE, BAD_PARAM (another
 * operator's descriptor, partial overlap of y and x).
 */
#ifndef __INFINIOP_SIGMOID_API_H__
#define __INFINIOP_SIGMOID_API_H__

#include "../operator_descriptor.h"

typedef struct InfiniopDescriptor *infiniopSigmoidDescriptor_t;

__C __export infiniStatus_t infiniopCreateSigmoidDescriptor(
    infiniopHandle_t handle,
    infiniopSigmoidDescriptor_t *desc_ptr,
    infiniopTensorDescriptor_t y_desc,
    infiniopTensorDescriptor_t x_desc);

__C __export infiniStatus_t infiniopGetSigmoidWorkspaceSize(infiniopSigmoidDescriptor_t desc, size_t *size);

__C __export infiniStatus_t infiniopSigmoid(
    infiniopSigmoidDescriptor_t desc,
    void *workspace, size_t workspace_size,
    void *y, const void *x,
    void *stream);

__C __export infiniStatus_t infiniopDestroySigmoidDescriptor(infiniopSigmoidDescriptor_t desc);

#endif /* __INFINIOP_SIGMOID_API_H__ */
