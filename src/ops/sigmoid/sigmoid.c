/*
 * ops/sigmoid/sigmoid.c - the public sigmoid entry points. Validation and
 * kernels are shared with silu in ops/unary/.
 */
#include "ops/unary/unary.h"

#define OP "sigmoid"

__C __export infiniStatus_t infiniopCreateSigmoidDescriptor(infiniopHandle_t handle,
                                                            infiniopSigmoidDescriptor_t *desc_ptr,
                                                            infiniopTensorDescriptor_t y_desc,
                                                            infiniopTensorDescriptor_t x_desc) {
    return infiniop_unary_create(INFINIOP_OP_SIGMOID, OP, INFINIOP_UNARY_SIGMOID, handle, desc_ptr, y_desc, x_desc);
}

__C __export infiniStatus_t infiniopGetSigmoidWorkspaceSize(infiniopSigmoidDescriptor_t desc, size_t *size) {
    return infiniop_workspace_size(OP, desc, INFINIOP_OP_SIGMOID, size);
}

__C __export infiniStatus_t infiniopSigmoid(infiniopSigmoidDescriptor_t desc, void *workspace, size_t workspace_size,
                                            void *y, const void *x, void *stream) {
    (void)workspace;
    return infiniop_unary_run(INFINIOP_OP_SIGMOID, OP, desc, workspace_size, y, x, stream);
}

__C __export infiniStatus_t infiniopDestroySigmoidDescriptor(infiniopSigmoidDescriptor_t desc) {
    return infiniop_descriptor_destroy(OP, desc, INFINIOP_OP_SIGMOID);
}
