"""The sample data sets bundled with feedline (origins and licences in this folder's README.md).

``path(name)`` locates one: ``coco_dali_pixelwise``, ``coco_dali_dummy`` or ``file_tree``.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["SAMPLES", "path"]

SAMPLES = ("coco_dali_dummy", "coco_dali_pixelwise", "file_tree")
_ROOT = Path(__file__).resolve().parent


def path(name: str, *parts: str) -> Path:
    """The folder of the bundled sample ``name`` (or a file under it, with ``parts``).

    Args:
        name: one of :data:`SAMPLES`.
        *parts: path components below the sample's folder.

    Raises:
        ValueError: ``name`` is not a bundled sample.
        FileNotFoundError: the installation lacks the file (a packaging error).
    """
    if name not in SAMPLES:
        raise ValueError(f"no bundled sample {name!r}; the samples are {', '.join(SAMPLES)}")
    target = _ROOT.joinpath(name, *parts)
    if not target.exists():
        raise FileNotFoundError(f"bundled sample file {target} is missing from this installation")
    return target
