/* test_sigmoid.c - randomised tests of infiniopSigmoid (see
 * common/unary_test.c for the cases and the tolerances). */
#include "reference.h"
#include "unary_test.h"

int main(int argc, char **argv) {
    static const unary_op_t op = {
        "sigmoid", infiniopCreateSigmoidDescriptor, infiniopGetSigmoidWorkspaceSize, infiniopSigmoid,
        infiniopDestroySigmoidDescriptor, ref_sigmoid_scalar,
    };
    return unary_test_main(argc, argv, &op);
}
