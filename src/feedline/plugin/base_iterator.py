"""``feedline.plugin.base_iterator``: DALI's ``nvidia.dali.plugin.base_iterator`` path for
``LastBatchPolicy``."""

from feedline.plugins.iterator import LastBatchPolicy

__all__ = ["LastBatchPolicy"]
