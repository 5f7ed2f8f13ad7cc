/* cuda_plan_fake.h - what the planner tests (test_cuda_plan.cu,
 * test_cuda_elt_plan.cu) share: a fake device the planners read instead of
 * cuda/device.cu's, the check counter (check.h), and the device properties
 * used. Included once per test program. */
#ifndef INFINIOP_TESTS_CUDA_PLAN_FAKE_H
#define INFINIOP_TESTS_CUDA_PLAN_FAKE_H

#include "cuda/common.cuh"

#include <stdio.h>

#include "check.h"

static infiniopCudaProps g_dev;

/* The planner's only view of the device (cuda/device.cu in the library). */
infiniStatus_t infiniop_cuda_device_props(int device, infiniopCudaProps *p) {
    (void)device;
    *p = g_dev;
    return INFINI_STATUS_SUCCESS;
}

static const infiniopCudaProps H100 = {132, 2048, 48 * 1024, 50u << 20, 9, 0};
static const infiniopCudaProps A100 = {108, 2048, 48 * 1024, 40u << 20, 8, 0};

#endif
