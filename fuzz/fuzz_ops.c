/*
 * fuzz/fuzz_ops.c - libFuzzer target for the whole public surface of
 * libinfiniop on the CPU.
 *
 * Each input is decoded (fuzz/README.md has the byte format) into one
 * operator, its tensor descriptors (ndim 0-6; shapes small, 0, or huge;
 * strides contiguous, padded, negative, zero or arbitrary 64-bit; any dtype
 * value, NULL descriptors), its scalar (epsilon), and a pointer plan
 * (separate buffers, exact in-place aliasing, an output shifted onto an
 * input, a NULL pointer, a misaligned pointer). The target then:
 *   1. creates every tensor descriptor and checks the verdict against an
 *      independent 128-bit computation of the element count and byte extent
 *      (accepted exactly when it fits; the status names the reason);
 *   2. creates the operator descriptor; on success checks that every output
 *      tensor's elements have distinct addresses (brute force);
 *   3. when the tensors are small, runs the operator on buffers sized
 *      exactly to each tensor's extent (base pointer = buffer - min_offset),
 *      so any read or write outside a tensor is caught by AddressSanitizer;
 *      checks that a failing call writes nothing, a successful one leaves
 *      every pure input untouched, and that a successful call with
 *      overlapping output and input is exact in-place aliasing;
 *   4. checks misuse: another operator's functions on this descriptor,
 *      a tensor descriptor or handle passed as an operator descriptor,
 *      use and double destroy of destroyed objects: all BAD_PARAM;
 *   5. every status must be one of the documented infiniStatus_t values and
 *      every failure must leave a message for the calling thread.
 * A violated property calls abort() (a libFuzzer crash).
 *
 * Build (scripts/hardening.sh does this):
 *   cmake -S fuzz -B build-fuzz -DCMAKE_C_COMPILER=clang-14 && cmake --build build-fuzz
 *   build-fuzz/fuzz_ops -max_total_time=60 build-fuzz/corpus fuzz/corpus
 * Without libFuzzer (any compiler, e.g. under valgrind), fuzz/replay.c
 * provides a main() that runs the files or directories given.
 */
#include <infiniop.h>
#include <infinirt.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXT 6               /* tensors of one operator (layer_norm) */
#define MAXD 6               /* fuzzed ndim is 0..6 */
#define RUN_MAX_BYTES (1u << 16) /* run only when every tensor's extent is at most this */
#define RUN_MAX_NUMEL (1u << 14)

#define CHECK(cond, ...)                                                                                  \
    do {                                                                                                  \
        if (!(cond)) {                                                                                    \
            fprintf(stderr, "fuzz_ops: property violated at line %d: %s\n  ", __LINE__, #cond);          \
            fprintf(stderr, __VA_ARGS__);                                                                 \
            fprintf(stderr, "\n  last message: %s\n", infiniopGetLastErrorMessage());                    \
            abort();                                                                                      \
        }                                                                                                 \
    } while (0)

/* ------------------------------------------------------------------ input reader */
typedef struct {
    const uint8_t *p;
    size_t n;
} Reader;

static uint8_t u8(Reader *r) {
    if (!r->n) return 0;
    r->n--;
    return *r->p++;
}
static uint64_t u64(Reader *r) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= (uint64_t)u8(r) << (8 * i);
    return v;
}
static uint32_t u32(Reader *r) {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= (uint32_t)u8(r) << (8 * i);
    return v;
}

/* ------------------------------------------------------------------ status checks */
static int documented(infiniStatus_t s) {
    switch ((int)s) {
    case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 8: case 10: case 11: case 12: case 13:
        return 1;
    }
    return 0;
}

static infiniStatus_t checked(infiniStatus_t s, const char *what) {
    CHECK(documented(s), "%s returned %d, not a documented status", what, (int)s);
    if (s != INFINI_STATUS_SUCCESS) {
        const char *m = infiniopGetLastErrorMessage();
        CHECK(m && m[0], "%s failed with %d but left no message", what, (int)s);
        CHECK(strlen(m) < 4096, "%s: message not terminated", what);
    }
    return s;
}
#define CALL(expr) checked((expr), #expr)

/* ------------------------------------------------------------------ tensors */
enum { ROLE_FULL, ROLE_VEC, ROLE_ROWS, ROLE_BCAST };

static const infiniDtype_t float_types[4] = {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32,
                                             INFINI_DTYPE_F64};

static size_t dtype_size(int dt) {
    switch (dt) {
    case 1: case 2: case 3: case 7: case 11: return 1;
    case 4: case 8: case 12: case 15: case 19: return 2;
    case 5: case 9: case 13: case 16: return 4;
    case 6: case 10: case 14: case 17: return 8;
    case 18: return 16;
    }
    return 0;
}

typedef struct {
    int present;             /* 0: a NULL descriptor is passed */
    size_t ndim;
    size_t shape[MAXD];
    int null_strides;
    ptrdiff_t strides[MAXD]; /* as passed (unused when null_strides) */
    int dtype;
    infiniopTensorDescriptor_t desc;
    /* independent facts (valid when desc != NULL) */
    ptrdiff_t eff[MAXD];     /* effective strides (contiguous when null_strides) */
    size_t numel, es;
    ptrdiff_t lo, hi;        /* element offsets reached, 0/0 when empty */
} Tensor;

static int read_dtype(Reader *r) {
    uint8_t b = u8(r);
    if (b < 0xC0) return (int)float_types[b % 4];
    if (b < 0xF0) return b % 24; /* every enum value, INVALID and beyond */
    return (int)u32(r);          /* anything, negative included */
}

static size_t read_dim(Reader *r) {
    static const size_t interesting[14] = {1, 2, 3, 16, 17, 31, 127, 128, 1023, 1024, 4097, 65537,
                                           (size_t)1 << 31, (size_t)1 << 32};
    uint8_t b = u8(r);
    if (b < 0xC0) return b % 9;
    if (b < 0xF0) return (size_t)(b - 0xC0) + 9;
    if (b < 0xFE) return interesting[b - 0xF0];
    if (b == 0xFE) return (size_t)u64(r);
    return SIZE_MAX - (u8(r) & 3);
}

static ptrdiff_t read_raw_stride(Reader *r) {
    uint8_t b = u8(r);
    if (b < 0xE0) return (ptrdiff_t)(b % 19) - 9;
    if (b < 0xFE) {
        int k = (b - 0xE0) % 15 * 4 + 2; /* 2^2 .. 2^58 */
        ptrdiff_t v = (ptrdiff_t)1 << k;
        return (b & 1) ? -v : v;
    }
    if (b == 0xFE) return (ptrdiff_t)u64(r);
    return (u8(r) & 1) ? PTRDIFF_MIN : PTRDIFF_MAX;
}

/* Shape of a tensor in `role` relative to the primary shape. */
static void derive_shape(Reader *r, Tensor *t, int role, size_t pndim, const size_t *pshape) {
    switch (role) {
    case ROLE_FULL:
        t->ndim = pndim;
        memcpy(t->shape, pshape, pndim * sizeof(size_t));
        break;
    case ROLE_VEC:
        t->ndim = 1;
        t->shape[0] = pndim ? pshape[pndim - 1] : 1;
        break;
    case ROLE_ROWS:
        t->ndim = pndim ? pndim - 1 : 0;
        memcpy(t->shape, pshape, t->ndim * sizeof(size_t));
        break;
    case ROLE_BCAST: {
        size_t drop = pndim ? u8(r) % (pndim + 1) : 0;
        uint8_t ones = u8(r);
        t->ndim = pndim - drop;
        for (size_t k = 0; k < t->ndim; ++k)
            t->shape[k] = (ones >> (k % 8) & 1) ? 1 : pshape[drop + k];
        break;
    }
    }
}

/* Row-major strides with padding and negation per dimension; saturates. */
static void natural_strides(Reader *r, Tensor *t) {
    __int128 acc = 1;
    for (size_t k = t->ndim; k-- > 0;) {
        uint8_t b = u8(r);
        __int128 s = acc;
        if (s > PTRDIFF_MAX) s = PTRDIFF_MAX;
        t->strides[k] = (b & 4) ? -(ptrdiff_t)s : (ptrdiff_t)s;
        if (acc > ((__int128)1 << 62)) acc = (__int128)1 << 62; /* keeps the product below 2^127 */
        acc *= (__int128)t->shape[k] + (b & 3);
    }
}

static void read_tensor(Reader *r, Tensor *t, int role, size_t pndim, const size_t *pshape, int pdtype) {
    memset(t, 0, sizeof *t);
    uint8_t f = u8(r);
    t->present = (f & 0xC0) != 0xC0;
    int shape_mode = f & 3;
    if (shape_mode == 0) {
        t->ndim = u8(r) % (MAXD + 1);
        for (size_t k = 0; k < t->ndim; ++k) t->shape[k] = read_dim(r);
    } else {
        derive_shape(r, t, shape_mode == 1 && role == ROLE_BCAST ? ROLE_FULL : role, pndim, pshape);
        if (f & 4) { /* mutate: one dimension changed, or ndim changed */
            uint8_t b = u8(r);
            if (b & 0x80 && t->ndim < MAXD) {
                t->shape[t->ndim++] = read_dim(r);
            } else if (t->ndim) {
                t->shape[b % t->ndim] = read_dim(r);
            }
        }
    }
    int stride_mode = (f >> 3) & 3;
    t->null_strides = stride_mode == 0;
    if (stride_mode == 1) {
        ptrdiff_t s = 1;
        for (size_t k = t->ndim; k-- > 0;) {
            t->strides[k] = s;
            if (t->shape[k] > 1 && __builtin_mul_overflow(s, (ptrdiff_t)(t->shape[k] & PTRDIFF_MAX), &s))
                s = PTRDIFF_MAX;
        }
    } else if (stride_mode == 2) {
        natural_strides(r, t);
    } else if (stride_mode == 3) {
        for (size_t k = 0; k < t->ndim; ++k) t->strides[k] = read_raw_stride(r);
    }
    t->dtype = (f & 0x20) ? read_dtype(r) : pdtype;
}

/* Independent verdict on a tensor descriptor: 0 accept, else the status. */
static infiniStatus_t expected_create(Tensor *t, int *numel_zero_null_strides) {
    *numel_zero_null_strides = 0;
    size_t es = dtype_size(t->dtype);
    if (!es) return INFINI_STATUS_BAD_TENSOR_DTYPE;
    unsigned __int128 numel = 1;
    for (size_t k = 0; k < t->ndim; ++k) {
        if (t->shape[k] > (size_t)PTRDIFF_MAX) return INFINI_STATUS_BAD_TENSOR_SHAPE;
        numel *= t->shape[k];
        if (numel > SIZE_MAX) return INFINI_STATUS_BAD_TENSOR_SHAPE;
    }
    if (numel == 0) {
        *numel_zero_null_strides = t->null_strides;
        return INFINI_STATUS_SUCCESS;
    }
    __int128 lo = 0, hi = 0, contiguous = 1;
    for (size_t k = t->ndim; k-- > 0;) {
        __int128 s = t->null_strides ? contiguous : (__int128)t->strides[k];
        contiguous *= (__int128)t->shape[k];
        if (t->shape[k] <= 1) continue;
        if (s > PTRDIFF_MAX || s < PTRDIFF_MIN) return INFINI_STATUS_BAD_TENSOR_STRIDES;
        __int128 reach = s * (__int128)(t->shape[k] - 1);
        if (reach > 0) hi += reach; else lo += reach;
        if (hi - lo > ((__int128)1 << 80)) return INFINI_STATUS_BAD_TENSOR_STRIDES;
    }
    if ((hi - lo + 1) * (__int128)es > PTRDIFF_MAX) return INFINI_STATUS_BAD_TENSOR_STRIDES;
    return INFINI_STATUS_SUCCESS;
}

/* Fill the independent facts of an accepted descriptor. */
static void tensor_facts(Tensor *t) {
    t->es = dtype_size(t->dtype);
    t->numel = 1;
    ptrdiff_t c = 1;
    for (size_t k = t->ndim; k-- > 0;) {
        t->numel *= t->shape[k];
        t->eff[k] = t->null_strides ? c : t->strides[k];
        if (t->shape[k] > 1) c = (ptrdiff_t)((uint64_t)c * t->shape[k]); /* only used when numel > 0 */
    }
    t->lo = t->hi = 0;
    if (t->numel == 0) return;
    for (size_t k = 0; k < t->ndim; ++k) {
        if (t->shape[k] <= 1) continue;
        ptrdiff_t reach = t->eff[k] * (ptrdiff_t)(t->shape[k] - 1);
        if (reach > 0) t->hi += reach; else t->lo += reach;
    }
}

static void create_tensor(Tensor *t) {
    t->desc = NULL;
    if (!t->present) return;
    int zero_null;
    infiniStatus_t want = expected_create(t, &zero_null);
    infiniopTensorDescriptor_t d = NULL;
    infiniStatus_t got = CALL(infiniopCreateTensorDescriptor(&d, t->ndim, t->shape,
                                                             t->null_strides ? NULL : t->strides,
                                                             (infiniDtype_t)t->dtype));
    /* An empty tensor with strides = NULL may be refused when its contiguous
     * strides would not be representable; anything else must match. */
    if (!(zero_null && got == INFINI_STATUS_BAD_TENSOR_STRIDES))
        CHECK(got == want, "tensor ndim %zu dtype %d: status %d, expected %d", t->ndim, t->dtype, (int)got, (int)want);
    if (got != INFINI_STATUS_SUCCESS) {
        CHECK(d == NULL, "failed creation wrote the descriptor");
        return;
    }
    CHECK(d != NULL, "successful creation returned NULL");
    t->desc = d;
    tensor_facts(t);
}

/* Every element of t at a distinct offset (brute force, small tensors). */
static int distinct_offsets(const Tensor *t) {
    if (t->numel <= 1) return 1;
    size_t span = (size_t)(t->hi - t->lo) + 1;
    unsigned char *seen = calloc(span, 1);
    if (!seen) return 1;
    int ok = 1;
    size_t idx[MAXD] = {0};
    for (size_t i = 0; i < t->numel && ok; ++i) {
        ptrdiff_t off = 0;
        for (size_t k = 0; k < t->ndim; ++k) off += (ptrdiff_t)idx[k] * t->eff[k];
        size_t s = (size_t)(off - t->lo);
        if (seen[s]) ok = 0;
        seen[s] = 1;
        for (size_t k = t->ndim; k-- > 0;) {
            if (++idx[k] < t->shape[k]) break;
            idx[k] = 0;
        }
    }
    free(seen);
    return ok;
}

static int same_layout(const Tensor *a, const Tensor *b) {
    if (a->ndim != b->ndim || a->es != b->es) return 0;
    for (size_t k = 0; k < a->ndim; ++k)
        if (a->shape[k] != b->shape[k] || (a->shape[k] > 1 && a->eff[k] != b->eff[k])) return 0;
    return 1;
}

/* ------------------------------------------------------------------ operators */
enum { OP_ARN, OP_CS, OP_LN, OP_SILU, OP_SIGMOID, NOPS };

typedef struct {
    int ntensors, nout; /* outputs are tensors [0, nout) */
    int roles[MAXT];
} OpInfo;

static const OpInfo ops[NOPS] = {
    [OP_ARN] = {5, 2, {ROLE_FULL, ROLE_FULL, ROLE_FULL, ROLE_FULL, ROLE_VEC}},
    [OP_CS] = {2, 1, {ROLE_FULL, ROLE_FULL}},
    [OP_LN] = {6, 3, {ROLE_FULL, ROLE_FULL, ROLE_ROWS, ROLE_FULL, ROLE_VEC, ROLE_VEC}},
    [OP_SILU] = {2, 1, {ROLE_FULL, ROLE_BCAST}},
    [OP_SIGMOID] = {2, 1, {ROLE_FULL, ROLE_BCAST}},
};

static infiniopHandle_t handle;
static int verbose = -1; /* FUZZ_OPS_VERBOSE=1: one line per input */

static infiniStatus_t op_create(int op, infiniopHandle_t h, void **desc, Tensor *t, float eps) {
    infiniopTensorDescriptor_t d[MAXT];
    for (int i = 0; i < MAXT; ++i) d[i] = t[i].desc;
    switch (op) {
    case OP_ARN:
        return CALL(infiniopCreateAddRMSNormDescriptor(h, (infiniopAddRMSNormDescriptor_t *)desc, d[0], d[1], d[2],
                                                       d[3], d[4], eps));
    case OP_CS:
        return CALL(infiniopCreateCausalSoftmaxDescriptor(h, (infiniopCausalSoftmaxDescriptor_t *)desc, d[0], d[1]));
    case OP_LN:
        return CALL(infiniopCreateLayerNormDescriptor(h, (infiniopLayerNormDescriptor_t *)desc, d[0], d[1], d[2], d[3],
                                                      d[4], d[5], eps));
    case OP_SILU: return CALL(infiniopCreateSiluDescriptor(h, (infiniopSiluDescriptor_t *)desc, d[0], d[1]));
    default: return CALL(infiniopCreateSigmoidDescriptor(h, (infiniopSigmoidDescriptor_t *)desc, d[0], d[1]));
    }
}

static infiniStatus_t op_run(int op, void *desc, size_t ws, void **p) {
    switch (op) {
    case OP_ARN: return CALL(infiniopAddRMSNorm(desc, NULL, ws, p[0], p[1], p[2], p[3], p[4], NULL));
    case OP_CS: return CALL(infiniopCausalSoftmax(desc, NULL, ws, p[0], p[1], NULL));
    case OP_LN: return CALL(infiniopLayerNorm(desc, NULL, ws, p[0], p[1], p[2], p[3], p[4], p[5], NULL));
    case OP_SILU: return CALL(infiniopSilu(desc, NULL, ws, p[0], p[1], NULL));
    default: return CALL(infiniopSigmoid(desc, NULL, ws, p[0], p[1], NULL));
    }
}

static infiniStatus_t op_workspace(int op, void *desc, size_t *size) {
    switch (op) {
    case OP_ARN: return CALL(infiniopGetAddRMSNormWorkspaceSize(desc, size));
    case OP_CS: return CALL(infiniopGetCausalSoftmaxWorkspaceSize(desc, size));
    case OP_LN: return CALL(infiniopGetLayerNormWorkspaceSize(desc, size));
    case OP_SILU: return CALL(infiniopGetSiluWorkspaceSize(desc, size));
    default: return CALL(infiniopGetSigmoidWorkspaceSize(desc, size));
    }
}

static infiniStatus_t op_destroy(int op, void *desc) {
    switch (op) {
    case OP_ARN: return CALL(infiniopDestroyAddRMSNormDescriptor(desc));
    case OP_CS: return CALL(infiniopDestroyCausalSoftmaxDescriptor(desc));
    case OP_LN: return CALL(infiniopDestroyLayerNormDescriptor(desc));
    case OP_SILU: return CALL(infiniopDestroySiluDescriptor(desc));
    default: return CALL(infiniopDestroySigmoidDescriptor(desc));
    }
}

/* ------------------------------------------------------------------ buffers */
typedef struct {
    unsigned char *mem;  /* exactly `bytes` bytes (1 for an empty tensor) */
    size_t bytes;
    unsigned char *snap;
    int shared_with_output;
} Buffer;

static uint64_t rng_next(uint64_t *s) {
    uint64_t x = *s;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return *s = x;
}

static void fill(Buffer *b, uint64_t *rng, int mode) {
    for (size_t i = 0; i < b->bytes; ++i) {
        uint64_t v = rng_next(rng);
        /* mode 0: random bits (NaN, inf, subnormals); 1: small values */
        b->mem[i] = mode ? (unsigned char)((i & 1) ? (0x3c + (v & 3)) : v) : (unsigned char)v;
    }
}

/* Byte range [lo, hi) of tensor t at pointer p (p as an integer). */
static void byte_range(const Tensor *t, uintptr_t p, uintptr_t *lo, uintptr_t *hi) {
    *lo = p + (uintptr_t)(t->lo * (ptrdiff_t)t->es);
    *hi = p + (uintptr_t)((t->hi + 1) * (ptrdiff_t)t->es);
}

/* ------------------------------------------------------------------ misuse */
static void misuse_checks(int op, void *desc, Tensor *t) {
    /* Another operator's functions on this descriptor. */
    int other = (op + 1) % NOPS;
    void *p[MAXT] = {0};
    size_t ws = 0;
    CHECK(op_run(other, desc, 0, p) == INFINI_STATUS_BAD_PARAM, "run of another operator accepted the descriptor");
    CHECK(op_workspace(other, desc, &ws) == INFINI_STATUS_BAD_PARAM, "workspace of another operator accepted it");
    CHECK(op_destroy(other, desc) == INFINI_STATUS_BAD_PARAM, "destroy of another operator accepted it");
    /* Its own queries. */
    CHECK(op_workspace(op, desc, &ws) == INFINI_STATUS_SUCCESS && ws == 0, "workspace size");
    infiniDevice_t dev = (infiniDevice_t)-1;
    int id = -1;
    CHECK(CALL(infiniopGetDescriptorDeviceType(desc, &dev)) == INFINI_STATUS_SUCCESS && dev == INFINI_DEVICE_CPU,
          "device type %d", (int)dev);
    CHECK(CALL(infiniopGetDescriptorDeviceId(desc, &id)) == INFINI_STATUS_SUCCESS && id == 0, "device id %d", id);
    CHECK(CALL(infiniopGetDescriptorDeviceType(desc, NULL)) == INFINI_STATUS_NULL_POINTER, "NULL device_type");
    /* Objects of other kinds passed as an operator descriptor. */
    for (int i = 0; i < MAXT; ++i)
        if (t[i].desc) {
            CHECK(op_run(op, (void *)t[i].desc, 0, p) == INFINI_STATUS_BAD_PARAM, "tensor descriptor run as operator");
            CHECK(op_destroy(op, (void *)t[i].desc) == INFINI_STATUS_BAD_PARAM, "tensor descriptor destroyed as operator");
            CHECK(CALL(infiniopDestroyHandle((infiniopHandle_t)t[i].desc)) == INFINI_STATUS_BAD_PARAM,
                  "tensor descriptor destroyed as handle");
            break;
        }
    CHECK(op_run(op, (void *)handle, 0, p) == INFINI_STATUS_BAD_PARAM, "handle run as operator");
    CHECK(CALL(infiniopDestroyTensorDescriptor((infiniopTensorDescriptor_t)desc)) == INFINI_STATUS_BAD_PARAM,
          "operator descriptor destroyed as tensor");
}

/* ------------------------------------------------------------------ one input */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!handle) {
        if (infiniopCreateHandle(&handle) != INFINI_STATUS_SUCCESS) abort();
        const char *v = getenv("FUZZ_OPS_VERBOSE");
        verbose = v && v[0] == '1';
    }
    Reader rd = {data, size};
    Reader *r = &rd;
    int op = u8(r) % NOPS;
    uint8_t run_flags = u8(r);
    uint8_t alias_pick = u8(r);
    int8_t alias_delta = (int8_t)u8(r);
    uint8_t scalar_mode = u8(r);
    float eps = 1e-5f;
    switch (scalar_mode & 3) {
    case 1: eps = 0.0f; break;
    case 2: { uint32_t b = u32(r); memcpy(&eps, &b, 4); break; }
    case 3: eps = (scalar_mode & 4) ? -1.0f : 1e30f; break;
    }
    /* Primary shape and dtype, from which the tensors' shapes derive. */
    size_t pndim = u8(r) % (MAXD + 1);
    size_t pshape[MAXD];
    for (size_t k = 0; k < pndim; ++k) pshape[k] = read_dim(r);
    int pdtype = read_dtype(r);

    const OpInfo *oi = &ops[op];
    Tensor t[MAXT];
    memset(t, 0, sizeof t);
    for (int i = 0; i < oi->ntensors; ++i) read_tensor(r, &t[i], oi->roles[i], pndim, pshape, pdtype);
    uint64_t rng = u64(r) | 1;
    size_t ws_size = (run_flags & 0x40) ? (size_t)u64(r) : 0;

    for (int i = 0; i < oi->ntensors; ++i) create_tensor(&t[i]);

    /* A destroyed handle is refused (it is the most recent retired object). */
    if (run_flags & 0x80) {
        infiniopHandle_t h2 = NULL;
        CHECK(CALL(infiniopCreateHandle(&h2)) == INFINI_STATUS_SUCCESS, "second handle");
        CHECK(CALL(infiniopDestroyHandle(h2)) == INFINI_STATUS_SUCCESS, "destroy handle");
        void *d2 = NULL;
        CHECK(op_create(op, h2, &d2, t, eps) != INFINI_STATUS_SUCCESS, "operator created from a destroyed handle");
        CHECK(CALL(infiniopDestroyHandle(h2)) == INFINI_STATUS_BAD_PARAM, "double destroy of a handle");
    }

    void *desc = NULL;
    infiniStatus_t st = op_create(op, handle, &desc, t, eps);
    if (st != INFINI_STATUS_SUCCESS) {
        CHECK(desc == NULL, "failed creation wrote the descriptor");
    } else {
        CHECK(desc != NULL, "successful creation returned NULL");
        /* Outputs never have two elements at one address. */
        for (int o = 0; o < oi->nout; ++o)
            if (t[o].desc && t[o].numel <= RUN_MAX_NUMEL && (size_t)(t[o].hi - t[o].lo) < RUN_MAX_NUMEL * 4u)
                CHECK(distinct_offsets(&t[o]), "output %d accepted with overlapping elements", o);
    }

    /* Tensor descriptors may be destroyed right after creation (every
     * second input does so before running). */
    int destroy_early = rng & 2;
    if (destroy_early)
        for (int i = 0; i < oi->ntensors; ++i)
            if (t[i].desc) CHECK(CALL(infiniopDestroyTensorDescriptor(t[i].desc)) == INFINI_STATUS_SUCCESS, "destroy");

    if (verbose) fprintf(stderr, "op %d: create %d %s\n", op, (int)st, st ? infiniopGetLastErrorMessage() : "");
    int small = st == INFINI_STATUS_SUCCESS;
    for (int i = 0; i < oi->ntensors && small; ++i)
        if (t[i].desc)
            small = t[i].numel <= RUN_MAX_NUMEL && (uint64_t)(t[i].hi - t[i].lo + 1) * t[i].es <= RUN_MAX_BYTES;

    if (small) {
        Buffer buf[MAXT];
        memset(buf, 0, sizeof buf);
        void *ptr[MAXT] = {0};
        int bufof[MAXT]; /* which buffer tensor i lives in */
        int alias_mode = run_flags & 3;           /* 0, 1: separate; 2: exact in-place; 3: shifted */
        int ao = alias_pick % oi->nout;
        int ai = alias_pick / oi->nout % oi->ntensors;
        int aliasing = alias_mode >= 2 && ai != ao && t[ao].desc && t[ai].desc && t[ao].numel && t[ai].numel;
        ptrdiff_t delta = 0;
        for (int i = 0; i < oi->ntensors; ++i) {
            bufof[i] = i;
            if (!t[i].desc) continue;
            if (aliasing && i == ao) continue;
            size_t bytes = (size_t)(t[i].hi - t[i].lo + 1) * t[i].es;
            size_t lead = 0; /* bytes before tensor i's lowest element */
            if (aliasing && i == ai) {
                /* One buffer holding both, exactly their union. */
                size_t unit = t[ai].es > t[ao].es ? t[ai].es : t[ao].es;
                delta = alias_mode == 2 ? 0 : (ptrdiff_t)alias_delta * (ptrdiff_t)unit;
                ptrdiff_t ilo = t[ai].lo * (ptrdiff_t)t[ai].es, ihi = (t[ai].hi + 1) * (ptrdiff_t)t[ai].es;
                ptrdiff_t olo = delta + t[ao].lo * (ptrdiff_t)t[ao].es, ohi = delta + (t[ao].hi + 1) * (ptrdiff_t)t[ao].es;
                ptrdiff_t ulo = ilo < olo ? ilo : olo, uhi = ihi > ohi ? ihi : ohi;
                bytes = (size_t)(uhi - ulo);
                lead = (size_t)(ilo - ulo);
                bufof[ao] = ai;
            }
            if (t[i].numel == 0) bytes = 1, lead = 0;
            buf[i].bytes = bytes;
            buf[i].mem = malloc(bytes);
            if (!buf[i].mem) abort();
            fill(&buf[i], &rng, (run_flags >> 2) & 1);
            ptr[i] = t[i].numel ? buf[i].mem + lead - t[i].lo * (ptrdiff_t)t[i].es : buf[i].mem;
        }
        if (aliasing) {
            ptr[ao] = (char *)ptr[ai] + delta;
            buf[ai].shared_with_output = 1;
        }
        for (int o = 0; o < oi->nout; ++o) buf[bufof[o]].shared_with_output = 1;
        if (run_flags & 0x08) ptr[u8(r) % oi->ntensors] = NULL;
        if (run_flags & 0x20) { /* a pointer off by one byte: must be refused, never dereferenced */
            int m = u8(r) % oi->ntensors;
            if (ptr[m]) ptr[m] = (char *)ptr[m] + 1;
        }
        /* layer_norm without bias: the bias pointer must be NULL too. */
        if (op == OP_LN && !t[5].desc && !(run_flags & 0x10)) ptr[5] = NULL;
        else if (op == OP_LN && !t[5].desc) ptr[5] = buf[0].mem ? (void *)buf[0].mem : (void *)&rng;

        for (int i = 0; i < oi->ntensors; ++i)
            if (buf[i].mem) {
                buf[i].snap = malloc(buf[i].bytes);
                if (!buf[i].snap) abort();
                memcpy(buf[i].snap, buf[i].mem, buf[i].bytes);
            }

        infiniStatus_t rs = op_run(op, desc, ws_size, ptr);
        if (verbose)
            fprintf(stderr, "op %d: run %d (alias %d, shift %td) %s\n", op, (int)rs, aliasing, delta,
                    rs ? infiniopGetLastErrorMessage() : "");

        for (int i = 0; i < oi->ntensors; ++i) {
            if (!buf[i].mem) continue;
            int same = memcmp(buf[i].snap, buf[i].mem, buf[i].bytes) == 0;
            if (rs != INFINI_STATUS_SUCCESS)
                CHECK(same, "failed run (status %d) modified tensor %d's buffer", (int)rs, i);
            else if (!buf[i].shared_with_output)
                CHECK(same, "run modified input %d", i);
        }
        if (rs == INFINI_STATUS_SUCCESS && aliasing && ptr[ao] && ptr[ai]) {
            uintptr_t olo, ohi, ilo, ihi;
            byte_range(&t[ao], (uintptr_t)ptr[ao], &olo, &ohi);
            byte_range(&t[ai], (uintptr_t)ptr[ai], &ilo, &ihi);
            if (olo < ihi && ilo < ohi)
                CHECK(delta == 0 && same_layout(&t[ao], &t[ai]),
                      "output %d overlaps tensor %d (shift %td bytes) and was accepted", ao, ai, delta);
        }
        /* The same call once more: descriptors are immutable. */
        if (rs == INFINI_STATUS_SUCCESS) CHECK(op_run(op, desc, ws_size, ptr) == INFINI_STATUS_SUCCESS, "second run");
        for (int i = 0; i < oi->ntensors; ++i) {
            free(buf[i].mem);
            free(buf[i].snap);
        }
    }

    if (st == INFINI_STATUS_SUCCESS) {
        misuse_checks(op, desc, t);
        CHECK(op_destroy(op, desc) == INFINI_STATUS_SUCCESS, "destroy");
        /* The destroyed descriptor is refused (the quarantine keeps it readable). */
        void *p[MAXT] = {0};
        CHECK(op_run(op, desc, 0, p) == INFINI_STATUS_BAD_PARAM, "run of a destroyed descriptor");
        CHECK(op_destroy(op, desc) == INFINI_STATUS_BAD_PARAM, "double destroy of a descriptor");
    }
    if (!destroy_early)
        for (int i = 0; i < oi->ntensors; ++i)
            if (t[i].desc) CHECK(CALL(infiniopDestroyTensorDescriptor(t[i].desc)) == INFINI_STATUS_SUCCESS, "destroy");
    for (int i = 0; i < oi->ntensors; ++i)
        if (t[i].desc) {
            CHECK(CALL(infiniopDestroyTensorDescriptor(t[i].desc)) == INFINI_STATUS_BAD_PARAM,
                  "double destroy of a tensor descriptor");
            break;
        }
    return 0;
}
