/*
 * infiniop.h - the operator library (libinfiniop.so), all of it.
 *
 * Usage pattern for every operator X:
 *   1. infiniopCreateHandle(&handle)           (the thread's current device)
 *   2. infiniopCreateTensorDescriptor(...)     (one per tensor)
 *   3. infiniopCreateXDescriptor(handle, &op, tensors..., scalars...)
 *      validates everything once; tensor descriptors may be destroyed after.
 *   4. infiniopGetXWorkspaceSize(op, &size)    (0 for every operator here)
 *   5. infiniopX(op, workspace, size, outputs..., inputs..., stream)
 *      as often as needed, from any thread.
 *   6. infiniopDestroyXDescriptor(op), infiniopDestroyHandle(handle).
 * On any error the status says what class of error it was and
 * infiniopGetLastErrorMessage() says which tensor and dimension.
 */
#ifndef __INFINIOP_API_H__
#define __INFINIOP_API_H__

#include "infiniop/error.h"
#include "infiniop/handle.h"
#include "infiniop/operator_descriptor.h"
#include "infiniop/tensor_descriptor.h"
#include "infiniop/ops/add_rms_norm.h"
#include "infiniop/ops/causal_softmax.h"
#include "infiniop/ops/layer_norm.h"
#include "infiniop/ops/sigmoid.h"
#include "infiniop/ops/silu.h"

/* Run-time queries (extensions of the InfiniOP ABI). The compile-time
 * version is in "infiniop/version.h" (INFINIOP_VERSION, INFINIOP_VERSION_MAJOR
 * ...), installed beside this header.
 *
 * infiniopGetVersion: the loaded library's version, e.g. "0.1.0".
 * infiniopGetCpuIsa: the instruction set the CPU kernels run with, chosen
 *   once from CPUID: "avx512bf16", "avx512", "avx2" or "generic" (the
 *   compiler's baseline; also every build for a CPU other than x86-64). The
 *   environment variable INFINIOP_CPU_ISA=generic|avx2|avx512|avx512bf16,
 *   read at the first call, caps it.
 * Both return constant strings, never NULL. */
__C __export const char *infiniopGetVersion(void);
__C __export const char *infiniopGetCpuIsa(void);

#endif /* __INFINIOP_API_H__ */
