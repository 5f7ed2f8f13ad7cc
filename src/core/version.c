/* core/version.c - run-time queries: the library version and the CPU
 * instruction set its kernels run with (extensions of the InfiniOP ABI). */
#include "common.h"
#include "cpu/cpu.h"
#include "infiniop/version.h"

__C __export const char *infiniopGetVersion(void) {
    return INFINIOP_VERSION;
}

__C __export const char *infiniopGetCpuIsa(void) {
#if defined(INFINIOP_CPU_MULTI_ISA)
    switch (infiniop_cpu_isa()) {
    case INFINIOP_ISA_AVX512BF16: return "avx512bf16";
    case INFINIOP_ISA_AVX512: return "avx512";
    case INFINIOP_ISA_AVX2: return "avx2";
    case INFINIOP_ISA_GENERIC: break;
    }
#endif
    /* The compiler's baseline: the only kernels of a build without the
     * x86-64 instruction-set passes, or what this CPU is capped to. */
    return "generic";
}
