"""Small formats, providers and pipelines shared by the structured-plugin tests."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
from PIL import Image

from feedline import types
from feedline.plugins.structured import (
    CallableBase,
    DataProvider,
    IterableBase,
    SampleDataGroup,
)

LABELS = {"car": 1, "person": 2, None: 0}


def camera_format() -> SampleDataGroup:
    """``image`` (uint8), ``annotation`` (``bboxes`` float, ``cls`` mapped int32)."""
    annotation = SampleDataGroup()
    annotation.add_data_field("bboxes", types.FLOAT)
    annotation.add_data_field("cls", types.INT32, LABELS)
    camera = SampleDataGroup()
    camera.add_data_field("image", types.UINT8)
    camera.add_data_group_field("annotation", annotation)
    return camera


def sample_format() -> SampleDataGroup:
    """Two cameras, a string, a data-field array, an empty group and an int-named leaf."""
    root = SampleDataGroup()
    root.add_data_group_field_array("cams", camera_format(), 2)
    root.add_data_field("tok", types.STRING)
    root.add_data_field_array("vals", types.FLOAT, 2)
    root.add_data_group_field("empty", SampleDataGroup())
    root.add_data_field(7, types.INT32)
    return root


def jpeg_bytes(height: int, width: int, seed: int) -> np.ndarray:
    """A small JPEG of smooth random colours, as uint8 file bytes."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 255, (2, 2, 3), dtype=np.uint8)
    image = Image.fromarray(base).resize((width, height), Image.BILINEAR)
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=90)
    return np.frombuffer(buffer.getvalue(), np.uint8)


class CountingProvider(DataProvider):
    """Sample ``i`` holds ``index = i``, a name ``"s<i>"`` and ``i % 3 + 1`` labels."""

    def __init__(self, count: int) -> None:
        self._count = count
        blueprint = SampleDataGroup()
        blueprint.add_data_field("index", types.INT64)
        blueprint.add_data_field("name", types.STRING)
        blueprint.add_data_field("cls", types.INT32, LABELS)
        self._blueprint = blueprint

    def get_number_of_samples(self) -> int:
        return self._count

    @property
    def sample_data_structure(self) -> SampleDataGroup:
        return self._blueprint.get_empty_like_self()

    def get_data(self, sample_index: int) -> SampleDataGroup:
        sample = self.sample_data_structure
        sample["index"] = sample_index
        sample["name"] = f"s{sample_index}"
        sample["cls"] = ["car", "person", "truck"][: sample_index % 3 + 1]
        return sample


class BatchIterable(IterableBase):
    """Batches of ``CountingProvider`` samples in order, ``batches`` per epoch."""

    def __init__(self, batch_size: int, batches: int) -> None:
        self._provider = CountingProvider(batch_size * batches)
        self._batch_size = batch_size
        self._batches = batches
        self._next = 0
        self.restarts = 0

    @property
    def used_sample_data_structure(self) -> SampleDataGroup:
        blueprint = self._provider.sample_data_structure
        blueprint.set_apply_mapping(False)
        return blueprint

    def __iter__(self) -> BatchIterable:
        self._next = 0
        self.restarts += 1
        return self

    def __next__(self) -> tuple[list[Any], ...]:
        if self._next >= self._batches:
            raise StopIteration
        start = self._next * self._batch_size
        samples = [
            self._provider.get_data(i).get_data() for i in range(start, start + self._batch_size)
        ]
        self._next += 1
        return tuple(list(column) for column in zip(*samples, strict=True))

    @property
    def length(self) -> int:
        return self._batches


class FixedCallable(CallableBase):
    """A per-sample input of one format whose every sample is ``values`` (for type errors)."""

    def __init__(self, blueprint: SampleDataGroup, values: tuple[Any, ...], count: int) -> None:
        self._blueprint = blueprint
        self._values = values
        self._count = count

    @property
    def used_sample_data_structure(self) -> SampleDataGroup:
        return self._blueprint.get_empty_like_self()

    def __call__(self, sample_info: types.SampleInfo) -> tuple[Any, ...]:
        if sample_info.idx_in_epoch >= self._count:
            raise StopIteration
        return self._values

    @property
    def length(self) -> int:
        return self._count
