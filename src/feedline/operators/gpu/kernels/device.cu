/* flg_use_device: the library's CUDA runtime is linked statically, so its current device is its
 * own; the Python side sets it to CuPy's current device before each launch. */
#include "flg_common.cuh"

extern "C" int flg_use_device(int device) {
#if defined(__CUDACC__)
    return (int)cudaSetDevice(device);
#else
    return device == 0 ? 0 : FLG_BAD_ARGUMENT; /* the emulation has one "device" */
#endif
}
