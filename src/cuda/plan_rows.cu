/*
 * cuda/plan_rows.cu - the row-wise launch plan (cuda/plan.h): its ordered
 * implementation list (row_impls below), each entry with its rule. Host
 * code only; it reads the device through infiniop_cuda_device_props
 * (cuda/device.cu), so tests/test_cuda_plan.cu links it against fake
 * devices and checks the rules without a GPU.
 */
#include "cuda/common.cuh"

/* Rows of up to WARP_MAX_COLS elements go one warp per row, WARP_ROWS rows
 * per block; longer rows one block per row, with about ITEMS_PER_THREAD
 * vectors per thread. The row is cached in shared memory (as float32)
 * between the passes when it fits the default 48 KB of a block (D <= 12032);
 * otherwise
 * each pass streams it from global memory (L2 holds recent rows). */
#define WARP_MAX_COLS 1024
#define WARP_ROWS 4
#define ITEMS_PER_THREAD 4
#define MIN_BLOCK 128
#define MAX_BLOCK INFINIOP_CUDA_ROW_MAX_BLOCK

/* The register path (cuda/rows.cuh), for rows of whole 16-byte vectors:
 * vecs = ncols / vec_elems vectors a row, weight and bias of any stride
 * (the one-element form: the same with elements; plan_reg).
 * "Latency-bound" is latency_bound's rule below: fewer rows than SMs, or
 * rows x vectors (and their bytes) within one thread each of the whole
 * GPU.
 *  - vecs <= 128 (latency-bound: vecs <= 32): `lanes` threads of a warp
 *    per row (the smallest power of two that holds the row in at most 4
 *    vectors a thread, 1 vector a thread when it can; 3 for rows of 65-96
 *    vectors, which 4 would hold with a quarter of the registers empty),
 *    blocks of 128 threads, halved while the grid would not give every SM
 *    two blocks (spread the rows); a SM keeps a block's warps resident
 *    together, so at the 80-90 registers a thread of the 4-vector kernels
 *    two 256-thread blocks (16 warps) fit where five of 128 (20) do
 *    (measured on an H200: 128 faster by 2-12% than 256, 64 slower on the
 *    short rows of many rows: more blocks to start; bench/NOTES.md);
 *    up to 256 vectors (8 a thread, a warp a row) where
 *    the operator has that kernel (INFINIOP_CUDA_REG_WARP8) and the shape
 *    is not latency-bound;
 *  - longer rows, one block each: 4 vectors a thread while that leaves at
 *    least 128 threads (2, then 1, otherwise) for throughput (the
 *    one-element form: 16 elements a thread at any block size where the
 *    row fills 3/4 of them, else 4); latency-bound
 *    (the memory system is idle) 1 vector a thread while that takes at
 *    most 512 threads, then 2, then 4;
 *  - rows of 2049-4096 vectors that fill the GPU (not latency-bound): one
 *    block each at 8 vectors a thread (up to 512 threads);
 *  - rows a block cannot hold (more than 512 x 4 vectors, latency-bound;
 *    more than 512 x 8 otherwise): a cluster of 2..8 blocks of up to 256
 *    threads x 4 vectors (Hopper and later), for fewer rows than SMs only;
 *  - longer still: off (the streaming kernel).
 * Every row length a block holds takes it, for every operator. With 2
 * blocks of 128-register threads a SM the load phase of one row is not
 * overlapped with the reduction and stores of the next, so the register
 * kernels earn long rows by reading each input once and less than the
 * streaming kernel (layer_norm reads w and b late; softmax skips the
 * masked part; add_rms_norm's kernel, with 8-10% fewer instructions since
 * session 14, measured faster at every length a block holds, where before
 * it was faster only up to 512 vectors: bf16 4096x14336 137 -> 116 us on
 * an H200). Measurements: bench/NOTES.md. */
#define RG_ROWS_CAP (1u << 20) /* blocks at most; kernels loop over further rows */

/* The planner's free parameters (plan.h). A release build uses these
 * defaults; a build with -DINFINIOP_CUDA_EXPERIMENTS=ON lets
 * bench/experiments/ override them through
 * infiniop_cuda_experiment_row_knobs, called at every plan, to benchmark other
 * variants without recompiling (scripts/gpu-variants.sh). */
static const infiniopCudaRowKnobs default_knobs = {1, 0, 0, true, true, false, -1, 0, 0, 0, false, 0, 0, 0, 0, 0, 0, false};

#ifdef INFINIOP_CUDA_EXPERIMENTS
/* read at every plan (this thread's copy), so that one process can time
 * the variants of a knob in turn, clearing the descriptor cache between
 * them */
static const infiniopCudaRowKnobs &knobs(void) {
    static thread_local infiniopCudaRowKnobs k;
    k = default_knobs;
    infiniop_cuda_experiment_row_knobs(&k);
    return k;
}
#else
static const infiniopCudaRowKnobs &knobs(void) { return default_knobs; }
#endif

bool infiniop_cuda_pdl(const infiniopCudaProps &p) { return knobs().pdl && p.cc_major >= 9; }

/* The capped instances' rule (rg_plan_cap, cuda/rows.cuh: the block form
 * at 4 vectors a thread, whose instances hold 72-112 registers; a capped
 * one is compiled for 72 or 64). A capped instance is taken where it holds
 * more blocks an SM than the uncapped one, spilling at most RG_CAP_SPILL
 * bytes a thread (a few registers' worth, stored and reloaded through L1
 * outside the loads' round trip: the measured gains below came with 12-28
 * bytes), and either
 *  - the uncapped instance leaves fewer than 20 resident warps an SM (under
 *    a third of Hopper's 64): then the capped one that holds the most
 *    blocks (between two that hold as many, the one of more registers, cap
 *    1: less spill). The long rows of many-row sets are where this holds:
 *    layer_norm bf16 8192x14336 (448 threads, 80 registers: one block, 14
 *    warps) 215 -> 187 us with the 64-register instance (two blocks);
 *    causal_softmax f32 8x512x4608 (288 threads, 76 registers: two blocks)
 *    takes three blocks at 72 registers without spilling, where the
 *    64-register instance spilled 12 bytes; at 128-256 threads the uncapped
 *    one already holds 24 or more warps, and capping them cost 4-6%
 *    (bench/NOTES.md, sessions 16-17, 20);
 *  - or, where the operator says a row's time is more than its bytes'
 *    (InfiniopCapQuery.slow_rows: a chain of round trips), the rows fill
 *    the last wave of blocks better. A row is one block's work, so a
 *    launch of R rows on S SMs at b blocks an SM runs in ceil(R / (S b))
 *    waves, the last one part-full, the SMs with no row left idle. Its
 *    wave efficiency is f / ceil(f), f = R / (S b). The capped instance of
 *    the best efficiency is taken where that is at least 1.25x the
 *    uncapped one's. add_rms_norm f16 512x7168 with a float32 weight of
 *    stride 2 (8 weight loads a vector, item by item in the output phase):
 *    224 threads at 77 registers hold 3 blocks an SM, 396 rows a wave, so
 *    the 512 rows take 2 waves, the second 29% full, and ncu counted the
 *    SMs active 62% of the kernel's 21 us; at 71 registers (cap 1) 4
 *    blocks, one wave: 18.9 -> 14.1 us. Measured on an H200 over the row
 *    cases of the sweep's seeds 0-40 and unnamed shapes (bench/NOTES.md,
 *    session 31): predicted gains of 1.28-1.7x ran 1.11-1.34x faster
 *    (add_rms_norm f16/f32 450x7168 and 596x5120 w:strided, f16 640x5120
 *    w:strided; causal_softmax f32 900x1700, 1000x2000, 1659x1660 and
 *    1710x1713, e.g. 6 -> 7 blocks of 128 threads), but for one at the
 *    64-register instance's 32 bytes of spill, level (causal_softmax f32
 *    34x1x8x4938 sliced, 1.00-1.025x); predicted gains of 1.11-1.12x ran
 *    0.93-1.08x, hence the 1.25. Streamed rows are left out:
 *    add_rms_norm with a broadcast weight (one value held, the kernel a
 *    pure stream) ran 1.03-1.09x slower at a predicted 1.12-1.5x (3x4x34x7168
 *    and 799x7168, f16 with a float32 weight): the bandwidth, not the
 *    waves, bounds it, and the last wave's few rows run at full speed.
 * Launches without capped instances, and any error of the queries, keep
 * the uncapped one. The experiment build's `cap` knob (plan.h) limits the
 * instances tried, or (4) keeps the first condition only. */
#define RG_CAP_SPILL 32
static double wave_efficiency(size_t rows, unsigned sms, int blocks) {
    const double f = (double)rows / ((double)sms * (double)blocks);
    return f / ceil(f);
}
static bool few_warps(const InfiniopCapQuery &c) { return (size_t)c.blocks[0] * c.threads < 20u * 32u; }
bool infiniop_cuda_cap_wanted(const InfiniopCapQuery &c) {
    const unsigned knob = knobs().cap;
    if (knob == 1 || c.blocks[0] <= 0 || c.rows == 0 || c.sms == 0) return false;
    /* (a wave efficiency is at most 1: past 0.8 no capped instance gains
     * 1.25x) */
    return few_warps(c) || (knob != 4 && c.slow_rows && 1.25 * wave_efficiency(c.rows, c.sms, c.blocks[0]) <= 1.0);
}
unsigned infiniop_cuda_cap_choice(const InfiniopCapQuery &c) {
    const unsigned knob = knobs().cap;
    if (!infiniop_cuda_cap_wanted(c)) return 0;
    const bool few = few_warps(c);
    const double e0 = wave_efficiency(c.rows, c.sms, c.blocks[0]);
    unsigned best = 0;
    int best_blocks = c.blocks[0];
    double best_e = 1.25 * e0;
    for (unsigned cap = 1; cap <= 2; ++cap) {
        if ((knob == 2 && cap != 1) || (knob == 3 && cap != 2)) continue;
        const int b = c.blocks[cap];
        if (b <= c.blocks[0] || c.spill[cap] > RG_CAP_SPILL) continue;
        if (few) {
            if (b > best_blocks) best = cap, best_blocks = b;
        } else if (knob != 4 && c.slow_rows) {
            const double e = wave_efficiency(c.rows, c.sms, b);
            if (e >= best_e && (best == 0 || e > best_e)) best = cap, best_e = e;
        }
    }
    return best;
}

/* What the rules of the implementation list read. */
struct RowCtx {
    const infiniopCudaProps &p;
    const InfiniopRowShape &s;
    const infiniopCudaRowKnobs &kn;
};

/* Latency-bound shapes: fewer rows than SMs (decode), or a call so small
 * that one thread an access (16-byte vectors, or elements in the
 * one-element form) fits the GPU at once (rows x accesses <= SMs x
 * resident threads an SM) and so does its input, 16 bytes a thread (rows
 * x input bytes <= SMs x resident threads x 16: all of it in flight in one
 * round trip). Most of the GPU then idles, and a row's time is its chain
 * of dependent round trips and instructions, not bandwidth: rows are
 * spread over more threads, every operand is loaded in the first round
 * trip, and no L2 prefetch is asked for. Measured on an H200
 * (bench/NOTES.md): add_rms_norm bf16 197x896 1.47x faster, 1000x896
 * 1.17x, layer_norm f16 197x768 1.60x; with inputs past the second bound
 * (add_rms_norm f32 32x31x896 permuted, 7.1 MB) 0.80x, hence that bound. */
/* Bytes of input a row: every input tensor (REG_2IN: two), element size
 * 16 / vec_elems. */
static size_t row_in_bytes(const InfiniopRowShape &s) {
    return s.ncols * (size_t)(16 / s.vec_elems) * (s.reg_flags & INFINIOP_CUDA_REG_2IN ? 2 : 1);
}
static bool latency_bound(const RowCtx &c, size_t acc) {
    const size_t sms = (size_t)c.p.sm_count, threads = sms * (size_t)c.p.max_threads_per_sm;
    return c.s.nrows < sms || (c.s.nrows * acc <= threads && c.s.nrows * row_in_bytes(c.s) <= threads * 16);
}

/* Blocks of t threads an SM holds at once when each thread takes regs
 * registers: by threads and by the register file (65536 32-bit registers
 * an SM on every architecture of compute capability 8.0 and later,
 * allocated to a warp in units of 256). */
static size_t rg_resident_blocks(const infiniopCudaProps &p, size_t t, size_t regs) {
    const size_t warp_regs = (32 * regs + 255) / 256 * 256, warps = (t + 31) / 32;
    const size_t by_threads = (size_t)p.max_threads_per_sm / t, by_regs = 65536 / (warp_regs * warps);
    return by_threads < by_regs ? by_threads : by_regs;
}

/* The register path's rule (the comment above RG_ROWS_CAP): true, and *q
 * filled, when it takes the shape. scalar: the one-element form (each
 * access one element instead of a 16-byte vector, for rows of unit column
 * stride that are not whole vectors or whose pointers are not aligned);
 * the same rules with `acc` = the row's accesses (elements) and items
 * from {1, 4, 16} rather than {1, 2, 4}, the warp form also 8 where the
 * operator has the 8-item warp kernel (INFINIOP_CUDA_REG_WARP8: softmax;
 * rows of 129-256 elements then fill 32 x 8 rather than half of 32 x 16,
 * 1.1-1.3x faster there, while add_rms_norm bf16 1058x256 ran 1.3x slower
 * at 8 than at 16: bench/NOTES.md) (a thread holds at most 16 elements, 32
 * or 64 bytes an operand: no more registers than 4 vectors), and the byte
 * thresholds (long rows) counted in 16-byte vectors as before. */
static bool plan_reg(const RowCtx &c, bool scalar, infiniopCudaRowLaunch *q, bool peel = false) {
    const infiniopCudaProps &p = c.p;
    const size_t nrows = c.s.nrows, ncols = c.s.ncols;
    const int vec_elems = c.s.vec_elems;
    const unsigned reg_flags = c.s.reg_flags;
    if (nrows == 0 || vec_elems <= 1 || c.kn.policy == 0) return false;
    /* parameters (weight, bias) of any stride: rg_load_param */
    if (scalar) {
        /* Rows of consecutive elements; rows of another column stride
         * (a transposed input: a group's lanes then read one element of
         * each 32-byte sector, the neighbouring rows' groups the rest,
         * through L2) only where the shape is latency-bound: all the
         * row's loads in one round trip matter more there than the
         * sectors' use, which the streaming kernel (one element at a time,
         * a pass per statistic) does not improve. */
        if (!c.s.unit && !latency_bound(c, ncols)) return false;
    } else if (!peel) {
        if (!c.s.vec) return false; /* 16-byte layouts */
        if (ncols % (size_t)vec_elems != 0) return false;
    }
    /* vecs: the row's 16-byte vectors (the rules' measure of length;
     * peel: the whole aligned vectors of a row's body, at most its length
     * in vectors rounded down, the rest edge elements); acc: its accesses
     * (vectors, or elements in the scalar form) */
    const size_t vecs = peel ? ncols / (size_t)vec_elems : (ncols + (size_t)vec_elems - 1) / (size_t)vec_elems;
    const size_t acc = scalar ? ncols : vecs;
    static const size_t its_vec[3] = {1, 2, 4}, its_scalar[3] = {1, 4, 16};
    const size_t *its = scalar ? its_scalar : its_vec;
    const size_t sms = (size_t)p.sm_count;
    const infiniopCudaRowKnobs &kn = c.kn;
    const int policy = kn.policy;
    const bool lat = latency_bound(c, acc);
    /* A warp per row up to 8 vectors a thread when the operator has that
     * kernel and the shape is not latency-bound (latency-bound: blocks
     * spread the rows); up to 16 elements a thread in the scalar form. */
    const size_t warp_acc =
        scalar ? 32 * its[2] : (reg_flags & INFINIOP_CUDA_REG_WARP8) && !lat && kn.warp8 ? 256 : 128;
    /* Latency-bound: a row of more than 32 accesses is spread over a
     * block, an access a thread, rather than held by one warp, whose long
     * dependent chain of instructions would then be the whole latency.
     * The peeled form only where the shape is latency-bound counted in
     * elements too (as the entry before it, row_impls): softmax f32
     * 16x257x257, 4112 rows of 64 vectors, is latency-bound in vectors
     * only, and spread at a vector a thread it ran 5.42 us on an H200,
     * the peeled streaming kernel's warp a row 4.64 (bench/NOTES.md). */
    const bool spread = (lat || policy == 4) && acc > 32 && (!peel || latency_bound(c, ncols));
    infiniopCudaRowLaunch r = {};
    r.scalar = scalar;
    /* rows of other column strides: the block and cluster forms (their
     * own kernel instances; rg_at) */
    r.strided = scalar && !c.s.unit;
    r.param_vec = !scalar && c.s.param_vec; /* the vector form's weight and bias by vectors */
    size_t blocks;
    /* The warp form: `lanes` threads a row, the smallest power of two
     * (up to 32) that holds the row in at most `items` accesses each. */
    unsigned lanes = 1;
    while (lanes < 32 && lanes < acc) lanes *= 2;
    size_t sub_items = (acc + lanes - 1) / lanes;
    if (scalar) {
        const bool has8 = reg_flags & INFINIOP_CUDA_REG_WARP8;
        sub_items = sub_items <= 1 ? 1 : sub_items <= 4 ? 4 : sub_items <= 8 && has8 ? 8 : 16;
    } else
        sub_items = sub_items <= 4 ? sub_items : 8; /* (1, 2, 3, 4: rg_dispatch) */
    /* It unrolls all the items of every lane, held or not: in the
     * one-element form, with rows that fill the GPU (issue-bound rather
     * than latency-bound), a row must fill at least half of what the warp
     * holds, or it keeps the streaming kernel (measured: softmax rows of
     * 197 elements, 16 a lane, ran 1.5x slower than the warp streaming
     * kernel; rows of 511, 1.2x faster: bench/NOTES.md). */
    if (scalar && !lat && kn.scalar != 3 && acc <= warp_acc && acc * 2 < lanes * sub_items) return false;
    if (acc <= warp_acc && !spread && !r.strided) {
        const size_t items = sub_items;
        unsigned threads = kn.sub_threads ? kn.sub_threads : 128;
        /* the grid: infiniop_cuda_spread_threads' rule (cuda/common.cuh;
         * rows that fill the GPU keep 128, their grid far past two blocks
         * an SM). The latency-bound shapes whose grid it moved from
         * "blocks halved until two an SM" to one block an SM (rows x lanes
         * of 4225-16896 threads on 132 SMs) ran 0.93-1.01x the time,
         * geomean 0.971 (H200, the 21 row cases of the sweep's seeds 0-11,
         * outputs bit for bit the same: add_rms_norm f32 139x128 1.23 ->
         * 1.14 us, bf16 8x40x128 1.38 -> 1.33; bench/NOTES.md, session
         * 28). Smaller calls keep warp-sized blocks (the rule gives them
         * 32): one 128-thread block for all the rows of calls under 257
         * threads measured level (17 cases, geomean 1.000, bf16/f32 7x128
         * w:strided 1.18 -> 1.26 us). */
        threads = infiniop_cuda_spread_threads(nrows * lanes, sms, threads, kn.sub_spread == 1 ? 2 * sms : 0);
        r.kernel = INFINIOP_CUDA_ROW_REG_SUB;
        r.items = (unsigned)items;
        r.lanes = lanes;
        r.cluster = 1;
        r.threads = threads;
        blocks = (nrows * lanes + threads - 1) / threads;
        if (kn.sub_blocks && blocks > kn.sub_blocks * sms) blocks = kn.sub_blocks * sms;
    } else {
        const bool latency = lat || policy == 3 || policy == 4;
        size_t items = 0, threads = 0;
        const size_t forced = kn.items && !scalar ? kn.items : 0;
        const size_t kc = kn.cluster && !scalar && p.cc_major >= 9 && nrows < sms ? kn.cluster : 1;
        for (int i = 0; i < 3; ++i) {
            size_t it = forced ? forced : latency ? its[i] : its[2 - i];
            size_t t = ((acc + it * kc - 1) / (it * kc) + 31) / 32 * 32;
            /* blocks of at most 512 threads (RG_BOUNDS, rows.cuh: the
             * bound at 2 or more items; at one item B56's 576 in the
             * norms' 2-byte forms. Decode rows of more than 512 vectors
             * then take 2 vectors a thread: a shorter barrier tree and
             * reduction than blocks of 1024) */
            const size_t tmax = 512;
            if (t > tmax) continue;
            /* Rows that fill the GPU: at least 128 threads a row in the
             * vector form. The one-element form takes 16 elements a
             * thread at any block size (rows of 513-1536 elements: 2-3
             * warps) where the row fills at least 3/4 of them (the
             * unrolled items of a thread are all issued, held or not),
             * else 4 a thread. At 4 a thread (128-384 threads) each row
             * paid a block-wide reduction over 4-12 warps and ran 3x the
             * instructions of a warp-a-row kernel (ncu: softmax bf16
             * 2x369x963 permuted, 2.35 M against Triton's 0.76 M); 16 a
             * thread measured 1.1-1.2x faster at rows filling 83-97% of
             * them (softmax bf16 2x369x963 permuted 4.97 -> 4.04 us,
             * 1x994x994 sliced 4.42 -> 3.71, add_rms_norm bf16 4097x1023
             * 16.6 -> 14.6, f16 1883x1280 sliced 10.7 -> 9.5) and 1.08x
             * slower at 62% (softmax bf16 6x637x637 sliced 8.78 -> 9.50;
             * H200, bench/NOTES.md, session 25). */
            if (!latency && t < 128 && it > 1 && (!scalar || acc * 4 < t * it * 3)) continue;
            /* Latency-bound rows, more of them than SMs, in the vector
             * form with vector parameters: one vector a thread only where
             * every row's block is resident at once, counted with the
             * registers its instances may take (64 a thread: the launch
             * bound of those without B56, RG_BOUNDS) out of an SM's 65536
             * (compute capability 8.0 and later); else 2 a thread, half
             * the threads. layer_norm f32 1132x768: 192 threads of up to
             * 64 registers, 5 blocks an SM, 1132 rows in 1.7 waves; at 2
             * a thread, one wave. H200, the 39 row cases of the sweep's
             * seeds 0-40 and unnamed shapes that this moves: geomean
             * 0.865, 0.70-1.14 (causal_softmax f16 418x3393 5.14 -> 3.59
             * us, layer_norm f32 1132x768 5.83 -> 4.74, add_rms_norm f16
             * 272x3584 4.70 -> 3.95), while rows whose one-vector blocks
             * fit (bf16 197x896, 1000x896) ran 1.04-1.12x slower at 2.
             * Not with element-wise parameters (a strided or broadcast
             * weight): at 2 a thread those load late, and the extra round
             * trip cost more (add_rms_norm bf16 4x211x1280 w:bcast 1.14x,
             * layer_norm f32 2129x256 w:bcast 1.09x; bench/NOTES.md,
             * session 29). resident_off (an experiment's knob): one vector
             * a thread regardless, as before. */
            if (lat && !scalar && c.s.param_vec && !forced && kc == 1 && it == 1 && nrows > sms && !kn.resident_off &&
                nrows > sms * rg_resident_blocks(p, t, 64))
                continue;
            items = it, threads = t;
            break;
        }
        /* Rows a block holds only at 8 vectors a thread (2049-4096 vectors:
         * float32 rows of 8193-16384 elements, 2-byte rows of 16385-32768),
         * where the rows fill the GPU: 8 vectors a thread, at most 512
         * threads, the vector form only. The streaming kernel reads such a
         * row twice (its float32 copy does not fit a block's 48 KB of shared
         * memory) and ran them at 62-77% of copy (H200, add_rms_norm f32
         * 1000x14336, layer_norm f32 85x3x14336); this is the same one read
         * and one write as the 4-vector block form, which runs rows of up to
         * 2048 vectors at 96-100% (bench/NOTES.md, session 21). */
        if (!items && !scalar && !peel && !latency && !forced && kc == 1) {
            const size_t t = ((acc + 8 - 1) / 8 + 31) / 32 * 32;
            if (t <= 512) items = 8, threads = t;
        }
        unsigned cl = (unsigned)kc;
        /* A few decode rows a block would hold only at 4 vectors a thread
         * (1024 < vecs <= 2048): a cluster of 8 blocks at 1 vector a
         * thread instead (Hopper; every cluster resident at once). The
         * shorter per-thread chain outweighs the cluster's barrier there
         * (H200, add_rms_norm / layer_norm bf16 1x14336: 3.32 / 3.74 us ->
         * 2.49 / 3.03), not at 2 vectors a thread (1x7168: 2.23 / 2.68 ->
         * 2.21 / 2.81) nor below (1x4096: +0.3-0.5 us): bench/NOTES.md. */
        if (!scalar && latency && items == its[2] && kc == 1 && !forced && p.cc_major >= 9 && nrows * 8 <= sms &&
            (acc + 8 - 1) / 8 <= 512) {
            items = 1, threads = ((acc + 8 - 1) / 8 + 31) / 32 * 32, cl = 8;
        }
        if (!items) { /* a cluster: up to 8 blocks of its[2] accesses a thread */
            if (p.cc_major < 9) return false;
            if (policy == 1 && nrows >= sms) return false; /* clusters lost to streaming with many rows */
            const size_t per = 256 * its[2]; /* a block of 256 threads */
            size_t cn = (acc + per - 1) / per;
            if (cn > 8) cn = 8;
            size_t t = ((acc + its[2] * cn - 1) / (its[2] * cn) + 31) / 32 * 32;
            if (t > 512) return false;
            items = its[2], threads = t, cl = (unsigned)cn;
        }
        r.kernel = cl > 1 ? INFINIOP_CUDA_ROW_REG_CLUSTER : INFINIOP_CUDA_ROW_REG_BLOCK;
        r.items = (unsigned)items;
        r.lanes = 0;
        r.cluster = cl;
        r.threads = (unsigned)threads;
        blocks = nrows;
    }
    /* (the peeled form has the warp and block forms, and a group of at
     * least 2V - 2 threads: one for each edge element) */
    if (peel && (r.kernel == INFINIOP_CUDA_ROW_REG_CLUSTER ||
                 (r.kernel == INFINIOP_CUDA_ROW_REG_SUB && r.lanes < 2 * (unsigned)vec_elems - 2)))
        return false;
    r.peel = peel;
    if (blocks > RG_ROWS_CAP) blocks = RG_ROWS_CAP;
    r.grid = (unsigned)(blocks * (r.lanes ? 1 : r.cluster));
    r.early = lat || (kn.early && !(r.kernel == INFINIOP_CUDA_ROW_REG_BLOCK && r.items == 8)); /* (8 vectors a thread: late loads only) */
    /* Rows that fill the GPU: each group asks L2 for the input of the row
     * an eighth of L2 ahead, counting every input (REG_2IN: two). It adds
     * requests in flight without registers; a quarter of L2 or more ahead
     * evicts rows before they are used (bench/NOTES.md). */
    size_t pf = 0;
    if (!lat && p.l2_bytes) {
        pf = p.l2_bytes / 8 / row_in_bytes(c.s);
        if (pf < 1) pf = 1;
        if (pf > 1u << 20) pf = 1u << 20;
    }
    if (kn.prefetch >= 0) pf = (size_t)kn.prefetch;
    r.prefetch = (unsigned)pf;
    *q = r;
    return true;
}

/* The streaming kernels' shape (the comment above WARP_MAX_COLS): a warp
 * per row for rows of up to WARP_MAX_COLS elements, else a block per row;
 * the same launch with and without vectors. */
static infiniopCudaRowLaunch plan_stream(const RowCtx &c, bool warp, bool vec, bool peel = false) {
    const infiniopCudaProps &p = c.p;
    const size_t nrows = c.s.nrows, ncols = c.s.ncols;
    infiniopCudaRowLaunch q = {};
    q.cluster = 1;
    size_t rows_per_block;
    if (warp) {
        q.kernel = peel  ? INFINIOP_CUDA_ROW_STREAM_WARP_PEEL
                   : vec ? INFINIOP_CUDA_ROW_STREAM_WARP_VEC
                         : INFINIOP_CUDA_ROW_STREAM_WARP;
        rows_per_block = c.kn.warp_rows ? c.kn.warp_rows : WARP_ROWS;
        q.threads = 32 * (unsigned)rows_per_block;
        /* (PEEL: each row's slice 16-byte aligned) */
        q.smem = rows_per_block * (peel ? (ncols + 3) & ~(size_t)3 : ncols) * sizeof(float);
    } else {
        q.kernel = peel  ? INFINIOP_CUDA_ROW_STREAM_BLOCK_PEEL
                   : vec ? INFINIOP_CUDA_ROW_STREAM_BLOCK_VEC
                         : INFINIOP_CUDA_ROW_STREAM_BLOCK;
        size_t vecs = (ncols + (size_t)c.s.vec_elems - 1) / (size_t)c.s.vec_elems;
        size_t t = (vecs + ITEMS_PER_THREAD - 1) / ITEMS_PER_THREAD;
        t = (t + 31) / 32 * 32;
        if (t < MIN_BLOCK) t = MIN_BLOCK;
        if (t > MAX_BLOCK) t = MAX_BLOCK;
        q.threads = (unsigned)t;
        rows_per_block = 1;
        q.smem = ncols * sizeof(float);
    }
    /* The block's static shared memory (the reduction scratch) counts
     * against the same limit: keep 1 KB for it. */
    if (q.smem + 1024 > p.smem_per_block) q.smem = 0;
    size_t blocks = (nrows + rows_per_block - 1) / rows_per_block;
    size_t resident = (size_t)p.sm_count *
                      (size_t)(p.max_threads_per_sm / (int)q.threads > 0 ? p.max_threads_per_sm / (int)q.threads : 1);
    size_t cap = resident * 8; /* enough waves to balance; more rows loop inside the kernel */
    if (c.kn.stream_blocks) cap = c.kn.stream_blocks;
    if (blocks > cap) blocks = cap;
    if (blocks < 1) blocks = 1;
    q.grid = (unsigned)blocks;
    q.param_vec = vec && c.s.param_vec;
    return q;
}

/* TILE_T (transposed inputs that fill the GPU; the kernel: the operator's
 * cuda.cu). Blocks of 256 threads, at most 64 registers a thread (the
 * kernel's launch bounds: 4 blocks an SM, `slots` = 4 x SMs).
 *  - Tile rows tr (a power of two, 2..32, at most the run rounded up to a
 *    power of two): the fewest L2 sector requests a column (tiles a run x
 *    sectors a tile's column: ceil(tr x element size / 32)), then the
 *    fewest idle rows (tiles a run x tr - run), then the smaller tr (more
 *    tiles: fewer blocks a tile needed). E.g. bf16 runs of 4096: 16; of
 *    39: 16 (3 sectors a column, 9 idle rows); of 2: 2; f32 runs of 1000: 8.
 *  - Blocks a tile cs (a cluster, 1..8): the most that keep every tile in
 *    one wave of the slots (slots / tiles), 1 when the tiles fill the
 *    slots, and at most D / 256: a block keeps a column for each of its
 *    threads in the output phase. (Measured on an H200, bench/NOTES.md:
 *    bf16 4096x768 transposed takes 17.3 us at 1 or 2 blocks a tile of 32
 *    rows, 23.0 at 4 (192 columns a block), 33.4 at 8; runs of 2 x 13284
 *    columns, 93 tiles: 23.9 us at 1, 2 or 8 blocks, 19.4-20.3 at 5.) More
 *    while the block's slice of the tile exceeds the shared memory a block
 *    gets without opt-in (48 KB) less the kernel's own 10 KB; at 8, fewer
 *    tile rows, down to a sector's worth or the run; beyond that no TILE_T
 *    (rows too long for it).
 *  - Grid: every tile, at most 4 waves of the slots (blocks loop over
 *    further tiles). */
#define TILE_THREADS 256
#define TILE_BLOCKS_SM 4
#define TILE_STATIC_SMEM (10u << 10)
static bool plan_tile(const RowCtx &c, infiniopCudaRowLaunch *q) {
    const size_t run = c.s.tile_run, nrows = c.s.nrows, D = c.s.ncols;
    if (!run || c.s.unit || nrows == 0 || nrows % run != 0 || D == 0) return false;
    if (latency_bound(c, D)) return false; /* the strided register path */
    if (c.p.cc_major < 9 || c.kn.tile_off) return false; /* clusters */
    const size_t es = 16 / (size_t)c.s.vec_elems;
    if (c.p.smem_per_block <= TILE_STATIC_SMEM) return false;
    const size_t smem_max = c.p.smem_per_block - TILE_STATIC_SMEM;
    size_t tr = 0, best_sec = 0, best_idle = 0;
    for (size_t r = 2; r <= 32 && r / 2 < run; r *= 2) {
        const size_t tiles = (run + r - 1) / r, sec = tiles * ((r * es + 31) / 32), idle = tiles * r - run;
        if (!tr || sec < best_sec || (sec == best_sec && idle < best_idle)) tr = r, best_sec = sec, best_idle = idle;
    }
    if (c.kn.tile_rows) tr = c.kn.tile_rows;
    size_t min_tr = 2; /* a sector a column, or the whole run */
    while (min_tr * es < 32 && min_tr < run) min_tr *= 2;
    const size_t slots = (size_t)c.p.sm_count * TILE_BLOCKS_SM;
    size_t ntiles = nrows / run * ((run + tr - 1) / tr);
    size_t cs = ntiles >= slots ? 1 : slots / ntiles;
    if (cs > 8) cs = 8;
    if (cs > D / 256) cs = D / 256 ? D / 256 : 1;
    if (c.kn.tile_cluster) cs = c.kn.tile_cluster;
    for (;;) {
        const size_t W = (D + cs - 1) / cs;
        const unsigned pitch = infiniop_tile_pitch((unsigned)W, (unsigned)tr, es);
        const size_t smem = tr * pitch * es;
        if (smem <= smem_max) {
            infiniopCudaRowLaunch r = {};
            r.kernel = INFINIOP_CUDA_ROW_TILE_T;
            r.threads = TILE_THREADS;
            r.cluster = (unsigned)cs;
            r.tile_rows = (unsigned)tr;
            r.tile_cols = (unsigned)W;
            r.tile_pitch = pitch;
            r.tile_run = run;
            r.smem = smem;
            const size_t cap = 4 * slots / cs;
            r.grid = (unsigned)((ntiles < cap ? ntiles : cap) * cs);
            *q = r;
            return true;
        }
        if (cs < 8) ++cs;
        else if (tr > min_tr) tr /= 2, ntiles = nrows / run * ((run + tr - 1) / tr);
        else return false;
    }
}

/* The implementation list: tried in order, the first whose rule holds
 * runs. `vec`: 16-byte vectors allowed (the aligned launch of a layout
 * that allows them); `peel`: the PEEL kernels allowed (the aligned launch
 * of a layout that allows them but not whole-row vectors); the unaligned
 * launch runs the list with both false. */
struct RowImpl {
    const char *what;
    bool (*rule)(const RowCtx &c, bool vec, bool peel, infiniopCudaRowLaunch *q);
};
static const RowImpl row_impls[] = {
    {"register path: 16-byte layout or (peel, the warp and block forms) a peelable one (a PEEL layout, or "
     "unit column strides where the operator peels each row by itself: peel_any) that is not latency-bound "
     "with rows of at most 512 elements, and plan_reg's rule",
     [](const RowCtx &c, bool vec, bool peel, infiniopCudaRowLaunch *q) {
         /* A peelable layout that is latency-bound counted in elements
          * (the one-element form's accesses), with rows the one-element
          * form spreads at one element a thread (at most 512), takes that
          * form (the entry below): the peeled form's lanes hold 8 elements
          * each in the row's dependent chain (H200: softmax f16 8x1x197
          * 1.40 us against 1.80 peeled, 197x197 1.70 against 2.10), while
          * longer decode rows, 16 elements a thread in the one-element
          * form, ran faster peeled (f16 12x1x4097 2.63 -> 2.02;
          * bench/NOTES.md). */
         const bool rp = peel || (c.s.peel_any && c.s.unit && c.s.vec_elems > 1);
         if (rp && !vec && c.s.ncols <= 512 && latency_bound(c, c.s.ncols)) return false;
         return (vec || rp) && plan_reg(c, false, q, rp && !vec);
     }},
    {"stream-warp-vec16: 16-byte layout, rows of up to WARP_MAX_COLS elements",
     [](const RowCtx &c, bool vec, bool, infiniopCudaRowLaunch *q) {
         if (!vec || c.s.ncols > WARP_MAX_COLS) return false;
         *q = plan_stream(c, true, true);
         return true;
     }},
    {"stream-block-vec16: 16-byte layout",
     [](const RowCtx &c, bool vec, bool, infiniopCudaRowLaunch *q) {
         if (!vec) return false;
         *q = plan_stream(c, false, true);
         return true;
     }},
    {"register path, one element an access: unit column strides (other strides: latency-bound shapes), "
     "plan_reg's rule, and (where the peel is allowed) latency-bound shapes",
     [](const RowCtx &c, bool, bool peel, infiniopCudaRowLaunch *q) {
         /* Rows that fill the GPU and allow the peel take it (16-byte
          * vectors for their body); fewer rows than SMs are latency bound,
          * and the register path reads the row in one round trip. */
         const int sk = c.kn.scalar;
         if (sk == 1 || ((peel || sk == 2) && sk != 3 && !latency_bound(c, c.s.ncols))) return false;
         return plan_reg(c, true, q);
     }},
    {"tile-t: a transposed input (innermost row stride 1, column stride not), Hopper or later, not "
     "latency-bound, a block's slice of the tile within shared memory (plan_tile)",
     [](const RowCtx &c, bool, bool, infiniopCudaRowLaunch *q) { return plan_tile(c, q); }},
    {"stream-warp-peel16: peelable layout, rows of up to WARP_MAX_COLS elements",
     [](const RowCtx &c, bool, bool peel, infiniopCudaRowLaunch *q) {
         if (!peel || c.s.ncols > WARP_MAX_COLS) return false;
         *q = plan_stream(c, true, false, true);
         return true;
     }},
    {"stream-block-peel16: peelable layout",
     [](const RowCtx &c, bool, bool peel, infiniopCudaRowLaunch *q) {
         if (!peel) return false;
         *q = plan_stream(c, false, false, true);
         return true;
     }},
    {"stream-warp: rows of up to WARP_MAX_COLS elements",
     [](const RowCtx &c, bool, bool, infiniopCudaRowLaunch *q) {
         if (c.s.ncols > WARP_MAX_COLS) return false;
         *q = plan_stream(c, true, false);
         return true;
     }},
    {"stream-block: anything", [](const RowCtx &c, bool, bool, infiniopCudaRowLaunch *q) {
         *q = plan_stream(c, false, false);
         return true;
     }},
};

static infiniopCudaRowLaunch choose_row(const RowCtx &c, bool vec, bool peel) {
    infiniopCudaRowLaunch q = {};
    for (const RowImpl &impl : row_impls)
        if (impl.rule(c, vec, peel, &q)) break;
    return q;
}

infiniStatus_t infiniop_cuda_plan_rows(int device, const InfiniopRowShape &s, infiniopCudaRowPlan *plan) {
    infiniopCudaProps p;
    infiniStatus_t st = infiniop_cuda_device_props(device, &p);
    if (st != INFINI_STATUS_SUCCESS) return st; /* the message names the device */
    const RowCtx c = {p, s, knobs()};
    infiniopCudaRowPlan q = {};
    /* (a layout of whole-row vectors takes them, not the peel) */
    const bool peel = s.peel && !s.vec;
    q.aligned = choose_row(c, s.vec, peel);
    q.unaligned = s.vec || peel ? choose_row(c, false, false) : q.aligned;
    /* (the peeled register form of a peel_any operator runs at any
     * pointers: the first entry offers it to the unaligned launch too) */
    q.same16 = q.aligned.kernel == INFINIOP_CUDA_ROW_STREAM_WARP_PEEL ||
               q.aligned.kernel == INFINIOP_CUDA_ROW_STREAM_BLOCK_PEEL || (q.aligned.peel && !s.peel_any);
    q.pdl = infiniop_cuda_pdl(p);
    *plan = q;
    return INFINI_STATUS_SUCCESS;
}
