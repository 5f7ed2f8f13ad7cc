/*
 * unary_test.h - the randomised test of an elementwise operator (silu,
 * sigmoid): one driver, one small table per operator.
 */
#ifndef INFINIOP_UNARY_TEST_H
#define INFINIOP_UNARY_TEST_H

#include "testlib.h"

typedef struct {
    const char *name;
    infiniStatus_t (*create)(infiniopHandle_t, struct InfiniopDescriptor **, infiniopTensorDescriptor_t out,
                             infiniopTensorDescriptor_t in);
    infiniStatus_t (*workspace)(struct InfiniopDescriptor *, size_t *);
    infiniStatus_t (*run)(struct InfiniopDescriptor *, void *, size_t, void *out, const void *in, void *stream);
    infiniStatus_t (*destroy)(struct InfiniopDescriptor *);
    long double (*ref)(long double);
} unary_op_t;

int unary_test_main(int argc, char **argv, const unary_op_t *op);

#endif
