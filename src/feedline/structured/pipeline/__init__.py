"""The pipeline definition, the sample format and the structured output iterator."""

from feedline.plugins.structured.definition import PipelineDefinition
from feedline.plugins.structured.iterator import DALIStructuredOutputIterator
from feedline.plugins.structured.sample_data_group import SampleDataGroup

__all__ = ["DALIStructuredOutputIterator", "PipelineDefinition", "SampleDataGroup"]
