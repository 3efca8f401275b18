/* Shared by feedline's GPU kernels: the CUDA/host-emulation switch, types, conversions.
 *
 * Every .cu file of the GPU plugin is compiled twice:
 *   - by nvcc into the CUDA library (__CUDACC__ defined): kernels launch with <<<...>>>;
 *   - by a C++ compiler into the host-emulation library (FLG_HOST_EMULATION defined): the same
 *     kernels run on the CPU, FLG_LAUNCH looping over every block and thread of the grid, so
 *     machines without a GPU test the kernels' arithmetic against the CPU kernels.
 * Kernels must therefore use no shared memory, no __syncthreads and no warp intrinsics: each
 * thread's work depends only on its index (grid-stride loops).
 *
 * Rounding rules follow the CPU kernels: integer results are rounded half away from zero and
 * clamped to the type's range (NaN becomes the type's minimum, as np.fmax does); float32
 * arithmetic is never contracted into FMAs (nvcc --fmad=false, g++ -ffp-contract=off), so a
 * float32 expression gives the bits NumPy gives.
 */
#pragma once

#include <math.h>
#include <stdint.h>

#include <type_traits>

extern "C" {
#include "feedline_gpu.h"
}

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#define FLG_HD __host__ __device__ __forceinline__
typedef __half flg_half;
#define FLG_LAUNCH(kernel, grid, block, stream, ...) \
    kernel<<<(grid), (block), 0, (cudaStream_t)(stream)>>>(__VA_ARGS__)
#define FLG_STATUS() ((int)cudaGetLastError())
#define FLG_ATOMIC_OR(address, value) atomicOr((address), (value))
#else
#define __global__
#define __device__
#define __host__
#define FLG_HD inline
typedef _Float16 flg_half;
struct dim3 {
    unsigned x, y, z;
    dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
inline thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;
/* Runs `body` once per thread of the grid, in order, on the calling thread. */
template <class Body>
void flg_host_launch(dim3 grid, dim3 block, Body body) {
    gridDim = grid;
    blockDim = block;
    for (unsigned bz = 0; bz < grid.z; ++bz)
        for (unsigned by = 0; by < grid.y; ++by)
            for (unsigned bx = 0; bx < grid.x; ++bx)
                for (unsigned tz = 0; tz < block.z; ++tz)
                    for (unsigned ty = 0; ty < block.y; ++ty)
                        for (unsigned tx = 0; tx < block.x; ++tx) {
                            blockIdx = dim3(bx, by, bz);
                            threadIdx = dim3(tx, ty, tz);
                            body();
                        }
}
#define FLG_LAUNCH(kernel, grid, block, stream, ...) \
    flg_host_launch((grid), (block), [&]() { kernel(__VA_ARGS__); })
#define FLG_STATUS() 0
#define FLG_ATOMIC_OR(address, value) (*(address) |= (value))
#endif

#define FLG_BLOCK 256
#define FLG_MAX_BLOCKS 4096

/* Element types, numbered as feedline.types.DataType. */
enum {
    FLG_UINT8 = 0, FLG_UINT16 = 1, FLG_UINT32 = 2, FLG_UINT64 = 3,
    FLG_INT8 = 4, FLG_INT16 = 5, FLG_INT32 = 6, FLG_INT64 = 7,
    FLG_FLOAT16 = 8, FLG_FLOAT = 9, FLG_FLOAT64 = 10, FLG_BOOL = 11
};

template <class T> struct flg_tag { typedef T type; };

/* Returns f(flg_tag<T>()) for the C type T of element type `id` (FLG_BAD_TYPE if unknown). */
template <class F> int flg_dispatch(int id, F f) {
    switch (id) {
        case FLG_UINT8: return f(flg_tag<uint8_t>());
        case FLG_UINT16: return f(flg_tag<uint16_t>());
        case FLG_UINT32: return f(flg_tag<uint32_t>());
        case FLG_UINT64: return f(flg_tag<uint64_t>());
        case FLG_INT8: return f(flg_tag<int8_t>());
        case FLG_INT16: return f(flg_tag<int16_t>());
        case FLG_INT32: return f(flg_tag<int32_t>());
        case FLG_INT64: return f(flg_tag<int64_t>());
        case FLG_FLOAT16: return f(flg_tag<flg_half>());
        case FLG_FLOAT: return f(flg_tag<float>());
        case FLG_FLOAT64: return f(flg_tag<double>());
        case FLG_BOOL: return f(flg_tag<bool>());
        default: return FLG_BAD_TYPE;
    }
}

/* Like flg_dispatch, for the floating-point types only. */
template <class F> int flg_dispatch_float(int id, F f) {
    switch (id) {
        case FLG_FLOAT16: return f(flg_tag<flg_half>());
        case FLG_FLOAT: return f(flg_tag<float>());
        case FLG_FLOAT64: return f(flg_tag<double>());
        default: return FLG_BAD_TYPE;
    }
}

template <class T> struct flg_traits {
    static constexpr bool is_float = false;
    static constexpr bool is_signed = T(-1) < T(0);
    static constexpr double lowest = is_signed ? -(double)(1ULL << (8 * sizeof(T) - 1)) : 0.0;
    static constexpr double highest =
        is_signed ? (double)((1ULL << (8 * sizeof(T) - 1)) - 1) : (double)(T)~T(0);
};
template <> struct flg_traits<bool> {
    static constexpr bool is_float = false;
    static constexpr bool is_signed = false;
    static constexpr double lowest = 0.0, highest = 1.0;
};
template <> struct flg_traits<float> { static constexpr bool is_float = true; };
template <> struct flg_traits<double> { static constexpr bool is_float = true; };
template <> struct flg_traits<flg_half> { static constexpr bool is_float = true; };

template <class T> FLG_HD double flg_to_double(T v) { return (double)v; }
template <> FLG_HD double flg_to_double<flg_half>(flg_half v) { return (double)(float)v; }
template <class T> FLG_HD float flg_to_float(T v) { return (float)v; }
template <> FLG_HD float flg_to_float<flg_half>(flg_half v) { return (float)v; }
#if defined(__CUDACC__)
FLG_HD flg_half flg_double_to_half(double v) { return __double2half(v); }
#else
inline flg_half flg_double_to_half(double v) { return (flg_half)v; }
#endif

/* A plain C conversion (NumPy's astype); double and 64-bit integers go to half in one rounding
 * (as NumPy converts them), other types through float (exact for them). */
template <class Out, class In> FLG_HD Out flg_convert(In v) {
    if constexpr (std::is_same<Out, flg_half>::value && sizeof(In) == 8) {
        return flg_double_to_half(flg_to_double(v));
    } else if constexpr (std::is_same<Out, flg_half>::value) {
        return (flg_half)flg_to_float(v);
    } else if constexpr (std::is_same<In, flg_half>::value) {
        return (Out)(float)v;
    } else {
        return (Out)v;
    }
}

/* max/min that return the other operand when one is NaN (C's fmax/fmin, NumPy's np.fmax). */
template <class W> FLG_HD W flg_fmax(W a, W b) { return a != a ? b : (b != b ? a : (a > b ? a : b)); }
template <class W> FLG_HD W flg_fmin(W a, W b) { return a != a ? b : (b != b ? a : (a < b ? a : b)); }

/* Round half away from zero and clamp in W, then truncate to Out (saturate_cast). */
template <class Out, class W> FLG_HD Out flg_saturate_in(W v) {
    W work = v < W(0) ? v - W(0.5) : v + W(0.5);
    if (!flg_traits<Out>::is_signed) work = v + W(0.5);
    work = flg_fmax(work, (W)flg_traits<Out>::lowest);
    work = flg_fmin(work, (W)flg_traits<Out>::highest);
    return (Out)work;
}

/* feedline's saturate_cast of one computed value of type In to Out: integers rounded half away
 * from zero and clamped (in float32 when In is float32 and Out narrower than 4 bytes, else in
 * float64), floats a plain conversion, bool `!= 0`. */
template <class Out, class In> FLG_HD Out flg_saturate(In v) {
    if constexpr (std::is_same<Out, In>::value) {
        return v;
    } else if constexpr (std::is_same<Out, bool>::value) {
        return flg_to_double(v) != 0.0;
    } else if constexpr (flg_traits<Out>::is_float) {
        return flg_convert<Out>(v);
    } else if constexpr (flg_traits<In>::is_float && !std::is_same<In, double>::value) {
        if constexpr (sizeof(Out) >= 4) {
            return flg_saturate_in<Out, double>(flg_to_double(v));
        } else {
            return flg_saturate_in<Out, float>(flg_to_float(v));
        }
    } else {
        return flg_saturate_in<Out, double>(flg_to_double(v));
    }
}

/* One-dimensional launch geometry: blocks in x cover `elements` (capped; kernels loop), one
 * row of blocks per sample in y. */
inline dim3 flg_grid(int64_t elements, int samples) {
    int64_t blocks = (elements + FLG_BLOCK - 1) / FLG_BLOCK;
    if (blocks < 1) blocks = 1;
    if (blocks > FLG_MAX_BLOCKS) blocks = FLG_MAX_BLOCKS;
    return dim3((unsigned)blocks, (unsigned)samples, 1);
}

/* The grid-stride loop over the elements of this block row's sample. */
#define FLG_FOR_EACH(index, count)                                                         \
    for (int64_t index = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; index < (count); \
         index += (int64_t)gridDim.x * blockDim.x)
