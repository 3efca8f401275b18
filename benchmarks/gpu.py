"""GPU kernels: achieved memory bandwidth and time against CuPy/torch primitives (needs a GPU).

For each kernel, on a batch of 64 ImageNet-size images (uint8 HWC, 3 channels, sizes drawn
around 500x375 as in ImageNet; ``--dense`` makes them all one size), one launch per batch:

* bandwidth = (bytes read + bytes written) / time, as a fraction of the device's measured
  device-to-device copy bandwidth (``cudaMemcpy`` of 1 GiB);
* time against the same operation written with CuPy (or torch) primitives, one call per sample
  as such code is written for ragged batches (a vectorised call where the batch is dense).

Times are CUDA-event medians over ``--repeat`` runs after a warm-up, on one stream. The GPU model,
CUDA driver and runtime versions are printed with the figures.

Goals (issue #16): at least 60 % of the copy bandwidth for resize, crop_mirror_normalize, flip
and cast, and faster than the primitive equivalents.

Usage: ``python benchmarks/gpu.py [--batch 64] [--repeat 20] [--dense] [--seed 0]``

This script has not been run by its author, who had no GPU: its figures are still to be
recorded (see docs/gpu.md).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from feedline import types
from feedline.core.kernel import KernelContext, sample_rng
from feedline.core.plugins import PluginSystem

ImageBatch = list[Any]


def _device_info(cp: Any) -> str:
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    driver = cp.cuda.runtime.driverGetVersion()
    runtime = cp.cuda.runtime.runtimeGetVersion()
    return f"{name} (sm_{props['major']}{props['minor']}, driver {driver}, runtime {runtime})"


def _time(cp: Any, fn: Callable[[], Any], repeat: int) -> float:
    """Median seconds of ``fn`` measured with CUDA events on the current stream."""
    fn()
    cp.cuda.get_current_stream().synchronize()
    times = []
    for _ in range(repeat):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) / 1000)
    return statistics.median(times)


def copy_bandwidth(cp: Any, repeat: int) -> float:
    """Bytes per second of a device-to-device copy of 1 GiB (read + write counted)."""
    source = cp.empty(1 << 30, cp.uint8)
    target = cp.empty_like(source)
    seconds = _time(cp, lambda: cp.copyto(target, source), repeat)
    return 2 * source.nbytes / seconds


def _images(cp: Any, batch: int, dense: bool, seed: int) -> ImageBatch:
    rng = np.random.default_rng(seed)
    images = []
    for _ in range(batch):
        h, w = (375, 500) if dense else (int(rng.integers(300, 500)), int(rng.integers(350, 640)))
        images.append(cp.asarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)))
    return images


def _kernel(system: PluginSystem, op: str, reference: str, **kwargs: Any) -> Any:
    registry = system.ensure_loaded()
    schema = registry.operators[op].schema
    static, _ = schema.validate(kwargs)
    module, _, attr = reference.partition(":")
    cls = getattr(__import__(module, fromlist=[attr]), attr)
    kernel = cls(KernelContext(op, schema, static, frozenset(), "gpu", 64, 1, 0, 0, num_inputs=1))
    kernel.setup()
    return kernel


def _runner(kernel: Any, backend: Any, images: ImageBatch) -> Callable[[], Any]:
    from feedline.operators.gpu.base import GpuBatch

    args = [dict(kernel.args) for _ in images]
    batch = GpuBatch(backend, [images], ["HWC"], args, lambda i: sample_rng(0, 0, i))
    return lambda: kernel.compute(batch)


Case = tuple[str, str, dict[str, Any], Callable[[], Any], int, int]


def _cases(cp: Any, images: ImageBatch) -> list[Case]:
    """(name, kernel, arguments, primitive equivalent, bytes read, bytes written): the bytes
    the operation must move at least."""
    mean = cp.asarray([0.485 * 255, 0.456 * 255, 0.406 * 255], cp.float32)
    std = cp.asarray([0.229 * 255, 0.224 * 255, 0.225 * 255], cp.float32)
    pixels = sum(int(i.size) for i in images)
    crops = len(images) * 224 * 224 * 3

    def resize_primitive() -> Any:
        import cupyx.scipy.ndimage as ndimage

        return [ndimage.zoom(i, (224 / i.shape[0], 224 / i.shape[1], 1), order=1) for i in images]

    def cmn_primitive() -> Any:
        return [
            ((i[16:240, 16:240, :][:, ::-1].astype(cp.float32) - mean) / std).transpose(2, 0, 1)
            for i in images
            if i.shape[0] >= 240 and i.shape[1] >= 240
        ]

    g = "feedline.operators.gpu."
    return [
        ("resize 224x224 (linear, antialiased)", g + "resize_ops:ResizeGpu",
         {"size": (224, 224)}, resize_primitive, pixels, crops),
        ("crop_mirror_normalize 224 → float CHW", g + "window_ops:CropMirrorNormalizeGpu",
         {"crop": (224, 224), "mirror": 1, "dtype": types.FLOAT, "output_layout": "CHW",
          "mean": mean.get().tolist(), "std": std.get().tolist()},
         cmn_primitive, crops, crops * 4),
        ("flip horizontal", g + "window_ops:FlipGpu", {"horizontal": 1},
         lambda: [cp.ascontiguousarray(i[:, ::-1]) for i in images], pixels, pixels),
        ("cast uint8 → float32", g + "window_ops:CastGpu", {"dtype": types.FLOAT},
         lambda: [i.astype(cp.float32) for i in images], pixels, pixels * 4),
        ("brightness_contrast", g + "window_ops:BrightnessContrastGpu",
         {"brightness": 1.2, "contrast": 0.8},
         lambda: [cp.clip(cp.rint(i * 0.96 + 10.24), 0, 255).astype(cp.uint8) for i in images],
         pixels, pixels),
        ("hsv", g + "color_ops:ColorTwistGpu", {"hue": 20.0, "saturation": 1.2},
         lambda: [cp.clip(i.astype(cp.float32) @ cp.eye(3, dtype=cp.float32), 0, 255)
                  .astype(cp.uint8) for i in images], pixels, pixels),
        ("transpose HWC → CHW", g + "window_ops:TransposeGpu", {"perm": (2, 0, 1)},
         lambda: [cp.ascontiguousarray(i.transpose(2, 0, 1)) for i in images], pixels, pixels),
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; prints one line per kernel."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--dense", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args(argv)
    try:
        import cupy as cp

        from feedline.operators.gpu.backend import cuda_backend

        backend = cuda_backend()
    except Exception as error:
        print(f"benchmarks/gpu.py needs a CUDA device and CuPy: {error}", file=sys.stderr)
        return 2
    system = PluginSystem()
    images = _images(cp, options.batch, options.dense, options.seed)
    bytes_in = sum(int(i.nbytes) for i in images)
    peak = copy_bandwidth(cp, options.repeat)
    print(f"device: {_device_info(cp)}")
    print(f"batch: {len(images)} uint8 HWC images, {bytes_in / 2**20:.1f} MiB")
    print(f"device-to-device copy: {peak / 1e9:.1f} GB/s (read + write)")
    header = ("kernel", "ms", "GB/s", "of copy", "primitive ms", "speed-up")
    print("{:44s} {:>8s} {:>8s} {:>8s} {:>13s} {:>9s}".format(*header))
    for name, reference, kwargs, primitive, bytes_read, bytes_out in _cases(cp, images):
        kernel = _kernel(system, name.split()[0], reference, **kwargs)
        seconds = _time(cp, _runner(kernel, backend, images), options.repeat)
        baseline = _time(cp, primitive, options.repeat)
        rate = (bytes_read + bytes_out) / seconds
        print(
            f"{name:44s} {seconds * 1e3:8.2f} {rate / 1e9:8.1f} {rate / peak:8.0%} "
            f"{baseline * 1e3:13.2f} {baseline / seconds:8.1f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
