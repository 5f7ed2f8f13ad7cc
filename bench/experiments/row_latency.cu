/*
 * bench/experiments/row_latency.cu - where the time of a tiny row operation
 * goes: add_rms_norm on a few short rows (decode-sized, L2-resident), the
 * library through its C ABI against minimal kernels doing the same work,
 * all timed in one process as CUDA graphs of back-to-back launches. Not
 * part of the library: a measurement for the row planner (bench/NOTES.md).
 *
 *   nvcc -O3 -arch=sm_90 -std=c++17 -Iinclude -Ibuild-gpu/include \
 *     bench/experiments/row_latency.cu -Lbuild-gpu -linfiniop -linfinirt \
 *     -Xlinker -rpath=$PWD/build-gpu -o rl && ./rl      (./rl once: for a profiler)
 *
 * Variants (bf16 rows of D elements, R rows, contiguous; weight f32 or bf16):
 *   lib        infiniopAddRMSNorm (the planner's launch)
 *   mini       a warp-slice per row: lanes = 16-byte vectors of a row (a
 *              power of two, <= 32), items = vectors a lane; every load
 *              before the reduction; plain arguments; no PDL
 *   mini_pdl   the same launched with programmatic stream serialization
 *              (griddepcontrol.wait first, as the library's kernels)
 *   mini_late  mini_pdl with the weight loaded after the reduction
 *   copyk      a kernel copying the same bytes (a, b -> y, res), PDL
 *   empty      an empty kernel (the graph's launch floor), PDL
 *   memcpy     cudaMemcpyAsync of the same bytes (two graph memcpy nodes)
 * Every variant's outputs are compared bit for bit with lib's (mini*).
 */
#include <cuda_bf16.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <algorithm>
#include <vector>

#include <infiniop.h>
#include <infinirt.h>

#include "graph_time.cuh"

struct alignas(16) V8 {
    __nv_bfloat16 v[8];
};

__device__ __forceinline__ void pdl_wait(bool pdl) {
    if (pdl) {
        asm volatile("griddepcontrol.wait;" ::: "memory");
        asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    }
}

/* add_rms_norm, bf16 activations and weight: y = (a + b) * rsqrt(mean + eps) * w,
 * res = a + b, rounded as the library rounds (float32, one rounding each). */
template <int ITEMS, bool PDL, bool LATE_W>
__global__ void __launch_bounds__(256) mini_kernel(__nv_bfloat16 *y, __nv_bfloat16 *res, const __nv_bfloat16 *a,
                                                   const __nv_bfloat16 *b, const __nv_bfloat16 *w, int R, int nvec,
                                                   int lanes_log2, float eps) {
    pdl_wait(PDL);
    const int lanes = 1 << lanes_log2;
    const int row = (blockIdx.x * blockDim.x + threadIdx.x) >> lanes_log2;
    const int lane = threadIdx.x & (lanes - 1);
    if (row >= R) return; /* whole row groups only: the shuffles below stay within the group */
    const V8 *ar = (const V8 *)a + (size_t)row * nvec, *br = (const V8 *)b + (size_t)row * nvec;
    V8 qa[ITEMS], qb[ITEMS], qw[ITEMS];
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int c = lane + k * lanes;
        if (c < nvec) {
            qa[k] = ar[c];
            qb[k] = br[c];
            if (!LATE_W) qw[k] = ((const V8 *)w)[c];
        }
    }
    float ss = 0.f;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int c = lane + k * lanes;
        if (c < nvec)
#pragma unroll
            for (int e = 0; e < 8; ++e) {
                const float v = __bfloat162float(qa[k].v[e]) + __bfloat162float(qb[k].v[e]);
                ss += v * v;
            }
    }
    const unsigned mask = lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1u) << (threadIdx.x & 31u & ~(lanes - 1u));
    for (int o = lanes >> 1; o > 0; o >>= 1) ss += __shfl_xor_sync(mask, ss, o);
    const float scale = 1.0f / sqrtf(ss / (float)(nvec * 8) + eps);
    V8 *yr = (V8 *)y + (size_t)row * nvec, *rr = (V8 *)res + (size_t)row * nvec;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int c = lane + k * lanes;
        if (c < nvec) {
            if (LATE_W) qw[k] = ((const V8 *)w)[c];
            V8 o, q;
#pragma unroll
            for (int e = 0; e < 8; ++e) {
                const float v = __bfloat162float(qa[k].v[e]) + __bfloat162float(qb[k].v[e]);
                q.v[e] = __float2bfloat16_rn(v);
                o.v[e] = __float2bfloat16_rn(v * scale * __bfloat162float(qw[k].v[e]));
            }
            rr[c] = q;
            yr[c] = o;
        }
    }
}

__global__ void copy_kernel(uint4 *y, uint4 *res, const uint4 *a, const uint4 *b, int n) {
    pdl_wait(true);
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a[i];
        res[i] = b[i];
    }
}
__global__ void empty_kernel(int) { pdl_wait(true); }

template <typename... KArgs, typename... Args>
static void launch(void (*k)(KArgs...), unsigned grid, unsigned block, bool pdl, cudaStream_t s, Args... args) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(block);
    cfg.stream = s;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = pdl ? at : nullptr;
    cfg.numAttrs = pdl ? 1 : 0;
    CK(cudaLaunchKernelEx(&cfg, k, ((KArgs)args)...));
}

struct Case {
    int R, D;
};
struct Bufs {
    __nv_bfloat16 *a, *b, *w, *y, *res;
    size_t n;
};

static infiniopHandle_t g_handle;
static infiniopAddRMSNormDescriptor_t g_desc;

enum { LIB, MINI, MINI_PDL, MINI_LATE, COPYK, EMPTY, MEMCPY, NVAR };
static const char *const names[NVAR] = {"lib", "mini", "mini_pdl", "mini_late", "copyk", "empty", "memcpy"};

template <int ITEMS> static void mini_launch(int v, const Bufs &B, const Case &c, cudaStream_t s) {
    const int nvec = c.D / 8;
    int lanes = 1, lg = 0;
    while (lanes < 32 && lanes * ITEMS < nvec) lanes *= 2, ++lg;
    int threads = c.R * lanes;
    if (threads > 128) threads = 128;
    if (threads < 32) threads = 32;
    const unsigned grid = (unsigned)((c.R * lanes + threads - 1) / threads);
    if (v == MINI)
        launch(mini_kernel<ITEMS, false, false>, grid, threads, false, s, B.y, B.res, B.a, B.b, B.w, c.R, nvec, lg, 1e-6f);
    else if (v == MINI_PDL)
        launch(mini_kernel<ITEMS, true, false>, grid, threads, true, s, B.y, B.res, B.a, B.b, B.w, c.R, nvec, lg, 1e-6f);
    else
        launch(mini_kernel<ITEMS, true, true>, grid, threads, true, s, B.y, B.res, B.a, B.b, B.w, c.R, nvec, lg, 1e-6f);
}

static void run(int v, const Bufs &B, const Case &c, cudaStream_t s) {
    const int nvec = c.D / 8;
    switch (v) {
    case LIB:
        if (infiniopAddRMSNorm(g_desc, nullptr, 0, B.y, B.res, B.a, B.b, B.w, s)) {
            fprintf(stderr, "library call failed\n");
            exit(1);
        }
        break;
    case MINI:
    case MINI_PDL:
    case MINI_LATE:
        if (nvec <= 32) mini_launch<1>(v, B, c, s);
        else if (nvec <= 64) mini_launch<2>(v, B, c, s);
        else mini_launch<4>(v, B, c, s); /* up to 128 vectors: 1024 elements; longer rows stay out of the cases */
        break;
    case COPYK: {
        const int n = (int)(B.n / 8);
        launch(copy_kernel, (unsigned)((n + 127) / 128), 128, true, s, (uint4 *)B.y, (uint4 *)B.res, (const uint4 *)B.a,
               (const uint4 *)B.b, n);
        break;
    }
    case EMPTY: launch(empty_kernel, 1, 32, true, s, 0); break;
    case MEMCPY: /* the same bytes: a -> y, b -> res */
        CK(cudaMemcpyAsync(B.y, B.a, B.n * 2, cudaMemcpyDeviceToDevice, s));
        CK(cudaMemcpyAsync(B.res, B.b, B.n * 2, cudaMemcpyDeviceToDevice, s));
        break;
    }
}

static float time_variant(int v, const Bufs &B, const Case &c, cudaStream_t s) {
    const int L = 50;
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int k = 0; k < L; ++k) run(v, B, c, s);
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    const float t = graph_median_us(ge, s, L, 3, 15);
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    return t;
}

int main(int argc, char **argv) {
    /* "once": each case's lib and mini_pdl launched once, no graphs, no
     * timing (for a profiler: ncu --clock-control none ./rl once) */
    const bool once = argc > 1 && !strcmp(argv[1], "once");
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    if (infinirtSetDevice(INFINI_DEVICE_NVIDIA, 0) || infiniopCreateHandle(&g_handle)) {
        fprintf(stderr, "library handle failed\n");
        return 1;
    }
    const Case cases[] = {{1, 64}, {1, 256}, {5, 200 / 8 * 8}, {1, 896}, {7, 896}, {2, 768}, {32, 768}, {1, 1024}, {8, 1024}};
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    printf("median us a launch (graphs of 50 launches, 15 replays); columns:");
    for (int v = 0; v < NVAR; ++v) printf(" %s", names[v]);
    printf("\n");
    int bad = 0;
    for (const Case &c : cases) {
        Bufs B;
        B.n = (size_t)c.R * c.D;
        const size_t bytes = B.n * 2;
        CK(cudaMalloc(&B.a, bytes));
        CK(cudaMalloc(&B.b, bytes));
        CK(cudaMalloc(&B.y, bytes));
        CK(cudaMalloc(&B.res, bytes));
        CK(cudaMalloc(&B.w, c.D * 2));
        std::vector<__nv_bfloat16> h(B.n), hw(c.D);
        srand(7);
        for (auto &x : h) x = __float2bfloat16((float)rand() / RAND_MAX * 4.f - 2.f);
        for (auto &x : hw) x = __float2bfloat16((float)rand() / RAND_MAX + 0.5f);
        CK(cudaMemcpy(B.a, h.data(), bytes, cudaMemcpyHostToDevice));
        for (auto &x : h) x = __float2bfloat16((float)rand() / RAND_MAX * 4.f - 2.f);
        CK(cudaMemcpy(B.b, h.data(), bytes, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(B.w, hw.data(), c.D * 2, cudaMemcpyHostToDevice));
        size_t shape[2] = {(size_t)c.R, (size_t)c.D}, wshape[1] = {(size_t)c.D};
        ptrdiff_t st[2] = {c.D, 1}, wst[1] = {1};
        infiniopTensorDescriptor_t td, wd;
        if (infiniopCreateTensorDescriptor(&td, 2, shape, st, INFINI_DTYPE_BF16) ||
            infiniopCreateTensorDescriptor(&wd, 1, wshape, wst, INFINI_DTYPE_BF16) ||
            infiniopCreateAddRMSNormDescriptor(g_handle, &g_desc, td, td, td, td, wd, 1e-6f)) {
            fprintf(stderr, "descriptor failed\n");
            return 1;
        }
        /* the check: mini's outputs bit for bit against lib's */
        std::vector<__nv_bfloat16> ly(B.n), lr(B.n), my(B.n), mr(B.n);
        run(LIB, B, c, s);
        CK(cudaStreamSynchronize(s));
        CK(cudaMemcpy(ly.data(), B.y, bytes, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(lr.data(), B.res, bytes, cudaMemcpyDeviceToHost));
        for (int v = MINI; v <= MINI_LATE; ++v) {
            CK(cudaMemset(B.y, 0, bytes));
            CK(cudaMemset(B.res, 0, bytes));
            run(v, B, c, s);
            CK(cudaStreamSynchronize(s));
            CK(cudaMemcpy(my.data(), B.y, bytes, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(mr.data(), B.res, bytes, cudaMemcpyDeviceToHost));
            if (memcmp(ly.data(), my.data(), bytes) || memcmp(lr.data(), mr.data(), bytes)) {
                printf("MISMATCH %s %dx%d\n", names[v], c.R, c.D);
                ++bad;
            }
        }
        float t[NVAR];
        if (once) {
            run(LIB, B, c, s);
            run(MINI_PDL, B, c, s);
            CK(cudaStreamSynchronize(s));
        }
        for (int round = once ? 2 : 0; round < 2; ++round) /* two rounds: the second is reported, the first warms */
            for (int v = 0; v < NVAR; ++v) t[v] = time_variant(v, B, c, s);
        if (!once) {
            printf("bf16 %dx%d:", c.R, c.D);
            for (int v = 0; v < NVAR; ++v) printf(" %s %.3f", names[v], t[v]);
            printf("\n");
        }
        infiniopDestroyAddRMSNormDescriptor(g_desc);
        infiniopDestroyTensorDescriptor(td);
        infiniopDestroyTensorDescriptor(wd);
        cudaFree(B.a);
        cudaFree(B.b);
        cudaFree(B.y);
        cudaFree(B.res);
        cudaFree(B.w);
    }
    printf("%s\n", bad ? "MISMATCHES" : "all mini outputs equal the library's");
    return bad ? 1 : 0;
}
