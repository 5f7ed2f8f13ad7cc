/*
 * ops/causal_softmax/causal_softmax.h - what the descriptor folds the
 * tensors into, and the backend kernels that consume it.
 */
#ifndef INFINIOP_OPS_CAUSAL_SOFTMAX_H
#define INFINIOP_OPS_CAUSAL_SOFTMAX_H

#include "core/layout.h"
#include "cuda/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { CS_Y = 0, CS_X = 1 };

/* The GPU kernels take this by value: the scalars they read come first,
 * then the row layout, whose hot fields lead (core/layout.h); what only
 * the host reads follows. (S_div between S and the layout moved the
 * layout's hot fields 8 bytes on: causal_softmax f32 2x4x100x700 ran 5%
 * slower on an H200, as a constant-cache line more a warp would; session
 * 30, bench/NOTES.md. Here the layout starts at byte 16, as before.) */
typedef struct {
    size_t S;                /* row r is query r % S: it sees columns j <= r % S + (T - S) */
    infiniopDiv32 S_div;     /* division by S where S < 2^32 (infiniop_causal_visible) */
    infiniopRowLayout rows;  /* y, x: rows are [..., S], row length T */
    infiniopSpan span[2];    /* y, x */
    bool same_layout;        /* y exactly like x: in-place allowed */
    infiniDtype_t dtype;
    infiniopCudaRowPlan cuda; /* NVIDIA descriptors: the launch plan */
} infiniopCausalSoftmaxInfo;

/* Number of visible columns of row r. (The 64-bit remainder is a long
 * dependent chain on a GPU: decode shapes, S == 1, skip it, and values
 * that fit take the 32-bit divisor S_div, a multiply-high and a shift.) */
INFINIOP_HD size_t infiniop_causal_visible(const infiniopCausalSoftmaxInfo *info, size_t r) {
    const size_t S = info->S;
    size_t i;
    if (S == 1)
        i = 0;
    else if ((r | S) >> 32 == 0)
        i = (uint32_t)r - infiniop_div32((uint32_t)r, info->S_div) * (uint32_t)S;
    else
        i = r % S;
    return i + (info->rows.ncols - S) + 1;
}

infiniStatus_t infiniop_causal_softmax_cpu(const infiniopCausalSoftmaxInfo *info, void *y, const void *x);
#ifdef INFINIOP_WITH_CUDA
/* At descriptor creation on an NVIDIA handle: fill info->cuda. */
infiniStatus_t infiniop_causal_softmax_cuda_plan(infiniopCausalSoftmaxInfo *info, int device_id);
infiniStatus_t infiniop_causal_softmax_cuda(const infiniopCausalSoftmaxInfo *info, int device_id, void *y,
                                            const void *x, void *stream);
#endif

#ifdef __cplusplus
}
#endif

#endif /* INFINIOP_OPS_CAUSAL_SOFTMAX_H */
