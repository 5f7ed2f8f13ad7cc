/*
 * ops/silu/silu.c - the public silu entry points: infiniopCreateSiluDescriptor,
 * infiniopGetSiluWorkspaceSize, infiniopSilu, infiniopDestroySiluDescriptor.
 * Validation and kernels are shared with sigmoid in ops/unary/.
 */
#include "ops/unary/unary.h"

INFINIOP_UNARY_PUBLIC_API(Silu, "silu", INFINIOP_OP_SILU, INFINIOP_UNARY_SILU)
