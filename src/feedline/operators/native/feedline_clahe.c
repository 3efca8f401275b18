/* feedline's compiled CLAHE kernel: OpenCV's contrast-limited adaptive histogram equalization
 * (createCLAHE(clip, (tiles_x, tiles_y)).apply on 8-bit images), bit for bit, on one or all
 * channels of a channel-interleaved uint8 image, in place or into another image.
 *
 * OpenCV's rules, followed step by step: when the image does not divide into the tile grid it
 * is padded at the bottom and right by BORDER_REFLECT_101 to the next multiple of the grid on
 * both axes (a whole extra row or column of tiles' worth where one axis already divides); each
 * tile's histogram of that padded image is clipped at max(1, (int)(clip * tile_area / 256)),
 * the clipped count is spread evenly with the residual added every max(256 / residual, 1)
 * bins from bin 0; a tile's table is the running sum times 255.f / tile_area, rounded to
 * nearest even; a pixel of the (unpadded) image blends the tables of its four nearest tiles
 * with single-precision weights, ((t11 * xa1 + t12 * xa) * ya1 + (t21 * xa1 + t22 * xa) * ya),
 * each product rounded on its own (the library builds with -ffp-contract=off), rounded to
 * nearest even and saturated. fl_clahe_lab_u8 runs DALI's luma_only recipe on an RGB image in
 * one call: it converts to Lab planes (feedline_lab.c), equalizes L and converts each row back
 * as soon as its L is blended. Stateless and lock-free; cffi releases the GIL around each call.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "feedline_cpu.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

enum { BINS = 256 };

/* OpenCV's BORDER_REFLECT_101 source index of padded position p (>= 0) on an axis of
 * `length`. */
static int reflect_101(int p, int length) {
    if (length == 1) return 0;
    while (p >= length || p < 0) p = p < 0 ? -p : 2 * (length - 1) - p;
    return p;
}

/* The histograms of one row of tiles of a channel's values `plane` (1 byte a pixel, rows
 * `plane_row` bytes apart; `tiles_x` x BINS counts in `hist`, zeroed here): padded
 * rows row0 .. row0 + tile_h - 1, padded columns 0 .. tiles_x * tile_w - 1. Even and odd
 * columns count into two copies (the second at hist + tiles_x * BINS) that are summed at the
 * end, so runs of equal values do not chain one increment to the next. */
static void count_tile_row(const uint8_t *plane, ptrdiff_t plane_row, int height, int width,
                           int row0, int tile_h, int tile_w, int tiles_x, uint32_t *hist) {
    uint32_t *odd = hist + (size_t)tiles_x * BINS;
    memset(hist, 0, sizeof(uint32_t) * 2 * (size_t)tiles_x * BINS);
    for (int r = row0; r < row0 + tile_h; ++r) {
        const uint8_t *row = plane + (ptrdiff_t)reflect_101(r, height) * plane_row;
        for (int tx = 0; tx < tiles_x; ++tx) {
            uint32_t *even_h = hist + (size_t)tx * BINS;
            uint32_t *odd_h = odd + (size_t)tx * BINS;
            const int start = tx * tile_w;
            const int end = start + tile_w;
            const int inside = end < width ? end : width;
            int x = start;
            for (; x + 1 < inside; x += 2) {
                even_h[row[x]]++;
                odd_h[row[x + 1]]++;
            }
            for (; x < inside; ++x) even_h[row[x]]++;
            for (x = start > width ? start : width; x < end; ++x)
                even_h[row[reflect_101(x, width)]]++;
        }
    }
    for (size_t i = 0; i < (size_t)tiles_x * BINS; ++i) hist[i] += odd[i];
}

/* OpenCV's table of one tile from its histogram: clip at `limit` (> 0), spread the excess,
 * then the running sum times `scale`, rounded to nearest even and saturated. */
static void tile_table(uint32_t *hist, int limit, float scale, uint8_t *table) {
    int clipped = 0;
    for (int i = 0; i < BINS; ++i) {
        if ((int)hist[i] > limit) {
            clipped += (int)hist[i] - limit;
            hist[i] = (uint32_t)limit;
        }
    }
    const int batch = clipped / BINS;
    int residual = clipped - batch * BINS;
    for (int i = 0; i < BINS; ++i) hist[i] += (uint32_t)batch;
    if (residual != 0) {
        const int step = BINS / residual > 1 ? BINS / residual : 1;
        for (int i = 0; i < BINS && residual > 0; i += step, residual--) hist[i]++;
    }
    int sum = 0;
    for (int i = 0; i < BINS; ++i) {
        sum += (int)hist[i];
        const long value = lrintf((float)sum * scale);
        table[i] = (uint8_t)(value < 0 ? 0 : value > 255 ? 255 : value);
    }
}

/* One output row: pixel x with value v blends the four bytes of quad[band[x] + v] (the tables
 * of its top-left, top-right, bottom-left and bottom-right tiles at v, lowest byte first) with
 * weights xa1[x], xa[x] (columns) and ya1, ya (rows). `values` holds the row's values of the
 * channel, contiguous; `out` receives the results. */
static void blend_row(const uint8_t *values, int width, const uint32_t *quad,
                      const int32_t *band, const float *xa, const float *xa1, float ya,
                      float ya1, uint8_t *out) {
    int x = 0;
#if defined(__AVX2__)
    const __m256 vya = _mm256_set1_ps(ya), vya1 = _mm256_set1_ps(ya1);
    const __m256i low = _mm256_set1_epi32(0xFF);
    for (; x + 8 <= width; x += 8) {
        const __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(values + x)));
        const __m256i at = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(band + x)), v);
        const __m256i w = _mm256_i32gather_epi32((const int *)quad, at, 4);
        const __m256 t11 = _mm256_cvtepi32_ps(_mm256_and_si256(w, low));
        const __m256 t12 = _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(w, 8), low));
        const __m256 t21 = _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(w, 16), low));
        const __m256 t22 = _mm256_cvtepi32_ps(_mm256_srli_epi32(w, 24));
        const __m256 w1 = _mm256_loadu_ps(xa1 + x), w2 = _mm256_loadu_ps(xa + x);
        const __m256 t1 = _mm256_add_ps(_mm256_mul_ps(t11, w1), _mm256_mul_ps(t12, w2));
        const __m256 t2 = _mm256_add_ps(_mm256_mul_ps(t21, w1), _mm256_mul_ps(t22, w2));
        const __m256 res = _mm256_add_ps(_mm256_mul_ps(t1, vya1), _mm256_mul_ps(t2, vya));
        const __m256i n = _mm256_cvtps_epi32(res); /* nearest even; values lie in [0, 255] */
        const __m128i n16 =
            _mm_packs_epi32(_mm256_castsi256_si128(n), _mm256_extracti128_si256(n, 1));
        _mm_storel_epi64((__m128i *)(out + x), _mm_packus_epi16(n16, n16));
    }
#endif
    for (; x < width; ++x) {
        const uint32_t w = quad[band[x] + values[x]];
        const float t1 = (float)(w & 0xFF) * xa1[x] + (float)(w >> 8 & 0xFF) * xa[x];
        const float t2 = (float)(w >> 16 & 0xFF) * xa1[x] + (float)(w >> 24) * xa[x];
        const long n = lrintf(t1 * ya1 + t2 * ya);
        out[x] = (uint8_t)(n < 0 ? 0 : n > 255 ? 255 : n);
    }
}

/* Copies channel values s[0], s[channels], ... of `width` pixels to `values` (or back, with
 * `scatter`), inlined with constant `channels` for the common counts. */
static inline __attribute__((always_inline)) void move_channel(uint8_t *strided, uint8_t *values,
                                                               int width, int channels,
                                                               int scatter) {
    for (int x = 0; x < width; ++x) {
        if (scatter)
            strided[(ptrdiff_t)x * channels] = values[x];
        else
            values[x] = strided[(ptrdiff_t)x * channels];
    }
}

static void gather_channel(const uint8_t *strided, uint8_t *values, int width, int channels) {
    uint8_t *from = (uint8_t *)strided; /* only read */
    switch (channels) {
    case 3: move_channel(from, values, width, 3, 0); break;
    case 4: move_channel(from, values, width, 4, 0); break;
    default: move_channel(from, values, width, channels, 0); break;
    }
}

static void scatter_channel(uint8_t *strided, uint8_t *values, int width, int channels) {
    switch (channels) {
    case 3: move_channel(strided, values, width, 3, 1); break;
    case 4: move_channel(strided, values, width, 4, 1); break;
    default: move_channel(strided, values, width, channels, 1); break;
    }
}

/* The tile grid of one image size, its tables and the per-column interpolation weights.
 * Column x lies between the tiles of its column band (band[x] / BINS: 0 left of the first
 * tile's centre, tiles_x right of the last one's, b between tiles b - 1 and b); `quad` holds,
 * for the row band of rows quad_top and quad_bottom, each column band's four tables at each
 * value packed in one word. */
typedef struct {
    int height, width, tiles_x, tiles_y, tile_w, tile_h, limit;
    float scale;
    uint8_t *tables; /* tiles_y x tiles_x x BINS */
    uint32_t *hist;  /* 2 x tiles_x x BINS */
    uint32_t *quad;  /* (tiles_x + 1) x BINS */
    int quad_top, quad_bottom;
    int32_t *band;
    float *xa, *xa1;
} Plan;

static void plan_free(Plan *plan) {
    free(plan->tables), free(plan->hist), free(plan->quad), free(plan->band), free(plan->xa);
}

/* 0, -1 (bad arguments, OpenCV's int arithmetic would overflow) or -2 (no memory). */
static int plan_init(Plan *plan, int height, int width, int tiles_x, int tiles_y,
                     double clip_limit) {
    memset(plan, 0, sizeof *plan);
    if (height < 1 || width < 1 || tiles_x < 1 || tiles_y < 1 || !(clip_limit > 0)) return -1;
    const int divides = width % tiles_x == 0 && height % tiles_y == 0;
    const int64_t padded_w = divides ? width : (int64_t)width + tiles_x - width % tiles_x;
    const int64_t padded_h = divides ? height : (int64_t)height + tiles_y - height % tiles_y;
    const int64_t tile_w = padded_w / tiles_x, tile_h = padded_h / tiles_y;
    if (tile_w * tile_h > INT32_MAX || (int64_t)tiles_x * tiles_y * BINS > INT32_MAX) return -1;
    const int area = (int)(tile_w * tile_h);
    const double limit_value = clip_limit * area / BINS;
    if (!(limit_value < 2147483648.0)) return -1; /* OpenCV's int conversion overflows */
    *plan = (Plan){.height = height, .width = width, .tiles_x = tiles_x, .tiles_y = tiles_y,
                   .tile_w = (int)tile_w, .tile_h = (int)tile_h,
                   .limit = (int)limit_value > 1 ? (int)limit_value : 1,
                   .scale = 255.0f / (float)area};
    plan->tables = malloc((size_t)tiles_x * tiles_y * BINS);
    plan->hist = malloc(sizeof(uint32_t) * 2 * (size_t)tiles_x * BINS);
    plan->quad = malloc(sizeof(uint32_t) * ((size_t)tiles_x + 1) * BINS);
    plan->band = malloc(sizeof(int32_t) * (size_t)width);
    plan->xa = malloc(sizeof(float) * 2 * (size_t)width);
    if (plan->tables == NULL || plan->hist == NULL || plan->quad == NULL || plan->band == NULL ||
        plan->xa == NULL) {
        plan_free(plan);
        return -2;
    }
    plan->quad_top = plan->quad_bottom = -1;
    plan->xa1 = plan->xa + width;
    const float inv_tw = 1.0f / (float)tile_w;
    for (int x = 0; x < width; ++x) {
        const float txf = (float)x * inv_tw - 0.5f;
        const int tx1 = (int)floorf(txf);
        plan->xa[x] = txf - (float)tx1;
        plan->xa1[x] = 1.0f - plan->xa[x];
        plan->band[x] = (tx1 + 1) * BINS; /* -1 <= tx1 <= tiles_x - 1 */
    }
    return 0;
}

/* The tiles' tables of one channel's values `plane` (1 byte a pixel, rows `plane_row` apart). */
static void plan_tables(Plan *plan, const uint8_t *plane, ptrdiff_t plane_row) {
    plan->quad_top = plan->quad_bottom = -1; /* the packed tables are another channel's */
    for (int ty = 0; ty < plan->tiles_y; ++ty) {
        count_tile_row(plane, plane_row, plan->height, plan->width, ty * plan->tile_h,
                       plan->tile_h, plan->tile_w, plan->tiles_x, plan->hist);
        for (int tx = 0; tx < plan->tiles_x; ++tx) {
            tile_table(plan->hist + (size_t)tx * BINS, plan->limit, plan->scale,
                       plan->tables + ((size_t)ty * plan->tiles_x + tx) * BINS);
        }
    }
}

/* Packs the tables of tile rows `top` and `bottom` into plan->quad. */
static void plan_quad(Plan *plan, int top, int bottom) {
    const int tiles_x = plan->tiles_x;
    for (int b = 0; b <= tiles_x; ++b) {
        const int left = b > 0 ? b - 1 : 0, right = b < tiles_x ? b : tiles_x - 1;
        const uint8_t *t11 = plan->tables + ((size_t)top * tiles_x + left) * BINS;
        const uint8_t *t12 = plan->tables + ((size_t)top * tiles_x + right) * BINS;
        const uint8_t *t21 = plan->tables + ((size_t)bottom * tiles_x + left) * BINS;
        const uint8_t *t22 = plan->tables + ((size_t)bottom * tiles_x + right) * BINS;
        uint32_t *q = plan->quad + (size_t)b * BINS;
        for (int v = 0; v < BINS; ++v)
            q[v] = (uint32_t)t11[v] | (uint32_t)t12[v] << 8 | (uint32_t)t21[v] << 16 |
                   (uint32_t)t22[v] << 24;
    }
    plan->quad_top = top;
    plan->quad_bottom = bottom;
}

/* Row y of the result from that row's values `values` into `out` (both contiguous). */
static void plan_blend_row(Plan *plan, int y, const uint8_t *values, uint8_t *out) {
    const float tyf = (float)y * (1.0f / (float)plan->tile_h) - 0.5f;
    int ty1 = (int)floorf(tyf);
    int ty2 = ty1 + 1;
    const float ya = tyf - (float)ty1, ya1 = 1.0f - ya;
    ty1 = ty1 > 0 ? ty1 : 0;
    ty2 = ty2 < plan->tiles_y - 1 ? ty2 : plan->tiles_y - 1;
    if (ty1 != plan->quad_top || ty2 != plan->quad_bottom) plan_quad(plan, ty1, ty2);
    blend_row(values, plan->width, plan->quad, plan->band, plan->xa, plan->xa1, ya, ya1, out);
}

int fl_clahe_u8(const uint8_t *src, ptrdiff_t src_row, uint8_t *dst, ptrdiff_t dst_row,
                int height, int width, int channels, int channel, int tiles_x, int tiles_y,
                double clip_limit) {
    if (channels < 1 || channel >= channels || channel < -1) return -1;
    Plan plan;
    const int status = plan_init(&plan, height, width, tiles_x, tiles_y, clip_limit);
    if (status != 0) return status;
    /* a channel of a multi-channel image is first copied out, then results go a row at a time */
    const size_t plane_bytes = channels == 1 ? 0 : (size_t)height * width;
    uint8_t *scratch = malloc(plane_bytes + (size_t)width);
    if (scratch == NULL) {
        plan_free(&plan);
        return -2;
    }
    uint8_t *results = scratch + plane_bytes;
    const int first = channel < 0 ? 0 : channel;
    const int last = channel < 0 ? channels - 1 : channel;
    for (int c = first; c <= last; ++c) {
        const uint8_t *plane = src;
        ptrdiff_t plane_row = src_row;
        if (channels != 1) {
            for (int y = 0; y < height; ++y)
                gather_channel(src + (ptrdiff_t)y * src_row + c, scratch + (size_t)y * width,
                               width, channels);
            plane = scratch;
            plane_row = width;
        }
        plan_tables(&plan, plane, plane_row);
        for (int y = 0; y < height; ++y) {
            uint8_t *d = dst + (ptrdiff_t)y * dst_row;
            plan_blend_row(&plan, y, plane + (ptrdiff_t)y * plane_row, channels == 1 ? d : results);
            if (channels != 1) scatter_channel(d + c, results, width, channels);
        }
    }
    plan_free(&plan);
    free(scratch);
    return 0;
}

int fl_clahe_lab_u8(const uint8_t *src, ptrdiff_t src_row, uint8_t *dst, ptrdiff_t dst_row,
                    int height, int width, int tiles_x, int tiles_y, double clip_limit) {
    Plan plan;
    const int status = plan_init(&plan, height, width, tiles_x, tiles_y, clip_limit);
    if (status != 0) return status;
    const size_t pixels = (size_t)height * width;
    uint8_t *planes = malloc(3 * pixels + (size_t)width); /* L, a, b, one row of the new L */
    if (planes == NULL) {
        plan_free(&plan);
        return -2;
    }
    uint8_t *l = planes, *a = planes + pixels, *b = planes + 2 * pixels, *row = b + pixels;
    for (int y = 0; y < height; ++y) {
        const size_t at = (size_t)y * width;
        fl_rgb_to_lab_u8(src + (ptrdiff_t)y * src_row, width, l + at, a + at, b + at);
    }
    plan_tables(&plan, l, width);
    for (int y = 0; y < height; ++y) {
        const size_t at = (size_t)y * width;
        plan_blend_row(&plan, y, l + at, row);
        fl_lab_to_rgb_u8(row, a + at, b + at, width, dst + (ptrdiff_t)y * dst_row);
    }
    plan_free(&plan);
    free(planes);
    return 0;
}
