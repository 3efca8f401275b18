"""``mixed`` decoders and the CPU→GPU copies, over the stand-in device of ``tests/core``: they
decode exactly what the CPU decoders decode (same windows for the same seed), copy each batch in
one transfer through pinned staging, and choose nvImageCodec only where it applies."""

from __future__ import annotations

import io
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from PIL import Image

from feedline import fn, pipeline_def
from feedline.core.execution.device import use_device
from feedline.core.plugins import PluginSystem
from feedline.core.types import DataType, ImageType
from feedline.operators.gpu import mixed_decode
from feedline.operators.gpu.transfer import PinnedStaging, upload
from tests.core.fake_device import FakeDeviceBatch, FakeStream

SIZES = [(37, 53), (64, 48), (20, 90), (64, 48)]


def _files() -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    files = []
    for index, (h, w) in enumerate(SIZES):
        pixels = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        buffer = io.BytesIO()
        Image.fromarray(pixels).save(buffer, "PNG" if index == 2 else "JPEG", quality=90)
        files.append(np.frombuffer(buffer.getvalue(), np.uint8))
    return files


FILES = _files()


@pytest.fixture
def fake_gpu(plugin_system: PluginSystem) -> Iterator[PluginSystem]:
    plugin_system.ensure_loaded()
    FakeStream.instances.clear()
    with use_device(FakeStream):
        yield plugin_system


def _decode_both(op: str, **kwargs: Any) -> tuple[Any, Any]:
    @pipeline_def(batch_size=len(FILES), num_threads=2, device_id=0, prefetch_queue_depth=1)
    def graph():
        data = fn.external_source(source=lambda: FILES)
        decode = getattr(fn.decoders, op)
        # One seed for both: the same generators, so the same random windows (only the random
        # decoders take one: a seed for the others is deprecated, as in DALI).
        seed = {"seed": 11} if "random" in op else {}
        on_gpu = decode(data, device="mixed", **seed, **kwargs)
        on_cpu = decode(data, device="cpu", **seed, **kwargs)
        return on_gpu, on_cpu

    pipe = graph()
    try:
        return pipe.run()
    finally:
        pipe.close()


@pytest.mark.parametrize(
    ("op", "kwargs"),
    [
        ("image", {}),
        ("image", {"output_type": ImageType.GRAY, "dtype": DataType.FLOAT}),
        ("image_crop", {"crop": (16, 20), "crop_pos_x": 0.25}),
        ("image_random_crop", {"random_area": (0.1, 0.9)}),
        ("image_slice", {"start": (2, 3), "shape": (10, 12)}),
    ],
)
@pytest.mark.parametrize("choice", ["auto", "cpu"])
def test_mixed_decoding_equals_cpu_decoding(
    fake_gpu: PluginSystem,
    monkeypatch: pytest.MonkeyPatch,
    op: str,
    kwargs: dict[str, Any],
    choice: str,
) -> None:
    # 'auto' without nvImageCodec (whether or not the machine has it installed)
    monkeypatch.setattr(mixed_decode, "nvimgcodec_module", lambda: None)
    on_gpu, on_cpu = _decode_both(op, gpu_decoding=choice, **kwargs)
    assert isinstance(on_gpu, FakeDeviceBatch) and on_gpu.layout() == "HWC"
    host = on_gpu.as_cpu()
    assert len(host) == len(on_cpu) == len(FILES)
    for i in range(len(FILES)):
        np.testing.assert_array_equal(host.at(i), on_cpu.at(i))
    (stream,) = FakeStream.instances
    copies = [detail for op_, detail, _ in stream.ops if op_ == "h2d"]
    assert copies and len(copies) == 1, "one host-to-device copy per batch"


def test_the_copy_reads_pinned_memory_and_keeps_it_until_the_copy_is_done() -> None:
    stream = FakeStream(0)
    staging = PinnedStaging(stream, keep=2)
    samples = [np.full((3, 5), i, np.float32) for i in range(3)]
    with stream.activate():
        batch = upload(stream, staging, samples, "HW", ["a", "b", "c"])
    assert [op for op, _, _ in stream.ops] == ["pinned", "h2d", "record"]
    assert batch.source_infos() == ["a", "b", "c"]
    for i in range(3):
        np.testing.assert_array_equal(batch.at(i), samples[i])
    busy = [staging.acquire(10), staging.acquire(10)]
    assert busy[0] is not busy[1]
    staging.release(busy[0], SimpleNamespace(done=lambda: False, synchronize=lambda: None))
    staging.release(busy[1], SimpleNamespace(done=lambda: True, synchronize=lambda: None))
    assert staging.acquire(10) is busy[1], "a buffer whose copy finished is reused"


def test_ragged_samples_are_packed_at_aligned_offsets() -> None:
    stream = FakeStream(0)
    ragged = [np.arange(n, dtype=np.uint8) for n in (3, 300, 1)]
    with stream.activate():
        batch = upload(stream, PinnedStaging(stream), ragged, "", ["", "", ""])
    (copied,) = [detail for op, detail, _ in stream.ops if op == "h2d"]
    assert copied == 256 + 512 + 256
    for i, sample in enumerate(ragged):
        np.testing.assert_array_equal(batch.at(i), sample)


class _FakeCodecModule:
    """An nvImageCodec that only records that a decoder was made."""

    made: list[int] = []  # noqa: RUF012

    class Decoder:
        def __init__(self, device_id: int) -> None:
            _FakeCodecModule.made.append(device_id)


@pytest.mark.parametrize(
    ("op", "kwargs", "on_gpu"),
    [
        ("image", {}, True),
        ("image_random_crop", {}, True),
        ("image", {"gpu_decoding": "cpu"}, False),
        ("image", {"dtype": DataType.FLOAT}, False),
        ("image", {"output_type": ImageType.YCbCr}, False),
        ("image_slice", {"start": (0, 0), "shape": (4, 4)}, False),
    ],
)
def test_nvimgcodec_is_chosen_where_installed_and_applicable(
    fake_gpu: PluginSystem,
    monkeypatch: pytest.MonkeyPatch,
    op: str,
    kwargs: dict[str, Any],
    on_gpu: bool,
) -> None:
    monkeypatch.setattr(mixed_decode, "nvimgcodec_module", lambda: _FakeCodecModule)

    @pipeline_def(batch_size=1, num_threads=1, device_id=0)
    def graph():
        return getattr(fn.decoders, op)(
            fn.external_source(source=lambda: FILES[:1]), device="mixed", **kwargs
        )

    pipe = graph()
    pipe.build()
    (decoder,) = [k for k in pipe._executor.kernels.values() if hasattr(k, "window")]
    assert (decoder._gpu is not None) is on_gpu
    pipe.close()


class _BrokenCodecModule:
    """An nvImageCodec that is installed but cannot make a decoder (no driver here)."""

    class Decoder:
        def __init__(self, device_id: int) -> None:
            raise RuntimeError("Could not create decoder")


def test_an_unusable_nvimgcodec_falls_back_to_the_cpu_under_auto_only(
    fake_gpu: PluginSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mixed_decode, "nvimgcodec_module", lambda: _BrokenCodecModule)

    @pipeline_def(batch_size=1, num_threads=1, device_id=0)
    def graph(choice: str):
        return fn.decoders.image(
            fn.external_source(source=lambda: FILES[:1]), device="mixed", gpu_decoding=choice
        )

    pipe = graph("auto")
    with pytest.warns(RuntimeWarning, match="cannot create a decoder.*decoding on the CPU"):
        pipe.build()
    (decoder,) = [k for k in pipe._executor.kernels.values() if hasattr(k, "window")]
    assert decoder._gpu is None
    pipe.close()
    pipe = graph("nvimgcodec")
    with pytest.raises(RuntimeError, match="cannot create a decoder: Could not create decoder"):
        pipe.build()
    pipe.close()


def test_asking_for_nvimgcodec_without_it_fails_at_build(
    fake_gpu: PluginSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mixed_decode, "nvimgcodec_module", lambda: None)

    @pipeline_def(batch_size=1, num_threads=1, device_id=0)
    def graph():
        data = fn.external_source(source=lambda: FILES[:1])
        return fn.decoders.image(data, device="mixed", gpu_decoding="nvimgcodec")

    with pytest.raises(RuntimeError, match="nvImageCodec is not installed.*nvidia-nvimgcodec"):
        graph().build()


def test_a_cpu_decoder_refuses_gpu_decoding(fake_gpu: PluginSystem) -> None:
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def graph():
        data = fn.external_source(source=lambda: FILES[:1])
        return fn.decoders.image(data, gpu_decoding="nvimgcodec")

    with pytest.raises(ValueError, match="gpu_decoding='nvimgcodec' needs device='mixed'"):
        graph().build()


def _forged_jpeg(side: int) -> np.ndarray:
    """A real 16 × 16 JPEG whose frame header declares ``side`` × ``side`` pixels."""
    data = bytearray(FILES[0].tobytes())
    sof = data.index(b"\xff\xc0")
    data[sof + 5 : sof + 9] = side.to_bytes(2, "big") * 2
    return np.frombuffer(bytes(data), np.uint8)


@pytest.mark.parametrize("codec", ["nvimgcodec", "cpu"])
@pytest.mark.parametrize(
    ("sample", "kwargs", "refusal"),
    [
        (_forged_jpeg(9000), {}, "decompression bomb"),
        (FILES[0], {"max_decoded_bytes": 37 * 53 * 3 - 1}, "max_decoded_bytes=5882"),
        (FILES[0], {"max_pixels": 37 * 53 - 1}, "max_pixels=1960"),
    ],
)
def test_the_mixed_decoder_refuses_what_the_cpu_decoder_refuses_before_decoding(
    fake_gpu: PluginSystem,
    monkeypatch: pytest.MonkeyPatch,
    codec: str,
    sample: np.ndarray,
    kwargs: dict[str, Any],
    refusal: str,
) -> None:
    monkeypatch.setattr(
        mixed_decode, "nvimgcodec_module", lambda: _FakeCodecModule if codec != "cpu" else None
    )

    @pipeline_def(batch_size=1, num_threads=1, device_id=0, prefetch_queue_depth=1)
    def graph():
        data = fn.external_source(source=lambda: [sample])
        return fn.decoders.image(data, device="mixed", gpu_decoding="auto", **kwargs)

    pipe = graph()
    try:
        with pytest.raises(Exception, match=refusal):
            pipe.run()
    finally:
        pipe.close()


@pytest.mark.gpu
@pytest.mark.parametrize("adjust", [True, False])
def test_nvimgcodec_applies_the_exif_orientation_only_when_asked(adjust: bool) -> None:
    pytest.importorskip("cupy")
    seen: list[Any] = []

    class Module:
        class ColorSpec:
            RGB, GRAY = "rgb", "gray"

        @staticmethod
        def DecodeParams(**params: Any) -> dict[str, Any]:
            seen.append(params)
            return params

    decoder = mixed_decode._NvImageCodec.__new__(mixed_decode._NvImageCodec)
    decoder._module = Module
    decoder._name = "decoders.image"
    decoder._decoder = SimpleNamespace(decode=lambda files, params, cuda_stream: [])
    decoder._stream = SimpleNamespace(ptr=0, batch=lambda samples, layout, infos: samples)
    args = {"output_type": ImageType.RGB, "adjust_orientation": adjust}
    decoder.decode([], [], [], args, [], None)
    assert seen == [{"apply_exif_orientation": adjust, "color_spec": "rgb"}]
