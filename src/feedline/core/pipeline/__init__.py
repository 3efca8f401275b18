"""The pipeline layer, the core's top: the public ``Pipeline`` and ``@pipeline_def``.

``pipeline`` (define, build, run), ``properties`` (parameters and their checks),
``checkpoints`` (reader queries, checkpoints), ``serialize`` (JSON, Graphviz),
``decorator`` (``@pipeline_def``), ``conditionals`` (``enable_conditionals=True``, loaded by
the first conditional pipeline; its ``do_not_convert`` is DALI's
``nvidia.dali.pipeline.do_not_convert``).
"""

from feedline.core.pipeline.decorator import pipeline_def
from feedline.core.pipeline.pipeline import Pipeline

__all__ = ["Pipeline", "pipeline_def"]
