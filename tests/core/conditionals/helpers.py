"""Test helper: run a function as a conditional pipeline over per-sample inputs, and the same
function on each sample's NumPy values as the reference."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from feedline import fn, pipeline_def


def columns_source(column: Sequence[Any]) -> Callable[[Any], np.ndarray]:
    """A ``batch=False`` callback giving sample ``i`` of each batch the value ``column[i]``."""
    return lambda info: np.asarray(column[info.idx_in_batch])


def run_conditional(
    function: Callable[..., Any], columns: Sequence[Sequence[Any]], num_threads: int = 2, **kw: Any
) -> list[list[np.ndarray]]:
    """One iteration of ``function`` as a conditional pipeline whose inputs are ``columns`` (one
    external source each); every output as a list of samples."""
    size = len(columns[0])

    @pipeline_def(
        batch_size=size, num_threads=num_threads, device_id=None, enable_conditionals=True, **kw
    )
    def pipe():
        nodes = [fn.external_source(source=columns_source(c), batch=False) for c in columns]
        return function(*nodes)

    pipeline = pipe()
    pipeline.build()
    outputs = pipeline.run()
    return [[np.array(s) for s in out] for out in outputs]


def run_reference(
    function: Callable[..., Any], columns: Sequence[Sequence[Any]]
) -> list[list[np.ndarray]]:
    """``function`` on each sample's values (plain Python), regrouped by output."""
    per_sample = []
    for values in zip(*columns, strict=True):
        result = function(*(np.asarray(v) for v in values))
        per_sample.append(result if isinstance(result, tuple) else (result,))
    return [[np.asarray(s[k]) for s in per_sample] for k in range(len(per_sample[0]))]


def assert_same(function: Callable[..., Any], *columns: Sequence[Any]) -> None:
    """The conditional pipeline gives, sample by sample, what plain Python gives."""
    got = run_conditional(function, columns)
    expected = run_reference(function, columns)
    assert len(got) == len(expected)
    for out, ref in zip(got, expected, strict=True):
        assert len(out) == len(ref)
        for i, (a, b) in enumerate(zip(out, ref, strict=True)):
            np.testing.assert_array_equal(a, b, err_msg=f"sample {i}")
