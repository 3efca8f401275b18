"""An example feedline plugin: ``example.posterize``, ``example.readers.csv`` and a farbfeld
image codec, registered by :mod:`feedline_example.plugin`."""

__version__ = "0.1.0"
