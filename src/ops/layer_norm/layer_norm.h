/*
 * ops/layer_norm/layer_norm.h - what the descriptor folds the tensors into,
 * and the backend kernels that consume it.
 */
#ifndef INFINIOP_OPS_LAYER_NORM_H
#define INFINIOP_OPS_LAYER_NORM_H

#include "core/layout.h"
#include "cuda/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Tensor numbers in the row layout (LN_STD has one value per row). */
enum { LN_OUT = 0, LN_STDZ = 1, LN_IN = 2, LN_STD = 3 };

/* The GPU kernels take this by value: the scalars they read come first,
 * then the row layout, whose hot fields lead (core/layout.h). */
typedef struct {
    float eps;
    bool has_bias;
    infiniDtype_t dtype;     /* every tensor */
    infiniopRowLayout rows;  /* output, input_standardization, input, input_std_deviation */
    ptrdiff_t w_stride, b_stride;
    infiniopSpan span[6];    /* output, input_standardization, input_std_deviation, input, weight, bias */
    bool same_layout[2];     /* output / input_standardization exactly like input */
    infiniopCudaRowPlan cuda; /* NVIDIA descriptors: the launch plan */
} infiniopLayerNormInfo;

infiniStatus_t infiniop_layer_norm_cpu(const infiniopLayerNormInfo *info, void *out, void *stdz, void *std,
                                       const void *in, const void *w, const void *b);
#ifdef INFINIOP_WITH_CUDA
/* At descriptor creation on an NVIDIA handle: fill info->cuda. */
infiniStatus_t infiniop_layer_norm_cuda_plan(infiniopLayerNormInfo *info, int device_id);
infiniStatus_t infiniop_layer_norm_cuda(const infiniopLayerNormInfo *info, int device_id, void *out, void *stdz,
                                        void *std, const void *in, const void *w, const void *b, void *stream);
#endif

#ifdef __cplusplus
}
#endif

#endif /* INFINIOP_OPS_LAYER_NORM_H */
