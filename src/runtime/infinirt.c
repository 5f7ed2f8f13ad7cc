/*
 * runtime/infinirt.c - the public libinfinirt entry points: keep the
 * calling thread's current device and forward to its backend.
 */
#include "backend.h"

static _Thread_local infiniDevice_t current_device = INFINI_DEVICE_CPU;
static _Thread_local int current_id = 0;

static const infinirtBackend *backend_of(infiniDevice_t device) {
    switch (device) {
    case INFINI_DEVICE_CPU: return &infinirt_cpu_backend;
#ifdef INFINIOP_WITH_CUDA
    case INFINI_DEVICE_NVIDIA: return &infinirt_cuda_backend;
#endif
    default: return NULL;
    }
}

#define CURRENT (backend_of(current_device))

__C __export infiniStatus_t infinirtInit(void) { return INFINI_STATUS_SUCCESS; }

__C __export infiniStatus_t infinirtGetAllDeviceCount(int *count_array) {
    if (!count_array) return INFINI_STATUS_NULL_POINTER;
    for (int d = 0; d < INFINI_DEVICE_TYPE_COUNT; ++d) {
        const infinirtBackend *b = backend_of((infiniDevice_t)d);
        int n = 0;
        if (b && b->get_device_count(&n) != INFINI_STATUS_SUCCESS) n = 0;
        count_array[d] = n;
    }
    return INFINI_STATUS_SUCCESS;
}

__C __export infiniStatus_t infinirtGetDeviceCount(infiniDevice_t device, int *count) {
    if (!count) return INFINI_STATUS_NULL_POINTER;
    if ((int)device < 0 || device >= INFINI_DEVICE_TYPE_COUNT) return INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED;
    const infinirtBackend *b = backend_of(device);
    if (!b) {
        *count = 0;
        return INFINI_STATUS_SUCCESS;
    }
    int n = 0;
    if (b->get_device_count(&n) != INFINI_STATUS_SUCCESS) n = 0;
    *count = n;
    return INFINI_STATUS_SUCCESS;
}

__C __export infiniStatus_t infinirtSetDevice(infiniDevice_t device, int device_id) {
    const infinirtBackend *b = backend_of(device);
    if (!b) return INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED;
    int n = 0;
    if (b->get_device_count(&n) != INFINI_STATUS_SUCCESS || device_id < 0 || device_id >= n)
        return INFINI_STATUS_DEVICE_NOT_FOUND;
    infiniStatus_t st = b->set_device(device_id);
    if (st != INFINI_STATUS_SUCCESS) return st;
    current_device = device;
    current_id = device_id;
    return INFINI_STATUS_SUCCESS;
}

__C __export infiniStatus_t infinirtGetDevice(infiniDevice_t *device_ptr, int *device_id_ptr) {
    if (!device_ptr || !device_id_ptr) return INFINI_STATUS_NULL_POINTER;
    *device_ptr = current_device;
    *device_id_ptr = current_id;
    return INFINI_STATUS_SUCCESS;
}

__C __export infiniStatus_t infinirtDeviceSynchronize(void) { return CURRENT->device_synchronize(); }

__C __export infiniStatus_t infinirtStreamCreate(infinirtStream_t *stream_ptr) {
    if (!stream_ptr) return INFINI_STATUS_NULL_POINTER;
    return CURRENT->stream_create(stream_ptr);
}
__C __export infiniStatus_t infinirtStreamDestroy(infinirtStream_t stream) { return CURRENT->stream_destroy(stream); }
__C __export infiniStatus_t infinirtStreamSynchronize(infinirtStream_t stream) {
    return CURRENT->stream_synchronize(stream);
}
__C __export infiniStatus_t infinirtStreamWaitEvent(infinirtStream_t stream, infinirtEvent_t event) {
    return CURRENT->stream_wait_event(stream, event);
}

__C __export infiniStatus_t infinirtEventCreate(infinirtEvent_t *event_ptr) {
    if (!event_ptr) return INFINI_STATUS_NULL_POINTER;
    return CURRENT->event_create(event_ptr);
}
__C __export infiniStatus_t infinirtEventRecord(infinirtEvent_t event, infinirtStream_t stream) {
    return CURRENT->event_record(event, stream);
}
__C __export infiniStatus_t infinirtEventQuery(infinirtEvent_t event, infinirtEventStatus_t *status_ptr) {
    if (!status_ptr) return INFINI_STATUS_NULL_POINTER;
    return CURRENT->event_query(event, status_ptr);
}
__C __export infiniStatus_t infinirtEventSynchronize(infinirtEvent_t event) {
    return CURRENT->event_synchronize(event);
}
__C __export infiniStatus_t infinirtEventDestroy(infinirtEvent_t event) { return CURRENT->event_destroy(event); }
__C __export infiniStatus_t infinirtEventElapsedTime(float *ms_ptr, infinirtEvent_t start, infinirtEvent_t end) {
    if (!ms_ptr) return INFINI_STATUS_NULL_POINTER;
    return CURRENT->event_elapsed_time(ms_ptr, start, end);
}

__C __export infiniStatus_t infinirtMalloc(void **p_ptr, size_t size) {
    if (!p_ptr) return INFINI_STATUS_NULL_POINTER;
    return CURRENT->malloc_device(p_ptr, size);
}
__C __export infiniStatus_t infinirtMallocHost(void **p_ptr, size_t size) {
    if (!p_ptr) return INFINI_STATUS_NULL_POINTER;
    return CURRENT->malloc_host(p_ptr, size);
}
__C __export infiniStatus_t infinirtFree(void *ptr) { return CURRENT->free_device(ptr); }
__C __export infiniStatus_t infinirtFreeHost(void *ptr) { return CURRENT->free_host(ptr); }
__C __export infiniStatus_t infinirtMemcpy(void *dst, const void *src, size_t size, infinirtMemcpyKind_t kind) {
    return CURRENT->memcpy_sync(dst, src, size, kind);
}
__C __export infiniStatus_t infinirtMemcpyAsync(void *dst, const void *src, size_t size, infinirtMemcpyKind_t kind,
                                                infinirtStream_t stream) {
    return CURRENT->memcpy_async(dst, src, size, kind, stream);
}
__C __export infiniStatus_t infinirtMemset(void *ptr, int value, size_t size) {
    return CURRENT->memset_sync(ptr, value, size);
}
__C __export infiniStatus_t infinirtMallocAsync(void **p_ptr, size_t size, infinirtStream_t stream) {
    if (!p_ptr) return INFINI_STATUS_NULL_POINTER;
    return CURRENT->malloc_async(p_ptr, size, stream);
}
__C __export infiniStatus_t infinirtFreeAsync(void *ptr, infinirtStream_t stream) {
    return CURRENT->free_async(ptr, stream);
}
