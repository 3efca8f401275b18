"""Operator names as DALI spells them: the CamelCase class name of an operator and the automatic
names of its graph nodes.

DALI names its operator classes in CamelCase (``ops.random.CoinFlip``) and derives the ``fn``
names from them (``fn.random.coin_flip``). feedline's schemas carry the ``fn`` name, so the class
name is derived the other way: each ``_``-separated word capitalized, except the acronyms DALI
writes in capitals (``readers.coco`` → ``COCO``, ``bbox_paste`` → ``BBoxPaste``).

An operator created while a pipeline is being defined is named ``__<Class>_<n>`` with ``n``
counted per pipeline; one created outside any pipeline is named ``__<Class>_detached_<n>`` with
``n`` counted per process (DALI's rule, so that detached names never clash with a pipeline's).
"""

from __future__ import annotations

import itertools
import re

__all__ = ["class_name", "detached_name"]

_ACRONYMS = {
    "bbox": "BBox",
    "coco": "COCO",
    "dl": "DL",
    "mfcc": "MFCC",
    "mxnet": "MXNet",
    "rms": "RMS",
    "roi": "ROI",
    "ssd": "SSD",
    "tfrecord": "TFRecord",
}
"""Words DALI's class names keep in capitals (its CamelCase → snake_case rule loses them)."""

_detached_ids = itertools.count()


def class_name(op_name: str) -> str:
    """The DALI class name of operator ``op_name`` (its last dotted component in CamelCase):
    ``"readers.file"`` → ``"File"``, ``"random_bbox_crop"`` → ``"RandomBBoxCrop"``."""
    last = op_name.rsplit(".", 1)[-1]
    words = [w for w in re.split(r"[_\W]+", last) if w]
    return "".join(_ACRONYMS.get(w, w[:1].upper() + w[1:]) for w in words)


def detached_name(op_name: str) -> str:
    """A new automatic name for an operator created outside any pipeline."""
    return f"__{class_name(op_name)}_detached_{next(_detached_ids)}"
