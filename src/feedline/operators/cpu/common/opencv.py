"""Importing OpenCV for the kernels that use it, with an error that says what to install.

``cv2`` is imported here only when a kernel first runs, never by a schema module or by
``import feedline``.
"""

from __future__ import annotations

from types import ModuleType

__all__ = ["import_cv2"]


def import_cv2(op: str) -> ModuleType:
    """The ``cv2`` module, for operator ``op``.

    Raises:
        ModuleNotFoundError: OpenCV is not installed; the message names the package.
    """
    try:
        import cv2
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            f"{op}: needs OpenCV; install it with `pip install opencv-python-headless` "
            "(a dependency of feedline)"
        ) from error
    return cv2
