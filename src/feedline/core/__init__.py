"""feedline core: schema, registry, graph, pipeline, executor, tensors and types."""
