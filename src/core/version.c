/* core/version.c - the library version (an extension of the InfiniOP ABI;
 * the CPU's instruction set, infiniopGetCpuIsa, is the CPU backend's:
 * src/cpu/cpu.c). */
#include "common.h"
#include "infiniop/version.h"

__C __export const char *infiniopGetVersion(void) {
    return INFINIOP_VERSION;
}
