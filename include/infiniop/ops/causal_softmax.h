/*
 * infiniop/ops/causal_softmax.h - softmax under a causal mask.
 *
 * x, y: one shape [..., S, T] with T >= S >= 1 (ndim >= 2), one dtype (F16,
 * BF16 or F32), any strides, each tensor its own. In every S x T slice, row i
 * sees columns j <= i + (T - S) (the last S queries of a T-long causal
 * sequence). Visible entries: y = exp(x - m) / sum(exp(x - m)) over the
 * visible columns, m their maximum, in float32; masked entries are written as
 * exact zeros. A NaN among the visible entries makes the row NaN. y may be x
 * (in-place). Workspace: 0 bytes.
 *
 * Create errors: NULL_POINTER; BAD_TENSOR_DTYPE; BAD_TENSOR_SHAPE (ndim < 2,
 * shapes differ, T < S, T == 0); BAD_TENSOR_STRIDES (y's elements overlap).
 * Run errors: NULL_POINTER, INSUFFICIENT_WORKSPACE, BAD_PARAM (another
 * operator's descriptor, partial overlap of y and x).
 */
#ifndef __INFINIOP_CAUSAL_SOFTMAX_API_H__
#define __INFINIOP_CAUSAL_SOFTMAX_API_H__

#include "../operator_descriptor.h"

typedef struct InfiniopDescriptor *infiniopCausalSoftmaxDescriptor_t;

__C __export infiniStatus_t infiniopCreateCausalSoftmaxDescriptor(
    infiniopHandle_t handle,
    infiniopCausalSoftmaxDescriptor_t *desc_ptr,
    infiniopTensorDescriptor_t y_desc,
    infiniopTensorDescriptor_t x_desc);

__C __export infiniStatus_t infiniopGetCausalSoftmaxWorkspaceSize(infiniopCausalSoftmaxDescriptor_t desc, size_t *size);

__C __export infiniStatus_t infiniopCausalSoftmax(
    infiniopCausalSoftmaxDescriptor_t desc,
    void *workspace, size_t workspace_size,
    void *y, const void *x,
    void *stream);

__C __export infiniStatus_t infiniopDestroyCausalSoftmaxDescriptor(infiniopCausalSoftmaxDescriptor_t desc);

#endif /* __INFINIOP_CAUSAL_SOFTMAX_API_H__ */
