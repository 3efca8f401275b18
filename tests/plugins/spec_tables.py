"""The epoch tables observed on DALI 2.4's iterator (N=7 files ``1..7``, batch size 2,
``reader_name`` mode), written as in docs/iterators.md, and helpers to read iterator output.

Notation: an epoch is a space-separated list of batches; a batch lists one group of digits per
pipeline, separated by commas; each digit is one sample.
"""

from __future__ import annotations

from typing import Any

import numpy as np

N, BATCH = 7, 2

# (policy, reader pads) -> (len() of the first epoch, epochs)
ONE_PIPELINE: dict[tuple[str, bool], tuple[int, list[str]]] = {
    ("FILL", True): (4, ["12 34 56 77", "12 34 56 77", "12 34 56 77"]),
    ("FILL", False): (4, ["12 34 56 71", "23 45 67", "12 34 56 71"]),
    ("DROP", True): (3, ["12 34 56", "12 34 56", "12 34 56"]),
    ("DROP", False): (3, ["12 34 56", "23 45 67", "34 56 71"]),
    ("PARTIAL", True): (4, ["12 34 56 7", "12 34 56 7", "12 34 56 7"]),
    ("PARTIAL", False): (4, ["12 34 56 7", "23 45 67 1", "34 56 71 2"]),
}

# Two pipelines, shards {1,2,3} and {4,5,6,7}; only the epochs DALI's table spells out.
TWO_PIPELINES: dict[tuple[str, bool], list[str]] = {
    ("FILL", True): ["12,45 33,67", "45,12 67,33", "12,45 33,67", "45,12 67,33"],
    ("FILL", False): ["12,45 34,67", "56,12 71,34", "23,56 45,71", "67,23"],
    ("DROP", True): ["12,45", "45,12"],
    ("DROP", False): ["12,45", "56,12", "23,56", "67,23"],
    ("PARTIAL", True): ["12,45 3,67", "45,12 67,3"],
    ("PARTIAL", False): ["12,45 3,67", "56,12 71,3", "23,56 4,71", "67,23 12,4"],
}


def parse_epoch(text: str) -> list[list[list[int]]]:
    """``"12,45 3,67"`` → ``[[[1, 2], [4, 5]], [[3], [6, 7]]]`` (batch → pipeline → samples)."""
    return [[[int(d) for d in group] for group in batch.split(",")] for batch in text.split()]


def sample_values(value: Any) -> list[int]:
    """The first element of every sample of one output (NumPy array, torch tensor or list)."""
    if isinstance(value, list):
        return [int(np.asarray(v).reshape(-1)[0]) for v in value]
    array = np.asarray(value)
    return [int(x) for x in array.reshape(array.shape[0], -1)[:, 0]] if array.shape[0] else []


def batch_values(batch: list[dict[str, Any]], name: str = "data") -> list[list[int]]:
    """Sample values of output ``name`` for every pipeline of one iterator batch."""
    return [sample_values(per_pipe[name]) for per_pipe in batch]
