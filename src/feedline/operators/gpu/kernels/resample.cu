/* flg_resample: separable resampling (resize, random_resized_crop) with taps computed on the
 * host exactly as the CPU kernel computes them.
 *
 * The CPU kernel resamples rows first, in float32: row value r[x] = w0 * v[first][x], then
 * r[x] += wk * v[first + k][x] for k = 1..taps-1; then columns the same way over r; then
 * saturates. Each thread here computes one output element with the same operations in the same
 * order (it recomputes the row values of the columns it reads), so the result is bit-identical.
 * A nearest-neighbour axis takes the value itself, as the CPU kernel's np.take does. */
#include "flg_common.cuh"

/* The row pass at input column `x`: the CPU kernel's float32 value (or the input itself for a
 * nearest-neighbour row axis, converted to float32 when the column pass filters). */
template <class In>
FLG_HD float flg_row_value(const In *in, const int64_t *d, int64_t y, int64_t x, int64_t c,
                           const int32_t *first, const float *weights) {
    const int64_t sy = d[3], sx = d[4], sc = d[5], taps = d[11];
    const int32_t row = first[d[13] + y];
    if (d[17] & 1) return flg_to_float(in[row * sy + x * sx + c * sc]);
    const float *w = weights + d[15] + y * taps;
    float r = w[0] * flg_to_float(in[row * sy + x * sx + c * sc]);
    for (int64_t k = 1; k < taps; ++k) r += w[k] * flg_to_float(in[(row + k) * sy + x * sx + c * sc]);
    return r;
}

template <class Out, class In>
__global__ void flg_resample_kernel(const int64_t *desc, const void *const *inputs,
                                    void *const *outputs, const int32_t *first,
                                    const float *weights) {
    const int job = blockIdx.y;
    const int64_t *d = desc + (int64_t)job * FLG_RESAMPLE_DESC;
    const int64_t channels = d[2], sy = d[3], sx = d[4], sc = d[5];
    const int64_t out_h = d[6], out_w = d[7], oy = d[8], ox = d[9], oc = d[10];
    const int64_t col_taps = d[12], flags = d[17];
    const In *in = (const In *)inputs[job];
    Out *out = (Out *)outputs[job];
    FLG_FOR_EACH(index, out_h * out_w * channels) {
        const int64_t c = index % channels, x = (index / channels) % out_w;
        const int64_t y = index / (channels * out_w);
        const int32_t column = first[d[14] + x];
        Out *target = out + y * oy + x * ox + c * oc;
        if ((flags & 3) == 3) { /* nearest in both axes: a copy (converted if types differ) */
            const int32_t row = first[d[13] + y];
            *target = flg_saturate<Out>(in[row * sy + column * sx + c * sc]);
            continue;
        }
        if (flags & 2) {
            *target = flg_saturate<Out>(flg_row_value(in, d, y, column, c, first, weights));
            continue;
        }
        const float *w = weights + d[16] + x * col_taps;
        float acc = w[0] * flg_row_value(in, d, y, column, c, first, weights);
        for (int64_t k = 1; k < col_taps; ++k)
            acc += w[k] * flg_row_value(in, d, y, column + k, c, first, weights);
        *target = flg_saturate<Out>(acc);
    }
}

extern "C" int flg_resample(int in_type, int out_type, int jobs, int64_t max_elements,
                            const int64_t *desc, const void *const *inputs, void *const *outputs,
                            const int32_t *first, const float *weights, void *stream) {
    if (jobs == 0 || max_elements == 0) return 0;
    return flg_dispatch(in_type, [&](auto in_tag) {
        return flg_dispatch(out_type, [&](auto out_tag) {
            typedef typename decltype(in_tag)::type In;
            typedef typename decltype(out_tag)::type Out;
            FLG_LAUNCH((flg_resample_kernel<Out, In>), flg_grid(max_elements, jobs),
                       dim3(FLG_BLOCK), stream, desc, inputs, outputs, first, weights);
            return FLG_STATUS();
        });
    });
}
