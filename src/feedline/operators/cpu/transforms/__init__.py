"""Family ``transforms``: DALI's affine transform matrices (``transforms.translation``,
``scale``, ``rotation``, ``shear``, ``crop``, ``combine``), the ``(ndim, ndim + 1)`` float32
matrices that ``coord_transform`` and ``warp_affine`` take."""
