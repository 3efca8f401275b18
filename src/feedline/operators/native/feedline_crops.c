/* feedline's compiled kernels of the crops family: ssd_random_crop's window search and box
 * cropping, multi_paste's region copies.
 *
 * The box kernels reproduce the NumPy reference of the crops family (operators/cpu/crops/ssd.py) bit for
 * bit: float64 arithmetic in the same order (build with -ffp-contract=off) and NumPy's NaN
 * rules for maximum, minimum and clip (a NaN operand gives NaN). They hold no state, so any
 * number of threads may call them at once; cffi releases the GIL around each call.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "feedline_cpu.h"

/* The smallest relative window side of ssd_random_crop. */
static const double MIN_EXTENT = 0.3;

/* Fields of one fl_paste_regions region. */
enum { PASTE_FIELDS = 9 };

/* np.maximum / np.minimum: NaN wins. */
static inline double nan_max(double a, double b) {
    if (a != a) return a;
    if (b != b) return b;
    return a >= b ? a : b;
}

static inline double nan_min(double a, double b) {
    if (a != a) return a;
    if (b != b) return b;
    return a <= b ? a : b;
}

/* np.clip(value, low, high) with NaN kept. */
static inline double clip(double value, double low, double high) {
    return nan_min(nan_max(value, low), high);
}

/* Whether window [l, t, r, b] holds a box centre and meets min_iou with every box; marks in
 * inside[k] the boxes whose centre it holds. */
static int window_succeeds(const float *boxes, int num_boxes, const double *window,
                           double min_iou, uint8_t *inside) {
    const double left = window[0], top = window[1], right = window[2], bottom = window[3];
    const double window_area = (right - left) * (bottom - top);
    int any_inside = 0;
    for (int k = 0; k < num_boxes; ++k) {
        const double bl = boxes[4 * k], bt = boxes[4 * k + 1];
        const double br = boxes[4 * k + 2], bb = boxes[4 * k + 3];
        const double cx = (bl + br) / 2, cy = (bt + bb) / 2;
        const int in = cx >= left && cy >= top && cx <= right && cy <= bottom;
        inside[k] = (uint8_t)in;
        any_inside |= in;
        const double iw = clip(nan_min(br, right) - nan_max(bl, left), 0.0, 1.0 / 0.0);
        const double ih = clip(nan_min(bb, bottom) - nan_max(bt, top), 0.0, 1.0 / 0.0);
        const double inter = iw * ih;
        const double area = (br - bl) * (bb - bt);
        const double iou = inter / (area + window_area - inter);
        if (iou < min_iou) return 0;
    }
    return any_inside;
}

int fl_ssd_first_window(const float *boxes, int num_boxes, const double *draws,
                        const double *thresholds, int attempts, int count, double *window,
                        uint8_t *inside) {
    const double *anchors = draws + 2 * (ptrdiff_t)count;
    for (int n = 0; n < count; ++n) {
        /* numpy's uniform(low, high) is low + (high - low) * random() */
        const double width = MIN_EXTENT + (1.0 - MIN_EXTENT) * draws[2 * n];
        const double height = MIN_EXTENT + (1.0 - MIN_EXTENT) * draws[2 * n + 1];
        const double ratio = width / height;
        if (!(ratio >= 0.5 && ratio <= 2.0)) continue;
        const double left = anchors[2 * n] * (1.0 - width);
        const double top = anchors[2 * n + 1] * (1.0 - height);
        window[0] = left;
        window[1] = top;
        window[2] = left + width;
        window[3] = top + height;
        if (window_succeeds(boxes, num_boxes, window, thresholds[n / attempts], inside)) return n;
    }
    return -1;
}

int fl_ssd_crop_boxes(const float *boxes, const uint8_t *inside, int num_boxes,
                      const double *window, float *out, int32_t *kept) {
    const double left = window[0], top = window[1];
    const double width = window[2] - window[0], height = window[3] - window[1];
    int count = 0;
    for (int k = 0; k < num_boxes; ++k) {
        if (!inside[k]) continue;
        const float *box = boxes + 4 * k;
        float *dst = out + 4 * count;
        dst[0] = (float)clip(((double)box[0] - left) / width, 0.0, 1.0);
        dst[1] = (float)clip(((double)box[1] - top) / height, 0.0, 1.0);
        dst[2] = (float)clip(((double)box[2] - left) / width, 0.0, 1.0);
        dst[3] = (float)clip(((double)box[3] - top) / height, 0.0, 1.0);
        kept[count++] = k;
    }
    return count;
}

void fl_paste_regions(int outputs, const int64_t *canvases, const int64_t *first,
                      const int64_t *regions) {
    for (int o = 0; o < outputs; ++o) {
        memset((void *)(intptr_t)canvases[2 * o], 0, (size_t)canvases[2 * o + 1]);
        for (int64_t r = first[o]; r < first[o + 1]; ++r) {
            const int64_t *region = regions + PASTE_FIELDS * r;
            const int64_t frames = region[2], rows = region[3], row_bytes = region[4];
            for (int64_t f = 0; f < frames; ++f) {
                uint8_t *dst = (uint8_t *)(intptr_t)region[0] + f * region[7];
                const uint8_t *src = (const uint8_t *)(intptr_t)region[1] + f * region[8];
                for (int64_t y = 0; y < rows; ++y)
                    memcpy(dst + y * region[5], src + y * region[6], (size_t)row_bytes);
            }
        }
    }
}
