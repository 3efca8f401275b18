"""A StreamPETR-shaped input, with the structured layer and written flat (used by structured.py).

Each sample has 6 cameras; a camera holds an encoded JPEG, its 4x4 ``lidar2img`` matrix and an
annotation group (2-D boxes, lidar point counts, visibility levels, 0-12 objects); the sample
also holds the 4x4 ego pose. Both pipelines decode the images, pad them to a multiple of 32,
normalise them with mean/std, compute a per-object validity mask (``num_lidar >= 1 and
visibility > 0``) and pad the per-object fields to a uniform length: once with
``PipelineDefinition`` and ready steps (nested dicts out), once with ``external_source`` and ``fn``
calls (PyTorch ``GenericIterator``). Both build the same operators.
"""

from __future__ import annotations

import io
import time
from typing import Any

import numpy as np

from feedline import fn, pipeline_def, types
from feedline.plugins.pytorch import GenericIterator
from feedline.structured.inputs import DataProvider, ShuffledShardedInputCallable
from feedline.structured.pipeline import (
    DALIStructuredOutputIterator,
    PipelineDefinition,
    SampleDataGroup,
)
from feedline.structured.processing_steps import (
    AnnotationElementConditionEval,
    ImageDecoder,
    ImageMeanStdDevNormalizer,
    ImageToTileSizePadder,
    PaddingToUniform,
)

BATCH = 8
CAMERAS = 6
MEAN = [103.5, 116.3, 123.7]
STD = [57.4, 57.1, 58.4]
PER_OBJECT = ("boxes", "num_lidar", "vis")


def make_samples(count: int, size_hw: tuple[int, int] = (180, 320)) -> list[dict[str, Any]]:
    """``count`` synthetic samples: raw values per camera, generated reproducibly."""
    from PIL import Image

    rng = np.random.default_rng(0)
    jpegs = []
    for _ in range(8):
        small = Image.fromarray(rng.integers(0, 255, (9, 16, 3), dtype=np.uint8))
        buffer = io.BytesIO()
        small.resize(size_hw[::-1], Image.BICUBIC).save(buffer, format="JPEG", quality=90)
        jpegs.append(np.frombuffer(buffer.getvalue(), np.uint8))
    samples = []
    for index in range(count):
        cams = []
        for cam in range(CAMERAS):
            n = int(rng.integers(0, 13))
            cams.append(
                {
                    "image": jpegs[(index + cam) % len(jpegs)],
                    "lidar2img": rng.normal(size=(4, 4)).astype(np.float32),
                    "boxes": rng.uniform(0, 300, (n, 4)).astype(np.float32),
                    "num_lidar": rng.integers(0, 5, n).astype(np.int32),
                    "vis": rng.integers(0, 4, n).astype(np.int32),
                }
            )
        samples.append({"cams": cams, "ego_pose": np.eye(4, dtype=np.float32)})
    return samples


class NuScenesLike(DataProvider):
    """The synthetic samples as ``SampleDataGroup``s."""

    def __init__(self, samples: list[dict[str, Any]]) -> None:
        self._samples = samples
        annotation = SampleDataGroup()
        annotation.add_data_field("boxes", types.FLOAT)
        annotation.add_data_field("num_lidar", types.INT32)
        annotation.add_data_field("vis", types.INT32)
        camera = SampleDataGroup()
        camera.add_data_field("image", types.UINT8)
        camera.add_data_field("lidar2img", types.FLOAT)
        camera.add_data_group_field("annotation", annotation)
        blueprint = SampleDataGroup()
        blueprint.add_data_group_field_array("cams", camera, CAMERAS)
        blueprint.add_data_field("ego_pose", types.FLOAT)
        self._blueprint = blueprint

    def get_number_of_samples(self) -> int:
        return len(self._samples)

    @property
    def sample_data_structure(self) -> SampleDataGroup:
        return self._blueprint.get_empty_like_self()

    def get_data(self, sample_index: int) -> SampleDataGroup:
        raw = self._samples[sample_index]
        sample = self.sample_data_structure
        for cam, values in enumerate(raw["cams"]):
            group = sample["cams"][cam]
            group["image"] = values["image"]
            group["lidar2img"] = values["lidar2img"]
            for name in PER_OBJECT:
                group["annotation"][name] = values[name]
        sample["ego_pose"] = raw["ego_pose"]
        return sample


def structured_loader(samples: list[dict[str, Any]], threads: int, **kwargs: Any) -> Any:
    """The pipeline with the structured layer (nested dicts out)."""
    source = ShuffledShardedInputCallable(NuScenesLike(samples), BATCH, shuffle=True, seed=1)
    steps = [
        ImageDecoder("image", False),
        ImageToTileSizePadder("image", 32),
        ImageMeanStdDevNormalizer("image", MEAN, STD),
        AnnotationElementConditionEval("annotation", "valid = num_lidar >= 1 and vis > 0"),
        PaddingToUniform([*PER_OBJECT, "valid"], fill_value=0),
    ]
    definition = PipelineDefinition(
        source,
        steps,
        use_parallel_external_source=False,
        copy_external_source_passthrough_outputs=False,
    )
    pipe = definition.get_dali_pipeline(
        batch_size=BATCH, num_threads=threads, device_id=None, seed=1, **kwargs
    )
    return DALIStructuredOutputIterator(
        None, pipe, definition.check_and_get_output_data_structure()
    )


class FlatSource:
    """The same samples in the same order, as a flat per-sample tuple."""

    def __init__(self, samples: list[dict[str, Any]]) -> None:
        self.samples = samples
        self.per_epoch = (len(samples) // BATCH) * BATCH
        self.orders: dict[int, np.ndarray] = {}

    def __call__(self, info: types.SampleInfo) -> tuple[np.ndarray, ...]:
        if info.idx_in_epoch >= self.per_epoch:
            raise StopIteration
        order = self.orders.get(info.epoch_idx)
        if order is None:
            order = np.random.default_rng([1, info.epoch_idx]).permutation(len(self.samples))
            self.orders = {info.epoch_idx: order}
        raw = self.samples[int(order[info.idx_in_epoch])]
        flat: list[np.ndarray] = []
        for cam in raw["cams"]:
            flat += [cam["image"], cam["lidar2img"], *(cam[name] for name in PER_OBJECT)]
        return (*flat, raw["ego_pose"])


def flat_loader(samples: list[dict[str, Any]], threads: int, **kwargs: Any) -> GenericIterator:
    """The same operators written directly."""
    per_camera = [types.UINT8, types.FLOAT, types.FLOAT, types.INT32, types.INT32]
    names = []
    for cam in range(CAMERAS):
        names += [f"cams.[{cam}].image", f"cams.[{cam}].lidar2img"]
        names += [f"cams.[{cam}].annotation.{n}" for n in (*PER_OBJECT, "valid")]
    names.append("ego_pose")
    mean = np.asarray(MEAN, np.float32).reshape(1, 1, 3)
    std = np.asarray(STD, np.float32).reshape(1, 1, 3)

    @pipeline_def(batch_size=BATCH, num_threads=threads, device_id=None, seed=1)
    def pipe() -> Any:
        outputs = fn.external_source(
            source=FlatSource(samples),
            num_outputs=CAMERAS * len(per_camera) + 1,
            batch=False,
            dtype=per_camera * CAMERAS + [types.FLOAT],
        )
        result = []
        for cam in range(CAMERAS):
            image, lidar2img, boxes, lidar, vis = outputs[cam * 5 : cam * 5 + 5]
            image = fn.pad(fn.decoders.image(image), axes=[0, 1], align=[32, 32], shape=[1, 1])
            image = fn.normalize(
                fn.cast(image, dtype=types.FLOAT), axes=[0, 1], mean=mean, stddev=std
            )
            lidar = fn.reshape(lidar, shape=[-1])
            vis = fn.reshape(vis, shape=[-1])
            valid = fn.cast(((lidar >= 1) != 0) & ((vis > 0) != 0), dtype=types.BOOL)
            per_object = [fn.pad(x, fill_value=0) for x in (boxes, lidar, vis, valid)]
            result += [image, lidar2img, *per_object]
        return (*result, outputs[-1])

    return GenericIterator(pipe(**kwargs), names)


def next_batch(loader: Any) -> None:
    """Take one batch, starting the next epoch when one ends."""
    try:
        next(loader)
    except StopIteration:
        loader.reset()
        next(loader)


def samples_per_second(threads: int, batches: int, count: int = 64) -> dict[str, float]:
    """Samples per second of both pipelines, synchronous (no prefetching), one batch of each in
    turn, so both see the same load on a shared machine."""
    samples = make_samples(count)
    sync = {"exec_async": False, "exec_pipelined": False}
    loaders = {
        "flat": flat_loader(samples, threads, **sync),
        "structured": structured_loader(samples, threads, **sync),
    }
    return interleaved_rates(loaders, batches, BATCH)


def interleaved_rates(loaders: dict[str, Any], batches: int, batch_size: int) -> dict[str, float]:
    """Samples per second of each loader, taking one batch of each in turn (after one batch of
    warm-up each), so all see the same load on a shared machine."""
    spent = dict.fromkeys(loaders, 0.0)
    for loader in loaders.values():
        next_batch(loader)
    for _ in range(batches):
        for name, loader in loaders.items():
            start = time.perf_counter()
            next_batch(loader)
            spent[name] += time.perf_counter() - start
    return {name: batches * batch_size / seconds for name, seconds in spent.items()}
