/* feedline's compiled 2-D filter: `filter` of uint8 images into uint8, as OpenCV's filter2D.
 *
 * OpenCV's filter2D correlates 8-bit images with a float kernel in single precision: for each
 * output value, the taps that are not zero in row-major order, the first one's product, then
 * each further product added, the sum rounded to nearest even and saturated (a sum at or beyond
 * 2^31, or NaN, gives 0: the conversion's "integer indefinite" saturates there). Whether
 * a product is added with a fused multiply-add depends on the SIMD code OpenCV runs on this CPU
 * (fused with AVX2 or NEON), and the last (row length mod 4) values of a row take its scalar
 * code, unfused on x86. The caller measures which way reproduces the installed OpenCV and
 * passes it: `fused` products for a row's values before `tail_from`, unfused ones after.
 *
 * Borders are the caller's: `rows` maps each padded row (height + taps_h - 1 of them) and
 * `cols` each padded column (width + taps_w - 1) to a source row/column, -1 meaning `fill`;
 * padded column j >= lead and < lead + width is source column j - lead. Each source row needed
 * is converted to float once into a small ring of padded rows; each output value then reads
 * its taps from there. Built only with AVX2 and FMA (x86-64-v3 or a newer -march=native):
 * elsewhere fl_filter_u8 returns -3 and the caller keeps OpenCV.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "feedline_cpu.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

enum { BLOCK = 64, STORE = 32 };

#define INLINE static inline __attribute__((always_inline))

/* 32 float sums into `out` (`count` <= 32 bytes) as OpenCV converts them: rounded to nearest
 * even (the default rounding mode) with "integer indefinite" (INT32_MIN) for NaN and sums
 * beyond int32, then saturated to int16 and to uint8 (so those give 0). */
INLINE void store_u8(__m256 a0, __m256 a1, __m256 a2, __m256 a3, uint8_t *out, int count) {
    const __m256i words =
        _mm256_packus_epi16(_mm256_packs_epi32(_mm256_cvtps_epi32(a0), _mm256_cvtps_epi32(a1)),
                            _mm256_packs_epi32(_mm256_cvtps_epi32(a2), _mm256_cvtps_epi32(a3)));
    const __m256i bytes =
        _mm256_permutevar8x32_epi32(words, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    if (count == STORE) {
        _mm256_storeu_si256((__m256i *)out, bytes);
    } else {
        uint8_t staged[STORE];
        _mm256_storeu_si256((__m256i *)staged, bytes);
        memcpy(out, staged, (size_t)count);
    }
}

/* Output values [x, end) of a row from the `nz` taps' source pointers and weights, in blocks
 * of 64 (8 independent sums of 8 lanes hide the multiply-add latency; the last block may be
 * partial: the rows have 64 floats of slack). */
#define DEFINE_ROW(name, ADD)                                                                   \
    static void name(const float *const *taps, const float *weights, int nz, int x, int end, \
                     uint8_t *out) {                                                        \
        for (; x < end; x += BLOCK) {                                                       \
            const float *p = taps[0] + x;                                                   \
            const __m256 w0 = _mm256_set1_ps(weights[0]);                                   \
            __m256 a[8];                                                                    \
            for (int i = 0; i < 8; ++i) a[i] = _mm256_mul_ps(_mm256_loadu_ps(p + 8 * i), w0); \
            for (int k = 1; k < nz; ++k) {                                                  \
                const float *q = taps[k] + x;                                               \
                const __m256 w = _mm256_set1_ps(weights[k]);                                \
                for (int i = 0; i < 8; ++i) a[i] = ADD(_mm256_loadu_ps(q + 8 * i), w, a[i]); \
            }                                                                               \
            const int left = end - x;                                                       \
            store_u8(a[0], a[1], a[2], a[3], out + x, left < STORE ? left : STORE);         \
            if (left > STORE)                                                               \
                store_u8(a[4], a[5], a[6], a[7], out + x + STORE,                           \
                         left - STORE < STORE ? left - STORE : STORE);                      \
        }                                                                                   \
    }
#define FUSED(v, w, a) _mm256_fmadd_ps((v), (w), (a))
#define UNFUSED(v, w, a) _mm256_add_ps((a), _mm256_mul_ps((v), (w)))
DEFINE_ROW(row_fused, FUSED)
DEFINE_ROW(row_unfused, UNFUSED)

/* Padded row `index` (-1: all `fill`) as floats into `out`. */
static void pad_row(const uint8_t *src, ptrdiff_t src_row, int32_t index, const int32_t *cols,
                    int padded, int lead, int width, int channels, float fill, float *out) {
    if (index < 0) {
        for (ptrdiff_t i = 0; i < (ptrdiff_t)padded * channels; ++i) out[i] = fill;
        return;
    }
    const uint8_t *row = src + index * src_row;
    const ptrdiff_t inner = (ptrdiff_t)width * channels;
    float *middle = out + (ptrdiff_t)lead * channels;
    for (ptrdiff_t i = 0; i < inner; ++i) middle[i] = (float)row[i];
    for (int j = 0; j < padded; ++j) {
        if (j == lead) j += width;
        if (j >= padded) break;
        float *d = out + (ptrdiff_t)j * channels;
        if (cols[j] < 0) {
            for (int c = 0; c < channels; ++c) d[c] = fill;
        } else {
            const uint8_t *s = row + (ptrdiff_t)cols[j] * channels;
            for (int c = 0; c < channels; ++c) d[c] = (float)s[c];
        }
    }
}

/* The ring slot holding padded row `index`, filled now if no slot holds it: a slot whose row
 * no tap of the current output row needs is reused. */
static const float *ring_row(int32_t index, const int32_t *needed, int taps_h, int32_t *tags,
                             float *ring, size_t stride, const uint8_t *src, ptrdiff_t src_row,
                             const int32_t *cols, int padded, int lead, int width, int channels,
                             float fill) {
    for (int s = 0; s < taps_h; ++s)
        if (tags[s] == index) return ring + stride * (size_t)s;
    int slot = 0;
    for (; slot < taps_h; ++slot) {
        int used = 0;
        for (int r = 0; r < taps_h && !used; ++r) used = tags[slot] == needed[r];
        if (!used) break;
    }
    float *row = ring + stride * (size_t)slot;
    pad_row(src, src_row, index, cols, padded, lead, width, channels, fill, row);
    tags[slot] = index;
    return row;
}

int fl_filter_u8(const uint8_t *src, ptrdiff_t src_row, int height, int width, int channels,
                 const int32_t *rows, const int32_t *cols, int lead, const float *taps,
                 int taps_h, int taps_w, float fill, int fused, int tail_from, uint8_t *dst,
                 ptrdiff_t dst_row) {
    if (height <= 0 || width <= 0 || channels <= 0 || taps_h <= 0 || taps_w <= 0) return -1;
    const int padded = width + taps_w - 1;
    const size_t stride = (size_t)padded * (size_t)channels;
    const int count = taps_h * taps_w;
    float *ring = calloc(stride * (size_t)taps_h + BLOCK, sizeof(float));
    int32_t *tags = malloc(sizeof(int32_t) * (size_t)taps_h);
    const float **pointers = malloc(sizeof(float *) * (size_t)count);
    float *weights = malloc(sizeof(float) * (size_t)count);
    const float **row_of = malloc(sizeof(float *) * (size_t)taps_h);
    int status = -2;
    if (ring == NULL || tags == NULL || pointers == NULL || weights == NULL || row_of == NULL)
        goto done;
    for (int s = 0; s < taps_h; ++s) tags[s] = INT32_MIN;
    const int n = width * channels;
    const int body = fused ? (tail_from < n ? tail_from : n) : 0;
    for (int y = 0; y < height; ++y) {
        const int32_t *needed = rows + y;
        for (int r = 0; r < taps_h; ++r)
            row_of[r] = ring_row(needed[r], needed, taps_h, tags, ring, stride, src, src_row,
                                 cols, padded, lead, width, channels, fill);
        int nz = 0;
        for (int r = 0; r < taps_h; ++r)
            for (int c = 0; c < taps_w; ++c) {
                const float w = taps[r * taps_w + c];
                if (w == 0.f) continue;
                pointers[nz] = row_of[r] + (ptrdiff_t)c * channels;
                weights[nz++] = w;
            }
        uint8_t *out = dst + y * dst_row;
        if (nz == 0) {
            memset(out, 0, (size_t)n);
            continue;
        }
        if (body > 0) row_fused(pointers, weights, nz, 0, body, out);
        if (body < n) row_unfused(pointers, weights, nz, body, n, out);
    }
    status = 0;
done:
    free(ring);
    free(tags);
    free(pointers);
    free(weights);
    free(row_of);
    return status;
}

#else

int fl_filter_u8(const uint8_t *src, ptrdiff_t src_row, int height, int width, int channels,
                 const int32_t *rows, const int32_t *cols, int lead, const float *taps,
                 int taps_h, int taps_w, float fill, int fused, int tail_from, uint8_t *dst,
                 ptrdiff_t dst_row) {
    (void)src, (void)src_row, (void)height, (void)width, (void)channels, (void)rows, (void)cols;
    (void)lead, (void)taps, (void)taps_h, (void)taps_w, (void)fill, (void)fused, (void)dst;
    (void)tail_from, (void)dst_row;
    return -3;
}

#endif
