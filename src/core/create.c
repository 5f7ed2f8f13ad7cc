/*
 * core/create.c - the shared opening and closing of descriptor creation,
 * and the verbose line.
 *
 * INFINIOP_VERBOSE=1 (any value but "0"): every operator descriptor prints
 * one line to stderr when it is created, naming the implementation and its
 * plan, in the spirit of ONEDNN_VERBOSE:
 *   infiniop: layer_norm cuda shape=[4096,4096] F16 device=0 plan=reg-block items=2 ...
 *   infiniop: silu cpu shape=[64,64] F32 isa=avx2 threads=1
 * The text after the dtype is the backend's (its describe function: the
 * front end passes it in), so core/ names no backend.
 * The variable is read once, at the first creation; nothing else is ever
 * printed, and nothing at all without it.
 */
#include "create.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

infiniStatus_t infiniop_create_begin(const char *op, infiniopHandle_t handle, const void *desc_ptr, int n,
                                     const char *const *names, const infiniopTensorDescriptor_t *t) {
    infiniStatus_t st;
    if ((st = infiniop_check_handle(op, handle))) return st;
    if (!desc_ptr) return infiniop_error(INFINI_STATUS_NULL_POINTER, "%s: desc_ptr is NULL", op);
    for (int i = 0; i < n; ++i)
        if ((st = infiniop_check_tensor(op, names[i], t[i]))) return st;
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infiniop_check_outputs_distinct(const char *op, int n, const char *const *names,
                                               const infiniopTensorDescriptor_t *t) {
    for (int i = 0; i < n; ++i)
        if (!infiniop_tensor_is_non_overlapping(t[i]))
            return infiniop_error(INFINI_STATUS_BAD_TENSOR_STRIDES, "%s: %s: strides map several elements to one address",
                                  op, names[i]);
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infiniop_check_epsilon(const char *op, const char *name, float eps) {
    if (!(eps >= 0.0f) || isinf(eps))
        return infiniop_error(INFINI_STATUS_BAD_PARAM, "%s: %s %g must be finite and >= 0", op, name, (double)eps);
    return INFINI_STATUS_SUCCESS;
}

static pthread_once_t verbose_once = PTHREAD_ONCE_INIT;
static bool verbose_on;
static void read_verbose(void) {
    const char *e = getenv("INFINIOP_VERBOSE");
    verbose_on = e && *e && strcmp(e, "0") != 0;
}
/* INFINIOP_VERBOSE is set to a value other than "0" (read once). */
static bool infiniop_verbose(void) {
    pthread_once(&verbose_once, read_verbose);
    return verbose_on;
}

static void print_verbose(infiniopOp_t op, infiniopHandle_t handle, const infiniopDescribe *d) {
    char b[512];
    size_t len = 0, n = sizeof b;
    const infiniopTensorDescriptor_t t = d->shape_of;
    infiniop_append(b, n, &len, "infiniop: %s %s shape=[", infiniop_op_name(op),
                    handle->device == INFINI_DEVICE_NVIDIA ? "cuda" : "cpu");
    for (size_t k = 0; k < t->ndim; ++k) infiniop_append(b, n, &len, "%s%zu", k ? "," : "", t->shape[k]);
    infiniop_append(b, n, &len, "] %s", infiniop_dtype_name(t->dtype));
    if (d->fn) {
        infiniop_append(b, n, &len, " ");
        d->fn(b, n, &len, handle, d->ctx);
    }
    fprintf(stderr, "%s\n", b); /* one call: lines of several threads do not interleave */
}

infiniStatus_t infiniop_create_finish(infiniopOp_t op, infiniopHandle_t handle, size_t desc_size,
                                      size_t info_offset, const void *info, size_t info_size,
                                      const infiniopDescribe *describe, struct InfiniopDescriptor **desc_ptr) {
    struct InfiniopDescriptor *d = infiniop_descriptor_new(desc_size, op, handle);
    if (!d) return infiniop_error(INFINI_STATUS_INTERNAL_ERROR, "%s: out of host memory", infiniop_op_name(op));
    memcpy((char *)d + info_offset, info, info_size);
    if (infiniop_verbose()) print_verbose(op, handle, describe);
    *desc_ptr = d;
    return INFINI_STATUS_SUCCESS;
}
