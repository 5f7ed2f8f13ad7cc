/* core/descriptor.c - what all operator descriptors share. */
#include "common.h"

#include <stdlib.h>

const char *infiniop_op_name(infiniopOp_t op) {
    switch (op) {
    case INFINIOP_OP_ADD_RMS_NORM: return "add_rms_norm";
    case INFINIOP_OP_CAUSAL_SOFTMAX: return "causal_softmax";
    case INFINIOP_OP_LAYER_NORM: return "layer_norm";
    case INFINIOP_OP_SILU: return "silu";
    case INFINIOP_OP_SIGMOID: return "sigmoid";
    }
    return "unknown";
}

void *infiniop_descriptor_new(size_t size, infiniopOp_t op, infiniopHandle_t handle) {
    struct InfiniopDescriptor *d = calloc(1, size);
    if (!d) return NULL;
    d->magic = INFINIOP_DESC_MAGIC;
    d->op = op;
    d->device = handle->device;
    d->device_id = handle->device_id;
    return d;
}

infiniStatus_t infiniop_check_descriptor(const char *opname, const struct InfiniopDescriptor *desc, infiniopOp_t op) {
    if (!desc) return infiniop_error(INFINI_STATUS_NULL_POINTER, "%s: descriptor is NULL", opname);
    if (desc->magic != INFINIOP_DESC_MAGIC)
        return infiniop_error(INFINI_STATUS_BAD_PARAM, "%s: not a live operator descriptor", opname);
    if (desc->op != op)
        return infiniop_error(INFINI_STATUS_BAD_PARAM, "%s: descriptor belongs to operator %s", opname,
                              infiniop_op_name(desc->op));
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infiniop_descriptor_destroy(const char *opname, struct InfiniopDescriptor *desc, infiniopOp_t op) {
    infiniStatus_t st = infiniop_check_descriptor(opname, desc, op);
    if (st != INFINI_STATUS_SUCCESS) return st;
    desc->magic = 0;
    infiniop_retire(desc);
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infiniop_check_run(const char *opname, const struct InfiniopDescriptor *desc, infiniopOp_t op,
                                  size_t workspace_size, size_t workspace_needed) {
    infiniStatus_t st = infiniop_check_descriptor(opname, desc, op);
    if (st != INFINI_STATUS_SUCCESS) return st;
    if (workspace_size < workspace_needed)
        return infiniop_error(INFINI_STATUS_INSUFFICIENT_WORKSPACE, "%s: workspace of %zu bytes, %zu needed", opname,
                              workspace_size, workspace_needed);
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infiniop_workspace_size(const char *opname, const struct InfiniopDescriptor *desc, infiniopOp_t op,
                                       size_t *size) {
    infiniStatus_t st = infiniop_check_descriptor(opname, desc, op);
    if (st) return st;
    if (!size) return infiniop_error(INFINI_STATUS_NULL_POINTER, "%s: size is NULL", opname);
    *size = 0;
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infiniop_no_backend(const char *opname, const struct InfiniopDescriptor *desc, void *stream) {
    (void)stream;
    return infiniop_error(INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED, "%s: device kind %d", opname, (int)desc->device);
}

static infiniStatus_t check_any(const char *fn, const struct InfiniopDescriptor *desc, const void *out) {
    if (!desc || !out) return infiniop_error(INFINI_STATUS_NULL_POINTER, "%s: NULL argument", fn);
    if (desc->magic != INFINIOP_DESC_MAGIC)
        return infiniop_error(INFINI_STATUS_BAD_PARAM, "%s: not a live operator descriptor", fn);
    return INFINI_STATUS_SUCCESS;
}

__C __export infiniStatus_t infiniopGetDescriptorDeviceType(const struct InfiniopDescriptor *desc_ptr,
                                                            infiniDevice_t *device_type) {
    infiniStatus_t st = check_any("infiniopGetDescriptorDeviceType", desc_ptr, device_type);
    if (st == INFINI_STATUS_SUCCESS) *device_type = desc_ptr->device;
    return st;
}

__C __export infiniStatus_t infiniopGetDescriptorDeviceId(const struct InfiniopDescriptor *desc_ptr, int *device_id) {
    infiniStatus_t st = check_any("infiniopGetDescriptorDeviceId", desc_ptr, device_id);
    if (st == INFINI_STATUS_SUCCESS) *device_id = desc_ptr->device_id;
    return st;
}
