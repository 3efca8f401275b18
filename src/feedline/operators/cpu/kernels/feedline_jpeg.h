/* Entry points of feedline's region-of-interest JPEG decoder (read by cffi: plain declarations). */

int fl_jpeg_decode_region(const uint8_t *data, size_t size, int y, int x, int height, int width,
                          int format, uint8_t *out, ptrdiff_t out_stride, char *error,
                          int error_size);
