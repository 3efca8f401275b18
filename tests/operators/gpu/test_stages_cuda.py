"""GPU stages on a real CUDA device (marked ``gpu``: skipped without one, failing instead with
``FEEDLINE_REQUIRE_GPU=1``): transfers, GPU sources, the pipeline's stream, separate queues,
``mixed`` decoding against the CPU decoders, and a seeded ImageNet-style pipeline with ``mixed``
decoding and GPU kernels against the same pipeline on the CPU.

Tolerances: CPU decoding into pinned memory is exact; nvImageCodec JPEG decoding differs from
libjpeg-turbo in its IDCT and chroma upsampling: mean absolute difference below 1.5 per pixel.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from feedline import fn, pipeline_def, types
from feedline.core.kernel import Kernel
from feedline.core.plugins import PluginSystem
from feedline.core.types import DataType
from feedline.operators.gpu.mixed_decode import nvimgcodec_module
from tests.conftest import sample_jpegs

pytestmark = pytest.mark.gpu

IMAGES = [np.arange(24, dtype=np.uint8).reshape(2, 4, 3) + i for i in range(4)]


def _photos(count: int = 8) -> list[np.ndarray]:
    """Real JPEGs bundled with feedline (so the device check needs no shared data)."""
    return [np.fromfile(p, np.uint8) for p in sample_jpegs(count)]


def _run(graph: Any) -> tuple[Any, ...]:
    pipe = graph()
    try:
        return tuple(pipe.run())
    finally:
        pipe.close()


def test_gpu_then_cpu_round_trips(plugin_system: PluginSystem) -> None:
    from feedline.core.tensor_gpu import TensorListGPU

    @pipeline_def(batch_size=4, num_threads=2, device_id=0)
    def graph():
        data = fn.external_source(source=lambda: IMAGES, layout="HWC")
        return data.gpu(), data.gpu().cpu()

    on_gpu, back = _run(graph)
    assert isinstance(on_gpu, TensorListGPU) and on_gpu.is_dense_tensor()
    for i, image in enumerate(IMAGES):
        np.testing.assert_array_equal(on_gpu.as_cpu().at(i), image)
        np.testing.assert_array_equal(back.at(i), image)


def test_gpu_sources_and_constants(plugin_system: PluginSystem) -> None:
    @pipeline_def(batch_size=4, num_threads=1, device_id=0)
    def graph():
        data = fn.external_source(source=lambda: IMAGES, layout="HWC", device="gpu")
        return data, types.Constant(np.float32(2.5), shape=(3,), device="gpu")

    data, const = _run(graph)
    np.testing.assert_array_equal(data.as_cpu().at(3), IMAGES[3])
    np.testing.assert_array_equal(const.as_cpu().at(0), np.full(3, 2.5, np.float32))


def test_a_gpu_external_source_takes_cupy_arrays_without_a_copy(
    plugin_system: PluginSystem,
) -> None:
    import cupy

    batch = cupy.asarray(np.stack(IMAGES))

    @pipeline_def(batch_size=4, num_threads=1, device_id=0)
    def graph():
        return fn.external_source(source=lambda: batch, layout="HWC", device="gpu")

    (data,) = _run(graph)
    assert data.data_ptr() == batch.data.ptr
    np.testing.assert_array_equal(data.as_cpu().at(1), IMAGES[1])


class _StreamProbe(Kernel):
    """A ``gpu`` flip stand-in that records the current CuPy stream and copies its input."""

    seen: list[tuple[int, int]] = []  # noqa: RUF012

    def run(self, batch):
        import cupy

        _StreamProbe.seen.append((cupy.cuda.get_current_stream().ptr, self.ctx.stream.ptr))
        return [batch.inputs[0]]


@pytest.mark.parametrize("depth", [2, {"cpu_size": 3, "gpu_size": 1}])
def test_gpu_kernels_run_on_the_pipelines_stream(plugin_system: PluginSystem, depth: Any) -> None:
    registry = plugin_system.ensure_loaded()
    registry.add_kernel("flip", "gpu", _StreamProbe, override=True, owner="tests")
    _StreamProbe.seen.clear()

    @pipeline_def(batch_size=4, num_threads=2, device_id=0, prefetch_queue_depth=depth)
    def graph():
        return fn.flip(fn.external_source(source=lambda: IMAGES, layout="HWC").gpu())

    pipe = graph()
    for _ in range(5):
        (out,) = pipe.run()
        np.testing.assert_array_equal(out.as_cpu().at(1), IMAGES[1])
    pipe.close()
    assert _StreamProbe.seen and all(current == ours != 0 for current, ours in _StreamProbe.seen)


@pytest.mark.parametrize("op", ["image", "image_random_crop", "image_crop"])
def test_mixed_decoding_into_pinned_memory_equals_cpu_decoding(
    plugin_system: PluginSystem, op: str
) -> None:
    files = _photos()
    extra = {"crop": (64, 80)} if op == "image_crop" else {}

    @pipeline_def(batch_size=len(files), num_threads=2, device_id=0)
    def graph():
        data = fn.external_source(source=lambda: files)
        decode = getattr(fn.decoders, op)
        seed = {"seed": 3} if "random" in op else {}
        gpu = decode(data, device="mixed", gpu_decoding="cpu", **seed, **extra)
        return gpu, decode(data, **seed, **extra)

    on_gpu, on_cpu = _run(graph)
    host = on_gpu.as_cpu()
    for i in range(len(files)):
        np.testing.assert_array_equal(host.at(i), on_cpu.at(i))


@pytest.mark.skipif(nvimgcodec_module() is None, reason="nvImageCodec is not installed")
def test_nvimgcodec_decoding_is_close_to_cpu_decoding(plugin_system: PluginSystem) -> None:
    files = _photos()

    @pipeline_def(batch_size=len(files), num_threads=2, device_id=0)
    def graph():
        data = fn.external_source(source=lambda: files)
        gpu = fn.decoders.image_random_crop(data, device="mixed", gpu_decoding="nvimgcodec", seed=5)
        return gpu, fn.decoders.image_random_crop(data, seed=5)

    on_gpu, on_cpu = _run(graph)
    host = on_gpu.as_cpu()
    for i in range(len(files)):
        assert host.at(i).shape == on_cpu.at(i).shape, "the same random window"
        diff = np.abs(host.at(i).astype(np.int16) - on_cpu.at(i).astype(np.int16))
        assert diff.mean() < 1.5


def test_seeded_imagenet_pipeline_with_mixed_decoding_matches_the_cpu_one(
    plugin_system: PluginSystem,
) -> None:
    """decode (random crop) → resize → crop_mirror_normalize with a random mirror: the GPU
    pipeline crops and flips as the CPU one; the GPU kernels are exact (``docs/gpu.md``)."""
    files = _photos()

    def build(device: str) -> Any:
        @pipeline_def(batch_size=len(files), num_threads=2, device_id=0, seed=42)
        def graph():
            data = fn.external_source(source=lambda: files)
            images = fn.decoders.image_random_crop(
                data, device="mixed" if device == "gpu" else "cpu", gpu_decoding="cpu"
            )
            images = fn.resize(images, resize_x=96, resize_y=96, device=device)
            return fn.crop_mirror_normalize(
                images,
                crop=(80, 80),
                mirror=fn.random.coin_flip(),
                dtype=DataType.FLOAT,
                mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
                device=device,
            )

        return graph

    (gpu,) = _run(build("gpu"))
    (cpu,) = _run(build("cpu"))
    host = gpu.as_cpu()
    for i in range(len(files)):
        np.testing.assert_allclose(host.at(i), cpu.at(i), rtol=1e-5, atol=1e-5)
