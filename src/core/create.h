/*
 * core/create.h - what every infiniopCreateXDescriptor shares: the checks
 * that open it, the allocation that closes it, and the verbose line that
 * names the kernel plan chosen (INFINIOP_VERBOSE).
 *
 * An operator's front end (src/ops/<op>/<op>.c) reads:
 *     infiniop_create_begin(...)      handle, desc_ptr, tensor descriptors
 *     ... its own dtype, shape and stride rules, into its info struct ...
 *     ... on an NVIDIA handle, its CUDA plan (info->cuda) ...
 *     infiniop_create_finish(...)     allocate, copy info, print, return
 */
#ifndef INFINIOP_CORE_CREATE_H
#define INFINIOP_CORE_CREATE_H

#include "common.h"
#include "cuda/plan.h"

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

/* What the verbose line says of a new descriptor: the shape and dtype of
 * one tensor, and the plan: on the CPU the call's memory traffic over
 * `cpu_items` rows or elements (the threading rule of cpu/cpu.c); on
 * NVIDIA the row plan (row; row_reg: the register path is allowed by the
 * layout, so 16-byte aligned pointers take it) or the elementwise plan
 * (elt; elt_contiguous: the flat path). */
typedef struct {
    infiniopTensorDescriptor_t shape_of;
    size_t cpu_items, cpu_bytes;
    const infiniopCudaRowPlan *row;
    bool row_reg;
    const infiniopCudaEltPlan *elt;
    bool elt_contiguous;
} infiniopPlanSummary;

/* Allocate the descriptor of operator op (desc_size bytes: the header,
 * then a copy of the info_size bytes at info, placed at info_offset), print
 * the verbose line when INFINIOP_VERBOSE is set, and store it in
 * *desc_ptr. */
infiniStatus_t infiniop_create_finish(infiniopOp_t op, infiniopHandle_t handle, size_t desc_size,
                                      size_t info_offset, const void *info, size_t info_size,
                                      const infiniopPlanSummary *summary, struct InfiniopDescriptor **desc_ptr);

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
