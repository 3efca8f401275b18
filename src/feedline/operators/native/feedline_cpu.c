/* feedline's compiled CPU kernels: the hot loops of resampling and normalisation.
 *
 * Both kernels reproduce the NumPy reference implementations bit for bit: float32 arithmetic in
 * the same order (build with -ffp-contract=off), and DALI's saturating conversion to uint8
 * (add 0.5, clamp to [0, 255], truncate; NaN becomes 0). They hold no state and take no locks,
 * so any number of threads may call them at once; cffi releases the GIL around each call.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "feedline_cpu.h"

static inline uint8_t saturate_u8(float value) {
    value += 0.5f;
    value = value > 0.0f ? value : 0.0f; /* NaN becomes 0 */
    value = value < 255.0f ? value : 255.0f;
    return (uint8_t)(int)value;
}

/* Filters, numbered as fl_axis_weights takes them. */
enum {
    FILTER_NN = 0,
    FILTER_LINEAR = 1,
    FILTER_CUBIC = 2,
    FILTER_LANCZOS3 = 3,
    FILTER_GAUSSIAN = 4
};

static double filter_support(int filter) {
    switch (filter) {
        case FILTER_LINEAR: return 1.0;
        case FILTER_CUBIC: return 2.0;
        case FILTER_LANCZOS3: return 3.0;
        case FILTER_GAUSSIAN: return 2.0;
        default: return 0.5;
    }
}

static double sinc(double x) {
    if (x == 0.0) return 1.0;
    const double px = 3.14159265358979323846 * x;
    return sin(px) / px;
}

static double filter_value(int filter, double x) {
    const double ax = fabs(x);
    switch (filter) {
        case FILTER_LINEAR: return ax < 1.0 ? 1.0 - ax : 0.0;
        case FILTER_CUBIC: {
            const double a = -0.5;
            if (ax < 1.0) return ((a + 2) * ax - (a + 3)) * ax * ax + 1;
            if (ax < 2.0) return ((a * ax - 5 * a) * ax + 8 * a) * ax - 4 * a;
            return 0.0;
        }
        case FILTER_LANCZOS3: return ax < 3.0 ? sinc(x) * sinc(x / 3.0) : 0.0;
        default: return 0.0;
    }
}

/* DALI's Gaussian: exp(-x * x) for x in [-2, 2] at 65 points, read with linear interpolation
 * (zero one entry beyond either end). */
static float gaussian_table(float at) {
    if (!(at > -1.0f) || at >= 65.0f) return 0.0f;
    const int i0 = (int)floorf(at);
    const float d = at - (float)i0;
    const double x0 = (i0 - 32) / 16.0, x1 = (i0 - 31) / 16.0;
    const float f0 = i0 < 0 ? 0.0f : (float)exp(-x0 * x0);
    const float f1 = i0 + 1 > 64 ? 0.0f : (float)exp(-x1 * x1);
    return f0 + d * (f1 - f0);
}

/* The unnormalised taps of output j: the first (unclamped) source index in *base and
 * values[0 .. count), count returned (at most `capacity`). The Gaussian reproduces DALI 2.4's
 * float32 computation (see resample.py's gaussian_taps); the others are sampled at the taps'
 * distances from the output's centre, divided by `stretch`. */
static int raw_taps(int filter, double start, double scale, double stretch, int j, int capacity,
                    long long *base, double *values) {
    if (filter == FILTER_GAUSSIAN) {
        const float sigma = (float)((double)((float)stretch * 0.5f) / 1.41421356237309504880);
        float support = (float)(4 * 1.41421356237309504880) * sigma;
        support = support > 1.0f ? support : 1.0f;
        const float step = 64.0f / support, anchor = 32.0f / step;
        int count = (int)ceilf(64.0f / step);
        count = count < capacity ? count : capacity;
        const float origin = (float)start + 0.5f * (float)scale - 0.5f - anchor;
        const float position = (float)j * (float)scale + origin;
        const float first = ceilf(position);
        *base = (long long)first;
        for (int k = 0; k < count; ++k)
            values[k] = gaussian_table(((first - position) + (float)k) * step);
        return count;
    }
    const double centre = start + (j + 0.5) * scale;
    const double support = filter_support(filter) * stretch;
    int count = (int)ceil(2 * support) + 2;
    count = count < capacity ? count : capacity;
    *base = (long long)floor(centre - support - 0.5);
    for (int k = 0; k < count; ++k)
        values[k] = filter_value(filter, (*base + k + 0.5 - centre) / stretch);
    return count;
}

static int clamp_index(long long i, int size) {
    return i < 0 ? 0 : i >= size ? size - 1 : (int)i;
}

/* How much the filter is stretched: by the scale when antialiasing a downscale. */
static double filter_stretch(double scale, int antialias) {
    return antialias && fabs(scale) > 1.0 ? fabs(scale) : 1.0;
}

/* A bound on the taps fl_axis_weights returns: the size its `weights` needs per output. */
int fl_axis_max_taps(int in_size, int out_size, double start, double end, int filter,
                     int antialias) {
    if (filter == FILTER_NN) return 1;
    const double support =
        filter_support(filter) * filter_stretch((end - start) / out_size, antialias);
    const int taps = (int)ceil(2 * support) + 2;
    return taps < in_size ? taps : in_size;
}

/* The filter taps of one axis (see resample.py for the conventions): output j reads the
 * `taps` source positions first[j] .. first[j] + taps - 1 with weights[j * taps + k]. Taps
 * outside the image are folded onto the edge pixel; zero-weight taps at either end are dropped,
 * so `taps` is the widest non-zero span (at most in_size). Returns taps; -1 when max_taps is
 * too small, -2 when out of memory. `weights` must hold out_size * max_taps floats. */
int fl_axis_weights(int in_size, int out_size, double start, double end, int filter,
                    int antialias, int max_taps, int32_t *first, float *weights) {
    const double scale = (end - start) / out_size;
    if (filter == FILTER_NN) {
        const float start32 = (float)start, scale32 = (float)scale;
        for (int j = 0; j < out_size; ++j) {
            const float pos = start32 + ((float)j + 0.5f) * scale32;
            first[j] = clamp_index((long long)floorf(pos), in_size);
            weights[j] = 1.0f;
        }
        return 1;
    }
    const double stretch = filter_stretch(scale, antialias);
    const int capacity = (int)ceil(2 * filter_support(filter) * stretch) + 2;
    double *values = malloc((size_t)capacity * sizeof(double));
    if (values == NULL) return -2;
    long long base;
    int taps = 1;
    /* Pass 1: the widest span of non-zero taps after folding. */
    for (int j = 0; j < out_size; ++j) {
        const int count = raw_taps(filter, start, scale, stretch, j, capacity, &base, values);
        int lo = in_size, hi = -1;
        for (int k = 0; k < count; ++k) {
            if (values[k] == 0.0) continue;
            const int i = clamp_index(base + k, in_size);
            lo = i < lo ? i : lo;
            hi = i > hi ? i : hi;
        }
        if (hi >= lo && hi - lo + 1 > taps) taps = hi - lo + 1;
    }
    free(values);
    if (taps > max_taps) return -1;
    values = malloc(((size_t)capacity + (size_t)taps) * sizeof(double));
    if (values == NULL) return -2;
    double *folded = values + capacity;
    /* Pass 2: normalised, folded weights. */
    for (int j = 0; j < out_size; ++j) {
        const double centre = start + (j + 0.5) * scale;
        const int count = raw_taps(filter, start, scale, stretch, j, capacity, &base, values);
        double total = 0.0;
        int lo = in_size;
        for (int k = 0; k < count; ++k) {
            total += values[k];
            if (values[k] != 0.0) {
                const int i = clamp_index(base + k, in_size);
                lo = i < lo ? i : lo;
            }
        }
        float *w = weights + (ptrdiff_t)j * taps;
        for (int k = 0; k < taps; ++k) w[k] = 0.0f;
        if (total == 0.0) { /* no tap reaches: the nearest pixel */
            const int nearest = clamp_index((long long)floor(centre), in_size);
            first[j] = nearest < in_size - taps ? nearest : in_size - taps;
            w[nearest - first[j]] = 1.0f;
            continue;
        }
        first[j] = lo < in_size - taps ? lo : in_size - taps;
        for (int k = 0; k < taps; ++k) folded[k] = 0.0;
        for (int k = 0; k < count; ++k) {
            if (values[k] != 0.0) folded[clamp_index(base + k, in_size) - first[j]] += values[k];
        }
        for (int k = 0; k < taps; ++k) w[k] = (float)(folded[k] / total);
    }
    free(values);
    return taps;
}

/* One output row of the vertical pass: row[i] = sum_k weights[k] * src_{first + k}[i] over
 * `count` values, skipping taps whose weight is zero (their products are +0). */
static void vertical_row(const uint8_t *restrict src, ptrdiff_t src_stride, int first,
                         const float *restrict weights, int taps, size_t count,
                         float *restrict row) {
    const uint8_t *restrict line = src + (ptrdiff_t)first * src_stride;
    const float w0 = weights[0];
    for (size_t i = 0; i < count; ++i) row[i] = w0 * (float)line[i];
    for (int k = 1; k < taps; ++k) {
        const float w = weights[k];
        if (w == 0.0f) continue;
        line = src + (ptrdiff_t)(first + k) * src_stride;
        for (size_t i = 0; i < count; ++i) row[i] += w * (float)line[i];
    }
}

/* The horizontal pass over one row of single-channel pixels. */
static void horizontal_row1(const float *restrict row, float *restrict out, int out_w,
                            const int32_t *restrict first, const float *restrict weights,
                            int taps) {
    for (int x = 0; x < out_w; ++x) {
        const float *restrict w = weights + (ptrdiff_t)x * taps;
        const float *restrict p = row + first[x];
        float acc = w[0] * p[0];
        for (int k = 1; k < taps; ++k) acc += w[k] * p[k];
        out[x] = acc;
    }
}

/* Pixels of three or four channels (RGB, RGBX) as one 4-lane vector each (GCC/Clang vector
 * extensions). */
typedef float float4 __attribute__((vector_size(16)));
typedef int32_t int4 __attribute__((vector_size(16)));
typedef uint8_t uchar4 __attribute__((vector_size(4)));
typedef uint8_t uchar16 __attribute__((vector_size(16)));

/* saturate_u8 on four lanes at once. */
static inline uchar4 saturate4(float4 value) {
    const float4 zero = {0.0f, 0.0f, 0.0f, 0.0f}, top = {255.0f, 255.0f, 255.0f, 255.0f};
    value = value + 0.5f;
    int4 bits = (int4)value & (value > zero); /* NaN becomes 0 */
    const int4 below = (float4)bits < top;
    bits = (bits & below) | ((int4)top & ~below);
    const int4 whole = __builtin_convertvector((float4)bits, int4);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && (defined(__clang__) || __GNUC__ >= 12)
    /* Each lane is 0..255, so its first byte in memory is the value: one byte shuffle instead
     * of the four extractions GCC emits for a narrowing conversion. */
    const uchar16 bytes = (uchar16)whole;
    return __builtin_shufflevector(bytes, bytes, 0, 4, 8, 12);
#else
    return __builtin_convertvector(whole, uchar4);
#endif
}

/* One output pixel of the horizontal pass over a row of `stride`-float pixels (4: RGBX, 3: RGB),
 * each tap read as one 4-lane vector, saturated to four bytes (in memory order). For RGB the
 * fourth lane holds the next pixel's red, or the row's padding after the last pixel, and is
 * dropped. Inlined with constant `taps` and `stride` below so that the tap loop unrolls. */
static inline __attribute__((always_inline)) uint32_t horizontal_pixel4(
    const float *restrict row, int stride, int first, const float *restrict w, int taps) {
    const float *restrict p = row + (ptrdiff_t)first * stride;
    float4 acc, pixel;
    memcpy(&acc, p, sizeof acc);
    acc = acc * w[0];
    for (int k = 1; k < taps; ++k) {
        memcpy(&pixel, p + stride * k, sizeof pixel);
        acc = acc + pixel * w[k];
    }
    return (uint32_t)saturate4(acc);
}

/* The horizontal pass over one row of `stride`-float pixels into `out_channels` (3 or 4, at most
 * `stride`) bytes per pixel. */
static inline __attribute__((always_inline)) void horizontal_row4_body(
    const float *restrict row, int stride, uint8_t *restrict out, int out_channels, int out_w,
    const int32_t *restrict first, const float *restrict weights, int taps) {
    /* All four bytes of each pixel; the fourth is overwritten by the next pixel for RGB. */
    for (int x = 0; x + 1 < out_w; ++x) {
        const uint32_t bytes =
            horizontal_pixel4(row, stride, first[x], weights + (ptrdiff_t)x * taps, taps);
        memcpy(out + (ptrdiff_t)x * out_channels, &bytes, 4);
    }
    const int last = out_w - 1;
    const uint32_t bytes =
        horizontal_pixel4(row, stride, first[last], weights + (ptrdiff_t)last * taps, taps);
    uint8_t *o = out + (ptrdiff_t)last * out_channels;
    for (int ch = 0; ch < out_channels; ++ch) o[ch] = ((const uint8_t *)&bytes)[ch];
}

/* horizontal_row4_body for RGBX rows (`stride` 4) into RGB or RGBX bytes, and for RGB rows
 * (`stride` 3, followed by one float of padding) into RGB bytes. */
static void horizontal_row4(const float *restrict row, int stride, uint8_t *restrict out,
                            int out_channels, int out_w, const int32_t *restrict first,
                            const float *restrict weights, int taps) {
#define FIXED_TAPS(T)                                                                  \
    case T:                                                                            \
        if (stride == 3)                                                               \
            horizontal_row4_body(row, 3, out, 3, out_w, first, weights, T);            \
        else if (out_channels == 3)                                                    \
            horizontal_row4_body(row, 4, out, 3, out_w, first, weights, T);            \
        else                                                                           \
            horizontal_row4_body(row, 4, out, 4, out_w, first, weights, T);            \
        return;
    switch (taps) {
        FIXED_TAPS(1) FIXED_TAPS(2) FIXED_TAPS(3) FIXED_TAPS(4) FIXED_TAPS(5) FIXED_TAPS(6)
        FIXED_TAPS(7) FIXED_TAPS(8)
        default:
            horizontal_row4_body(row, stride, out, out_channels, out_w, first, weights, taps);
    }
#undef FIXED_TAPS
}

static void horizontal_row_any(const float *restrict row, float *restrict out, int out_w,
                               int channels, int out_channels, const int32_t *restrict first,
                               const float *restrict weights, int taps) {
    for (int x = 0; x < out_w; ++x) {
        const float *w = weights + (ptrdiff_t)x * taps;
        const float *p = row + (ptrdiff_t)first[x] * channels;
        float *o = out + (ptrdiff_t)x * out_channels;
        for (int ch = 0; ch < out_channels; ++ch) {
            float acc = w[0] * p[ch];
            for (int k = 1; k < taps; ++k) acc += w[k] * p[k * channels + ch];
            o[ch] = acc;
        }
    }
}

/* out[i] = saturate_u8(values[i]), written as a plain loop so that it vectorises. */
static void saturate_row(const float *restrict values, size_t count, uint8_t *restrict out) {
    for (size_t i = 0; i < count; ++i) out[i] = saturate_u8(values[i]);
}

/* Separable resampling of an interleaved 8-bit image, rows first, then columns.
 *
 * Output row y reads source rows row_first[y] .. + row_taps - 1 with row_weights[y * row_taps
 * + k] (from fl_axis_weights), output column x likewise with the col_* arrays. Each source row
 * holds `span` pixels of `channels` values; the first `out_channels` channels are written.
 * Returns 0, or -1 when the scratch row cannot be allocated. */
int fl_resample_u8(const uint8_t *src, ptrdiff_t src_stride, int channels, int span,
                   uint8_t *dst, ptrdiff_t dst_stride, int out_h, int out_w, int out_channels,
                   const int32_t *row_first, int row_taps, const float *row_weights,
                   const int32_t *col_first, int col_taps, const float *col_weights) {
    const size_t count = (size_t)span * (size_t)channels;
    const size_t out_count = (size_t)out_w * (size_t)out_channels;
    /* The row, one float of padding (read as the last RGB pixel's fourth lane), and the
     * horizontal pass's `channels` values per pixel before any are dropped. */
    float *row = malloc((count + 1 + (size_t)out_w * (size_t)channels) * sizeof(float));
    if (row == NULL) return -1;
    row[count] = 0.0f;
    float *result = row + count + 1;
    const int vector_pixels =
        (channels == 4 && (out_channels == 3 || out_channels == 4)) ||
        (channels == 3 && out_channels == 3);
    for (int y = 0; y < out_h; ++y) {
        vertical_row(src, src_stride, row_first[y], row_weights + (ptrdiff_t)y * row_taps,
                     row_taps, count, row);
        uint8_t *restrict out = dst + (ptrdiff_t)y * dst_stride;
        if (vector_pixels) {
            horizontal_row4(row, channels, out, out_channels, out_w, col_first, col_weights,
                            col_taps);
            continue;
        }
        if (channels == 1 && out_channels == 1) {
            horizontal_row1(row, result, out_w, col_first, col_weights, col_taps);
        } else {
            horizontal_row_any(row, result, out_w, channels, out_channels, col_first, col_weights,
                               col_taps);
        }
        saturate_row(result, out_count, out);
    }
    free(row);
    return 0;
}

/* to[x] = from[width - 1 - x] */
static void reversed_copy(const float *restrict from, float *restrict to, int width) {
    const float *restrict last = from + width - 1;
    for (int x = 0; x < width; ++x) to[x] = last[-x];
}

/* One row of 3-channel pixels to three planes; the channel loop is unrolled so the compiler
 * vectorises the interleaved loads (mirrored rows are written to `scratch`, then reversed). */
static void planar_row3(const uint8_t *restrict line, int width, const float *restrict gain,
                        const float *restrict centre, float *restrict r, float *restrict g,
                        float *restrict b) {
    const float g0 = gain[0], g1 = gain[1], g2 = gain[2];
    const float c0 = centre[0], c1 = centre[1], c2 = centre[2];
    for (int x = 0; x < width; ++x) {
        r[x] = ((float)line[3 * x] - c0) * g0;
        g[x] = ((float)line[3 * x + 1] - c1) * g1;
        b[x] = ((float)line[3 * x + 2] - c2) * g2;
    }
}

/* out = (in - centre[c]) * gain[c] (DALI's order of operations, so the float32 results are
 * DALI's) for a window of an interleaved 8-bit image, optionally mirrored
 * horizontally, written as float32 HWC (planar = 0) or CHW (planar = 1) with `out_channels`
 * channels; channels beyond `channels` are set to `fill`. */
void fl_normalize_u8(const uint8_t *src, ptrdiff_t src_stride, int height, int width,
                     int channels, int mirror, const float *gain, const float *centre,
                     float *dst, int planar, int out_channels, float fill) {
    const ptrdiff_t plane = (ptrdiff_t)height * width;
    float *scratch = mirror && planar ? malloc((size_t)width * 3 * sizeof(float)) : NULL;
    for (int y = 0; y < height; ++y) {
        const uint8_t *line = src + (ptrdiff_t)y * src_stride;
        if (planar && channels == 3 && out_channels == 3) {
            float *r = dst + (ptrdiff_t)y * width, *g = r + plane, *b = g + plane;
            if (mirror && scratch != NULL) {
                planar_row3(line, width, gain, centre, scratch, scratch + width,
                            scratch + 2 * width);
                reversed_copy(scratch, r, width);
                reversed_copy(scratch + width, g, width);
                reversed_copy(scratch + 2 * width, b, width);
                continue;
            }
            if (!mirror) {
                planar_row3(line, width, gain, centre, r, g, b);
                continue;
            }
        }
        if (planar) {
            for (int c = 0; c < channels; ++c) {
                float *out = dst + c * plane + (ptrdiff_t)y * width;
                const float g = gain[c], o = centre[c];
                if (mirror) {
                    for (int x = 0; x < width; ++x)
                        out[x] = ((float)line[(ptrdiff_t)(width - 1 - x) * channels + c] - o) * g;
                } else {
                    for (int x = 0; x < width; ++x)
                        out[x] = ((float)line[(ptrdiff_t)x * channels + c] - o) * g;
                }
            }
            for (int c = channels; c < out_channels; ++c) {
                float *out = dst + c * plane + (ptrdiff_t)y * width;
                for (int x = 0; x < width; ++x) out[x] = fill;
            }
        } else {
            float *out = dst + (ptrdiff_t)y * width * out_channels;
            for (int x = 0; x < width; ++x) {
                const uint8_t *px = line + (ptrdiff_t)(mirror ? width - 1 - x : x) * channels;
                float *o = out + (ptrdiff_t)x * out_channels;
                for (int c = 0; c < channels; ++c) o[c] = ((float)px[c] - centre[c]) * gain[c];
                for (int c = channels; c < out_channels; ++c) o[c] = fill;
            }
        }
    }
    free(scratch);
}
