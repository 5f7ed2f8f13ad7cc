/*
 * infiniop/ops/layer_norm.h - layer normalisation with its statistics.
 *
 * Over the last dimension D of input [rows..., D] (ndim >= 1), in float32:
 *   mean = sum(x) / D,  var = sum((x - mean)^2) / D  (population, two-pass),
 *   std  = sqrt(var + eps)
 *   input_standardization = (x - mean) / std            shape [rows..., D]
 *   output = input_standardization * weight + bias       shape [rows..., D]
 *   input_std_deviation = std                            shape [rows...]
 * weight and bias have shape [D]; bias may be absent (NULL descriptor at
 * creation, NULL pointer at run). One dtype for all tensors: F16, BF16 or
 * F32. Any strides. output may alias input exactly. Workspace: 0 bytes.
 *
 * Create errors: NULL_POINTER; BAD_TENSOR_DTYPE; BAD_TENSOR_SHAPE (ndim 0,
 * D == 0, mismatched shapes); BAD_TENSOR_STRIDES (an output whose elements
 * overlap); BAD_PARAM (eps NaN, infinite or negative).
 * Run errors: NULL_POINTER, INSUFFICIENT_WORKSPACE, BAD_PARAM (another
 * operator's descriptor, bias pointer given or missing against the
 * descriptor, partial overlap).
 */
#ifndef __INFINIOP_LAYER_NORM_API_H__
#define __INFINIOP_LAYER_NORM_API_H__

#include "../operator_descriptor.h"

typedef struct InfiniopDescriptor *infiniopLayerNormDescriptor_t;

__C __export infiniStatus_t infiniopCreateLayerNormDescriptor(
    infiniopHandle_t handle,
    infiniopLayerNormDescriptor_t *desc_ptr,
    infiniopTensorDescriptor_t output_desc,
    infiniopTensorDescriptor_t input_standardization_desc,
    infiniopTensorDescriptor_t input_std_deviation_desc,
    infiniopTensorDescriptor_t input_desc,
    infiniopTensorDescriptor_t weight_desc,
    infiniopTensorDescriptor_t bias_desc,
    float eps);

__C __export infiniStatus_t infiniopGetLayerNormWorkspaceSize(infiniopLayerNormDescriptor_t desc, size_t *size);

__C __export infiniStatus_t infiniopLayerNorm(
    infiniopLayerNormDescriptor_t desc,
    void *workspace, size_t workspace_size,
    void *output, void *input_standardization, void *input_std_deviation,
    const void *input, const void *weight, const void *bias,
    void *stream);

__C __export infiniStatus_t infiniopDestroyLayerNormDescriptor(infiniopLayerNormDescriptor_t desc);

#endif /* __INFINIOP_LAYER_NORM_API_H__ */
