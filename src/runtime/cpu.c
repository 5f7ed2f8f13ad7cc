/*
 * runtime/cpu.c - libinfinirt on the CPU. Memory is host memory; every call
 * runs synchronously, so streams and events are small objects whose work is
 * always complete. An event records the host's monotonic clock.
 */
#define _POSIX_C_SOURCE 200809L
#include "backend.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CPU_STREAM_MAGIC 0x53747265u
#define CPU_EVENT_MAGIC 0x45766e74u

typedef struct {
    uint32_t magic;
} cpu_stream;

typedef struct {
    uint32_t magic;
    int recorded;
    double ms; /* host monotonic time of the last record, in ms */
} cpu_event;

static infiniStatus_t get_device_count(int *count) {
    *count = 1;
    return INFINI_STATUS_SUCCESS;
}
static infiniStatus_t set_device(int id) { return id == 0 ? INFINI_STATUS_SUCCESS : INFINI_STATUS_DEVICE_NOT_FOUND; }
static infiniStatus_t nothing(void) { return INFINI_STATUS_SUCCESS; }

static infiniStatus_t check_stream(infinirtStream_t s) {
    /* NULL is the default stream. */
    if (s && ((cpu_stream *)s)->magic != CPU_STREAM_MAGIC) return INFINI_STATUS_BAD_PARAM;
    return INFINI_STATUS_SUCCESS;
}
static infiniStatus_t check_event(infinirtEvent_t e) {
    if (!e) return INFINI_STATUS_NULL_POINTER;
    return ((cpu_event *)e)->magic == CPU_EVENT_MAGIC ? INFINI_STATUS_SUCCESS : INFINI_STATUS_BAD_PARAM;
}

static infiniStatus_t stream_create(infinirtStream_t *stream) {
    cpu_stream *s = malloc(sizeof *s);
    if (!s) return INFINI_STATUS_INTERNAL_ERROR;
    s->magic = CPU_STREAM_MAGIC;
    *stream = s;
    return INFINI_STATUS_SUCCESS;
}
static infiniStatus_t stream_destroy(infinirtStream_t stream) {
    if (!stream) return INFINI_STATUS_NULL_POINTER;
    infiniStatus_t st = check_stream(stream);
    if (st) return st;
    ((cpu_stream *)stream)->magic = 0;
    free(stream);
    return INFINI_STATUS_SUCCESS;
}
static infiniStatus_t stream_synchronize(infinirtStream_t stream) { return check_stream(stream); }
static infiniStatus_t stream_wait_event(infinirtStream_t stream, infinirtEvent_t event) {
    infiniStatus_t st = check_stream(stream);
    return st ? st : check_event(event);
}

static infiniStatus_t event_create(infinirtEvent_t *event) {
    cpu_event *e = calloc(1, sizeof *e);
    if (!e) return INFINI_STATUS_INTERNAL_ERROR;
    e->magic = CPU_EVENT_MAGIC;
    *event = e;
    return INFINI_STATUS_SUCCESS;
}
static infiniStatus_t event_record(infinirtEvent_t event, infinirtStream_t stream) {
    infiniStatus_t st = check_event(event);
    if (st || (st = check_stream(stream))) return st;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    cpu_event *e = event;
    e->ms = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
    e->recorded = 1;
    return INFINI_STATUS_SUCCESS;
}
static infiniStatus_t event_query(infinirtEvent_t event, infinirtEventStatus_t *status) {
    infiniStatus_t st = check_event(event);
    if (st) return st;
    *status = INFINIRT_EVENT_COMPLETE;
    return INFINI_STATUS_SUCCESS;
}
static infiniStatus_t event_synchronize(infinirtEvent_t event) { return check_event(event); }
static infiniStatus_t event_destroy(infinirtEvent_t event) {
    infiniStatus_t st = check_event(event);
    if (st) return st;
    ((cpu_event *)event)->magic = 0;
    free(event);
    return INFINI_STATUS_SUCCESS;
}
static infiniStatus_t event_elapsed_time(float *ms, infinirtEvent_t start, infinirtEvent_t end) {
    infiniStatus_t st = check_event(start);
    if (st || (st = check_event(end))) return st;
    const cpu_event *a = start, *b = end;
    if (!a->recorded || !b->recorded) return INFINI_STATUS_BAD_PARAM;
    *ms = (float)(b->ms - a->ms);
    return INFINI_STATUS_SUCCESS;
}

static infiniStatus_t malloc_host(void **p, size_t size) {
    if (size == 0) {
        *p = NULL;
        return INFINI_STATUS_SUCCESS;
    }
    /* 64-byte alignment: whole cache lines, and any vector width. */
    void *q = NULL;
    if (posix_memalign(&q, 64, size) != 0) return INFINI_STATUS_INTERNAL_ERROR;
    *p = q;
    return INFINI_STATUS_SUCCESS;
}
static infiniStatus_t free_host(void *p) {
    free(p);
    return INFINI_STATUS_SUCCESS;
}
static infiniStatus_t memcpy_sync(void *dst, const void *src, size_t size, infinirtMemcpyKind_t kind) {
    if ((unsigned)kind > INFINIRT_MEMCPY_D2D) return INFINI_STATUS_BAD_PARAM;
    if (size == 0) return INFINI_STATUS_SUCCESS;
    if (!dst || !src) return INFINI_STATUS_NULL_POINTER;
    memmove(dst, src, size);
    return INFINI_STATUS_SUCCESS;
}
static infiniStatus_t memcpy_async(void *dst, const void *src, size_t size, infinirtMemcpyKind_t kind,
                                   infinirtStream_t stream) {
    infiniStatus_t st = check_stream(stream);
    return st ? st : memcpy_sync(dst, src, size, kind);
}
static infiniStatus_t memset_sync(void *p, int value, size_t size) {
    if (size == 0) return INFINI_STATUS_SUCCESS;
    if (!p) return INFINI_STATUS_NULL_POINTER;
    memset(p, value, size);
    return INFINI_STATUS_SUCCESS;
}
static infiniStatus_t malloc_async(void **p, size_t size, infinirtStream_t stream) {
    infiniStatus_t st = check_stream(stream);
    return st ? st : malloc_host(p, size);
}
static infiniStatus_t free_async(void *p, infinirtStream_t stream) {
    infiniStatus_t st = check_stream(stream);
    return st ? st : free_host(p);
}

const infinirtBackend infinirt_cpu_backend = {
    .get_device_count = get_device_count,
    .set_device = set_device,
    .device_synchronize = nothing,
    .stream_create = stream_create,
    .stream_destroy = stream_destroy,
    .stream_synchronize = stream_synchronize,
    .stream_wait_event = stream_wait_event,
    .event_create = event_create,
    .event_record = event_record,
    .event_query = event_query,
    .event_synchronize = event_synchronize,
    .event_destroy = event_destroy,
    .event_elapsed_time = event_elapsed_time,
    .malloc_device = malloc_host,
    .malloc_host = malloc_host,
    .free_device = free_host,
    .free_host = free_host,
    .memcpy_sync = memcpy_sync,
    .memcpy_async = memcpy_async,
    .memset_sync = memset_sync,
    .malloc_async = malloc_async,
    .free_async = free_async,
};
