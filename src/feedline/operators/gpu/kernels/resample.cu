/* flg_resample: separable resampling (resize, random_resized_crop) with taps computed on the
 * host exactly as the CPU kernel computes them, in two passes over the whole batch.
 *
 * The CPU kernel resamples rows first, in float32: row value r[x] = w0 * v[first][x], then
 * r[x] += wk * v[first + k][x] for k = 1..taps-1; then columns the same way over r; then
 * saturates. Here pass 1 (one launch for the batch) writes r for every output row and every
 * input column the column pass reads into a float32 scratch buffer; pass 2 (one launch) filters
 * the columns of r and saturates. Both use the CPU kernel's operations in its order, so the
 * result is bit-identical, and each output element costs O(taps) (not taps^2). Consecutive
 * threads handle consecutive elements (channel fastest, then column), so reads of the input,
 * of the scratch and writes of the output are coalesced for interleaved images. A
 * nearest-neighbour axis takes the value itself, as the CPU kernel's np.take does; an image
 * nearest in both axes skips pass 1 and is copied (converted) by pass 2. */
#include "flg_common.cuh"

/* Pass 1: scratch[y][x - col_lo][c] = the row pass at input column x, in float32. */
template <class In>
__global__ void flg_resample_rows(const int64_t *desc, const void *const *inputs,
                                  const int32_t *first, const float *weights, float *scratch) {
    const int job = blockIdx.y;
    const int64_t *d = desc + (int64_t)job * FLG_RESAMPLE_DESC;
    const int64_t flags = d[17];
    if ((flags & 3) == 3) return;
    const int64_t channels = d[2], sy = d[3], sx = d[4], sc = d[5], out_h = d[6];
    const int64_t taps = d[11], col_lo = d[19], width = d[20];
    const In *in = (const In *)inputs[job];
    float *r = scratch + d[18];
    FLG_FOR_EACH(index, out_h * width * channels) {
        const int64_t c = index % channels, x = col_lo + (index / channels) % width;
        const int64_t y = index / (channels * width);
        const int32_t row = first[d[13] + y];
        const In *source = in + x * sx + c * sc;
        if (flags & 1) {
            r[index] = flg_to_float(source[row * sy]);
            continue;
        }
        const float *w = weights + d[15] + y * taps;
        float value = w[0] * flg_to_float(source[row * sy]);
        for (int64_t k = 1; k < taps; ++k) value += w[k] * flg_to_float(source[(row + k) * sy]);
        r[index] = value;
    }
}

/* Pass 2: out[y][x][c] = the column pass over scratch row y, saturated. */
template <class Out, class In>
__global__ void flg_resample_columns(const int64_t *desc, const void *const *inputs,
                                     void *const *outputs, const int32_t *first,
                                     const float *weights, const float *scratch) {
    const int job = blockIdx.y;
    const int64_t *d = desc + (int64_t)job * FLG_RESAMPLE_DESC;
    const int64_t channels = d[2], out_h = d[6], out_w = d[7], oy = d[8], ox = d[9], oc = d[10];
    const int64_t col_taps = d[12], flags = d[17], col_lo = d[19], width = d[20];
    Out *out = (Out *)outputs[job];
    const float *r = scratch + d[18];
    FLG_FOR_EACH(index, out_h * out_w * channels) {
        const int64_t c = index % channels, x = (index / channels) % out_w;
        const int64_t y = index / (channels * out_w);
        const int32_t column = first[d[14] + x];
        Out *target = out + y * oy + x * ox + c * oc;
        if ((flags & 3) == 3) { /* nearest in both axes: a copy (converted if types differ) */
            const In *in = (const In *)inputs[job];
            const int32_t row = first[d[13] + y];
            *target = flg_saturate<Out>(in[row * d[3] + column * d[4] + c * d[5]]);
            continue;
        }
        const float *line = r + (y * width + (column - col_lo)) * channels + c;
        if (flags & 2) {
            *target = flg_saturate<Out>(line[0]);
            continue;
        }
        const float *w = weights + d[16] + x * col_taps;
        float acc = w[0] * line[0];
        for (int64_t k = 1; k < col_taps; ++k) acc += w[k] * line[k * channels];
        *target = flg_saturate<Out>(acc);
    }
}

extern "C" int flg_resample(int in_type, int out_type, int jobs, int64_t max_elements,
                            int64_t max_scratch, const int64_t *desc, const void *const *inputs,
                            void *const *outputs, const int32_t *first, const float *weights,
                            float *scratch, void *stream) {
    if (jobs == 0 || max_elements == 0) return 0;
    return flg_dispatch(in_type, [&](auto in_tag) {
        typedef typename decltype(in_tag)::type In;
        if (max_scratch > 0) {
            FLG_LAUNCH((flg_resample_rows<In>), flg_grid(max_scratch, jobs), dim3(FLG_BLOCK),
                       stream, desc, inputs, first, weights, scratch);
            const int status = FLG_STATUS();
            if (status) return status;
        }
        return flg_dispatch(out_type, [&](auto out_tag) {
            typedef typename decltype(out_tag)::type Out;
            FLG_LAUNCH((flg_resample_columns<Out, In>), flg_grid(max_elements, jobs),
                       dim3(FLG_BLOCK), stream, desc, inputs, outputs, first, weights, scratch);
            return FLG_STATUS();
        });
    });
}
