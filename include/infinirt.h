/*
 * infinirt.h - the runtime (libinfinirt.so): devices, streams, events and
 * memory, for the CPU and (when built with CUDA and a GPU is present) NVIDIA.
 *
 * Every function acts on the calling thread's current device, chosen with
 * infinirtSetDevice (the CPU, device 0, until a thread sets another).
 * Every function returns INFINI_STATUS_SUCCESS or an error status; on error
 * nothing is written through output pointers.
 *
 * CPU semantics: memory is host memory (malloc); streams and events are
 * real objects whose work is always already complete (calls run
 * synchronously), so synchronize calls return at once and an event pair's
 * elapsed time is the host wall time between the two records.
 * NVIDIA semantics: thin wrappers over the CUDA runtime; a stream is a
 * cudaStream_t (NULL: the default stream), an event a cudaEvent_t.
 */
#ifndef __INFINIRT_API_H__
#define __INFINIRT_API_H__

#include "infinicore.h"

typedef void *infinirtStream_t;
typedef void *infinirtEvent_t;

/* Initialise the runtime. Optional: every other call initialises lazily.
 * Safe to call more than once. */
__C __export infiniStatus_t infinirtInit(void);

/* Device */
/* Writes INFINI_DEVICE_TYPE_COUNT counts into count_array, one per device
 * kind (0 for kinds not built or not present). */
__C __export infiniStatus_t infinirtGetAllDeviceCount(int *count_array);
/* Number of devices of one kind: 1 for the CPU, the CUDA device count for
 * NVIDIA (0 when no GPU or not built with CUDA). */
__C __export infiniStatus_t infinirtGetDeviceCount(infiniDevice_t device, int *count);
/* Make (device, device_id) the calling thread's current device.
 * DEVICE_TYPE_NOT_SUPPORTED for kinds this build lacks; DEVICE_NOT_FOUND for
 * an id out of range. */
__C __export infiniStatus_t infinirtSetDevice(infiniDevice_t device, int device_id);
/* The calling thread's current device. */
__C __export infiniStatus_t infinirtGetDevice(infiniDevice_t *device_ptr, int *device_id_ptr);
/* Wait for all work on the current device. */
__C __export infiniStatus_t infinirtDeviceSynchronize(void);

/* Stream: created on the current device; destroy with infinirtStreamDestroy. */
__C __export infiniStatus_t infinirtStreamCreate(infinirtStream_t *stream_ptr);
__C __export infiniStatus_t infinirtStreamDestroy(infinirtStream_t stream);
__C __export infiniStatus_t infinirtStreamSynchronize(infinirtStream_t stream);
/* Make later work on stream wait for event. */
__C __export infiniStatus_t infinirtStreamWaitEvent(infinirtStream_t stream, infinirtEvent_t event);

/* Event */
typedef enum {
    INFINIRT_EVENT_COMPLETE = 0,
    INFINIRT_EVENT_NOT_READY = 1,
} infinirtEventStatus_t;

__C __export infiniStatus_t infinirtEventCreate(infinirtEvent_t *event_ptr);
__C __export infiniStatus_t infinirtEventRecord(infinirtEvent_t event, infinirtStream_t stream);
__C __export infiniStatus_t infinirtEventQuery(infinirtEvent_t event, infinirtEventStatus_t *status_ptr);
__C __export infiniStatus_t infinirtEventSynchronize(infinirtEvent_t event);
__C __export infiniStatus_t infinirtEventDestroy(infinirtEvent_t event);
/* Milliseconds between two recorded events (start first). */
__C __export infiniStatus_t infinirtEventElapsedTime(float *ms_ptr, infinirtEvent_t start, infinirtEvent_t end);

/* Memory */
typedef enum {
    INFINIRT_MEMCPY_H2H = 0,
    INFINIRT_MEMCPY_H2D = 1,
    INFINIRT_MEMCPY_D2H = 2,
    INFINIRT_MEMCPY_D2D = 3,
} infinirtMemcpyKind_t;

/* Device memory of the current device (host memory for the CPU). Free with
 * infinirtFree. A size of 0 gives a NULL pointer and success. */
__C __export infiniStatus_t infinirtMalloc(void **p_ptr, size_t size);
/* Page-locked host memory (plain host memory on the CPU). Free with
 * infinirtFreeHost. */
__C __export infiniStatus_t infinirtMallocHost(void **p_ptr, size_t size);
__C __export infiniStatus_t infinirtFree(void *ptr);
__C __export infiniStatus_t infinirtFreeHost(void *ptr);

/* Copy size bytes; kind says where each side lives. BAD_PARAM for an
 * unknown kind. */
__C __export infiniStatus_t infinirtMemcpy(void *dst, const void *src, size_t size, infinirtMemcpyKind_t kind);
__C __export infiniStatus_t infinirtMemcpyAsync(void *dst, const void *src, size_t size, infinirtMemcpyKind_t kind, infinirtStream_t stream);
/* Set size bytes of device memory (host memory on the CPU) to value. */
__C __export infiniStatus_t infinirtMemset(void *ptr, int value, size_t size);

/* Stream-ordered memory (synchronous on the CPU). */
__C __export infiniStatus_t infinirtMallocAsync(void **p_ptr, size_t size, infinirtStream_t stream);
__C __export infiniStatus_t infinirtFreeAsync(void *ptr, infinirtStream_t stream);

#endif /* __INFINIRT_API_H__ */
