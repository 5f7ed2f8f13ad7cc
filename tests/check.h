/* check.h - the check counter of the test programs that assert many small
 * facts (test_layout.c; the CUDA planner tests through cuda_plan_fake.h):
 * CHECK(cond, fmt, ...) counts a check and prints the first 20 failures,
 * each with its condition and the message. The program reports g_checks
 * and g_fail and fails when g_fail is not 0. Included once per program;
 * plain C and C++, no CUDA. */
#ifndef INFINIOP_TESTS_CHECK_H
#define INFINIOP_TESTS_CHECK_H

#include <stdio.h>

static long g_checks, g_fail;

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        ++g_checks;                                                                                                    \
        if (!(cond) && ++g_fail <= 20) {                                                                               \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                                     \
            printf(__VA_ARGS__);                                                                                       \
            printf("\n");                                                                                              \
        }                                                                                                              \
    } while (0)

#endif
