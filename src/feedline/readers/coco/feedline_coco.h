/* Entry point of the COCO reader's compiled segmentation parser (read by cffi: plain
 * declarations only).
 *
 * fl_coco_segmentations parses `count` segmentations laid end to end in `text` (segmentation i
 * is the next lengths[i] bytes, each one JSON value), followed by at least one byte that is not
 * part of a number (a NUL). polygons[i] receives segmentation i's count of polygons, or -1 for
 * an object (an RLE mask) and -2 for null, which are left to the caller. Each polygon's count
 * of coordinates goes to `sizes` and its coordinates (float32) to `coordinates`; used[0] and
 * used[1] receive how many of each were written. It returns how many segmentations it parsed;
 * when that is less than `count`, *status says why the next one stopped it: 1, not a list of
 * lists of an even count of numbers, an object or null; 2, a number it does not convert
 * exactly; 3, an output buffer too small. Nothing of that segmentation is in the outputs.
 */

int64_t fl_coco_segmentations(const char *text, const int64_t *lengths, int64_t count,
                              int64_t *polygons, int64_t *sizes, int64_t sizes_capacity,
                              float *coordinates, int64_t coordinates_capacity, int64_t *used,
                              int *status);
