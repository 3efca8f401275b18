"""``feedline.pipeline``: where DALI's ``nvidia.dali.pipeline`` names live (``Pipeline``,
``pipeline_def``, ``DataNode``), so that ported imports only change the package name.

:mod:`feedline.pipeline.experimental` holds DALI's ``pipeline.experimental.pipeline_def``.
"""

from feedline.core.graph import DataNode
from feedline.core.pipeline import Pipeline, pipeline_def

__all__ = ["DataNode", "Pipeline", "pipeline_def"]
