"""ACCV-Lab's ``dali_pipeline_framework`` module layout, over feedline's structured plugin.

Code written for ``accvlab.dali_pipeline_framework`` runs here after changing only that import
prefix to ``feedline.structured``. Each sub-module (``pipeline``, ``inputs``,
``processing_steps``, ``internal_helpers``, ``operators_impl``) re-exports the names of its
upstream counterpart; the implementation lives in :mod:`feedline.plugins.structured`.
"""

from feedline.structured import (
    inputs,
    internal_helpers,
    operators_impl,
    pipeline,
    processing_steps,
)

__all__ = ["inputs", "internal_helpers", "operators_impl", "pipeline", "processing_steps"]
