"""Array-manipulation operators: ``one_hot``, ``cat``, ``stack``, ``expand_dims``, ``squeeze``
and ``cast_like`` (schemas in :mod:`.plugin`, kernels in :mod:`.shape_ops` and :mod:`.join`)."""
