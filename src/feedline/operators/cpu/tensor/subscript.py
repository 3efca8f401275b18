"""Kernels of the hidden ``_tensor_subscript`` and ``_subscript_dim_check`` operators (what
``DataNode[...]`` creates).

Subscript ``i`` is either an index ``at_i`` (the dimension goes away) or a slice
``lo_i:hi_i:step_i`` with NumPy's rules (missing ends, negative positions, clamping, negative
steps). Dimensions past the last subscript are kept whole. The error texts follow DALI's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import Batch, Kernel, SampleContext, SampleKernel
from feedline.core.tensor import TensorListCPU

__all__ = [
    "SubscriptDimCheckKernel",
    "TensorSubscriptKernel",
    "check_dimensions",
    "sample_subscripts",
    "subscript_key",
]

_PARTS = ("at", "lo", "hi", "step")


def check_dimensions(ndim: int, count: int) -> None:
    """Raise DALI's IndexError when ``count`` subscripts are more than ``ndim`` dimensions."""
    if count > ndim:
        raise IndexError(f"Too many indices ({count}) for a {ndim}-D tensor.")


def subscript_key(
    shape: tuple[int, ...], subscripts: list[dict[str, int | None]], sample_index: int
) -> tuple[int | slice, ...]:
    """The NumPy index of one sample of ``shape`` for ``subscripts`` (one dict of ``at``/``lo``/
    ``hi``/``step`` per subscript, None where not given).

    Raises:
        IndexError: more subscripts than dimensions, or an index outside its axis.
        ValueError: a zero step.
    """
    check_dimensions(len(shape), len(subscripts))
    key: list[int | slice] = []
    for axis, (extent, parts) in enumerate(zip(shape, subscripts, strict=False)):
        at = parts["at"]
        if at is not None:
            if not -extent <= at < extent:
                raise IndexError(f"Index {at} is out of range for axis {axis} of length {extent}")
            key.append(at + extent if at < 0 else at)
            continue
        if parts["step"] == 0:
            raise ValueError(
                f"Step cannot be zero. Detected step == 0 at axis {axis} while processing "
                f"sample #{sample_index}"
            )
        key.append(slice(parts["lo"], parts["hi"], parts["step"]))
    return tuple(key)


class TensorSubscriptKernel(SampleKernel):
    """``_tensor_subscript``: one sample indexed by ``at_i``/``lo_i``/``hi_i``/``step_i``."""

    def setup(self) -> None:
        """Check that the subscripts are consistent and fit ``num_subscripts``."""
        given = {
            name
            for name, value in self.args.items()
            if name.partition("_")[0] in _PARTS
            and (value is not None or name in self.ctx.tensor_args)
        }
        used = 1 + max((int(name.partition("_")[2]) for name in given), default=-1)
        count = used if self.args["num_subscripts"] is None else self.args["num_subscripts"]
        if used > count:
            raise ValueError(
                f"Internal error: The internal argument `num_subscripts` declares fewer ({count}) "
                f"subscripts than actually provided ({used})."
            )
        for i in range(count):
            if f"at_{i}" not in given:
                continue
            if f"lo_{i}" in given or f"hi_{i}" in given:
                raise ValueError(
                    f"The subscript for dimension {i} must not be specified both as an index "
                    "and as a range."
                )
            if f"step_{i}" in given:
                raise ValueError(
                    f"The subscript for dimension {i} was specified as index - it cannot have "
                    "a step."
                )
        self._count = count
        self._removed = {i for i in range(count) if f"at_{i}" in given}

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """The input layout without the indexed dimensions."""
        layout = input_layouts[0]
        return ("".join(c for i, c in enumerate(layout) if i not in self._removed),)

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Index one sample (the result is a copy in the batch's buffer)."""
        (data,) = inputs
        subscripts = sample_subscripts(args, self._count)
        key = subscript_key(data.shape, subscripts, sample.index)
        view = np.asarray(data[key], dtype=data.dtype)  # a scalar keeps an enum-typed dtype
        out = sample.output(view.shape, view.dtype)
        out[...] = view
        return out


def sample_subscripts(args: Mapping[str, Any], count: int) -> list[dict[str, int | None]]:
    """The ``at``/``lo``/``hi``/``step`` of each of ``count`` subscripts, from one sample's
    arguments (None where not given)."""
    return [
        {part: None if args[f"{part}_{i}"] is None else int(args[f"{part}_{i}"]) for part in _PARTS}
        for i in range(count)
    ]


class SubscriptDimCheckKernel(Kernel):
    """``_subscript_dim_check``: passes the batch through once every sample has at least
    ``num_subscripts`` dimensions."""

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """Check the dimensions and return the input."""
        (data,) = batch.inputs
        if len(data):
            check_dimensions(data.ndim, self.args["num_subscripts"])
        return [data]
