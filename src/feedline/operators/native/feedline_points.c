/* feedline's compiled point kernel: coord_transform's affine map of float32 points.
 *
 * It reproduces the NumPy path of operators/cpu/geometry/coords.py bit for bit: float64
 * arithmetic in the same order (the translation, then each component's product added in
 * turn; build with -ffp-contract=off) and one rounding to float32 at the end. Stateless and
 * lock-free; cffi releases the GIL around each call.
 */
#include <stddef.h>
#include <stdint.h>

#include "feedline_cpu.h"

void fl_affine_points_f32(const float *points, int64_t samples, int64_t count, int in_dim,
                          const double *affines, int shared, int out_dim, float *out) {
    const int width = in_dim + 1;
    for (int64_t s = 0; s < samples; ++s) {
        const double *affine = affines + (shared ? 0 : s * out_dim * width);
        const float *src = points + s * count * in_dim;
        float *dst = out + s * count * out_dim;
        for (int64_t p = 0; p < count; ++p) {
            for (int i = 0; i < out_dim; ++i) {
                const double *row = affine + i * width;
                double value = row[in_dim];
                for (int j = 0; j < in_dim; ++j) value = value + (double)src[j] * row[j];
                dst[i] = (float)value;
            }
            src += in_dim;
            dst += out_dim;
        }
    }
}
