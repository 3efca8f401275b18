/* flg_window: one kernel for the operators that read a (cropped, mirrored, permuted, padded)
 * window of their input and map each element on its own: crop, flip, transpose, pad, cast,
 * crop_mirror_normalize, normalize and brightness_contrast. The per-element rules are the CPU
 * kernels' (see the modes in feedline_gpu.h). */
#include "flg_common.cuh"

/* DALI's cast (feedline's cast_array): float to integer rounds half away from zero exactly and
 * saturates (NaN as DALI's conversion gives it); integers clamp; bool is `!= 0` (floats
 * rounded). */
template <class Out, class In> FLG_HD Out flg_cast(In v) {
    if constexpr (std::is_same<Out, In>::value) {
        return v;
    } else if constexpr (std::is_same<Out, bool>::value && !flg_traits<In>::is_float) {
        return v != 0;
    } else if constexpr (flg_traits<Out>::is_float) {
        return flg_convert<Out>(v);
    } else if constexpr (flg_traits<In>::is_float) {
        /* round half away from zero, exactly, then saturate (the limits included); NaN gives
         * what DALI's conversion gives: the lowest int32/int64, 2**63 for uint64, else 0 */
        const double r = round(flg_to_double(v));
        if constexpr (std::is_same<Out, bool>::value) {
            return r != 0.0;
        } else {
            if (r != r) {
                if constexpr (sizeof(Out) == 8 && !flg_traits<Out>::is_signed) {
                    return (Out)(uint64_t(1) << 63);
                } else if constexpr (sizeof(Out) >= 4 && flg_traits<Out>::is_signed) {
                    return (Out)flg_traits<Out>::lowest;
                } else {
                    return Out(0);
                }
            }
            if (r <= (double)flg_traits<Out>::lowest) return (Out)flg_traits<Out>::lowest;
            if (r >= (double)flg_traits<Out>::highest) return (Out)flg_traits<Out>::highest;
            return (Out)r;
        }
    } else if constexpr (std::is_same<In, bool>::value) {
        return (Out)v;
    } else {
        /* integer to integer: clamp to Out's range, exactly (no trip through double) */
        constexpr int bits = 8 * sizeof(Out);
        constexpr uint64_t hi = flg_traits<Out>::is_signed ? (~uint64_t(0)) >> (65 - bits)
                                : bits == 64 ? ~uint64_t(0) : (uint64_t(1) << (bits % 64)) - 1;
        if constexpr (!flg_traits<In>::is_signed) {
            return (uint64_t)v > hi ? (Out)hi : (Out)v;
        } else {
            const int64_t x = (int64_t)v;
            const int64_t lo = flg_traits<Out>::is_signed ? -(int64_t)hi - 1 : 0;
            if (x < lo) return (Out)lo;
            return x >= 0 && (uint64_t)x > hi ? (Out)hi : (Out)x;
        }
    }
}

template <class Out, class In>
__global__ void flg_window_kernel(int mode, int ndim, int channel_axis, int channels_max,
                                  const int64_t *desc, const void *const *inputs,
                                  void *const *outputs, const double *gain, const double *offset,
                                  const double *fill, const double *pad,
                                  const float *const *mean, const float *const *factor,
                                  float shift) {
    const int sample = blockIdx.y;
    const int64_t *d = desc + (int64_t)sample * FLG_WINDOW_DESC;
    const int64_t *out_shape = d, *in_extent = d + 6, *in_stride = d + 12, *anchor = d + 18;
    const int64_t *stat_stride = d + 24;
    const int64_t mirror = d[30], real_channels = d[31];
    int64_t count = 1;
    for (int a = 0; a < ndim; ++a) count *= out_shape[a];
    const In *in = (const In *)inputs[sample];
    Out *out = (Out *)outputs[sample];
    FLG_FOR_EACH(index, count) {
        int64_t rest = index, source = 0, stat = 0, channel = 0;
        bool inside = true;
        for (int a = ndim - 1; a >= 0; --a) {
            const int64_t o = rest % out_shape[a];
            rest /= out_shape[a];
            if (a == channel_axis) channel = o;
            const int64_t s = anchor[a] + ((mirror >> a) & 1 ? out_shape[a] - 1 - o : o);
            inside = inside && s >= 0 && s < in_extent[a];
            source += s * in_stride[a];
            stat += o * stat_stride[a];
        }
        const int64_t param = (int64_t)sample * channels_max + channel;
        if (channel >= real_channels) {
            out[index] = flg_saturate<Out>((float)pad[sample]);
            continue;
        }
        if (!inside && mode >= 2) {
            /* the normalizing modes (crop_mirror_normalize) write the fill as given, as DALI */
            out[index] = flg_saturate<Out>((float)fill[param]);
            continue;
        }
        const In value = inside ? in[source] : flg_convert<In>(fill[param]);
        switch (mode) {
            case 0: out[index] = flg_cast<Out>(value); break;
            case 1: out[index] = flg_saturate<Out>(value); break;
            case 2: {
                const float r = flg_to_float(value) * (float)gain[param] + (float)offset[param];
                out[index] = flg_saturate<Out>(r);
                break;
            }
            case 3: {
                const double r = flg_to_double(value) * gain[param] + offset[param];
                out[index] = flg_saturate<Out>(r);
                break;
            }
            case 5: {
                const float r = (flg_to_float(value) - (float)offset[param]) * (float)gain[param];
                out[index] = flg_saturate<Out>(r);
                break;
            }
            default: {
                const float r = (flg_to_float(value) - mean[sample][stat]) * factor[sample][stat];
                out[index] = flg_saturate<Out>(r + shift);
            }
        }
    }
}

template <class Out, class In>
static int flg_window_typed(int mode, int ndim, int channel_axis, int channels_max, int samples,
                            int64_t max_elements, const int64_t *desc, const void *const *inputs,
                            void *const *outputs, const double *gain, const double *offset,
                            const double *fill, const double *pad, const float *const *mean,
                            const float *const *factor, float shift, void *stream) {
    FLG_LAUNCH((flg_window_kernel<Out, In>), flg_grid(max_elements, samples), dim3(FLG_BLOCK),
               stream, mode, ndim, channel_axis, channels_max, desc, inputs, outputs, gain,
               offset, fill, pad, mean, factor, shift);
    return FLG_STATUS();
}

extern "C" int flg_window(int mode, int in_type, int out_type, int ndim, int channel_axis,
                          int channels_max, int samples, int64_t max_elements,
                          const int64_t *desc, const void *const *inputs, void *const *outputs,
                          const double *gain, const double *offset, const double *fill,
                          const double *pad, const float *const *mean,
                          const float *const *factor, float shift, void *stream) {
    if (ndim < 1 || ndim > FLG_MAX_DIMS || mode < 0 || mode > 5 || channels_max < 1)
        return FLG_BAD_ARGUMENT;
    if (samples == 0 || max_elements == 0) return 0;
    return flg_dispatch(in_type, [&](auto in_tag) {
        return flg_dispatch(out_type, [&](auto out_tag) {
            typedef typename decltype(in_tag)::type In;
            typedef typename decltype(out_tag)::type Out;
            return flg_window_typed<Out, In>(mode, ndim, channel_axis, channels_max, samples,
                                             max_elements, desc, inputs, outputs, gain, offset,
                                             fill, pad, mean, factor, shift, stream);
        });
    });
}

