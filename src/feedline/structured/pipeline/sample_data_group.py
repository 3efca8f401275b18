"""The sample format (module path as upstream)."""

from feedline.plugins.structured.sample_data_group import SampleDataGroup

__all__ = ["SampleDataGroup"]
