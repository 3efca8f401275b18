/* Entry points of the COCO reader's compiled segmentation parser (read by cffi: plain
 * declarations only).
 *
 * fl_coco_segmentations parses `count` segmentations laid end to end in `text` (segmentation i
 * is the next lengths[i] bytes, each one JSON value), followed by at least one byte that is not
 * part of a number (a NUL). polygons[i] receives segmentation i's count of polygons, or -1 for
 * an object (an RLE mask), -2 for null and -3 for a list holding a number this parser does not
 * convert exactly; those three are left to the caller and put nothing in the outputs. Each
 * polygon's count of coordinates goes to `sizes` and its coordinates (float32) to
 * `coordinates`; used[0] and used[1] receive how many of each were written. It returns how many
 * segmentations it went through; when that is less than `count`, *status says why the next one
 * stopped it: 1, not a list of lists of an even count of numbers, an object or null; 3, an
 * output buffer too small. Nothing of that segmentation is in the outputs.
 *
 * fl_coco_exact_paths says which conversions this build makes itself: bit 0, numbers of up to
 * 2^53 with a power of ten up to 22 (in double arithmetic); bit 1, numbers of up to 19 digits
 * with a power of ten up to 27 (in x86's 64-bit long double arithmetic). Without either, every
 * list is left to the caller.
 */

int64_t fl_coco_segmentations(const char *text, const int64_t *lengths, int64_t count,
                              int64_t *polygons, int64_t *sizes, int64_t sizes_capacity,
                              float *coordinates, int64_t coordinates_capacity, int64_t *used,
                              int *status);

int fl_coco_exact_paths(void);
