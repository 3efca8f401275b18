"""``feedline.plugin.numba``: DALI's ``nvidia.dali.plugin.numba`` path.

DALI's ``numba_function`` (an operator whose kernel is a Numba-compiled function) is not in
feedline yet: the path imports, so programs and test files that import it for some of their
pipelines run the others, and calling it raises an error that says what to use instead.
"""
