"""Structured pipelines for driving data, laid out as ACCV-Lab's ``examples/pipeline_setup``.

``synthetic_nuscenes`` writes and reads a tiny NuScenes-shaped data set, ``providers`` turns
it into samples, and ``object_detection_2d`` and ``stream_petr`` set up the two pipelines.
"""
