/* test_cuda_elt_plan.cu - the CUDA elementwise planner's rules
 * (infiniop_unary_cuda_plan, src/ops/unary/cuda.cu), on fake devices: no
 * GPU is needed (label cpu; built where CUDA is; the file's kernels are
 * compiled in but never launched). For named layouts the kernel and the
 * launch shape the plan's rules give (docs/PERFORMANCE.md, "Elementwise
 * plan"); over a grid of layouts, invariants: blocks the kernels' launch
 * bounds allow, grids that cover every element, rows a thread only where
 * the rule allows them, whole warps, and tensors that two blocks hold
 * left unspread. */
#include "cuda_plan_fake.h"
#include "ops/unary/unary.h"

#include <string.h>

/* cuda/device.cu's launch-error mapping: referenced by the run call,
 * which this test never makes. */
infiniStatus_t infiniop_cuda_launch_status(const char *op, cudaError_t err) {
    (void)op, (void)err;
    return INFINI_STATUS_INTERNAL_ERROR;
}

/* A folded layout (the caller gives it already coalesced): shape, the
 * output's and the input's strides in elements. */
static infiniopCudaEltPlan plan(infiniDtype_t dt, int ndim, const size_t *shape, const ptrdiff_t *os,
                                const ptrdiff_t *is) {
    infiniopUnaryInfo info;
    memset(&info, 0, sizeof info);
    info.kind = INFINIOP_UNARY_SIGMOID;
    info.dtype = dt;
    infiniopEltLayout &L = info.layout;
    L.ndim = ndim;
    L.n = 1;
    for (int d = 0; d < ndim; ++d) {
        L.shape[d] = shape[d];
        L.out_stride[d] = os[d];
        L.in_stride[d] = is[d];
        L.n *= shape[d];
    }
    /* the output one dense run (row-major), as infiniop_elt_layout_init says */
    bool oc = true;
    ptrdiff_t expect = 1;
    for (int d = ndim - 1; d >= 0; --d) {
        if (os[d] != expect) oc = false;
        expect *= (ptrdiff_t)shape[d];
    }
    L.out_contiguous = oc;
    L.contiguous = ndim == 1 && os[0] == 1 && is[0] == 1;
    infiniStatus_t st = infiniop_unary_cuda_plan(&info, 0);
    CHECK(st == INFINI_STATUS_SUCCESS, "status %d", (int)st);
    return info.cuda;
}

/* A P x Q output from the transposed input (unit stride along the P): TRANSPOSE_VEC with
 * `threads` threads, `wp` warps along p and a grid of gx x gy blocks. */
static void check_tv(infiniDtype_t dt, size_t P, size_t Q, unsigned threads, unsigned wp, unsigned gx, unsigned gy) {
    const size_t sh[2] = {P, Q};
    const ptrdiff_t os[2] = {(ptrdiff_t)Q, 1}, is[2] = {1, (ptrdiff_t)P};
    const infiniopCudaEltPlan p = plan(dt, 2, sh, os, is);
    const infiniopCudaEltLaunch &l = p.aligned;
    CHECK(l.kernel == INFINIOP_CUDA_ELT_TRANSPOSE_VEC && l.threads == threads && l.tile_wp == wp &&
              l.grid[0] == gx && l.grid[1] == gy,
          "%zux%zu: kernel %d threads %u wp %u grid %u,%u", P, Q, (int)l.kernel, l.threads, l.tile_wp, l.grid[0],
          l.grid[1]);
}

/* A ROWS launch shape, field by field. */
typedef struct {
    unsigned vec, items, lanes, threads, rows, gx, gy;
} RowsShape;
static void expect_rows(const char *what, const infiniopCudaEltLaunch &l, const RowsShape &w) {
    CHECK(l.kernel == INFINIOP_CUDA_ELT_ROWS && l.vec == w.vec && l.items == w.items && l.lanes == w.lanes &&
              l.threads == w.threads && l.rows == w.rows && l.grid[0] == w.gx && l.grid[1] == w.gy,
          "%s: kernel %d vec %u items %u lanes %u threads %u rows %u grid %u,%u", what, (int)l.kernel, l.vec, l.items,
          l.lanes, l.threads, l.rows, l.grid[0], l.grid[1]);
}

/* ------------------------------------------------------------ named layouts */
static void named_cases(void) {
    g_dev = H100;
    {   /* sigmoid f64 1567x75, input broadcast along the rows: a thread a
         * column (75 lanes, no idle ones), 3 rows a block, the value
         * computed once for R = 3 rows a thread */
        const size_t sh[2] = {1567, 75};
        const ptrdiff_t os[2] = {75, 1}, is[2] = {0, 1};
        infiniopCudaEltPlan P = plan(INFINI_DTYPE_F64, 2, sh, os, is);
        const infiniopCudaEltLaunch &l = P.aligned;
        CHECK(l.kernel == INFINIOP_CUDA_ELT_ROWS && l.lanes == 75 && l.threads == 225 && l.rows == 3 &&
                  l.grid[1] == 175 && l.items == 1,
              "kernel %d lanes %u threads %u rows %u grid %u,%u", (int)l.kernel, l.lanes, l.threads, l.rows,
              l.grid[0], l.grid[1]);
    }
    {   /* the same with 2-byte elements: R stays 1 (the formula is cheap) */
        const size_t sh[2] = {2080, 18};
        const ptrdiff_t os[2] = {18, 1}, is[2] = {0, 1};
        infiniopCudaEltPlan P = plan(INFINI_DTYPE_BF16, 2, sh, os, is);
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_ROWS && P.aligned.rows == 1, "kernel %d rows %u",
              (int)P.aligned.kernel, P.aligned.rows);
    }
    {   /* f32 581x19 with the last dimension broadcast (input element by
         * element): 19 lanes, 8 rows a block in 73 blocks (the most blocks
         * that give every SM one at the most), not 2 rows in 291 blocks */
        const size_t sh[2] = {581, 19};
        const ptrdiff_t os[2] = {19, 1}, is[2] = {1, 0};
        infiniopCudaEltPlan P = plan(INFINI_DTYPE_F32, 2, sh, os, is);
        const infiniopCudaEltLaunch &l = P.aligned;
        CHECK(l.kernel == INFINIOP_CUDA_ELT_ROWS && l.lanes == 19 && l.threads == 152 && l.rows == 1 &&
                  l.grid[1] == 73,
              "kernel %d lanes %u threads %u rows %u grid.y %u", (int)l.kernel, l.lanes, l.threads, l.rows, l.grid[1]);
    }
    {   /* broadcast inputs under ROWS narrower than a vector: GATHER where a warp access's
         * row segment (lanes x width) is under a 32-byte sector (bf16 317x7x113x27 with the last
         * dimension broadcast: 2 lanes of 16 elements a row, 4 bytes; bf16 54679x115 broadcast
         * along the rows: 8 lanes, 16 bytes), ROWS where it is not (f32 330x28207 with the last
         * dimension broadcast: 252 lanes) */
        const size_t sh[4] = {317, 7, 113, 27};
        const ptrdiff_t os[4] = {7 * 113 * 27, 113 * 27, 27, 1}, is[4] = {7 * 113, 113, 1, 0};
        infiniopCudaEltPlan P = plan(INFINI_DTYPE_BF16, 4, sh, os, is);
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_GATHER && P.unaligned.kernel == INFINIOP_CUDA_ELT_ROWS &&
                  P.unaligned.lanes == 2 && P.align_out,
              "kernel %d / %d lanes %u", (int)P.aligned.kernel, (int)P.unaligned.kernel, P.unaligned.lanes);
        const size_t sh2[2] = {54679, 115}, sh3[2] = {330, 28207};
        const ptrdiff_t os2[2] = {115, 1}, is2[2] = {0, 1}, os3[2] = {28207, 1}, is3[2] = {1, 0};
        P = plan(INFINI_DTYPE_BF16, 2, sh2, os2, is2);
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_GATHER && P.unaligned.lanes == 8, "kernel %d lanes %u",
              (int)P.aligned.kernel, P.unaligned.lanes);
        P = plan(INFINI_DTYPE_F32, 2, sh3, os3, is3);
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_ROWS && P.aligned.in1 && P.aligned.lanes > 8,
              "kernel %d lanes %u", (int)P.aligned.kernel, P.aligned.lanes);
    }
    {   /* f64 2x11299 permuted (1, 0): rows of 11,299 elements at stride 2,
         * a row over 45 blocks of 256 (90 in all: 178 of 128 would give
         * some SMs two), not 177 of 64 */
        const size_t sh[2] = {2, 11299};
        const ptrdiff_t os[2] = {11299, 1}, is[2] = {1, 2};
        const infiniopCudaEltLaunch l = plan(INFINI_DTYPE_F64, 2, sh, os, is).aligned;
        CHECK(l.kernel == INFINIOP_CUDA_ELT_ROWS && l.lanes == 256 && l.threads == 256 && l.grid[0] == 45 &&
                  l.grid[1] == 2,
              "kernel %d lanes %u threads %u grid %u,%u", (int)l.kernel, l.lanes, l.threads, l.grid[0], l.grid[1]);
    }
    {   /* bf16 2x197x12x64 permuted (0, 2, 1, 3): rows of 8 vectors, 16
         * rows a block (whole warps: 128 threads, not 17 rows and 136) */
        const size_t sh[4] = {2, 197, 12, 64};
        const ptrdiff_t os[4] = {197 * 12 * 64, 12 * 64, 64, 1}, is[4] = {197 * 12 * 64, 64, 197 * 64, 1};
        infiniopCudaEltPlan P = plan(INFINI_DTYPE_BF16, 4, sh, os, is);
        const infiniopCudaEltLaunch &l = P.aligned;
        CHECK(l.kernel == INFINIOP_CUDA_ELT_ROWS && l.vec == 8 && l.lanes == 8 && l.threads == 128 &&
                  l.grid[1] == 296,
              "kernel %d vec %u lanes %u threads %u grid %u,%u", (int)l.kernel, l.vec, l.lanes, l.threads,
              l.grid[0], l.grid[1]);
    }
    {   /* f16 64x197x768 broadcast along dimension 1 (large: the
         * throughput shape): rows of 96 vectors at 2 a thread on 48 lanes
         * (not 64 with half of them one vector short), 5 rows a block, 4
         * rows a thread (each input row read once for 4 stores; the
         * two-wave grid would give 2) */
        const size_t sh[3] = {64, 197, 768};
        const ptrdiff_t os[3] = {197 * 768, 768, 1}, is[3] = {768, 0, 1};
        const RowsShape want = {8, 2, 48, 240, 4, 1, 631};
        const infiniopCudaEltLaunch l = plan(INFINI_DTYPE_F16, 3, sh, os, is).aligned;
        expect_rows("f16 64x197x768 bcast:1", l, want);
        CHECK(!l.pair, "f16 64x197x768 bcast:1: two rows a step over a repeated input row");
    }
    {   /* f32 2047x5120 sliced from rows of 8192: 1280 vectors a row over 3
         * blocks of 214 lanes at 2 a thread; rows of their own input: about
         * two waves at 8 blocks an SM (2112 blocks wanted: 3 rows a thread),
         * two of them a step */
        const size_t sh[2] = {2047, 5120};
        const ptrdiff_t os[2] = {5120, 1}, is[2] = {8192, 1};
        const RowsShape want = {4, 2, 214, 214, 3, 3, 683};
        const infiniopCudaEltLaunch l = plan(INFINI_DTYPE_F32, 2, sh, os, is).aligned;
        expect_rows("f32 2047x5120 sliced", l, want);
        CHECK(l.pair, "f32 2047x5120 sliced: one row a step");
    }
    {   /* STRIDED tensors that two 256-thread blocks hold: not spread */
        const size_t sh1[1] = {415};
        const ptrdiff_t os1[1] = {1}, is1[1] = {0};
        infiniopCudaEltPlan P = plan(INFINI_DTYPE_F32, 1, sh1, os1, is1);
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_STRIDED && P.aligned.threads == 256 && P.aligned.grid[0] == 2,
              "kernel %d threads %u grid %u", (int)P.aligned.kernel, P.aligned.threads, P.aligned.grid[0]);
        const size_t sh2[2] = {5, 68};
        const ptrdiff_t os2[2] = {68, 1}, is2[2] = {1, 5};
        P = plan(INFINI_DTYPE_F64, 2, sh2, os2, is2);
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_STRIDED && P.aligned.threads == 256,
              "kernel %d threads %u", (int)P.aligned.kernel, P.aligned.threads);
    }
    {   /* GATHER (a dense output, 8 warps an SM or more of its vectors):
         * a 1-d input of stride 2 (f16 1000x1001 with every other column,
         * coalesced to one dimension, which ROWS does not take), 125125
         * vectors; rows of 367 (an odd length: ROWS would write them an
         * element at a time), input stride 2, 1.48 M vectors, two a thread */
        const size_t sh1[1] = {1001000};
        const ptrdiff_t os1[1] = {1}, is1[1] = {2};
        infiniopCudaEltPlan P = plan(INFINI_DTYPE_F16, 1, sh1, os1, is1);
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_GATHER && P.aligned.vec == 8 && P.aligned.items == 1 &&
                  P.aligned.threads == 128 && (size_t)P.aligned.grid[0] * P.aligned.threads >= 125125 &&
                  P.align == 16 && P.align_out && P.unaligned.kernel == INFINIOP_CUDA_ELT_STRIDED,
              "kernel %d / %d vec %u items %u", (int)P.aligned.kernel, (int)P.unaligned.kernel, P.aligned.vec,
              P.aligned.items);
        const size_t sh2[2] = {32328, 367};
        const ptrdiff_t os2[2] = {367, 1}, is2[2] = {2 * 742, 2};
        P = plan(INFINI_DTYPE_F16, 2, sh2, os2, is2);
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_GATHER && P.aligned.items == 2 && P.aligned.threads == 128 &&
                  P.unaligned.kernel == INFINIOP_CUDA_ELT_ROWS && P.unaligned.vec == 1,
              "kernel %d / %d items %u", (int)P.aligned.kernel, (int)P.unaligned.kernel, P.aligned.items);
        /* not GATHER: the output not dense (padded rows); rows a 16-byte
         * vector wide; an input broadcast (rows repeated, or the last
         * dimension); f32 92 K elements of a reversed layout (23 K vectors:
         * 5.5 warps an SM): STRIDED */
        const ptrdiff_t os3[2] = {376, 1};
        P = plan(INFINI_DTYPE_F16, 2, sh2, os3, is2);
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_ROWS, "kernel %d", (int)P.aligned.kernel);
        const size_t sh4[2] = {2047, 4096};
        const ptrdiff_t os4[2] = {4096, 1}, is4[2] = {8192, 1};
        P = plan(INFINI_DTYPE_F32, 2, sh4, os4, is4);
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_ROWS, "kernel %d", (int)P.aligned.kernel);
        const size_t sh5[2] = {3571, 7814};
        const ptrdiff_t os5[2] = {7814, 1}, is5[2] = {0, 1}, is6[2] = {1, 0};
        P = plan(INFINI_DTYPE_BF16, 2, sh5, os5, is5);
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_ROWS, "kernel %d", (int)P.aligned.kernel);
        P = plan(INFINI_DTYPE_BF16, 2, sh5, os5, is6);
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_ROWS && P.aligned.in1, "kernel %d", (int)P.aligned.kernel);
        const size_t sh7[4] = {23, 67, 10, 6};
        const ptrdiff_t os7[4] = {67 * 60, 60, 6, 1}, is7[4] = {1, 23, 23 * 67, 23 * 670};
        P = plan(INFINI_DTYPE_F32, 4, sh7, os7, is7);
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_STRIDED, "kernel %d", (int)P.aligned.kernel);
    }
    {   /* transposes (the input's unit stride on dimension 0): odd
         * extents of two waves or more take 32 x 64 tiles (f16 4265x37929:
         * 593 x 134 of them, one plane), or 32 x 32 where the 64-wide grid
         * is under two waves of blocks; multiples of the vector width, the
         * vector tiles; under two waves, the tiles where they are half
         * full, at 8-byte elements only 32-wide tiles giving half the SMs
         * a block, else STRIDED */
        const size_t sh[2] = {4265, 37929};
        const ptrdiff_t os[2] = {37929, 1}, is[2] = {1, 4265};
        infiniopCudaEltPlan P = plan(INFINI_DTYPE_F16, 2, sh, os, is);
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_TRANSPOSE_TILE && P.aligned.grid[0] == 593 &&
                  P.aligned.grid[1] == 134 && P.aligned.items == 8 && P.aligned.threads == 256 && P.planes == 1 &&
                  P.tile_p == 0,
              "kernel %d grid %u,%u items %u planes %zu", (int)P.aligned.kernel, P.aligned.grid[0], P.aligned.grid[1],
              P.aligned.items, P.planes);
        const size_t sh2[2] = {1024, 1024};
        const ptrdiff_t os2[2] = {1024, 1}, is2[2] = {1, 1024};
        P = plan(INFINI_DTYPE_BF16, 2, sh2, os2, is2);
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_TRANSPOSE_VEC && P.align == 16 &&
                  P.unaligned.kernel == INFINIOP_CUDA_ELT_TRANSPOSE_TILE,
              "kernel %d / %d", (int)P.aligned.kernel, (int)P.unaligned.kernel);
        /* ... (16 K threads of 8 x 8 blocks, latency-bound: 128-thread blocks, 128 of them
         * for 132 SMs; 8192 x 8192 keeps 256, 4 warps along p) */
        check_tv(INFINI_DTYPE_BF16, 1000, 1000, 128, 4, 16, 8);
        check_tv(INFINI_DTYPE_BF16, 8192, 8192, 256, 4, 64, 64);
        /* ... f32 20 x 34660 (the input's unit stride along the 20): 2 warps along p (32 rows,
         * not 4 of which 2 idle), 4 along q: 271 blocks of 256 */
        check_tv(INFINI_DTYPE_F32, 20, 34660, 256, 2, 271, 1);
        /* 4-byte elements in one plane, the vector kernel's 4 x 4 blocks under half the
         * resident threads, p tiles at least 3/4 full: the scalar tiles (f32 28 x 34660:
         * 61 K blocks; 1000 x 1000); not at 2 bytes, nor with p tiles half empty (16 x
         * 60000), nor at 2.8 M elements (175 K blocks, over half of 270 K) */
        {
            const size_t shp[2] = {28, 34660}, shq[2] = {1000, 1000};
            const ptrdiff_t osp[2] = {34660, 1}, isp[2] = {1, 28}, osq[2] = {1000, 1}, isq[2] = {1, 1000};
            P = plan(INFINI_DTYPE_F32, 2, shp, osp, isp);
            CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_TRANSPOSE_TILE && P.align == 0 &&
                      P.unaligned.kernel == INFINIOP_CUDA_ELT_TRANSPOSE_TILE,
                  "kernel %d / %d", (int)P.aligned.kernel, (int)P.unaligned.kernel);
            P = plan(INFINI_DTYPE_F32, 2, shq, osq, isq);
            CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_TRANSPOSE_TILE, "kernel %d", (int)P.aligned.kernel);
            const size_t shb[2] = {24, 34664}; /* (bf16: extents of whole 8-element vectors) */
            const ptrdiff_t osb[2] = {34664, 1}, isb[2] = {1, 24};
            P = plan(INFINI_DTYPE_BF16, 2, shb, osb, isb);
            CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_TRANSPOSE_VEC, "kernel %d", (int)P.aligned.kernel);
            P = plan(INFINI_DTYPE_F32, 2, shb, osb, isb); /* (f32 of the same extents: tiles) */
            CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_TRANSPOSE_TILE, "kernel %d", (int)P.aligned.kernel);
            const size_t shr[2] = {16, 60000}, shs[2] = {28, 100000};
            const ptrdiff_t osr[2] = {60000, 1}, isr[2] = {1, 16}, oss[2] = {100000, 1}, iss[2] = {1, 28};
            P = plan(INFINI_DTYPE_F32, 2, shr, osr, isr);
            CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_TRANSPOSE_VEC, "kernel %d", (int)P.aligned.kernel);
            P = plan(INFINI_DTYPE_F32, 2, shs, oss, iss);
            CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_TRANSPOSE_VEC, "kernel %d", (int)P.aligned.kernel);
            /* (two planes: 2 x 28 x 17332 permuted to 2 x 28 x 17332 with the 28 of unit stride) */
            const size_t sht[3] = {2, 28, 17332};
            const ptrdiff_t ost[3] = {28 * 17332, 17332, 1}, ist[3] = {28 * 17332, 1, 28};
            P = plan(INFINI_DTYPE_F32, 3, sht, ost, ist);
            CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_TRANSPOSE_VEC && P.planes == 2, "kernel %d planes %zu",
                  (int)P.aligned.kernel, P.planes);
        }
        const size_t sh3[2] = {200, 700}; /* 22 x 7 32 x 32 tiles */
        const ptrdiff_t os3[2] = {700, 1}, is3[2] = {1, 200};
        P = plan(INFINI_DTYPE_BF16, 2, sh3, os3, is3);
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_TRANSPOSE_TILE && P.aligned.grid[0] == 22 &&
                  P.aligned.grid[1] == 7 && P.aligned.items == 4,
              "kernel %d grid %u,%u items %u", (int)P.aligned.kernel, P.aligned.grid[0], P.aligned.grid[1],
              P.aligned.items);
        const size_t sh4[2] = {65, 33}; /* 3 tiles, 35% full */
        const ptrdiff_t os4[2] = {33, 1}, is4[2] = {1, 65};
        P = plan(INFINI_DTYPE_BF16, 2, sh4, os4, is4);
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_STRIDED && P.tile_p == -1, "kernel %d", (int)P.aligned.kernel);
        const size_t sh5[2] = {333, 333}; /* 121 32 x 32 tiles: F64 too */
        const ptrdiff_t os5[2] = {333, 1}, is5[2] = {1, 333};
        P = plan(INFINI_DTYPE_F64, 2, sh5, os5, is5);
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_TRANSPOSE_TILE && P.aligned.items == 4, "kernel %d items %u",
              (int)P.aligned.kernel, P.aligned.items);
        const size_t sh5b[2] = {40, 40}; /* F64, 4 tiles: STRIDED */
        const ptrdiff_t os5b[2] = {40, 1}, is5b[2] = {1, 40};
        P = plan(INFINI_DTYPE_F64, 2, sh5b, os5b, is5b);
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_STRIDED, "kernel %d", (int)P.aligned.kernel);
        const size_t sh5c[2] = {8192, 33}; /* q = 33: 64-wide tiles (32-wide half empty) */
        const ptrdiff_t os5c[2] = {33, 1}, is5c[2] = {1, 8192};
        P = plan(INFINI_DTYPE_F32, 2, sh5c, os5c, is5c);
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_TRANSPOSE_TILE && P.aligned.items == 8 && P.aligned.grid[0] == 1,
              "kernel %d items %u grid %u", (int)P.aligned.kernel, P.aligned.items, P.aligned.grid[0]);
        /* f32 2880x11 with the last dimension broadcast (too short for
         * ROWS): 90 tiles, 17% full: STRIDED */
        const size_t sh7[2] = {2880, 11};
        const ptrdiff_t os7[2] = {11, 1}, is7[2] = {1, 0};
        P = plan(INFINI_DTYPE_F32, 2, sh7, os7, is7);
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_STRIDED, "kernel %d", (int)P.aligned.kernel);
        const size_t sh6[3] = {5, 331, 347}; /* 574 K elements, 5 planes, 32 x 32 tiles */
        const ptrdiff_t os6[3] = {331 * 347, 347, 1}, is6[3] = {331 * 347, 1, 331};
        P = plan(INFINI_DTYPE_F64, 3, sh6, os6, is6);
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_TRANSPOSE_TILE && P.planes == 5 && P.tile_p == 1 &&
                  P.aligned.grid[2] == 5 && P.aligned.items == 4,
              "kernel %d planes %zu p %d grid.z %u items %u", (int)P.aligned.kernel, P.planes, P.tile_p,
              P.aligned.grid[2], P.aligned.items);
    }
    {   /* VEC, f16 65,536 elements (8,192 vectors): 128 blocks of 64, a
         * block an SM at the most (256 of 32 put two on most SMs) */
        const size_t sh[1] = {65536};
        const ptrdiff_t s[1] = {1};
        infiniopCudaEltPlan P = plan(INFINI_DTYPE_F16, 1, sh, s, s);
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_VEC && P.aligned.threads == 64 && P.aligned.grid[0] == 128,
              "kernel %d threads %u grid %u", (int)P.aligned.kernel, P.aligned.threads, P.aligned.grid[0]);
    }
    {   /* VEC, f32 58x2100 (30,450 vectors): 128-thread blocks would give
         * 238, one to two an SM, so blocks halve to two an SM (476 of 64) */
        const size_t sh[1] = {58 * 2100};
        const ptrdiff_t s[1] = {1};
        infiniopCudaEltPlan P = plan(INFINI_DTYPE_F32, 1, sh, s, s);
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_VEC && P.aligned.threads == 64 && P.aligned.grid[0] == 476,
              "kernel %d threads %u grid %u", (int)P.aligned.kernel, P.aligned.threads, P.aligned.grid[0]);
    }
    {   /* VEC: a bf16 decode row of 4096 (512 vectors, over two blocks of
         * 128) is spread to 32-thread blocks; 243 f32 elements are not */
        const size_t sh[1] = {4096};
        const ptrdiff_t s[1] = {1};
        infiniopCudaEltPlan P = plan(INFINI_DTYPE_BF16, 1, sh, s, s);
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_VEC && P.aligned.threads == 32 && P.aligned.grid[0] == 16,
              "kernel %d threads %u grid %u", (int)P.aligned.kernel, P.aligned.threads, P.aligned.grid[0]);
        const size_t sh2[1] = {243};
        P = plan(INFINI_DTYPE_F32, 1, sh2, s, s);
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_VEC && P.aligned.threads == 128,
              "kernel %d threads %u", (int)P.aligned.kernel, P.aligned.threads);
        const size_t sh3[1] = {3};
        P = plan(INFINI_DTYPE_F32, 1, sh3, s, s); /* under one vector: FLAT */
        CHECK(P.aligned.kernel == INFINIOP_CUDA_ELT_FLAT, "kernel %d", (int)P.aligned.kernel);
    }
}

/* ------------------------------------------------------------ invariants */
static bool pow2(unsigned v) { return v && !(v & (v - 1)); }

static void check_launch(const infiniopCudaEltLaunch &l, const size_t *sh, int ndim, size_t es, bool bcast,
                         const char *what) {
    size_t n = 1;
    for (int d = 0; d < ndim; ++d) n *= sh[d];
    switch (l.kernel) {
    case INFINIOP_CUDA_ELT_ROWS: {
        const size_t ncols = sh[ndim - 1], nrows = n / ncols, chunks = ncols / l.vec;
        CHECK(ncols % l.vec == 0, "%s: vec %u", what, l.vec);
        CHECK(l.lanes >= 1 && l.threads % l.lanes == 0, "%s: lanes %u threads %u", what, l.lanes, l.threads);
        CHECK(l.threads >= 32 && l.threads <= 256, "%s: threads %u (launch bounds 256; a warp at the least)", what,
              l.threads);
        const size_t ty = l.threads / l.lanes;
        CHECK((size_t)l.grid[0] * l.lanes * l.items >= chunks, "%s: grid.x %u x lanes %u x items %u < %zu chunks",
              what, l.grid[0], l.lanes, l.items, chunks);
        CHECK((size_t)l.grid[1] * l.rows * ty >= nrows, "%s: grid.y %u x rows %u x %zu < %zu rows", what, l.grid[1],
              l.rows, ty, nrows);
        CHECK(l.grid[1] >= 1 && l.grid[1] <= 65535 && l.grid[2] == 1, "%s: grid %u,%u,%u", what, l.grid[0],
              l.grid[1], l.grid[2]);
        /* the latency-bound branch (under two waves of one access a thread) */
        const bool lat = nrows * chunks < 2 * (size_t)g_dev.sm_count * (size_t)g_dev.max_threads_per_sm;
        if (lat) {
            CHECK(l.items == 1 && !l.pair, "%s: items %u pair %d", what, l.items, (int)l.pair);
            if (l.rows > 1) /* rows a thread only for a broadcast input of 4- or 8-byte elements */
                CHECK(es >= 4 && bcast, "%s: rows %u (es %zu, bcast %d)", what, l.rows, es, (int)bcast);
            if (l.grid[0] == 1) /* a thread an access, no idle lanes */
                CHECK(l.lanes == chunks, "%s: lanes %u for %zu chunks", what, l.lanes, chunks);
            else /* a row over several blocks: of a warp at the least */
                CHECK(l.lanes >= 32, "%s: lanes %u, %u blocks a row", what, l.lanes, l.grid[0]);
            if (l.lanes <= 32 && 32 % l.lanes == 0 && ty >= 32 / l.lanes)
                CHECK(l.threads % 32 == 0, "%s: threads %u, lanes %u: whole warps", what, l.threads, l.lanes);
        } else {
            /* every lane a whole share: one lane fewer would not cover the row */
            CHECK((size_t)(l.lanes - 1) * l.items * l.grid[0] < chunks, "%s: lanes %u items %u grid.x %u for %zu chunks",
                  what, l.lanes, l.items, l.grid[0], chunks);
            /* two rows a step exactly where a thread has two or more, its
             * input repeats no row and both tensors take 16-byte accesses */
            const bool pair = l.rows >= 2 && !bcast && !l.in1 && l.vec * es == 16;
            CHECK(l.pair == pair, "%s: pair %d (rows %u, bcast %d, in1 %d, vec %u)", what, (int)l.pair, l.rows,
                  (int)bcast, (int)l.in1, l.vec);
            /* an input broadcast along the rows: 4 rows a thread, or fewer
             * where the grid is then one wave of 4 blocks an SM */
            if (bcast)
                CHECK(l.rows >= 4 || (size_t)l.grid[0] * l.grid[1] < (size_t)g_dev.sm_count * 4 + l.grid[0],
                      "%s: rows %u grid %u,%u over a row-broadcast input", what, l.rows, l.grid[0], l.grid[1]);
        }
        break;
    }
    case INFINIOP_CUDA_ELT_VEC:
    case INFINIOP_CUDA_ELT_FLAT:
    case INFINIOP_CUDA_ELT_STRIDED: {
        const unsigned tmax = l.kernel == INFINIOP_CUDA_ELT_STRIDED ? 256 : 128;
        CHECK(pow2(l.threads) && l.threads >= 32 && l.threads <= tmax, "%s: threads %u", what, l.threads);
        const size_t acc = l.kernel == INFINIOP_CUDA_ELT_VEC ? n / l.vec : n;
        if (acc <= 2 * (size_t)tmax)
            CHECK(l.threads == tmax, "%s: %zu accesses in %u-thread blocks (two full blocks hold them)", what, acc,
                  l.threads);
        if (l.kernel == INFINIOP_CUDA_ELT_VEC) /* one pass, no grid-stride loop */
            CHECK((size_t)l.grid[0] * l.threads * l.items >= acc, "%s: grid %u x %u x %u < %zu vectors", what,
                  l.grid[0], l.threads, l.items, acc);
        else
            CHECK(l.grid[0] >= 1, "%s: grid %u", what, l.grid[0]);
        break;
    }
    case INFINIOP_CUDA_ELT_GATHER: {
        /* vec's launch shape over 8 warps an SM or more of vectors (the
         * last one partial): 128 threads, one pass; 32-bit indices */
        const size_t acc = (n + l.vec - 1) / l.vec;
        CHECK(l.vec * es == 16 && (l.items == 1 || l.items == 2), "%s: vec %u items %u", what, l.vec, l.items);
        CHECK(l.threads == 128, "%s: threads %u", what, l.threads);
        CHECK(acc >= 8 * 32 * (size_t)g_dev.sm_count, "%s: %zu vectors", what, acc);
        CHECK((size_t)l.grid[0] * l.threads * l.items >= acc, "%s: grid %u x %u x %u < %zu vectors", what, l.grid[0],
              l.threads, l.items, acc);
        CHECK(n < ((size_t)1 << 31), "%s: %zu elements on 32-bit indices", what, n);
        break;
    }
    case INFINIOP_CUDA_ELT_TRANSPOSE_TILE:
    case INFINIOP_CUDA_ELT_TRANSPOSE_VEC: {
        /* the grid covers both extents (32 x 64 tiles; vector tiles of
         * tile_wp x 4 V along p and the other warps x 8 V along q; the
         * grid of layouts below is 2-d with p = 0) */
        const size_t q = sh[ndim - 1];
        const bool tile = l.kernel == INFINIOP_CUDA_ELT_TRANSPOSE_TILE;
        if (tile) CHECK(l.items == 4 || l.items == 8, "%s: items %u", what, l.items);
        if (tile)
            CHECK(l.threads == 256, "%s: threads %u", what, l.threads);
        else
            CHECK((l.threads == 32 || l.threads == 64 || l.threads == 128 || l.threads == 256) &&
                      (l.tile_wp == 1 || l.tile_wp == 2 || l.tile_wp == 4) && l.tile_wp <= l.threads / 32,
                  "%s: threads %u warps along p %u", what, l.threads, l.tile_wp);
        const size_t V = 16 / es, ep = tile ? 32 : l.tile_wp * 4 * V,
                     eq = tile ? 8 * (size_t)l.items : (size_t)(l.threads / 32 / l.tile_wp) * 8 * V;
        CHECK((size_t)l.grid[0] * eq >= q && (size_t)(l.grid[0] - 1) * eq < q, "%s: grid.x %u for %zu", what,
              l.grid[0], q);
        CHECK((size_t)l.grid[1] * ep >= (ndim == 2 ? sh[0] : 1) && l.grid[2] >= 1, "%s: grid %u,%u", what,
              l.grid[1], l.grid[2]);
        /* under two waves only where the tiles are half full, and at
         * 8-byte elements 32-wide and giving half the SMs a block */
        const size_t tiles = (size_t)l.grid[0] * l.grid[1] * l.grid[2];
        if (n < 2 * (size_t)g_dev.sm_count * (size_t)g_dev.max_threads_per_sm)
            CHECK(tile && 2 * n >= tiles * 32 * eq && (es <= 4 || (eq == 32 && 2 * tiles >= (size_t)g_dev.sm_count)),
                  "%s: kernel %d under two waves (grid %u,%u,%u)", what, (int)l.kernel, l.grid[0], l.grid[1],
                  l.grid[2]);
        break;
    }
    default: break;
    }
}

static void invariants(void) {
    const infiniDtype_t dts[3] = {INFINI_DTYPE_BF16, INFINI_DTYPE_F32, INFINI_DTYPE_F64};
    const size_t rows[] = {1, 2, 3, 7, 33, 131, 132, 455, 581, 1000, 1567, 4728, 7263, 65536};
    const size_t cols[] = {16, 18, 19, 20, 32, 64, 75, 77, 128, 138, 255, 256, 300, 768, 1000, 4096};
    const infiniopCudaProps devs[2] = {H100, A100};
    char what[160];
    for (const infiniopCudaProps &dev : devs) {
        g_dev = dev;
        for (infiniDtype_t dt : dts) {
            const size_t es = infiniop_dtype_size(dt);
            for (size_t r : rows)
                for (size_t c : cols) {
                    const size_t sh[2] = {r, c};
                    /* padded rows (ROWS), rows broadcast (ROWS), the last
                     * dimension broadcast (ROWS, input by element), a
                     * transpose (STRIDED or tiles), contiguous (VEC) */
                    const ptrdiff_t os[2] = {(ptrdiff_t)c, 1};
                    const ptrdiff_t pad[2] = {(ptrdiff_t)c + 8, 1}, brow[2] = {0, 1}, bcol[2] = {1, 0},
                                    tr[2] = {1, (ptrdiff_t)r};
                    const struct {
                        const ptrdiff_t *is;
                        bool bcast;
                        const char *name;
                    } lays[4] = {{pad, false, "padded"}, {brow, true, "bcast:0"}, {bcol, false, "bcast:1"},
                                 {tr, false, "transposed"}};
                    for (const auto &ly : lays) {
                        if (r == 1 && ly.bcast) continue;
                        infiniopCudaEltPlan P = plan(dt, 2, sh, os, ly.is);
                        snprintf(what, sizeof what, "sm %d es %zu %zux%zu %s", dev.sm_count, es, r, c, ly.name);
                        check_launch(P.aligned, sh, 2, es, ly.bcast, what);
                        check_launch(P.unaligned, sh, 2, es, ly.bcast, what);
                    }
                    const size_t n1[1] = {r * c};
                    const ptrdiff_t one[1] = {1}, zero[1] = {0};
                    infiniopCudaEltPlan P = plan(dt, 1, n1, one, one);
                    snprintf(what, sizeof what, "sm %d es %zu %zu contiguous", dev.sm_count, es, r * c);
                    check_launch(P.aligned, n1, 1, es, false, what);
                    check_launch(P.unaligned, n1, 1, es, false, what);
                    P = plan(dt, 1, n1, one, zero);
                    snprintf(what, sizeof what, "sm %d es %zu %zu bcast", dev.sm_count, es, r * c);
                    check_launch(P.aligned, n1, 1, es, true, what);
                }
        }
    }
}

int main(void) {
    named_cases();
    invariants();
    printf("test_cuda_elt_plan: %ld checks, %ld failed\n", g_checks, g_fail);
    return g_fail ? 1 : 0;
}
