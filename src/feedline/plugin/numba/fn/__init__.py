"""``feedline.plugin.numba.fn``: DALI's ``nvidia.dali.plugin.numba.fn`` path."""
