/*
 * ops/layer_norm/layer_norm.c - the public layer_norm entry points:
 * validate once into infiniopLayerNormInfo, then dispatch by device.
 */
#include "layer_norm.h"
#include "core/create.h"
#include "ops/describe.h"

#define OP "layer_norm"

typedef struct {
    struct InfiniopDescriptor base;
    infiniopLayerNormInfo info;
} Descriptor;

static infiniStatus_t check_shape(const char *name, infiniopTensorDescriptor_t t, size_t ndim, const size_t *shape) {
    if (t->ndim != ndim)
        return infiniop_error(INFINI_STATUS_BAD_TENSOR_SHAPE, OP ": %s: ndim is %zu, expected %zu", name, t->ndim, ndim);
    for (size_t k = 0; k < ndim; ++k)
        if (t->shape[k] != shape[k])
            return infiniop_error(INFINI_STATUS_BAD_TENSOR_SHAPE, OP ": %s: shape[%zu] is %zu, expected %zu", name, k,
                                  t->shape[k], shape[k]);
    return INFINI_STATUS_SUCCESS;
}

__C __export infiniStatus_t infiniopCreateLayerNormDescriptor(infiniopHandle_t handle,
                                                              infiniopLayerNormDescriptor_t *desc_ptr,
                                                              infiniopTensorDescriptor_t output_desc,
                                                              infiniopTensorDescriptor_t input_standardization_desc,
                                                              infiniopTensorDescriptor_t input_std_deviation_desc,
                                                              infiniopTensorDescriptor_t input_desc,
                                                              infiniopTensorDescriptor_t weight_desc,
                                                              infiniopTensorDescriptor_t bias_desc, float eps) {
    infiniStatus_t st;
    const char *names[6] = {"output", "input_standardization", "input_std_deviation", "input", "weight", "bias"};
    infiniopTensorDescriptor_t t[6] = {output_desc, input_standardization_desc, input_std_deviation_desc,
                                       input_desc, weight_desc, bias_desc};
    int nt = bias_desc ? 6 : 5;
    if ((st = infiniop_create_begin(OP, handle, desc_ptr, nt, names, t))) return st;

    infiniDtype_t dt = input_desc->dtype;
    if (!infiniop_is_half_or_float(dt))
        return infiniop_error(INFINI_STATUS_BAD_TENSOR_DTYPE, OP ": input: dtype %s is not F16, BF16 or F32",
                              infiniop_dtype_name(dt));
    for (int i = 0; i < nt; ++i)
        if (t[i]->dtype != dt)
            return infiniop_error(INFINI_STATUS_BAD_TENSOR_DTYPE, OP ": %s: dtype %s differs from input's %s", names[i],
                                  infiniop_dtype_name(t[i]->dtype), infiniop_dtype_name(dt));

    size_t ndim = input_desc->ndim;
    if (ndim == 0) return infiniop_error(INFINI_STATUS_BAD_TENSOR_SHAPE, OP ": input: ndim is 0, at least 1 is needed");
    const size_t *shape = input_desc->shape;
    size_t D = shape[ndim - 1];
    if ((st = check_shape(names[0], output_desc, ndim, shape)) || (st = check_shape(names[1], input_standardization_desc, ndim, shape)) ||
        (st = check_shape(names[2], input_std_deviation_desc, ndim - 1, shape)) ||
        (st = check_shape(names[4], weight_desc, 1, &D)) || (bias_desc && (st = check_shape(names[5], bias_desc, 1, &D))))
        return st;
    if (D == 0)
        return infiniop_error(INFINI_STATUS_BAD_TENSOR_SHAPE, OP ": input: the normalised dimension %zu has length 0", ndim - 1);
    if ((st = infiniop_check_outputs_distinct(OP, 3, names, t)) || (st = infiniop_check_epsilon(OP, "eps", eps)))
        return st;

    infiniopLayerNormInfo info;
    const ptrdiff_t *row_strides[4] = {output_desc->strides, input_standardization_desc->strides, input_desc->strides,
                                       input_std_deviation_desc->strides};
    ptrdiff_t col_strides[4] = {output_desc->strides[ndim - 1], input_standardization_desc->strides[ndim - 1],
                                input_desc->strides[ndim - 1], 0};
    if ((st = infiniop_row_layout_init(&info.rows, OP, ndim - 1, shape, D, 4, row_strides, col_strides))) return st;
    info.dtype = dt;
    info.w_stride = weight_desc->strides[0];
    info.has_bias = bias_desc != NULL;
    info.b_stride = bias_desc ? bias_desc->strides[0] : 0;
    info.eps = eps;
    for (int i = 0; i < 6; ++i) info.span[i] = i < nt ? infiniop_tensor_span(t[i]) : (infiniopSpan){0, 0};
    info.same_layout[0] = infiniop_tensor_same_layout(output_desc, input_desc);
    info.same_layout[1] = infiniop_tensor_same_layout(input_standardization_desc, input_desc);
    info.cuda = (infiniopCudaRowPlan){0};
    if ((st = INFINIOP_CUDA_PLAN(handle, infiniop_layer_norm_cuda_plan, &info))) return st;
    /* the verbose line: the backend's own text */
    const infiniopCpuWork work = {info.rows.nrows, info.rows.nrows * D * infiniop_dtype_size(dt) * 3};
    const infiniopDescribe describe =
        infiniop_op_describe(handle, input_desc, &work, INFINIOP_CUDA_DESCRIBE(row), &info.cuda);
    return infiniop_create_finish(INFINIOP_OP_LAYER_NORM, handle, sizeof(Descriptor), offsetof(Descriptor, info),
                                  &info, sizeof info, &describe, desc_ptr);
}

__C __export infiniStatus_t infiniopGetLayerNormWorkspaceSize(infiniopLayerNormDescriptor_t desc, size_t *size) {
    return infiniop_workspace_size(OP, desc, INFINIOP_OP_LAYER_NORM, size);
}

__C __export infiniStatus_t infiniopLayerNorm(infiniopLayerNormDescriptor_t desc, void *workspace,
                                              size_t workspace_size, void *output, void *input_standardization,
                                              void *input_std_deviation, const void *input, const void *weight,
                                              const void *bias, void *stream) {
    (void)workspace;
    infiniStatus_t st;
    if ((st = infiniop_check_run(OP, desc, INFINIOP_OP_LAYER_NORM, workspace_size, 0))) return st;
    const infiniopLayerNormInfo *info = &((const Descriptor *)desc)->info;
    if (info->has_bias != (bias != NULL))
        return infiniop_error(INFINI_STATUS_BAD_PARAM,
                              info->has_bias ? OP ": bias pointer is NULL but the descriptor has a bias"
                                             : OP ": bias pointer given but the descriptor was created without bias");
    if (info->rows.nrows == 0) return INFINI_STATUS_SUCCESS;
    size_t es = infiniop_dtype_size(info->dtype);
    const infiniopRunTensor t[6] = {{"output", output, info->span[0], es, false},
                                    {"input_standardization", input_standardization, info->span[1], es, false},
                                    {"input_std_deviation", input_std_deviation, info->span[2], es, false},
                                    {"input", input, info->span[3], es, false},
                                    {"weight", weight, info->span[4], es, false},
                                    {"bias", bias, info->span[5], es, true}};
    /* Outputs: output or input_standardization exactly input, or apart from every other tensor. */
    const uint32_t inplace[3] = {info->same_layout[0] ? 1u << 3 : 0u, info->same_layout[1] ? 1u << 3 : 0u, 0u};
    if ((st = infiniop_check_run_tensors(OP, t, 6, 3, inplace))) return st;
    switch (desc->device) {
    case INFINI_DEVICE_CPU:
        return infiniop_layer_norm_cpu(info, output, input_standardization, input_std_deviation, input, weight, bias);
#ifdef INFINIOP_WITH_CUDA
    case INFINI_DEVICE_NVIDIA:
        return infiniop_layer_norm_cuda(info, desc->device_id, output, input_standardization, input_std_deviation,
                                        input, weight, bias, stream);
#endif
    default: return infiniop_no_backend(OP, desc, stream);
    }
}

__C __export infiniStatus_t infiniopDestroyLayerNormDescriptor(infiniopLayerNormDescriptor_t desc) {
    return infiniop_descriptor_destroy(OP, desc, INFINIOP_OP_LAYER_NORM);
}
