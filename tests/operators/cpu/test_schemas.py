"""The CPU families' schemas: registration, light plugin modules, lazy kernels, DALI argument
names and defaults, docs."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from feedline import fn, pipeline_def, types
from feedline.core.plugins import PluginSystem
from feedline.core.registry import load_object
from feedline.core.schema import REQUIRED
from feedline.core.types import DataType, ImageType, InterpType
from feedline.operators.cpu.color.adjust import color_twist, twist_matrix
from feedline.operators.cpu.geometry.warp import rotate_matrix, rotated_size, warp_affine
from tests.operators.cpu.families import FAMILIES
from tests.operators.cpu.image_samples import use_transforms

SCHEMAS = {s.name: s for family in FAMILIES.values() for s in family.SCHEMAS}

# name -> {argument: default} as listed by DALI 2.4's schemas (REQUIRED = no default; None =
# optional without a default); common arguments and bytes_per_sample_hint left out
DALI_DEFAULTS = {
    "flip": {"horizontal": 1, "vertical": 0, "depthwise": 0},
    "rotate": {
        "angle": REQUIRED,
        "axis": None,
        "size": None,
        "keep_size": False,
        "fill_value": None,
        "interp_type": InterpType.INTERP_LINEAR,
        "dtype": None,
    },
    "warp_affine": {
        "matrix": None,
        "size": None,
        "fill_value": None,
        "inverse_map": True,
        "interp_type": InterpType.INTERP_LINEAR,
        "dtype": None,
    },
    "transpose": {"perm": None, "output_layout": None, "transpose_layout": True},
    "pad": {"fill_value": 0.0, "axes": None, "axis_names": None, "align": None, "shape": None},
    "paste": {
        "fill_value": REQUIRED,
        "min_canvas_size": 0.0,
        "n_channels": 3,
        "paste_x": 0.5,
        "paste_y": 0.5,
        "ratio": REQUIRED,
    },
    "slice": {
        "axes": None,
        "axis_names": None,
        "start": None,
        "rel_start": None,
        "end": None,
        "rel_end": None,
        "shape": None,
        "rel_shape": None,
        "normalized_anchor": True,
        "normalized_shape": True,
        "fill_values": (0.0,),
        "out_of_bounds_policy": "error",
        "dtype": None,
    },
    "normalize": {
        "mean": None,
        "stddev": None,
        "axes": None,
        "axis_names": None,
        "batch": False,
        "ddof": 0,
        "epsilon": 0.0,
        "scale": 1.0,
        "shift": 0.0,
        "dtype": DataType.FLOAT,
    },
    "brightness": {"brightness": 1.0, "brightness_shift": 0.0, "dtype": None},
    "contrast": {"contrast": 1.0, "contrast_center": None, "dtype": None},
    "brightness_contrast": {
        "brightness": 1.0,
        "brightness_shift": 0.0,
        "contrast": 1.0,
        "contrast_center": None,
        "dtype": None,
    },
    "hue": {"hue": 0.0, "image_type": ImageType.RGB, "dtype": None},
    "saturation": {"saturation": 1.0, "image_type": ImageType.RGB, "dtype": None},
    "hsv": {"hue": 0.0, "saturation": 1.0, "value": 1.0, "dtype": DataType.UINT8},
    "color_twist": {
        "brightness": 1.0,
        "contrast": 1.0,
        "hue": 0.0,
        "saturation": 1.0,
        "image_type": ImageType.RGB,
        "dtype": None,
    },
    "color_space_conversion": {"image_type": REQUIRED, "output_type": REQUIRED},
    "noise.gaussian": {"mean": 0.0, "stddev": 1.0},
}

# arguments DALI accepts per sample (tensor arguments)
DALI_TENSOR_ARGS = {
    "flip": {"horizontal", "vertical", "depthwise"},
    "rotate": {"angle", "axis", "size"},
    "warp_affine": {"matrix", "size"},
    "paste": {"min_canvas_size", "paste_x", "paste_y", "ratio"},
    "pad": {"fill_value", "align", "shape", "axes"},
    "slice": {"axes", "start", "rel_start", "end", "rel_end", "shape", "rel_shape"},
    "normalize": {"mean", "stddev"},
    "brightness": {"brightness", "brightness_shift"},
    "contrast": {"contrast", "contrast_center"},
    "brightness_contrast": {"brightness", "brightness_shift", "contrast", "contrast_center"},
    "hue": {"hue"},
    "saturation": {"saturation"},
    "hsv": {"hue", "saturation", "value"},
    "color_twist": {"brightness", "contrast", "hue", "saturation"},
    "noise.gaussian": {"mean", "stddev"},
}


def test_every_operator_is_registered_with_a_loadable_kernel(
    empty_plugin_system: PluginSystem,
) -> None:
    use_transforms(empty_plugin_system)
    registry = empty_plugin_system.ensure_loaded()
    for name in DALI_DEFAULTS:
        entry = registry.operators[name]
        assert entry.devices == ("cpu",)
        assert load_object(entry.kernels["cpu"]).__name__.endswith("Kernel")


@pytest.mark.parametrize("name", sorted(DALI_DEFAULTS))
def test_argument_names_and_defaults_follow_dali(name: str) -> None:
    schema = SCHEMAS[name]
    assert {a.name: a.default for a in schema.args} == DALI_DEFAULTS[name]
    tensor = {a.name for a in schema.args if a.tensor}
    assert tensor == DALI_TENSOR_ARGS.get(name, set())


def test_deprecated_aliases_and_docs() -> None:
    for name in ("rotate", "warp_affine", "slice", "crop", "crop_mirror_normalize"):
        assert SCHEMAS[name].deprecated == {"output_dtype": "dtype"}
    for schema in (SCHEMAS[name] for name in DALI_DEFAULTS):
        doc = schema.docstring()
        assert all(arg.name in doc for arg in schema.args)
        assert len(schema.doc.splitlines()[0]) <= 100


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_plugin_modules_import_no_kernel(family: str) -> None:
    """A family's plugin module loads only the core and schema modules (``*schemas``,
    ``*_schema``): no kernel, no NumPy operator code, no Pillow, cffi or codec library."""
    code = (
        f"import sys, {FAMILIES[family].__name__}\n"
        "ops = [m for m in sys.modules if m.startswith('feedline.operators.')]\n"
        "kept = ('schemas', '_schema', '.cpu', '.operators')\n"
        "heavy = [m for m in ops if not m.endswith(kept) and "
        "m.rsplit('.', 1)[0] not in ('feedline.operators.cpu',)]\n"
        "heavy += [m for m in ('PIL', 'cffi', 'simplejpeg', 'cv2') if m in sys.modules]\n"
        "print(heavy)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_chained_operators_in_one_pipeline(empty_plugin_system: PluginSystem) -> None:
    """A per-sample chain (fused by the executor) equals the operators applied one by one."""
    use_transforms(empty_plugin_system)
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 256, (9 + i, 12, 3)).astype(np.uint8) for i in range(3)]
    angles = [np.float32(a) for a in (10.0, -35.0, 90.0)]

    @pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=1)
    def graph():
        x = fn.external_source(source=lambda: images, batch=True, layout="HWC")
        angle = fn.external_source(source=lambda: angles, batch=True)
        x = fn.flip(x, vertical=1)
        x = fn.rotate(x, angle=angle, interp_type=types.INTERP_NN)
        x = fn.hue(x, hue=20.0)
        return fn.transpose(x, perm=[2, 0, 1])

    pipe = graph()
    pipe.build()
    (out,) = pipe.run()
    assert out.layout() == "CHW"
    for i, (image, angle) in enumerate(zip(images, angles, strict=True)):
        step = np.ascontiguousarray(image[::-1, ::-1])  # horizontal=1 is the default
        size = rotated_size(*step.shape[:2], float(angle))
        step = warp_affine(
            step,
            "HWC",
            rotate_matrix(float(angle), step.shape[:2], size),
            size,
            InterpType.INTERP_NN,
        )
        step = color_twist(step, twist_matrix(hue=20.0), 0.0)
        np.testing.assert_array_equal(out.at(i), step.transpose(2, 0, 1))
