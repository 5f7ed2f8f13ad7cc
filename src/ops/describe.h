/*
 * ops/describe.h - the backend part of an operator's INFINIOP_VERBOSE line,
 * chosen by its front end (src/ops/<op>/<op>.c) for infiniop_create_finish:
 * the CPU's text (instruction set, threads) on CPU handles, the CUDA plan's
 * text on NVIDIA handles. The front ends sit above both backends, so the
 * choice is made here rather than in core/.
 */
#ifndef INFINIOP_OPS_DESCRIBE_H
#define INFINIOP_OPS_DESCRIBE_H

#include "core/create.h"
#include "cpu/cpu.h"
#ifdef INFINIOP_WITH_CUDA
#include "cuda/describe.h"
/* The CUDA describe function of a plan kind: row (infiniopCudaRowPlan) or elt
 * (infiniopCudaEltPlan); NULL in builds without CUDA. */
#define INFINIOP_CUDA_DESCRIBE(kind) infiniop_cuda_describe_##kind
#else
#define INFINIOP_CUDA_DESCRIBE(kind) NULL
#endif

/* shape_of: the tensor the line names; work: the CPU's view of the call;
 * cuda_fn, cuda_plan: INFINIOP_CUDA_DESCRIBE(kind) and the info's plan. */
static inline infiniopDescribe infiniop_op_describe(infiniopHandle_t handle, infiniopTensorDescriptor_t shape_of,
                                                    const infiniopCpuWork *work, infiniopDescribeFn cuda_fn,
                                                    const void *cuda_plan) {
    infiniopDescribe d = {shape_of, infiniop_cpu_describe, work};
    if (cuda_fn && handle->device == INFINI_DEVICE_NVIDIA) d.fn = cuda_fn, d.ctx = cuda_plan;
    return d;
}

#endif /* INFINIOP_OPS_DESCRIBE_H */
