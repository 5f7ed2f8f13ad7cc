/* ops/unary/unary.c - silu and sigmoid: their public entry points (the end
 * of this file), one validation and one dispatch for both. */
#include "unary.h"
#include "core/create.h"
#include "ops/describe.h"

/* Tensor names in messages, as the public headers call them. */
static const char *const out_names[] = {[INFINIOP_UNARY_SILU] = "output", [INFINIOP_UNARY_SIGMOID] = "y"};
static const char *const in_names[] = {[INFINIOP_UNARY_SILU] = "input", [INFINIOP_UNARY_SIGMOID] = "x"};

infiniStatus_t infiniop_unary_create(infiniopOp_t op, const char *name, infiniopUnaryKind kind,
                                     infiniopHandle_t handle, struct InfiniopDescriptor **desc_ptr,
                                     infiniopTensorDescriptor_t out, infiniopTensorDescriptor_t in) {
    infiniStatus_t st;
    const char *oname = out_names[kind], *iname = in_names[kind];
    const char *names[2] = {oname, iname};
    const infiniopTensorDescriptor_t t[2] = {out, in};
    if ((st = infiniop_create_begin(name, handle, desc_ptr, 2, names, t))) return st;
    infiniDtype_t dt = out->dtype;
    if (!infiniop_is_half_or_float(dt) && dt != INFINI_DTYPE_F64)
        return infiniop_error(INFINI_STATUS_BAD_TENSOR_DTYPE, "%s: %s: dtype %s is not F16, BF16, F32 or F64",
                              name, oname, infiniop_dtype_name(dt));
    if (in->dtype != dt)
        return infiniop_error(INFINI_STATUS_BAD_TENSOR_DTYPE, "%s: %s: dtype %s differs from %s's %s", name, iname,
                              infiniop_dtype_name(in->dtype), oname, infiniop_dtype_name(dt));
    if ((st = infiniop_check_outputs_distinct(name, 1, names, t))) return st;
    infiniopUnaryInfo info;
    if ((st = infiniop_elt_layout_init(&info.layout, name, oname, out, iname, in))) return st;
    info.kind = kind;
    info.dtype = dt;
    info.out_span = infiniop_tensor_span(out);
    info.in_span = infiniop_tensor_span(in);
    info.same_layout = infiniop_tensor_same_layout(out, in);
    info.cuda = (infiniopCudaEltPlan){0};
    if ((st = INFINIOP_CUDA_PLAN(handle, infiniop_unary_cuda_plan, &info))) return st;
    /* the verbose line: the backend's own text */
    const infiniopCpuWork work = {info.layout.n, 2 * info.layout.n * infiniop_dtype_size(dt)};
    const infiniopDescribe describe =
        infiniop_op_describe(handle, out, &work, INFINIOP_CUDA_DESCRIBE(elt), &info.cuda);
    return infiniop_create_finish(op, handle, sizeof(infiniopUnaryDescriptor), offsetof(infiniopUnaryDescriptor, info),
                                  &info, sizeof info, &describe, desc_ptr);
}

infiniStatus_t infiniop_unary_run(infiniopOp_t op, const char *name, struct InfiniopDescriptor *desc,
                                  size_t workspace_size, void *out, const void *in, void *stream) {
    infiniStatus_t st;
    if ((st = infiniop_check_run(name, desc, op, workspace_size, 0))) return st;
    const infiniopUnaryInfo *info = &((const infiniopUnaryDescriptor *)desc)->info;
    const char *oname = out_names[info->kind], *iname = in_names[info->kind];
    if (info->layout.n == 0) return INFINI_STATUS_SUCCESS;
    size_t es = infiniop_dtype_size(info->dtype);
    const infiniopRunTensor t[2] = {{oname, out, info->out_span, es, false}, {iname, in, info->in_span, es, false}};
    const uint32_t inplace[1] = {info->same_layout ? 1u << 1 : 0u};
    if ((st = infiniop_check_run_tensors(name, t, 2, 1, inplace))) return st;
    switch (desc->device) {
    case INFINI_DEVICE_CPU: return infiniop_unary_cpu(info, out, in);
#ifdef INFINIOP_WITH_CUDA
    case INFINI_DEVICE_NVIDIA: return infiniop_unary_cuda(info, desc->device_id, out, in, stream);
#endif
    default: return infiniop_no_backend(name, desc, stream);
    }
}

/* ------------------------------------------------------------ public entry points */
__C __export infiniStatus_t infiniopCreateSiluDescriptor(infiniopHandle_t handle, infiniopSiluDescriptor_t *desc_ptr,
                                                         infiniopTensorDescriptor_t output_desc,
                                                         infiniopTensorDescriptor_t input_desc) {
    return infiniop_unary_create(INFINIOP_OP_SILU, "silu", INFINIOP_UNARY_SILU, handle, desc_ptr, output_desc,
                                 input_desc);
}

__C __export infiniStatus_t infiniopGetSiluWorkspaceSize(infiniopSiluDescriptor_t desc, size_t *size) {
    return infiniop_workspace_size("silu", desc, INFINIOP_OP_SILU, size);
}

__C __export infiniStatus_t infiniopSilu(infiniopSiluDescriptor_t desc, void *workspace, size_t workspace_size,
                                         void *output, const void *input, void *stream) {
    (void)workspace;
    return infiniop_unary_run(INFINIOP_OP_SILU, "silu", desc, workspace_size, output, input, stream);
}

__C __export infiniStatus_t infiniopDestroySiluDescriptor(infiniopSiluDescriptor_t desc) {
    return infiniop_descriptor_destroy("silu", desc, INFINIOP_OP_SILU);
}

__C __export infiniStatus_t infiniopCreateSigmoidDescriptor(infiniopHandle_t handle,
                                                            infiniopSigmoidDescriptor_t *desc_ptr,
                                                            infiniopTensorDescriptor_t y_desc,
                                                            infiniopTensorDescriptor_t x_desc) {
    return infiniop_unary_create(INFINIOP_OP_SIGMOID, "sigmoid", INFINIOP_UNARY_SIGMOID, handle, desc_ptr, y_desc,
                                 x_desc);
}

__C __export infiniStatus_t infiniopGetSigmoidWorkspaceSize(infiniopSigmoidDescriptor_t desc, size_t *size) {
    return infiniop_workspace_size("sigmoid", desc, INFINIOP_OP_SIGMOID, size);
}

__C __export infiniStatus_t infiniopSigmoid(infiniopSigmoidDescriptor_t desc, void *workspace, size_t workspace_size,
                                            void *y, const void *x, void *stream) {
    (void)workspace;
    return infiniop_unary_run(INFINIOP_OP_SIGMOID, "sigmoid", desc, workspace_size, y, x, stream);
}

__C __export infiniStatus_t infiniopDestroySigmoidDescriptor(infiniopSigmoidDescriptor_t desc) {
    return infiniop_descriptor_destroy("sigmoid", desc, INFINIOP_OP_SIGMOID);
}
