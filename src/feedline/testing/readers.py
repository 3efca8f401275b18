""":func:`check_reader`: sharding, padding and checkpoints of a reader, whoever wrote it.

Samples are told apart by their content (every output's bytes, shape and dtype), so the data
set given to the check should not hold two identical samples.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from typing import Any

from feedline.core.plugins import get_plugin_system
from feedline.core.registry import load_object
from feedline.testing.runner import RunResult, collect, operator_pipeline

__all__ = ["check_reader"]

Key = tuple[tuple[bytes, tuple[int, ...], str], ...]


def _operator_name(reader: str | type) -> str:
    if isinstance(reader, str):
        return reader
    registry = get_plugin_system().ensure_loaded()
    for name, entry in registry.operators.items():
        if any(load_object(ref) is reader for ref in entry.kernels.values()):
            return name
    raise AssertionError(f"{reader.__name__} is not the kernel of any registered operator")


def _samples(result: RunResult) -> list[Key]:
    """The samples of ``result`` in reading order, each as the tuple of its outputs."""
    keys: list[Key] = []
    for iteration in result:
        columns = [samples for samples, _ in iteration]
        for row in zip(*columns, strict=True):
            keys.append(tuple((a.tobytes(), a.shape, a.dtype.str) for a in row))
    return keys


def _read(name: str, args: Mapping[str, Any], batch_size: int, samples: int, **kw: Any):
    pipe = operator_pipeline(name, args={**args, "name": "Reader"}, batch_size=batch_size, **kw)
    try:
        meta = pipe.reader_meta("Reader")
        return _samples(collect(pipe, math.ceil(samples / batch_size))), meta
    finally:
        pipe.close()


def _check_shards(
    name: str,
    args: Mapping[str, Any],
    batch_size: int,
    everything: Counter,
    shards: int,
    pad: bool,
    shuffle: bool,
) -> None:
    total = sum(everything.values())
    what = f"{name} with num_shards={shards}, pad_last_batch={pad}, random_shuffle={shuffle}"
    seen: Counter = Counter()
    per_shard = math.ceil(total / shards)
    for shard in range(shards):
        size = (shard + 1) * total // shards - shard * total // shards
        options = {
            **args,
            "num_shards": shards,
            "shard_id": shard,
            "pad_last_batch": pad,
            "random_shuffle": shuffle,
        }
        wanted = math.ceil(per_shard / batch_size) * batch_size if pad else size
        keys, meta = _read(name, options, batch_size, wanted)
        expected_padded = per_shard * shards if pad else total
        if meta["epoch_size"] != total or meta["epoch_size_padded"] != expected_padded:
            raise AssertionError(
                f"{what}: reader_meta {meta} (expected epoch_size {total}, "
                f"epoch_size_padded {expected_padded})"
            )
        epoch = keys[:size]
        seen.update(epoch)
        if pad and size and any(k != epoch[-1] for k in keys[size:wanted]):
            raise AssertionError(f"{what}: shard {shard} is not padded with its last sample")
    if seen != everything:
        missing = sum((everything - seen).values())
        extra = sum((seen - everything).values())
        raise AssertionError(
            f"{what}: one epoch across the shards misses {missing} samples and repeats {extra}"
        )


def _check_checkpoint(name: str, args: Mapping[str, Any], batch_size: int, total: int) -> None:
    options = {**args, "random_shuffle": True}
    before = max(1, total // batch_size)
    pipe = operator_pipeline(
        name, args={**options, "name": "Reader"}, batch_size=batch_size, enable_checkpointing=True
    )
    try:
        collect(pipe, before)
        state = pipe.checkpoint()
        expected = _samples(collect(pipe, before + 1))
    finally:
        pipe.close()
    resumed = operator_pipeline(
        name, args={**options, "name": "Reader"}, batch_size=batch_size, checkpoint=state
    )
    try:
        got = _samples(collect(resumed, before + 1))
    finally:
        resumed.close()
    if got != expected:
        raise AssertionError(
            f"{name}: a pipeline restored from a checkpoint reads other samples "
            "than the pipeline the checkpoint was taken from"
        )


def check_reader(
    reader: str | type,
    args: Mapping[str, Any],
    *,
    batch_size: int = 3,
    shard_counts: tuple[int, ...] = (1, 2, 3),
) -> list[str]:
    """Check a reader on the data set its ``args`` describe; raise AssertionError on a defect.

    Checked: one epoch read through every shard of ``num_shards`` (for each of
    ``shard_counts``) yields every sample of the data set exactly once, without and with
    ``pad_last_batch`` (padding repeats the shard's last sample) and without and with
    ``random_shuffle``; ``reader_meta`` reports the epoch sizes that go with it; and a pipeline
    restored from a checkpoint reads exactly what the original read after it.

    Args:
        reader: the reader's operator name or its kernel class (a ``Reader`` subclass).
        args: the reader's arguments (its data set); at least ``max(shard_counts)`` samples.
        batch_size: the batch size used (small, so that batches straddle shards and epochs).
        shard_counts: the ``num_shards`` values tried.

    Returns:
        The checks that ran.
    """
    name = _operator_name(reader)
    total = _read(name, args, batch_size, 1)[1]["epoch_size"]
    if total < max(shard_counts):
        raise AssertionError(
            f"{name}: the data set has {total} samples; check_reader needs at "
            f"least {max(shard_counts)}"
        )
    keys, _ = _read(name, args, batch_size, total)
    everything = Counter(keys[:total])
    if len(everything) != total:
        raise AssertionError(f"{name}: the data set given to check_reader holds identical samples")
    done = []
    for shuffle in (False, True):
        for pad in (False, True):
            for shards in shard_counts:
                _check_shards(name, args, batch_size, everything, shards, pad, shuffle)
                done.append(f"shards={shards} pad={pad} shuffle={shuffle}")
    _check_checkpoint(name, args, batch_size, total)
    done.append("checkpoint")
    return done
