/* Entry points of feedline's region-of-interest JPEG decoder (read by cffi: plain declarations). */

int fl_jpeg_decode_region(const uint8_t *data, size_t size, int y, int x, int height, int width,
                          int format, uint8_t *out, ptrdiff_t out_stride, char *error,
                          int error_size);

int fl_jpeg_decode_resample(const uint8_t *data, size_t size, int win_y, int win_x, int win_h,
                            int win_w, double y0, double y1, double x0, double x1, int row_filter,
                            int col_filter, int antialias, uint8_t *out, ptrdiff_t out_stride,
                            int out_h, int out_w, char *error, int error_size);

int fl_jpeg_decode_resample_normalize(const uint8_t *data, size_t size, int win_y, int win_x,
                                      int win_h, int win_w, double y0, double y1, double x0, double x1,
                                      int row_filter, int col_filter, int antialias, int out_h,
                                      int out_w, const float *gain, const float *centre,
                                      int mirror, int planar, int out_channels, float fill,
                                      float *out, char *error, int error_size);
