"""The pipeline layer, the core's top: the public ``Pipeline`` and ``@pipeline_def``.

``pipeline`` (define, build, run), ``properties`` (parameters and their checks),
``checkpoints`` (reader queries, checkpoints), ``serialize`` (JSON, Graphviz),
``decorator`` (``@pipeline_def``).
"""

from feedline.core.pipeline.decorator import pipeline_def
from feedline.core.pipeline.pipeline import Pipeline

__all__ = ["Pipeline", "pipeline_def"]
