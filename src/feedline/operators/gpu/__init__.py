"""GPU operators: CUDA kernels compiled with nvcc and called through cffi on CuPy arrays.

This module is the ``gpu`` plugin (entry point ``feedline.plugins: gpu``). It only names its
kernels: it adds a ``gpu`` kernel to operators the CPU plugins own, and nothing (CuPy, the
compiled library) is imported or built before a pipeline runs a GPU stage. See ``docs/gpu.md``.
"""

from __future__ import annotations

from typing import Any

from feedline.core.hookspecs import hookimpl

__all__ = ["GPU_KERNELS", "feedline_register_kernels"]

_OPS = "feedline.operators.gpu"
_WINDOW = f"{_OPS}.window_ops"
_COLOR = f"{_OPS}.color_ops"

#: operator → its gpu kernel
GPU_KERNELS: dict[str, str] = {
    "crop": f"{_WINDOW}:CropGpu",
    "flip": f"{_WINDOW}:FlipGpu",
    "transpose": f"{_WINDOW}:TransposeGpu",
    "pad": f"{_WINDOW}:PadGpu",
    "cast": f"{_WINDOW}:CastGpu",
    "crop_mirror_normalize": f"{_WINDOW}:CropMirrorNormalizeGpu",
    "brightness": f"{_WINDOW}:BrightnessContrastGpu",
    "contrast": f"{_WINDOW}:BrightnessContrastGpu",
    "brightness_contrast": f"{_WINDOW}:BrightnessContrastGpu",
    "normalize": f"{_OPS}.normalize_ops:NormalizeGpu",
    "resize": f"{_OPS}.resize_ops:ResizeGpu",
    "random_resized_crop": f"{_OPS}.resize_ops:RandomResizedCropGpu",
    "hue": f"{_COLOR}:ColorTwistGpu",
    "saturation": f"{_COLOR}:ColorTwistGpu",
    "hsv": f"{_COLOR}:ColorTwistGpu",
    "color_twist": f"{_COLOR}:ColorTwistGpu",
    "bb_flip": f"{_COLOR}:BbFlipGpu",
    "coord_transform": f"{_COLOR}:CoordTransformGpu",
    "draw_gaussians": f"{_OPS}.gaussians_ops:DrawGaussiansGpu",
    "_tensor_subscript": f"{_OPS}.subscript_ops:TensorSubscriptGpu",
    "_subscript_dim_check": f"{_OPS}.subscript_ops:SubscriptDimCheckGpu",
}
_ARITHMETIC = f"{_OPS}.math_ops:ArithmeticGpu"


@hookimpl
def feedline_register_kernels(registry: Any) -> None:
    """Add the ``gpu`` kernels to the operators of the CPU plugins (every ``arithmetic.*``
    operator included)."""
    for name, kernel in GPU_KERNELS.items():
        registry.add_kernel(name, "gpu", kernel)
    for name in registry.operators:
        if name.startswith("arithmetic."):
            registry.add_kernel(name, "gpu", _ARITHMETIC)
