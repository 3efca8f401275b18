"""DALI's ``nvidia.dali._utils.hacks``: :func:`not_iterable`."""

from feedline.core.graph.not_iterable import not_iterable

__all__ = ["not_iterable"]
