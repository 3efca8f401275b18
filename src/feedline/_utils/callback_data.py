"""What an ``external_source`` callback may return on the CPU, and its conversion to NumPy
(the checks of DALI's ``nvidia.dali._utils.external_source_impl``, which re-exports them).

A CPU sample is a NumPy array, a :class:`~feedline.tensors.TensorCPU`, or a CPU tensor of
PyTorch or MXNet; a batch is one of those with the samples as the outer dimension, a list of
samples, or a :class:`~feedline.tensors.TensorListCPU`. GPU tensors are refused here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from feedline.core.tensor import TensorCPU, TensorListCPU
from feedline.operators.cpu.python.schemas import accepted_arg_count

__all__ = [
    "accepted_arg_count",
    "assert_cpu_batch_data_type",
    "assert_cpu_sample_data_type",
    "batch_to_numpy",
    "sample_to_numpy",
]

_UNSUPPORTED = "Unsupported callback return type. Got: `{}`."
_NON_UNIFORM = "Uniform input is required (batch of tensors of equal shapes), got {}."


def _framework_device(sample: Any) -> tuple[str, str] | None:
    """``(framework, device kind)`` for a PyTorch or MXNet tensor, else None (no import)."""
    module = type(sample).__module__.split(".", 1)[0]
    if module == "torch" and hasattr(sample, "device"):
        return "PyTorch", sample.device.type
    if module == "mxnet" and hasattr(sample, "context"):
        return "MXNet", sample.context.device_type
    return None


def _check_framework_cpu(framework: str, device: str) -> None:
    if device != "cpu":
        article = "an" if framework == "MXNet" else "a"
        raise TypeError(
            "Unsupported callback return type. GPU tensors are not supported. "
            f"Got {article} {framework} GPU tensor."
        )


def assert_cpu_sample_data_type(sample: Any, error_str: str = _UNSUPPORTED) -> bool:
    """True for a CPU sample.

    Raises:
        TypeError: anything else (``error_str`` formatted with its type), or a GPU tensor.
    """
    if isinstance(sample, np.ndarray | TensorCPU):
        return True
    framework = _framework_device(sample)
    if framework is None:
        raise TypeError(error_str.format(type(sample)))
    _check_framework_cpu(*framework)
    return True


def assert_cpu_batch_data_type(batch: Any, error_str: str = _UNSUPPORTED) -> bool:
    """True for a CPU batch: a TensorListCPU, a list of CPU samples, or one dense sample.

    Raises:
        TypeError: as :func:`assert_cpu_sample_data_type`, for the batch or any of its samples.
    """
    if isinstance(batch, TensorListCPU):
        return True
    if isinstance(batch, list):
        for sample in batch:
            assert_cpu_sample_data_type(sample, error_str)
        return True
    return assert_cpu_sample_data_type(batch, error_str)


def sample_to_numpy(sample: Any, error_str: str = _UNSUPPORTED) -> np.ndarray:
    """The sample as a NumPy array (no copy where the source allows it).

    Raises:
        TypeError: not a CPU sample.
    """
    assert_cpu_sample_data_type(sample, error_str)
    if isinstance(sample, np.ndarray):
        return sample
    if isinstance(sample, TensorCPU):
        return np.asarray(sample)
    framework, _ = _framework_device(sample)  # type: ignore[misc]
    return sample.asnumpy() if framework == "MXNet" else sample.numpy()


def batch_to_numpy(
    batch: Any, error_str: str = _UNSUPPORTED, non_uniform_str: str = _NON_UNIFORM
) -> np.ndarray:
    """The batch as one NumPy array with the samples as the outer dimension.

    Raises:
        TypeError: not a CPU batch.
        ValueError: the samples differ in shape (``non_uniform_str`` formatted with the batch).
    """
    assert_cpu_batch_data_type(batch, error_str)
    if isinstance(batch, TensorListCPU):
        if not batch.is_dense_tensor():
            raise ValueError(non_uniform_str.format(batch))
        return batch.as_array()
    if isinstance(batch, list):
        samples = [sample_to_numpy(sample, error_str) for sample in batch]
        if any(s.shape != samples[0].shape for s in samples):
            raise ValueError(non_uniform_str.format(batch))
        return np.stack(samples)
    return sample_to_numpy(batch, error_str)
