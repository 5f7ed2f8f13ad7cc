/*
 * ops/silu/silu.c - the public silu entry points. Validation and kernels
 * are shared with sigmoid in ops/unary/.
 */
#include "ops/unary/unary.h"

#define OP "silu"

__C __export infiniStatus_t infiniopCreateSiluDescriptor(infiniopHandle_t handle, infiniopSiluDescriptor_t *desc_ptr,
                                                         infiniopTensorDescriptor_t output_desc,
                                                         infiniopTensorDescriptor_t input_desc) {
    return infiniop_unary_create(INFINIOP_OP_SILU, OP, INFINIOP_UNARY_SILU, handle, desc_ptr, output_desc, input_desc);
}

__C __export infiniStatus_t infiniopGetSiluWorkspaceSize(infiniopSiluDescriptor_t desc, size_t *size) {
    return infiniop_workspace_size(OP, desc, INFINIOP_OP_SILU, size);
}

__C __export infiniStatus_t infiniopSilu(infiniopSiluDescriptor_t desc, void *workspace, size_t workspace_size,
                                         void *output, const void *input, void *stream) {
    (void)workspace;
    return infiniop_unary_run(INFINIOP_OP_SILU, OP, desc, workspace_size, output, input, stream);
}

__C __export infiniStatus_t infiniopDestroySiluDescriptor(infiniopSiluDescriptor_t desc) {
    return infiniop_descriptor_destroy(OP, desc, INFINIOP_OP_SILU);
}
