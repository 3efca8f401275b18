"""``feedline.pipeline.experimental``: DALI's ``nvidia.dali.pipeline.experimental``.

Its ``pipeline_def`` is feedline's one decorator: it accepts everything
:func:`feedline.pipeline_def` accepts (``enable_conditionals``, ``debug``, the pipeline's
arguments), as DALI's experimental decorator accepts everything its stable one does.
"""

from feedline.core.pipeline import pipeline_def

__all__ = ["pipeline_def"]
