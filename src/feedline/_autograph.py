"""``feedline._autograph``: where DALI's private ``nvidia.dali._autograph`` is, for code that
asks whether a function was transformed for conditionals (``is_autograph_artifact``)."""

from feedline.core.pipeline.conditionals import is_converted as is_autograph_artifact

__all__ = ["is_autograph_artifact"]
