"""Image-effect operators: ``gaussian_blur``, ``erase``, ``jitter`` and ``grid_mask`` (schemas in
:mod:`.plugin`; kernels in :mod:`.blur`, :mod:`.regions` and :mod:`.jitter`)."""
