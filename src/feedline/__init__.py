"""feedline: data loading and preprocessing pipelines for deep learning.

The API follows NVIDIA DALI's (``pipeline_def``, ``Pipeline``, ``fn``, ``types``) and runs on any
machine. Importing feedline is light: plugins (operators, readers, codecs, iterators) load on first
use of ``fn`` or ``Pipeline.build()``.
"""

from __future__ import annotations

import importlib
from typing import Any

from feedline import types
from feedline.core.errors import CorruptDataWarning, OperatorError, PipelineError, PluginError
from feedline.core.graph.subscript import newaxis
from feedline.core.pipeline import OperatorConcurrency, Pipeline, StreamPolicy, pipeline_def
from feedline.core.tensor import TensorCPU, TensorListCPU

__version__ = "0.1.0"
__all__ = [
    "CorruptDataWarning",
    "OperatorConcurrency",
    "OperatorError",
    "Pipeline",
    "PipelineError",
    "PluginError",
    "StreamPolicy",
    "TensorCPU",
    "TensorListCPU",
    "__version__",
    "fn",
    "math",
    "newaxis",
    "ops",
    "pipeline_def",
    "types",
]

_LAZY = {
    name: f"feedline.{name}"
    for name in (
        "fn",
        "math",
        "ops",
        "pipeline",
        "tensors",
        "backend",
        "backend_impl",
        "data_node",
        "tfrecord",
        "plugin",
        "plugin_manager",
    )
}
"""Submodules reachable as attributes (``feedline.pipeline.Pipeline`` after ``import feedline``,
as ``nvidia.dali.pipeline`` is), imported on first access."""


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module = importlib.import_module(_LAZY[name])
        globals()[name] = module
        return module
    raise AttributeError(f"module 'feedline' has no attribute {name!r}")
