"""Exceptions raised by pipelines."""

from __future__ import annotations

__all__ = ["CorruptDataWarning", "OperatorError", "PipelineError", "PluginError"]


class PipelineError(RuntimeError):
    """A pipeline could not be built or run."""


class PluginError(RuntimeError):
    """A plugin failed to load or registered something invalid."""


class CorruptDataWarning(UserWarning):
    """A sample was decoded despite recoverable damage (e.g. libjpeg's "Corrupt JPEG data");
    the message names the sample's source. Turn it into an error with
    ``warnings.simplefilter("error", CorruptDataWarning)``."""


class OperatorError(PipelineError):
    """An operator failed while running; the message names where.

    Attributes:
        operator: the operator's node name.
        iteration: the pipeline iteration.
        sample_index: index of the failing sample in its batch (None for a batch-level failure).
        source_info: where the failing sample came from (a file path), if known.
    """

    def __init__(
        self,
        message: str,
        *,
        operator: str,
        iteration: int,
        sample_index: int | None = None,
        source_info: str = "",
    ) -> None:
        where = f"operator {operator!r}, iteration {iteration}"
        if sample_index is not None:
            where += f", sample {sample_index}"
        if source_info:
            where += f" ({source_info})"
        super().__init__(f"{where}: {message}")
        self.operator = operator
        self.iteration = iteration
        self.sample_index = sample_index
        self.source_info = source_info
