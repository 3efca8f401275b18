"""Every GPU kernel against its CPU kernel: on the host emulation of the CUDA sources (every
machine), and on a CUDA device (``gpu`` marker: skipped without one).

For the emulation the ``.cu`` files are compiled as C++ with ``FLG_HOST_EMULATION`` (see
``flg_common.cuh``): the same kernels, launchers and Python kernel classes run on the CPU, so
these tests check the GPU kernels' arithmetic on machines without a GPU. Random inputs of
every supported dtype (hypothesis). Tolerances: exact (integer and float outputs alike) except
where the CPU kernel uses a BLAS matrix product (colour twist: integers within 1, floats 1e-5
relative; coord_transform: 1e-12 relative in float64) or a transcendental function of NumPy's
SIMD libm (math: 4 ulp in float32, 1e-13 relative in float64); float16 crops converted to
8-bit integers within 1 (NumPy rounds the +0.5 in float16).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from feedline import types
from feedline.core.plugins import PluginSystem
from feedline.core.types import from_numpy_dtype
from feedline.operators.gpu.backend import Backend, cuda_backend, host_backend
from feedline.operators.gpu.math_ops import OPS
from tests.operators.gpu.gpu_testing import (
    as_numpy,
    assert_same,
    cpu_plugins,
    kernels,
    run_cpu,
    run_gpu,
)

G = "feedline.operators.gpu."
EXAMPLES = settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
DTYPES = {
    np.uint8: types.UINT8,
    np.int8: types.INT8,
    np.uint16: types.UINT16,
    np.int16: types.INT16,
    np.int32: types.INT32,
    np.float16: types.FLOAT16,
    np.float32: types.FLOAT,
    np.float64: types.FLOAT64,
}


@pytest.fixture(scope="module")
def system() -> PluginSystem:
    return cpu_plugins()


@pytest.fixture(scope="module", params=["host", pytest.param("cuda", marks=pytest.mark.gpu)])
def backend(request: pytest.FixtureRequest) -> Backend:
    """The host emulation, or the CUDA device."""
    return host_backend() if request.param == "host" else cuda_backend()


def _random(draw: Any, dtype: Any, shape: tuple[int, ...]) -> np.ndarray:
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return (rng.standard_normal(shape) * 300).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    info = np.iinfo(dtype)
    return rng.integers(info.min, int(info.max) + 1, shape, dtype=dtype)


def _images(draw: Any, dtype: Any, channels: int = 3, n: int | None = None) -> list[np.ndarray]:
    n = n or draw(st.integers(1, 3))
    shapes = [(draw(st.integers(1, 14)), draw(st.integers(1, 14)), channels) for _ in range(n)]
    if draw(st.booleans()):
        shapes = [shapes[0]] * n  # a dense batch
    return [_random(draw, dtype, s) for s in shapes]


def _compare(
    backend: Backend,
    system: PluginSystem,
    op: str,
    gpu: str,
    data: list,
    layout: str,
    tol: float = 0,
    **kwargs: Any,
) -> None:
    inputs = data if isinstance(data[0], list) else [data]
    cpu, kernel = kernels(system, op, gpu, num_inputs=len(inputs), **kwargs)
    try:
        with np.errstate(over="ignore"):  # values beyond float16 become inf on both sides
            expected = run_cpu(cpu, inputs, [layout] * len(inputs))
    except (TypeError, ValueError) as error:  # what the CPU kernel refuses, the GPU one must too
        with pytest.raises(type(error)):
            run_gpu(kernel, backend, inputs, [layout] * len(inputs))
        return
    got, _ = run_gpu(kernel, backend, inputs, [layout] * len(inputs))
    assert_same(expected, got, tol)


@EXAMPLES
@given(data=st.data())
def test_crop(backend: Backend, system: PluginSystem, data: st.DataObject) -> None:
    draw = data.draw
    dtype = draw(st.sampled_from(sorted(DTYPES, key=str)))
    out = draw(st.sampled_from([None, *DTYPES]))
    policy = draw(st.sampled_from(["pad", "trim_to_shape"]))
    fill = draw(st.sampled_from([(0.0,), (7.0,), (1.0, 2.0, 3.0)]))
    kwargs = {"dtype": DTYPES[out]} if out else {}
    half_to_int = np.dtype(dtype) == np.float16 and out and np.dtype(out).kind in "iu"
    # The CPU kernel clamps float16 values to the integer type's range in float16, which
    # overflows for ranges beyond float16's (it warns): not a case to compare.
    assume(not (half_to_int and np.dtype(out).itemsize > 1))
    _compare(
        backend,
        system,
        "crop",
        G + "window_ops:CropGpu",
        _images(draw, dtype),
        "HWC",
        1 if half_to_int else 0,
        crop=(draw(st.integers(1, 20)), draw(st.integers(1, 20))),
        crop_pos_x=draw(st.floats(0, 1)),
        crop_pos_y=draw(st.floats(0, 1)),
        out_of_bounds_policy=policy,
        fill_values=fill,
        **kwargs,
    )


@EXAMPLES
@given(data=st.data())
def test_flip_and_transpose(backend: Backend, system: PluginSystem, data: st.DataObject) -> None:
    draw = data.draw
    images = _images(draw, draw(st.sampled_from(sorted(DTYPES, key=str))))
    layout = draw(st.sampled_from(["HWC", "CHW"]))
    _compare(
        backend,
        system,
        "flip",
        G + "window_ops:FlipGpu",
        images,
        layout,
        horizontal=draw(st.integers(0, 1)),
        vertical=draw(st.integers(0, 1)),
    )
    perm = draw(st.permutations([0, 1, 2]))
    _compare(backend, system, "transpose", G + "window_ops:TransposeGpu", images, layout, perm=perm)


@EXAMPLES
@given(data=st.data())
def test_pad(backend: Backend, system: PluginSystem, data: st.DataObject) -> None:
    draw = data.draw
    images = _images(draw, draw(st.sampled_from([np.uint8, np.int16, np.float32])))
    _compare(
        backend,
        system,
        "pad",
        G + "window_ops:PadGpu",
        images,
        "HWC",
        fill_value=draw(st.integers(0, 100)),
        axis_names=draw(st.sampled_from(["H", "HW"])),
        align=draw(st.integers(1, 4)),
    )


@EXAMPLES
@given(data=st.data())
def test_cast(backend: Backend, system: PluginSystem, data: st.DataObject) -> None:
    draw = data.draw
    images = _images(draw, draw(st.sampled_from([*DTYPES, np.uint32, np.int64, np.bool_])))
    out = draw(st.sampled_from([*DTYPES, np.uint32, np.int64, np.uint64, np.bool_]))
    dtype = from_numpy_dtype(np.dtype(out))
    # float16 clamped to a range float16 cannot hold overflows in the CPU kernel (it warns).
    assume(
        images[0].dtype != np.float16
        or np.dtype(out).kind not in "iu"
        or out in (np.uint8, np.int8)
    )
    _compare(backend, system, "cast", G + "window_ops:CastGpu", images, "HWC", dtype=dtype)


@EXAMPLES
@given(data=st.data())
def test_crop_mirror_normalize(backend: Backend, system: PluginSystem, data: st.DataObject) -> None:
    draw = data.draw
    images = _images(draw, draw(st.sampled_from([np.uint8, np.int16, np.uint16, np.float32])))
    out = draw(st.sampled_from([np.float32, np.float16, np.uint8, np.int8, np.int16, np.int32]))
    crop = draw(
        st.sampled_from(
            [
                {},
                {"crop": (5, 7), "out_of_bounds_policy": "pad"},
                {"crop_h": 20, "crop_w": 3, "out_of_bounds_policy": "pad"},
            ]
        )
    )
    _compare(
        backend,
        system,
        "crop_mirror_normalize",
        G + "window_ops:CropMirrorNormalizeGpu",
        images,
        "HWC",
        dtype=DTYPES[out],
        mirror=draw(st.integers(0, 1)),
        output_layout=draw(st.sampled_from(["HWC", "CHW"])),
        pad_output=draw(st.booleans()),
        mean=[12.5, 100.0, 3.0],
        std=[30.0, 2.5, 60.0],
        scale=draw(st.sampled_from([1.0, 64.0])),
        shift=draw(st.sampled_from([0.0, 128.0])),
        fill_values=(draw(st.integers(0, 255)),),
        **crop,
    )


@EXAMPLES
@given(data=st.data())
def test_brightness_contrast_and_colour_twist(
    backend: Backend, system: PluginSystem, data: st.DataObject
) -> None:
    draw = data.draw
    dtype = draw(st.sampled_from([np.uint8, np.int16, np.int32, np.float32]))
    images = _images(draw, dtype)
    _compare(
        backend,
        system,
        "brightness_contrast",
        G + "window_ops:BrightnessContrastGpu",
        images,
        "HWC",
        brightness=draw(st.floats(0, 2)),
        contrast=draw(st.floats(0, 2)),
        brightness_shift=draw(st.floats(-0.5, 0.5)),
    )
    tol = 1e-5 if np.dtype(dtype).kind == "f" else 1
    _compare(
        backend,
        system,
        "hsv",
        G + "color_ops:ColorTwistGpu",
        images,
        draw(st.sampled_from(["HWC", "CHW"])) if images[0].shape[0] == 3 else "HWC",
        tol,
        hue=draw(st.floats(-180, 180)),
        saturation=draw(st.floats(0, 2)),
        value=draw(st.floats(0, 2)),
    )
    _compare(
        backend,
        system,
        "color_twist",
        G + "color_ops:ColorTwistGpu",
        images,
        "HWC",
        tol,
        hue=draw(st.floats(-180, 180)),
        contrast=draw(st.floats(0, 2)),
        brightness=draw(st.floats(0, 2)),
    )


@EXAMPLES
@given(data=st.data())
def test_normalize(backend: Backend, system: PluginSystem, data: st.DataObject) -> None:
    draw = data.draw
    dtype = draw(st.sampled_from([np.uint8, np.int8, np.uint16, np.int16, np.int32, np.float32]))
    images = _images(draw, dtype)
    out = draw(st.sampled_from([types.FLOAT, types.UINT8, types.INT16]))
    kwargs = draw(
        st.sampled_from(
            [
                {},
                {"axis_names": "HW"},
                {"mean": 3.0, "stddev": 20.0},
                {"batch": True, "axis_names": "HW"},
            ]
        )
    )
    if kwargs.get("batch") and len({i.shape[2] for i in images}) > 1:
        kwargs = {}
    _compare(
        backend,
        system,
        "normalize",
        G + "normalize_ops:NormalizeGpu",
        images,
        "HWC",
        dtype=out,
        scale=draw(st.sampled_from([1.0, 30.0])),
        shift=draw(st.sampled_from([0.0, 100.0])),
        **kwargs,
    )


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_normalize_reduces_a_dense_batch_at_once(
    backend: Backend, system: PluginSystem, data: st.DataObject
) -> None:
    """Equally shaped samples large enough for pairwise summation: the statistics come from
    one reduction over the stacked batch and still equal the CPU kernel's per-sample ones."""
    draw = data.draw
    dtype = draw(st.sampled_from([np.uint8, np.int16, np.float32]))
    shape = (draw(st.integers(60, 130)), draw(st.integers(60, 130)), 3)
    images = [_random(draw, dtype, shape) for _ in range(draw(st.integers(2, 4)))]
    _compare(
        backend,
        system,
        "normalize",
        G + "normalize_ops:NormalizeGpu",
        images,
        "HWC",
        **draw(st.sampled_from([{}, {"axis_names": "HW"}, {"axis_names": "C"}])),
    )


@EXAMPLES
@given(data=st.data())
def test_resize_and_random_resized_crop(
    backend: Backend, system: PluginSystem, data: st.DataObject
) -> None:
    draw = data.draw
    dtype = draw(st.sampled_from([np.uint8, np.int16, np.uint16, np.int32, np.float32]))
    images = _images(draw, dtype, channels=draw(st.sampled_from([1, 3, 4])))
    interp = draw(
        st.sampled_from(
            [
                types.INTERP_LINEAR,
                types.INTERP_NN,
                types.INTERP_CUBIC,
                types.INTERP_LANCZOS3,
                types.INTERP_TRIANGULAR,
            ]
        )
    )
    out = draw(st.sampled_from([None, np.uint8, np.float32]))
    kwargs = {"dtype": DTYPES[out]} if out else {}
    layout = draw(st.sampled_from(["HWC", "CHW"]))
    _compare(
        backend,
        system,
        "resize",
        G + "resize_ops:ResizeGpu",
        images,
        layout,
        size=(draw(st.integers(1, 30)), draw(st.integers(1, 30))),
        interp_type=interp,
        antialias=draw(st.booleans()),
        **kwargs,
    )
    _compare(
        backend,
        system,
        "random_resized_crop",
        G + "resize_ops:RandomResizedCropGpu",
        images,
        "HWC",
        size=(draw(st.integers(1, 20)), draw(st.integers(1, 20))),
        interp_type=interp,
        **kwargs,
    )


@EXAMPLES
@given(data=st.data())
def test_resize_with_a_nearest_axis_and_a_filtered_one(
    backend: Backend, system: PluginSystem, data: st.DataObject
) -> None:
    """One axis magnified (nearest), the other minified (linear, antialiased): the row pass or
    the column pass alone is nearest, the two-pass kernel's mixed cases."""
    draw = data.draw
    dtype = draw(st.sampled_from([np.uint8, np.int16, np.float32]))
    images = _images(draw, dtype, channels=draw(st.sampled_from([1, 3])))
    grow_rows = draw(st.booleans())
    size = (28, draw(st.integers(1, 3))) if grow_rows else (draw(st.integers(1, 3)), 28)
    _compare(
        backend,
        system,
        "resize",
        G + "resize_ops:ResizeGpu",
        images,
        draw(st.sampled_from(["HWC", "CHW"])),
        size=size,
        mag_filter=types.INTERP_NN,
        min_filter=types.INTERP_LINEAR,
    )


@EXAMPLES
@given(data=st.data())
def test_boxes_and_points(backend: Backend, system: PluginSystem, data: st.DataObject) -> None:
    draw = data.draw
    n = draw(st.integers(1, 3))
    box_type = draw(st.sampled_from([np.float32, np.float64]))
    boxes = [_random(draw, box_type, (draw(st.integers(0, 6)), 4)) / 300 for _ in range(n)]
    _compare(
        backend,
        system,
        "bb_flip",
        G + "color_ops:BbFlipGpu",
        boxes,
        "",
        horizontal=draw(st.integers(0, 1)),
        vertical=draw(st.integers(0, 1)),
        ltrb=draw(st.booleans()),
    )
    point_type = draw(st.sampled_from([np.float32, np.int16]))  # one type per batch
    points = [_random(draw, point_type, (draw(st.integers(1, 6)), 2)) for _ in range(n)]
    _compare(
        backend,
        system,
        "coord_transform",
        G + "color_ops:CoordTransformGpu",
        points,
        "",
        1e-12,
        M=[1.5, -2.0, 0.25, 3.0, 1.0, -1.0],
        T=[0.5, -1.5, 2.0],
        dtype=draw(st.sampled_from([types.FLOAT, types.FLOAT64])),
    )


_EXACT_MATH = {"fabs", "floor", "ceil", "sqrt", "clamp"}


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_arithmetic(backend: Backend, system: PluginSystem, data: st.DataObject) -> None:
    draw = data.draw
    name = draw(st.sampled_from(OPS))
    arity = 3 if name == "clamp" else 2 if OPS.index(name) < OPS.index("neg") else 1
    dtypes = [
        draw(
            st.sampled_from(
                [
                    np.uint8,
                    np.int16,
                    np.int32,
                    np.int64,
                    np.uint64,
                    np.float32,
                    np.float64,
                    np.bool_,
                ]
            )
        )
        for _ in range(arity)
    ]
    n = draw(st.integers(1, 3))
    shape = (draw(st.integers(1, 5)), draw(st.integers(1, 5)))
    operands = []
    for k, dtype in enumerate(dtypes):
        broadcast = k > 0 and draw(st.booleans())
        samples = [_random(draw, dtype, shape[1:] if broadcast else shape) for _ in range(n)]
        if name in ("floordiv", "mod", "lshift", "rshift", "pow") and k == 1:
            samples = [
                np.where(s == 0, 1, s % 7 if np.dtype(dtype).kind in "iu" else s).astype(dtype)
                for s in samples
            ]
        operands.append(samples)
    cpu, kernel = kernels(
        system, "arithmetic." + name, G + "math_ops:ArithmeticGpu", num_inputs=arity
    )
    try:
        expected = run_cpu(cpu, operands, [""] * arity)
    except (TypeError, ZeroDivisionError) as error:  # refused on the CPU: refused on the GPU
        with pytest.raises(type(error)):
            run_gpu(kernel, backend, operands, [""] * arity)
        return
    got, _ = run_gpu(kernel, backend, operands, [""] * arity)
    transcendental = OPS.index(name) >= OPS.index("fabs") and name not in _EXACT_MATH
    if (transcendental or name in ("atan2", "fpow", "pow")) and expected[0].dtype.kind == "f":
        tol = 1e-13 if expected[0].dtype == np.float64 else 5e-7
        assert_same(expected, got, tol)
    else:
        assert_same(expected, got)


def test_integer_division_by_zero_is_an_error(backend: Backend, system: PluginSystem) -> None:
    _, kernel = kernels(system, "arithmetic.floordiv", G + "math_ops:ArithmeticGpu", num_inputs=2)
    operands = [[np.array([4, 5], np.int32)], [np.array([1, 0], np.int32)]]
    with pytest.raises(ZeroDivisionError, match="'//'"):
        run_gpu(kernel, backend, operands, ["", ""])


def test_cast_rounds_in_the_source_precision(backend: Backend, system: PluginSystem) -> None:
    # 0.49999997 rounds to 0 (adding 0.5 in float32 would give 1.0), infinities and NaN as DALI
    # converts them; 1 + 2**-11 + 2**-30 goes to float16 in one rounding (through float32 it
    # would round twice, to 1.0).
    floats = [np.array([0.49999997, -0.49999997, 0.5, -1.5, 2.5, np.nan, np.inf, -3e9], np.float32)]
    doubles = [np.array([1 + 2**-11 + 2**-30, -(1 + 2**-11 + 2**-30), 65519.0], np.float64)]
    cases = [(floats, dtype) for dtype in (types.BOOL, types.INT8, types.INT32, types.UINT64)]
    for data, dtype in [*cases, (doubles, types.FLOAT16)]:
        _compare(backend, system, "cast", G + "window_ops:CastGpu", data, "", dtype=dtype)


@pytest.mark.gpu
def test_a_gpu_kernel_runs_a_batch_of_tensor_list_gpu(system: PluginSystem) -> None:
    """Kernel.run: TensorListGPU in and out, random windows drawn as the CPU kernel draws."""
    import cupy as cp

    from feedline.core.kernel import Batch
    from feedline.core.tensor_gpu import TensorListGPU

    rng = np.random.default_rng(5)
    images = [rng.integers(0, 256, (40 + 3 * i, 50, 3), dtype=np.uint8) for i in range(4)]
    cpu, kernel = kernels(
        system, "random_resized_crop", G + "resize_ops:RandomResizedCropGpu", size=(24, 20)
    )
    expected = run_cpu(cpu, [images], ["HWC"])
    batch = Batch(
        [TensorListGPU.from_samples([cp.asarray(i) for i in images], "HWC")],
        {}, 0, len(images), 1234, lambda fn, count: [fn(i) for i in range(count)],
    )  # fmt: skip
    (out,) = kernel.run(batch)
    assert isinstance(out, TensorListGPU) and out.is_dense_tensor() and out.layout() == "HWC"
    assert_same(expected, [t.as_cpu().as_array() for t in out])


_SEQUENCE_CASES = [
    ("resize", "resize_ops:ResizeGpu", {"size": (9, 31)}, "FHWC"),
    ("resize", "resize_ops:ResizeGpu", {"size": (9, 31)}, "FCHW"),
    ("crop_mirror_normalize", "window_ops:CropMirrorNormalizeGpu",
     {"crop": (7, 9), "mirror": 1, "mean": [1.0], "std": [3.0]}, "FHWC"),
    ("crop_mirror_normalize", "window_ops:CropMirrorNormalizeGpu",
     {"crop": (7, 9), "mean": [1.0], "std": [3.0], "output_layout": "HWC"}, "FCHW"),
    ("flip", "window_ops:FlipGpu", {"horizontal": 1, "vertical": 1}, "FHWC"),
    ("crop", "window_ops:CropGpu", {"crop": (5, 6)}, "FCHW"),
    ("hsv", "color_ops:ColorTwistGpu", {"hue": 33.0}, "FCHW"),
]  # fmt: skip


@pytest.mark.parametrize(("op", "gpu", "kwargs", "layout"), _SEQUENCE_CASES)
def test_sequences(
    backend: Backend, system: PluginSystem, op: str, gpu: str, kwargs: dict, layout: str
) -> None:
    rng = np.random.default_rng(3)
    frames = [rng.integers(0, 256, (2, 20 + i, 25, 3), dtype=np.uint8) for i in range(2)]
    if layout == "FCHW":
        frames = [np.ascontiguousarray(f.transpose(0, 3, 1, 2)) for f in frames]
    _compare(backend, system, op, G + gpu, frames, layout, 1 if op == "hsv" else 0, **kwargs)


@pytest.mark.parametrize(
    "arguments",
    [
        {"at_0": 1, "lo_1": -3, "step_1": -1, "num_subscripts": 2},
        {"lo_0": 1, "hi_0": 40, "step_0": 3, "at_2": 0, "num_subscripts": 3},
        {"hi_1": 2, "num_subscripts": 2},
    ],
)
def test_tensor_subscript(backend: Backend, system: PluginSystem, arguments: dict) -> None:
    images = [np.arange(4 * 5 * 3, dtype=np.int16).reshape(4, 5, 3) * (i + 1) for i in range(3)]
    _compare(
        backend, system, "_tensor_subscript", G + "subscript_ops:TensorSubscriptGpu", [images],
        "HWC", **arguments,
    )  # fmt: skip


def test_subscript_dim_check(backend: Backend, system: PluginSystem) -> None:
    images = [np.zeros((4, 5, 3), np.uint8)] * 2
    kernel = G + "subscript_ops:SubscriptDimCheckGpu"
    _, passing = kernels(system, "_subscript_dim_check", kernel, num_subscripts=3)
    got, layout = run_gpu(passing, backend, [images], ["HWC"])
    assert layout == "HWC" and [as_numpy(g).shape for g in got] == [(4, 5, 3)] * 2
    _, failing = kernels(system, "_subscript_dim_check", kernel, num_subscripts=4)
    with pytest.raises(IndexError, match=r"Too many indices \(4\) for a 3-D tensor"):
        run_gpu(failing, backend, [images], ["HWC"])
