"""feedline core, in layers that each import only those below them (see docs/architecture.md):

``types``/``errors`` → ``tensor``/``buffers`` → ``schema`` → ``kernel`` → ``registry`` →
``hookspecs`` → ``plugins`` → ``graph`` → ``execution``/``workers`` → ``pipeline``/``fn``.
The core imports nothing from the readers, operators or plugins (checked by import-linter).
"""
