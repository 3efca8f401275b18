/* feedline's compiled spectrogram: framing, window, real FFT and power in one call.
 *
 * The windows of a signal are transformed LANES at a time, each SIMD lane holding one window
 * (GCC/Clang vector extensions, so the same code builds for any target: 8 lanes in an AVX
 * register on x86-64-v3, 4 in an SSE or NEON one elsewhere). A real FFT of nfft = 2M points is a
 * complex FFT of M points on the even (real part) and odd (imaginary part) samples, loaded in
 * bit-reversed order while the window is applied, followed by an iterative radix-2 pass and the
 * usual split into the real transform (X[k] = E[k] + W^k O[k]). The power (or magnitude) of each
 * bin is written straight into the output: frequency-major, a bin's LANES windows are
 * consecutive there, so no transposing copy is needed.
 *
 * Twiddles are computed in double precision and stored as float by fl_spectrogram_plan into
 * arrays the caller keeps; fl_spectrogram_f32 only reads them and allocates its own scratch, so
 * calls are re-entrant and run in parallel (cffi releases the GIL around them).
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "feedline_cpu.h"

/* One register's worth of windows per block, so that the vector extensions lower to single
 * instructions on the target the library is built for (AVX-512's 16 lanes measured slower than
 * 8: a wider gather of samples, more idle lanes in the last block). */
#if defined(__AVX__)
#define LANES 8
#else
#define LANES 4
#endif
typedef float lanes_t __attribute__((vector_size(LANES * sizeof(float))));

static int is_power_of_two(int n) { return n >= 2 && (n & (n - 1)) == 0; }

int fl_spectrogram_plan(int nfft, float *twiddles, int32_t *reverse) {
    if (!is_power_of_two(nfft)) return -1;
    const int m = nfft / 2;
    const double pi = 3.14159265358979323846;
    /* The complex FFT's twiddles exp(-2 pi i k / m), k < m / 2, then the real split's
     * exp(-2 pi i k / nfft), k < m. */
    for (int k = 0; k < m / 2; ++k) {
        twiddles[k] = (float)cos(2 * pi * k / m);
        twiddles[m / 2 + k] = (float)-sin(2 * pi * k / m);
    }
    for (int k = 0; k < m; ++k) {
        twiddles[m + k] = (float)cos(2 * pi * k / nfft);
        twiddles[2 * m + k] = (float)-sin(2 * pi * k / nfft);
    }
    int bits = 0;
    while ((1 << bits) < m) ++bits;
    for (int i = 0; i < m; ++i) {
        int r = 0;
        for (int b = 0; b < bits; ++b) r |= ((i >> b) & 1) << (bits - 1 - b);
        reverse[i] = r;
    }
    return 0;
}

/* Where sample p of the padded signal comes from: mirrored about the edges without repeating
 * them (numpy's "reflect", periodic for pads longer than the signal; a one-sample signal
 * repeats), or -1 for a zero. */
static int64_t padded_index(int64_t p, int64_t length, int reflect) {
    if (p >= 0 && p < length) return p;
    if (!reflect || length == 0) return -1;
    if (length == 1) return 0;
    const int64_t period = 2 * (length - 1);
    int64_t q = p % period;
    if (q < 0) q += period;
    return q < length ? q : period - q;
}

/* The window of LANES frames starting at `starts`, times `window`, as M complex values (even
 * samples real, odd imaginary) in bit-reversed order; zeros past the window. */
static void load_frames(const float *const *frames, const float *window, int window_length,
                        int m, const int32_t *reverse, lanes_t *re, lanes_t *im) {
    const int pairs = window_length / 2;
    for (int j = 0; j < pairs; ++j) {
        const int t = 2 * j;
        const float w0 = window[t], w1 = window[t + 1];
        lanes_t even, odd;
        for (int l = 0; l < LANES; ++l) {
            even[l] = frames[l][t] * w0;
            odd[l] = frames[l][t + 1] * w1;
        }
        re[reverse[j]] = even;
        im[reverse[j]] = odd;
    }
    const lanes_t zero = {0};
    int j = pairs;
    if (window_length % 2) {
        const int t = window_length - 1;
        lanes_t even;
        for (int l = 0; l < LANES; ++l) even[l] = frames[l][t] * window[t];
        re[reverse[j]] = even;
        im[reverse[j]] = zero;
        ++j;
    }
    for (; j < m; ++j) {
        re[reverse[j]] = zero;
        im[reverse[j]] = zero;
    }
}

/* In-place radix-2 decimation-in-time FFT of m points (input bit-reversed). */
static void complex_fft(lanes_t *re, lanes_t *im, int m, const float *cos_k, const float *sin_k) {
    if (m >= 2) {
        for (int g = 0; g < m; g += 2) {
            const lanes_t ar = re[g], ai = im[g], br = re[g + 1], bi = im[g + 1];
            re[g] = ar + br;
            im[g] = ai + bi;
            re[g + 1] = ar - br;
            im[g + 1] = ai - bi;
        }
    }
    for (int half = 2; half < m; half *= 2) {
        const int stride = m / (2 * half);
        for (int k = 0; k < half; ++k) {
            const float wr = cos_k[k * stride], wi = sin_k[k * stride];
            for (int g = k; g < m; g += 2 * half) {
                const lanes_t br = re[g + half], bi = im[g + half];
                const lanes_t tr = br * wr - bi * wi, ti = br * wi + bi * wr;
                const lanes_t ar = re[g], ai = im[g];
                re[g] = ar + tr;
                im[g] = ai + ti;
                re[g + half] = ar - tr;
                im[g + half] = ai - ti;
            }
        }
    }
}

/* Writes bin k's LANES values (the first `valid`) to the output. */
static void store_bin(const lanes_t *power_lanes, int power, int frequency_major, float *out, int64_t count,
                      int bins, int64_t first, int valid, int k) {
    lanes_t value = *power_lanes;
    if (power == 1) {
        for (int l = 0; l < LANES; ++l) value[l] = sqrtf(value[l]);
    }
    if (frequency_major) {
        float *row = out + (int64_t)k * count + first;
        if (valid == LANES) {
            memcpy(row, &value, sizeof value);
        } else {
            for (int l = 0; l < valid; ++l) row[l] = value[l];
        }
    } else {
        float *column = out + first * bins + k;
        for (int l = 0; l < valid; ++l) column[(int64_t)l * bins] = value[l];
    }
}

/* The real transform's bins 0..m from the complex FFT of the packed samples, stored. */
static void store_spectrum(const lanes_t *re, const lanes_t *im, int m, const float *cos_k,
                           const float *sin_k, int power, int frequency_major, float *out,
                           int64_t count, int64_t first, int valid) {
    const int bins = m + 1;
    const lanes_t dc = re[0] + im[0], nyquist = re[0] - im[0];
    const lanes_t dc2 = dc * dc, nyquist2 = nyquist * nyquist;
    store_bin(&dc2, power, frequency_major, out, count, bins, first, valid, 0);
    store_bin(&nyquist2, power, frequency_major, out, count, bins, first, valid, m);
    for (int k = 1; k < m; ++k) {
        const lanes_t zr = re[k], zi = im[k], cr = re[m - k], ci = -im[m - k];
        /* E = (Z[k] + conj Z[m-k]) / 2, O = (Z[k] - conj Z[m-k]) / 2i, X = E + W^k O. */
        const lanes_t er = 0.5f * (zr + cr), ei = 0.5f * (zi + ci);
        const lanes_t or_ = 0.5f * (zi - ci), oi = -0.5f * (zr - cr);
        const float wr = cos_k[k], wi = sin_k[k];
        const lanes_t xr = er + (or_ * wr - oi * wi), xi = ei + (or_ * wi + oi * wr);
        const lanes_t power_k = xr * xr + xi * xi;
        store_bin(&power_k, power, frequency_major, out, count, bins, first, valid, k);
    }
}

int fl_spectrogram_f32(const float *signal, int64_t length, const float *window,
                       int window_length, int64_t step, int nfft, int centered, int reflect,
                       int power, int frequency_major, const float *twiddles,
                       const int32_t *reverse, int64_t count, float *out) {
    if (!is_power_of_two(nfft) || window_length < 1 || window_length > nfft || step < 1 ||
        (power != 1 && power != 2))
        return -1;
    const int m = nfft / 2;
    lanes_t *work = aligned_alloc(sizeof(lanes_t), 2 * (size_t)m * sizeof(lanes_t));
    float *edges = malloc((size_t)LANES * window_length * sizeof(float));
    if (!work || !edges) {
        free(work);
        free(edges);
        return -1;
    }
    lanes_t *re = work, *im = work + m;
    const int64_t offset = centered ? window_length / 2 : 0;
    for (int64_t first = 0; first < count; first += LANES) {
        const int valid = count - first < LANES ? (int)(count - first) : LANES;
        const float *frames[LANES];
        for (int l = 0; l < LANES; ++l) {
            /* Lanes past the last window repeat the block's first one; they are not stored. */
            const int64_t start = (first + (l < valid ? l : 0)) * step - offset;
            if (start >= 0 && start + window_length <= length) {
                frames[l] = signal + start;
                continue;
            }
            float *edge = edges + (size_t)l * window_length;
            for (int t = 0; t < window_length; ++t) {
                const int64_t source = padded_index(start + t, length, reflect);
                edge[t] = source < 0 ? 0.0f : signal[source];
            }
            frames[l] = edge;
        }
        load_frames(frames, window, window_length, m, reverse, re, im);
        complex_fft(re, im, m, twiddles, twiddles + m / 2);
        store_spectrum(re, im, m, twiddles + m, twiddles + 2 * m, power, frequency_major, out,
                       count, first, valid);
    }
    free(work);
    free(edges);
    return 0;
}
