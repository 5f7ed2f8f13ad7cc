/* core/handle.c - handles: the device an operator descriptor will run on. */
#include "common.h"

#include <stdlib.h>

__C __export infiniStatus_t infiniopCreateHandle(infiniopHandle_t *handle_ptr) {
    const char *op = "infiniopCreateHandle";
    if (!handle_ptr) return infiniop_error(INFINI_STATUS_NULL_POINTER, "%s: handle_ptr is NULL", op);
    infiniDevice_t device;
    int id;
    infiniStatus_t st = infinirtGetDevice(&device, &id);
    if (st != INFINI_STATUS_SUCCESS) return infiniop_error(st, "%s: cannot read the current device", op);
    if (device != INFINI_DEVICE_CPU && device != INFINI_DEVICE_NVIDIA)
        return infiniop_error(INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED, "%s: device kind %d is not supported", op,
                              (int)device);
#ifndef INFINIOP_WITH_CUDA
    if (device == INFINI_DEVICE_NVIDIA)
        return infiniop_error(INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED,
                              "%s: this build of libinfiniop has no NVIDIA backend", op);
#endif
    int count = 0;
    st = infinirtGetDeviceCount(device, &count);
    if (st != INFINI_STATUS_SUCCESS || id < 0 || id >= count)
        return infiniop_error(INFINI_STATUS_DEVICE_NOT_FOUND, "%s: device %d of kind %d not found (%d present)", op,
                              id, (int)device, count);
    struct InfiniopHandle *h = malloc(sizeof *h);
    if (!h) return infiniop_error(INFINI_STATUS_INTERNAL_ERROR, "%s: out of host memory", op);
    h->magic = INFINIOP_HANDLE_MAGIC;
    h->device = device;
    h->device_id = id;
    *handle_ptr = h;
    return INFINI_STATUS_SUCCESS;
}

__C __export infiniStatus_t infiniopDestroyHandle(infiniopHandle_t handle) {
    infiniStatus_t st = infiniop_check_handle("infiniopDestroyHandle", handle);
    if (st != INFINI_STATUS_SUCCESS) return st;
    handle->magic = 0;
    infiniop_retire(handle);
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infiniop_check_handle(const char *op, infiniopHandle_t handle) {
    if (!handle) return infiniop_error(INFINI_STATUS_NULL_POINTER, "%s: handle is NULL", op);
    if (handle->magic != INFINIOP_HANDLE_MAGIC)
        return infiniop_error(INFINI_STATUS_BAD_PARAM, "%s: handle is not a live handle", op);
    return INFINI_STATUS_SUCCESS;
}
