"""Operator family ``conditional``: the hidden operators that conditional pipelines
(``enable_conditionals=True``) are made of: ``_conditional.split``, ``_conditional.merge``,
``_conditional.not_`` and ``_conditional.validate_logical``. Schemas and registration:
:mod:`.schemas`; kernels: :mod:`.kernels`."""
