/*
 * runtime/cuda.cu - libinfinirt on NVIDIA GPUs: thin wrappers over the CUDA
 * runtime. A stream is a cudaStream_t (NULL: the legacy default stream), an
 * event a cudaEvent_t with timing. The current device of the calling thread
 * (infinirtSetDevice) is also the CUDA runtime's current device.
 */
#include "backend.h"

#include <cuda_runtime.h>

static infiniStatus_t status_of(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return INFINI_STATUS_SUCCESS;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidResourceHandle:
    case cudaErrorInvalidDevicePointer:
    case cudaErrorInvalidMemcpyDirection: return INFINI_STATUS_BAD_PARAM;
    case cudaErrorInvalidDevice:
    case cudaErrorNoDevice: return INFINI_STATUS_DEVICE_NOT_FOUND;
    case cudaErrorInsufficientDriver:
    case cudaErrorInitializationError: return INFINI_STATUS_DEVICE_NOT_INITIALIZED;
    default: return INFINI_STATUS_INTERNAL_ERROR;
    }
}

/* Map an error and clear it from the runtime's last-error slot, so that a
 * failed call here does not surface in an unrelated later check. */
static infiniStatus_t check(cudaError_t e) {
    if (e != cudaSuccess) cudaGetLastError();
    return status_of(e);
}

static infiniStatus_t get_device_count(int *count) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        cudaGetLastError();
        n = 0; /* no driver or no GPU: zero devices, not an error */
    }
    *count = n;
    return INFINI_STATUS_SUCCESS;
}
static infiniStatus_t set_device(int id) { return check(cudaSetDevice(id)); }
static infiniStatus_t device_synchronize(void) { return check(cudaDeviceSynchronize()); }

static infiniStatus_t stream_create(infinirtStream_t *stream) {
    cudaStream_t s;
    infiniStatus_t st = check(cudaStreamCreate(&s));
    if (st == INFINI_STATUS_SUCCESS) *stream = (infinirtStream_t)s;
    return st;
}
static infiniStatus_t stream_destroy(infinirtStream_t stream) {
    if (!stream) return INFINI_STATUS_NULL_POINTER;
    return check(cudaStreamDestroy((cudaStream_t)stream));
}
static infiniStatus_t stream_synchronize(infinirtStream_t stream) {
    return check(cudaStreamSynchronize((cudaStream_t)stream));
}
static infiniStatus_t stream_wait_event(infinirtStream_t stream, infinirtEvent_t event) {
    if (!event) return INFINI_STATUS_NULL_POINTER;
    return check(cudaStreamWaitEvent((cudaStream_t)stream, (cudaEvent_t)event, 0));
}

static infiniStatus_t event_create(infinirtEvent_t *event) {
    cudaEvent_t e;
    infiniStatus_t st = check(cudaEventCreate(&e));
    if (st == INFINI_STATUS_SUCCESS) *event = (infinirtEvent_t)e;
    return st;
}
static infiniStatus_t event_record(infinirtEvent_t event, infinirtStream_t stream) {
    if (!event) return INFINI_STATUS_NULL_POINTER;
    return check(cudaEventRecord((cudaEvent_t)event, (cudaStream_t)stream));
}
static infiniStatus_t event_query(infinirtEvent_t event, infinirtEventStatus_t *status) {
    if (!event) return INFINI_STATUS_NULL_POINTER;
    cudaError_t e = cudaEventQuery((cudaEvent_t)event);
    if (e == cudaSuccess) {
        *status = INFINIRT_EVENT_COMPLETE;
        return INFINI_STATUS_SUCCESS;
    }
    if (e == cudaErrorNotReady) {
        cudaGetLastError();
        *status = INFINIRT_EVENT_NOT_READY;
        return INFINI_STATUS_SUCCESS;
    }
    return check(e);
}
static infiniStatus_t event_synchronize(infinirtEvent_t event) {
    if (!event) return INFINI_STATUS_NULL_POINTER;
    return check(cudaEventSynchronize((cudaEvent_t)event));
}
static infiniStatus_t event_destroy(infinirtEvent_t event) {
    if (!event) return INFINI_STATUS_NULL_POINTER;
    return check(cudaEventDestroy((cudaEvent_t)event));
}
static infiniStatus_t event_elapsed_time(float *ms, infinirtEvent_t start, infinirtEvent_t end) {
    if (!start || !end) return INFINI_STATUS_NULL_POINTER;
    float t = 0.0f;
    infiniStatus_t st = check(cudaEventElapsedTime(&t, (cudaEvent_t)start, (cudaEvent_t)end));
    if (st == INFINI_STATUS_SUCCESS) *ms = t;
    return st;
}

/* Size 0 gives NULL (the CUDA allocators' answer varies). */
template <typename Alloc> static infiniStatus_t alloc_or_null(void **p, size_t size, Alloc alloc) {
    if (size == 0) {
        *p = NULL;
        return INFINI_STATUS_SUCCESS;
    }
    void *q = NULL;
    infiniStatus_t st = check(alloc(&q, size));
    if (st == INFINI_STATUS_SUCCESS) *p = q;
    return st;
}
static infiniStatus_t malloc_device(void **p, size_t size) {
    return alloc_or_null(p, size, [](void **q, size_t n) { return cudaMalloc(q, n); });
}
static infiniStatus_t malloc_host(void **p, size_t size) {
    return alloc_or_null(p, size, [](void **q, size_t n) { return cudaMallocHost(q, n); });
}
static infiniStatus_t free_device(void *p) { return check(cudaFree(p)); }
static infiniStatus_t free_host(void *p) { return check(cudaFreeHost(p)); }

static bool kind_of(infinirtMemcpyKind_t kind, cudaMemcpyKind *k) {
    switch (kind) {
    case INFINIRT_MEMCPY_H2H: *k = cudaMemcpyHostToHost; return true;
    case INFINIRT_MEMCPY_H2D: *k = cudaMemcpyHostToDevice; return true;
    case INFINIRT_MEMCPY_D2H: *k = cudaMemcpyDeviceToHost; return true;
    case INFINIRT_MEMCPY_D2D: *k = cudaMemcpyDeviceToDevice; return true;
    }
    return false;
}
static infiniStatus_t memcpy_sync(void *dst, const void *src, size_t size, infinirtMemcpyKind_t kind) {
    cudaMemcpyKind k;
    if (!kind_of(kind, &k)) return INFINI_STATUS_BAD_PARAM;
    if (size == 0) return INFINI_STATUS_SUCCESS;
    if (!dst || !src) return INFINI_STATUS_NULL_POINTER;
    return check(cudaMemcpy(dst, src, size, k));
}
static infiniStatus_t memcpy_async(void *dst, const void *src, size_t size, infinirtMemcpyKind_t kind,
                                   infinirtStream_t stream) {
    cudaMemcpyKind k;
    if (!kind_of(kind, &k)) return INFINI_STATUS_BAD_PARAM;
    if (size == 0) return INFINI_STATUS_SUCCESS;
    if (!dst || !src) return INFINI_STATUS_NULL_POINTER;
    return check(cudaMemcpyAsync(dst, src, size, k, (cudaStream_t)stream));
}
static infiniStatus_t memset_sync(void *p, int value, size_t size) {
    if (size == 0) return INFINI_STATUS_SUCCESS;
    if (!p) return INFINI_STATUS_NULL_POINTER;
    return check(cudaMemset(p, value, size));
}
static infiniStatus_t malloc_async(void **p, size_t size, infinirtStream_t stream) {
    if (size == 0) {
        *p = NULL;
        return INFINI_STATUS_SUCCESS;
    }
    void *q = NULL;
    infiniStatus_t st = check(cudaMallocAsync(&q, size, (cudaStream_t)stream));
    if (st == INFINI_STATUS_SUCCESS) *p = q;
    return st;
}
static infiniStatus_t free_async(void *p, infinirtStream_t stream) {
    if (!p) return INFINI_STATUS_SUCCESS;
    return check(cudaFreeAsync(p, (cudaStream_t)stream));
}

extern "C" const infinirtBackend infinirt_cuda_backend = {
    get_device_count,
    set_device,
    device_synchronize,
    stream_create,
    stream_destroy,
    stream_synchronize,
    stream_wait_event,
    event_create,
    event_record,
    event_query,
    event_synchronize,
    event_destroy,
    event_elapsed_time,
    malloc_device,
    malloc_host,
    free_device,
    free_host,
    memcpy_sync,
    memcpy_async,
    memset_sync,
    malloc_async,
    free_async,
};
