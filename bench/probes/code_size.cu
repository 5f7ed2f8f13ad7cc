// bench/probes/code_size.cu - does a tiny kernel's code size cost latency? The library's small
// row kernels execute ~200 instructions a warp spread over functions of ~4,000 (66 KB of code,
// which Nsight Compute sees read from DRAM at each cold launch; bench/NOTES.md, session 28);
// torch.compile's are ~80 instructions in all. Each kernel here executes the same 8 segments,
// with dead blocks of PAD unrolled steps between them (selected off at run time): code of
// 0.6 KB (PAD 0), 16 KB (40), 58 KB (150) and 154 KB (400). Times CUDA graphs of 200 launches
// of 1, 3 and 132 blocks of 64 threads, best of 15 replays, us a launch. Not built by CMake:
//     nvcc -O3 -arch=sm_90 -o code_size bench/probes/code_size.cu && ./code_size
#include <cstdio>
#include <cuda_runtime.h>
template <int PAD> __global__ void k(float *y, const float *x, int n, int sel) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    float v = i < n ? x[i] : 0.f;
#pragma unroll
    for (int s = 0; s < 8; ++s) {
        v = v * 1.0001f + (float)s;
        if (sel == s + 1) {
#pragma unroll
            for (int q = 0; q < PAD; ++q) v = __sinf(v) * v + (float)q;
        }
    }
    if (i < n) y[i] = v;
}
template <int PAD> float run(float *y, const float *x, cudaStream_t s, int blocks) {
    cudaGraph_t g; cudaGraphExec_t ge;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    for (int r = 0; r < 200; ++r) k<PAD><<<blocks, 64, 0, s>>>(y, x, blocks * 64, 0);
    cudaStreamEndCapture(s, &g);
    cudaGraphInstantiate(&ge, g, 0);
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    cudaGraphLaunch(ge, s); cudaStreamSynchronize(s);
    float best = 1e9;
    for (int rep = 0; rep < 15; ++rep) {
        cudaEventRecord(a, s); cudaGraphLaunch(ge, s); cudaEventRecord(b, s); cudaEventSynchronize(b);
        float ms; cudaEventElapsedTime(&ms, a, b); if (ms < best) best = ms;
    }
    cudaGraphExecDestroy(ge); cudaGraphDestroy(g);
    return best * 1000.f / 200.f;
}
int main() {
    float *x, *y; cudaMalloc(&x, 1 << 20); cudaMalloc(&y, 1 << 20); cudaMemset(x, 0, 1 << 20);
    cudaStream_t s; cudaStreamCreate(&s);
    cudaFuncAttributes fa;
    for (int blocks : {1, 3, 132}) {
        for (int round = 0; round < 3; ++round) {
            float t0 = run<0>(y, x, s, blocks), t1 = run<40>(y, x, s, blocks), t2 = run<150>(y, x, s, blocks),
                  t3 = run<400>(y, x, s, blocks);
            printf("blocks %3d round %d: us a launch: pad 0 %.3f | pad 40 %.3f | pad 150 %.3f | pad 400 %.3f\n", blocks,
                   round, t0, t1, t2, t3);
        }
    }
    int pads[4] = {0, 40, 150, 400};
    void *fs[4] = {(void *)k<0>, (void *)k<40>, (void *)k<150>, (void *)k<400>};
    for (int j = 0; j < 4; ++j) { cudaFuncGetAttributes(&fa, fs[j]); printf("pad %d: binary %d regs %d\n", pads[j], fa.binaryVersion, fa.numRegs); }
    printf("%s\n", cudaGetErrorString(cudaGetLastError()));
    return 0;
}
