/* Entry points of feedline's compiled CPU kernels (read by cffi: plain declarations only). */

int fl_axis_max_taps(int in_size, int out_size, double start, double end, int filter,
                     int antialias);

int fl_axis_weights(int in_size, int out_size, double start, double end, int filter,
                    int antialias, int max_taps, int32_t *first, float *weights);

int fl_resample_u8(const uint8_t *src, ptrdiff_t src_stride, int channels, int span,
                   uint8_t *dst, ptrdiff_t dst_stride, int out_h, int out_w, int out_channels,
                   const int32_t *row_first, int row_taps, const float *row_weights,
                   const int32_t *col_first, int col_taps, const float *col_weights);

void fl_normalize_u8(const uint8_t *src, ptrdiff_t src_stride, int height, int width,
                     int channels, int mirror, const float *gain, const float *centre,
                     float *dst, int planar, int out_channels, float fill);

/* feedline_crops.c: ssd_random_crop. `draws` holds 2 x count x 2 values of random() in
 * [0, 1): the (width, height) draws of `count` candidate windows, then their anchor draws (the
 * sides are 0.3 + 0.7 * draw, as numpy's uniform(0.3, 1.0) computes them). The first window
 * (minimum IoU thresholds[n / attempts]) that passes the aspect-ratio rule, holds a box centre
 * and meets the minimum IoU with every box: its index (-1 if none), the window [l, t, r, b] in
 * `window`, the boxes whose centre it holds in `inside`. */
int fl_ssd_first_window(const float *boxes, int num_boxes, const double *draws,
                        const double *thresholds, int attempts, int count, double *window,
                        uint8_t *inside);

/* The boxes marked in `inside`, relative to `window` and clipped to [0, 1], into `out`, their
 * indices into `kept`; returns how many. */
int fl_ssd_crop_boxes(const float *boxes, const uint8_t *inside, int num_boxes,
                      const double *window, float *out, int32_t *kept);

/* multi_paste: for each of `outputs` canvases ((address, bytes) pairs in `canvases`), zero it,
 * then copy its regions first[o] to first[o + 1] - 1 in order. A region is 9 int64 values:
 * destination and source addresses, frames, rows, bytes per row, destination and source row
 * strides, destination and source frame strides (bytes). */
void fl_paste_regions(int outputs, const int64_t *canvases, const int64_t *first,
                      const int64_t *regions);

/* feedline_points.c: coord_transform. Maps `count` float32 points of `in_dim` components per
 * sample (`samples` samples, contiguous) by each sample's float64 (out_dim, in_dim + 1)
 * matrix (one for all when `shared`), into float32 `out`. */
void fl_affine_points_f32(const float *points, int64_t samples, int64_t count, int in_dim,
                          const double *affines, int shared, int out_dim, float *out);

/* feedline_audio.c: spectrogram. fl_spectrogram_plan fills, for a power-of-two nfft = 2m,
 * `twiddles` (3m floats) and `reverse` (m ints); -1 for another nfft. fl_spectrogram_f32
 * writes the power (power 2) or magnitude (1) of `count` windows of `window_length` samples,
 * `step` apart (window f centred on f * step when `centered`, else starting there), padded
 * outside the signal by reflection (`reflect`, numpy's "reflect") or zeros, each zero-padded
 * to nfft: into `out`, (m + 1, count) when `frequency_major`, else (count, m + 1). Returns 0,
 * or -1 (bad arguments, no memory) having written nothing. */
int fl_spectrogram_plan(int nfft, float *twiddles, int32_t *reverse);

int fl_spectrogram_f32(const float *signal, int64_t length, const float *window,
                       int window_length, int64_t step, int nfft, int centered, int reflect,
                       int power, int frequency_major, const float *twiddles,
                       const int32_t *reverse, int64_t count, float *out);

/* preemphasis_filter on float32: out[t] = signal[t] - coeff * signal[t - 1], with `before` as
 * signal[-1] (float32 arithmetic, as NumPy's). */
void fl_preemphasis_f32(const float *signal, int64_t length, float coeff, float before,
                        float *out);

/* mel_filter_bank: a CSR matrix (`offsets`, `indices`, `weights`) of `filters` rows times the
 * row-major `rows` (each `columns` wide), into `out`: row f is the sum over i in
 * offsets[f]..offsets[f + 1] - 1 of weights[i] times row indices[i], accumulated in that order in
 * float32 (as SciPy's sparse product does). */
void fl_sparse_rows_f32(const float *rows, int64_t columns, int filters, const int32_t *offsets,
                        const int32_t *indices, const float *weights, float *out);

/* to_decibels on float32: out[i] = multiplier * log10(max(data[i] / reference, floor)), each step
 * rounded to float32 as NumPy's float32 arithmetic does (log10 correctly rounded but for rare
 * halfway cases; NaN propagates through the division and the maximum). With `use_max` the
 * reference is the maximum of the data (NaN if any value is NaN, 0 for no data); a reference
 * that is not above 0 makes every quotient 0. */
void fl_to_decibels_f32(const float *data, int64_t length, float multiplier, int use_max,
                        float reference, float floor, float *out);
/* feedline_histogram.c: equalize. `planes` planes of height x width pixels of `channels`
 * (1 to 512) interleaved uint8 channels, each row's pixels contiguous; strides in bytes.
 * Every channel of every plane gets OpenCV's equalizeHist of that channel alone, into `dst`
 * (which may be `src`). Returns 0, or -1 for bad sizes (a plane of more than 2^31 - 1 pixels)
 * and -2 when memory runs out. */
int fl_equalize_u8(const uint8_t *src, ptrdiff_t src_plane, ptrdiff_t src_row, uint8_t *dst,
                   ptrdiff_t dst_plane, ptrdiff_t dst_row, int64_t planes, int64_t height,
                   int64_t width, int channels);

/* feedline_filter.c: filter of uint8 into uint8 as OpenCV's filter2D computes it. `rows`
 * (height + taps_h - 1) and `cols` (width + taps_w - 1) map the padded image's rows and
 * columns to the source's (-1: `fill`); padded column j in [lead, lead + width) is source
 * column j - lead. Row values before `tail_from` add their products with fused multiply-adds
 * when `fused`, the others unfused. Returns 0; -1 for bad sizes, -2 when memory runs out, -3
 * where the kernel is not built (it needs AVX2 and FMA). */
int fl_filter_u8(const uint8_t *src, ptrdiff_t src_row, int height, int width, int channels,
                 const int32_t *rows, const int32_t *cols, int lead, const float *taps,
                 int taps_h, int taps_w, float fill, int fused, int tail_from, uint8_t *dst,
                 ptrdiff_t dst_row);

/* feedline_clahe.c: clahe. OpenCV's createCLAHE(clip_limit, (tiles_x, tiles_y)).apply on
 * channel `channel` (-1: each channel in turn) of a height x width image of `channels`
 * interleaved uint8 channels (each row's pixels contiguous, row strides in bytes), into the
 * same channel of `dst` (which may be `src`; its other channels are left as they are).
 * Returns 0, -1 for bad arguments or sizes where OpenCV's int arithmetic would overflow, -2
 * when memory runs out. */
int fl_clahe_u8(const uint8_t *src, ptrdiff_t src_row, uint8_t *dst, ptrdiff_t dst_row,
                int height, int width, int channels, int channel, int tiles_x, int tiles_y,
                double clip_limit);

/* feedline_lab.c: OpenCV's cvtColor COLOR_RGB2Lab and COLOR_Lab2RGB on uint8 pixels, bit for
 * bit. fl_lab_init builds the conversions' tables (idempotent; it must have returned before
 * another thread converts); the conversions take `count` interleaved 3-byte RGB pixels and
 * give (or take) L, a and b in three separate arrays. */
int fl_lab_init(void);

void fl_rgb_to_lab_u8(const uint8_t *rgb, int64_t count, uint8_t *l, uint8_t *a, uint8_t *b);

void fl_lab_to_rgb_u8(const uint8_t *l, const uint8_t *a, const uint8_t *b, int64_t count,
                      uint8_t *rgb);

/* clahe with luma_only on an RGB image: to Lab, CLAHE of the lightness as fl_clahe_u8, back to
 * RGB (fl_lab_init first), from `src` into `dst` (which may be `src`), rows of 3-byte pixels.
 * Returns as fl_clahe_u8. */
int fl_clahe_lab_u8(const uint8_t *src, ptrdiff_t src_row, uint8_t *dst, ptrdiff_t dst_row,
                    int height, int width, int tiles_x, int tiles_y, double clip_limit);

/* feedline_warp.c: warp_perspective of uint8 images (1, 3 or 4 channels, rows of packed
 * pixels; strides in bytes) with linear interpolation, as OpenCV 5's warpPerspective computes
 * it: `matrix` maps destination to source (double, row-major); `border` is
 * OpenCV's border type (0 constant, 1 replicate, 2 reflect, 3 wrap, 4 reflect_101), `fill` the
 * constant border's channels. `block` (8, 16 or 32), `fused_row`, `tail` (0 to 2) and
 * `fused_tail` select how the installed OpenCV rounds (see the source). Returns 0; -1 for bad
 * arguments, -2 when a tap lies more than 2^24 pixels outside the image with a border other
 * than the constant (the output is then incomplete), -3 where the kernel is not built (it
 * needs AVX2 and FMA). */
int fl_warp_perspective_u8(const uint8_t *src, ptrdiff_t src_row, int src_h, int src_w,
                           int channels, uint8_t *dst, ptrdiff_t dst_row, int dst_h, int dst_w,
                           const double *matrix, int border, const uint8_t *fill, int block,
                           int fused_row, int tail, int fused_tail);
