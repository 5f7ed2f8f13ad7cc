/* test_silu.c - randomised tests of infiniopSilu (see common/unary_test.c
 * for the cases and the tolerances). */
#include "reference.h"
#include "unary_test.h"

int main(int argc, char **argv) {
    static const unary_op_t op = {
        "silu", infiniopCreateSiluDescriptor, infiniopGetSiluWorkspaceSize, infiniopSilu,
        infiniopDestroySiluDescriptor, ref_silu_scalar,
    };
    return unary_test_main(argc, argv, &op);
}
