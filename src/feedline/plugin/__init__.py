"""``feedline.plugin``: DALI's ``nvidia.dali.plugin`` paths for the framework iterators.

``feedline.plugin.pytorch``, ``feedline.plugin.jax`` and ``feedline.plugin.numpy`` re-export
the iterator plugins of :mod:`feedline.plugins`; each loads only when imported (this package
imports none of them).
"""
