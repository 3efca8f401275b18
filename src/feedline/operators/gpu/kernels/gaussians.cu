/* draw_gaussians: Gaussians of objects drawn into a heatmap (the CPU kernel's float32
 * arithmetic, feedline/operators/cpu/heatmaps/gaussians.py).
 *
 * One thread per heatmap pixel (all class slices of all samples, grid-stride): it starts from the
 * input value and visits the sample's objects in order, keeping the larger of its value and each
 * active object's Gaussian when the pixel lies in that object's window. A pixel is written by
 * exactly one thread, so there are no atomics and the result is deterministic; a NaN Gaussian
 * value (0/0 at the center of a zero radius) is skipped as a C `max` skips it.
 */
#include "flg_common.cuh"

/* An object's window along one axis: floor(c - r) .. ceil(c + r), clamped to [-1, size] before
 * the integer conversion (a huge radius must not overflow it). */
static FLG_HD void flg_gaussian_span(float center, float radius, int64_t size, int64_t *low,
                                     int64_t *high) {
    const float lo = floorf(center - radius), hi = ceilf(center + radius);
    *low = (int64_t)fminf(fmaxf(lo, -1.0f), (float)size);
    *high = (int64_t)fminf(fmaxf(hi, -1.0f), (float)size);
}

/* Whether pixel (x, y) is in the object's clipped window (nothing is drawn for a window that
 * lies completely outside the heatmap). */
static FLG_HD bool flg_in_window(int64_t x, int64_t y, float cx, float cy, float radius,
                                 int64_t height, int64_t width) {
    int64_t x0, x1, y0, y1;
    flg_gaussian_span(cx, radius, width, &x0, &x1);
    flg_gaussian_span(cy, radius, height, &y0, &y1);
    if (x1 < 0 || x0 >= width || y1 < 0 || y0 >= height) return false;
    x0 = x0 < 0 ? 0 : x0;
    y0 = y0 < 0 ? 0 : y0;
    x1 = x1 > width - 1 ? width - 1 : x1;
    y1 = y1 > height - 1 ? height - 1 : y1;
    return x >= x0 && x <= x1 && y >= y0 && y <= y1;
}

__global__ void flg_draw_gaussians_kernel(const int64_t *desc, const float *const *inputs,
                                          float *const *outputs, const uint8_t *const *active,
                                          const int32_t *const *class_ids,
                                          const int32_t *const *centers,
                                          const float *const *radii, const float *k,
                                          float factor) {
    const int sample = blockIdx.y;
    const int64_t *d = desc + 4 * (int64_t)sample;
    const int64_t height = d[1], width = d[2], objects = d[3], plane = height * width;
    const float *in = inputs[sample];
    float *out = outputs[sample];
    const uint8_t *on = active[sample];
    const int32_t *ids = class_ids[sample];
    const int32_t *xy = centers[sample];
    const float *r = radii[sample];
    FLG_FOR_EACH(index, d[0] * plane) {
        const int64_t slice = index / plane, y = (index % plane) / width, x = index % width;
        float value = in[index];
        for (int64_t i = 0; i < objects; ++i) {
            const float radius = r[i];
            if (!on[i] || ids[i] != slice || radius != radius) continue;
            if (!flg_in_window(x, y, (float)xy[2 * i], (float)xy[2 * i + 1], radius, height,
                               width))
                continue;
            const int64_t dx = x - xy[2 * i], dy = y - xy[2 * i + 1];
            const float sigma = radius * factor;
            const float inverse = 1.0f / (2.0f * sigma * sigma);
            const float exponent = -(float)(dx * dx + dy * dy) * inverse;
            const float g = k[slice] * expf(exponent);
            value = value < g ? g : value;
        }
        out[index] = value;
    }
}

extern "C" int flg_draw_gaussians(int samples, int64_t max_elements, const int64_t *desc,
                                  const float *const *inputs, float *const *outputs,
                                  const uint8_t *const *active, const int32_t *const *class_ids,
                                  const int32_t *const *centers, const float *const *radii,
                                  const float *k, float radius_to_sigma_factor, void *stream) {
    if (samples == 0 || max_elements == 0) return 0;
    FLG_LAUNCH(flg_draw_gaussians_kernel, flg_grid(max_elements, samples), dim3(FLG_BLOCK),
               stream, desc, inputs, outputs, active, class_ids, centers, radii, k,
               radius_to_sigma_factor);
    return FLG_STATUS();
}
