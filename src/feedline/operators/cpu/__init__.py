"""The CPU operator plugin: it owns the built-in operator schemas and their CPU kernels.

One subpackage per family, each with one ``schemas`` module (its schemas and registration hooks,
an entry point of the ``feedline.plugins`` group) and its kernels beside it: ``tensor``,
``image``, ``color``, ``geometry``, ``random``, ``math``, ``python``. ``common`` holds what
several families share. Families import ``common`` and ``feedline.operators.native`` (the C
sources), and a family's schemas may reuse another family's schemas (``image`` takes
``slice``'s arguments).
"""
