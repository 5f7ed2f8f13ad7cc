/* core/error.c - status names and the per-thread last-error message. */
#include "common.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_message[512];

infiniStatus_t infiniop_error(infiniStatus_t status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    return status;
}

__C __export const char *infiniopGetLastErrorMessage(void) {
    return last_message;
}

__C __export const char *infiniopGetStatusString(infiniStatus_t status) {
    switch (status) {
    case INFINI_STATUS_SUCCESS: return "INFINI_STATUS_SUCCESS";
    case INFINI_STATUS_INTERNAL_ERROR: return "INFINI_STATUS_INTERNAL_ERROR";
    case INFINI_STATUS_NOT_IMPLEMENTED: return "INFINI_STATUS_NOT_IMPLEMENTED";
    case INFINI_STATUS_BAD_PARAM: return "INFINI_STATUS_BAD_PARAM";
    case INFINI_STATUS_NULL_POINTER: return "INFINI_STATUS_NULL_POINTER";
    case INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED: return "INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED";
    case INFINI_STATUS_DEVICE_NOT_FOUND: return "INFINI_STATUS_DEVICE_NOT_FOUND";
    case INFINI_STATUS_DEVICE_NOT_INITIALIZED: return "INFINI_STATUS_DEVICE_NOT_INITIALIZED";
    case INFINI_STATUS_DEVICE_ARCHITECTURE_NOT_SUPPORTED: return "INFINI_STATUS_DEVICE_ARCHITECTURE_NOT_SUPPORTED";
    case INFINI_STATUS_BAD_TENSOR_DTYPE: return "INFINI_STATUS_BAD_TENSOR_DTYPE";
    case INFINI_STATUS_BAD_TENSOR_SHAPE: return "INFINI_STATUS_BAD_TENSOR_SHAPE";
    case INFINI_STATUS_BAD_TENSOR_STRIDES: return "INFINI_STATUS_BAD_TENSOR_STRIDES";
    case INFINI_STATUS_INSUFFICIENT_WORKSPACE: return "INFINI_STATUS_INSUFFICIENT_WORKSPACE";
    }
    return "INFINI_STATUS_UNKNOWN";
}

size_t infiniop_dtype_size(infiniDtype_t dtype) {
    switch (dtype) {
    case INFINI_DTYPE_BYTE: case INFINI_DTYPE_BOOL: case INFINI_DTYPE_I8: case INFINI_DTYPE_U8:
    case INFINI_DTYPE_F8:
        return 1;
    case INFINI_DTYPE_I16: case INFINI_DTYPE_U16: case INFINI_DTYPE_F16: case INFINI_DTYPE_BF16:
    case INFINI_DTYPE_C16:
        return 2;
    case INFINI_DTYPE_I32: case INFINI_DTYPE_U32: case INFINI_DTYPE_F32: case INFINI_DTYPE_C32:
        return 4;
    case INFINI_DTYPE_I64: case INFINI_DTYPE_U64: case INFINI_DTYPE_F64: case INFINI_DTYPE_C64:
        return 8;
    case INFINI_DTYPE_C128:
        return 16;
    case INFINI_DTYPE_INVALID:
        return 0;
    }
    return 0;
}

const char *infiniop_dtype_name(infiniDtype_t dtype) {
    static const char *const names[] = {
        "INVALID", "BYTE", "BOOL", "I8", "I16", "I32", "I64", "U8", "U16", "U32", "U64",
        "F8", "F16", "F32", "F64", "C16", "C32", "C64", "C128", "BF16"};
    if ((int)dtype >= 0 && (int)dtype < (int)(sizeof names / sizeof names[0])) return names[dtype];
    return "unknown";
}
