/*
 * ops/sigmoid/sigmoid.c - the public sigmoid entry points:
 * infiniopCreateSigmoidDescriptor, infiniopGetSigmoidWorkspaceSize,
 * infiniopSigmoid, infiniopDestroySigmoidDescriptor.
 * Validation and kernels are shared with silu in ops/unary/.
 */
#include "ops/unary/unary.h"

INFINIOP_UNARY_PUBLIC_API(Sigmoid, "sigmoid", INFINIOP_OP_SIGMOID, INFINIOP_UNARY_SIGMOID)
