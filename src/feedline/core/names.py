"""Operator names as DALI spells them: the CamelCase class name of an operator and the automatic
names of its graph nodes.

DALI names its operator classes in CamelCase (``ops.random.CoinFlip``) and derives the ``fn``
names from them (``fn.random.coin_flip``). feedline's schemas carry the ``fn`` name, so the class
name is derived the other way: each ``_``-separated word capitalized, except the acronyms DALI
writes in capitals (``readers.coco`` → ``COCO``, ``bbox_paste`` → ``BBoxPaste``).

DALI's schema names join the module path and the class name with ``__``
(``readers__File``, ``random__CoinFlip``); :func:`schema_name` and :func:`op_name` convert
between those and the ``fn``/``ops`` names, and :func:`snake_case` is DALI's CamelCase →
snake_case rule (acronym runs stay one word: ``RandomBBoxCrop`` → ``random_bbox_crop``).

An operator created while a pipeline is being defined is named ``__<Class>_<n>`` with ``n``
counted per pipeline; one created outside any pipeline is named ``__<Class>_detached_<n>`` with
``n`` counted per process (DALI's rule, so that detached names never clash with a pipeline's).
"""

from __future__ import annotations

import itertools
import re

__all__ = ["class_name", "detached_name", "op_name", "schema_name", "snake_case"]

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

_SPLIT_ACRONYMS = {"b_box": "bbox", "mx_net": "mxnet", "tf_record": "tfrecord"}
"""Acronyms the snake_case rule splits in two and DALI joins again."""

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


def snake_case(name: str) -> str:
    """DALI's CamelCase → snake_case rule, quirks included (names must come out as DALI's).

    A lower-case letter after capitals ends a word boundary there: the capitals before its own
    capital form one word (``"COCOReader"`` → ``"coco_reader"``); a digit or other character
    glues the pending capitals to what precedes, without an underscore (``"Caffe2Reader"`` →
    ``"caffe2_reader"``, ``"XYZ1ABC"`` → ``"xyz1abc"``); capitals at the end become a word of
    their own only after a lower-case letter. Acronyms the rule splits (``b_box``, ``mx_net``,
    ``tf_record``) are joined again.
    """
    out = ""
    pending = 0  # index where the text not yet written starts
    capitals = 0  # length of the run of capitals ending at the current character
    for i, char in enumerate(name):
        if char.isupper():
            if not capitals:
                pending = i
            capitals += 1
            continue
        if char.islower() and capitals:
            if out and not out.endswith("_"):
                out += "_"
            if capitals > 1:
                out += name[pending : i - 1].lower() + "_"
            out += name[i - 1].lower()
        elif not char.islower():
            out += name[pending:i].lower()
        out += char if char.islower() else char.lower()
        pending, capitals = i + 1, 0
    if capitals:
        if out[-1:].islower():
            out += "_"
        out += name[pending:].lower()
    for split, joined in _SPLIT_ACRONYMS.items():
        out = out.replace(split, joined)
    return out


def schema_name(op_name: str) -> str:
    """DALI's schema name of operator ``op_name``: ``"readers.file"`` → ``"readers__File"``."""
    *path, last = op_name.split(".")
    # underscores around the name stay: "_tensor_subscript" → "_TensorSubscript", "not_" → "Not_"
    leading = last[: len(last) - len(last.lstrip("_"))]
    trailing = last[len(last.rstrip("_")) :]
    return "__".join([*path, leading + class_name(op_name) + trailing])


def op_name(name: str, api: str = "fn") -> str:
    """The dotted ``fn`` (snake_case) or ``ops`` (CamelCase) name of a schema name given as
    DALI spells it (``"experimental__readers__Fits"``) or as feedline does
    (``"experimental.readers.fits"``).

    Raises:
        ValueError: ``api`` is neither ``"fn"`` nor ``"ops"``.
    """
    if api not in ("fn", "ops"):
        raise ValueError(f"api must be 'fn' or 'ops', got {api!r}")
    if name == name.lower():  # feedline's names are lower-case, DALI's schema names never
        name = schema_name(name)
    *path, last = name.split("__")
    return ".".join([*path, snake_case(last) if api == "fn" else last])
