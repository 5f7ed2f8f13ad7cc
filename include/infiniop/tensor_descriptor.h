/*
 * infiniop/tensor_descriptor.h - tensor descriptors: shape, strides, dtype.
 */
#ifndef __INFINIOP_TENSOR_DESCRIPTOR_API_H__
#define __INFINIOP_TENSOR_DESCRIPTOR_API_H__

#include "../infinicore.h"

struct InfiniopTensorDescriptor;
typedef struct InfiniopTensorDescriptor *infiniopTensorDescriptor_t;

/* Describe a tensor of ndim dimensions (0 = a scalar). shape[i] may be 0
 * (an empty tensor). strides are in elements, one per dimension, and may be
 * negative or zero; strides == NULL means contiguous row-major. shape may be
 * NULL only when ndim is 0. The arrays are copied.
 * Errors: NULL_POINTER (desc_ptr, or shape with ndim > 0); BAD_TENSOR_DTYPE
 * (not a known infiniDtype_t, or INVALID); BAD_TENSOR_SHAPE (ndim above 64,
 * or an element count that overflows); BAD_TENSOR_STRIDES (a byte extent that
 * does not fit in 63 bits). Destroy with infiniopDestroyTensorDescriptor. */
__C __export infiniStatus_t infiniopCreateTensorDescriptor(infiniopTensorDescriptor_t *desc_ptr, size_t ndim, size_t const *shape, ptrdiff_t const *strides, infiniDtype_t dtype);

/* Destroy a tensor descriptor. Operator descriptors made from it keep
 * their own copy of what they need. */
__C __export infiniStatus_t infiniopDestroyTensorDescriptor(infiniopTensorDescriptor_t desc);

#endif /* __INFINIOP_TENSOR_DESCRIPTOR_API_H__ */
