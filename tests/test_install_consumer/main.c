/* A consumer of an installed infiniop-c: checks the version macros against
 * the run-time version, names the CPU instruction set, and runs one operator
 * (sigmoid on four values), printing "ok <version> <isa>" on success. */
#include <infiniop.h>
#include <infiniop/version.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#if !defined(INFINIOP_VERSION_MAJOR) || !defined(INFINIOP_VERSION_MINOR) || !defined(INFINIOP_VERSION_PATCH)
#error "infiniop/version.h lacks the version macros"
#endif

int main(int argc, char **argv) {
    char macro[64];
    snprintf(macro, sizeof macro, "%d.%d.%d", INFINIOP_VERSION_MAJOR, INFINIOP_VERSION_MINOR, INFINIOP_VERSION_PATCH);
    const char *v = infiniopGetVersion();
    if (strcmp(v, INFINIOP_VERSION) != 0 || strcmp(v, macro) != 0) {
        fprintf(stderr, "version mismatch: library %s, header %s (%s)\n", v, INFINIOP_VERSION, macro);
        return 1;
    }
    if (argc > 1 && strcmp(v, argv[1]) != 0) {
        fprintf(stderr, "version %s, expected %s\n", v, argv[1]);
        return 1;
    }
    const char *isa = infiniopGetCpuIsa();
    if (!isa || (strcmp(isa, "avx512bf16") && strcmp(isa, "avx512") && strcmp(isa, "avx2") && strcmp(isa, "generic"))) {
        fprintf(stderr, "unexpected CPU ISA %s\n", isa ? isa : "(null)");
        return 1;
    }

    infiniopHandle_t handle;
    infiniopTensorDescriptor_t t;
    infiniopSigmoidDescriptor_t op;
    size_t shape[1] = {4};
    float x[4] = {0.0f, 1.0f, -1.0f, -1000.0f}, y[4] = {-1, -1, -1, -1};
    if (infiniopCreateHandle(&handle) || infiniopCreateTensorDescriptor(&t, 1, shape, NULL, INFINI_DTYPE_F32) ||
        infiniopCreateSigmoidDescriptor(handle, &op, t, t) || infiniopSigmoid(op, NULL, 0, y, x, NULL)) {
        fprintf(stderr, "call failed: %s\n", infiniopGetLastErrorMessage());
        return 1;
    }
    for (int i = 0; i < 4; ++i) {
        double want = 1.0 / (1.0 + exp(-(double)x[i]));
        if (fabs(y[i] - want) > 1e-6) {
            fprintf(stderr, "sigmoid(%g) = %g, expected %g\n", x[i], y[i], want);
            return 1;
        }
    }
    infiniopDestroySigmoidDescriptor(op);
    infiniopDestroyTensorDescriptor(t);
    infiniopDestroyHandle(handle);
    printf("ok %s %s\n", v, isa);
    return 0;
}
