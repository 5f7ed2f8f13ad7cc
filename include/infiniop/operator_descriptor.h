/*
 * infiniop/operator_descriptor.h - what every operator descriptor answers.
 */
#ifndef __INFINIOP_OPERATOR_DESCRIPTOR_API_H__
#define __INFINIOP_OPERATOR_DESCRIPTOR_API_H__

#include "handle.h"
#include "tensor_descriptor.h"

/* Base of all operator descriptors (opaque). */
struct InfiniopDescriptor;

/* The device kind / device id an operator descriptor runs on.
 * Errors: NULL_POINTER; BAD_PARAM for a pointer that is not a live operator
 * descriptor. */
__C __export infiniStatus_t infiniopGetDescriptorDeviceType(const struct InfiniopDescriptor *desc_ptr, infiniDevice_t *device_type);
__C __export infiniStatus_t infiniopGetDescriptorDeviceId(const struct InfiniopDescriptor *desc_ptr, int *device_id);

#endif /* __INFINIOP_OPERATOR_DESCRIPTOR_API_H__ */
