/* Region-of-interest JPEG decoding with libjpeg-turbo (jpeg_crop_scanline, jpeg_skip_scanlines).
 *
 * Rows above the region are entropy-decoded but not transformed, rows below it are never
 * decoded, and only the iMCU columns that cover the region go through the inverse DCT, colour
 * upsampling and conversion. The pixels are those of a full decode. Recoverable corruption
 * (libjpeg warnings) is decoded as libjpeg recovers it and reported: the call returns 1 with the
 * first warning in the error buffer, as the full decoder does in feedline, so a damaged file is
 * accepted or refused alike whichever region is read. Re-entrant: each call has its own decoder
 * state.
 */
#define _GNU_SOURCE /* dladdr, RTLD_NODELETE */
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "feedline_cpu.h"
#include "feedline_jpeg.h"

/* Output formats, numbered as fl_jpeg_decode_region takes them, and the flag that selects
 * libjpeg's fast integer inverse DCT (JDCT_IFAST) instead of the accurate one. */
enum { FORMAT_RGB = 0, FORMAT_GRAY = 1, FORMAT_MASK = 1, FLAG_FAST_IDCT = 2 };

struct error_manager {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    char *message;
    int message_size;
    int warned;
};

static void record_and_jump(j_common_ptr info) {
    struct error_manager *errors = (struct error_manager *)info->err;
    char text[JMSG_LENGTH_MAX];
    errors->base.format_message(info, text);
    snprintf(errors->message, (size_t)errors->message_size, "%s", text);
    longjmp(errors->jump, 1);
}

/* A warning (level < 0: corrupt data libjpeg recovers from): keep the first message. */
static void on_message(j_common_ptr info, int level) {
    struct error_manager *errors = (struct error_manager *)info->err;
    if (level >= 0 || errors->warned) return;
    char text[JMSG_LENGTH_MAX];
    errors->base.format_message(info, text);
    snprintf(errors->message, (size_t)errors->message_size, "%s", text);
    errors->warned = 1;
}

/* Per-thread buffers that grow as needed and are freed when the thread ends: decoded regions
 * and resampled images are consumed within the call that makes them, and fresh allocations of
 * this size would cost page faults on every image. */
enum { SCRATCH_BAND = 0, SCRATCH_RESAMPLED = 1, SCRATCH_SLOTS = 2 };
struct scratch {
    size_t size[SCRATCH_SLOTS];
    uint8_t *data[SCRATCH_SLOTS];
};
static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void scratch_free(void *value) {
    struct scratch *scratch = value;
    for (int slot = 0; slot < SCRATCH_SLOTS; ++slot) free(scratch->data[slot]);
    free(scratch);
}

/* Threads free their buffers when they end, which may be after Python closed this library (cffi
 * unloads it at interpreter exit while pool threads still finish): once a thread holds a buffer,
 * the library stays loaded for good, so the destructor is still there. */
static void scratch_key_create(void) {
    Dl_info self;
    if (dladdr((void *)scratch_free, &self) != 0 && self.dli_fname != NULL)
        dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    pthread_key_create(&scratch_key, scratch_free);
}

/* This thread's buffer `slot`, at least `size` bytes (NULL when out of memory). */
static uint8_t *thread_scratch(int slot, size_t size) {
    pthread_once(&scratch_once, scratch_key_create);
    struct scratch *scratch = pthread_getspecific(scratch_key);
    if (scratch == NULL) {
        scratch = calloc(1, sizeof *scratch);
        if (scratch == NULL || pthread_setspecific(scratch_key, scratch) != 0) {
            free(scratch);
            return NULL;
        }
    }
    if (scratch->size[slot] < size) {
        uint8_t *grown = realloc(scratch->data[slot], size);
        if (grown == NULL) return NULL;
        scratch->data[slot] = grown;
        scratch->size[slot] = size;
    }
    return scratch->data[slot];
}

/* Where decode_rows puts the rows: copied into `out` (exactly the region), or, when `out` is
 * NULL, decoded in place into a per-thread band buffer whose first `offset` pixels precede the
 * region (no copy). */
struct destination {
    uint8_t *out;
    ptrdiff_t out_stride;
    uint8_t *band;
    ptrdiff_t band_stride;
    int offset;
};

/* Decode rows y .. y + height - 1, columns x .. x + width - 1 of the image (raw orientation)
 * into `to`. Returns 0, 1 after a warning (its message in `error`), or -1 with a message. */
static int decode_rows(const uint8_t *data, size_t size, int y, int x, int height, int width,
                       int format, struct destination *to, char *error, int error_size) {
    struct jpeg_decompress_struct info;
    struct error_manager errors;
    JSAMPLE *volatile row = NULL;
    info.err = jpeg_std_error(&errors.base);
    errors.base.error_exit = record_and_jump;
    errors.base.emit_message = on_message;
    errors.message = error;
    errors.message_size = error_size;
    errors.warned = 0;
    if (setjmp(errors.jump)) {
        jpeg_destroy_decompress(&info);
        free(row);
        return -1;
    }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, data, (unsigned long)size);
    jpeg_read_header(&info, TRUE);
    if (format & FLAG_FAST_IDCT) info.dct_method = JDCT_IFAST;
    if ((format & FORMAT_MASK) == FORMAT_GRAY) {
        info.out_color_space = JCS_GRAYSCALE;
    } else if (info.jpeg_color_space == JCS_CMYK || info.jpeg_color_space == JCS_YCCK) {
        snprintf(error, (size_t)error_size, "CMYK JPEGs are not decoded by region");
        jpeg_destroy_decompress(&info);
        return -1;
    } else {
        info.out_color_space = JCS_EXT_RGB;
    }
    if (x < 0 || y < 0 || width <= 0 || height <= 0 ||
        (JDIMENSION)x + (JDIMENSION)width > info.image_width ||
        (JDIMENSION)y + (JDIMENSION)height > info.image_height) {
        snprintf(error, (size_t)error_size, "region (%d, %d, %d, %d) is outside the %ux%u image",
                 y, x, height, width, info.image_height, info.image_width);
        jpeg_destroy_decompress(&info);
        return -1;
    }
    jpeg_start_decompress(&info);
    /* One extra column on each side: chroma upsampling treats the cropped band's edges as image
     * edges, so the band's edge columns differ from a full decode and must not be returned. The
     * band is also at least 16 columns wide, as the upsamplers special-case very narrow rows. */
    const int image_width = (int)info.image_width;
    int left = x > 0 ? x - 1 : 0;
    int right = x + width < image_width ? x + width + 1 : x + width;
    if (right - left < 16) {
        right = left + 16 < image_width ? left + 16 : image_width;
        left = right - 16 > 0 ? right - 16 : 0;
    }
    JDIMENSION first_column = (JDIMENSION)left, columns = (JDIMENSION)(right - left);
    jpeg_crop_scanline(&info, &first_column, &columns);
    const size_t pixel = (size_t)info.output_components;
    const size_t band_bytes = (size_t)info.output_width * pixel;
    if (to->out == NULL) {
        to->band = thread_scratch(SCRATCH_BAND, band_bytes * (size_t)height);
        to->band_stride = (ptrdiff_t)band_bytes;
        to->offset = x - (int)first_column;
    } else {
        row = malloc(band_bytes);
    }
    if (to->out == NULL ? to->band == NULL : row == NULL) {
        snprintf(error, (size_t)error_size, "out of memory");
        jpeg_destroy_decompress(&info);
        free(row);
        return -1;
    }
    if (y > 0) jpeg_skip_scanlines(&info, (JDIMENSION)y);
    const size_t skip = ((size_t)x - first_column) * pixel;
    for (int r = 0; r < height; ++r) {
        JSAMPROW rows[1] = {to->out == NULL ? to->band + (ptrdiff_t)r * to->band_stride : row};
        if (jpeg_read_scanlines(&info, rows, 1) != 1) {
            snprintf(error, (size_t)error_size, "truncated JPEG data");
            jpeg_destroy_decompress(&info);
            free(row);
            return -1;
        }
        if (to->out != NULL)
            memcpy(to->out + (ptrdiff_t)r * to->out_stride, row + skip, (size_t)width * pixel);
    }
    jpeg_abort_decompress(&info);
    jpeg_destroy_decompress(&info);
    free(row);
    return errors.warned;
}

/* Decode rows y .. y + height - 1, columns x .. x + width - 1 of the image (raw orientation)
 * into `out` (rows `out_stride` bytes apart, 3 or 1 bytes per pixel for RGB, GRAY; `format` may
 * add FLAG_FAST_IDCT).
 * Returns 0, 1 after a warning (its message in `error`), or -1 with a message. */
int fl_jpeg_decode_region(const uint8_t *data, size_t size, int y, int x, int height, int width,
                          int format, uint8_t *out, ptrdiff_t out_stride, char *error,
                          int error_size) {
    struct destination to = {out, out_stride, NULL, 0, 0};
    return decode_rows(data, size, y, x, height, width, format, &to, error, error_size);
}

/* The taps of one axis (fl_axis_weights), in freshly allocated arrays; 0 or -1. */
static int axis_taps(int in_size, int out_size, double start, double end, int filter,
                     int antialias, int32_t **first, float **weights, int *taps) {
    const int max_taps = fl_axis_max_taps(in_size, out_size, start, end, filter, antialias);
    *first = malloc((size_t)out_size * sizeof(int32_t));
    *weights = malloc((size_t)out_size * (size_t)max_taps * sizeof(float));
    if (*first == NULL || *weights == NULL) return -1;
    *taps = fl_axis_weights(in_size, out_size, start, end, filter, antialias, max_taps, *first,
                            *weights);
    return *taps > 0 ? 0 : -1;
}

/* Resample rows [y0, y1) x columns [x0, x1) of the window win_h x win_w at (win_y, win_x) of a
 * JPEG (raw orientation; the whole image for a window at 0, 0 of its size; the source is relative
 * to the window) to out_h x out_w RGB (see resample.py), decoding only the pixels the filters
 * read: the same result as decoding the window and resampling it (taps clamp to the window).
 * Returns 0, 1 after a warning, or -1. */
int fl_jpeg_decode_resample(const uint8_t *data, size_t size, int win_y, int win_x, int win_h,
                            int win_w, double y0, double y1, double x0, double x1, int row_filter,
                            int col_filter, int antialias, uint8_t *out, ptrdiff_t out_stride,
                            int out_h, int out_w, char *error, int error_size) {
    int32_t *row_first = NULL, *col_first = NULL;
    float *row_weights = NULL, *col_weights = NULL;
    int row_taps = 0, col_taps = 0, status = -1;
    if (axis_taps(win_h, out_h, y0, y1, row_filter, antialias, &row_first, &row_weights,
                  &row_taps) != 0 ||
        axis_taps(win_w, out_w, x0, x1, col_filter, antialias, &col_first, &col_weights,
                  &col_taps) != 0) {
        snprintf(error, (size_t)error_size, "out of memory computing filter taps");
        goto done;
    }
    for (int i = 0; i < out_h; ++i) row_first[i] += win_y;
    for (int i = 0; i < out_w; ++i) col_first[i] += win_x;
    int top = win_y + win_h, bottom = 0, left = win_x + win_w, right = 0;
    for (int i = 0; i < out_h; ++i) {
        top = row_first[i] < top ? row_first[i] : top;
        bottom = row_first[i] + row_taps > bottom ? row_first[i] + row_taps : bottom;
    }
    for (int i = 0; i < out_w; ++i) {
        left = col_first[i] < left ? col_first[i] : left;
        right = col_first[i] + col_taps > right ? col_first[i] + col_taps : right;
    }
    for (int i = 0; i < out_h; ++i) row_first[i] -= top;
    for (int i = 0; i < out_w; ++i) col_first[i] -= left;
    struct destination band = {NULL, 0, NULL, 0, 0};
    const int decoded = decode_rows(data, size, top, left, bottom - top, right - left,
                                    FORMAT_RGB, &band, error, error_size);
    if (decoded < 0) goto done;
    if (fl_resample_u8(band.band + (ptrdiff_t)band.offset * 3, band.band_stride, 3, right - left,
                       out, out_stride, out_h, out_w, 3, row_first, row_taps, row_weights,
                       col_first, col_taps, col_weights) != 0) {
        snprintf(error, (size_t)error_size, "out of memory resampling");
        goto done;
    }
    status = decoded;
done:
    free(row_first);
    free(row_weights);
    free(col_first);
    free(col_weights);
    return status;
}

/* fl_jpeg_decode_resample followed by fl_normalize_u8 (crop_mirror_normalize without a crop):
 * out = (resampled - centre[c]) * gain[c], mirrored when `mirror`, written as float32 CHW
 * (planar) or HWC with `out_channels` channels, those past 3 set to `fill`. The resampled
 * 8-bit image lives in a per-thread buffer. Returns 0, 1 after a warning, or -1 with a message. */
int fl_jpeg_decode_resample_normalize(const uint8_t *data, size_t size, int win_y, int win_x,
                                      int win_h, int win_w, double y0, double y1, double x0,
                                      double x1,
                                      int row_filter, int col_filter, int antialias, int out_h,
                                      int out_w, const float *gain, const float *centre,
                                      int mirror, int planar, int out_channels, float fill,
                                      float *out, char *error, int error_size) {
    const ptrdiff_t stride = (ptrdiff_t)out_w * 3;
    uint8_t *resampled = thread_scratch(SCRATCH_RESAMPLED, (size_t)stride * (size_t)out_h);
    if (resampled == NULL) {
        snprintf(error, (size_t)error_size, "out of memory for the resampled image");
        return -1;
    }
    const int status = fl_jpeg_decode_resample(data, size, win_y, win_x, win_h, win_w, y0, y1,
                                               x0, x1,
                                               row_filter, col_filter, antialias, resampled,
                                               stride, out_h, out_w, error, error_size);
    if (status < 0) return -1;
    fl_normalize_u8(resampled, stride, out_h, out_w, 3, mirror, gain, centre, out, planar,
                    out_channels, fill);
    return status;
}
