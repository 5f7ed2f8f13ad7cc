/*
 * runtime/backend.h - the table of functions each libinfinirt backend
 * fills in. infinirt.c keeps the calling thread's current device and
 * forwards each public call to that device's table.
 */
#ifndef INFINIRT_BACKEND_H
#define INFINIRT_BACKEND_H

#include "infinirt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    infiniStatus_t (*get_device_count)(int *count);
    infiniStatus_t (*set_device)(int id);
    infiniStatus_t (*device_synchronize)(void);
    infiniStatus_t (*stream_create)(infinirtStream_t *stream);
    infiniStatus_t (*stream_destroy)(infinirtStream_t stream);
    infiniStatus_t (*stream_synchronize)(infinirtStream_t stream);
    infiniStatus_t (*stream_wait_event)(infinirtStream_t stream, infinirtEvent_t event);
    infiniStatus_t (*event_create)(infinirtEvent_t *event);
    infiniStatus_t (*event_record)(infinirtEvent_t event, infinirtStream_t stream);
    infiniStatus_t (*event_query)(infinirtEvent_t event, infinirtEventStatus_t *status);
    infiniStatus_t (*event_synchronize)(infinirtEvent_t event);
    infiniStatus_t (*event_destroy)(infinirtEvent_t event);
    infiniStatus_t (*event_elapsed_time)(float *ms, infinirtEvent_t start, infinirtEvent_t end);
    infiniStatus_t (*malloc_device)(void **p, size_t size);
    infiniStatus_t (*malloc_host)(void **p, size_t size);
    infiniStatus_t (*free_device)(void *p);
    infiniStatus_t (*free_host)(void *p);
    infiniStatus_t (*memcpy_sync)(void *dst, const void *src, size_t size, infinirtMemcpyKind_t kind);
    infiniStatus_t (*memcpy_async)(void *dst, const void *src, size_t size, infinirtMemcpyKind_t kind,
                                   infinirtStream_t stream);
    infiniStatus_t (*memset_sync)(void *p, int value, size_t size);
    infiniStatus_t (*malloc_async)(void **p, size_t size, infinirtStream_t stream);
    infiniStatus_t (*free_async)(void *p, infinirtStream_t stream);
} infinirtBackend;

extern const infinirtBackend infinirt_cpu_backend;
#ifdef INFINIOP_WITH_CUDA
/* runtime/cuda.cu */
extern const infinirtBackend infinirt_cuda_backend;
#endif

#ifdef __cplusplus
}
#endif

#endif /* INFINIRT_BACKEND_H */
