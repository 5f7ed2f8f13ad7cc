/*
 * bench/experiments/graph_time.cuh - what the stand-alone experiment
 * programs of this folder share: the CUDA error check and the timing of a
 * captured graph (median of its replays). Not part of the library.
 */
#ifndef INFINIOP_BENCH_GRAPH_TIME_CUH
#define INFINIOP_BENCH_GRAPH_TIME_CUH

#include <stdio.h>
#include <stdlib.h>
#include <algorithm>
#include <vector>

#define CK(x)                                                                                                          \
    do {                                                                                                               \
        cudaError_t e_ = (x);                                                                                          \
        if (e_ != cudaSuccess) {                                                                                       \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));                                \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

/* Microseconds a launch of a graph of `launches` launches: `warm` replays
 * first, then the median of `reps` replays, each between two events. */
static float graph_median_us(cudaGraphExec_t ge, cudaStream_t s, int launches, int warm, int reps) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int r = 0; r < warm; ++r) CK(cudaGraphLaunch(ge, s));
    std::vector<float> t;
    for (int r = 0; r < reps; ++r) {
        CK(cudaEventRecord(a, s));
        CK(cudaGraphLaunch(ge, s));
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms * 1000.0f / launches);
    }
    std::sort(t.begin(), t.end());
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    return t[t.size() / 2];
}

#endif
