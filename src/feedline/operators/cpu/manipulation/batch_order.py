"""Kernels of ``permute_batch`` and ``batch_permutation``: choosing samples of a batch."""

from __future__ import annotations

import numpy as np

from feedline.core.kernel import Batch, Kernel
from feedline.core.tensor import TensorListCPU

__all__ = ["BatchPermutationKernel", "PermuteBatchKernel", "random_indices"]


class PermuteBatchKernel(Kernel):
    """``permute_batch``: ``out[i] = input[indices[i]]``."""

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """Pick the samples."""
        (data,) = batch.inputs
        size = len(data)
        node = batch.arg_inputs.get("indices")
        if node is None:
            indices = [int(i) for i in self.args["indices"]]
        else:
            indices = []
            for position, value in enumerate(node.samples()):
                if value.size != 1:
                    raise ValueError(
                        f"permute_batch: sample {position} of 'indices' must be a scalar, got "
                        f"shape {value.shape}"
                    )
                indices.append(int(value.reshape(())))
        if len(indices) != size:
            raise ValueError(
                f"permute_batch: {len(indices)} indices do not match the batch size {size}"
            )
        for position, index in enumerate(indices):
            if not 0 <= index < size:
                raise IndexError(
                    f"permute_batch: Sample index out of range. indices[{position}] = {index} is "
                    f"not a valid index for an input batch of {size} tensors."
                )
        samples = data.samples()
        sources = data.source_infos()
        return [
            TensorListCPU.from_samples(
                [samples[i] for i in indices], data.layout(), [sources[i] for i in indices]
            )
        ]


def random_indices(
    rng: np.random.Generator, size: int, allow_repetitions: bool, no_fixed_points: bool
) -> np.ndarray:
    """Random indices into a batch of ``size``: a permutation, or independent draws with
    ``allow_repetitions``; never ``out[i] == i`` with ``no_fixed_points`` (unless ``size`` is
    1)."""
    avoid = no_fixed_points and size > 1
    if allow_repetitions:
        if not avoid:
            return rng.integers(0, size, size)
        draws = rng.integers(0, size - 1, size)
        return draws + (draws >= np.arange(size))
    while True:
        permutation = rng.permutation(size)
        if not avoid or not np.any(permutation == np.arange(size)):
            return permutation


class BatchPermutationKernel(Kernel):
    """``batch_permutation``: random sample indices, one int32 scalar per sample."""

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """Draw from the batch's first generator (one draw per iteration)."""
        indices = random_indices(
            batch.rng(0), batch.size, self.args["allow_repetitions"], self.args["no_fixed_points"]
        )
        return [TensorListCPU.from_dense(indices.astype(np.int32))]
