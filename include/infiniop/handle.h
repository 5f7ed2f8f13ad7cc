/*
 * infiniop/handle.h - library handles.
 */
#ifndef __INFINIOP_HANDLE_API_H__
#define __INFINIOP_HANDLE_API_H__

#include "../infinicore.h"

struct InfiniopHandle;
typedef struct InfiniopHandle *infiniopHandle_t;

/* Create a handle bound to the calling thread's current device (see
 * infinirtSetDevice; the CPU when never set). Operator descriptors created
 * from it run on that device.
 * Errors: NULL_POINTER (handle_ptr NULL); DEVICE_TYPE_NOT_SUPPORTED (a device
 * kind this build lacks); DEVICE_NOT_FOUND (NVIDIA selected but no GPU).
 * The handle is owned by the caller; destroy it with infiniopDestroyHandle
 * after every descriptor made from it is destroyed. */
__C __export infiniStatus_t infiniopCreateHandle(infiniopHandle_t *handle_ptr);

/* Destroy a handle. NULL_POINTER for NULL; BAD_PARAM for a pointer that is not
 * a live handle (detected by a tag). */
__C __export infiniStatus_t infiniopDestroyHandle(infiniopHandle_t handle);

#endif /* __INFINIOP_HANDLE_API_H__ */
