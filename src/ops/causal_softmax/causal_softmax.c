/*
 * ops/causal_softmax/causal_softmax.c - the public causal_softmax entry
 * points: validate once into infiniopCausalSoftmaxInfo, then dispatch.
 */
#include "causal_softmax.h"
#include "core/create.h"
#include "ops/describe.h"

#define OP "causal_softmax"

typedef struct {
    struct InfiniopDescriptor base;
    infiniopCausalSoftmaxInfo info;
} Descriptor;

__C __export infiniStatus_t infiniopCreateCausalSoftmaxDescriptor(infiniopHandle_t handle,
                                                                  infiniopCausalSoftmaxDescriptor_t *desc_ptr,
                                                                  infiniopTensorDescriptor_t y_desc,
                                                                  infiniopTensorDescriptor_t x_desc) {
    infiniStatus_t st;
    const char *names[2] = {"y", "x"};
    const infiniopTensorDescriptor_t t[2] = {y_desc, x_desc};
    if ((st = infiniop_create_begin(OP, handle, desc_ptr, 2, names, t))) return st;
    infiniDtype_t dt = x_desc->dtype;
    if (!infiniop_is_half_or_float(dt))
        return infiniop_error(INFINI_STATUS_BAD_TENSOR_DTYPE, OP ": x: dtype %s is not F16, BF16 or F32",
                              infiniop_dtype_name(dt));
    if (y_desc->dtype != dt)
        return infiniop_error(INFINI_STATUS_BAD_TENSOR_DTYPE, OP ": y: dtype %s differs from x's %s",
                              infiniop_dtype_name(y_desc->dtype), infiniop_dtype_name(dt));
    size_t ndim = x_desc->ndim;
    if (ndim < 2)
        return infiniop_error(INFINI_STATUS_BAD_TENSOR_SHAPE, OP ": x: ndim is %zu, at least 2 ([..., S, T]) is needed",
                              ndim);
    if (y_desc->ndim != ndim)
        return infiniop_error(INFINI_STATUS_BAD_TENSOR_SHAPE, OP ": y: ndim %zu differs from x's %zu", y_desc->ndim,
                              ndim);
    for (size_t k = 0; k < ndim; ++k)
        if (y_desc->shape[k] != x_desc->shape[k])
            return infiniop_error(INFINI_STATUS_BAD_TENSOR_SHAPE, OP ": y: shape[%zu] is %zu but x's is %zu", k,
                                  y_desc->shape[k], x_desc->shape[k]);
    size_t S = x_desc->shape[ndim - 2], T = x_desc->shape[ndim - 1];
    if (T == 0) return infiniop_error(INFINI_STATUS_BAD_TENSOR_SHAPE, OP ": x: T (shape[%zu]) is 0", ndim - 1);
    if (T < S)
        return infiniop_error(INFINI_STATUS_BAD_TENSOR_SHAPE, OP ": x: T = shape[%zu] = %zu is less than S = shape[%zu] = %zu",
                              ndim - 1, T, ndim - 2, S);
    if ((st = infiniop_check_outputs_distinct(OP, 1, names, t))) return st;

    infiniopCausalSoftmaxInfo info;
    const ptrdiff_t *row_strides[2] = {y_desc->strides, x_desc->strides};
    ptrdiff_t col_strides[2] = {y_desc->strides[ndim - 1], x_desc->strides[ndim - 1]};
    if ((st = infiniop_row_layout_init(&info.rows, OP, ndim - 1, x_desc->shape, T, 2, row_strides, col_strides)))
        return st;
    info.dtype = dt;
    info.S = S ? S : 1;
    info.S_div = infiniop_div32_init(info.S <= UINT32_MAX ? (uint32_t)info.S : 1u); /* (S past 2^32: unused) */
    info.span[CS_Y] = infiniop_tensor_span(y_desc);
    info.span[CS_X] = infiniop_tensor_span(x_desc);
    info.same_layout = infiniop_tensor_same_layout(y_desc, x_desc);
    info.cuda = (infiniopCudaRowPlan){0};
    if ((st = INFINIOP_CUDA_PLAN(handle, infiniop_causal_softmax_cuda_plan, &info))) return st;
    /* the verbose line: the backend's own text */
    const infiniopCpuWork work = {info.rows.nrows, info.rows.nrows * T * infiniop_dtype_size(dt) * 2};
    const infiniopDescribe describe =
        infiniop_op_describe(handle, x_desc, &work, INFINIOP_CUDA_DESCRIBE(row), &info.cuda);
    return infiniop_create_finish(INFINIOP_OP_CAUSAL_SOFTMAX, handle, sizeof(Descriptor), offsetof(Descriptor, info),
                                  &info, sizeof info, &describe, desc_ptr);
}

__C __export infiniStatus_t infiniopGetCausalSoftmaxWorkspaceSize(infiniopCausalSoftmaxDescriptor_t desc,
                                                                  size_t *size) {
    return infiniop_workspace_size(OP, desc, INFINIOP_OP_CAUSAL_SOFTMAX, size);
}

__C __export infiniStatus_t infiniopCausalSoftmax(infiniopCausalSoftmaxDescriptor_t desc, void *workspace,
                                                  size_t workspace_size, void *y, const void *x, void *stream) {
    (void)workspace;
    infiniStatus_t st;
    if ((st = infiniop_check_run(OP, desc, INFINIOP_OP_CAUSAL_SOFTMAX, workspace_size, 0))) return st;
    const infiniopCausalSoftmaxInfo *info = &((const Descriptor *)desc)->info;
    if (info->rows.nrows == 0) return INFINI_STATUS_SUCCESS;
    size_t es = infiniop_dtype_size(info->dtype);
    const infiniopRunTensor t[2] = {{"y", y, info->span[CS_Y], es, false}, {"x", x, info->span[CS_X], es, false}};
    const uint32_t inplace[1] = {info->same_layout ? 1u << CS_X : 0u};
    if ((st = infiniop_check_run_tensors(OP, t, 2, 1, inplace))) return st;
    switch (desc->device) {
    case INFINI_DEVICE_CPU: return infiniop_causal_softmax_cpu(info, y, x);
#ifdef INFINIOP_WITH_CUDA
    case INFINI_DEVICE_NVIDIA: return infiniop_causal_softmax_cuda(info, desc->device_id, y, x, stream);
#endif
    default: return infiniop_no_backend(OP, desc, stream);
    }
}

__C __export infiniStatus_t infiniopDestroyCausalSoftmaxDescriptor(infiniopCausalSoftmaxDescriptor_t desc) {
    return infiniop_descriptor_destroy(OP, desc, INFINIOP_OP_CAUSAL_SOFTMAX);
}
