"""``feedline.pipeline``: where DALI's ``nvidia.dali.pipeline`` names live (``Pipeline``,
``pipeline_def``, ``DataNode``, ``do_not_convert``), so that ported imports only change the
package name.

:mod:`feedline.pipeline.experimental` holds DALI's ``pipeline.experimental.pipeline_def``.
"""

from feedline.core.graph import DataNode
from feedline.core.pipeline import Pipeline, pipeline_def
from feedline.core.pipeline.conditionals import do_not_convert

__all__ = ["DataNode", "Pipeline", "do_not_convert", "pipeline_def"]
