/* cuda/describe.cu - the NVIDIA backend's verbose text (cuda/describe.h). */
#include "cuda/describe.h"

extern "C" const char *infiniop_cuda_row_kernel_name(infiniopCudaRowKernel k) {
    switch (k) {
    case INFINIOP_CUDA_ROW_REG_SUB: return "reg-lanes";
    case INFINIOP_CUDA_ROW_REG_BLOCK: return "reg-block";
    case INFINIOP_CUDA_ROW_REG_CLUSTER: return "reg-cluster";
    case INFINIOP_CUDA_ROW_STREAM_WARP_VEC: return "stream-warp-vec16";
    case INFINIOP_CUDA_ROW_STREAM_BLOCK_VEC: return "stream-block-vec16";
    case INFINIOP_CUDA_ROW_STREAM_WARP_PEEL: return "stream-warp-peel16";
    case INFINIOP_CUDA_ROW_STREAM_BLOCK_PEEL: return "stream-block-peel16";
    case INFINIOP_CUDA_ROW_STREAM_WARP: return "stream-warp";
    case INFINIOP_CUDA_ROW_STREAM_BLOCK: return "stream-block";
    case INFINIOP_CUDA_ROW_TILE_T: return "tile-t";
    }
    return "?";
}

static void describe_launch(char *b, size_t n, size_t *len, const infiniopCudaRowLaunch *q) {
    infiniop_append(b, n, len, "%s", infiniop_cuda_row_kernel_name(q->kernel));
    switch (q->kernel) {
    case INFINIOP_CUDA_ROW_REG_SUB: infiniop_append(b, n, len, " items=%u lanes=%u", q->items, q->lanes); break;
    case INFINIOP_CUDA_ROW_REG_BLOCK: infiniop_append(b, n, len, " items=%u", q->items); break;
    case INFINIOP_CUDA_ROW_REG_CLUSTER: infiniop_append(b, n, len, " items=%u cluster=%u", q->items, q->cluster); break;
    case INFINIOP_CUDA_ROW_TILE_T:
        infiniop_append(b, n, len, " rows=%u cols=%u cluster=%u", q->tile_rows, q->tile_cols, q->cluster);
        break;
    default: break;
    }
    infiniop_append(b, n, len, " threads=%u grid=%u", q->threads, q->grid);
    switch (q->kernel) {
    case INFINIOP_CUDA_ROW_REG_SUB:
    case INFINIOP_CUDA_ROW_REG_BLOCK:
    case INFINIOP_CUDA_ROW_REG_CLUSTER:
        infiniop_append(b, n, len, " access=%s prefetch=%u%s%s",
                        q->scalar ? "elem" : q->peel ? "vec16-peel" : "vec16", q->prefetch,
                        q->early ? " early-loads" : "", q->cap == 1 ? " regs<=72" : q->cap == 2 ? " regs<=64" : "");
        break;
    case INFINIOP_CUDA_ROW_STREAM_WARP_VEC:
    case INFINIOP_CUDA_ROW_STREAM_BLOCK_VEC:
        infiniop_append(b, n, len, "%s params=%s", q->smem ? " cache=smem" : " cache=none",
                        q->param_vec ? "vec16" : "scalar");
        break;
    case INFINIOP_CUDA_ROW_TILE_T: infiniop_append(b, n, len, " smem=%zu", q->smem); break;
    default: infiniop_append(b, n, len, "%s", q->smem ? " cache=smem" : " cache=none"); break;
    }
}

extern "C" void infiniop_cuda_describe_row(char *b, size_t n, size_t *len, infiniopHandle_t handle, const void *ctx) {
    const infiniopCudaRowPlan *p = (const infiniopCudaRowPlan *)ctx;
    infiniop_append(b, n, len, "device=%d plan=", handle->device_id);
    describe_launch(b, n, len, &p->aligned);
    if (p->unaligned.kernel != p->aligned.kernel) {
        infiniop_append(b, n, len, p->same16 ? " (pointers apart by other than a multiple of 16 bytes: "
                                             : " (unaligned pointers: ");
        describe_launch(b, n, len, &p->unaligned);
        infiniop_append(b, n, len, ")");
    }
    infiniop_append(b, n, len, "%s", p->pdl ? " pdl" : "");
}

extern "C" void infiniop_cuda_describe_elt(char *b, size_t n, size_t *len, infiniopHandle_t handle, const void *ctx) {
    char t[320];
    infiniop_cuda_elt_plan_text((const infiniopCudaEltPlan *)ctx, t, sizeof t);
    infiniop_append(b, n, len, "device=%d plan=%s", handle->device_id, t);
}
