/* example.posterize on the GPU: out = in & mask, one grid row per sample, grid-stride loops.
 *
 * Compiled twice: by nvcc into the CUDA library, and by a C++ compiler (no __CUDACC__) into a
 * host library that runs the same per-element code on the CPU, so machines without a GPU test
 * the arithmetic against the NumPy kernel. Returns 0, or the CUDA error code of the launch.
 */
#include <stdint.h>

extern "C" {
#include "posterize.h"
}

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#define EXAMPLE_HD __host__ __device__ __forceinline__
#else
#define EXAMPLE_HD inline
#endif

static EXAMPLE_HD uint8_t posterize_value(uint8_t value, uint8_t mask) { return value & mask; }

#if defined(__CUDACC__)
__global__ void posterize_kernel(const int64_t *sizes, const uint8_t *const *inputs,
                                 uint8_t *const *outputs, const uint8_t *masks) {
    const int sample = blockIdx.y;
    const uint8_t *in = inputs[sample];
    uint8_t *out = outputs[sample];
    const int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < sizes[sample];
         i += stride)
        out[i] = posterize_value(in[i], masks[sample]);
}

extern "C" int example_posterize(int samples, int64_t max_size, const int64_t *sizes,
                                 const uint8_t *const *inputs, uint8_t *const *outputs,
                                 const uint8_t *masks, void *stream) {
    if (samples == 0 || max_size == 0) return 0;
    int64_t blocks = (max_size + 255) / 256;
    if (blocks > 4096) blocks = 4096;
    posterize_kernel<<<dim3((unsigned)blocks, (unsigned)samples), 256, 0,
                       (cudaStream_t)stream>>>(sizes, inputs, outputs, masks);
    return (int)cudaGetLastError();
}
#else
extern "C" int example_posterize(int samples, int64_t max_size, const int64_t *sizes,
                                 const uint8_t *const *inputs, uint8_t *const *outputs,
                                 const uint8_t *masks, void *stream) {
    (void)max_size;
    (void)stream;
    for (int sample = 0; sample < samples; ++sample)
        for (int64_t i = 0; i < sizes[sample]; ++i)
            outputs[sample][i] = posterize_value(inputs[sample][i], masks[sample]);
    return 0;
}
#endif
