/* Box and point kernels: flg_bb_flip and flg_coord_transform (the CPU kernels' arithmetic:
 * float32 `1 - x` for boxes, float64 M @ p + T for points). */
#include "flg_common.cuh"

__global__ void flg_bb_flip_kernel(const int64_t *counts, const float *const *inputs,
                                   float *const *outputs, const int32_t *flags) {
    const int sample = blockIdx.y;
    const int32_t flag = flags[sample];
    const float *in = inputs[sample];
    float *out = outputs[sample];
    FLG_FOR_EACH(box, counts[sample]) {
        float b[4];
        for (int k = 0; k < 4; ++k) b[k] = in[4 * box + k];
        for (int axis = 0; axis < 2; ++axis) {
            if (!(flag & (2 << axis))) continue;
            const float start = b[axis];
            if (flag & 1) {
                b[axis] = 1.0f - b[axis + 2];
                b[axis + 2] = 1.0f - start;
            } else {
                b[axis] = 1.0f - start - b[axis + 2];
            }
        }
        for (int k = 0; k < 4; ++k) out[4 * box + k] = b[k];
    }
}

extern "C" int flg_bb_flip(int samples, int64_t max_boxes, const int64_t *counts,
                           const float *const *inputs, float *const *outputs,
                           const int32_t *flags, void *stream) {
    if (samples == 0 || max_boxes == 0) return 0;
    FLG_LAUNCH(flg_bb_flip_kernel, flg_grid(max_boxes, samples), dim3(FLG_BLOCK), stream,
               counts, inputs, outputs, flags);
    return FLG_STATUS();
}

template <class Out, class In>
__global__ void flg_coord_transform_kernel(const int64_t *desc, const void *const *inputs,
                                           void *const *outputs, const double *affine) {
    const int sample = blockIdx.y;
    const int64_t *d = desc + 4 * (int64_t)sample;
    const int64_t points = d[0], in_dim = d[1], out_dim = d[2];
    const double *m = affine + d[3];
    const In *in = (const In *)inputs[sample];
    Out *out = (Out *)outputs[sample];
    FLG_FOR_EACH(index, points * out_dim) {
        const int64_t point = index / out_dim, row = index % out_dim;
        const double *r = m + row * (in_dim + 1);
        double acc = 0.0;
        for (int64_t k = 0; k < in_dim; ++k) acc += flg_to_double(in[point * in_dim + k]) * r[k];
        out[index] = flg_convert<Out>(acc + r[in_dim]);
    }
}

extern "C" int flg_coord_transform(int in_type, int out_type, int samples, int64_t max_points,
                                   const int64_t *desc, const void *const *inputs,
                                   void *const *outputs, const double *affine, void *stream) {
    if (samples == 0 || max_points == 0) return 0;
    return flg_dispatch(in_type, [&](auto in_tag) {
        return flg_dispatch_float(out_type, [&](auto out_tag) {
            typedef typename decltype(in_tag)::type In;
            typedef typename decltype(out_tag)::type Out;
            FLG_LAUNCH((flg_coord_transform_kernel<Out, In>), flg_grid(max_points, samples),
                       dim3(FLG_BLOCK), stream, desc, inputs, outputs, affine);
            return FLG_STATUS();
        });
    });
}
