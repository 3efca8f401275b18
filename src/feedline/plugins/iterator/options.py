"""What the framework iterators accept: the last-batch policies, their errors and the checks of
their arguments (``auto_reset``, ``last_batch_policy``, ``output_map``, ``output_types``)."""

from __future__ import annotations

import enum
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "EpochNotFinishedWarning",
    "IteratorError",
    "LastBatchPolicy",
    "check_output_map",
    "check_output_types",
    "parse_auto_reset",
    "parse_policy",
    "shard_sizes",
]


class LastBatchPolicy(enum.Enum):
    """What to do with the last batch of an epoch when the shard does not fill it.

    * ``FILL``: return a full batch, completed with the reader's padding (``pad_last_batch``) or
      with samples of the next epoch (which then counts them as already read);
    * ``DROP``: drop the batch that cannot be filled from the current epoch;
    * ``PARTIAL``: return only the samples of the current epoch (a shorter last batch).
    """

    FILL = 0
    DROP = 1
    PARTIAL = 2


class IteratorError(AssertionError, ValueError):
    """A wrong iterator configuration or a batch the configuration cannot accept.

    It is a ``ValueError``, and also an ``AssertionError`` because DALI reports these with
    ``assert`` and ported code may catch that.
    """


class EpochNotFinishedWarning(UserWarning):
    """``reset()`` was called in the middle of an epoch and was ignored (as DALI does)."""


def parse_auto_reset(auto_reset: Any) -> bool:
    if auto_reset is False or auto_reset is None or auto_reset == "no":
        return False
    if auto_reset is True or auto_reset == "yes":
        return True
    raise ValueError(f"auto_reset must be True, False, None, 'yes' or 'no', got {auto_reset!r}")


def parse_policy(fill_last_batch: bool | None, last_batch_policy: Any) -> LastBatchPolicy:
    if fill_last_batch is not None:
        warnings.warn(
            "fill_last_batch is deprecated: use last_batch_policy=LastBatchPolicy.FILL "
            "(fill_last_batch=True) or LastBatchPolicy.PARTIAL (fill_last_batch=False); "
            "fill_last_batch takes precedence over last_batch_policy",
            DeprecationWarning,
            stacklevel=4,
        )
        return LastBatchPolicy.FILL if fill_last_batch else LastBatchPolicy.PARTIAL
    if type(last_batch_policy) is not LastBatchPolicy:
        raise ValueError(
            f"Wrong type for `last_batch_policy`. It must be a LastBatchPolicy (FILL, DROP or "
            f"PARTIAL), "
            f"got {last_batch_policy!r} of type {type(last_batch_policy).__name__}"
        )
    return last_batch_policy


def check_output_map(output_map: Any) -> list[str]:
    if isinstance(output_map, str) or not isinstance(output_map, Sequence):
        raise TypeError(
            f"output_map must be a list of output names, got {type(output_map).__name__}"
        )
    names = list(output_map)
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"output_map entries must be strings, got {name!r}")
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise IteratorError(f"output_map names should be distinct; repeated: {duplicates}")
    return names


def shard_sizes(num_samples: int, num_shards: int) -> np.ndarray:
    """Sizes of the shards ``[floor(k*N/S), floor((k+1)*N/S))`` for every ``k``."""
    bounds = np.arange(num_shards + 1, dtype=np.int64) * num_samples // num_shards
    return np.diff(bounds)


def check_output_types(
    output_types: Sequence[str] | None, output_map: Sequence[str], allowed: Sequence[str]
) -> dict[str, str] | None:
    """Validate a ragged iterator's ``output_types`` (one tag per output): ``{name: tag}``."""
    output_map = check_output_map(output_map)
    if output_types is None:
        return None
    if isinstance(output_types, str) or not isinstance(output_types, Sequence):
        raise TypeError(
            f"output_types must be a list of tags {list(allowed)}, got {output_types!r}"
        )
    tags = list(output_types)
    if len(tags) != len(output_map):
        raise IteratorError(
            f"output_types has {len(tags)} tags but output_map has {len(output_map)} names "
            f"{list(output_map)}: give one tag per output"
        )
    for name, tag in zip(output_map, tags, strict=True):
        if tag not in allowed:
            raise IteratorError(
                f"output_types: tag {tag!r} for output {name!r} is not one of {list(allowed)}"
            )
    return dict(zip(output_map, tags, strict=True))
