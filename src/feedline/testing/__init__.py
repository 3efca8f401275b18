"""A test kit for operator and reader authors (also a pytest plugin, see
:mod:`feedline.testing.pytest_plugin`).

* :func:`check_operator` — the schema is complete and documented, the docs render, the outputs
  agree with what the kernel declares, the results do not depend on ``num_threads`` and repeat
  for the same seed, and CPU and GPU kernels agree when both exist and a GPU is present.
* :func:`check_reader` — every sample exactly once per epoch across shards, with and without
  ``pad_last_batch``, and checkpoints that resume exactly where they were taken.
* :func:`isolated_plugins` — a plugin system (and registry) of its own for a block of code.
* :func:`has_gpu` and the ``gpu`` marker, skipped without a device by the pytest plugin.

The kit raises ``AssertionError`` naming the operator and the defect, and needs pytest.
"""

from feedline.testing.gpu import has_gpu, requires_gpu
from feedline.testing.operators import OperatorExample, check_operator
from feedline.testing.readers import check_reader
from feedline.testing.runner import isolated_plugins, run_operator

__all__ = [
    "OperatorExample",
    "check_operator",
    "check_reader",
    "has_gpu",
    "isolated_plugins",
    "requires_gpu",
    "run_operator",
]
