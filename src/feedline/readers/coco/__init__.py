"""``fn.readers.coco``: COCO images with boxes, labels and masks; the ``coco-reader`` plugin.

The package's modules, bottom-up: :mod:`~feedline.readers.coco.raw` (the file's columns and the
reference parser that phrases every error), :mod:`~feedline.readers.coco.segmentations` (polygon
coordinates without a Python object per number: the compiled ``feedline_coco.c``, else
simdjson),
:mod:`~feedline.readers.coco.parse` (the annotation file, with msgspec),
:mod:`~feedline.readers.coco.index` (DALI's rules: sample order, filters, labels, coordinates),
:mod:`~feedline.readers.coco.store` (preprocessed annotations and the cache),
:mod:`~feedline.readers.coco.masks` (pixelwise masks) and :mod:`~feedline.readers.coco.reader`
(the operator's schema, arguments and kernel).
"""

from feedline.readers.coco.reader import COCO_SCHEMA, CocoReader, feedline_register_operators

__all__ = ["COCO_SCHEMA", "CocoReader", "feedline_register_operators"]
