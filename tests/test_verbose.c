/* test_verbose.c - INFINIOP_VERBOSE: with it set (to anything but "0"),
 * every operator descriptor prints exactly one line "infiniop: <op> <cpu|cuda>
 * shape=[...] <dtype> ..." to stderr when created, and nothing more (no
 * line for a failed creation or a destroy); without it nothing at
 * all is printed. The expectation follows the environment this program
 * runs in (tests/CMakeLists.txt registers it both ways). */
#define _POSIX_C_SOURCE 200809L /* dup, dup2, fileno */
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static infiniopTensorDescriptor_t td(infiniDtype_t dt, size_t ndim, const size_t *shape) {
    infiniopTensorDescriptor_t t = NULL;
    if (infiniopCreateTensorDescriptor(&t, ndim, shape, NULL, dt) != INFINI_STATUS_SUCCESS) {
        fprintf(stdout, "FAIL: tensor descriptor\n");
        exit(1);
    }
    return t;
}

#define CHECK(call)                                                                                                    \
    do {                                                                                                               \
        infiniStatus_t st_ = (call);                                                                                   \
        if (st_ != INFINI_STATUS_SUCCESS) {                                                                            \
            fprintf(stdout, "FAIL: %s -> %d (%s)\n", #call, (int)st_, infiniopGetLastErrorMessage());                  \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

int main(int argc, char **argv) {
    tl_init(argc, argv, "test_verbose");
    const char *env = getenv("INFINIOP_VERBOSE");
    const int on = env && *env && strcmp(env, "0") != 0;
    const char *dev = tl_device == INFINI_DEVICE_NVIDIA ? "cuda" : "cpu";

    /* stderr into a temporary file while the descriptors are made */
    fflush(stderr);
    FILE *log = tmpfile();
    int saved = dup(2);
    if (!log || saved < 0 || dup2(fileno(log), 2) < 0) {
        fprintf(stdout, "FAIL: cannot redirect stderr\n");
        return 1;
    }

    const size_t s2[2] = {4, 64}, s1[1] = {64}, s0[1] = {4}, s3[3] = {2, 4, 8}, su[2] = {3, 5};
    infiniopTensorDescriptor_t a = td(INFINI_DTYPE_F32, 2, s2), w = td(INFINI_DTYPE_F32, 1, s1),
                               sd = td(INFINI_DTYPE_F32, 1, s0), x3 = td(INFINI_DTYPE_F32, 3, s3),
                               u = td(INFINI_DTYPE_F16, 2, su), bad = td(INFINI_DTYPE_I32, 2, su);
    infiniopAddRMSNormDescriptor_t d1;
    infiniopLayerNormDescriptor_t d2;
    infiniopCausalSoftmaxDescriptor_t d3;
    infiniopSiluDescriptor_t d4, d5;
    infiniopSigmoidDescriptor_t d6;
    CHECK(infiniopCreateAddRMSNormDescriptor(tl_handle, &d1, a, a, a, a, w, 1e-5f));
    CHECK(infiniopCreateLayerNormDescriptor(tl_handle, &d2, a, a, sd, a, w, w, 1e-5f));
    CHECK(infiniopCreateCausalSoftmaxDescriptor(tl_handle, &d3, x3, x3));
    CHECK(infiniopCreateSiluDescriptor(tl_handle, &d4, u, u));
    CHECK(infiniopCreateSiluDescriptor(tl_handle, &d5, u, u));
    CHECK(infiniopCreateSigmoidDescriptor(tl_handle, &d6, u, u));
    infiniopSiluDescriptor_t dbad;
    if (infiniopCreateSiluDescriptor(tl_handle, &dbad, bad, bad) == INFINI_STATUS_SUCCESS) {
        fprintf(stdout, "FAIL: an I32 silu descriptor was accepted\n");
        return 1;
    }
    CHECK(infiniopDestroyAddRMSNormDescriptor(d1));
    CHECK(infiniopDestroyLayerNormDescriptor(d2));
    CHECK(infiniopDestroyCausalSoftmaxDescriptor(d3));
    CHECK(infiniopDestroySiluDescriptor(d4));
    CHECK(infiniopDestroySiluDescriptor(d5));
    CHECK(infiniopDestroySigmoidDescriptor(d6));
    infiniopTensorDescriptor_t all[] = {a, w, sd, x3, u, bad};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) infiniopDestroyTensorDescriptor(all[i]);

    fflush(stderr);
    dup2(saved, 2);
    close(saved);

    /* the lines expected, in creation order: op name and shape */
    static const char *const want[][2] = {{"add_rms_norm", "shape=[4,64] F32"},
                                          {"layer_norm", "shape=[4,64] F32"},
                                          {"causal_softmax", "shape=[2,4,8] F32"},
                                          {"silu", "shape=[3,5] F16"},
                                          {"silu", "shape=[3,5] F16"},
                                          {"sigmoid", "shape=[3,5] F16"}};
    const int nwant = on ? (int)(sizeof want / sizeof want[0]) : 0;
    rewind(log);
    char line[1024];
    int n = 0, bad_lines = 0;
    while (fgets(line, sizeof line, log)) {
        fprintf(stdout, "stderr: %s", line);
        char head[64];
        if (n < nwant) snprintf(head, sizeof head, "infiniop: %s %s ", want[n][0], dev);
        /* after the dtype, the backend's own text (cpu/cpu.c, cuda/describe.cu) */
        const char *backend = tl_device == INFINI_DEVICE_NVIDIA ? " plan=" : " isa=";
        if (n >= nwant || strncmp(line, head, strlen(head)) != 0 || !strstr(line, want[n][1]) ||
            !strstr(line, backend))
            ++bad_lines;
        ++n;
    }
    fclose(log);
    if (n != nwant || bad_lines) {
        fprintf(stdout, "FAIL: INFINIOP_VERBOSE=%s: %d lines on stderr (%d unexpected), %d expected\n",
                env ? env : "(unset)", n, bad_lines, nwant);
        return 1;
    }
    fprintf(stdout, "PASS: INFINIOP_VERBOSE=%s: %d lines\n", env ? env : "(unset)", n);
    return 0;
}
