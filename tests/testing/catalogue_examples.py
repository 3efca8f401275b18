"""Example calls of the catalogue families (reductions, transforms, constants, manipulation,
crops, ``random.beta``) for ``check_operator``; merged into ``builtin_examples.EXAMPLES``."""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path
from typing import Any

import numpy as np

from feedline import types
from feedline.testing import OperatorExample

_RNG = np.random.default_rng(2025)
_INTS = [[_RNG.integers(0, 99, (4 + i, 3)).astype(np.int32) for i in range(3)]]
_MEANS = [np.mean(s, axis=0).astype(np.float32) for s in _INTS[0]]


def _reduction(name: str) -> OperatorExample:
    inputs = [*_INTS, _MEANS] if name in ("std_dev", "variance") else _INTS
    return OperatorExample(inputs, ["HC", ""][: len(inputs)], {"axis_names": "H"})


_SEQUENCES = [np.arange(24, dtype=np.float32).reshape(4, 3, 2) + i for i in range(3)]
_INT16 = [[np.arange(8, dtype=np.int16).reshape(2, 4) * (i + 1) for i in range(3)]]
_MATRICES = [_RNG.normal(size=(2, 3)).astype(np.float32) for _ in range(3)]
_THIS_FILE = np.frombuffer(str(Path(__file__)).encode("utf-8"), np.uint8)
_NPY = io.BytesIO()
np.save(_NPY, np.arange(6, dtype=np.int16).reshape(2, 3))
_SSD_IMAGES = [_RNG.integers(0, 256, (20 + i, 16, 3), dtype=np.uint8) for i in range(3)]
_SSD_BOXES = [np.array([[0.1, 0.1, 0.5, 0.6], [0.2, 0.3, 0.9, 0.9]], np.float32)] * 3
_SSD_LABELS = [np.array([1, 2], np.int32)] * 3


def _negate_capsules(capsules: list[Any]) -> list[Any]:
    class Producer:
        def __init__(self, capsule: Any) -> None:
            self.capsule = capsule

        def __dlpack__(self, stream: Any = None, **kwargs: Any) -> Any:
            return self.capsule

        def __dlpack_device__(self) -> tuple[int, int]:
            return (1, 0)

    return [(-np.from_dlpack(Producer(c))).__dlpack__() for c in capsules]


def _invert(out0: np.ndarray, in0: np.ndarray) -> None:
    out0[:] = 255 - in0[:]


_RCM_ARGS = {"resize_shorter": 12.0, "crop": [8, 6], "mirror": 1}

CATALOGUE_EXAMPLES: dict[str, OperatorExample] = {
    **{
        f"reductions.{name}": _reduction(name)
        for name in ("min", "max", "sum", "mean", "mean_square", "rms", "std_dev", "variance")
    },
    "transforms.translation": OperatorExample([_MATRICES], args={"offset": [1.0, 2.0]}),
    "transforms.scale": OperatorExample(args={"scale": [2.0, 3.0], "center": [1.0, 1.0]}),
    "transforms.rotation": OperatorExample(args={"angle": 30.0, "axis": [0.0, 1.0, 1.0]}),
    "transforms.shear": OperatorExample([_MATRICES], args={"angles": [10.0, 20.0]}),
    "transforms.crop": OperatorExample(args={"from_start": [5.0, 5.0], "from_end": [50.0, 9.0]}),
    "transforms.combine": OperatorExample([_MATRICES, _MATRICES[::-1]]),
    "zeros": OperatorExample(args={"shape": [2, 2], "dtype": types.UINT8}),
    "ones": OperatorExample(args={"shape": [3], "layout": "W"}),
    "zeros_like": OperatorExample(_INT16, ["HW"]),
    "ones_like": OperatorExample(_INT16, ["HW"], {"dtype": types.FLOAT}),
    "full": OperatorExample([[np.float32(i) for i in range(3)]], args={"shape": [2, 2]}),
    "full_like": OperatorExample([*_INT16, [np.float32(i) + 0.5 for i in range(3)]]),
    "per_frame": OperatorExample([_SEQUENCES]),
    "element_extract": OperatorExample([_SEQUENCES], ["FHW"], {"element_map": [2, 0]}),
    "sequence_rearrange": OperatorExample([_SEQUENCES], ["FHW"], {"new_order": [3, 1, 1]}),
    "permute_batch": OperatorExample(_INT16, ["HW"], {"indices": [2, 2, 0]}),
    "batch_permutation": OperatorExample(args={"no_fixed_points": True}, batch_size=5),
    "lookup_table": OperatorExample(_INT16, args={"keys": [2, 4], "values": [0.5, 9.0]}),
    "reinterpret": OperatorExample(_INT16, ["HW"], {"dtype": types.UINT8}),
    "shapes": OperatorExample([_SEQUENCES]),
    "get_property": OperatorExample(_INT16, ["HW"], {"key": "layout"}),
    "random.beta": OperatorExample(args={"alpha": 2.0, "shape": [3]}),
    "random_crop_generator": OperatorExample(
        [[np.array([40, 30 + i], np.int64) for i in range(3)]]
    ),
    "roi_random_crop": OperatorExample(
        args={"crop_shape": [4, 4], "roi_start": [2, 2], "roi_shape": [8, 1]}
    ),
    "bbox_rotate": OperatorExample([_SSD_BOXES], args={"angle": 45.0, "input_shape": [40, 60]}),
    "multi_paste": OperatorExample(
        [_SSD_IMAGES], ["HWC"], {"in_ids": [1, 0], "output_size": [8, 8], "shapes": [4, 4, 2, 2]}
    ),
    "segmentation.select_masks": OperatorExample(
        [
            [np.array([1, 0], np.int32)] * 3,
            [np.array([[0, 0, 2], [1, 2, 3]], np.int32)] * 3,
            [np.arange(6, dtype=np.float32).reshape(3, 2)] * 3,
        ]
    ),
    "segmentation.random_mask_pixel": OperatorExample(
        [[_RNG.integers(0, 3, (6, 7), dtype=np.uint8) for _ in range(3)]], args={"foreground": 1}
    ),
    "segmentation.random_object_bbox": OperatorExample(
        [[_RNG.integers(0, 4, (7, 6), dtype=np.uint8) for _ in range(3)]],
        args={"format": "box", "output_class": True, "foreground_prob": 0.8, "k_largest": 2},
    ),
    "tensor_resize": OperatorExample(
        [[_RNG.random((2, 5 + i, 6)).astype(np.float32) for i in range(3)]],
        args={"scales": [1.5, 0.5], "axes": [1, 2], "interp_type": types.INTERP_CUBIC},
    ),
    "draw_gaussians": OperatorExample(
        [
            [np.zeros((2, 6, 7), np.float32)] * 3,
            [np.array([True, True]), np.array([True]), np.zeros(0, bool)],
            [np.array([0, 1], np.int32), np.array([1], np.int32), np.zeros(0, np.int32)],
            [
                np.array([[1, 2], [6, 5]], np.int32),
                np.array([[3, 3]], np.int32),
                np.zeros((0, 2), np.int32),
            ],
            [
                np.array([2.0, 1.5], np.float32),
                np.array([3.0], np.float32),
                np.zeros(0, np.float32),
            ],
        ],
        args={"k_for_classes": [1.0, 0.5], "radius_to_sigma_factor": 0.4},
        gpu_atol=1e-6,
    ),
    "io.file.read": OperatorExample([[_THIS_FILE] * 3]),
    "decoders.numpy": OperatorExample([[np.frombuffer(_NPY.getvalue(), np.uint8)] * 3]),
    "ssd_random_crop": OperatorExample(
        [_SSD_IMAGES, _SSD_BOXES, _SSD_LABELS], ["HWC", "", ""], {"num_attempts": 5}
    ),
    "resize_crop_mirror": OperatorExample([_SSD_IMAGES], ["HWC"], _RCM_ARGS),
    "fast_resize_crop_mirror": OperatorExample([_SSD_IMAGES], ["HWC"], _RCM_ARGS),
    "dl_tensor_python_function": OperatorExample(
        [[s.astype(np.int32) for s in _INTS[0]]], args={"function": _negate_capsules}
    ),
}
if importlib.util.find_spec("numba") is not None:
    CATALOGUE_EXAMPLES["experimental.numba_function"] = OperatorExample(
        [_SSD_IMAGES],
        args={
            "run_fn": _invert,
            "in_types": [types.UINT8],
            "out_types": [types.UINT8],
            "ins_ndim": [3],
            "outs_ndim": [3],
        },
    )
#: Catalogue operators ``check_operator`` does not run here, with the reason.
CATALOGUE_SKIPPED = {
    "dump_image": "writes files into the working directory; tests/operators/cpu/files/"
    "test_dump_image.py runs check_operator in a temporary one",
    "experimental.inputs.video": "its videos come from Pipeline.feed_input, which check_operator "
    "does not drive; tests/operators/cpu/video/test_stream_input.py checks it (thread counts too)",
}
if importlib.util.find_spec("numba") is None:
    CATALOGUE_SKIPPED["experimental.numba_function"] = "numba (the 'numba' extra) is not installed"
