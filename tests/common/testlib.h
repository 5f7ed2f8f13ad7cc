/*
 * testlib.h - the shared harness of the infiniop-c C tests.
 *
 * Everything here is written against the public headers only: the dtype
 * conversions are exact and independent of the library, so that the float64
 * references (reference.h) cannot inherit a bug of the code under test.
 *
 *  - a seeded RNG (xoshiro256**): the seed is printed and can be set with
 *    INFINIOP_TEST_SEED=<n> or --seed <n>;
 *  - exact f16/bf16 <-> double conversions, rounding to nearest even;
 *  - ulp arithmetic in the lattice of each floating dtype;
 *  - tl_tensor: a host buffer sized to the strided extent of a view
 *    (negative strides included) between two guard regions, with a
 *    snapshot so that every byte the library must not touch (guards,
 *    padding between the view's elements, every byte of an input) is
 *    checked after each call; on --device nvidia the whole buffer, guards
 *    included, goes to device memory and back;
 *  - the command line (--device cpu|nvidia, --quick, --seed) and case
 *    accounting ("N passed, M failed").
 */
#ifndef INFINIOP_TESTLIB_H
#define INFINIOP_TESTLIB_H

#include <infiniop.h>
#include <infinirt.h>

#include <stddef.h>
#include <stdint.h>

#define TL_MAXDIM 8

/* ------------------------------------------------------------------ RNG */
typedef struct {
    uint64_t s[4];
} tl_rng;

void tl_rng_seed(tl_rng *r, uint64_t seed);
uint64_t tl_rng_u64(tl_rng *r);
/* Uniform in [0, n) (n > 0). */
size_t tl_rng_below(tl_rng *r, size_t n);
/* Uniform double in [lo, hi). */
double tl_rng_uniform(tl_rng *r, double lo, double hi);
/* 1 with probability p. */
int tl_rng_chance(tl_rng *r, double p);
/* Pick one of n values. */
size_t tl_rng_pick(tl_rng *r, const size_t *values, size_t n);

/* ------------------------------------------------------------------ dtypes */
size_t tl_dtype_size(infiniDtype_t dt);
const char *tl_dtype_name(infiniDtype_t dt);
int tl_dtype_is_float(infiniDtype_t dt);

/* Exact conversions (no library code involved). */
double tl_f16_to_double(uint16_t h);
uint16_t tl_double_to_f16(double d);   /* round to nearest even */
double tl_bf16_to_double(uint16_t h);
uint16_t tl_double_to_bf16(double d);  /* round to nearest even */

/* d rounded once (nearest even) to dt, as a double. dt: F16, BF16, F32, F64. */
double tl_round_to(infiniDtype_t dt, double d);
/* Load / store one element of dtype dt. */
double tl_load(infiniDtype_t dt, const void *p);
void tl_store(infiniDtype_t dt, void *p, double v);
/* Raw bits of one element (up to 8 bytes), zero-extended. */
uint64_t tl_bits(infiniDtype_t dt, const void *p);

/* Spacing of the dtype's representable values at |v| (subnormal spacing
 * below the smallest normal). */
double tl_ulp(infiniDtype_t dt, double v);
/* Smallest positive normal number of the dtype. */
double tl_min_normal(infiniDtype_t dt);
/* Distance in ulps between two values that are representable in dt
 * (counting steps in the ordered lattice; +0 and -0 are one point). */
double tl_ulp_distance(infiniDtype_t dt, double a, double b);

/* The poison written into every output element before a call: a signalling
 * NaN with a payload that no arithmetic produces, so "still poison" means
 * "never written" even where the expected value is NaN. */
uint64_t tl_poison_bits(infiniDtype_t dt);
int tl_is_poison(infiniDtype_t dt, const void *p);

/* ------------------------------------------------------------------ layouts */
enum {
    TL_L_PAD = 1u << 0,          /* padding between dims */
    TL_L_PERMUTE_LEAD = 1u << 1, /* memory order of the leading dims permuted */
    TL_L_PERMUTE_ALL = 1u << 2,  /* ... including the last dim */
    TL_L_LAST_STRIDED = 1u << 3, /* last dim stride 2 or 3 */
    TL_L_NEG_LEAD = 1u << 4,     /* negative strides on leading dims */
    TL_L_NEG_LAST = 1u << 5,     /* negative stride on the last dim */
    TL_L_ZERO_LEAD = 1u << 6,    /* stride 0 on leading dims (inputs only) */
};
/* Random non-overlapping (unless TL_L_ZERO_LEAD) strides for shape; each
 * flag is applied at random when allowed. */
void tl_make_strides(tl_rng *r, size_t ndim, const size_t *shape, unsigned flags, ptrdiff_t *strides);
void tl_contiguous_strides(size_t ndim, const size_t *shape, ptrdiff_t *strides);
/* Element offset of the linear (row-major) index of a view. */
ptrdiff_t tl_offset_of(size_t ndim, const size_t *shape, const ptrdiff_t *strides, size_t linear);
/* Step from one element to the next in linear order, without
 * tl_offset_of's divisions: idx (ndim zeros at element 0) and off (0 there)
 * become the next element's index and offset. */
static inline void tl_offset_next(size_t ndim, const size_t *shape, const ptrdiff_t *strides, size_t *idx,
                                  ptrdiff_t *off) {
    for (size_t d = ndim; d-- > 0;) {
        if (++idx[d] < shape[d]) {
            *off += strides[d];
            return;
        }
        idx[d] = 0;
        *off -= (ptrdiff_t)(shape[d] - 1) * strides[d];
    }
}
size_t tl_numel(size_t ndim, const size_t *shape);
/* Random leading dims (n of them) whose product is at most max_rows (each
 * dim >= 1). */
void tl_random_dims(tl_rng *r, size_t n, size_t *dims, size_t max_rows);
/* The odd sizes every reduced dimension is tested with. */
extern const size_t tl_odd_sizes[5]; /* 1, 3, 127, 4097, 65537 */
/* Shapes of the row operators' cases (add_rms_norm, layer_norm), rows of D
 * elements, the other dimensions from tl_random_dims within max_numel
 * elements. Directed: ndim given, and one row (3 without --quick) where
 * D >= 65537. Random: 1 to 5 dimensions, D one of the first four odd sizes
 * (40%) or 1 to 700, and 3% of the shapes with a row dimension 0; returns D. */
void tl_row_shape_directed(tl_rng *r, size_t ndim, size_t *shape, size_t D, size_t max_numel);
size_t tl_row_shape_random(tl_rng *r, size_t *ndim, size_t *shape, size_t max_numel);
/* "[2,3,4]" / "(s0,s1,s2)" into buf; returns buf. */
char *tl_fmt_dims(char *buf, size_t n, size_t ndim, const size_t *shape);
char *tl_fmt_strides(char *buf, size_t n, size_t ndim, const ptrdiff_t *strides);

/* ------------------------------------------------------------------ tensors */
#define TL_GUARD_BYTES 256

typedef struct {
    infiniDtype_t dtype;
    size_t esize;
    size_t ndim;
    size_t shape[TL_MAXDIM];
    ptrdiff_t strides[TL_MAXDIM];
    size_t numel;
    ptrdiff_t min_off, max_off; /* element offsets of the extent, rel. to base */
    size_t span;                /* elements between min_off and max_off */
    unsigned char *host;        /* guard | span*esize | guard */
    unsigned char *snap;        /* copy of host taken by tl_tensor_upload */
    unsigned char *inview;      /* one flag per span element */
    size_t bytes;               /* size of host */
    void *dev;                  /* device copy of host (nvidia) */
    infiniopTensorDescriptor_t desc;
} tl_tensor;

/* strides NULL: contiguous. Creates the tensor descriptor too (the
 * descriptor is created with the strides given, NULL included). Returns 0
 * on success; on failure reports it and returns -1. */
int tl_tensor_init(tl_tensor *t, infiniDtype_t dt, size_t ndim, const size_t *shape, const ptrdiff_t *strides);
/* Same, with front_pad extra padding elements before the extent, so that
 * element 0 is not 16-byte aligned (exercises scalar / unaligned paths). */
int tl_tensor_init_pad(tl_tensor *t, infiniDtype_t dt, size_t ndim, const size_t *shape, const ptrdiff_t *strides,
                       size_t front_pad);
void tl_tensor_free(tl_tensor *t);
/* Fill view elements with random values in [lo, hi) rounded to the dtype
 * and never zero; everything else (padding) with poison, guards with the
 * guard pattern. */
void tl_tensor_fill_random(tl_tensor *t, tl_rng *r, double lo, double hi);
/* Every view element = poison (padding and guards as above). */
void tl_tensor_poison(tl_tensor *t);
/* Host-side pointer of the element with linear index i of the view. */
void *tl_tensor_host_elem(const tl_tensor *t, size_t i);
double tl_tensor_get(const tl_tensor *t, size_t i);
void tl_tensor_set(tl_tensor *t, size_t i, double v);
/* Base pointer (element of index 0) for the active device. */
void *tl_tensor_ptr(const tl_tensor *t);
/* Host pointer of the element of index 0. */
void *tl_tensor_host_base(const tl_tensor *t);
/* Snapshot the host buffer; on nvidia copy it (guards included) to the
 * device. Call after filling, before the library call. */
void tl_tensor_upload(tl_tensor *t);
/* On nvidia copy the whole device buffer back to host (after
 * synchronisation). No-op on CPU. */
void tl_tensor_download(tl_tensor *t);
/* After a call: the guards and the padding (span elements not in the view)
 * must equal the snapshot; when !written the view must equal it too (an
 * input, or a failing call). Returns the number of bad bytes reported. */
size_t tl_tensor_check_untouched(const tl_tensor *t, const char *name, int written);
/* Every view element has been written (is not poison). Returns #bad. */
size_t tl_tensor_check_written(const tl_tensor *t, const char *name);

/* ------------------------------------------------------------------ checks */
/* Compare got against the float64 reference ref for an element of dtype dt.
 * tol32 is the allowed absolute error of the float32 (or float64) result
 * before it is rounded to dt. Rules:
 *  - ref NaN: got must be NaN; ref +-inf: got must equal it;
 *  - F32/F64: |got - ref| <= tol32;
 *  - F16/BF16: |got - ref| <= tol32 + 1 ulp of dt (at max(|ref|,|got|)).
 * Returns 1 when acceptable. */
int tl_close(infiniDtype_t dt, double got, double ref, double tol32);
/* Elementwise rule: F32/F64 within max_ulp ulp of ref rounded to dt (exact
 * values in the subnormal range: within the smallest normal); F16/BF16
 * within 1 ulp of ref rounded to dt. */
int tl_close_ulp(infiniDtype_t dt, double got, double ref, double max_ulp);

/* Check every element of t against ref[i] (row-major over t's shape) with
 * tl_close(t->dtype, got, ref[i], tol(i, ref[i], ctx)). A negative tolerance
 * demands exactly ref[i] (and +0.0 bits for a zero ref). Poison (never
 * written) is reported as such. Returns the number of bad elements; reports
 * the first few with their values. */
size_t tl_check_close(const tl_tensor *t, const char *name, const double *ref,
                      double (*tol)(size_t i, double ref, void *ctx), void *ctx);

/* Machine epsilon of float32 (2^-23) and float64. */
#define TL_EPS32 1.1920928955078125e-07
#define TL_EPS64 2.220446049250313e-16

/* ------------------------------------------------------------------ program */
extern infiniDevice_t tl_device;
extern int tl_quick;
extern uint64_t tl_seed;
extern infiniopHandle_t tl_handle;

/* Parse --device cpu|nvidia, --quick (or INFINIOP_TEST_QUICK=1), --seed N
 * (or INFINIOP_TEST_SEED). Sets the device, creates tl_handle, prints the
 * seed. On --device nvidia without a usable GPU prints "skipped: ..." and
 * exits 77. */
void tl_init(int argc, char **argv, const char *program);
/* Set the calling thread's device to tl_device (for worker threads). */
void tl_set_thread_device(void);
/* Synchronise the device (after library calls, before downloads). */
void tl_sync(void);
/* Print the summary, destroy the handle, return the exit code. */
int tl_finish(void);
/* True when the program runs under valgrind (RUNNING_ON_VALGRIND where
 * <valgrind/valgrind.h> is available, else INFINIOP_TEST_UNDER_VALGRIND=1,
 * which scripts/hardening.sh sets). valgrind's floating point is not the
 * hardware's: it runs x87 long double at 64-bit precision and does not
 * recognise its 80-bit infinities (isinfl), and it ignores MXCSR's FTZ/DAZ.
 * Checks of values computed that way are skipped under it, each saying so
 * (tl_skip_under_valgrind); memory checks still run. */
int tl_under_valgrind(void);
/* Under valgrind: print once per program that the checks named by what are
 * skipped, and return 1; else return 0. */
int tl_skip_under_valgrind(const char *what);

/* Case accounting: every check inside a case that fails marks the case
 * failed. Thread-safe; the case name is per thread. */
void tl_case_begin(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tl_case_end(void);
/* Report a failure of the current case (prints the case name first time). */
void tl_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Number of failures in the current case so far (this thread). */
size_t tl_case_failures(void);
/* Suppress the message (not the count) once this many have been printed
 * in the current case. */
#define TL_MAX_MESSAGES_PER_CASE 8

/* TL_CHECK(cond, fmt, ...): on failure report file:line and the message. */
#define TL_CHECK(cond, ...)                                \
    do {                                                   \
        if (!(cond)) tl_fail_at(__FILE__, __LINE__, __VA_ARGS__); \
    } while (0)
void tl_fail_at(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Expect an exact status. Returns 1 when equal. Prints the library's
 * message on mismatch. */
int tl_expect_status(infiniStatus_t got, infiniStatus_t want, const char *what, int line);
#define TL_EXPECT_STATUS(call, want) tl_expect_status((call), (want), #call, __LINE__)
/* Run a library call that must succeed. */
#define TL_OK(call) tl_expect_status((call), INFINI_STATUS_SUCCESS, #call, __LINE__)

double tl_now(void); /* seconds, monotonic */

#endif /* INFINIOP_TESTLIB_H */
