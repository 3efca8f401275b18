"""The pipeline layer, the core's top: the public ``Pipeline`` and ``@pipeline_def``.

``pipeline`` (define, build, run), ``properties`` (parameters and their checks),
``checkpoints`` (reader queries, checkpoints), ``serialize`` (JSON, Graphviz),
``pipeline_def`` (the decorator).
"""

from feedline.core.pipeline.pipeline import Pipeline
from feedline.core.pipeline.pipeline_def import pipeline_def

__all__ = ["Pipeline", "pipeline_def"]
