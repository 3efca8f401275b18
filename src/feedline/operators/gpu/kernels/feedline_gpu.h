/* Entry points of feedline's GPU kernels (read by cffi: plain declarations only).
 *
 * Every launcher runs one batch with one kernel launch on `stream` (a cudaStream_t; NULL is the
 * default stream) and returns 0, a CUDA error code, or one of the FLG_* codes below. Pointers
 * are device pointers: per-sample shapes and arguments are device arrays too, one row per
 * sample, so a batch of differently shaped samples still takes one launch. `max_elements` is
 * the largest per-sample element count (it sizes the grid). Element types are numbered as
 * feedline.types.DataType (UINT8 = 0 ... FLOAT64 = 10, BOOL = 11).
 */

#define FLG_BAD_TYPE 10001
#define FLG_BAD_ARGUMENT 10002
#define FLG_MAX_DIMS 6
#define FLG_WINDOW_DESC 38
#define FLG_RESAMPLE_DESC 21
#define FLG_MATH_DESC 24

/* out[o] = f(in[anchor + (mirrored) o]) over an ndim-D window, any axis order (crop, flip,
 * transpose, pad, cast, crop_mirror_normalize, normalize, brightness_contrast).
 * desc row (int64, FLG_WINDOW_DESC): out_shape[6], in_extent[6], in_stride[6] (elements, per
 * output axis), anchor[6], stat_stride[6] (mode 4), mirror bit mask, real channel count.
 * Positions outside in_extent read fill[sample * channels_max + c] (a value of the input type)
 * in modes 0 and 1; modes 2 to 5 write it as it is, saturated to the output type;
 * channel positions >= the real channel count are written as saturate(pad[sample]).
 * mode 0: DALI cast; 1: saturate_cast; 2: float32 v * gain + offset, saturated;
 * 3: the same in float64; 4: (float32 v - mean[s]) * factor[s] + shift, saturated, where s is
 * the statistics index (stat_stride . position); 5: float32 (v - offset) * gain, saturated
 * (crop_mirror_normalize, in DALI's order). gain/offset: samples x channels_max. */
int flg_window(int mode, int in_type, int out_type, int ndim, int channel_axis,
               int channels_max, int samples, int64_t max_elements, const int64_t *desc,
               const void *const *inputs, void *const *outputs, const double *gain,
               const double *offset, const double *fill, const double *pad,
               const float *const *mean, const float *const *factor, float shift, void *stream);

/* Separable resampling with precomputed taps (one row of `desc` per image or frame), in two
 * launches for the whole batch: rows into a float32 scratch buffer, then columns.
 * desc row (int64, FLG_RESAMPLE_DESC): in_h, in_w, channels, in strides (row, pixel, channel),
 * out_h, out_w, out strides (row, pixel, channel), row_taps, col_taps, offsets into `first` of
 * the row and column tap starts, offsets into `weights` of the row and column weights, flags
 * (bit 0: rows nearest, bit 1: columns nearest), then the job's scratch: its offset in
 * `scratch` (floats), the first input column it holds and how many (col_lo, width). Output row
 * y reads rows first[row_first + y] + k with weights[row_weights + y * row_taps + k]; the
 * scratch holds out_h x width x channels floats (nothing when both axes are nearest).
 * max_scratch: the largest per-job scratch size (0: no row pass). */
int flg_resample(int in_type, int out_type, int jobs, int64_t max_elements, int64_t max_scratch,
                 const int64_t *desc, const void *const *inputs, void *const *outputs,
                 const int32_t *first, const float *weights, float *scratch, void *stream);

/* out = matrix @ pixel + offset over 3-channel pixels; desc row (int64 x 2): outer, inner
 * (pixel p's channel c is at (p / inner) * 3 * inner + c * inner + p % inner). matrix rows
 * (double x 12): the 3x3 matrix row-major, then the offset. wide: compute in float64. */
int flg_color_twist(int in_type, int out_type, int wide, int samples, int64_t max_pixels,
                    const int64_t *desc, const void *const *inputs, void *const *outputs,
                    const double *matrix, void *stream);

/* bb_flip on float32 boxes of 4 coordinates; counts[s] boxes per sample; flags[s]: bit 0 ltrb,
 * bit 1 horizontal, bit 2 vertical. */
int flg_bb_flip(int samples, int64_t max_boxes, const int64_t *counts,
                const float *const *inputs, float *const *outputs, const int32_t *flags,
                void *stream);

/* coord_transform: out = M @ p + T in float64, converted to out_type. desc row (int64 x 4):
 * points, in_dim, out_dim, offset of the sample's [M | T] (out_dim x (in_dim + 1)) in affine. */
int flg_coord_transform(int in_type, int out_type, int samples, int64_t max_points,
                        const int64_t *desc, const void *const *inputs, void *const *outputs,
                        const double *affine, void *stream);

/* An arithmetic operator (op numbered as OPS in feedline/operators/gpu/math_ops.py) on operands
 * already converted to `type`; comparisons write bool. desc row (int64, FLG_MATH_DESC):
 * out_shape[6], then each operand's strides[6] (elements, 0 where it broadcasts). Integer
 * division by zero sets bit 0 of *error. */
int flg_math(int op, int type, int arity, int ndim, int samples, int64_t max_elements,
             const int64_t *desc, const void *const *operands, void *const *outputs, int *error,
             void *stream);

/* draw_gaussians: out = heat_map with every active object's Gaussian drawn in (see
 * gaussians.cu). desc row (int64, 4): slices, height, width, objects. Per sample: active (bool),
 * class_ids (int32), centers (int32 [x, y] pairs), radii (float32); k: k_for_classes. */
int flg_draw_gaussians(int samples, int64_t max_elements, const int64_t *desc,
                       const float *const *inputs, float *const *outputs,
                       const uint8_t *const *active, const int32_t *const *class_ids,
                       const int32_t *const *centers, const float *const *radii, const float *k,
                       float radius_to_sigma_factor, void *stream);

/* Makes `device` the current device of the calling host thread for the launchers (the library
 * links its own CUDA runtime, whose current device is separate from CuPy's). */
int flg_use_device(int device);
