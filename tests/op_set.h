/*
 * op_set.h - a set of operator instances (tensors + one descriptor) for the
 * tests that run all five operators together: test_cuda_graph.c (capture
 * into a CUDA graph) and test_streams.c (one descriptor from several threads
 * on several streams). Header-only; static functions.
 *
 * Each instance owns its tensors (tl_tensor: host buffer with guards, device
 * copy on nvidia) and knows which of them are outputs. The descriptor is
 * created from the instance's tensors and may be shared by other instances
 * of identical layout (op_inst_clone_tensors).
 */
#ifndef INFINIOP_TEST_OP_SET_H
#define INFINIOP_TEST_OP_SET_H

#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OP_ARN, OP_LN, OP_CS, OP_SILU, OP_SIGMOID, OP_KINDS };
static const char *const op_kind_names[OP_KINDS] = {"add_rms_norm", "layer_norm", "causal_softmax", "silu",
                                                    "sigmoid"};

typedef struct {
    int kind;
    infiniDtype_t dt, wt; /* activation dtype; add_rms_norm weight dtype */
    size_t rows, D;       /* causal_softmax: [2, rows, D] (rows <= D); others [rows, D] */
    int variant;          /* layer_norm: 1 = with bias; unary: 1 = input broadcast from [D], 2 = padded output rows */
} op_params;

typedef struct {
    op_params p;
    char name[128];
    int nt;
    tl_tensor t[6];
    int is_out[6];
    struct InfiniopDescriptor *desc;
} op_inst;

/* Tensors of an instance (not filled). Returns 0 on success. */
static inline int op_inst_tensors(op_inst *o, const op_params *p) {
    memset(o, 0, sizeof *o);
    o->p = *p;
    size_t shape2[2] = {p->rows, p->D}, shape1[1] = {p->D}, rows1[1] = {p->rows};
    int err = 0;
    switch (p->kind) {
    case OP_ARN: /* y, residual_out, a, b, weight */
        o->nt = 5;
        for (int k = 0; k < 4; ++k) err |= tl_tensor_init(&o->t[k], p->dt, 2, shape2, NULL);
        err |= tl_tensor_init(&o->t[4], p->wt, 1, shape1, NULL);
        o->is_out[0] = o->is_out[1] = 1;
        snprintf(o->name, sizeof o->name, "add_rms_norm %s/%s [%zu, %zu]", tl_dtype_name(p->dt),
                 tl_dtype_name(p->wt), p->rows, p->D);
        break;
    case OP_LN: /* output, input_standardization, input_std_deviation, input, weight, bias */
        o->nt = p->variant ? 6 : 5;
        err |= tl_tensor_init(&o->t[0], p->dt, 2, shape2, NULL);
        err |= tl_tensor_init(&o->t[1], p->dt, 2, shape2, NULL);
        err |= tl_tensor_init(&o->t[2], p->dt, 1, rows1, NULL);
        err |= tl_tensor_init(&o->t[3], p->dt, 2, shape2, NULL);
        err |= tl_tensor_init(&o->t[4], p->dt, 1, shape1, NULL);
        if (p->variant) err |= tl_tensor_init(&o->t[5], p->dt, 1, shape1, NULL);
        o->is_out[0] = o->is_out[1] = o->is_out[2] = 1;
        snprintf(o->name, sizeof o->name, "layer_norm %s [%zu, %zu]%s", tl_dtype_name(p->dt), p->rows, p->D,
                 p->variant ? " bias" : "");
        break;
    case OP_CS: { /* y, x */
        size_t shape3[3] = {2, p->rows, p->D};
        o->nt = 2;
        err |= tl_tensor_init(&o->t[0], p->dt, 3, shape3, NULL);
        err |= tl_tensor_init(&o->t[1], p->dt, 3, shape3, NULL);
        o->is_out[0] = 1;
        snprintf(o->name, sizeof o->name, "causal_softmax %s [2, %zu, %zu]", tl_dtype_name(p->dt), p->rows, p->D);
        break;
    }
    default: { /* output, input */
        ptrdiff_t padded[2] = {(ptrdiff_t)p->D + 3, 1};
        o->nt = 2;
        err |= tl_tensor_init(&o->t[0], p->dt, 2, shape2, p->variant == 2 ? padded : NULL);
        if (p->variant == 1)
            err |= tl_tensor_init(&o->t[1], p->dt, 1, shape1, NULL);
        else
            err |= tl_tensor_init(&o->t[1], p->dt, 2, shape2, NULL);
        o->is_out[0] = 1;
        snprintf(o->name, sizeof o->name, "%s %s [%zu, %zu]%s", op_kind_names[p->kind], tl_dtype_name(p->dt), p->rows,
                 p->D, p->variant == 1 ? " broadcast input" : p->variant == 2 ? " padded output" : "");
        break;
    }
    }
    return err;
}

/* Random inputs, poisoned outputs (host side; upload separately). */
static inline void op_inst_fill(op_inst *o, tl_rng *rng) {
    for (int k = 0; k < o->nt; ++k) {
        if (o->is_out[k]) tl_tensor_poison(&o->t[k]);
        else tl_tensor_fill_random(&o->t[k], rng, -3.0, 3.0);
    }
}

static inline void op_inst_upload(op_inst *o) {
    for (int k = 0; k < o->nt; ++k) tl_tensor_upload(&o->t[k]);
}
static inline void op_inst_download(op_inst *o) {
    for (int k = 0; k < o->nt; ++k) tl_tensor_download(&o->t[k]);
}
/* Poison the outputs again and upload them. */
static inline void op_inst_repoison(op_inst *o) {
    for (int k = 0; k < o->nt; ++k)
        if (o->is_out[k]) {
            tl_tensor_poison(&o->t[k]);
            tl_tensor_upload(&o->t[k]);
        }
}

static inline infiniStatus_t op_inst_create(op_inst *o) {
    tl_tensor *t = o->t;
    switch (o->p.kind) {
    case OP_ARN:
        return infiniopCreateAddRMSNormDescriptor(tl_handle, &o->desc, t[0].desc, t[1].desc, t[2].desc, t[3].desc,
                                                  t[4].desc, 1e-5f);
    case OP_LN:
        return infiniopCreateLayerNormDescriptor(tl_handle, &o->desc, t[0].desc, t[1].desc, t[2].desc, t[3].desc,
                                                 t[4].desc, o->nt == 6 ? t[5].desc : NULL, 1e-5f);
    case OP_CS: return infiniopCreateCausalSoftmaxDescriptor(tl_handle, &o->desc, t[0].desc, t[1].desc);
    case OP_SILU: return infiniopCreateSiluDescriptor(tl_handle, &o->desc, t[0].desc, t[1].desc);
    default: return infiniopCreateSigmoidDescriptor(tl_handle, &o->desc, t[0].desc, t[1].desc);
    }
}

static inline infiniStatus_t op_inst_workspace(const op_inst *o, struct InfiniopDescriptor *desc, size_t *ws) {
    switch (o->p.kind) {
    case OP_ARN: return infiniopGetAddRMSNormWorkspaceSize(desc, ws);
    case OP_LN: return infiniopGetLayerNormWorkspaceSize(desc, ws);
    case OP_CS: return infiniopGetCausalSoftmaxWorkspaceSize(desc, ws);
    case OP_SILU: return infiniopGetSiluWorkspaceSize(desc, ws);
    default: return infiniopGetSigmoidWorkspaceSize(desc, ws);
    }
}

/* Run with descriptor desc (this instance's or a shared one) on the
 * instance's device buffers. */
static inline infiniStatus_t op_inst_run(const op_inst *o, struct InfiniopDescriptor *desc, void *stream) {
    void *p[6] = {0};
    for (int k = 0; k < o->nt; ++k) p[k] = tl_tensor_ptr(&o->t[k]);
    switch (o->p.kind) {
    case OP_ARN: return infiniopAddRMSNorm(desc, NULL, 0, p[0], p[1], p[2], p[3], p[4], stream);
    case OP_LN: return infiniopLayerNorm(desc, NULL, 0, p[0], p[1], p[2], p[3], p[4], p[5], stream);
    case OP_CS: return infiniopCausalSoftmax(desc, NULL, 0, p[0], p[1], stream);
    case OP_SILU: return infiniopSilu(desc, NULL, 0, p[0], p[1], stream);
    default: return infiniopSigmoid(desc, NULL, 0, p[0], p[1], stream);
    }
}

static inline void op_inst_destroy_desc(op_inst *o) {
    if (!o->desc) return;
    switch (o->p.kind) {
    case OP_ARN: TL_OK(infiniopDestroyAddRMSNormDescriptor(o->desc)); break;
    case OP_LN: TL_OK(infiniopDestroyLayerNormDescriptor(o->desc)); break;
    case OP_CS: TL_OK(infiniopDestroyCausalSoftmaxDescriptor(o->desc)); break;
    case OP_SILU: TL_OK(infiniopDestroySiluDescriptor(o->desc)); break;
    default: TL_OK(infiniopDestroySigmoidDescriptor(o->desc)); break;
    }
    o->desc = NULL;
}

static inline void op_inst_free(op_inst *o) {
    op_inst_destroy_desc(o);
    for (int k = 0; k < o->nt; ++k) tl_tensor_free(&o->t[k]);
}

/* Copies of the outputs' host buffers (after a download). */
typedef struct {
    unsigned char *buf[6];
} op_saved;

static inline void op_inst_save(const op_inst *o, op_saved *s) {
    for (int k = 0; k < 6; ++k) {
        s->buf[k] = NULL;
        if (k < o->nt && o->is_out[k]) {
            s->buf[k] = malloc(o->t[k].bytes);
            if (!s->buf[k]) abort();
            memcpy(s->buf[k], o->t[k].host, o->t[k].bytes);
        }
    }
}
static inline void op_saved_free(op_saved *s) {
    for (int k = 0; k < 6; ++k) free(s->buf[k]), s->buf[k] = NULL;
}

/* After a download: inputs untouched, outputs fully written and bytewise
 * equal to ref (same layout). Reports in the current case; returns the
 * number of bad outputs. */
static inline int op_inst_compare(const op_inst *o, const op_saved *ref, const char *what) {
    int bad = 0;
    static const char *const names[6] = {"tensor 0", "tensor 1", "tensor 2", "tensor 3", "tensor 4", "tensor 5"};
    for (int k = 0; k < o->nt; ++k) {
        tl_tensor_check_untouched(&o->t[k], names[k], o->is_out[k]);
        if (!o->is_out[k]) continue;
        if (tl_tensor_check_written(&o->t[k], names[k])) ++bad;
        if (memcmp(o->t[k].host, ref->buf[k], o->t[k].bytes) != 0) {
            tl_fail("%s: output tensor %d differs from the reference run", what, k);
            ++bad;
        }
    }
    return bad;
}

#endif /* INFINIOP_TEST_OP_SET_H */
