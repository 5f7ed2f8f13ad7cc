/*
 * cuda/device.cu - host-side helpers of the CUDA kernels: device facts read
 * once per device, launch-error reporting. (The row planner:
 * cuda/plan_rows.cu.)
 */
#include "cuda/common.cuh"

#include <mutex>

#define MAX_DEVICES 64

static std::once_flag props_once[MAX_DEVICES];
static infiniopCudaProps props_cache[MAX_DEVICES];
static cudaError_t props_err[MAX_DEVICES];

static void read_props(int device) {
    infiniopCudaProps p = {};
    int v = 0;
    cudaError_t e;
    if ((e = cudaDeviceGetAttribute(&p.sm_count, cudaDevAttrMultiProcessorCount, device)) == cudaSuccess &&
        (e = cudaDeviceGetAttribute(&p.max_threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device)) ==
            cudaSuccess &&
        (e = cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlock, device)) == cudaSuccess &&
        (e = cudaDeviceGetAttribute(&p.cc_major, cudaDevAttrComputeCapabilityMajor, device)) == cudaSuccess &&
        (e = cudaDeviceGetAttribute(&p.cc_minor, cudaDevAttrComputeCapabilityMinor, device)) == cudaSuccess) {
        p.smem_per_block = (size_t)v;
        if ((e = cudaDeviceGetAttribute(&v, cudaDevAttrL2CacheSize, device)) == cudaSuccess) p.l2_bytes = (size_t)v;
    }
    props_err[device] = e;
    props_cache[device] = p;
}

infiniStatus_t infiniop_cuda_device_props(int device, infiniopCudaProps *props) {
    if (device < 0 || device >= MAX_DEVICES)
        return infiniop_error(INFINI_STATUS_DEVICE_NOT_FOUND, "CUDA device %d is out of range", device);
    std::call_once(props_once[device], read_props, device);
    if (props_err[device] != cudaSuccess) {
        cudaGetLastError(); /* clear it: it is reported here */
        return infiniop_error(INFINI_STATUS_DEVICE_NOT_FOUND, "CUDA device %d: %s", device,
                              cudaGetErrorString(props_err[device]));
    }
    if (props_cache[device].cc_major < 8)
        return infiniop_error(INFINI_STATUS_DEVICE_ARCHITECTURE_NOT_SUPPORTED,
                              "CUDA device %d has compute capability %d.%d; 8.0 or newer is needed", device,
                              props_cache[device].cc_major, props_cache[device].cc_minor);
    *props = props_cache[device];
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infiniop_cuda_launch_status(const char *op, cudaError_t err) {
    if (err == cudaSuccess) err = cudaGetLastError();
    if (err == cudaSuccess) return INFINI_STATUS_SUCCESS;
    return infiniop_error(INFINI_STATUS_INTERNAL_ERROR, "%s: CUDA launch failed: %s (%s)", op, cudaGetErrorString(err),
                          cudaGetErrorName(err));
}
