/*
 * core/create.c - the shared opening and closing of descriptor creation,
 * and the verbose line.
 *
 * INFINIOP_VERBOSE=1 (any value but "0"): every operator descriptor prints
 * one line to stderr when it is created, naming the implementation and its
 * plan, in the spirit of ONEDNN_VERBOSE:
 *   infiniop: layer_norm cuda shape=[4096,4096] F16 plan=register items=2 ...
 *   infiniop: silu cpu shape=[64,64] F32 isa=avx2 threads=1
 * The variable is read once, at the first creation; nothing else is ever
 * printed, and nothing at all without it.
 */
#include "create.h"
#include "cpu/cpu.h"

#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

infiniStatus_t infiniop_create_begin(const char *op, infiniopHandle_t handle, const void *desc_ptr, int n,
                                     const char *const *names, const infiniopTensorDescriptor_t *t) {
    infiniStatus_t st;
    if ((st = infiniop_check_handle(op, handle))) return st;
    if (!desc_ptr) return infiniop_error(INFINI_STATUS_NULL_POINTER, "%s: desc_ptr is NULL", op);
    for (int i = 0; i < n; ++i)
        if ((st = infiniop_check_tensor(op, names[i], t[i]))) return st;
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infiniop_check_outputs_distinct(const char *op, int n, const char *const *names,
                                               const infiniopTensorDescriptor_t *t) {
    for (int i = 0; i < n; ++i)
        if (!infiniop_tensor_is_non_overlapping(t[i]))
            return infiniop_error(INFINI_STATUS_BAD_TENSOR_STRIDES, "%s: %s: strides map several elements to one address",
                                  op, names[i]);
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infiniop_check_epsilon(const char *op, const char *name, float eps) {
    if (!(eps >= 0.0f) || isinf(eps))
        return infiniop_error(INFINI_STATUS_BAD_PARAM, "%s: %s %g must be finite and >= 0", op, name, (double)eps);
    return INFINI_STATUS_SUCCESS;
}

static pthread_once_t verbose_once = PTHREAD_ONCE_INIT;
static bool verbose_on;
static void read_verbose(void) {
    const char *e = getenv("INFINIOP_VERBOSE");
    verbose_on = e && *e && strcmp(e, "0") != 0;
}
/* INFINIOP_VERBOSE is set to a value other than "0" (read once). */
static bool infiniop_verbose(void) {
    pthread_once(&verbose_once, read_verbose);
    return verbose_on;
}

/* Appends to buf (size n) at *len, never past its end. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static void append(char *buf, size_t n, size_t *len, const char *fmt, ...) {
    if (*len >= n) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *len, n - *len, fmt, ap);
    va_end(ap);
    if (k > 0) *len += (size_t)k;
}

static const char *isa_name(infiniopCpuIsa isa) {
    switch (isa) {
    case INFINIOP_ISA_AVX2: return "avx2";
    case INFINIOP_ISA_AVX512: return "avx512";
    case INFINIOP_ISA_AVX512BF16: return "avx512bf16";
    default: return "generic";
    }
}

static void describe_row_stream(char *b, size_t n, size_t *len, const infiniopCudaRowPlan *p) {
    append(b, n, len, "stream-%s threads=%u grid=%u%s%s", p->mode == INFINIOP_CUDA_ROW_WARP ? "warp" : "block",
           p->threads, p->grid, p->smem ? " cache=smem" : " cache=none", p->vec ? " vec16" : " scalar");
}

static void describe_row(char *b, size_t n, size_t *len, const infiniopCudaRowPlan *p, bool reg) {
    if (reg && p->reg_items) {
        append(b, n, len, "register items=%u ", p->reg_items);
        if (p->reg_lanes) append(b, n, len, "lanes=%u", p->reg_lanes);
        else if (p->reg_cluster > 1) append(b, n, len, "cluster=%u", p->reg_cluster);
        else append(b, n, len, "block");
        append(b, n, len, " threads=%u grid=%u prefetch=%u%s (unaligned pointers: ", p->reg_threads, p->reg_grid,
               p->reg_prefetch, p->reg_latency ? " early-loads" : "");
        describe_row_stream(b, n, len, p);
        append(b, n, len, ")");
    } else {
        describe_row_stream(b, n, len, p);
    }
    append(b, n, len, "%s", p->pdl ? " pdl" : "");
}

/* The elementwise plan in words: ops/unary/cuda.cu says it. */
static void describe_elt(char *b, size_t n, size_t *len, const infiniopCudaEltPlan *p) {
#ifdef INFINIOP_WITH_CUDA
    char t[320];
    infiniop_cuda_describe_elt(p, t, sizeof t);
    append(b, n, len, "%s", t);
#else
    (void)b, (void)n, (void)len, (void)p;
#endif
}

static void print_verbose(infiniopOp_t op, infiniopHandle_t handle, const infiniopPlanSummary *s) {
    char b[512];
    size_t len = 0, n = sizeof b;
    const infiniopTensorDescriptor_t t = s->shape_of;
    append(b, n, &len, "infiniop: %s %s shape=[", infiniop_op_name(op),
           handle->device == INFINI_DEVICE_NVIDIA ? "cuda" : "cpu");
    for (size_t k = 0; k < t->ndim; ++k) append(b, n, &len, "%s%zu", k ? "," : "", t->shape[k]);
    append(b, n, &len, "] %s ", infiniop_dtype_name(t->dtype));
    if (handle->device == INFINI_DEVICE_NVIDIA) {
        append(b, n, &len, "device=%d plan=", handle->device_id);
        if (s->row) describe_row(b, n, &len, s->row, s->row_reg);
        else if (s->elt) describe_elt(b, n, &len, s->elt);
    } else {
        append(b, n, &len, "isa=%s threads=%zu", isa_name(infiniop_cpu_isa()), (size_t)infiniop_cpu_team_wanted(s->cpu_items, s->cpu_bytes));
    }
    fprintf(stderr, "%s\n", b); /* one call: lines of several threads do not interleave */
}

infiniStatus_t infiniop_create_finish(infiniopOp_t op, infiniopHandle_t handle, size_t desc_size,
                                      size_t info_offset, const void *info, size_t info_size,
                                      const infiniopPlanSummary *summary, struct InfiniopDescriptor **desc_ptr) {
    struct InfiniopDescriptor *d = infiniop_descriptor_new(desc_size, op, handle);
    if (!d) return infiniop_error(INFINI_STATUS_INTERNAL_ERROR, "%s: out of host memory", infiniop_op_name(op));
    memcpy((char *)d + info_offset, info, info_size);
    if (infiniop_verbose()) print_verbose(op, handle, summary);
    *desc_ptr = d;
    return INFINI_STATUS_SUCCESS;
}
