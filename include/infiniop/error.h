/*
 * infiniop/error.h - error reporting (an extension of the InfiniOP ABI).
 */
#ifndef __INFINIOP_ERROR_API_H__
#define __INFINIOP_ERROR_API_H__

#include "../infinicore.h"

/* The message of the last failing call of libinfiniop on the calling thread,
 * naming the tensor and dimension at fault, e.g.
 * "add_rms_norm: b: shape[1] is 4096 but a has 2048". Empty ("") when no call
 * on this thread has failed yet. Each thread has its own message; a
 * successful call leaves it unchanged. The string is owned by the library and
 * valid until the thread's next failing call. Never NULL. */
__C __export const char *infiniopGetLastErrorMessage(void);

/* A constant name for a status code, e.g. "INFINI_STATUS_BAD_TENSOR_SHAPE";
 * "INFINI_STATUS_UNKNOWN" for values that are not status codes. */
__C __export const char *infiniopGetStatusString(infiniStatus_t status);

#endif /* __INFINIOP_ERROR_API_H__ */
