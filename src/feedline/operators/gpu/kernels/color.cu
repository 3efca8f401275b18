/* flg_color_twist (hue, saturation, hsv, color_twist): a 3x3 matrix and an offset per sample,
 * applied to every pixel as the CPU kernel does: out_c = ((v0 * m_c0 + v1 * m_c1) + v2 * m_c2)
 * + offset in float32 (float64 when `wide`), then saturated. */
#include "flg_common.cuh"

template <class Out, class In, class W>
__global__ void flg_color_twist_kernel(const int64_t *desc, const void *const *inputs,
                                       void *const *outputs, const double *matrix) {
    const int sample = blockIdx.y;
    const int64_t outer = desc[2 * sample], inner = desc[2 * sample + 1];
    const double *m = matrix + 12 * (int64_t)sample;
    const In *in = (const In *)inputs[sample];
    Out *out = (Out *)outputs[sample];
    FLG_FOR_EACH(pixel, outer * inner) {
        const int64_t base = (pixel / inner) * 3 * inner + pixel % inner;
        const W v0 = (W)flg_to_double(in[base]), v1 = (W)flg_to_double(in[base + inner]);
        const W v2 = (W)flg_to_double(in[base + 2 * inner]);
        for (int c = 0; c < 3; ++c) {
            W r = v0 * (W)m[3 * c] + v1 * (W)m[3 * c + 1];
            r = r + v2 * (W)m[3 * c + 2];
            if (m[9] != 0.0) r = r + (W)m[9];
            out[base + c * inner] = flg_saturate<Out>(r);
        }
    }
}

extern "C" int flg_color_twist(int in_type, int out_type, int wide, int samples,
                               int64_t max_pixels, const int64_t *desc,
                               const void *const *inputs, void *const *outputs,
                               const double *matrix, void *stream) {
    if (samples == 0 || max_pixels == 0) return 0;
    return flg_dispatch(in_type, [&](auto in_tag) {
        return flg_dispatch(out_type, [&](auto out_tag) {
            typedef typename decltype(in_tag)::type In;
            typedef typename decltype(out_tag)::type Out;
            const dim3 grid = flg_grid(max_pixels, samples);
            if (wide) {
                FLG_LAUNCH((flg_color_twist_kernel<Out, In, double>), grid, dim3(FLG_BLOCK),
                           stream, desc, inputs, outputs, matrix);
            } else {
                FLG_LAUNCH((flg_color_twist_kernel<Out, In, float>), grid, dim3(FLG_BLOCK),
                           stream, desc, inputs, outputs, matrix);
            }
            return FLG_STATUS();
        });
    });
}
