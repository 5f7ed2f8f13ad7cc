/*
 * ops/add_rms_norm/add_rms_norm.c - the public add_rms_norm entry points:
 * validate once into infiniopAddRMSNormInfo, then dispatch by device.
 */
#include "add_rms_norm.h"
#include "core/create.h"
#include "ops/describe.h"

#define OP "add_rms_norm"

typedef struct {
    struct InfiniopDescriptor base;
    infiniopAddRMSNormInfo info;
} Descriptor;

static bool weight_type_ok(infiniDtype_t a, infiniDtype_t w) {
    if (a == INFINI_DTYPE_F32) return w == INFINI_DTYPE_F32;
    return w == INFINI_DTYPE_F16 || w == INFINI_DTYPE_BF16 || w == INFINI_DTYPE_F32;
}

__C __export infiniStatus_t infiniopCreateAddRMSNormDescriptor(infiniopHandle_t handle,
                                                               infiniopAddRMSNormDescriptor_t *desc_ptr,
                                                               infiniopTensorDescriptor_t y_desc,
                                                               infiniopTensorDescriptor_t residual_out_desc,
                                                               infiniopTensorDescriptor_t a_desc,
                                                               infiniopTensorDescriptor_t b_desc,
                                                               infiniopTensorDescriptor_t weight_desc, float epsilon) {
    infiniStatus_t st;
    const char *names[5] = {"y", "residual_out", "a", "b", "weight"};
    infiniopTensorDescriptor_t t[5] = {y_desc, residual_out_desc, a_desc, b_desc, weight_desc};
    if ((st = infiniop_create_begin(OP, handle, desc_ptr, 5, names, t))) return st;

    infiniDtype_t at = a_desc->dtype, wt = weight_desc->dtype;
    if (!infiniop_is_half_or_float(at))
        return infiniop_error(INFINI_STATUS_BAD_TENSOR_DTYPE, OP ": a: dtype %s is not F16, BF16 or F32",
                              infiniop_dtype_name(at));
    for (int i = 0; i < 4; ++i)
        if (t[i]->dtype != at)
            return infiniop_error(INFINI_STATUS_BAD_TENSOR_DTYPE, OP ": %s: dtype %s differs from a's %s", names[i],
                                  infiniop_dtype_name(t[i]->dtype), infiniop_dtype_name(at));
    if (!weight_type_ok(at, wt))
        return infiniop_error(INFINI_STATUS_BAD_TENSOR_DTYPE, OP ": weight: dtype %s is not allowed with %s activations",
                              infiniop_dtype_name(wt), infiniop_dtype_name(at));

    size_t ndim = a_desc->ndim;
    if (ndim == 0) return infiniop_error(INFINI_STATUS_BAD_TENSOR_SHAPE, OP ": a: ndim is 0, at least 1 is needed");
    for (int i = 0; i < 4; ++i) {
        if (t[i]->ndim != ndim)
            return infiniop_error(INFINI_STATUS_BAD_TENSOR_SHAPE, OP ": %s: ndim %zu differs from a's %zu", names[i],
                                  t[i]->ndim, ndim);
        for (size_t k = 0; k < ndim; ++k)
            if (t[i]->shape[k] != a_desc->shape[k])
                return infiniop_error(INFINI_STATUS_BAD_TENSOR_SHAPE, OP ": %s: shape[%zu] is %zu but a's is %zu",
                                      names[i], k, t[i]->shape[k], a_desc->shape[k]);
    }
    size_t D = a_desc->shape[ndim - 1];
    if (D == 0) return infiniop_error(INFINI_STATUS_BAD_TENSOR_SHAPE, OP ": a: the normalised dimension %zu has length 0", ndim - 1);
    if (weight_desc->ndim != 1)
        return infiniop_error(INFINI_STATUS_BAD_TENSOR_SHAPE, OP ": weight: shape must be [%zu] (ndim 1), got ndim %zu",
                              D, weight_desc->ndim);
    if (weight_desc->shape[0] != D)
        return infiniop_error(INFINI_STATUS_BAD_TENSOR_SHAPE, OP ": weight: shape must be [%zu], got [%zu]", D,
                              weight_desc->shape[0]);
    for (int i = 0; i < 4; ++i)
        if (D > 1 && t[i]->numel > 0 && t[i]->strides[ndim - 1] != 1)
            return infiniop_error(INFINI_STATUS_BAD_TENSOR_STRIDES, OP ": %s: stride of the last dimension is %td, must be 1",
                                  names[i], t[i]->strides[ndim - 1]);
    if ((st = infiniop_check_outputs_distinct(OP, 2, names, t)) || (st = infiniop_check_epsilon(OP, "epsilon", epsilon)))
        return st;

    infiniopAddRMSNormInfo info;
    const ptrdiff_t *row_strides[4];
    ptrdiff_t col_strides[4] = {1, 1, 1, 1};
    for (int i = 0; i < 4; ++i) row_strides[i] = t[i]->strides;
    if ((st = infiniop_row_layout_init(&info.rows, OP, ndim - 1, a_desc->shape, D, 4, row_strides, col_strides)))
        return st;
    info.atype = at;
    info.wtype = wt;
    info.w_stride = weight_desc->strides[0];
    info.epsilon = epsilon;
    for (int i = 0; i < 4; ++i) info.span[i] = infiniop_tensor_span(t[i]);
    info.span[4] = infiniop_tensor_span(weight_desc);
    for (int o = 0; o < 2; ++o)
        for (int i = 0; i < 2; ++i) info.same_layout[o][i] = infiniop_tensor_same_layout(t[o], t[2 + i]);
    info.cuda = (infiniopCudaRowPlan){0};
    if ((st = INFINIOP_CUDA_PLAN(handle, infiniop_add_rms_norm_cuda_plan, &info))) return st;
    /* the verbose line: the backend's own text */
    const infiniopCpuWork work = {info.rows.nrows, info.rows.nrows * D * infiniop_dtype_size(at) * 4};
    const infiniopDescribe describe =
        infiniop_op_describe(handle, a_desc, &work, INFINIOP_CUDA_DESCRIBE(row), &info.cuda);
    return infiniop_create_finish(INFINIOP_OP_ADD_RMS_NORM, handle, sizeof(Descriptor), offsetof(Descriptor, info),
                                  &info, sizeof info, &describe, desc_ptr);
}

__C __export infiniStatus_t infiniopGetAddRMSNormWorkspaceSize(infiniopAddRMSNormDescriptor_t desc, size_t *size) {
    return infiniop_workspace_size(OP, desc, INFINIOP_OP_ADD_RMS_NORM, size);
}

__C __export infiniStatus_t infiniopAddRMSNorm(infiniopAddRMSNormDescriptor_t desc, void *workspace,
                                               size_t workspace_size, void *y, void *residual_out, const void *a,
                                               const void *b, const void *weight, void *stream) {
    (void)workspace;
    infiniStatus_t st;
    if ((st = infiniop_check_run(OP, desc, INFINIOP_OP_ADD_RMS_NORM, workspace_size, 0))) return st;
    const infiniopAddRMSNormInfo *info = &((const Descriptor *)desc)->info;
    if (info->rows.nrows == 0) return INFINI_STATUS_SUCCESS;
    size_t es = infiniop_dtype_size(info->atype);
    const infiniopRunTensor t[5] = {{"y", y, info->span[0], es, false},
                                    {"residual_out", residual_out, info->span[1], es, false},
                                    {"a", a, info->span[2], es, false},
                                    {"b", b, info->span[3], es, false},
                                    {"weight", weight, info->span[4], infiniop_dtype_size(info->wtype), false}};
    /* Outputs: exactly a or b (same layout), or apart from every other tensor. */
    uint32_t inplace[2];
    for (int o = 0; o < 2; ++o)
        inplace[o] = (info->same_layout[o][0] ? 1u << ARN_A : 0u) | (info->same_layout[o][1] ? 1u << ARN_B : 0u);
    if ((st = infiniop_check_run_tensors(OP, t, 5, 2, inplace))) return st;
    switch (desc->device) {
    case INFINI_DEVICE_CPU: return infiniop_add_rms_norm_cpu(info, y, residual_out, a, b, weight);
#ifdef INFINIOP_WITH_CUDA
    case INFINI_DEVICE_NVIDIA:
        return infiniop_add_rms_norm_cuda(info, desc->device_id, y, residual_out, a, b, weight, stream);
#endif
    default: return infiniop_no_backend(OP, desc, stream);
    }
}

__C __export infiniStatus_t infiniopDestroyAddRMSNormDescriptor(infiniopAddRMSNormDescriptor_t desc) {
    return infiniop_descriptor_destroy(OP, desc, INFINIOP_OP_ADD_RMS_NORM);
}
