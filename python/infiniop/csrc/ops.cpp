// torch.ops.infiniop.* as native PyTorch operators, through PyTorch's stable
// C ABI (torch/csrc/stable, the aoti_torch_* shim): one binary serves every
// PyTorch from TORCH_TARGET_VERSION on, CPU-only or CUDA builds alike.
//
// The binding is thin on purpose: each kernel reads the tensors' pointers,
// shapes, strides, dtype and device, finds (or creates once) the library's
// operator descriptor for that layout, and calls the library's C API on the
// current CUDA stream (the CPU: no stream). Nothing here computes; no Python
// runs per call. The schemas, fake implementations and Python-level helpers
// live in python/infiniop/torch_ops.py.
//
// Descriptor cache: key = (operator, device, every tensor's dtype, shape and
// strides, eps bits); bounded (CACHE_MAX entries, least recently created
// evicted first), guarded by one mutex. Entries are shared_ptrs, so an
// evicted descriptor is destroyed only after the last call using it returns.
// The cache and the handles are never freed (process lifetime): destroying
// CUDA descriptors from a static destructor would run after the CUDA runtime
// is torn down.
//
// Errors: a failing library call throws std::runtime_error whose text starts
// "infiniop: INFINI_STATUS_<NAME> (<code>) from <function>: <library
// message>"; PyTorch raises it as RuntimeError, and the infiniop.* Python
// functions turn it into infiniop.InfiniopError (a RuntimeError).

#include <torch/csrc/inductor/aoti_torch/c/shim.h>
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/tensor.h>

#include <infiniop.h>
#include <infinirt.h>

#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

using torch::stable::Tensor;

namespace {

// ------------------------------------------------------------ errors

[[noreturn]] void fail(infiniStatus_t st, const char *function) {
    std::string msg = "infiniop: ";
    msg += infiniopGetStatusString(st);
    msg += " (" + std::to_string(static_cast<int>(st)) + ") from ";
    msg += function;
    const char *last = infiniopGetLastErrorMessage();
    if (last && *last) {
        msg += ": ";
        msg += last;
    }
    throw std::runtime_error(msg);
}

inline void check(infiniStatus_t st, const char *function) {
    if (st != INFINI_STATUS_SUCCESS) fail(st, function);
}

[[noreturn]] void fail_msg(const std::string &what) { throw std::runtime_error("infiniop: " + what); }

inline void shim(AOTITorchError e, const char *what) {
    if (e != AOTI_TORCH_SUCCESS) fail_msg(std::string("PyTorch call failed: ") + what);
}

// ------------------------------------------------------------ tensors

constexpr int32_t kCPU = 0, kCUDA = 1;  // PyTorch's device types

// One tensor as the C API sees it.
struct Arg {
    bool present = false;  // false: an absent optional tensor (layer_norm's bias)
    void *data = nullptr;
    int64_t ndim = 0;
    const int64_t *shape = nullptr;
    const int64_t *strides = nullptr;
    int32_t dtype = 0;  // infiniDtype_t
    int32_t dev_type = 0;  // PyTorch's device type (0 CPU, 1 CUDA)
    int32_t dev_index = 0;
};

// PyTorch ScalarType -> infiniDtype_t. Types the operators refuse still map
// to their InfiniOP names, so the library says what it accepts.
int32_t infini_dtype(int32_t st) {
    switch (st) {
    case 0: return INFINI_DTYPE_U8;     // Byte
    case 1: return INFINI_DTYPE_I8;     // Char
    case 2: return INFINI_DTYPE_I16;    // Short
    case 3: return INFINI_DTYPE_I32;    // Int
    case 4: return INFINI_DTYPE_I64;    // Long
    case 5: return INFINI_DTYPE_F16;    // Half
    case 6: return INFINI_DTYPE_F32;    // Float
    case 7: return INFINI_DTYPE_F64;    // Double
    case 9: return INFINI_DTYPE_C64;    // ComplexFloat
    case 10: return INFINI_DTYPE_C128;  // ComplexDouble
    case 11: return INFINI_DTYPE_BOOL;  // Bool
    case 15: return INFINI_DTYPE_BF16;  // BFloat16
    default: return INFINI_DTYPE_INVALID;
    }
}

Arg describe(const Tensor &t) {
    AtenTensorHandle h = t.get();
    Arg a;
    a.present = true;
    int32_t st = 0;
    shim(aoti_torch_get_data_ptr(h, &a.data), "data_ptr");
    shim(aoti_torch_get_dim(h, &a.ndim), "dim");
    shim(aoti_torch_get_sizes(h, const_cast<int64_t **>(&a.shape)), "sizes");
    shim(aoti_torch_get_strides(h, const_cast<int64_t **>(&a.strides)), "strides");
    shim(aoti_torch_get_dtype(h, &st), "dtype");
    shim(aoti_torch_get_device_type(h, &a.dev_type), "device type");
    shim(aoti_torch_get_device_index(h, &a.dev_index), "device index");
    if (a.dev_type == kCPU) a.dev_index = 0;  // PyTorch says -1
    a.dtype = infini_dtype(st);
    return a;
}

// A new contiguous tensor of x's dtype and device with the given shape.
Tensor empty_like_shape(const Tensor &x, int64_t ndim, const int64_t *shape) {
    AtenTensorHandle h = x.get();
    int32_t st, dt, di;
    shim(aoti_torch_get_dtype(h, &st), "dtype");
    shim(aoti_torch_get_device_type(h, &dt), "device type");
    shim(aoti_torch_get_device_index(h, &di), "device index");
    int64_t strides[16];
    std::vector<int64_t> big;
    int64_t *s = strides;
    if (ndim > 16) {
        big.resize(ndim);
        s = big.data();
    }
    int64_t acc = 1;
    for (int64_t i = ndim - 1; i >= 0; --i) {
        s[i] = acc;
        acc *= shape[i] > 1 ? shape[i] : 1;
    }
    AtenTensorHandle out = nullptr;
    shim(aoti_torch_empty_strided(ndim, shape, s, st, dt, di, &out), "empty_strided");
    return Tensor(out);
}

Tensor empty_like(const Tensor &x) {
    AtenTensorHandle h = x.get();
    int64_t ndim;
    int64_t *shape;
    shim(aoti_torch_get_dim(h, &ndim), "dim");
    shim(aoti_torch_get_sizes(h, &shape), "sizes");
    return empty_like_shape(x, ndim, shape);
}

// ------------------------------------------------------------ devices

// torch's current CUDA stream. aoti_torch_get_current_cuda_stream lives in
// libtorch_cuda, which a CPU-only PyTorch lacks: it is looked up once in the
// already-loaded library instead of linked, so this binary loads with either.
using GetStreamFn = AOTITorchError (*)(int32_t, void **);

GetStreamFn cuda_stream_fn() {
    static GetStreamFn fn = [] {
        void *lib = dlopen("libtorch_cuda.so", RTLD_LAZY | RTLD_NOLOAD);
        void *sym = lib ? dlsym(lib, "aoti_torch_get_current_cuda_stream") : nullptr;
        if (!sym) sym = dlsym(RTLD_DEFAULT, "aoti_torch_get_current_cuda_stream");
        return reinterpret_cast<GetStreamFn>(sym);
    }();
    return fn;
}

void *current_stream(int32_t dev_type, int32_t dev_index) {
    if (dev_type != kCUDA) return nullptr;
    GetStreamFn fn = cuda_stream_fn();
    if (!fn) fail_msg("a CUDA tensor, but this PyTorch has no CUDA stream API (aoti_torch_get_current_cuda_stream)");
    void *s = nullptr;
    shim(fn(dev_index, &s), "current CUDA stream");
    return s;
}

infiniDevice_t infini_device(int32_t dev_type) {
    if (dev_type == kCPU) return INFINI_DEVICE_CPU;
    if (dev_type == kCUDA) return INFINI_DEVICE_NVIDIA;
    fail_msg("tensors on device type " + std::to_string(dev_type) + " are not supported (cpu and cuda only)");
}

// One handle per (device kind, index), created on first use.
std::mutex g_handle_lock;
std::unordered_map<int64_t, infiniopHandle_t> *g_handles = new std::unordered_map<int64_t, infiniopHandle_t>();

infiniopHandle_t get_handle(int32_t dev_type, int32_t dev_index) {
    int64_t key = (int64_t(dev_type) << 32) | uint32_t(dev_index);
    std::lock_guard<std::mutex> g(g_handle_lock);
    auto it = g_handles->find(key);
    if (it != g_handles->end()) return it->second;
    infiniDevice_t kind = infini_device(dev_type);
    infiniDevice_t prev_kind = INFINI_DEVICE_CPU;
    int prev_id = 0;
    bool have_prev = infinirtGetDevice(&prev_kind, &prev_id) == INFINI_STATUS_SUCCESS;
    infiniStatus_t st = infinirtSetDevice(kind, dev_index);
    if (st != INFINI_STATUS_SUCCESS) {
        std::string what = std::string("infinirtSetDevice(") + (kind == INFINI_DEVICE_CPU ? "CPU" : "NVIDIA") + ", " +
                           std::to_string(dev_index) + ")";
        if (kind == INFINI_DEVICE_NVIDIA) what += " (is the library built with its CUDA backend, and is a GPU visible?)";
        fail(st, what.c_str());
    }
    infiniopHandle_t h = nullptr;
    st = infiniopCreateHandle(&h);
    if (have_prev && (prev_kind != kind || prev_id != dev_index)) infinirtSetDevice(prev_kind, prev_id);
    check(st, "infiniopCreateHandle");
    (*g_handles)[key] = h;
    return h;
}

// Makes dev_index the current CUDA device for the call when it is not.
struct DeviceScope {
    DeviceGuardHandle guard = nullptr;
    DeviceScope(int32_t dev_type, int32_t dev_index) {
        if (dev_type != kCUDA) return;
        int32_t cur = -1;
        if (aoti_torch_get_current_device_index(&cur) == AOTI_TORCH_SUCCESS && cur == dev_index) return;
        shim(aoti_torch_create_device_guard(dev_index, &guard), "device guard");
    }
    ~DeviceScope() {
        if (guard) aoti_torch_delete_device_guard(guard);
    }
};

// ------------------------------------------------------------ descriptors

enum Op : int64_t { ADD_RMS_NORM = 1, LAYER_NORM, CAUSAL_SOFTMAX, SILU, SIGMOID };

using DestroyFn = infiniStatus_t (*)(void *);

struct Desc {
    void *ptr = nullptr;
    size_t workspace = 0;
    DestroyFn destroy = nullptr;
    ~Desc() {
        if (ptr && destroy) destroy(ptr);
    }
};

struct KeyHash {
    size_t operator()(const std::vector<int64_t> &k) const noexcept {
        uint64_t h = 1469598103934665603ull;  // FNV-1a over the words
        for (int64_t v : k) {
            h ^= uint64_t(v);
            h *= 1099511628211ull;
        }
        return size_t(h);
    }
};

constexpr size_t CACHE_MAX = 1024;

struct Cache {
    std::mutex lock;
    std::unordered_map<std::vector<int64_t>, std::shared_ptr<Desc>, KeyHash> map;
    std::list<std::vector<int64_t>> order;  // creation order, for eviction
    std::atomic<int64_t> hits{0}, misses{0};
};
Cache *g_cache = new Cache();

// (op, device, eps bits, then per tensor: present, dtype, ndim, shape, strides)
void build_key(std::vector<int64_t> &key, Op op, const Arg *args, int n, float eps) {
    key.clear();
    uint32_t ebits;
    std::memcpy(&ebits, &eps, sizeof ebits);
    key.push_back(op);
    key.push_back((int64_t(args[0].dev_type) << 32) | uint32_t(args[0].dev_index));
    key.push_back(ebits);
    for (int i = 0; i < n; ++i) {
        const Arg &a = args[i];
        if (!a.present) {
            key.push_back(-1);
            continue;
        }
        key.push_back((int64_t(a.dtype) << 32) | a.ndim);
        for (int64_t d = 0; d < a.ndim; ++d) key.push_back(a.shape[d]);
        for (int64_t d = 0; d < a.ndim; ++d) key.push_back(a.strides[d]);
    }
}

// Tensor descriptors for the create call, destroyed when it returns.
struct TensorDescs {
    infiniopTensorDescriptor_t d[8] = {};
    ~TensorDescs() {
        for (auto x : d)
            if (x) infiniopDestroyTensorDescriptor(x);
    }
};

infiniopTensorDescriptor_t tensor_desc(const Arg &a) {
    if (!a.present) return nullptr;
    std::vector<size_t> shape(a.shape, a.shape + a.ndim);
    std::vector<ptrdiff_t> strides(a.strides, a.strides + a.ndim);
    // An empty tensor's strides mean nothing: describe it as contiguous.
    bool empty = false;
    for (auto s : shape) empty |= s == 0;
    if (empty) {
        ptrdiff_t acc = 1;
        for (int64_t i = a.ndim - 1; i >= 0; --i) {
            strides[i] = acc;
            acc *= shape[i] > 1 ? ptrdiff_t(shape[i]) : 1;
        }
    }
    infiniopTensorDescriptor_t d = nullptr;
    check(infiniopCreateTensorDescriptor(&d, size_t(a.ndim), shape.data(), strides.data(), infiniDtype_t(a.dtype)),
          "infiniopCreateTensorDescriptor");
    return d;
}

std::shared_ptr<Desc> create_desc(Op op, const Arg *args, int n, float eps) {
    infiniopHandle_t h = get_handle(args[0].dev_type, args[0].dev_index);
    TensorDescs td;
    for (int i = 0; i < n; ++i) td.d[i] = tensor_desc(args[i]);
    auto e = std::make_shared<Desc>();
    auto **d = td.d;
    switch (op) {
    case ADD_RMS_NORM:
        check(infiniopCreateAddRMSNormDescriptor(h, (infiniopAddRMSNormDescriptor_t *)&e->ptr, d[0], d[1], d[2], d[3],
                                                 d[4], eps),
              "infiniopCreateAddRMSNormDescriptor");
        e->destroy = (DestroyFn)infiniopDestroyAddRMSNormDescriptor;
        check(infiniopGetAddRMSNormWorkspaceSize((infiniopAddRMSNormDescriptor_t)e->ptr, &e->workspace),
              "infiniopGetAddRMSNormWorkspaceSize");
        break;
    case LAYER_NORM:
        check(infiniopCreateLayerNormDescriptor(h, (infiniopLayerNormDescriptor_t *)&e->ptr, d[0], d[1], d[2], d[3],
                                                d[4], d[5], eps),
              "infiniopCreateLayerNormDescriptor");
        e->destroy = (DestroyFn)infiniopDestroyLayerNormDescriptor;
        check(infiniopGetLayerNormWorkspaceSize((infiniopLayerNormDescriptor_t)e->ptr, &e->workspace),
              "infiniopGetLayerNormWorkspaceSize");
        break;
    case CAUSAL_SOFTMAX:
        check(infiniopCreateCausalSoftmaxDescriptor(h, (infiniopCausalSoftmaxDescriptor_t *)&e->ptr, d[0], d[1]),
              "infiniopCreateCausalSoftmaxDescriptor");
        e->destroy = (DestroyFn)infiniopDestroyCausalSoftmaxDescriptor;
        check(infiniopGetCausalSoftmaxWorkspaceSize((infiniopCausalSoftmaxDescriptor_t)e->ptr, &e->workspace),
              "infiniopGetCausalSoftmaxWorkspaceSize");
        break;
    case SILU:
        check(infiniopCreateSiluDescriptor(h, (infiniopSiluDescriptor_t *)&e->ptr, d[0], d[1]),
              "infiniopCreateSiluDescriptor");
        e->destroy = (DestroyFn)infiniopDestroySiluDescriptor;
        check(infiniopGetSiluWorkspaceSize((infiniopSiluDescriptor_t)e->ptr, &e->workspace),
              "infiniopGetSiluWorkspaceSize");
        break;
    case SIGMOID:
        check(infiniopCreateSigmoidDescriptor(h, (infiniopSigmoidDescriptor_t *)&e->ptr, d[0], d[1]),
              "infiniopCreateSigmoidDescriptor");
        e->destroy = (DestroyFn)infiniopDestroySigmoidDescriptor;
        check(infiniopGetSigmoidWorkspaceSize((infiniopSigmoidDescriptor_t)e->ptr, &e->workspace),
              "infiniopGetSigmoidWorkspaceSize");
        break;
    }
    return e;
}

std::shared_ptr<Desc> get_desc(Op op, const Arg *args, int n, float eps) {
    thread_local std::vector<int64_t> key;
    build_key(key, op, args, n, eps);
    Cache &c = *g_cache;
    {
        std::lock_guard<std::mutex> g(c.lock);
        auto it = c.map.find(key);
        if (it != c.map.end()) {
            c.hits.fetch_add(1, std::memory_order_relaxed);
            return it->second;
        }
    }
    c.misses.fetch_add(1, std::memory_order_relaxed);
    std::shared_ptr<Desc> e = create_desc(op, args, n, eps);  // outside the lock: may be slow, may throw
    std::lock_guard<std::mutex> g(c.lock);
    auto ins = c.map.emplace(key, e);
    if (!ins.second) return ins.first->second;  // another thread made it first
    c.order.push_back(key);
    while (c.map.size() > CACHE_MAX) {
        c.map.erase(c.order.front());
        c.order.pop_front();
    }
    return e;
}

// All tensors on one device (the first one's).
void same_device(const Arg *args, int n, const char *const *names) {
    for (int i = 1; i < n; ++i) {
        if (!args[i].present) continue;
        if (args[i].dev_type != args[0].dev_type || args[i].dev_index != args[0].dev_index)
            fail_msg(std::string("'") + names[i] + "' is on another device than '" + names[0] +
                     "'; all tensors must be on one device");
    }
}

// A workspace (every operator here needs none today; kept for the contract).
struct Workspace {
    std::optional<Tensor> buf;
    void *ptr = nullptr;
};

Workspace workspace(const Desc &e, const Tensor &like) {
    Workspace w;
    if (e.workspace == 0) return w;
    int64_t n = int64_t(e.workspace), one = 1;
    AtenTensorHandle h = nullptr;
    int32_t dt, di;
    shim(aoti_torch_get_device_type(like.get(), &dt), "device type");
    shim(aoti_torch_get_device_index(like.get(), &di), "device index");
    shim(aoti_torch_empty_strided(1, &n, &one, aoti_torch_dtype_uint8(), dt, di, &h), "empty_strided");
    w.buf.emplace(h);
    shim(aoti_torch_get_data_ptr(h, &w.ptr), "data_ptr");
    return w;
}

// ------------------------------------------------------------ operators

void run_add_rms_norm(const Tensor &a, const Tensor &b, const Tensor &w, double eps, const Tensor &y,
                      const Tensor &r) {
    static const char *const names[] = {"y", "residual_out", "a", "b", "weight"};
    Arg args[5] = {describe(y), describe(r), describe(a), describe(b), describe(w)};
    same_device(args, 5, names);
    auto e = get_desc(ADD_RMS_NORM, args, 5, float(eps));
    DeviceScope scope(args[0].dev_type, args[0].dev_index);
    Workspace ws = workspace(*e, y);
    void *s = current_stream(args[0].dev_type, args[0].dev_index);
    check(infiniopAddRMSNorm((infiniopAddRMSNormDescriptor_t)e->ptr, ws.ptr, e->workspace, args[0].data,
                             args[1].data, args[2].data, args[3].data, args[4].data, s),
          "infiniopAddRMSNorm");
}

std::tuple<Tensor, Tensor> add_rms_norm(Tensor a, Tensor b, Tensor w, double eps) {
    Tensor y = empty_like(a), r = empty_like(a);
    run_add_rms_norm(a, b, w, eps, y, r);
    return {y, r};
}

void add_rms_norm_out(Tensor a, Tensor b, Tensor w, double eps, Tensor y, Tensor r) {
    run_add_rms_norm(a, b, w, eps, y, r);
}

void run_layer_norm(const Tensor &x, const Tensor &w, const std::optional<Tensor> &bias, double eps, const Tensor &o,
                    const Tensor &xh, const Tensor &sd) {
    static const char *const names[] = {"output", "input_standardization", "input_std_deviation", "input", "weight",
                                        "bias"};
    Arg args[6] = {describe(o), describe(xh), describe(sd), describe(x), describe(w), Arg()};
    if (bias.has_value()) args[5] = describe(*bias);
    same_device(args, 6, names);
    auto e = get_desc(LAYER_NORM, args, 6, float(eps));
    DeviceScope scope(args[0].dev_type, args[0].dev_index);
    Workspace ws = workspace(*e, o);
    void *s = current_stream(args[0].dev_type, args[0].dev_index);
    check(infiniopLayerNorm((infiniopLayerNormDescriptor_t)e->ptr, ws.ptr, e->workspace, args[0].data, args[1].data,
                            args[2].data, args[3].data, args[4].data, args[5].data, s),
          "infiniopLayerNorm");
}

std::tuple<Tensor, Tensor, Tensor> layer_norm(Tensor x, Tensor w, std::optional<Tensor> bias, double eps) {
    AtenTensorHandle h = x.get();
    int64_t ndim;
    int64_t *shape;
    shim(aoti_torch_get_dim(h, &ndim), "dim");
    if (ndim < 1) fail_msg("layer_norm: input must have at least one dimension");
    shim(aoti_torch_get_sizes(h, &shape), "sizes");
    Tensor o = empty_like(x), xh = empty_like(x), sd = empty_like_shape(x, ndim - 1, shape);
    run_layer_norm(x, w, bias, eps, o, xh, sd);
    return {o, xh, sd};
}

void layer_norm_out(Tensor x, Tensor w, std::optional<Tensor> bias, double eps, Tensor o, Tensor xh, Tensor sd) {
    run_layer_norm(x, w, bias, eps, o, xh, sd);
}

template <Op OP>
void run_unary(const Tensor &x, const Tensor &y) {
    static const char *const names_sm[] = {"y", "x"};
    static const char *const names_act[] = {"output", "input"};
    Arg args[2] = {describe(y), describe(x)};
    same_device(args, 2, OP == CAUSAL_SOFTMAX ? names_sm : names_act);
    auto e = get_desc(OP, args, 2, 0.0f);
    DeviceScope scope(args[0].dev_type, args[0].dev_index);
    Workspace ws = workspace(*e, y);
    void *s = current_stream(args[0].dev_type, args[0].dev_index);
    infiniStatus_t st;
    const char *fn;
    if (OP == SILU) {
        st = infiniopSilu((infiniopSiluDescriptor_t)e->ptr, ws.ptr, e->workspace, args[0].data, args[1].data, s);
        fn = "infiniopSilu";
    } else if (OP == SIGMOID) {
        st = infiniopSigmoid((infiniopSigmoidDescriptor_t)e->ptr, ws.ptr, e->workspace, args[0].data, args[1].data,
                             s);
        fn = "infiniopSigmoid";
    } else {
        st = infiniopCausalSoftmax((infiniopCausalSoftmaxDescriptor_t)e->ptr, ws.ptr, e->workspace, args[0].data,
                                   args[1].data, s);
        fn = "infiniopCausalSoftmax";
    }
    check(st, fn);
}

template <Op OP>
Tensor unary(Tensor x) {
    Tensor y = empty_like(x);
    run_unary<OP>(x, y);
    return y;
}

template <Op OP>
void unary_(Tensor x) {
    run_unary<OP>(x, x);
}

template <Op OP>
void unary_out(Tensor x, Tensor out) {
    run_unary<OP>(x, out);
}

}  // namespace

// ------------------------------------------------------------ registration
// The schemas are those torch.library.custom_op gave the pure-Python
// operators, so graphs, exported programs and opcheck see the same operators
// whichever implementation is installed.

STABLE_TORCH_LIBRARY(infiniop, m) {
    m.def("add_rms_norm(Tensor a, Tensor b, Tensor weight, float eps) -> (Tensor, Tensor)");
    m.def("add_rms_norm_out(Tensor a, Tensor b, Tensor weight, float eps, Tensor(a4!) y, Tensor(a5!) residual_out) -> ()");
    m.def("layer_norm(Tensor x, Tensor weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)");
    m.def("layer_norm_out(Tensor x, Tensor weight, Tensor? bias, float eps, Tensor(a4!) output, "
          "Tensor(a5!) input_standardization, Tensor(a6!) input_std_deviation) -> ()");
    m.def("causal_softmax(Tensor x) -> Tensor");
    m.def("causal_softmax_(Tensor(a0!) x) -> ()");
    m.def("causal_softmax_out(Tensor x, Tensor(a1!) out) -> ()");
    m.def("silu(Tensor x) -> Tensor");
    m.def("silu_(Tensor(a0!) x) -> ()");
    m.def("silu_out(Tensor x, Tensor(a1!) out) -> ()");
    m.def("sigmoid(Tensor x) -> Tensor");
    m.def("sigmoid_(Tensor(a0!) x) -> ()");
    m.def("sigmoid_out(Tensor x, Tensor(a1!) out) -> ()");
}

#define INFINIOP_IMPLS(m)                                                  \
    m.impl("add_rms_norm", TORCH_BOX(&add_rms_norm));                      \
    m.impl("add_rms_norm_out", TORCH_BOX(&add_rms_norm_out));              \
    m.impl("layer_norm", TORCH_BOX(&layer_norm));                          \
    m.impl("layer_norm_out", TORCH_BOX(&layer_norm_out));                  \
    m.impl("causal_softmax", TORCH_BOX(&unary<CAUSAL_SOFTMAX>));           \
    m.impl("causal_softmax_", TORCH_BOX(&unary_<CAUSAL_SOFTMAX>));         \
    m.impl("causal_softmax_out", TORCH_BOX(&unary_out<CAUSAL_SOFTMAX>));   \
    m.impl("silu", TORCH_BOX(&unary<SILU>));                               \
    m.impl("silu_", TORCH_BOX(&unary_<SILU>));                             \
    m.impl("silu_out", TORCH_BOX(&unary_out<SILU>));                       \
    m.impl("sigmoid", TORCH_BOX(&unary<SIGMOID>));                         \
    m.impl("sigmoid_", TORCH_BOX(&unary_<SIGMOID>));                       \
    m.impl("sigmoid_out", TORCH_BOX(&unary_out<SIGMOID>))

STABLE_TORCH_LIBRARY_IMPL(infiniop, CPU, m) { INFINIOP_IMPLS(m); }

STABLE_TORCH_LIBRARY_IMPL(infiniop, CUDA, m) { INFINIOP_IMPLS(m); }

// Descriptor cache statistics and clearing, for infiniop.cache_info() and
// infiniop.clear_cache() (called through ctypes).
extern "C" __attribute__((visibility("default"))) void infiniop_torch_cache_info(int64_t *out) {
    Cache &c = *g_cache;
    std::lock_guard<std::mutex> g(c.lock);
    out[0] = int64_t(c.map.size());
    out[1] = c.hits.load();
    out[2] = c.misses.load();
}

extern "C" __attribute__((visibility("default"))) void infiniop_torch_clear_cache(void) {
    Cache &c = *g_cache;
    std::lock_guard<std::mutex> g(c.lock);
    c.map.clear();
    c.order.clear();
    c.hits = 0;
    c.misses = 0;
}
