/* feedline's compiled speech front end: the spectrogram (framing, window, real FFT and power in
 * one call), pre-emphasis, the mel filter bank's sparse product and decibels.
 *
 * The windows of a signal are transformed LANES at a time, each SIMD lane holding one window
 * (GCC/Clang vector extensions, so the same code builds for any target: 8 lanes in an AVX
 * register on x86-64-v3, 4 in an SSE or NEON one elsewhere). A real FFT of nfft = 2M points is
 * a complex FFT of M points on the even (real part) and odd (imaginary part) samples, loaded in
 * bit-reversed order while the window is applied (LANES samples of each window at a time,
 * transposed in registers), followed by iterative radix-2 stages (two per pass over the data)
 * and the usual split into the real transform (X[k] = E[k] + W^k O[k]). The power (or
 * magnitude) of each bin is written straight into the output: frequency-major, a bin's LANES
 * windows are consecutive there, so no transposing copy is needed.
 *
 * Twiddles are computed in double precision and stored as float by fl_spectrogram_plan into
 * arrays the caller keeps; fl_spectrogram_f32 only reads them and allocates its own scratch, so
 * calls are re-entrant and run in parallel (cffi releases the GIL around them).
 *
 * The file also holds preemphasis_filter's, mel_filter_bank's and to_decibels' loops
 * (fl_preemphasis_f32, fl_sparse_rows_f32, fl_to_decibels_f32), one GIL-free call per sample
 * each.
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

/* Window `start`..start + window_length - 1 of the padded signal into `edge`: mirrored about
 * the signal's ends without repeating them (numpy's "reflect": periodic, period
 * 2 (length - 1), for pads longer than the signal; a one-sample signal repeats), or zeros. */
static void fill_edge(const float *signal, int64_t length, int reflect, int64_t start,
                      int window_length, float *edge) {
    const int64_t period = 2 * (length - 1);
    for (int t = 0; t < window_length; ++t) {
        int64_t p = start + t;
        if (p < 0 || p >= length) {
            if (!reflect || length == 0) {
                edge[t] = 0.0f;
                continue;
            }
            if (length == 1) {
                p = 0;
            } else {
                if (p < -period || p >= period) p %= period; /* rare: pads beyond one period */
                if (p < 0) p = -p;
                if (p >= length) p = period - p;
            }
        }
        edge[t] = signal[p];
    }
}

#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define SHUFFLE __builtin_shufflevector
#endif
#endif

#ifdef SHUFFLE
/* rows[l] (LANES consecutive samples of window l) -> rows[u] (sample u of every window), with
 * the shuffles of the usual register transpose (unpack, shuffle, then 128-bit lane permute). */
static inline void transpose(lanes_t *rows) {
#if LANES == 8
    lanes_t t[8], h[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = SHUFFLE(rows[i], rows[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
        t[i + 1] = SHUFFLE(rows[i], rows[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
    }
    for (int i = 0; i < 8; i += 4) {
        h[i] = SHUFFLE(t[i], t[i + 2], 0, 1, 8, 9, 4, 5, 12, 13);
        h[i + 1] = SHUFFLE(t[i], t[i + 2], 2, 3, 10, 11, 6, 7, 14, 15);
        h[i + 2] = SHUFFLE(t[i + 1], t[i + 3], 0, 1, 8, 9, 4, 5, 12, 13);
        h[i + 3] = SHUFFLE(t[i + 1], t[i + 3], 2, 3, 10, 11, 6, 7, 14, 15);
    }
    for (int u = 0; u < 4; ++u) {
        rows[u] = SHUFFLE(h[u], h[u + 4], 0, 1, 2, 3, 8, 9, 10, 11);
        rows[u + 4] = SHUFFLE(h[u], h[u + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    }
#else
    const lanes_t t0 = SHUFFLE(rows[0], rows[1], 0, 4, 1, 5);
    const lanes_t t1 = SHUFFLE(rows[0], rows[1], 2, 6, 3, 7);
    const lanes_t t2 = SHUFFLE(rows[2], rows[3], 0, 4, 1, 5);
    const lanes_t t3 = SHUFFLE(rows[2], rows[3], 2, 6, 3, 7);
    rows[0] = SHUFFLE(t0, t2, 0, 1, 4, 5);
    rows[1] = SHUFFLE(t0, t2, 2, 3, 6, 7);
    rows[2] = SHUFFLE(t1, t3, 0, 1, 4, 5);
    rows[3] = SHUFFLE(t1, t3, 2, 3, 6, 7);
#endif
}
#endif

/* The LANES windows at `frames`, times `window`, as M complex values (even samples real, odd
 * imaginary) in bit-reversed order; zeros past the window. Runs of LANES samples are read as
 * rows and transposed in registers where the compiler has __builtin_shufflevector. */
static void load_frames(const float *const *frames, const float *window, int window_length,
                        int m, const int32_t *reverse, lanes_t *re, lanes_t *im) {
    int t = 0;
#ifdef SHUFFLE
    for (; t + LANES <= window_length; t += LANES) {
        lanes_t rows[LANES];
        for (int l = 0; l < LANES; ++l) memcpy(&rows[l], frames[l] + t, sizeof *rows);
        transpose(rows);
        for (int u = 0; u < LANES; u += 2) {
            const int j = reverse[(t + u) / 2];
            re[j] = rows[u] * window[t + u];
            im[j] = rows[u + 1] * window[t + u + 1];
        }
    }
#endif
    for (; t < window_length; ++t) {
        lanes_t samples;
        for (int l = 0; l < LANES; ++l) samples[l] = frames[l][t] * window[t];
        (t % 2 ? im : re)[reverse[t / 2]] = samples;
    }
    const lanes_t zero = {0};
    if (window_length % 2) im[reverse[window_length / 2]] = zero;
    for (int j = (window_length + 1) / 2; j < m; ++j) {
        re[reverse[j]] = zero;
        im[reverse[j]] = zero;
    }
}

/* Two radix-2 decimation-in-time stages at once (spans `half` and 2 * half) on the four values
 * k, k + half, k + 2 half, k + 3 half of every group of 4 * half: twiddle w = W_{2 half}^k for
 * the first stage, v = W_{4 half}^k and -i v for the second. Halves the loads and stores of two
 * separate passes; `unit` (k = 0: w = v = 1) skips the multiplications. */
static inline void radix4_column(lanes_t *re, lanes_t *im, int m, int half, int k, float wr,
                                 float wi, float vr, float vi, int unit) {
    for (int g = k; g < m; g += 4 * half) {
        const lanes_t a0r = re[g], a0i = im[g], a1r = re[g + half], a1i = im[g + half];
        const lanes_t a2r = re[g + 2 * half], a2i = im[g + 2 * half];
        const lanes_t a3r = re[g + 3 * half], a3i = im[g + 3 * half];
        lanes_t p1r = a1r, p1i = a1i, p3r = a3r, p3i = a3i;
        if (!unit) {
            p1r = a1r * wr - a1i * wi, p1i = a1r * wi + a1i * wr;
            p3r = a3r * wr - a3i * wi, p3i = a3r * wi + a3i * wr;
        }
        const lanes_t b0r = a0r + p1r, b0i = a0i + p1i, b1r = a0r - p1r, b1i = a0i - p1i;
        lanes_t b2r = a2r + p3r, b2i = a2i + p3i, b3r = a2r - p3r, b3i = a2i - p3i;
        if (!unit) {
            const lanes_t q2r = b2r * vr - b2i * vi, q2i = b2r * vi + b2i * vr;
            const lanes_t q3r = b3r * vr - b3i * vi, q3i = b3r * vi + b3i * vr;
            b2r = q2r, b2i = q2i, b3r = q3r, b3i = q3i;
        }
        /* -i (b3r + i b3i) = b3i - i b3r */
        re[g] = b0r + b2r;
        im[g] = b0i + b2i;
        re[g + 2 * half] = b0r - b2r;
        im[g + 2 * half] = b0i - b2i;
        re[g + half] = b1r + b3i;
        im[g + half] = b1i - b3r;
        re[g + 3 * half] = b1r - b3i;
        im[g + 3 * half] = b1i + b3r;
    }
}

/* In-place decimation-in-time FFT of m points (input bit-reversed): a radix-2 stage first when
 * log2(m) is odd, then the stages two at a time (radix4_column). */
static void complex_fft(lanes_t *re, lanes_t *im, int m, const float *cos_k, const float *sin_k) {
    int stages = 0;
    while ((1 << stages) < m) ++stages;
    int half = 1;
    if (stages % 2) {
        for (int g = 0; g < m; g += 2) {
            const lanes_t ar = re[g], ai = im[g], br = re[g + 1], bi = im[g + 1];
            re[g] = ar + br;
            im[g] = ai + bi;
            re[g + 1] = ar - br;
            im[g + 1] = ai - bi;
        }
        half = 2;
    }
    for (; half < m; half *= 4) {
        const int first = m / (2 * half), second = m / (4 * half);
        radix4_column(re, im, m, half, 0, 1.0f, 0.0f, 1.0f, 0.0f, 1);
        for (int k = 1; k < half; ++k) {
            radix4_column(re, im, m, half, k, cos_k[k * first], sin_k[k * first],
                          cos_k[k * second], sin_k[k * second], 0);
        }
    }
}

/* |X[k]|^2 of the real transform's bins 0..m from the complex FFT Z of the packed samples, into
 * `spectrum`: X[k] = E[k] + W^k O[k] with E[k] = (Z[k] + conj Z[m-k]) / 2 and
 * O[k] = (Z[k] - conj Z[m-k]) / 2i. Bins k and m - k share their sums (W^(m-k) = -conj W^k);
 * 2 X is computed and its square scaled by 1/4, which is exact. */
static void real_power(const lanes_t *re, const lanes_t *im, int m, const float *cos_k,
                       const float *sin_k, lanes_t *spectrum) {
    const lanes_t dc = re[0] + im[0], nyquist = re[0] - im[0];
    spectrum[0] = dc * dc;
    spectrum[m] = nyquist * nyquist;
    for (int k = 1; k <= m / 2; ++k) {
        const lanes_t zr = re[k], zi = im[k], yr = re[m - k], yi = im[m - k];
        const lanes_t sr = zr + yr, si = zi - yi, dr = zr - yr, di = zi + yi;
        const float wr = cos_k[k], wi = sin_k[k];
        const lanes_t a = di * wr + dr * wi, b = di * wi - dr * wr;
        const lanes_t xr = sr + a, xi = si + b, ur = sr - a, ui = si - b;
        spectrum[m - k] = 0.25f * (ur * ur + ui * ui);
        spectrum[k] = 0.25f * (xr * xr + xi * xi);
    }
}

/* The block's `bins` powers (square-rooted for power 1) into the output: the first `valid`
 * lanes, windows first..first + valid - 1. */
static void store_block(lanes_t *spectrum, int bins, int power, int frequency_major, float *out,
                        int64_t count, int64_t first, int valid) {
    if (power == 1) {
        float *values = (float *)spectrum;
        for (int i = 0; i < bins * LANES; ++i) values[i] = sqrtf(values[i]);
    }
    if (frequency_major && valid == LANES) {
        for (int k = 0; k < bins; ++k) memcpy(out + k * count + first, &spectrum[k], sizeof *spectrum);
    } else if (frequency_major) {
        for (int k = 0; k < bins; ++k) {
            for (int l = 0; l < valid; ++l) out[k * count + first + l] = spectrum[k][l];
        }
    } else {
        for (int l = 0; l < valid; ++l) {
            float *row = out + (first + l) * bins;
            for (int k = 0; k < bins; ++k) row[k] = spectrum[k][l];
        }
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
    lanes_t *work = aligned_alloc(sizeof(lanes_t), (3 * (size_t)m + 1) * sizeof(lanes_t));
    float *edges = malloc((size_t)LANES * window_length * sizeof(float));
    if (!work || !edges) {
        free(work);
        free(edges);
        return -1;
    }
    lanes_t *re = work, *im = work + m, *spectrum = work + 2 * m;
    const int64_t offset = centered ? window_length / 2 : 0;
    for (int64_t first = 0; first < count; first += LANES) {
        const int valid = count - first < LANES ? (int)(count - first) : LANES;
        const float *frames[LANES] = {0};
        for (int l = 0; l < valid; ++l) {
            const int64_t start = (first + l) * step - offset;
            if (start >= 0 && start + window_length <= length) {
                frames[l] = signal + start;
            } else {
                float *edge = edges + (size_t)l * window_length;
                fill_edge(signal, length, reflect, start, window_length, edge);
                frames[l] = edge;
            }
        }
        /* Lanes past the last window repeat the first one; they are not stored. */
        for (int l = valid; l < LANES; ++l) frames[l] = frames[0];
        load_frames(frames, window, window_length, m, reverse, re, im);
        complex_fft(re, im, m, twiddles, twiddles + m / 2);
        real_power(re, im, m, twiddles + m, twiddles + 2 * m, spectrum);
        store_block(spectrum, m + 1, power, frequency_major, out, count, first, valid);
    }
    free(work);
    free(edges);
    return 0;
}

void fl_preemphasis_f32(const float *signal, int64_t length, float coeff, float before,
                        float *out) {
    if (length <= 0) return;
    out[0] = signal[0] - coeff * before;
    for (int64_t t = 1; t < length; ++t) out[t] = signal[t] - coeff * signal[t - 1];
}

void fl_sparse_rows_f32(const float *rows, int64_t columns, int filters, const int32_t *offsets,
                        const int32_t *indices, const float *weights, float *out) {
    for (int f = 0; f < filters; ++f) {
        float *target = out + (int64_t)f * columns;
        memset(target, 0, (size_t)columns * sizeof *target);
        for (int32_t i = offsets[f]; i < offsets[f + 1]; ++i) {
            const float *row = rows + (int64_t)indices[i] * columns;
            const float weight = weights[i];
            for (int64_t c = 0; c < columns; ++c) target[c] += weight * row[c];
        }
    }
}

/* log10 of a positive normal float, in double precision: x = 2^e m with m in [sqrt(1/2),
 * sqrt(2)), ln m = 2 atanh(s) with s = (m - 1) / (m + 1) (|s| < 0.172, so the odd series to s^13
 * leaves a relative error below 1e-12), then ln x / ln 10. Branch-free, so the loop calling it
 * vectorizes; rounded to float, it gives the correctly rounded log10 but for values within
 * 1e-12 of a halfway point. */
static inline double log10_of_normal(float x) {
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    /* Rebase the exponent so that the mantissa lands in [sqrt(1/2), sqrt(2)). */
    const uint32_t shifted = bits - 0x3f3504f3u;
    const int32_t e = (int32_t)shifted >> 23;
    const uint32_t mantissa_bits = bits - ((uint32_t)e << 23);
    float m;
    memcpy(&m, &mantissa_bits, sizeof m);
    const double md = (double)m;
    const double s = (md - 1.0) / (md + 1.0);
    const double s2 = s * s;
    const double series =
        1.0 + s2 * (1.0 / 3 + s2 * (1.0 / 5 + s2 * (1.0 / 7 + s2 * (1.0 / 9 + s2 * (1.0 / 11 +
        s2 * (1.0 / 13))))));
    const double ln2 = 0.69314718055994530942;
    const double log10_e = 0.43429448190325182765;
    return ((double)e * ln2 + 2.0 * s * series) * log10_e;
}

/* The maximum of data[0..length) (length >= 1), NaN if any value is NaN: LANES running maxima
 * (the vector extensions' select, as the compiler will not vectorize a NaN-propagating
 * reduction by itself). */
static float maximum_of(const float *data, int64_t length) {
    typedef int32_t mask_t __attribute__((vector_size(LANES * sizeof(int32_t))));
    float largest = data[0];
    int nan = data[0] != data[0];
    int64_t i = 0;
    if (length >= LANES) {
        lanes_t best;
        memcpy(&best, data, sizeof best);
        mask_t any_nan = best != best;
        for (i = LANES; i + LANES <= length; i += LANES) {
            lanes_t v;
            memcpy(&v, data + i, sizeof v);
            const mask_t above = v > best;
            best = (lanes_t)((above & (mask_t)v) | (~above & (mask_t)best));
            any_nan |= v != v;
        }
        for (int lane = 0; lane < LANES; ++lane) {
            largest = best[lane] > largest ? best[lane] : largest;
            nan |= any_nan[lane] != 0;
        }
    }
    for (; i < length; ++i) {
        largest = data[i] > largest ? data[i] : largest;
        nan |= data[i] != data[i];
    }
    return nan ? NAN : largest;
}

void fl_to_decibels_f32(const float *data, int64_t length, float multiplier, int use_max,
                        float reference, float floor, float *out) {
    if (length <= 0) return;
    if (use_max) reference = maximum_of(data, length);
    /* The quotients first, each loop free of branches so that it vectorizes. */
    if (reference > 0) {
        for (int64_t i = 0; i < length; ++i) out[i] = data[i] / reference;
    } else {
        memset(out, 0, (size_t)length * sizeof *out);
    }
    uint32_t special = 0;
    for (int64_t i = 0; i < length; ++i) {
        const float q = out[i];
        const float y = q < floor ? floor : q; /* NumPy's maximum: NaN stays */
        uint32_t bits;
        memcpy(&bits, &y, sizeof bits);
        special |= bits - 0x00800000u >= 0x7f000000u; /* zero, subnormal, inf, NaN or negative */
        out[i] = (float)log10_of_normal(y) * multiplier;
    }
    if (!special) return;
    /* Rare values outside the normal range: recompute them with the C library's log10. */
    for (int64_t i = 0; i < length; ++i) {
        const float q = reference > 0 ? data[i] / reference : 0.0f;
        const float y = q < floor ? floor : q;
        uint32_t bits;
        memcpy(&bits, &y, sizeof bits);
        if (bits - 0x00800000u >= 0x7f000000u) out[i] = (float)log10((double)y) * multiplier;
    }
}
