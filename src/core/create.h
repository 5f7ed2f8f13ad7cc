/*
 * core/create.h - what every infiniopCreateXDescriptor shares: the checks
 * that open it, the allocation that closes it, and the verbose line that
 * names the kernel plan chosen (INFINIOP_VERBOSE). core/ knows no backend:
 * the front end hands create_finish the backend's own describe function.
 *
 * An operator's front end (src/ops/<op>/<op>.c) reads:
 *     infiniop_create_begin(...)      handle, desc_ptr, tensor descriptors
 *     ... its own dtype, shape and stride rules, into its info struct ...
 *     ... on an NVIDIA handle, its CUDA plan (info->cuda) ...
 *     infiniop_create_finish(...)     allocate, copy info, print (through the
 *                                     backend's describe function), return
 */
#ifndef INFINIOP_CORE_CREATE_H
#define INFINIOP_CORE_CREATE_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A live handle, a non-NULL desc_ptr, and n live tensor descriptors t[i]
 * (named names[i] in messages, "<op>: <name>: ..."). */
infiniStatus_t infiniop_create_begin(const char *op, infiniopHandle_t handle, const void *desc_ptr, int n,
                                     const char *const *names, const infiniopTensorDescriptor_t *t);

/* The n output tensors t[i] each map their elements to distinct addresses
 * (BAD_TENSOR_STRIDES otherwise, naming the tensor). */
infiniStatus_t infiniop_check_outputs_distinct(const char *op, int n, const char *const *names,
                                               const infiniopTensorDescriptor_t *t);
/* A norm's epsilon (named `name`): finite and >= 0 (BAD_PARAM otherwise). */
infiniStatus_t infiniop_check_epsilon(const char *op, const char *name, float eps);

/* Appends printf-style text to buf (size n) at *len, never past its end
 * (*len may pass n: then nothing more is written). */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
void infiniop_append(char *buf, size_t n, size_t *len, const char *fmt, ...);

/* The backend's part of the verbose line (after "infiniop: <op> <device>
 * shape=[...] <dtype> "): what it runs for the new descriptor, e.g.
 * "isa=avx2 threads=1" (cpu/cpu.h) or "device=0 plan=..." (cuda/describe.h).
 * ctx is the backend's own (its plan, or the call's work); it is read only
 * during infiniop_create_finish. */
typedef void (*infiniopDescribeFn)(char *buf, size_t n, size_t *len, infiniopHandle_t handle, const void *ctx);
typedef struct {
    infiniopTensorDescriptor_t shape_of; /* the tensor whose shape and dtype the line names */
    infiniopDescribeFn fn;               /* NULL: nothing after the dtype */
    const void *ctx;
} infiniopDescribe;

/* Allocate the descriptor of operator op (desc_size bytes: the header,
 * then a copy of the info_size bytes at info, placed at info_offset), print
 * the verbose line when INFINIOP_VERBOSE is set, and store it in
 * *desc_ptr. */
infiniStatus_t infiniop_create_finish(infiniopOp_t op, infiniopHandle_t handle, size_t desc_size,
                                      size_t info_offset, const void *info, size_t info_size,
                                      const infiniopDescribe *describe, struct InfiniopDescriptor **desc_ptr);

/* On an NVIDIA handle, PLAN(info, device_id): the operator's CUDA launch
 * plan into info->cuda (left zero elsewhere, and in builds without CUDA,
 * where PLAN is not even named). */
#ifdef INFINIOP_WITH_CUDA
#define INFINIOP_CUDA_PLAN(handle, PLAN, info)                                                                         \
    ((handle)->device == INFINI_DEVICE_NVIDIA ? PLAN(info, (handle)->device_id) : INFINI_STATUS_SUCCESS)
#else
#define INFINIOP_CUDA_PLAN(handle, PLAN, info) INFINI_STATUS_SUCCESS
#endif

#ifdef __cplusplus
}
#endif

#endif /* INFINIOP_CORE_CREATE_H */
