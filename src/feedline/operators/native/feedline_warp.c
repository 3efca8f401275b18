/* feedline's compiled perspective warp: `experimental.warp_perspective` of uint8 images with
 * linear interpolation, as OpenCV 5's warpPerspective (float32 maps; 4.x's fixed-point ones
 * are another computation, which the caller's probe tells apart).
 *
 * OpenCV maps each output pixel (x, y) through the 3x3 matrix M (destination to source, in
 * float32 from OpenCV's double matrix) in blocks of `block` pixels of a row: per row the
 * constants y * M[1] + M[2], y * M[4] + M[5] and y * M[7] + M[8] (fused or not, `fused_row`);
 * per pixel sx = fma(M[0], x, .), sy = fma(M[3], x, .), sw = fma(M[6], x, .), then sx / sw and
 * sy / sw; the integer part is floor's, the weights alpha and beta the remainders. A pixel is
 * v0 + beta * (v1 - v0) with v0 and v1 the rows' p0 + alpha * (p1 - p0), fused, rounded to
 * nearest even and saturated (NaN gives 0). Taps outside the image read `fill` (the constant
 * border; a block with no pixel within one pixel of the image is filled with it) or the pixel
 * OpenCV's border index gives (replicate, reflect, reflect_101, wrap). The last
 * (width % block) pixels of a row take OpenCV's scalar code: its own arithmetic for the
 * coordinates (`tail`: 0 unfused, 1 fma(x, M[6], y * M[7]) + M[8], 2 fma(y, M[7], x * M[6])
 * + M[8]), its interpolation fused or not (`fused_tail`), and (constant border) the fill for a
 * pixel whose taps are all outside. The caller measures which of these the installed OpenCV
 * computes.
 *
 * Here each 8 pixels whose taps are all inside (and at least two rows above the last, so the
 * bytes a load reads past them stay in the image) load each row's two taps at once and take
 * their channels apart in vector registers, where OpenCV copies every tap byte to a buffer,
 * 32 pixels at a time where they can; the others read tap by tap. Built only with AVX2 and
 * FMA: elsewhere fl_warp_perspective_u8 returns -3.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "feedline_cpu.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#define INLINE static inline __attribute__((always_inline))

enum { CONSTANT = 0, REPLICATE = 1, REFLECT = 2, WRAP = 3, REFLECT_101 = 4 }; /* OpenCV's */

/* Beyond this distance from the image a tap makes OpenCV's reflection loop long or its wrap
 * overflow: the kernel gives up (-2) and the caller calls OpenCV. */
#define FAR (1 << 24)

typedef struct {
    const uint8_t *src;
    ptrdiff_t step;
    int rows, cols, channels;
    int border, border_x, border_y; /* a border of one column or row replicates */
    uint8_t fill_bytes[4];
    uint32_t fill; /* the fill's channels, channel c in byte c */
    int *too_far;
} Source;

/* OpenCV's index of position p (|p| <= FAR) on an axis of `length` for a border other than
 * the constant: what its loop of reflections, or its wrap, gives, as one fold. */
static int border_index(int p, int length, int border) {
    if ((unsigned)p < (unsigned)length) return p;
    if (border == REPLICATE) return p < 0 ? 0 : length - 1;
    if (border == WRAP) return (p % length + length) % length;
    const int period = border == REFLECT ? 2 * length : 2 * length - 2; /* length >= 2 */
    const int folded = (p % period + period) % period;
    return folded < length ? folded : period - 1 - folded + (border == REFLECT ? 0 : 1);
}

/* Bilinear interpolation of one channel, 8 lanes of the four taps, as OpenCV's vector code:
 * rounded to int32 (NaN: INT32_MIN, which the packs below saturate to 0). */
INLINE __m256i interpolate(__m256 alpha, __m256 beta, __m256 p00, __m256 p01, __m256 p10,
                           __m256 p11) {
    const __m256 v0 = _mm256_fmadd_ps(alpha, _mm256_sub_ps(p01, p00), p00);
    const __m256 v1 = _mm256_fmadd_ps(alpha, _mm256_sub_ps(p11, p10), p10);
    return _mm256_cvtps_epi32(_mm256_fmadd_ps(beta, _mm256_sub_ps(v1, v0), v0));
}

/* Byte c of each 32-bit lane as a float. */
INLINE __m256 channel(__m256i pixels, const int c) {
    const __m256i pick = _mm256_add_epi32(_mm256_set1_epi32((int)(0xFFFFFF00u | (uint32_t)c)),
                                          _mm256_setr_epi32(0, 4, 8, 12, 0, 4, 8, 12));
    return _mm256_cvtepi32_ps(_mm256_shuffle_epi8(pixels, pick));
}

/* 8 interpolated pixels of `cn` channels (as int32 in `out`) from the taps' pixels (channel c
 * in byte c of each 32-bit lane). */
INLINE void blend(__m256 alpha, __m256 beta, __m256i p00, __m256i p01, __m256i p10, __m256i p11,
                  const int cn, __m256i *out) {
    for (int c = 0; c < cn; ++c)
        out[c] = interpolate(alpha, beta, channel(p00, c), channel(p01, c), channel(p10, c),
                             channel(p11, c));
}

/* 8 pixels of `cn` int32 channels (each 0 to 255, or INT32_MIN for 0), interleaved into
 * `out` as bytes: signed packs to 16 bits saturate as OpenCV's, the values being in range. */
INLINE void store8(const __m256i *v, const int cn, uint8_t *out) {
    if (cn == 1) {
        const __m256i words = _mm256_packus_epi32(v[0], v[0]);
        const __m256i bytes = _mm256_packus_epi16(words, words);
        const uint32_t low = (uint32_t)_mm256_extract_epi32(bytes, 0);
        const uint32_t high = (uint32_t)_mm256_extract_epi32(bytes, 4);
        memcpy(out, &low, 4);
        memcpy(out + 4, &high, 4);
        return;
    }
    const __m256i last = cn == 4 ? v[3] : v[2];
    /* per 128-bit half (4 pixels): r0..r3 g0..g3 b0..b3 then a0..a3 (or b0..b3 again) */
    const __m256i bytes =
        _mm256_packus_epi16(_mm256_packus_epi32(v[0], v[1]), _mm256_packus_epi32(v[2], last));
    if (cn == 4) {
        const __m256i order = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11,
                                               15, 0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7,
                                               11, 15);
        _mm256_storeu_si256((__m256i *)out, _mm256_shuffle_epi8(bytes, order));
        return;
    }
    const __m256i order = _mm256_setr_epi8(0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11, -1, -1, -1, -1,
                                           0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11, -1, -1, -1, -1);
    const __m256i packed = _mm256_shuffle_epi8(bytes, order);
    const __m128i low = _mm256_castsi256_si128(packed);
    const __m128i high = _mm256_extracti128_si256(packed, 1);
    const int low_tail = _mm_extract_epi32(low, 2), high_tail = _mm_extract_epi32(high, 2);
    _mm_storel_epi64((__m128i *)out, low);
    memcpy(out + 8, &low_tail, 4);
    _mm_storel_epi64((__m128i *)(out + 12), high);
    memcpy(out + 20, &high_tail, 4);
}

/* One tap's pixel (channel c in byte c of a 32-bit value): the image's, or the fill. */
INLINE uint32_t tap(const Source *s, int ix, int iy, const int cn) {
    if ((unsigned)ix >= (unsigned)s->cols || (unsigned)iy >= (unsigned)s->rows) {
        if (s->border == CONSTANT) return s->fill;
        if (ix < -FAR || ix > FAR || iy < -FAR || iy > FAR) {
            *s->too_far = 1;
            return 0;
        }
        ix = border_index(ix, s->cols, s->border_x);
        iy = border_index(iy, s->rows, s->border_y);
    }
    const uint8_t *p = s->src + iy * s->step + (ptrdiff_t)ix * cn;
    uint32_t v = p[0];
    for (int c = 1; c < cn; ++c) v |= (uint32_t)p[c] << (8 * c);
    return v;
}

/* 8 pixels whose taps may lie outside: their taps one by one. */
INLINE void blend_outside(const Source *s, __m256i ix, __m256i iy, __m256 alpha, __m256 beta,
                          const int cn, __m256i *out) {
    int32_t xs[8], ys[8];
    uint32_t taps[4][8];
    _mm256_storeu_si256((__m256i *)xs, ix);
    _mm256_storeu_si256((__m256i *)ys, iy);
    for (int i = 0; i < 8; ++i) {
        taps[0][i] = tap(s, xs[i], ys[i], cn);
        taps[1][i] = tap(s, xs[i] + 1, ys[i], cn);
        taps[2][i] = tap(s, xs[i], ys[i] + 1, cn);
        taps[3][i] = tap(s, xs[i] + 1, ys[i] + 1, cn);
    }
    blend(alpha, beta, _mm256_loadu_si256((const __m256i *)taps[0]),
          _mm256_loadu_si256((const __m256i *)taps[1]),
          _mm256_loadu_si256((const __m256i *)taps[2]),
          _mm256_loadu_si256((const __m256i *)taps[3]), cn, out);
}

/* The low 32 bits of each 64-bit lane of two vectors (pixels 0-3, then 4-7) as 8 lanes in
 * pixel order. */
INLINE __m256i low_dwords(__m256i first, __m256i second) {
    const __m256 mixed =
        _mm256_shuffle_ps(_mm256_castsi256_ps(first), _mm256_castsi256_ps(second), 0x88);
    return _mm256_permute4x64_epi64(_mm256_castps_si256(mixed), 0xD8);
}

INLINE uint64_t load64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

INLINE uint32_t load32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* 8 pixels whose taps are all inside, two rows or more above the last: each pixel's two taps
 * of a row in one load (the bytes past them, at most two, belong to the image). */
INLINE void blend_inside(const Source *s, __m256i ix, __m256i iy, __m256 alpha, __m256 beta,
                         const int cn, __m256i *out) {
    int32_t offset[8];
    _mm256_storeu_si256((__m256i *)offset,
                        _mm256_add_epi32(_mm256_mullo_epi32(iy, _mm256_set1_epi32((int)s->step)),
                                         _mm256_mullo_epi32(ix, _mm256_set1_epi32(cn))));
    const uint8_t *base = s->src;
    const ptrdiff_t step = s->step;
    __m256i p00, p01, p10, p11;
    if (cn == 1) {
        const uint8_t *q[8];
        for (int i = 0; i < 8; ++i) q[i] = base + offset[i];
        const __m256i top = _mm256_setr_epi32(
            (int)load32(q[0]), (int)load32(q[1]), (int)load32(q[2]), (int)load32(q[3]),
            (int)load32(q[4]), (int)load32(q[5]), (int)load32(q[6]), (int)load32(q[7]));
        const __m256i bottom = _mm256_setr_epi32(
            (int)load32(q[0] + step), (int)load32(q[1] + step), (int)load32(q[2] + step),
            (int)load32(q[3] + step), (int)load32(q[4] + step), (int)load32(q[5] + step),
            (int)load32(q[6] + step), (int)load32(q[7] + step));
        p00 = top;
        p01 = _mm256_srli_epi32(top, 8);
        p10 = bottom;
        p11 = _mm256_srli_epi32(bottom, 8);
    } else {
        __m256i top[2], bottom[2];
        for (int h = 0; h < 2; ++h) {
            const uint8_t *q0 = base + offset[4 * h], *q1 = base + offset[4 * h + 1],
                          *q2 = base + offset[4 * h + 2], *q3 = base + offset[4 * h + 3];
            top[h] = _mm256_setr_epi64x((long long)load64(q0), (long long)load64(q1),
                                        (long long)load64(q2), (long long)load64(q3));
            bottom[h] =
                _mm256_setr_epi64x((long long)load64(q0 + step), (long long)load64(q1 + step),
                                   (long long)load64(q2 + step), (long long)load64(q3 + step));
        }
        const int shift = 8 * cn;
        p00 = low_dwords(top[0], top[1]);
        p01 = low_dwords(_mm256_srli_epi64(top[0], shift), _mm256_srli_epi64(top[1], shift));
        p10 = low_dwords(bottom[0], bottom[1]);
        p11 = low_dwords(_mm256_srli_epi64(bottom[0], shift), _mm256_srli_epi64(bottom[1], shift));
    }
    blend(alpha, beta, p00, p01, p10, p11, cn, out);
}

/* OpenCV's scalar pixel (the row's last width % block pixels). */
static void tail_pixel(const Source *s, const float *M, int x, int y, int tail, int fused,
                       uint8_t *out) {
    const float fx = (float)x, fy = (float)y;
    float w, u, v;
    if (tail == 0) {
        w = fx * M[6] + fy * M[7] + M[8];
        u = fx * M[0] + fy * M[1] + M[2];
        v = fx * M[3] + fy * M[4] + M[5];
    } else if (tail == 1) {
        w = fmaf(fx, M[6], fy * M[7]) + M[8];
        u = fmaf(fx, M[0], fy * M[1]) + M[2];
        v = fmaf(fx, M[3], fy * M[4]) + M[5];
    } else {
        w = fmaf(fy, M[7], fx * M[6]) + M[8];
        u = fmaf(fy, M[1], fx * M[0]) + M[2];
        v = fmaf(fy, M[4], fx * M[3]) + M[5];
    }
    float sx = u / w, sy = v / w;
    /* NaN and values beyond int32 (undefined in C) as the hardware converts them */
    const int ixc = sx >= -2147483648.f && sx < 2147483648.f ? (int)floorf(sx) : INT32_MIN;
    const int iyc = sy >= -2147483648.f && sy < 2147483648.f ? (int)floorf(sy) : INT32_MIN;
    if (s->border == CONSTANT && ((unsigned)(ixc + 1u) >= (unsigned)(s->cols + 1) ||
                                  (unsigned)(iyc + 1u) >= (unsigned)(s->rows + 1))) {
        memcpy(out, s->fill_bytes, (size_t)s->channels);
        return;
    }
    sx -= (float)ixc;
    sy -= (float)iyc;
    const int cn = s->channels;
    const uint32_t taps[4] = {tap(s, ixc, iyc, cn), tap(s, ixc + 1, iyc, cn),
                              tap(s, ixc, iyc + 1, cn), tap(s, ixc + 1, iyc + 1, cn)};
    for (int c = 0; c < s->channels; ++c) {
        const float p00 = (float)((taps[0] >> (8 * c)) & 0xFF);
        const float p01 = (float)((taps[1] >> (8 * c)) & 0xFF);
        const float p10 = (float)((taps[2] >> (8 * c)) & 0xFF);
        const float p11 = (float)((taps[3] >> (8 * c)) & 0xFF);
        float v0, v1;
        if (fused) {
            v0 = fmaf(sx, p01 - p00, p00);
            v1 = fmaf(sx, p11 - p10, p10);
            v0 = fmaf(sy, v1 - v0, v0);
        } else {
            v0 = p00 + sx * (p01 - p00);
            v1 = p10 + sx * (p11 - p10);
            v0 += sy * (v1 - v0);
        }
        const int r = _mm_cvtss_si32(_mm_set_ss(v0));
        out[c] = (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
    }
}

/* What every row of a warp shares. */
typedef struct {
    float M[9];
    int width, block, fused_row, tail, fused_tail;
} Warp;

/* Unsigned a < b for every lane, with signed compares. */
INLINE __m256i below_unsigned(__m256i a, __m256i b) {
    const __m256i sign = _mm256_set1_epi32(INT32_MIN);
    return _mm256_cmpgt_epi32(_mm256_xor_si256(b, sign), _mm256_xor_si256(a, sign));
}

/* The source coordinates of output pixels x to x + 7 of a row. */
typedef struct {
    __m256i ix, iy;
    __m256 alpha, beta;
} Group;

typedef struct {
    __m256 m0, m3, m6, cx, cy, cw;
} RowMap;

INLINE Group map_group(const RowMap *r, int x) {
    const __m256 dx =
        _mm256_add_ps(_mm256_set1_ps((float)x), _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256 sw = _mm256_fmadd_ps(r->m6, dx, r->cw);
    const __m256 sx = _mm256_div_ps(_mm256_fmadd_ps(r->m0, dx, r->cx), sw);
    const __m256 sy = _mm256_div_ps(_mm256_fmadd_ps(r->m3, dx, r->cy), sw);
    Group g;
    g.ix = _mm256_cvttps_epi32(_mm256_floor_ps(sx));
    g.iy = _mm256_cvttps_epi32(_mm256_floor_ps(sy));
    g.alpha = _mm256_sub_ps(sx, _mm256_cvtepi32_ps(g.ix));
    g.beta = _mm256_sub_ps(sy, _mm256_cvtepi32_ps(g.iy));
    return g;
}

/* Whether any pixel of the block at x has a tap inside the image (OpenCV fills a block where
 * none has). */
static int block_touches(const Source *s, const RowMap *r, int x, int block) {
    const __m256i one = _mm256_set1_epi32(1);
    const __m256i cols = _mm256_set1_epi32(s->cols + 1), rows = _mm256_set1_epi32(s->rows + 1);
    for (int g = 0; g < block; g += 8) {
        const Group m = map_group(r, x + g);
        const __m256i near = _mm256_and_si256(below_unsigned(_mm256_add_epi32(m.ix, one), cols),
                                              below_unsigned(_mm256_add_epi32(m.iy, one), rows));
        if (!_mm256_testz_si256(near, near)) return 1;
    }
    return 0;
}

INLINE int all_inside(const Group *g, __m256i inner_cols, __m256i inner_rows) {
    const __m256i inside =
        _mm256_and_si256(below_unsigned(g->ix, inner_cols), below_unsigned(g->iy, inner_rows));
    return _mm256_movemask_ps(_mm256_castsi256_ps(inside)) == 0xFF;
}

/* RUN groups of 8 pixels at a time where all their taps are inside (independent work the CPU
 * overlaps: about 1.25x faster than a group at a time). */
enum { RUN = 4 };

/* Output pixels x to x + 8 * RUN - 1 if all their taps are inside (then 1), else nothing. */
INLINE int run_inside(const Source *s, const RowMap *r, int x, __m256i inner_cols,
                      __m256i inner_rows, uint8_t *row, const int cn) {
    Group g[RUN];
    int inside = 1;
    for (int i = 0; i < RUN; ++i) {
        g[i] = map_group(r, x + 8 * i);
        inside &= all_inside(&g[i], inner_cols, inner_rows);
    }
    if (!inside) return 0;
    __m256i v[RUN][4];
    for (int i = 0; i < RUN; ++i)
        blend_inside(s, g[i].ix, g[i].iy, g[i].alpha, g[i].beta, cn, v[i]);
    for (int i = 0; i < RUN; ++i) store8(v[i], cn, row + (ptrdiff_t)(x + 8 * i) * cn);
    return 1;
}

/* Output row y (`cn` channels). */
INLINE void warp_row(const Source *s, const Warp *w, int y, uint8_t *row, const int cn) {
    const float *M = w->M;
    const float fy = (float)y;
    RowMap r;
    r.m0 = _mm256_set1_ps(M[0]);
    r.m3 = _mm256_set1_ps(M[3]);
    r.m6 = _mm256_set1_ps(M[6]);
    r.cx = _mm256_set1_ps(w->fused_row ? fmaf(fy, M[1], M[2]) : fy * M[1] + M[2]);
    r.cy = _mm256_set1_ps(w->fused_row ? fmaf(fy, M[4], M[5]) : fy * M[4] + M[5]);
    r.cw = _mm256_set1_ps(w->fused_row ? fmaf(fy, M[7], M[8]) : fy * M[7] + M[8]);
    const __m256i inner_cols = _mm256_set1_epi32(s->cols - 1);
    const __m256i inner_rows = _mm256_set1_epi32(s->rows - 2 > 0 ? s->rows - 2 : 0);
    const int body = w->width - w->width % w->block;
    int touched_block = -1, touches = 0;
    for (int x = 0; x < body; x += 8) {
        if (x + 8 * RUN <= body && run_inside(s, &r, x, inner_cols, inner_rows, row, cn)) {
            x += 8 * (RUN - 1);
            continue;
        }
        const Group g = map_group(&r, x);
        __m256i v[4];
        if (all_inside(&g, inner_cols, inner_rows)) {
            blend_inside(s, g.ix, g.iy, g.alpha, g.beta, cn, v);
        } else {
            const int block = x - x % w->block;
            if (block != touched_block) {
                touched_block = block;
                touches = s->border != CONSTANT || block_touches(s, &r, block, w->block);
            }
            if (touches) {
                blend_outside(s, g.ix, g.iy, g.alpha, g.beta, cn, v);
            } else {
                for (int c = 0; c < cn; ++c) v[c] = _mm256_set1_epi32(s->fill_bytes[c]);
            }
        }
        store8(v, cn, row + (ptrdiff_t)x * cn);
    }
    for (int x = body; x < w->width; ++x)
        tail_pixel(s, M, x, y, w->tail, w->fused_tail, row + (ptrdiff_t)x * cn);
}

int fl_warp_perspective_u8(const uint8_t *src, ptrdiff_t src_row, int src_h, int src_w,
                           int channels, uint8_t *dst, ptrdiff_t dst_row, int dst_h, int dst_w,
                           const double *matrix, int border, const uint8_t *fill, int block,
                           int fused_row, int tail, int fused_tail) {
    if (src_h <= 0 || src_w <= 0 || dst_h <= 0 || dst_w <= 0) return -1;
    if (block != 8 && block != 16 && block != 32) return -1;
    if (channels != 1 && channels != 3 && channels != 4) return -1;
    if ((double)src_row * src_h >= 2147483647.0) return -1;
    if (border < CONSTANT || border > REFLECT_101) return -1;
    int too_far = 0;
    const int edge = border == CONSTANT ? CONSTANT : REPLICATE;
    Source s = {src, src_row, src_h, src_w, channels, border, src_w <= 1 ? edge : border,
                src_h <= 1 ? edge : border, {0, 0, 0, 0}, 0, &too_far};
    memcpy(s.fill_bytes, fill, (size_t)channels);
    for (int c = 0; c < channels; ++c) s.fill |= (uint32_t)fill[c] << (8 * c);
    Warp w = {{0}, dst_w, block, fused_row, tail, fused_tail};
    for (int i = 0; i < 9; ++i) w.M[i] = (float)matrix[i];
    for (int y = 0; y < dst_h; ++y) {
        uint8_t *row = dst + y * dst_row;
        if (channels == 1)
            warp_row(&s, &w, y, row, 1);
        else if (channels == 3)
            warp_row(&s, &w, y, row, 3);
        else
            warp_row(&s, &w, y, row, 4);
        if (too_far) return -2;
    }
    return 0;
}

#else

int fl_warp_perspective_u8(const uint8_t *src, ptrdiff_t src_row, int src_h, int src_w,
                           int channels, uint8_t *dst, ptrdiff_t dst_row, int dst_h, int dst_w,
                           const double *matrix, int border, const uint8_t *fill, int block,
                           int fused_row, int tail, int fused_tail) {
    (void)src, (void)src_row, (void)src_h, (void)src_w, (void)channels, (void)dst, (void)dst_row;
    (void)dst_h, (void)dst_w, (void)matrix, (void)border, (void)fill, (void)block;
    (void)fused_row, (void)tail, (void)fused_tail;
    return -3;
}

#endif
