"""The cost of the structured layer: a pipeline written with steps vs the same pipeline flat, and
flattening/unflattening a 200-field sample.

0. A StreamPETR-shaped input (6 cameras with images, matrices and annotations; decode, tile
   padding, mean/std normalisation, a validity condition, padding; see
   ``structured_streampetr.py``), with the structured layer and written flat, synchronously, one
   batch of each in turn for ``--petr-batches`` batches: samples/s of both.

1. ImageNet-style training input (decode → random_resized_crop(224) → crop_mirror_normalize with
   a random mirror, float CHW), batch 64, from JPEG bytes held in memory: once written flat
   (``external_source`` + ``fn`` calls, PyTorch ``GenericIterator``) and once with a
   ``DataProvider``, ``ShuffledShardedInputCallable``, ``PipelineDefinition`` and three steps
   (``StructuredOutputIterator``, nested dict out). Both build the same operator graph. They run
   in alternating slices of ``--seconds`` in one process, ``--rounds`` times (the best slice of
   each counts and every slice's ratio is printed), then synchronously (no prefetching) one batch
   of each in turn for ``--batches`` batches, which keeps a shared machine's load fair to both.
2. A 200-leaf sample (8 cameras of 20 leaves in nested groups, 40 more leaves): ``get_data``
   (flatten), ``set_data`` (unflatten into an existing tree), ``get_like_self_filled``
   (unflatten into a new tree, what the iterator does for ``SampleDataGroup`` output) and the
   iterator's rebuild of nested dicts, in µs per sample, beside a 200-item list comprehension
   as a yardstick of the machine's speed.

Images: the JPEGs of ``--data DIR``, else the ``photos`` folder of the shared data beside the
repository, else 64 generated 500x375 JPEGs.

Usage: ``python benchmarks/structured.py [--data DIR] [--threads 2] [--rounds 3] [--seconds 5]``
"""

from __future__ import annotations

import argparse
import io
import statistics
import time
import timeit
from pathlib import Path
from typing import Any

import numpy as np
from structured_streampetr import BATCH as PETR_BATCH
from structured_streampetr import interleaved_rates, samples_per_second

from feedline import fn, pipeline_def, types
from feedline.plugins.pytorch import GenericIterator
from feedline.plugins.structured import (
    DataProvider,
    ImageDecoder,
    PipelineDefinition,
    PipelineStepBase,
    SampleDataGroup,
    ShuffledShardedInputCallable,
    StructuredOutputIterator,
)
from feedline.plugins.structured.iterator import _plan, _to_dict

BATCH = 64
MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
PHOTOS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "photos"


def load_jpegs(data: str | None) -> list[np.ndarray]:
    """JPEG files as uint8 arrays (generated when no folder is found)."""
    root = Path(data) if data else PHOTOS
    files = sorted(p for p in root.rglob("*") if p.suffix.lower() in (".jpg", ".jpeg"))
    if files:
        return [np.fromfile(p, dtype=np.uint8) for p in files]
    if data:
        raise SystemExit(f"no JPEG files under {data}")
    from PIL import Image

    out = []
    rng = np.random.default_rng(0)
    for _ in range(64):
        small = Image.fromarray(rng.integers(0, 255, (8, 8, 3), dtype=np.uint8))
        buffer = io.BytesIO()
        small.resize((500, 375), Image.BICUBIC).save(buffer, format="JPEG", quality=90)
        out.append(np.frombuffer(buffer.getvalue(), np.uint8))
    return out


# -- the structured pipeline ---------------------------------------------------------------


class Photos(DataProvider):
    """``image`` (encoded bytes) and ``label`` per photo."""

    def __init__(self, jpegs: list[np.ndarray]) -> None:
        self._jpegs = jpegs
        blueprint = SampleDataGroup()
        blueprint.add_data_field("image", types.UINT8)
        blueprint.add_data_field("label", types.INT32)
        self._blueprint = blueprint

    def get_number_of_samples(self) -> int:
        return len(self._jpegs)

    @property
    def sample_data_structure(self) -> SampleDataGroup:
        return self._blueprint.get_empty_like_self()

    def get_data(self, sample_index: int) -> SampleDataGroup:
        sample = self.sample_data_structure
        sample["image"] = self._jpegs[sample_index]
        sample["label"] = sample_index % 10
        return sample


def normalize(images: Any) -> Any:
    """``crop_mirror_normalize`` with a random mirror and ImageNet mean/std, float CHW."""
    return fn.crop_mirror_normalize(
        images,
        mirror=fn.random.coin_flip(),
        dtype=types.FLOAT,
        output_layout="CHW",
        mean=MEAN,
        std=STD,
    )


class RandomResizedCrop(PipelineStepBase):
    """``random_resized_crop`` of every image named ``name``."""

    def __init__(self, name: str, size: int) -> None:
        self.name, self.size = name, size

    def _check_and_adjust_data_format_input_to_output(self, data_empty: SampleDataGroup) -> Any:
        data_empty.check_has_children(data_field_children=self.name)
        return data_empty

    def _process(self, data: SampleDataGroup) -> SampleDataGroup:
        data[self.name] = fn.random_resized_crop(data[self.name], size=self.size)
        return data


class Normalize(PipelineStepBase):
    """``crop_mirror_normalize`` to float CHW with a random mirror; retypes the field FLOAT."""

    def __init__(self, name: str) -> None:
        self.name = name

    def _check_and_adjust_data_format_input_to_output(self, data_empty: SampleDataGroup) -> Any:
        data_empty.check_has_children(data_field_children=self.name)
        data_empty.change_type_of_data_and_remove_data(self.name, types.FLOAT)
        return data_empty

    def _process(self, data: SampleDataGroup) -> SampleDataGroup:
        image = data[self.name]
        data.change_type_of_data_and_remove_data(self.name, types.FLOAT)
        data[self.name] = normalize(image)
        return data


def structured_loader(
    jpegs: list[np.ndarray], threads: int, **pipeline_kwargs: Any
) -> StructuredOutputIterator:
    """The structured version (steps, nested dict out)."""
    source = ShuffledShardedInputCallable(Photos(jpegs), BATCH, shuffle=True, seed=1)
    steps = [ImageDecoder("image"), RandomResizedCrop("image", 224), Normalize("image")]
    definition = PipelineDefinition(source, steps, use_parallel_external_source=False)
    pipe = definition.get_dali_pipeline(
        batch_size=BATCH, num_threads=threads, device_id=None, seed=1, **pipeline_kwargs
    )
    return StructuredOutputIterator(None, pipe, definition.check_and_get_output_data_structure())


# -- the flat pipeline ---------------------------------------------------------------------


class FlatSource:
    """The same samples in the same order, as a plain per-sample callable."""

    def __init__(self, jpegs: list[np.ndarray]) -> None:
        self.jpegs = jpegs
        self.per_epoch = (len(jpegs) // BATCH) * BATCH
        self.orders: dict[int, np.ndarray] = {}

    def __call__(self, info: types.SampleInfo) -> tuple[np.ndarray, np.ndarray]:
        if info.idx_in_epoch >= self.per_epoch:
            raise StopIteration
        order = self.orders.get(info.epoch_idx)
        if order is None:
            order = np.random.default_rng([1, info.epoch_idx]).permutation(len(self.jpegs))
            self.orders = {info.epoch_idx: order}
        index = int(order[info.idx_in_epoch])
        return self.jpegs[index], np.array(index % 10, np.int32)


def flat_loader(jpegs: list[np.ndarray], threads: int, **pipeline_kwargs: Any) -> GenericIterator:
    """The flat version (fn calls, PyTorch GenericIterator)."""

    @pipeline_def(batch_size=BATCH, num_threads=threads, device_id=None, seed=1)
    def pipe() -> Any:
        encoded, label = fn.external_source(
            source=FlatSource(jpegs),
            num_outputs=2,
            batch=False,
            dtype=[types.UINT8, types.INT32],
        )
        images = fn.decoders.image(encoded)
        return normalize(fn.random_resized_crop(images, size=224)), label

    return GenericIterator(pipe(**pipeline_kwargs), ["image", "label"])


def images_per_second(loader: Any, seconds: float) -> float:
    """Images per second over about ``seconds`` (epochs restart as needed)."""
    count, start = 0, time.perf_counter()
    it = iter(loader)
    while time.perf_counter() - start < seconds:
        try:
            next(it)
        except StopIteration:
            loader.reset()
            it = iter(loader)
            continue
        count += BATCH
    return count / (time.perf_counter() - start)


def interleaved(jpegs: list[np.ndarray], threads: int, batches: int) -> dict[str, float]:
    """Images per second of both pipelines run synchronously (no prefetching), one batch of
    each in turn, so both see the same load on a shared machine."""
    sync = {"exec_async": False, "exec_pipelined": False}
    loaders = {
        "flat": flat_loader(jpegs, threads, **sync),
        "structured": structured_loader(jpegs, threads, **sync),
    }
    return interleaved_rates(loaders, batches, BATCH)


# -- flattening ----------------------------------------------------------------------------


def sample_200() -> SampleDataGroup:
    """8 cameras x 20 leaves (10 + an annotation group of 10) and 40 leaves in two groups."""
    annotation = SampleDataGroup()
    for k in range(10):
        annotation.add_data_field(f"a{k}", types.FLOAT)
    camera = SampleDataGroup()
    for k in range(10):
        camera.add_data_field(f"c{k}", types.FLOAT)
    camera.add_data_group_field("annotation", annotation)
    ego = SampleDataGroup()
    for k in range(20):
        ego.add_data_field(f"e{k}", types.FLOAT)
    root = SampleDataGroup()
    root.add_data_group_field_array("cams", camera, 8)
    root.add_data_group_field("ego", ego)
    for k in range(19):
        root.add_data_field(f"t{k}", types.INT32)
    root.add_data_field("tag", types.STRING)
    values = [np.zeros(3, np.float32)] * 199 + [np.frombuffer(b"tag", np.uint8)]
    root.set_data(values)
    assert len(root.field_names_flat) == 200
    return root


def flatten_costs(repeat: int = 400, number: int = 10) -> dict[str, float]:
    """Best µs per call of the flat-data operations on the 200-field sample.

    Many short repeats: on a shared machine the best of them is the one not preempted.
    """
    sample = sample_200()
    data = sample.get_data()
    blueprint = sample.get_empty_like_self()
    plan = _plan(blueprint)
    cases = {
        "flatten (get_data)": sample.get_data,
        "unflatten into a tree (set_data)": lambda: blueprint.set_data(data),
        "unflatten into a new tree (filled copy)": lambda: blueprint.get_like_self_filled(data),
        "nested dicts from flat (iterator)": lambda: _to_dict(plan, data),
        "reference: [x for x in range(200)]": lambda: [x for x in range(200)],
    }
    return {
        name: min(timeit.repeat(call, number=number, repeat=repeat)) / number * 1e6
        for name, call in cases.items()
    }


def source_costs(jpegs: list[np.ndarray], repeat: int = 50) -> dict[str, float]:
    """Best ms to produce one batch of samples with each input (the only per-sample Python that
    differs between the two pipelines)."""
    flat = FlatSource(jpegs)
    structured = ShuffledShardedInputCallable(Photos(jpegs), BATCH, shuffle=True, seed=1)
    infos = [types.SampleInfo(i, i, 0, 0) for i in range(BATCH)]
    return {
        name: min(timeit.repeat(lambda s=source: [s(i) for i in infos], number=1, repeat=repeat))
        * 1e3
        for name, source in (("flat", flat), ("structured", structured))
    }


def main(argv: list[str] | None = None) -> None:
    """Measure and print both tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", help="a folder of JPEGs")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--batches", type=int, default=40, help="synchronous batches each")
    parser.add_argument(
        "--samples", type=int, default=1280, help="samples per epoch (the photos repeat)"
    )
    parser.add_argument(
        "--petr-batches", type=int, default=30, help="StreamPETR-shaped batches each"
    )
    args = parser.parse_args(argv)
    petr = samples_per_second(args.threads, args.petr_batches)
    print(
        f"StreamPETR-shaped input (6 cameras, batch {PETR_BATCH}), synchronous, "
        f"{args.petr_batches} alternating batches each: flat {petr['flat']:.1f} samples/s, "
        f"structured {petr['structured']:.1f} samples/s, structured / flat "
        f"{petr['structured'] / petr['flat']:.3f} (target >= 0.95)"
    )
    photos = load_jpegs(args.data)
    jpegs = [photos[i % len(photos)] for i in range(max(args.samples, BATCH))]
    loaders = {
        "flat": flat_loader(jpegs, args.threads),
        "structured": structured_loader(jpegs, args.threads),
    }
    for loader in loaders.values():
        images_per_second(loader, 1.0)  # warm up: workers, caches, first epoch
    rates: dict[str, list[float]] = {name: [] for name in loaders}
    for _ in range(args.rounds):
        for name, loader in loaders.items():
            rates[name].append(images_per_second(loader, args.seconds))
    ratios = [s / f for f, s in zip(rates["flat"], rates["structured"], strict=True)]
    print(
        f"ImageNet train pipeline, batch {BATCH}, {args.threads} threads, {len(photos)} JPEGs, "
        f"{len(jpegs)} samples per epoch"
    )
    print(f"pipelined, alternating {args.seconds:g} s slices:")
    print(f"{'pipeline':<12}{'best img/s':>12}{'all slices':>36}")
    for name, values in rates.items():
        shown = " ".join(f"{v:7.1f}" for v in values)
        print(f"{name:<12}{max(values):>12.1f}{shown:>36}")
    print(
        f"structured / flat: best {max(rates['structured']) / max(rates['flat']):.3f}, "
        f"per slice {' '.join(f'{r:.3f}' for r in ratios)} "
        f"(median {statistics.median(ratios):.3f}; target >= 0.95)"
    )
    synchronous = interleaved(jpegs, args.threads, args.batches)
    print(
        f"synchronous, {args.batches} alternating batches each: flat "
        f"{synchronous['flat']:.1f} img/s, structured {synchronous['structured']:.1f} img/s, "
        f"structured / flat {synchronous['structured'] / synchronous['flat']:.3f}"
    )
    costs = source_costs(jpegs)
    print(
        f"input per batch of {BATCH}: flat {costs['flat']:.2f} ms, structured "
        f"{costs['structured']:.2f} ms (provider + shuffled callable + SampleDataGroup)"
    )
    print("\n200-field sample, µs per sample (best of 400 x 10 calls; target < 50)")
    for name, micros in flatten_costs().items():
        print(f"{name:<42}{micros:>8.1f}")


if __name__ == "__main__":
    main()
