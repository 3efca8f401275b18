/* Region-of-interest JPEG decoding with libjpeg-turbo (jpeg_crop_scanline, jpeg_skip_scanlines).
 *
 * Rows above the region are entropy-decoded but not transformed, rows below it are never
 * decoded, and only the iMCU columns that cover the region go through the inverse DCT, colour
 * upsampling and conversion. The pixels are those of a full decode. Recoverable corruption (libjpeg warnings) is an error, as in
 * simplejpeg's strict mode. Re-entrant: each call has its own decoder state.
 */
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "feedline_jpeg.h"

/* Output formats, numbered as fl_jpeg_decode_region takes them. */
enum { FORMAT_RGB = 0, FORMAT_RGBX = 1, FORMAT_GRAY = 2 };

struct error_manager {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    char *message;
    int message_size;
};

static void record_and_jump(j_common_ptr info) {
    struct error_manager *errors = (struct error_manager *)info->err;
    char text[JMSG_LENGTH_MAX];
    errors->base.format_message(info, text);
    snprintf(errors->message, (size_t)errors->message_size, "%s", text);
    longjmp(errors->jump, 1);
}

static void on_message(j_common_ptr info, int level) {
    if (level < 0) record_and_jump(info); /* a warning: corrupt data */
}

/* Decode rows y .. y + height - 1, columns x .. x + width - 1 of the image (raw orientation)
 * into `out` (rows `out_stride` bytes apart, 3, 4 or 1 bytes per pixel for RGB, RGBX, GRAY).
 * Returns 0, or -1 with a message in `error`. */
int fl_jpeg_decode_region(const uint8_t *data, size_t size, int y, int x, int height, int width,
                          int format, uint8_t *out, ptrdiff_t out_stride, char *error,
                          int error_size) {
    struct jpeg_decompress_struct info;
    struct error_manager errors;
    JSAMPLE *volatile row = NULL;
    info.err = jpeg_std_error(&errors.base);
    errors.base.error_exit = record_and_jump;
    errors.base.emit_message = on_message;
    errors.message = error;
    errors.message_size = error_size;
    if (setjmp(errors.jump)) {
        jpeg_destroy_decompress(&info);
        free(row);
        return -1;
    }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, data, (unsigned long)size);
    jpeg_read_header(&info, TRUE);
    if (format == FORMAT_GRAY) {
        info.out_color_space = JCS_GRAYSCALE;
    } else if (info.jpeg_color_space == JCS_CMYK || info.jpeg_color_space == JCS_YCCK) {
        snprintf(error, (size_t)error_size, "CMYK JPEGs are not decoded by region");
        jpeg_destroy_decompress(&info);
        return -1;
    } else {
        info.out_color_space = format == FORMAT_RGBX ? JCS_EXT_RGBX : JCS_EXT_RGB;
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
    row = malloc((size_t)info.output_width * pixel);
    if (row == NULL) {
        snprintf(error, (size_t)error_size, "out of memory");
        jpeg_destroy_decompress(&info);
        return -1;
    }
    if (y > 0) jpeg_skip_scanlines(&info, (JDIMENSION)y);
    const size_t skip = ((size_t)x - first_column) * pixel;
    for (int r = 0; r < height; ++r) {
        JSAMPROW rows[1] = {row};
        if (jpeg_read_scanlines(&info, rows, 1) != 1) {
            snprintf(error, (size_t)error_size, "truncated JPEG data");
            jpeg_destroy_decompress(&info);
            free(row);
            return -1;
        }
        memcpy(out + (ptrdiff_t)r * out_stride, row + skip, (size_t)width * pixel);
    }
    jpeg_abort_decompress(&info);
    jpeg_destroy_decompress(&info);
    free(row);
    return 0;
}
