"""Family ``manipulation``: tensor and batch manipulation (``reinterpret``, ``lookup_table``,
``element_extract``, ``per_frame``, ``sequence_rearrange``, ``permute_batch``,
``batch_permutation``, ``get_property``, ``shapes``, ``experimental.peek_image_shape``)."""
