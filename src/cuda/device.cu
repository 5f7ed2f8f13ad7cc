/*
 * cuda/device.cu - host-side helpers of the CUDA kernels: device facts read
 * once per device, the row-wise launch plan, launch-error reporting.
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

/* Rows of up to WARP_MAX_COLS elements go one warp per row, WARP_ROWS rows
 * per block; longer rows one block per row, with about ITEMS_PER_THREAD
 * vectors per thread. The row is cached in shared memory (as float32)
 * between the passes when it fits the default 48 KB of a block (D <= 12032);
 * otherwise
 * each pass streams it from global memory (L2 holds recent rows). */
#define WARP_MAX_COLS 1024
#define WARP_ROWS 4
#define ITEMS_PER_THREAD 4
#define MIN_BLOCK 128
#define MAX_BLOCK 1024

infiniStatus_t infiniop_cuda_plan_rows(const char *op, int device, size_t nrows, size_t ncols, int vec_elems,
                                       infiniopCudaRowPlan *plan) {
    infiniopCudaProps p;
    infiniStatus_t st = infiniop_cuda_device_props(device, &p);
    if (st != INFINI_STATUS_SUCCESS) return st; /* the message names the device */
    (void)op;
    infiniopCudaRowPlan q = {};
    size_t blocks;
    if (ncols <= WARP_MAX_COLS) {
        q.mode = INFINIOP_CUDA_ROW_WARP;
        q.threads = 32 * WARP_ROWS;
        q.rows_per_block = WARP_ROWS;
        q.smem = (size_t)WARP_ROWS * ncols * sizeof(float);
    } else {
        q.mode = INFINIOP_CUDA_ROW_BLOCK;
        size_t vecs = (ncols + (size_t)vec_elems - 1) / (size_t)vec_elems;
        size_t t = (vecs + ITEMS_PER_THREAD - 1) / ITEMS_PER_THREAD;
        t = (t + 31) / 32 * 32;
        if (t < MIN_BLOCK) t = MIN_BLOCK;
        if (t > MAX_BLOCK) t = MAX_BLOCK;
        q.threads = (unsigned)t;
        q.rows_per_block = 1;
        q.smem = ncols * sizeof(float);
    }
    /* The block's static shared memory (the reduction scratch) counts
     * against the same limit: keep 1 KB for it. */
    if (q.smem + 1024 > p.smem_per_block) q.smem = 0;
    blocks = (nrows + q.rows_per_block - 1) / q.rows_per_block;
    size_t resident = (size_t)p.sm_count * (size_t)(p.max_threads_per_sm / (int)q.threads > 0
                                                         ? p.max_threads_per_sm / (int)q.threads
                                                         : 1);
    size_t cap = resident * 8; /* enough waves to balance; more rows loop inside the kernel */
    if (blocks > cap) blocks = cap;
    if (blocks < 1) blocks = 1;
    q.grid = (unsigned)blocks;
    *plan = q;
    return INFINI_STATUS_SUCCESS;
}
