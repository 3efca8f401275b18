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
