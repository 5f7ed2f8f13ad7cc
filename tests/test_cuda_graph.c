/*
 * test_cuda_graph.c - every operator can be captured into a CUDA graph
 * (SPEC: workspace 0; no allocation, host-to-device copy or synchronisation
 * inside a call).
 *
 * Instances of all five operators, covering each launch strategy (a warp per
 * row, a block per row with the row cached, a block per row streaming) and
 * the vector and scalar paths, are captured on one stream in
 * cudaStreamCaptureModeGlobal (which turns any synchronising or otherwise
 * unsafe CUDA call made during the capture, by any thread, into an error).
 * The graph must hold exactly one kernel node per operator call. It is then
 * replayed, and its outputs must be bytewise those of direct calls on the
 * same inputs (the direct calls are checked against the float64 references
 * by the operator tests). A second round writes new inputs into the same
 * buffers and replays twice over poisoned outputs, so that a graph that
 * captured stale data or skipped elements fails.
 *
 * GPU only: with --device cpu it reports "skipped".
 */
#include "op_set.h"
#include "testlib.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

static const op_params k_params[] = {
    {OP_ARN, INFINI_DTYPE_BF16, INFINI_DTYPE_F32, 5, 128, 0},
    {OP_ARN, INFINI_DTYPE_F16, INFINI_DTYPE_F16, 3, 4096, 0},
    {OP_ARN, INFINI_DTYPE_F32, INFINI_DTYPE_F32, 2, 20000, 0},
    {OP_ARN, INFINI_DTYPE_BF16, INFINI_DTYPE_F16, 7, 4097, 0},
    {OP_LN, INFINI_DTYPE_F16, INFINI_DTYPE_F16, 9, 64, 1},
    {OP_LN, INFINI_DTYPE_BF16, INFINI_DTYPE_BF16, 3, 5000, 0},
    {OP_LN, INFINI_DTYPE_F32, INFINI_DTYPE_F32, 2, 16001, 1},
    {OP_CS, INFINI_DTYPE_F16, INFINI_DTYPE_F16, 8, 128, 0},
    {OP_CS, INFINI_DTYPE_BF16, INFINI_DTYPE_BF16, 4, 3000, 0},
    {OP_CS, INFINI_DTYPE_F32, INFINI_DTYPE_F32, 3, 20000, 0},
    {OP_SILU, INFINI_DTYPE_BF16, INFINI_DTYPE_BF16, 33, 1000, 0},
    {OP_SILU, INFINI_DTYPE_F32, INFINI_DTYPE_F32, 17, 300, 1},
    {OP_SILU, INFINI_DTYPE_F64, INFINI_DTYPE_F64, 5, 77, 2},
    {OP_SIGMOID, INFINI_DTYPE_F16, INFINI_DTYPE_F16, 64, 515, 0},
    {OP_SIGMOID, INFINI_DTYPE_BF16, INFINI_DTYPE_BF16, 8, 1000, 2},
    {OP_SIGMOID, INFINI_DTYPE_F64, INFINI_DTYPE_F64, 9, 9, 0},
};
#define N (sizeof k_params / sizeof k_params[0])

#define CUDA_OK(call) cuda_ok((call), #call, __LINE__)
static int cuda_ok(cudaError_t e, const char *what, int line) {
    if (e == cudaSuccess) return 1;
    tl_fail("line %d: %s: %s (%s)", line, what, cudaGetErrorString(e), cudaGetErrorName(e));
    return 0;
}

int main(int argc, char **argv) {
    tl_init(argc, argv, "test_cuda_graph");
    if (tl_device != INFINI_DEVICE_NVIDIA) {
        printf("test_cuda_graph: skipped: CUDA graphs need --device nvidia\n");
        return 77;
    }
    tl_rng rng;
    tl_rng_seed(&rng, tl_seed);
    static op_inst in[N];
    int ok = 1;

    tl_case_begin("setup: tensors, descriptors, workspace sizes");
    for (size_t i = 0; i < N && ok; ++i) {
        if (op_inst_tensors(&in[i], &k_params[i])) ok = 0;
        else if (!TL_OK(op_inst_create(&in[i]))) ok = 0;
        else {
            size_t ws = 1;
            TL_OK(op_inst_workspace(&in[i], in[i].desc, &ws));
            TL_CHECK(ws == 0, "%s: workspace size %zu, must be 0 to be captured", in[i].name, ws);
            op_inst_fill(&in[i], &rng);
            op_inst_upload(&in[i]);
        }
    }
    tl_case_end();
    if (!ok) return tl_finish();

    infinirtStream_t stream = NULL;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    TL_OK(infinirtStreamCreate(&stream));

    tl_case_begin("capture all operators in cudaStreamCaptureModeGlobal");
    if (CUDA_OK(cudaStreamBeginCapture((cudaStream_t)stream, cudaStreamCaptureModeGlobal))) {
        for (size_t i = 0; i < N; ++i) {
            infiniStatus_t st = op_inst_run(&in[i], in[i].desc, stream);
            if (st != INFINI_STATUS_SUCCESS)
                tl_fail("%s: call during capture returned %d: %s", in[i].name, (int)st, infiniopGetLastErrorMessage());
        }
        if (CUDA_OK(cudaStreamEndCapture((cudaStream_t)stream, &graph))) {
            size_t nn = 0;
            CUDA_OK(cudaGraphGetNodes(graph, NULL, &nn));
            TL_CHECK(nn == N, "the graph has %zu nodes, expected one kernel per call (%zu)", nn, (size_t)N);
            cudaGraphNode_t *nodes = calloc(nn ? nn : 1, sizeof *nodes);
            if (nn && CUDA_OK(cudaGraphGetNodes(graph, nodes, &nn)))
                for (size_t k = 0; k < nn; ++k) {
                    enum cudaGraphNodeType ty;
                    if (CUDA_OK(cudaGraphNodeGetType(nodes[k], &ty)))
                        TL_CHECK(ty == cudaGraphNodeTypeKernel, "graph node %zu has type %d, not a kernel", k, (int)ty);
                }
            free(nodes);
            CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
        }
    }
    if (tl_case_failures()) ok = 0;
    tl_case_end();

    for (int round = 0; round < 2 && ok; ++round) {
        static op_saved saved[N];
        if (round > 0) { /* new inputs in the same buffers, poisoned outputs */
            for (size_t i = 0; i < N; ++i) {
                op_inst_fill(&in[i], &rng);
                op_inst_upload(&in[i]);
            }
        }
        tl_case_begin("round %d: graph replay%s", round, round ? " (twice, new inputs)" : "");
        for (int rep = 0; rep < (round ? 2 : 1); ++rep) CUDA_OK(cudaGraphLaunch(exec, (cudaStream_t)stream));
        TL_OK(infinirtStreamSynchronize(stream));
        for (size_t i = 0; i < N; ++i) {
            op_inst_download(&in[i]);
            op_inst_save(&in[i], &saved[i]);
            op_inst_repoison(&in[i]);
        }
        for (size_t i = 0; i < N; ++i) TL_OK(op_inst_run(&in[i], in[i].desc, stream));
        TL_OK(infinirtStreamSynchronize(stream));
        tl_case_end();
        for (size_t i = 0; i < N; ++i) {
            tl_case_begin("round %d: %s: graph output == direct output", round, in[i].name);
            op_inst_download(&in[i]);
            op_inst_compare(&in[i], &saved[i], in[i].name);
            op_saved_free(&saved[i]);
            tl_case_end();
        }
    }

    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    if (stream) TL_OK(infinirtStreamDestroy(stream));
    for (size_t i = 0; i < N; ++i) op_inst_free(&in[i]);
    return tl_finish();
}
