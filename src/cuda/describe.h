/*
 * cuda/describe.h - the NVIDIA backend's part of the INFINIOP_VERBOSE line
 * (infiniopDescribeFn, core/create.h): the plan chosen at descriptor
 * creation, as the run call will launch it. Plain C: the operators' front
 * ends (src/ops/<op>/<op>.c) pass these to infiniop_create_finish.
 */
#ifndef INFINIOP_CUDA_DESCRIBE_H
#define INFINIOP_CUDA_DESCRIBE_H

#include "core/create.h"
#include "cuda/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The name of a row kernel (plan.h), e.g. "reg-block", "stream-warp-vec16". */
const char *infiniop_cuda_row_kernel_name(infiniopCudaRowKernel k);

/* ctx: the descriptor's const infiniopCudaRowPlan *. Prints
 * "device=D plan=<kernel> <its parameters>[ (unaligned pointers: <kernel>
 * <its parameters>)][ pdl]". */
void infiniop_cuda_describe_row(char *buf, size_t n, size_t *len, infiniopHandle_t handle, const void *ctx);

/* ctx: the descriptor's const infiniopCudaEltPlan *. Prints "device=D plan=" and
 * infiniop_cuda_elt_plan_text (plan.h). */
void infiniop_cuda_describe_elt(char *buf, size_t n, size_t *len, infiniopHandle_t handle, const void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* INFINIOP_CUDA_DESCRIBE_H */
