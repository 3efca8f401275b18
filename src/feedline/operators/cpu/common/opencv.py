"""Importing OpenCV for the kernels that use it, with an error that says what to install.

``cv2`` is imported here only when a kernel first runs, never by a schema module or by
``import feedline``.
"""

from __future__ import annotations

import sys
from types import ModuleType

__all__ = ["import_cv2"]

_CV2: ModuleType | None = None


def import_cv2(op: str) -> ModuleType:
    """The ``cv2`` module, for operator ``op``.

    Raises:
        ModuleNotFoundError: OpenCV is not installed; the message names the package.
    """
    global _CV2
    # Kernels ask once per sample: skip the import statement's work once cv2 is fully imported
    # (and still the module that ``import cv2`` would give).
    if _CV2 is not None and sys.modules.get("cv2") is _CV2:
        return _CV2
    try:
        import cv2
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            f"{op}: needs OpenCV; install it with `pip install opencv-python-headless` "
            "(a dependency of feedline)"
        ) from error
    _CV2 = cv2
    return cv2
