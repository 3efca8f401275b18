/* feedline's compiled histogram kernel: equalize's per-channel histogram equalization.
 *
 * For each plane of channel-interleaved uint8 pixels it gives every channel the result of
 * OpenCV's equalizeHist on that channel alone (which DALI's CPU equalize runs after splitting
 * the channels), bit for bit: the channels' histograms in one pass over the pixels, OpenCV's
 * lookup table per channel, and the tables applied in a second pass. Stateless and lock-free;
 * cffi releases the GIL around each call.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "feedline_cpu.h"

enum { BINS = 256, MAX_CHANNELS = 512 };

/* OpenCV's equalizeHist table for a channel of `total` pixels with histogram `hist`: the first
 * occupied bin `first` maps to 0 and bin j > first to cumsum(first + 1 .. j) * scale rounded
 * to nearest even and saturated, scale = 255 / (total - hist[first]), all in single precision
 * as OpenCV computes it (int * float). A one-valued channel keeps its value. Bins below
 * `first` hold no pixel; they map to 0. */
static void equalization_table(const uint32_t *hist, uint32_t total, uint8_t *lut) {
    int first = 0;
    while (first < BINS && hist[first] == 0) ++first;
    if (first == BINS) { /* no pixels: nothing reads the table */
        memset(lut, 0, BINS);
        return;
    }
    if (hist[first] == total) {
        memset(lut, first, BINS);
        return;
    }
    const float scale = 255.f / (float)(int32_t)(total - hist[first]);
    memset(lut, 0, (size_t)first + 1);
    int32_t sum = 0;
    for (int j = first + 1; j < BINS; ++j) {
        sum += (int32_t)hist[j];
        const long value = lrintf((float)sum * scale);
        lut[j] = (uint8_t)(value < 0 ? 0 : value > 255 ? 255 : value);
    }
}

/* Counts of `channels`-channel pixels into `copies` histograms per channel: pixel k's channel c
 * lands in hist[((k % copies) * channels + c) * BINS], so runs of equal values do not chain
 * one increment's store to the next one's load. Inlined with constant `channels` and `copies`
 * for the common channel counts. */
static inline __attribute__((always_inline)) void count_rows(
    const uint8_t *src, ptrdiff_t row_stride, int64_t height, int64_t width, int channels,
    int copies, uint32_t *hist) {
    for (int64_t y = 0; y < height; ++y) {
        const uint8_t *p = src + y * row_stride;
        int64_t x = 0;
        for (; x + copies <= width; x += copies) {
            for (int k = 0; k < copies; ++k, p += channels) {
                uint32_t *h = hist + (size_t)k * channels * BINS;
                for (int c = 0; c < channels; ++c) h[c * BINS + p[c]]++;
            }
        }
        for (; x < width; ++x, p += channels) {
            for (int c = 0; c < channels; ++c) hist[c * BINS + p[c]]++;
        }
    }
}

static inline __attribute__((always_inline)) void apply_rows(
    const uint8_t *src, ptrdiff_t src_row, uint8_t *dst, ptrdiff_t dst_row, int64_t height,
    int64_t width, int channels, const uint8_t *lut) {
    for (int64_t y = 0; y < height; ++y) {
        const uint8_t *s = src + y * src_row;
        uint8_t *d = dst + y * dst_row;
        for (int64_t x = 0; x < width; ++x, s += channels, d += channels) {
            for (int c = 0; c < channels; ++c) d[c] = lut[c * BINS + s[c]];
        }
    }
}

/* One plane: histograms (into `hist`, `copies` x channels x BINS, zeroed here), tables (into
 * `lut`, channels x BINS), output. */
static void equalize_plane(const uint8_t *src, ptrdiff_t src_row, uint8_t *dst, ptrdiff_t dst_row,
                           int64_t height, int64_t width, int channels, uint32_t *hist,
                           uint8_t *lut) {
    const int copies = channels == 1 ? 4 : channels <= 4 ? 2 : 1;
    memset(hist, 0, sizeof(uint32_t) * (size_t)copies * channels * BINS);
    switch (channels) {
    case 1: count_rows(src, src_row, height, width, 1, 4, hist); break;
    case 2: count_rows(src, src_row, height, width, 2, 2, hist); break;
    case 3: count_rows(src, src_row, height, width, 3, 2, hist); break;
    case 4: count_rows(src, src_row, height, width, 4, 2, hist); break;
    default: count_rows(src, src_row, height, width, channels, 1, hist); break;
    }
    const uint32_t total = (uint32_t)(height * width);
    for (int c = 0; c < channels; ++c) {
        uint32_t *merged = hist + (size_t)c * BINS;
        for (int k = 1; k < copies; ++k) {
            const uint32_t *other = hist + ((size_t)k * channels + c) * BINS;
            for (int b = 0; b < BINS; ++b) merged[b] += other[b];
        }
        equalization_table(merged, total, lut + (size_t)c * BINS);
    }
    switch (channels) {
    case 1: apply_rows(src, src_row, dst, dst_row, height, width, 1, lut); break;
    case 2: apply_rows(src, src_row, dst, dst_row, height, width, 2, lut); break;
    case 3: apply_rows(src, src_row, dst, dst_row, height, width, 3, lut); break;
    case 4: apply_rows(src, src_row, dst, dst_row, height, width, 4, lut); break;
    default: apply_rows(src, src_row, dst, dst_row, height, width, channels, lut); break;
    }
}

int fl_equalize_u8(const uint8_t *src, ptrdiff_t src_plane, ptrdiff_t src_row, uint8_t *dst,
                   ptrdiff_t dst_plane, ptrdiff_t dst_row, int64_t planes, int64_t height,
                   int64_t width, int channels) {
    if (channels < 1 || channels > MAX_CHANNELS || height < 0 || width < 0 || planes < 0 ||
        (width > 0 && height > INT32_MAX / width))
        return -1;
    if (planes == 0 || height == 0 || width == 0) return 0;
    uint32_t small_hist[4 * 4 * BINS];
    uint8_t small_lut[4 * BINS];
    uint32_t *hist = small_hist;
    uint8_t *lut = small_lut;
    if (channels > 4) {
        hist = malloc(sizeof(uint32_t) * (size_t)channels * BINS);
        lut = malloc((size_t)channels * BINS);
        if (hist == NULL || lut == NULL) {
            free(hist);
            free(lut);
            return -2;
        }
    }
    for (int64_t p = 0; p < planes; ++p) {
        equalize_plane(src + p * src_plane, src_row, dst + p * dst_plane, dst_row, height, width,
                       channels, hist, lut);
    }
    if (channels > 4) {
        free(hist);
        free(lut);
    }
    return 0;
}
