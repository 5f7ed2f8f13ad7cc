/*
 * infiniop/ops/silu.h - elementwise silu: output = x * sigmoid(x).
 *
 * output and input: one dtype (F16, BF16, F32 or F64); any ndim, 0 included. input
 * has output's shape or a shape broadcastable to it (numpy rules; stride 0
 * broadcasting too); both may have any strides. Computed in float32 (float64
 * for F64) without overflow for any input; F32/F64 results within a few ulp
 * of the correctly rounded value, F16/BF16 within one ulp of the float32
 * result. output may be input (in-place). Workspace: 0 bytes.
 *
 * Create errors: NULL_POINTER; BAD_TENSOR_DTYPE (unsupported or differing
 * dtypes); BAD_TENSOR_SHAPE (input not broadcastable to output);
 * BAD_TENSOR_STRIDES (output's elements overlap).
 * Run errors: NULL_POINTER, INSUFFICIENT_WORKSPACE, BAD_PARAM (another
 * operator's descriptor, partial overlap of output and input).
 */
#ifndef __INFINIOP_SILU_API_H__
#define __INFINIOP_SILU_API_H__

#include "../operator_descriptor.h"

typedef struct InfiniopDescriptor *infiniopSiluDescriptor_t;

__C __export infiniStatus_t infiniopCreateSiluDescriptor(
    infiniopHandle_t handle,
    infiniopSiluDescriptor_t *desc_ptr,
    infiniopTensorDescriptor_t output_desc,
    infiniopTensorDescriptor_t input_desc);

__C __export infiniStatus_t infiniopGetSiluWorkspaceSize(infiniopSiluDescriptor_t desc, size_t *size);

__C __export infiniStatus_t infiniopSilu(
    infiniopSiluDescriptor_t desc,
    void *workspace, size_t workspace_size,
    void *output, const void *input,
    void *stream);

__C __export infiniStatus_t infiniopDestroySiluDescriptor(infiniopSiluDescriptor_t desc);

#endif /* __INFINIOP_SILU_API_H__ */
