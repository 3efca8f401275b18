"""Kernel of ``segmentation.random_object_bbox``: a random blob of a label mask and its box.

Per sample, from the sample's own generator and in this order: one uniform number decides
foreground (``< foreground_prob``); then a class is drawn by weight (unless ``ignore_class``);
then one of that class's blobs that pass ``threshold`` (among the ``k_largest``). A class without
a passing blob is dropped and another one drawn. With no foreground, or no passing blob in any
class, the box covers the whole input and the class is the background label.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.common.errors import ArgumentError
from feedline.operators.cpu.segmentation.blobs import label_boxes

__all__ = [
    "ClassTable",
    "RandomObjectBBoxKernel",
    "class_table",
    "distinct_values",
    "pick_box",
    "pick_class",
]

_OP = "segmentation.random_object_bbox"
_TYPES = tuple(
    np.dtype(t) for t in (np.bool_, np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32)
)
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


@dataclass
class ClassTable:
    """The foreground classes of one sample, their weights and the background label."""

    background: int
    classes: list[int]
    weights: list[float]


def class_table(
    background: int | None, classes: Sequence[int] | None, weights: Sequence[float] | None
) -> ClassTable:
    """DALI's classes, weights and background for the given (or missing) arguments.

    Without ``background`` it is 0, or, when 0 is one of ``classes``, the smallest class minus 1
    (counting down from the largest int32 when that would wrap). Weights default to 1 per class;
    weights without classes name the labels 0, 1, 2... skipping the background.

    Raises:
        ValueError: an explicit background that is also one of ``classes``.
    """
    bg = 0 if background is None else int(background)
    table = ClassTable(bg, [], [])
    if classes is not None:
        table.classes = [int(c) for c in classes]
        table.weights = [1.0] * len(table.classes)
        if bg in table.classes:
            if background is not None:
                raise ValueError(
                    f"Class label {bg} coincides with background label - please specify a "
                    "different background label or remove it from your list of foreground "
                    "classes."
                )
            lowest = min(table.classes)
            if lowest == _INT32_MIN:
                taken = set(table.classes)
                table.background = _INT32_MAX
                while table.background in taken:
                    table.background -= 1
            else:
                table.background = lowest - 1
    if weights is not None:
        table.weights = [float(np.float32(w)) for w in weights]
        if classes is None:
            label = 0
            for _ in weights:
                if label == table.background:
                    label += 1
                table.classes.append(label)
                label += 1
    return table


def pick_class(weights: Sequence[float], rng: np.random.Generator) -> int | None:
    """Index of a class drawn with probability proportional to its weight (DALI's search of
    the float32 cumulative sum); None when no weight is positive or the draw lands past the
    last positive weight."""
    total = float(np.sum(np.asarray(weights, np.float64)))
    if not total > 0:
        return None
    cdf = np.cumsum(np.asarray(weights, np.float64)).astype(np.float32)
    index = int(np.searchsorted(cdf, rng.random() * float(cdf[-1]), side="left"))
    while index < len(weights) and weights[index] == 0:
        index += 1
    return index if index < len(weights) else None


def pick_box(
    boxes: np.ndarray,
    threshold: np.ndarray | None,
    k_largest: int | None,
    rng: np.random.Generator,
) -> np.ndarray | None:
    """A random box among those at least ``threshold`` wide on every axis (among the
    ``k_largest`` by volume, ties kept in order); None when no box passes."""
    ndim = boxes.shape[1] // 2
    extents = boxes[:, ndim:].astype(np.int64) - boxes[:, :ndim]
    if threshold is not None:
        passing = np.all(extents >= threshold, axis=1)
        boxes, extents = boxes[passing], extents[passing]
    count = len(boxes)
    if count == 0:
        return None
    if k_largest is not None and k_largest < count:
        by_volume = np.argsort(-np.prod(extents, axis=1), kind="stable")
        return boxes[by_volume[int(rng.integers(k_largest))]]
    return boxes[int(rng.integers(count))]


@dataclass
class _CacheEntry:
    labels: frozenset[int] | None = None
    boxes: dict[Any, np.ndarray] = field(default_factory=dict)


def distinct_values(data: np.ndarray) -> np.ndarray:
    """The distinct values of ``data``, sorted, in its own type (a histogram for types of one or
    two bytes: about three times faster than sorting a mask of a million elements)."""
    if data.dtype.itemsize > 2 or data.size == 0:
        return np.unique(data)
    codes = data.view(f"u{data.dtype.itemsize}").ravel()
    present = np.flatnonzero(np.bincount(codes)).astype(codes.dtype)
    return np.sort(present.view(data.dtype))


def _element(label: int, dtype: np.dtype) -> Any:
    """``label`` converted to the mask's element type as C++ converts it (wrapping)."""
    return np.array(label, np.int64).astype(dtype)[()]


class RandomObjectBBoxKernel(SampleKernel):
    """``segmentation.random_object_bbox`` on one sample."""

    def setup(self) -> None:
        """Check the static arguments and start the object cache."""
        args, given = self.args, self.ctx.tensor_args
        if args["ignore_class"]:
            clash = [
                n for n in ("classes", "class_weights") if args.get(n) is not None or n in given
            ]
            if clash or args["output_class"]:
                raise ArgumentError(
                    f"{_OP}: Class-related arguments ``classes``, ``class_weights`` and "
                    "``output_class`` cannot be used when ``ignore_class`` is True"
                )
        k_largest = args["k_largest"]
        if k_largest is not None and k_largest < 1:
            raise ArgumentError(f"{_OP}: ``k_largest`` must be at least 1; got {k_largest}")
        self._cache: dict[tuple[Any, ...], _CacheEntry] | None = (
            {} if args["cache_objects"] else None
        )

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """No layouts."""
        return ("",) * self.ctx.num_outputs

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> tuple[np.ndarray, ...]:
        data = inputs[0]
        if data.dtype not in _TYPES:
            raise TypeError(
                f"Unsupported input type: {data.dtype}; expected bool, uint8, int8, uint16, "
                "int16, uint32 or int32"
            )
        if not 1 <= data.ndim <= 6:
            raise ValueError(f"Unsupported number of dimensions {data.ndim}; must be 1..6")
        classes, weights = args["classes"], args["class_weights"]
        if classes is not None and weights is not None and len(classes) != len(weights):
            raise ValueError(
                "If both ``classes`` and ``class_weights`` are provided, their shapes must "
                f"match. Got:\n  classes.shape = {{{len(classes)}}}\n  "
                f"weights.shape = {{{len(weights)}}}"
            )
        threshold = _threshold(args["threshold"], data.ndim)
        box: np.ndarray | None = None
        label = None
        if sample.rng.random() < args["foreground_prob"]:
            if args["ignore_class"]:
                box = self._any_object(data, args, threshold, sample.rng)
            else:
                box, label = self._class_object(data, args, threshold, sample.rng)
        if box is None:
            box = np.array([0] * data.ndim + list(data.shape), np.int32)
        return self._outputs(box, data.ndim, label, args)

    def _outputs(
        self, box: np.ndarray, ndim: int, label: int | None, args: Mapping[str, Any]
    ) -> tuple[np.ndarray, ...]:
        start, end = box[:ndim].astype(np.int32), box[ndim:].astype(np.int32)
        layout = args["format"]
        if layout == "box":
            outputs: tuple[np.ndarray, ...] = (np.concatenate([start, end]),)
        elif layout == "start_end":
            outputs = (start, end)
        else:
            outputs = (start, end - start)
        if args["output_class"]:
            if label is None:
                label = class_table(args["background"], args["classes"], None).background
            outputs += (np.array(label, np.int32),)
        return outputs

    def _entry(self, data: np.ndarray) -> _CacheEntry | None:
        if self._cache is None:
            return None
        digest = hashlib.blake2b(np.ascontiguousarray(data).data, digest_size=32).digest()
        key = (data.dtype.str, data.shape, digest)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._cache.setdefault(key, _CacheEntry())
        return entry

    def _any_object(
        self,
        data: np.ndarray,
        args: Mapping[str, Any],
        threshold: np.ndarray | None,
        rng: np.random.Generator,
    ) -> np.ndarray | None:
        """A box among the blobs of every label but the background."""
        background = _element(class_table(args["background"], None, None).background, data.dtype)
        entry = self._entry(data)
        key = ("all", background.item())
        boxes = entry.boxes.get(key) if entry is not None else None
        if boxes is None:
            parts = [label_boxes(data, v) for v in distinct_values(data) if v != background]
            boxes = np.concatenate([np.zeros((0, 2 * data.ndim), np.int32), *parts])
            if entry is not None:
                entry.boxes[key] = boxes
        return pick_box(boxes, threshold, args["k_largest"], rng)

    def _class_object(
        self,
        data: np.ndarray,
        args: Mapping[str, Any],
        threshold: np.ndarray | None,
        rng: np.random.Generator,
    ) -> tuple[np.ndarray | None, int]:
        """A class drawn by weight, then a box among its blobs; ``(None, background)`` when no
        class has a passing blob."""
        table = class_table(args["background"], args["classes"], args["class_weights"])
        entry = self._entry(data)
        present = entry.labels if entry is not None else None
        if present is None:
            values = distinct_values(data).astype(np.int32).tolist()
            present = frozenset(values) - {table.background}
            if entry is not None:
                entry.labels = present
        if args["classes"] is None and args["class_weights"] is None:
            table.classes = sorted(present)
            table.weights = [1.0] * len(table.classes)
        else:
            table.weights = [
                w if c in present else 0.0
                for c, w in zip(table.classes, table.weights, strict=True)
            ]
        while (index := pick_class(table.weights, rng)) is not None:
            label = table.classes[index]
            boxes = entry.boxes.get(label) if entry is not None else None
            if boxes is None:
                boxes = label_boxes(data, _element(label, data.dtype))
                if entry is not None:
                    entry.boxes[label] = boxes
            box = pick_box(boxes, threshold, args["k_largest"], rng)
            if box is not None:
                return box, label
            table.weights[index] = 0.0
        return None, table.background


def _threshold(values: Sequence[int] | None, ndim: int) -> np.ndarray | None:
    """The per-axis minimum box extent (one value applies to every axis).

    Raises:
        ValueError: neither one nor ``ndim`` values.
    """
    if values is None:
        return None
    if len(values) not in (1, ndim):
        raise ValueError(
            f'Argument "threshold" expected shape {ndim} but got {len(values)} values, which '
            "can't be interpreted as the expected shape."
        )
    return np.broadcast_to(np.asarray(values, np.int64), (ndim,))
