/*
 * cuda/device.cu - host-side helpers of the CUDA kernels: device facts read
 * once per device, the row-wise launch plan, launch-error reporting.
 */
#include "cuda/common.cuh"

#include <mutex>
#include <stdlib.h>
#include <string.h>

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
#define MAX_BLOCK INFINIOP_CUDA_ROW_MAX_BLOCK

/* The register path (cuda/rows.cuh), for rows of whole 16-byte vectors:
 * vecs = ncols / vec_elems vectors a row.
 *  - vecs <= 128 (with fewer rows than SMs: vecs <= 32): `lanes` threads
 *    of a warp per row (the smallest power of two that holds the row in at
 *    most 4 vectors a thread, 1 vector a thread when it can), blocks of 256
 *    threads, halved while the grid would not give every SM two blocks
 *    (decode shapes: spread the rows); up to 256 vectors (8 a thread, a
 *    warp a row) where the operator has that kernel (INFINIOP_CUDA_REG_WARP8)
 *    and the rows fill the GPU;
 *  - longer rows, one block each: 4 vectors a thread while that leaves at
 *    least 128 threads (2, then 1, otherwise) when there are rows enough to
 *    fill the GPU; with fewer rows than SMs (latency matters, the memory
 *    system is idle) 1 vector a thread while that takes at most 512
 *    threads, then 2, then 4;
 *  - rows a block cannot hold (more than 512 x 4 vectors): a cluster of
 *    2..8 blocks of up to 256 threads x 4 vectors (Hopper and later), for
 *    decode shapes only;
 *  - longer still: off (the streaming kernel).
 * Which shapes take it: short rows (one vector a thread, several rows a
 * warp) and decode shapes (fewer rows than SMs) always; long rows with many
 * rows only where the operator says its register kernel is the faster one
 * there (INFINIOP_CUDA_REG_LONG). With 2 blocks of 128-register threads a
 * SM the load phase of one row is not overlapped with the reduction and
 * stores of the next, so a register kernel must earn long rows by reading
 * less (layer_norm reads w and b late; softmax skips the masked part;
 * add_rms_norm only up to 512 vectors). Measurements: bench/NOTES.md. */
#define RG_ROWS_CAP (1u << 20) /* blocks at most; kernels loop over further rows */

/* The planner's free parameters. A release build uses the defaults below;
 * a build with -DINFINIOP_CUDA_EXPERIMENTS=ON lets environment variables
 * override them (bench/experiments/cuda_knobs.h lists them), to benchmark
 * other variants without recompiling (scripts/gpu-variants.sh). */
struct Knobs {
    int policy;     /* 1 default, 2 all, 3 wide */
    size_t items;   /* 0: the planner's choice */
    size_t cluster; /* 0: the planner's choice */
    bool warp8;
    bool pdl;
    bool early;
    long prefetch; /* < 0: the planner's choice */
};
static const Knobs default_knobs = {1, 0, 0, true, true, false, -1};

#ifdef INFINIOP_CUDA_EXPERIMENTS
#include "cuda_knobs.h" /* bench/experiments/ */
static Knobs env_knobs;
static std::once_flag knobs_once;
static void read_knobs(void) {
    Knobs k = default_knobs;
    experiment_row_knobs(&k.policy, &k.items, &k.cluster, &k.warp8, &k.pdl, &k.early, &k.prefetch);
    env_knobs = k;
}
static const Knobs &knobs(void) {
    std::call_once(knobs_once, read_knobs);
    return env_knobs;
}
#else
static const Knobs &knobs(void) { return default_knobs; }
#endif

bool infiniop_cuda_pdl(const infiniopCudaProps &p) { return knobs().pdl && p.cc_major >= 9; }

static void plan_reg(const infiniopCudaProps &p, size_t nrows, size_t ncols, int vec_elems, unsigned reg_flags,
                     infiniopCudaRowPlan *q) {
    q->reg_items = 0;
    if (vec_elems <= 1 || ncols % (size_t)vec_elems != 0 || nrows == 0) return;
    const size_t vecs = ncols / (size_t)vec_elems;
    const size_t sms = (size_t)p.sm_count;
    const Knobs &kn = knobs();
    const int policy = kn.policy;
    if (policy == 1 && nrows >= sms && vecs > 32 && !(reg_flags & INFINIOP_CUDA_REG_LONG))
        return; /* the streaming kernel */
    /* A warp per row up to 8 vectors a thread when the operator has that
     * kernel and the rows fill the GPU (fewer rows: blocks spread them). */
    const size_t warp_vecs =
        (reg_flags & INFINIOP_CUDA_REG_WARP8) && nrows >= sms && kn.warp8 ? 256 : 128;
    /* Fewer rows than SMs: a row of more than 32 vectors is spread over a
     * block, a vector a thread, rather than held by one warp, whose long
     * dependent chain of instructions would then be the whole latency. */
    const bool spread = nrows < sms && vecs > 32;
    size_t blocks;
    if (vecs <= warp_vecs && !spread) {
        unsigned lanes = 1;
        while (lanes < 32 && lanes < vecs) lanes *= 2;
        size_t items = (vecs + lanes - 1) / lanes;
        items = items <= 1 ? 1 : items <= 2 ? 2 : items <= 4 ? 4 : 8;
        unsigned threads = 256;
        while (threads > 32 && (nrows * lanes + threads - 1) / threads < 2 * sms) threads /= 2;
        q->reg_items = (unsigned)items;
        q->reg_lanes = lanes;
        q->reg_cluster = 1;
        q->reg_threads = threads;
        blocks = (nrows * lanes + threads - 1) / threads;
    } else {
        const bool latency = nrows < sms || policy == 3;
        size_t items = 0, threads = 0;
        const size_t order_lat[3] = {1, 2, 4}, order_tp[3] = {4, 2, 1};
        const size_t forced = kn.items;
        const size_t kc = kn.cluster && p.cc_major >= 9 && nrows < sms ? kn.cluster : 1;
        for (int i = 0; i < 3; ++i) {
            size_t it = forced ? forced : latency ? order_lat[i] : order_tp[i];
            size_t t = ((vecs + it * kc - 1) / (it * kc) + 31) / 32 * 32;
            /* RG_MAX_THREADS; decode shapes take 2 vectors a thread
             * rather than blocks over 512 threads (a shorter barrier tree
             * and reduction) */
            size_t tmax = it >= 2 || nrows < sms ? 512 : 1024;
            if (t > tmax) continue;
            if (!latency && t < 128 && it > 1) continue;
            items = it, threads = t;
            break;
        }
        unsigned cl = (unsigned)kc;
        if (!items) { /* a cluster: up to 8 blocks of 4 vectors a thread */
            if (p.cc_major < 9) return;
            if (policy == 1 && nrows >= sms) return; /* clusters lost to streaming with many rows */
            size_t c = (vecs + 1023) / 1024;
            if (c > 8) c = 8;
            size_t t = ((vecs + 4 * c - 1) / (4 * c) + 31) / 32 * 32;
            if (t > 512) return;
            items = 4, threads = t, cl = (unsigned)c;
        }
        q->reg_items = (unsigned)items;
        q->reg_lanes = 0;
        q->reg_cluster = cl;
        q->reg_threads = (unsigned)threads;
        blocks = nrows;
    }
    if (blocks > RG_ROWS_CAP) blocks = RG_ROWS_CAP;
    q->reg_grid = (unsigned)(blocks * (q->reg_lanes ? 1 : q->reg_cluster));
    q->reg_latency = nrows < sms || kn.early;
    /* Rows that fill the GPU: each group asks L2 for the input of the row
     * an eighth of L2 ahead, counting every input (REG_2IN: two). It adds
     * requests in flight without registers; a quarter of L2 or more ahead
     * evicts rows before they are used (bench/NOTES.md). */
    size_t pf = 0;
    if (nrows >= sms && p.l2_bytes) {
        const size_t row_bytes = ncols * (size_t)(16 / vec_elems) * (reg_flags & INFINIOP_CUDA_REG_2IN ? 2 : 1);
        pf = p.l2_bytes / 8 / row_bytes;
        if (pf < 1) pf = 1;
        if (pf > 1u << 20) pf = 1u << 20;
    }
    if (kn.prefetch >= 0) pf = (size_t)kn.prefetch;
    q->reg_prefetch = (unsigned)pf;
}

infiniStatus_t infiniop_cuda_plan_rows(int device, size_t nrows, size_t ncols, int vec_elems,
                                       unsigned reg_flags, infiniopCudaRowPlan *plan) {
    infiniopCudaProps p;
    infiniStatus_t st = infiniop_cuda_device_props(device, &p);
    if (st != INFINI_STATUS_SUCCESS) return st; /* the message names the device */
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
    plan_reg(p, nrows, ncols, vec_elems, reg_flags, &q);
    q.pdl = infiniop_cuda_pdl(p);
    *plan = q;
    return INFINI_STATUS_SUCCESS;
}
