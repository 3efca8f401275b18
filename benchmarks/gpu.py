"""GPU kernels and the mixed ImageNet train pipeline on one device: bandwidth, PyTorch, img/s.

For a batch of ``--batch`` (256) ImageNet-sized images (uint8 HWC, 3 channels, heights 300-500
and widths 350-640 as in ImageNet; ``--dense`` makes them all 375x500):

* each kernel (one ``compute`` call for the batch: host preparation, uploads, launches): its
  time, the bytes it must move (read + written) per second, and that as a percentage of a
  device-to-device copy of 1 GiB measured in the same run;
* the same operation in PyTorch beside it, one call per image as code for ragged batches is
  written (one batched call with ``--dense``): ``interpolate(mode="bilinear", antialias=True)``
  for resize, tensor indexing, ``flip``, arithmetic, ``permute`` and ``float()`` for crop,
  mirror, normalise, transpose and cast; its bandwidth on the same scale and the speed-up;
* the mixed ImageNet train pipeline (``decoders.image`` mixed → ``random_resized_crop(224)`` →
  ``crop_mirror_normalize`` with a random mirror, float CHW) on the JPEGs bundled with
  feedline: images/s, against the same pipeline on the CPU of the same machine, and the GPU's
  share of its time (the GPU stages' time for one decoded batch over the pipeline's time per
  batch).

Times are medians over ``--repeat`` runs after a warm-up, measured on the host around a device
synchronisation (so both sides pay their launch overhead). The device, driver and runtime are
printed with the figures.

Without a CUDA device (or CuPy, or PyTorch for its column) it prints why and exits 0, or 2 with
``--require-gpu`` (``benchmarks/gpu_check.sh`` passes it on a device).

Goals (docs/gpu.md): resize and crop_mirror_normalize at 60 % of the copy bandwidth or more and
faster than PyTorch; the mixed pipeline faster than the CPU one.

Usage: ``python benchmarks/gpu.py [--batch 256] [--repeat 10] [--dense] [--require-gpu]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from feedline import types
from feedline.core.kernel import KernelContext, sample_rng
from feedline.core.plugins import PluginSystem

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
G = "feedline.operators.gpu."


def _device_info(cp: Any) -> str:
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    driver = cp.cuda.runtime.driverGetVersion()
    runtime = cp.cuda.runtime.runtimeGetVersion()
    return f"{name} (sm_{props['major']}{props['minor']}, driver {driver}, runtime {runtime})"


def _time(cp: Any, fn: Callable[[], Any], repeat: int) -> float:
    """Median seconds of ``fn`` including the device work it queued (all streams)."""
    device = cp.cuda.Device()
    fn()
    device.synchronize()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        device.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def copy_bandwidth(cp: Any, repeat: int) -> float:
    """Bytes per second of a device-to-device copy of 1 GiB (read + write counted)."""
    source = cp.empty(1 << 30, cp.uint8)
    target = cp.empty_like(source)
    seconds = _time(cp, lambda: cp.copyto(target, source), repeat)
    return 2 * source.nbytes / seconds


def _images(cp: Any, batch: int, dense: bool, seed: int) -> list[Any]:
    rng = np.random.default_rng(seed)
    images = []
    for _ in range(batch):
        h, w = (375, 500) if dense else (int(rng.integers(300, 501)), int(rng.integers(350, 641)))
        images.append(cp.asarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)))
    return images


def _kernel(system: PluginSystem, op: str, reference: str, batch: int, **kwargs: Any) -> Any:
    registry = system.ensure_loaded()
    schema = registry.operators[op].schema
    static, _ = schema.validate(kwargs)
    module, _, attr = reference.partition(":")
    cls = getattr(__import__(module, fromlist=[attr]), attr)
    context = KernelContext(op, schema, static, frozenset(), "gpu", batch, 1, 0, 0, num_inputs=1)
    kernel = cls(context)
    kernel.setup()
    return kernel


def _runner(kernel: Any, backend: Any, images: list[Any]) -> Callable[[], Any]:
    from feedline.operators.gpu.base import GpuBatch

    args = [dict(kernel.args) for _ in images]
    batch = GpuBatch(backend, [images], ["HWC"], args, lambda i: sample_rng(0, 0, i))
    return lambda: kernel.compute(batch)


Case = tuple[str, str, str, dict[str, Any], Callable[[], Any], int]


def _cases(torch: Any, images: list[Any], dense: bool) -> list[Case]:
    """(name, operator, kernel, arguments, PyTorch equivalent, bytes moved at least)."""
    F = torch.nn.functional
    tensors = [torch.from_dlpack(i) for i in images]  # shares the CuPy buffers
    if dense:
        tensors = [torch.stack(tensors)]
    mean = torch.tensor(MEAN, device=tensors[0].device)
    std = torch.tensor(STD, device=tensors[0].device)
    pixels = sum(int(i.size) for i in images)
    crops = len(images) * 224 * 224 * 3

    def resize() -> Any:
        out = []
        for t in tensors:
            planar = (t if dense else t[None]).permute(0, 3, 1, 2).float()
            small = F.interpolate(planar, size=(224, 224), mode="bilinear", antialias=True)
            out.append(small.round_().clamp_(0, 255).to(torch.uint8).permute(0, 2, 3, 1))
        return out

    def cmn() -> Any:
        out = []
        for t in tensors:
            crop = t[..., 16:240, 16:240, :].flip(-2).float()
            out.append(((crop - mean) / std).movedim(-1, -3).contiguous())
        return out

    return [
        ("resize 224x224 (linear, antialiased)", "resize", "resize_ops:ResizeGpu",
         {"size": (224, 224), "antialias": True}, resize, pixels + crops),
        ("crop_mirror_normalize 224 -> float CHW", "crop_mirror_normalize",
         "window_ops:CropMirrorNormalizeGpu",
         {"crop": (224, 224), "mirror": 1,
          "dtype": types.FLOAT, "output_layout": "CHW", "mean": MEAN, "std": STD},
         cmn, crops + crops * 4),
        ("flip horizontal", "flip", "window_ops:FlipGpu", {"horizontal": 1},
         lambda: [t.flip(-2) for t in tensors], 2 * pixels),
        ("cast uint8 -> float32", "cast", "window_ops:CastGpu", {"dtype": types.FLOAT},
         lambda: [t.float() for t in tensors], 5 * pixels),
        ("transpose HWC -> CHW", "transpose", "window_ops:TransposeGpu", {"perm": (2, 0, 1)},
         lambda: [t.movedim(-1, -3).contiguous() for t in tensors], 2 * pixels),
    ]  # fmt: skip


def kernel_table(cp: Any, torch: Any, backend: Any, options: argparse.Namespace) -> None:
    """Print each kernel's time and share of the copy bandwidth beside PyTorch's."""
    system = PluginSystem()
    images = _images(cp, options.batch, options.dense, options.seed)
    peak = copy_bandwidth(cp, options.repeat)
    print(f"batch: {len(images)} uint8 HWC images, {sum(i.nbytes for i in images) / 2**20:.1f} MiB")
    print(f"device-to-device copy: {peak / 1e9:.1f} GB/s (read + write)")
    header = ("kernel", "ms", "GB/s", "of copy", "torch ms", "of copy", "speed-up")
    print("{:40s} {:>8s} {:>7s} {:>8s} {:>9s} {:>8s} {:>9s}".format(*header))
    for name, op, reference, kwargs, equivalent, moved in _cases(torch, images, options.dense):
        kernel = _kernel(system, op, G + reference, len(images), **kwargs)
        seconds = _time(cp, _runner(kernel, backend, images), options.repeat)
        baseline = _time(cp, equivalent, options.repeat)
        rate = moved / seconds
        print(
            f"{name:40s} {seconds * 1e3:8.2f} {rate / 1e9:7.1f} {rate / peak:8.0%} "
            f"{baseline * 1e3:9.2f} {moved / baseline / peak:8.0%} {baseline / seconds:8.2f}x"
        )


def _jpegs(count: int) -> list[np.ndarray]:
    from feedline.data import path

    files = sorted(path("coco_dali_dummy", "images").iterdir())
    files += sorted(path("file_tree").glob("*/*.jpg"))
    encoded = [np.fromfile(f, np.uint8) for f in files]
    return [encoded[i % len(encoded)] for i in range(count)]


def _train_pipeline(device: str, jpegs: list[np.ndarray], threads: int) -> Any:
    from feedline import fn, pipeline_def

    @pipeline_def(
        batch_size=len(jpegs), num_threads=threads, device_id=0 if device == "gpu" else None,
        seed=1,
    )  # fmt: skip
    def train():
        data = fn.external_source(source=lambda: jpegs)
        images = fn.decoders.image(data, device="mixed" if device == "gpu" else "cpu")
        images = fn.random_resized_crop(images, size=(224, 224), device=device)
        return fn.crop_mirror_normalize(
            images,
            mirror=fn.random.coin_flip(),
            dtype=types.FLOAT,
            output_layout="CHW",
            mean=MEAN,
            std=STD,
            device=device,
        )

    return train()


def _rate(pipe: Any, iterations: int) -> float:
    pipe.run()
    start = time.perf_counter()
    for _ in range(iterations):
        (out,) = pipe.run()
    if hasattr(out, "as_cpu"):
        out.as_cpu()
    return iterations * pipe.max_batch_size / (time.perf_counter() - start)


def pipeline_table(cp: Any, backend: Any, options: argparse.Namespace) -> None:
    """Print the mixed train pipeline's img/s, the CPU one's and the GPU's share of the time."""
    threads = options.threads or os.cpu_count() or 1
    jpegs = _jpegs(options.batch)
    gpu_pipe = _train_pipeline("gpu", jpegs, threads)
    cpu_pipe = _train_pipeline("cpu", jpegs, threads)
    try:
        gpu_rate = _rate(gpu_pipe, options.iterations)
        cpu_rate = _rate(cpu_pipe, options.iterations)
    finally:
        gpu_pipe.close()
        cpu_pipe.close()
    system = PluginSystem()
    decoded = [cp.asarray(_decode(j)) for j in jpegs]
    rrc = _kernel(system, "random_resized_crop", G + "resize_ops:RandomResizedCropGpu",
                  len(jpegs), size=(224, 224))  # fmt: skip
    cmn = _kernel(system, "crop_mirror_normalize", G + "window_ops:CropMirrorNormalizeGpu",
                  len(jpegs), dtype=types.FLOAT, output_layout="CHW", mean=MEAN, std=STD,
                  mirror=1)  # fmt: skip
    crops = [cp.empty((224, 224, 3), cp.uint8) for _ in jpegs]
    gpu_seconds = _time(cp, _runner(rrc, backend, decoded), options.repeat) + _time(
        cp, _runner(cmn, backend, crops), options.repeat
    )
    share = gpu_seconds * gpu_rate / len(jpegs)
    print(f"mixed ImageNet train pipeline, batch {len(jpegs)}, {threads} threads:")
    print(f"  mixed (GPU) {gpu_rate:8.0f} img/s   CPU {cpu_rate:8.0f} img/s   "
          f"speed-up {gpu_rate / cpu_rate:.2f}x")  # fmt: skip
    print(f"  GPU stages {gpu_seconds * 1e3:.2f} ms per batch: {share:.0%} of the mixed time")


def _decode(encoded: np.ndarray) -> np.ndarray:
    import io

    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(encoded.tobytes())).convert("RGB"))


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark: the kernel table, then the pipeline figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--iterations", type=int, default=5, help="pipeline iterations timed")
    parser.add_argument("--threads", type=int, default=0, help="pipeline threads (0: all)")
    parser.add_argument("--dense", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--require-gpu", action="store_true", help="exit 2 without a device")
    options = parser.parse_args(argv)
    try:
        import cupy as cp
        import torch

        from feedline.operators.gpu.backend import cuda_backend

        backend = cuda_backend()
        if not torch.cuda.is_available():
            raise RuntimeError("PyTorch sees no CUDA device")
    except Exception as error:
        print(f"benchmarks/gpu.py skipped: it needs a CUDA device, CuPy and PyTorch ({error})")
        return 2 if options.require_gpu else 0
    print(f"device: {_device_info(cp)}")
    kernel_table(cp, torch, backend, options)
    pipeline_table(cp, backend, options)
    return 0


if __name__ == "__main__":
    sys.exit(main())
